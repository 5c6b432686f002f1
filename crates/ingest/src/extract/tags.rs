//! What the extractor knows about tags and attributes: a tag name → flags
//! table, and the class/id/role words that mark page furniture.

/// Tag flags (bits of a `u32`).
pub(super) mod flag {
    /// Block-level: separates text blocks and gets an element record.
    pub const BLOCK: u32 = 1;
    /// Never has content nor an end tag (`br`, `img`, `meta`, ...).
    pub const VOID: u32 = 1 << 1;
    /// Content is raw text up to the matching end tag (`script`, `style`,
    /// `title`, ...): never parsed as markup, never visible.
    pub const RAW: u32 = 1 << 2;
    /// Never visible (`svg`, `template`, ...): subtree dropped in every mode.
    pub const HIDDEN: u32 = 1 << 3;
    /// Page furniture (`nav`, `aside`, `button`, ...): subtree dropped by the
    /// main-content extractor.
    pub const CHROME: u32 = 1 << 4;
    /// `header`: furniture at page level (judged after the scan, so that one
    /// wrapping the article stays), kept inside `main` or `article` (where
    /// it holds the article's title or byline).
    pub const PAGE_PART: u32 = 1 << 5;
    /// `a`: text inside counts as link text.
    pub const LINK: u32 = 1 << 6;
    /// `pre`, `listing`: white space is kept.
    pub const PRE: u32 = 1 << 7;
    /// `br`: a line break.
    pub const BR: u32 = 1 << 8;
    /// `main` (or `role=main`): the page's own statement of its content.
    pub const MAIN: u32 = 1 << 9;
    /// `article` (or `role=article`).
    pub const ARTICLE: u32 = 1 << 10;
    /// Holds one paragraph (`p`, `li`, `h1`, `td`, ...): the element that
    /// gets its score is its parent, as in Readability.
    pub const PARA: u32 = 1 << 11;
    /// `form`: furniture unless it wraps most of the page (ASP.NET does) or
    /// of its `main` or `article` (a shop's product form).
    pub const FORM: u32 = 1 << 12;
    /// `title`.
    pub const TITLE: u32 = 1 << 13;
    /// `p`: closed implicitly by the next block.
    pub const P: u32 = 1 << 14;
    /// `li`: closes an open `li`; a list item (kept on its record).
    pub const LI: u32 = 1 << 15;
    /// `dt`, `dd`: close an open `dt` or `dd`.
    pub const DT_DD: u32 = 1 << 16;
    /// `td`, `th`: close an open cell; a table cell (kept on its record).
    pub const CELL: u32 = 1 << 17;
    /// `tr`: closes an open cell and row.
    pub const ROW: u32 = 1 << 18;
    /// A custom element (`<rustdoc-toolbar>`): a container whose name is
    /// judged like a class.
    pub const CUSTOM: u32 = 1 << 19;
    /// Element record flag: furniture by its class, id or role (judged after
    /// the scan, see `select`).
    pub const BOILER: u32 = 1 << 20;
    /// Element record flag: class or id suggest content (`article`, `post`).
    pub const POSITIVE: u32 = 1 << 21;
    /// `body` and `html`: never judged by class.
    pub const ROOT: u32 = 1 << 22;
    /// `h1` ... `h6`: a heading, which introduces what follows it.
    pub const HEADING: u32 = 1 << 23;
    /// Element record flag, with `BOILER`: furniture by a medium or weak
    /// class word only (`author-box`, `site-header`), so a misjudged wrapper
    /// if it holds much of the text.
    pub const SOFT: u32 = 1 << 24;
}

use flag::*;

/// The flags of a tag, by its lower-case name.
pub(super) fn classify(name: &[u8]) -> u32 {
    match name {
        b"p" => BLOCK | PARA | P,
        b"div" | b"section" | b"center" | b"hgroup" | b"figure" | b"details" | b"fieldset"
        | b"address" | b"table" | b"tbody" | b"thead" | b"tfoot" | b"ul" | b"ol" | b"dl"
        | b"dir" => BLOCK,
        b"hr" => BLOCK | VOID,
        b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => BLOCK | PARA | HEADING,
        b"blockquote" | b"caption" | b"summary" | b"legend" => BLOCK | PARA,
        b"figcaption" => BLOCK | CHROME,
        b"li" => BLOCK | PARA | LI,
        b"dt" | b"dd" => BLOCK | PARA | DT_DD,
        b"td" | b"th" => BLOCK | PARA | CELL,
        b"tr" => BLOCK | ROW,
        b"pre" | b"listing" => BLOCK | PARA | PRE,
        b"main" => BLOCK | MAIN,
        b"article" => BLOCK | ARTICLE,
        b"body" | b"html" => BLOCK | ROOT,
        b"header" => BLOCK | PAGE_PART,
        b"nav" | b"aside" | b"menu" | b"dialog" | b"footer" => BLOCK | CHROME,
        b"form" => BLOCK | FORM,
        b"button" | b"label" | b"time" => CHROME,
        b"a" => LINK,
        b"br" => VOID | BR,
        b"area" | b"base" | b"col" | b"embed" | b"img" | b"input" | b"keygen" | b"link"
        | b"meta" | b"param" | b"source" | b"track" | b"wbr" => VOID,
        b"title" => RAW | TITLE,
        b"script" | b"style" | b"textarea" | b"iframe" | b"noembed" | b"noframes" | b"xmp"
        | b"plaintext" => RAW,
        b"svg" | b"math" | b"template" | b"select" | b"datalist" | b"object" | b"canvas"
        | b"audio" | b"video" | b"map" => HIDDEN,
        // Ruby annotations (furigana, pinyin) over the text they annotate:
        // kept, they would cut its words apart.
        b"rt" | b"rp" => HIDDEN,
        _ if name.contains(&b'-') => BLOCK | CUSTOM,
        _ => 0,
    }
}

/// How the words of an element's class, id or custom tag name judge it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// Surely furniture: navigation, ads, sidebars, comments, ratings,
    /// bylines, ...
    Boilerplate,
    /// Furniture for a block (`author-box`, `entry-meta`, `teaser`), but
    /// not reason enough to drop an inline element.
    LikelyBoilerplate,
    /// Furniture for a container, but not for a heading or paragraph: a
    /// weak word (`header`, `tags`, ...) without a content word, as in
    /// `site-header` (a heading's `section-header` is no furniture).
    WeakBoilerplate,
    /// Likely the content (`article`, `post-body`, ...).
    Content,
    /// Nothing to say.
    Neutral,
}

/// What one word says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    /// Furniture whatever else is said (`nav`, `sidebar`, `related`, ...).
    Strong,
    /// Furniture unless a content word is said too (`author`, `meta`,
    /// `teaser`, ...): `author-box` goes, a post whose classes also say
    /// `author-jane` stays.
    Medium,
    /// Medium, but after a content word in the same token the content's
    /// lead (`article-teaser`), so content.
    Lead,
    /// Furniture for containers, unless a content word is said too.
    Weak,
    /// Weak when the whole token (`hidden`) or negated (`no-print`),
    /// nothing in a compound: a utility class (`overflow-hidden`,
    /// `hidden-xs`, `print-full`).
    Alone,
    /// Content (`article`, `content`, `post`, ...).
    Content,
    /// Nothing.
    Other,
}

fn word(lower: &[u8]) -> Word {
    match lower {
        b"nav" | b"navbar" | b"navigation" | b"navlinks" | b"menu" | b"menubar" | b"menus"
        | b"topbar" | b"toolbar" | b"sidebar" | b"sidenav" | b"subnav" | b"breadcrumb"
        | b"breadcrumbs" | b"crumbs" | b"ad" | b"ads" | b"advert" | b"adverts"
        | b"advertisement" | b"advertising" | b"adsense" | b"adslot" | b"sponsor"
        | b"sponsored" | b"promo" | b"promoted" | b"cookie" | b"cookies" | b"consent" | b"gdpr"
        | b"sharing" | b"social" | b"shariff" | b"addthis" | b"sharethis" | b"comment"
        | b"comments" | b"disqus" | b"popup" | b"modal" | b"newsletter" | b"subscribe"
        | b"signup" | b"pagination" | b"pager" | b"paginate" | b"outbrain" | b"taboola"
        | b"search" | b"searchbar" | b"skiplink" | b"login" | b"footer" | b"masthead"
        | b"related" | b"recommended" | b"recommendations" | b"rating" | b"ratings" | b"vote"
        | b"voting" | b"noprint" | b"tagcloud" | b"byline" | b"postmetadata" | b"caption"
        | b"captions" | b"credit" | b"credits" | b"copyright" | b"overlay" | b"disclosure" => {
            Word::Strong
        }
        b"author" | b"authors" | b"bio" | b"meta" | b"metadata" | b"paywall" | b"affiliate"
        | b"toc" | b"cta" | b"share" | b"dateline" | b"notice" | b"citation" | b"utility" => {
            Word::Medium
        }
        b"teaser" | b"teasers" => Word::Lead,
        b"header" | b"banner" | b"tags" | b"skip" | b"tools" | b"extra" => Word::Weak,
        b"hidden" | b"hide" | b"print" => Word::Alone,
        b"article" | b"content" | b"main" | b"post" | b"entry" | b"story" | b"body" | b"text"
        | b"blog" => Word::Content,
        _ => Word::Other,
    }
}

/// Judges an element by its class, id and custom tag name: their tokens
/// (split on white space) and the tokens' words (split on anything not a
/// letter or digit, compared case-insensitively). A strong furniture word
/// (`nav`, `sidebar`, `ad`, `comments`, ...) decides alone. Within a token
/// the last content or medium word decides (`entry-meta` is furniture,
/// `toc-content` content; but `article-teaser` is the article's lead) and
/// a content word outweighs a weak one (`article-header`). Across tokens, a content token outweighs medium
/// (`author-box`) and weak (`site-header`) ones. BEM modifiers and state
/// classes are not judged (see `judged_part`).
pub(super) fn judge(sources: &[&[u8]]) -> Verdict {
    let (mut medium, mut weak, mut content) = (false, false, false);
    let tokens = sources
        .iter()
        .flat_map(|source| source.split(|b| b.is_ascii_whitespace()));
    for token in tokens.filter_map(judged_part) {
        let mut said = Word::Other;
        for raw in token
            .split(|b| !b.is_ascii_alphanumeric())
            .flat_map(camel_case_words)
        {
            if raw.is_empty() || raw.len() > 16 {
                continue;
            }
            let mut buf = [0u8; 16];
            let lower = &mut buf[..raw.len()];
            lower.copy_from_slice(raw);
            lower.make_ascii_lowercase();
            said = match (said, word(lower)) {
                (_, Word::Strong) => return Verdict::Boilerplate,
                // The last of content and medium words is the head of a
                // compound: `entry-meta` is meta, `toc-content` content.
                (_, last @ (Word::Content | Word::Medium)) => last,
                (Word::Content, Word::Lead) => Word::Content,
                (_, Word::Lead) => Word::Medium,
                (Word::Other, Word::Weak) => Word::Weak,
                (_, Word::Alone) if alone(raw, token) => Word::Weak,
                (earlier, _) => earlier,
            };
        }
        match said {
            Word::Content => content = true,
            Word::Medium => medium = true,
            Word::Weak => weak = true,
            Word::Strong | Word::Lead | Word::Alone | Word::Other => {}
        }
    }
    match (content, medium, weak) {
        (true, _, _) => Verdict::Content,
        (false, true, _) => Verdict::LikelyBoilerplate,
        (false, false, true) => Verdict::WeakBoilerplate,
        (false, false, false) => Verdict::Neutral,
    }
}

/// The part of a class token that says what the element is: a BEM
/// modifier (`o-section--ads`, `Report__Section--has-ad`: after `--`, when
/// what comes before is itself a compound) says how it looks and is cut
/// off, and a state class (`is-hidden`, `has-ads`) says nothing of what
/// the element is (`None`).
fn judged_part(token: &[u8]) -> Option<&[u8]> {
    let block = match memchr::memmem::find(token, b"--") {
        Some(i) if token[..i].iter().any(|&b| b == b'-' || b == b'_') => &token[..i],
        _ => token,
    };
    let first = block.split(|b| !b.is_ascii_alphanumeric()).next();
    let state =
        first.is_some_and(|w| w.eq_ignore_ascii_case(b"is") || w.eq_ignore_ascii_case(b"has"));
    (!state).then_some(block)
}

/// The words of a camel-case name (`navBreadcrumbs`: `nav`, `Breadcrumbs`;
/// `PageContent`: `Page`, `Content`); an all-capitals run stays whole
/// (`CSS1`, `ERSTimes` is one word).
fn camel_case_words(word: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = word;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = (1..rest.len())
            .find(|&i| rest[i - 1].is_ascii_lowercase() && rest[i].is_ascii_uppercase())
            .unwrap_or(rest.len());
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

/// Whether `word` is all of `token`, or negated (`no-print`): then a
/// utility word (`hidden`, `print`) says the element is not for reading.
fn alone(word: &[u8], token: &[u8]) -> bool {
    let negated = token.len() == word.len() + 3 && token[..2].eq_ignore_ascii_case(b"no");
    token.len() == word.len() || negated
}

/// Whether an ARIA role marks page furniture.
pub(super) fn chrome_role(role: &[u8]) -> bool {
    [
        &b"navigation"[..],
        b"banner",
        b"contentinfo",
        b"complementary",
        b"search",
        b"menu",
        b"menubar",
        b"toolbar",
        b"dialog",
        b"alertdialog",
    ]
    .iter()
    .any(|r| role.trim_ascii().eq_ignore_ascii_case(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judging_words() {
        let j = |s: &str| judge(&[s.as_bytes()]);
        assert_eq!(j("main-nav"), Verdict::Boilerplate);
        assert_eq!(j("sidebar-content"), Verdict::Boilerplate);
        assert_eq!(j("site-header"), Verdict::WeakBoilerplate);
        assert_eq!(j("article-header"), Verdict::Content);
        assert_eq!(j("post_body"), Verdict::Content);
        assert_eq!(j("shadow loading download"), Verdict::Neutral);
        assert_eq!(j("AD-slot"), Verdict::Boilerplate);
        assert_eq!(j("rustdoc-toolbar"), Verdict::Boilerplate);
        assert_eq!(judge(&[b"x", b"cookie-banner"]), Verdict::Boilerplate);
        assert_eq!(j("row author-box"), Verdict::LikelyBoilerplate);
        assert_eq!(j("hentry post author-jane tag-x"), Verdict::Content);
        assert_eq!(j("related-posts"), Verdict::Boilerplate);
        assert_eq!(j("entry-meta"), Verdict::LikelyBoilerplate);
        assert_eq!(j("toc-content"), Verdict::Content);
        assert_eq!(j("meta entry"), Verdict::Content);
        assert_eq!(j("Report__Section Report__Section--Ads"), Verdict::Neutral);
        assert_eq!(j("o-section o-section--has-ad"), Verdict::Neutral);
        assert_eq!(j("is-hidden has-sidebar"), Verdict::Neutral);
        assert_eq!(j("module--share"), Verdict::LikelyBoilerplate);
        assert_eq!(j("ad--large"), Verdict::Boilerplate);
        assert_eq!(j("article-teaser"), Verdict::Content);
        assert_eq!(j("teaser x-teaser"), Verdict::LikelyBoilerplate);
        assert_eq!(
            j("kb-overflow-hidden hidden-xs print-full"),
            Verdict::Neutral
        );
        assert_eq!(j("hidden"), Verdict::WeakBoilerplate);
        assert_eq!(j("no-print"), Verdict::WeakBoilerplate);
        assert!(chrome_role(b"Navigation"));
        assert!(!chrome_role(b"main"));
    }

    #[test]
    fn classifying_tags() {
        assert_eq!(classify(b"p"), BLOCK | PARA | P);
        assert_ne!(classify(b"script") & RAW, 0);
        assert_ne!(classify(b"my-widget") & CUSTOM, 0);
        assert_eq!(classify(b"span"), 0);
    }
}
