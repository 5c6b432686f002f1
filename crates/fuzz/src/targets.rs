//! The targets: every reader, HTML extraction, URL canonicalisation, the HTTP request path, the
//! redb open path; and the samples each starts from, made here (nothing is copied from outside
//! the project).

use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::Arc;

use anyhow::{ensure, Context as _};
use neardup_ingest::extract::MainContentExtractor;
use neardup_ingest::{body_text, title_of, Body, HtmlText};
use neardup_ingest::{open_reader, Compression, Format, ReadOptions, ReadStats};
use tower_service::Service;

use crate::stored::{parquet, parquet_seeds, redb, redb_seeds};
use crate::{Runner, Target};

/// Every target, in the order a full run takes them.
pub const TARGETS: [Target; 8] = [
    Target {
        name: "jsonl",
        seeds: jsonl_seeds,
        dictionary: &[
            b"{",
            b"}",
            b"\"id\":",
            b"\"text\":",
            b"\"html\":",
            b"\\u00e9",
            b"\n",
            b"null",
            b"[1]",
        ],
        runner: || Ok(reader(|_| Format::Jsonl(Compression::None))),
    },
    Target {
        name: "compressed",
        seeds: compressed_seeds,
        dictionary: &[
            b"\x1f\x8b\x08",
            b"\x28\xb5\x2f\xfd",
            b"\0\0\0\0",
            b"\xff\xff",
        ],
        runner: || {
            Ok(reader(|first| match first % 2 {
                0 => Format::Jsonl(Compression::Gzip),
                _ => Format::Jsonl(Compression::Zstd),
            }))
        },
    },
    Target {
        name: "warc",
        seeds: warc_seeds,
        dictionary: &[
            b"WARC/1.1\r\n",
            b"WARC-Type: response\r\n",
            b"WARC-Type: request\r\n",
            b"Content-Length: 99999999\r\n",
            b"Content-Length: 10\r\n",
            b"\r\n\r\n",
            b"HTTP/1.1 200 OK\r\n",
            b"Transfer-Encoding: chunked\r\n",
            b"Content-Encoding: gzip\r\n",
            b"\x1f\x8b\x08\0",
        ],
        runner: || {
            Ok(reader(|first| match first % 2 {
                0 => Format::Warc,
                _ => Format::WarcGz,
            }))
        },
    },
    Target {
        name: "html",
        seeds: html_seeds,
        dictionary: &[
            b"<p>",
            b"</p>",
            b"<div class=\"nav\">",
            b"</div>",
            b"<script>",
            b"<!--",
            b"-->",
            b"&amp;",
            b"&#x1F600;",
            b"<title>",
            b"<pre>",
            b"<br/>",
            b"\xc3\xa9",
        ],
        runner: || {
            let extractor = MainContentExtractor::default();
            Ok(Box::new(move |data: &[u8]| {
                // Through the one document → text function, in both modes, and the title rule.
                let body = Body::Html(String::from_utf8_lossy(data).into_owned());
                for mode in [HtmlText::Main, HtmlText::All] {
                    body_text(&body, mode, &extractor);
                }
                title_of(None, &body);
                Ok(())
            }))
        },
    },
    Target {
        name: "url",
        seeds: url_seeds,
        dictionary: &[
            b"http://",
            b"https://",
            b"%2F",
            b"%FF",
            b"xn--",
            b"@",
            b":8080",
            b"/../",
            b"?utm_source=x",
            b"#frag",
            b"[::1]",
            b"\xe4\xbe\x8b",
        ],
        runner: || Ok(Box::new(url)),
    },
    Target {
        name: "http",
        seeds: http_seeds,
        dictionary: &[
            b"GET\n",
            b"POST\n",
            b"DELETE\n",
            b"/v1/documents\n",
            b"/v1/documents/",
            b"/v1/check\n",
            b"%FF%FE",
            b"?insert=always",
            b"authorization: Bearer t\n",
            b"content-type: application/json\n",
            b"{\"text\":\"",
            b"\"}",
            b"\"html\":",
            b"\n\n",
        ],
        runner: http,
    },
    Target {
        name: "parquet",
        seeds: parquet_seeds,
        dictionary: &[
            b"PAR1",
            b"\0\0\0\0",
            b"\xff\xff\xff\xff",
            b"\xff\xff\xff\x7f",
            b"\x15\x00",
            b"\x15\x02",
            b"\x19\x1c",
            b"\x16\x80\x80\x80\x80\x10",
        ],
        runner: parquet,
    },
    Target {
        name: "redb",
        seeds: redb_seeds,
        dictionary: &[b"\0\0\0\0\0", b"\xff\xff\xff\xff\xff", b"\x01\0\x10\0\0"],
        runner: redb,
    },
];

/// The target called `name`.
pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// A runner that reads its input with the reader of the format its first byte picks (through
/// [`open_reader`], the way every input is read) and checks that reading ends with every item
/// accounted for.
fn reader(format: fn(u8) -> Format) -> Runner {
    Box::new(move |data: &[u8]| {
        let format = format(data.first().copied().unwrap_or_default());
        for limit in [64 << 20, 200] {
            let opts = Arc::new(ReadOptions {
                max_document_bytes: limit,
                keep_raw: true,
                ..ReadOptions::default()
            });
            let stats = Arc::new(ReadStats::default());
            let source: Arc<Path> = Arc::from(Path::new("fuzz"));
            let items = open_reader(Cursor::new(data.to_vec()), source, format, &opts, &stats);
            // Every item is a document, an error or a record of input: never more items than
            // bytes (a reader that loops without progress would break this, or never end).
            let count = items.take(data.len() + 2).count();
            ensure!(
                count <= data.len() + 1,
                "{count} items from {} bytes",
                data.len()
            );
        }
        Ok(())
    })
}

/// URL canonicalisation: with the scheme kept, the key of an http(s) URL is a URL whose key is
/// itself (with the scheme folded, the default, a key is not a URL: `https://h:80/` keys as
/// `h:80/`, which would read as `http://h/`; other schemes keep their host's case).
fn url(data: &[u8]) -> anyhow::Result<()> {
    use neardup_ingest::url::{canonicalize, canonicalize_with, registrable_domain, UrlOptions};
    let text = String::from_utf8_lossy(data);
    let _ = canonicalize(&text);
    let keep_scheme = UrlOptions {
        fold_scheme: false,
        ..UrlOptions::default()
    };
    let web = |key: &str| key.starts_with("http://") || key.starts_with("https://");
    if let Some(key) = canonicalize_with(&text, &keep_scheme)
        .ok()
        .filter(|k| web(k))
    {
        let again = canonicalize_with(&key, &keep_scheme)
            .with_context(|| format!("{text:?} → {key:?} is refused"))?;
        ensure!(again == key, "{text:?} → {key:?} → {again:?}");
    }
    if let Some(host) = text.split('/').nth(2) {
        registrable_domain(host);
    }
    Ok(())
}

/// The HTTP request path: the whole router (authentication, metrics, extractors, handlers) over
/// a temporary redb database, fed requests decoded from the input as `method \n path \n
/// (header \n)* \n body`. Invariants: no 500, and every error is a JSON `{"error": ...}`.
fn http() -> anyhow::Result<Runner> {
    let dir = tempfile::tempdir()?;
    let location = dir.path().to_str().context("temporary path not UTF-8")?;
    let db = neardup_store::open_db(location, neardup_store::OpenOptions::default())?;
    let config = neardup_server::ServerConfig {
        token: Some("t".into()),
        body_limit: 64 * 1024,
        ..neardup_server::ServerConfig::default()
    };
    let router = neardup_server::router(Arc::new(db), config);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok(Box::new(move |data: &[u8]| {
        let _keep = &dir;
        let Some(request) = request(data) else {
            return Ok(());
        };
        let mut router = router.clone();
        runtime.block_on(async {
            let response = router.call(request).await?;
            let status = response.status();
            let json = response
                .headers()
                .get("content-type")
                .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
            let body = axum::body::to_bytes(response.into_body(), 1 << 20).await?;
            ensure!(
                status.as_u16() != 500,
                "500: {}",
                String::from_utf8_lossy(&body)
            );
            if status.is_client_error() || status.is_server_error() {
                let error: serde_json::Value =
                    serde_json::from_slice(&body).with_context(|| {
                        format!("{status} not JSON: {}", String::from_utf8_lossy(&body))
                    })?;
                ensure!(
                    error["error"].is_string() && json,
                    "{status} not a JSON error: {error}"
                );
            }
            Ok(())
        })
    }))
}

/// `method \n path \n (name: value \n)* \n body` → a request; `None` if the method, path or a
/// header cannot be sent over HTTP at all (hyper refuses them before any handler).
fn request(data: &[u8]) -> Option<axum::http::Request<axum::body::Body>> {
    let mut lines = data.splitn(3, |&b| b == b'\n');
    let method = lines.next()?;
    let path = lines.next()?;
    let rest = lines.next().unwrap_or_default();
    let (headers, body) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(at) => (&rest[..at], &rest[at + 2..]),
        None => (rest, &b""[..]),
    };
    let mut builder = axum::http::Request::builder().method(method).uri(path);
    for line in headers.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let at = line.iter().position(|&b| b == b':')?;
        builder = builder.header(&line[..at], line[at + 1..].trim_ascii());
    }
    builder.body(axum::body::Body::from(body.to_vec())).ok()
}

fn warc_record(warc_type: &str, uri: &str, block: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: {warc_type}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-05-01T12:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:{uri}>\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    out.extend_from_slice(block);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

fn http_response(status: &str, content_type: &str, extra: &str, body: &[u8]) -> Vec<u8> {
    let mut out =
        format!("HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n{extra}\r\n").into_bytes();
    out.extend_from_slice(body);
    out
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(data);
    encoder.finish().unwrap_or_default()
}

/// The project's own sample of JSON Lines.
pub(crate) const NEWS: &str = include_str!("../../../examples/news.jsonl");

/// A few pages, the same the WARC and JSON Lines seeds carry.
const PAGES: [&str; 3] = [
    "<html><head><title>Budget &amp; schools</title></head><body><nav><a href=/>Home</a></nav>\
     <main><p>The council approved the budget on Monday.</p><p>Schools get more.</p></main></body></html>",
    "<!doctype html><div class=\"sidebar\">ads</div><article><h1>Rust 1.80</h1><pre>let x = 1;</pre>\
     <p>Lazy statics arrive.</p></article><script>var a = '<p>';</script>",
    "<p>caf\u{e9} &#233; &eacute; <b>bold</b><br>line<!-- comment --></p>",
];

fn crawl() -> Vec<Vec<u8>> {
    let mut records = vec![
        warc_record("warcinfo", "", b"software: neardup-fuzz"),
        warc_record(
            "request",
            "http://a.org/",
            b"GET / HTTP/1.1\r\nHost: a.org\r\n\r\n",
        ),
    ];
    for (n, page) in PAGES.iter().enumerate() {
        let uri = format!("http://a.org/{n}");
        let block = http_response("200 OK", "text/html; charset=utf-8", "", page.as_bytes());
        records.push(warc_record("response", &uri, &block));
    }
    let chunked = http_response(
        "200 OK",
        "text/plain",
        "Transfer-Encoding: chunked\r\n",
        b"5\r\nhello\r\n0\r\n\r\n",
    );
    let encoded = http_response(
        "200 OK",
        "text/html",
        "Content-Encoding: gzip\r\n",
        &gzip(PAGES[0].as_bytes()),
    );
    let not_found = http_response("404 Not Found", "text/html", "", b"<p>no</p>");
    let png = http_response("200 OK", "image/png", "", b"\x89PNG\r\n");
    records.push(warc_record("response", "http://a.org/c", &chunked));
    records.push(warc_record("response", "http://a.org/g", &encoded));
    records.push(warc_record("response", "http://a.org/404", &not_found));
    records.push(warc_record("response", "http://a.org/png", &png));
    records.push(warc_record("metadata", "http://a.org/", b"via: x"));
    records
}

fn jsonl_seeds() -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = NEWS
        .lines()
        .map(|l| format!("{l}\n").into_bytes())
        .collect();
    seeds.push(NEWS.as_bytes().to_vec());
    seeds
        .push(b"{\"id\":1,\"html\":\"<p>x</p>\"}\n\n{\"id\":null,\"text\":\"\\u00e9\"}\n".to_vec());
    seeds
}

fn compressed_seeds() -> Vec<Vec<u8>> {
    let (half, rest) = NEWS.split_at(NEWS.len() / 2);
    let gz = |s: &str| gzip(s.as_bytes());
    let zst = |s: &str| zstd::encode_all(s.as_bytes(), 1).unwrap_or_default();
    // The first byte picks the codec: even gzip (0x1f is odd: prefix a 0), odd zstd (0x28: a 1).
    vec![
        [&[0u8][..], &gz(NEWS)].concat(),
        [&[0u8][..], &gz(half), &gz(rest)].concat(),
        [&[1u8][..], &zst(NEWS)].concat(),
        [&[1u8][..], &zst(half), &zst(rest)].concat(),
    ]
}

fn warc_seeds() -> Vec<Vec<u8>> {
    let records = crawl();
    // The first byte picks the framing: 'W' (even) plain, an odd one gzip members.
    let members: Vec<u8> = records.iter().flat_map(|r| gzip(r)).collect();
    // BGZF-style: the stream cut into members of a fixed size, records spanning them.
    let cut: Vec<u8> = records.concat().chunks(512).flat_map(gzip).collect();
    vec![
        records.concat(),
        records[2].clone(),
        [&[1u8][..], &members].concat(),
        [&[1u8][..], &gzip(&records.concat())].concat(),
        [&[1u8][..], &cut].concat(),
    ]
}

fn html_seeds() -> Vec<Vec<u8>> {
    PAGES.iter().map(|p| p.as_bytes().to_vec()).collect()
}

fn url_seeds() -> Vec<Vec<u8>> {
    [
        "https://www.Example.COM:443/a/./b/../c?utm_source=x&b=2&a=1#top",
        "http://blog.example.org/2024/07/25/rust-1.80/",
        "HTTP://[::1]:8080/%7euser/index.html?",
        "https://xn--fsq.example/\u{4f8b}?q=%E4%BE%8B",
        "http://user:pw@a.co.uk/path;params",
    ]
    .iter()
    .map(|u| u.as_bytes().to_vec())
    .collect()
}

fn http_seeds() -> Vec<Vec<u8>> {
    let auth = "authorization: Bearer t\ncontent-type: application/json\n";
    [
        format!("POST\n/v1/documents\n{auth}\n{{\"id\":\"a\",\"text\":\"the council approved the budget\"}}"),
        format!("POST\n/v1/documents?insert=always\n{auth}\n{{\"html\":\"{}\"}}", PAGES[0].replace('"', "\\\"")),
        format!("POST\n/v1/check\n{auth}\n{{\"text\":\"the council approved the budget\"}}"),
        format!("POST\n/v1/documents/batch\n{auth}\n[{{\"text\":\"one two three\"}},{{\"text\":\"\"}}]"),
        format!("GET\n/v1/documents/a\n{auth}\n"),
        format!("DELETE\n/v1/documents/%FF%FE\n{auth}\n"),
        format!("GET\n/v1/stats\n{auth}\n"),
        "GET\n/healthz\n\n".to_string(),
        "GET\n/metrics\nauthorization: bearer t\n\n".to_string(),
        "PATCH\n/v1/check\n\n".to_string(),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_pass_their_own_target() {
        for target in &TARGETS {
            let mut runner = (target.runner)().unwrap();
            for seed in (target.seeds)() {
                runner(&seed).unwrap_or_else(|e| panic!("{}: {e:#}", target.name));
            }
        }
    }

    #[test]
    fn http_requests_decode() {
        let decoded = request(b"POST\n/v1/check\na: b\n\n{}").unwrap();
        assert_eq!(decoded.method(), "POST");
        assert_eq!(decoded.headers()["a"], "b");
        assert!(request(b"BAD METHOD\n/\n\n").is_none());
    }
}
