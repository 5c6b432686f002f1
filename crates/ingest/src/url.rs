//! URL canonicalisation: the many spellings of one page's URL → one key.
//!
//! The key of `HTTP://WWW.Example.COM:80/a/./b/index.html?utm_source=x&b=2&a=1#top`
//! is `example.com/a/b?a=1&b=2`. By default the key has **no scheme**: http
//! and https serve the same page in practice (the lecture's "the URL's
//! protocol can be distinct, but still deliver the same document"), so the
//! key is `host[:port]/path[?query]`; a key is accepted as input again and
//! maps to itself (inputs without `scheme://` are read as `http://`).
//! Every step is an option of [`UrlOptions`], on by default except
//! [`UrlOptions::lowercase_path`].

use std::fmt::Write as _;
use url::Url;

/// Which normalisations [`canonicalize_with`] applies. The URL crate always
/// lower-cases the scheme and host (IDNA hosts become punycode), drops the
/// default port, resolves `.` and `..` segments and percent-encodes what
/// must be; user names and passwords are always dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UrlOptions {
    /// Leave the scheme out of the key for http and https (default true);
    /// other schemes keep theirs (`ftp://host/path`).
    pub fold_scheme: bool,
    /// Drop a `www.`, `www2.`, `www3.`, ... prefix of the host, when what
    /// remains still has a dot (default true): `www.example.com` and
    /// `example.com` are the same site almost everywhere.
    pub drop_www: bool,
    /// Drop the fragment (default true); an AJAX `#!` fragment is kept since
    /// it selects content.
    pub drop_fragment: bool,
    /// Drop trailing slashes except the root's (default true): `/docs/` →
    /// `/docs`.
    pub drop_trailing_slash: bool,
    /// Drop a final `index.html`, `index.htm`, `index.php`, `index.shtml`,
    /// `index.asp`, `default.asp` or `default.aspx` (default true).
    pub drop_index_pages: bool,
    /// Sort query parameters (default true): `?b=2&a=1` → `?a=1&b=2`.
    pub sort_query: bool,
    /// Drop tracking and session parameters (default true): `utm_*` and the
    /// names in [`TRACKING_PARAMS`], in the query and as `;name=value` path
    /// parameters (`;jsessionid=...`), plus [`UrlOptions::extra_params`].
    pub drop_tracking_params: bool,
    /// More query parameter names to drop (compared case-insensitively).
    pub extra_params: Vec<String>,
    /// Lower-case the path and query (default false: paths are
    /// case-sensitive on most servers).
    pub lowercase_path: bool,
}

impl Default for UrlOptions {
    fn default() -> Self {
        UrlOptions {
            fold_scheme: true,
            drop_www: true,
            drop_fragment: true,
            drop_trailing_slash: true,
            drop_index_pages: true,
            sort_query: true,
            drop_tracking_params: true,
            extra_params: Vec::new(),
            lowercase_path: false,
        }
    }
}

/// Query parameters dropped as tracking or session ids (besides every
/// `utm_*`), compared case-insensitively.
pub const TRACKING_PARAMS: &[&str] = &[
    "gclid",
    "gclsrc",
    "dclid",
    "gbraid",
    "wbraid",
    "fbclid",
    "msclkid",
    "yclid",
    "twclid",
    "igshid",
    "mc_cid",
    "mc_eid",
    "mkt_tok",
    "_ga",
    "_gl",
    "_hsenc",
    "_hsmi",
    "sessionid",
    "session_id",
    "jsessionid",
    "phpsessid",
    "aspsessionid",
    "sid",
    "cfid",
    "cftoken",
];

/// Last path segments dropped as directory index pages.
const INDEX_PAGES: &[&str] = &[
    "index.html",
    "index.htm",
    "index.php",
    "index.shtml",
    "index.asp",
    "default.asp",
    "default.aspx",
];

/// A URL that cannot be canonicalised.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    /// Not a URL at all.
    #[error("invalid URL `{url}`: {source}")]
    Invalid {
        /// The input.
        url: String,
        /// The parser's complaint.
        #[source]
        source: url::ParseError,
    },
    /// A URL without a host (`mailto:`, `data:`, `file:///...`).
    #[error("URL `{0}` has no host")]
    NoHost(String),
}

/// [`canonicalize_with`] the default [`UrlOptions`].
pub fn canonicalize(url: &str) -> Result<String, UrlError> {
    canonicalize_with(url, &UrlOptions::default())
}

/// The canonical key of `url` under `opts` (see the module documentation).
pub fn canonicalize_with(url: &str, opts: &UrlOptions) -> Result<String, UrlError> {
    let parsed = parse(url.trim())?;
    let host = parsed
        .host_str()
        .ok_or_else(|| UrlError::NoHost(url.to_string()))?;
    let trimmed = host.trim_end_matches('.');
    if trimmed.is_empty() {
        return Err(UrlError::NoHost(url.to_string()));
    }
    // Without its dots the host may read as something else (`1..` is a
    // name, `1` an IPv4 address, 0.0.0.1) or as nothing valid (`a.4`): take
    // what it reads as, or keep the dots, so that the key is its own key.
    let reparsed = (trimmed.len() < host.len()).then(|| match url::Host::parse(trimmed) {
        Ok(parsed) => parsed.to_string(),
        Err(_) => host.to_string(),
    });
    let mut host = reparsed.as_deref().unwrap_or(trimmed);
    if opts.drop_www {
        host = strip_www(host);
    }
    let scheme = parsed.scheme();
    let mut key = String::with_capacity(url.len());
    if !(opts.fold_scheme && matches!(scheme, "http" | "https")) {
        key.push_str(scheme);
        key.push_str("://");
    }
    key.push_str(host);
    if let Some(port) = parsed.port() {
        let _ = write!(key, ":{port}");
    }
    key.push_str(&path(parsed.path(), opts));
    if let Some(query) = parsed.query().and_then(|q| query(q, opts)) {
        key.push('?');
        key.push_str(&query);
    }
    if let Some(fragment) = parsed.fragment() {
        if !opts.drop_fragment || fragment.starts_with('!') {
            key.push('#');
            key.push_str(fragment);
        }
    }
    Ok(key)
}

/// The registrable domain ("eTLD+1", by the Public Suffix List) of a host:
/// `docs.example.co.uk` → `example.co.uk`. Useful to group hosts by site.
pub fn registrable_domain(host: &str) -> Option<&str> {
    psl::domain_str(host)
}

/// Parses a URL, reading `host/path` (no scheme) as `http://host/path`.
fn parse(url: &str) -> Result<Url, UrlError> {
    let invalid = |source| UrlError::Invalid {
        url: url.to_string(),
        source,
    };
    match Url::parse(url) {
        Ok(parsed) if parsed.has_host() => Ok(parsed),
        // `example.com:8080/x` parses with the scheme `example.com`.
        Ok(parsed)
            if parsed.scheme().contains('.')
                || url
                    .get(parsed.scheme().len() + 1..)
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit())) =>
        {
            Url::parse(&format!("http://{url}")).map_err(invalid)
        }
        Ok(_) => Err(UrlError::NoHost(url.to_string())),
        Err(url::ParseError::RelativeUrlWithoutBase) => {
            let url = url.strip_prefix("//").unwrap_or(url);
            Url::parse(&format!("http://{url}")).map_err(invalid)
        }
        Err(err) => Err(invalid(err)),
    }
}

/// `www.`, `www2.`, ... dropped when a dotted name remains.
/// `www.`, `www2.`, ... off the host, as many as there are (so that the
/// key's host is its own key's host: `www.www.a.org` → `a.org`), as long as a
/// dot remains.
fn strip_www(mut host: &str) -> &str {
    while let Some(rest) = host.strip_prefix("www") {
        let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        match rest.strip_prefix('.') {
            Some(rest) if rest.contains('.') => host = rest,
            _ => break,
        }
    }
    host
}

fn path(path: &str, opts: &UrlOptions) -> String {
    let mut segments: Vec<String> = Vec::new();
    let count = path.split('/').count();
    for (i, segment) in path.split('/').enumerate() {
        let mut kept = String::with_capacity(segment.len());
        let mut params = segment.split(';');
        normalize_escapes(params.next().unwrap_or_default(), &mut kept);
        for param in params {
            if !(opts.drop_tracking_params
                && is_tracking(param.split('=').next().unwrap_or_default(), opts))
            {
                kept.push(';');
                normalize_escapes(param, &mut kept);
            }
        }
        // The parser resolved the dot segments it saw; dropping a segment's parameters (`.;x=1`)
        // can make new ones, resolved here as RFC 3986 does (found by fuzzing: without this a
        // key did not canonicalise to itself).
        let last = i + 1 == count;
        match kept.as_str() {
            "." if i > 0 => {}
            ".." if i > 0 => {
                if segments.len() > 1 {
                    segments.pop();
                }
            }
            _ => {
                segments.push(kept);
                continue;
            }
        }
        if last {
            segments.push(String::new());
        }
    }
    let mut out = segments.join("/");
    // Until nothing changes, so that a key canonicalises to itself: dropping
    // `/index.htm/` leaves `/index.htm`, whose index page goes too (found by
    // fuzzing: `crates/fuzz/regressions/url/`).
    loop {
        let before = out.len();
        if opts.drop_index_pages {
            let last = out.rsplit('/').next().unwrap_or_default();
            if INDEX_PAGES
                .iter()
                .any(|page| last.eq_ignore_ascii_case(page))
            {
                out.truncate(out.len() - last.len());
            }
        }
        if opts.drop_trailing_slash {
            let kept = out.trim_end_matches('/').len().max(1);
            out.truncate(kept);
        }
        if out.len() == before {
            break;
        }
    }
    if out.is_empty() {
        out.push('/');
    }
    if opts.lowercase_path {
        out.make_ascii_lowercase();
    }
    out
}

/// The normalised query, or `None` if nothing remains.
fn query(query: &str, opts: &UrlOptions) -> Option<String> {
    let mut params: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            !(opts.drop_tracking_params
                && is_tracking(p.split('=').next().unwrap_or_default(), opts))
        })
        .map(|p| {
            let mut out = String::with_capacity(p.len());
            normalize_escapes(p, &mut out);
            if opts.lowercase_path {
                out.make_ascii_lowercase();
            }
            out
        })
        .collect();
    if opts.sort_query {
        params.sort();
    }
    (!params.is_empty()).then(|| params.join("&"))
}

fn is_tracking(name: &str, opts: &UrlOptions) -> bool {
    let mut decoded = String::with_capacity(name.len());
    normalize_escapes(name, &mut decoded);
    let name = decoded.as_str();
    name.get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("utm_"))
        || TRACKING_PARAMS.iter().any(|t| name.eq_ignore_ascii_case(t))
        || opts
            .extra_params
            .iter()
            .any(|t| name.eq_ignore_ascii_case(t))
}

/// Appends `s` with percent escapes normalised: escapes of unreserved
/// characters (letters, digits, `-._~`) decoded, the others upper-cased.
fn normalize_escapes(s: &str, out: &mut String) {
    let mut rest = s;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let hex = rest
            .get(at + 1..at + 3)
            .and_then(|h| u8::from_str_radix(h, 16).ok().map(|v| (h, v)));
        match hex {
            Some((_, v)) if v.is_ascii_alphanumeric() || matches!(v, b'-' | b'.' | b'_' | b'~') => {
                out.push(char::from(v));
                rest = &rest[at + 3..];
            }
            Some((h, _)) => {
                out.push('%');
                out.push_str(&h.to_ascii_uppercase());
                rest = &rest[at + 3..];
            }
            None => {
                out.push('%');
                rest = &rest[at + 1..];
            }
        }
    }
    out.push_str(rest);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by fuzzing (issue 12): an index page left behind by a dropped
    /// trailing slash made the key differ from the key of the key.
    #[test]
    fn a_key_with_the_scheme_kept_is_its_own_key() {
        let opts = UrlOptions {
            fold_scheme: false,
            ..UrlOptions::default()
        };
        for url in [
            "HrHr/index.htm/index.htm",
            "http://h.org/a/index.html/",
            "http://www.www2.a.org/",
            "http://1../",
            "http://a.4../",
        ] {
            let key = canonicalize_with(url, &opts).unwrap();
            assert_eq!(canonicalize_with(&key, &opts).unwrap(), key, "{url}");
        }
    }

    #[test]
    fn canonical_forms() {
        let cases = [
            // Scheme folding, case, default ports.
            ("http://example.com/a", "example.com/a"),
            ("https://example.com/a", "example.com/a"),
            ("HTTP://Example.COM/A", "example.com/A"),
            ("http://example.com:80/a", "example.com/a"),
            ("https://example.com:443/a", "example.com/a"),
            ("http://example.com:8080/a", "example.com:8080/a"),
            // www.
            ("http://www.example.com/", "example.com/"),
            ("http://www2.example.com/", "example.com/"),
            ("http://www.com/", "www.com/"),
            ("http://wwwx.example.com/", "wwwx.example.com/"),
            // Trailing slash, root, dot segments, index pages.
            ("http://example.com", "example.com/"),
            ("http://example.com/docs/", "example.com/docs"),
            ("http://example.com/a/./b/../c", "example.com/a/c"),
            ("http://example.com/docs/index.html", "example.com/docs"),
            ("http://example.com/INDEX.HTM", "example.com/"),
            ("http://example.com/default.aspx?x=1", "example.com/?x=1"),
            (
                "http://example.com/index.html.bak",
                "example.com/index.html.bak",
            ),
            // Fragments.
            ("http://example.com/a#section", "example.com/a"),
            ("http://example.com/#!/page", "example.com/#!/page"),
            // Query: order, tracking, empties.
            ("http://example.com/?b=2&a=1", "example.com/?a=1&b=2"),
            (
                "http://example.com/p?utm_source=x&UTM_Medium=y&id=3",
                "example.com/p?id=3",
            ),
            ("http://example.com/p?fbclid=1&gclid=2", "example.com/p"),
            ("http://example.com/p?&&a=1&", "example.com/p?a=1"),
            (
                "http://example.com/p?PHPSESSID=abc&q=x",
                "example.com/p?q=x",
            ),
            (
                "http://example.com/p;jsessionid=ABC?x=1",
                "example.com/p?x=1",
            ),
            ("http://example.com/p?", "example.com/p"),
            // Percent-encoding.
            (
                "http://example.com/%7Euser/%41b%2fc",
                "example.com/~user/Ab%2Fc",
            ),
            ("http://example.com/caf\u{e9}", "example.com/caf%C3%A9"),
            ("http://例え.jp/", "xn--r8jz45g.jp/"),
            // Credentials, trailing dot, other schemes, no scheme.
            ("http://user:pw@example.com/", "example.com/"),
            ("http://example.com./a", "example.com/a"),
            ("ftp://example.com/pub/", "ftp://example.com/pub"),
            ("example.com/a/", "example.com/a"),
            ("example.com:8080/a", "example.com:8080/a"),
            ("//example.com/a", "example.com/a"),
        ];
        for (input, want) in cases {
            assert_eq!(canonicalize(input).unwrap(), want, "{input}");
            assert_eq!(canonicalize(want).unwrap(), want, "idempotent: {want}");
        }
    }

    #[test]
    fn options_switch_steps_off() {
        let keep_all = UrlOptions {
            fold_scheme: false,
            drop_www: false,
            drop_fragment: false,
            drop_trailing_slash: false,
            drop_index_pages: false,
            sort_query: false,
            drop_tracking_params: false,
            ..UrlOptions::default()
        };
        let url = "https://www.example.com/a/index.html?utm_source=x&b=1#f";
        assert_eq!(canonicalize_with(url, &keep_all).unwrap(), url);
        let lower = UrlOptions {
            lowercase_path: true,
            extra_params: vec!["Ref".into()],
            ..UrlOptions::default()
        };
        assert_eq!(
            canonicalize_with("http://x.org/A/B?REF=1&Q=Z", &lower).unwrap(),
            "x.org/a/b?q=z"
        );
    }

    #[test]
    fn errors_and_domains() {
        assert!(matches!(
            canonicalize("mailto:someone@example.com"),
            Err(UrlError::NoHost(_))
        ));
        assert!(matches!(
            canonicalize("http://exa mple.com/"),
            Err(UrlError::Invalid { .. })
        ));
        assert!(canonicalize("").is_err());
        assert!(matches!(
            canonicalize("http://./"),
            Err(UrlError::NoHost(_))
        ));
        assert_eq!(
            registrable_domain("docs.example.co.uk"),
            Some("example.co.uk")
        );
        assert_eq!(registrable_domain("espn.go.com"), Some("go.com"));
    }
}
