//! WARC reading: happy paths (plain and per-record gzip), and every kind of
//! damage, each reported with its offset while reading goes on.

mod common;

use common::*;
use neardup_ingest::{Body, ErrorKind, ReadOptions, ReadStats, WarcId, WarcReader};
use std::path::Path;
use std::sync::Arc;

fn plain(data: Vec<u8>, opts: ReadOptions) -> WarcReader<std::io::Cursor<Vec<u8>>> {
    WarcReader::new(
        std::io::Cursor::new(data),
        Path::new("t.warc"),
        Arc::new(opts),
    )
}

fn gz(data: Vec<u8>, opts: ReadOptions) -> WarcReader<std::io::Cursor<Vec<u8>>> {
    WarcReader::gzip(
        std::io::Cursor::new(data),
        Path::new("t.warc.gz"),
        Arc::new(opts),
    )
}

/// A crawl with every kind of record and response.
fn crawl() -> Vec<Vec<u8>> {
    let chunked = http(
        "200 OK",
        &["Content-Type: text/plain", "Transfer-Encoding: chunked"],
        b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n",
    );
    vec![
        warc_record("warcinfo", "", b"software: test"),
        warc_record("request", "http://a.org/", b"GET / HTTP/1.1\r\n\r\n"),
        html_response("http://a.org/", "<title>A &amp; B</title><p>Page A</p>"),
        warc_record("response", "http://a.org/t", &chunked),
        warc_record(
            "response",
            "http://a.org/img",
            &http("200 OK", &["Content-Type: image/png"], b"\x89PNG"),
        ),
        warc_record(
            "response",
            "http://a.org/404",
            &http("404 Not Found", &["Content-Type: text/html"], b"<p>no</p>"),
        ),
        warc_record(
            "response",
            "http://a.org/latin",
            &http(
                "200 OK",
                &["Content-Type: text/plain; charset=windows-1252"],
                b"caf\xe9",
            ),
        ),
        warc_record("metadata", "http://a.org/", b"via: x"),
    ]
}

#[test]
fn responses_become_documents_and_the_rest_is_counted() {
    let stats = Arc::new(ReadStats::default());
    let reader = plain(crawl().concat(), ReadOptions::default()).with_stats(Arc::clone(&stats));
    let docs: Vec<_> = reader.map(Result::unwrap).collect();
    assert_eq!(docs.len(), 3);
    let a = &docs[0];
    assert_eq!(a.id, "http://a.org/");
    assert_eq!(a.url.as_deref(), Some("http://a.org/"));
    assert_eq!(a.fetched_at.as_deref(), Some("2024-05-01T12:00:00Z"));
    assert_eq!(a.title.as_deref(), Some("A & B"));
    assert_eq!(
        a.body,
        Body::Html("<title>A &amp; B</title><p>Page A</p>".into())
    );
    let before: usize = crawl()[..2].iter().map(Vec::len).sum();
    assert_eq!(a.place.to_string(), format!("t.warc@{before}"));
    assert_eq!(docs[1].body, Body::Text("hello world".into()));
    assert_eq!(docs[2].body, Body::Text("café".into()));
    let s = stats.snapshot();
    assert_eq!((s.skipped_records, s.skipped_responses), (3, 2));
}

#[test]
fn gzip_members_give_the_same_documents_at_member_offsets() {
    let members: Vec<Vec<u8>> = crawl().iter().map(|r| gzip(r)).collect();
    let docs: Vec<_> = gz(members.concat(), ReadOptions::default())
        .map(Result::unwrap)
        .collect();
    let plain_docs: Vec<_> = plain(crawl().concat(), ReadOptions::default())
        .map(Result::unwrap)
        .collect();
    let bodies =
        |d: &[neardup_ingest::Document]| d.iter().map(|d| d.body.clone()).collect::<Vec<_>>();
    assert_eq!(bodies(&docs), bodies(&plain_docs));
    let offset: usize = members[..2].iter().map(Vec::len).sum();
    assert_eq!(docs[0].place.to_string(), format!("t.warc.gz@{offset}"));
    // One gzip stream holding every record works too.
    let whole: Vec<_> = gz(gzip(&crawl().concat()), ReadOptions::default())
        .map(Result::unwrap)
        .collect();
    assert_eq!(bodies(&whole), bodies(&plain_docs));
}

#[test]
fn raw_records_and_record_ids() {
    let record = html_response("http://a.org/", "<p>x</p>");
    let opts = ReadOptions {
        keep_raw: true,
        warc_id: WarcId::RecordId,
        ..ReadOptions::default()
    };
    let doc = plain(record.clone(), opts).next().unwrap().unwrap();
    assert_eq!(doc.raw.as_deref(), Some(&record[..]));
    assert_eq!(doc.id, "urn:uuid:http://a.org/");
}

#[test]
fn wrong_content_length_is_reported_and_reading_resynchronises() {
    let good = |n: u32| html_response(&format!("http://a.org/{n}"), "<p>ok</p>");
    let block = http("200 OK", &["Content-Type: text/html"], b"<p>bad</p>");
    let too_long = warc_record_declaring("response", "http://a.org/long", &block, block.len() + 40);
    let too_short =
        warc_record_declaring("response", "http://a.org/short", &block, block.len() - 5);
    let data = [good(1), too_long.clone(), good(2), too_short, good(3)].concat();
    let out = outline(plain(data, ReadOptions::default()));
    let bad_at = good(1).len();
    let short_at = bad_at + too_long.len() + good(2).len();
    assert_eq!(
        out,
        [
            Ok("http://a.org/1".to_string()),
            Err(format!(
                "t.warc@{bad_at}: Content-Length {} does not match the record (no CRLF CRLF after the block)",
                block.len() + 40
            )),
            Ok("http://a.org/2".to_string()),
            Err(format!(
                "t.warc@{short_at}: Content-Length {} does not match the record (no CRLF CRLF after the block)",
                block.len() - 5
            )),
            Ok("http://a.org/3".to_string()),
        ]
    );
}

#[test]
fn garbage_between_records_is_skipped_with_its_offset() {
    let first = html_response("http://a.org/1", "<p>1</p>");
    let data = [
        first.clone(),
        b"junk junk junk".to_vec(),
        html_response("http://a.org/2", "<p>2</p>"),
    ]
    .concat();
    let out = outline(plain(data, ReadOptions::default()));
    assert_eq!(
        out[1],
        Err(format!(
            "t.warc@{}: skipped 14 bytes of garbage before the next WARC record",
            first.len()
        ))
    );
    assert_eq!(out[2], Ok("http://a.org/2".to_string()));
}

#[test]
fn truncated_files_end_with_an_error() {
    let first = html_response("http://a.org/1", "<p>1</p>");
    let second = html_response("http://a.org/2", "<p>two</p>");
    let mut data = [first.clone(), second.clone()].concat();
    data.truncate(data.len() - 10);
    let out = outline(plain(data, ReadOptions::default()));
    assert_eq!(out.len(), 2);
    assert!(
        matches!(&out[1], Err(m) if m.starts_with(&format!("t.warc@{}: record truncated", first.len()))),
        "{out:?}"
    );

    let members = [gzip(&first), gzip(&second)];
    let mut data = members.concat();
    data.truncate(data.len() - 10);
    let out: Vec<_> = gz(data, ReadOptions::default()).collect();
    assert_eq!(out.len(), 2);
    let err = out[1].as_ref().unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Decompress { .. }), "{err}");
    assert_eq!(err.place.offset, Some(members[0].len() as u64));
}

#[test]
fn garbage_and_corrupt_members_in_gzip_are_skipped() {
    let member = |n: u32| gzip(&html_response(&format!("http://a.org/{n}"), "<p>x</p>"));
    let mut corrupt = member(2);
    let middle = corrupt.len() / 2;
    corrupt[middle..middle + 8].copy_from_slice(b"\xff\xff\xff\xff\xff\xff\xff\xff");
    let data = [
        member(1),
        b"GARBAGE".to_vec(),
        member(3),
        corrupt,
        member(4),
    ]
    .concat();
    let out = outline(gz(data, ReadOptions::default()));
    let at = member(1).len();
    assert_eq!(out[0], Ok("http://a.org/1".to_string()));
    assert_eq!(
        out[1],
        Err(format!(
            "t.warc.gz@{at}: skipped 7 bytes of garbage before the next gzip member"
        ))
    );
    assert_eq!(out[2], Ok("http://a.org/3".to_string()));
    assert!(
        out[3]
            .as_ref()
            .is_err_and(|m| m.contains("corrupt or truncated gzip stream")),
        "{out:?}"
    );
    assert_eq!(out.last(), Some(&Ok("http://a.org/4".to_string())));
}

#[test]
fn records_over_the_limit_are_errors_not_documents() {
    let big = html_response("http://a.org/big", &"x".repeat(5000));
    let data = [big.clone(), html_response("http://a.org/small", "<p>s</p>")].concat();
    let opts = ReadOptions {
        max_document_bytes: 1000,
        ..ReadOptions::default()
    };
    let out: Vec<_> = plain(data, opts).collect();
    let err = out[0].as_ref().unwrap_err();
    assert!(
        matches!(err.kind, ErrorKind::TooLarge { limit: 1000, .. }),
        "{err}"
    );
    assert_eq!(err.place.offset, Some(0));
    assert_eq!(out[1].as_ref().unwrap().id, "http://a.org/small");
}

/// Issue 12, item 3: a Content-Length running past the end of the file,
/// mid-file, costs its own record only: the reader reports it at its offset
/// and resynchronises on the next `WARC/1.` line, whether the declared length
/// is held in memory (under the limit) or streamed past (over it).
#[test]
fn content_length_past_the_end_costs_one_record() {
    let good = |n: u32| html_response(&format!("http://a.org/{n}"), "<p>ok</p>");
    let block = http("200 OK", &["Content-Type: text/html"], b"<p>bad</p>");
    for declared in [100_000, 10_000_000_000] {
        let bad = warc_record_declaring("response", "http://a.org/bad", &block, declared);
        let data = [good(1), bad.clone(), good(2), good(3), good(4)].concat();
        let opts = ReadOptions {
            max_document_bytes: 50_000,
            ..ReadOptions::default()
        };
        let out = outline(plain(data, opts));
        let ids = |n: u32| Ok(format!("http://a.org/{n}"));
        assert_eq!(out.len(), 5, "declared {declared}: {out:?}");
        assert_eq!(
            [&out[0], &out[2], &out[3], &out[4]],
            [&ids(1), &ids(2), &ids(3), &ids(4)]
        );
        let err = out[1].as_ref().unwrap_err();
        assert!(
            err.starts_with(&format!("t.warc@{}: record truncated", good(1).len())),
            "declared {declared}: {err}"
        );
    }
}

/// Issue 12, item 3: a truncated gzip member followed by intact members is
/// reported at its offset, and every intact member after it is read.
#[test]
fn a_truncated_gzip_member_costs_only_itself() {
    let member = |n: u32| {
        gzip(&html_response(
            &format!("http://a.org/{n}"),
            &format!("<p>page {n} {}</p>", "words ".repeat(n as usize * 7)),
        ))
    };
    for cut in [5, 12, 30] {
        let mut truncated = member(2);
        truncated.truncate(truncated.len() - cut);
        let data = [member(1), truncated, member(3), member(4), member(5)].concat();
        let out = outline(gz(data, ReadOptions::default()));
        let ids = |n: u32| Ok(format!("http://a.org/{n}"));
        assert_eq!(out.len(), 5, "cut {cut}: {out:?}");
        assert_eq!(
            [&out[0], &out[2], &out[3], &out[4]],
            [&ids(1), &ids(3), &ids(4), &ids(5)]
        );
        let err = out[1].as_ref().unwrap_err();
        assert!(
            err.starts_with(&format!(
                "t.warc.gz@{}: corrupt or truncated gzip",
                member(1).len()
            )),
            "cut {cut}: {err}"
        );
    }
}

/// A record over the limit that mentions `WARC/1.` in its content is still
/// streamed past whole: the candidates inside it are not records.
#[test]
fn warc_lines_inside_a_big_record_are_content() {
    let content = format!(
        "<p>WARC/1.0 early</p>{}<p>WARC/1.1 late</p>",
        "x".repeat(5000)
    );
    let data = [
        html_response("http://a.org/big", &content),
        html_response("http://a.org/small", "<p>s</p>"),
    ]
    .concat();
    let opts = ReadOptions {
        max_document_bytes: 1000,
        ..ReadOptions::default()
    };
    let out: Vec<_> = plain(data, opts).collect();
    assert_eq!(out.len(), 2, "{:?}", outline(out));
    assert!(matches!(
        out[0].as_ref().unwrap_err().kind,
        ErrorKind::TooLarge { .. }
    ));
    assert_eq!(out[1].as_ref().unwrap().id, "http://a.org/small");
}

/// Size of the members BGZF-style tools write: the uncompressed stream is cut
/// every 64 KB, wherever the cut falls.
const BGZF_MEMBER: usize = 64 * 1024;

/// 300 response records of various sizes (a few bytes to 150 KB, every 25th
/// over 64 KB), each with its own id.
fn varied_records() -> Vec<Vec<u8>> {
    (0..300u32)
        .map(|n| {
            let words = if n % 25 == 7 {
                9_000 + n as usize * 60
            } else {
                (n as usize * 937) % 1_500
            };
            html_response(
                &format!("http://a.org/{n}"),
                &format!("<p>page {n}</p><p>{}</p>", "lorem ipsum ".repeat(words)),
            )
        })
        .collect()
}

/// The stream cut into gzip members of `BGZF_MEMBER` uncompressed bytes.
fn bgzf_members(stream: &[u8]) -> Vec<Vec<u8>> {
    stream.chunks(BGZF_MEMBER).map(gzip).collect()
}

/// Issue 19, item 6: records that span gzip members (a stream cut into 64 KB
/// members regardless of record boundaries) are all read, at the offset of
/// the member where each starts; per-record members and one member for the
/// whole file still work.
#[test]
fn records_spanning_gzip_members_are_all_read() {
    let records = varied_records();
    assert!(records.iter().filter(|r| r.len() > BGZF_MEMBER).count() >= 10);
    let stream = records.concat();
    let members = bgzf_members(&stream);
    let ids: Vec<_> = (0..300).map(|n| Ok(format!("http://a.org/{n}"))).collect();
    for (layout, data) in [
        ("bgzf", members.concat()),
        ("per record", records.iter().flat_map(|r| gzip(r)).collect()),
        ("one member", gzip(&stream)),
    ] {
        assert_eq!(outline(gz(data, ReadOptions::default())), ids, "{layout}");
    }
    // Places: the compressed offset of the member holding the record's start.
    let member_offsets: Vec<usize> = members
        .iter()
        .scan(0, |at, m| {
            let here = *at;
            *at += m.len();
            Some(here)
        })
        .collect();
    let docs: Vec<_> = gz(members.concat(), ReadOptions::default())
        .map(Result::unwrap)
        .collect();
    let mut start = 0;
    for (record, doc) in records.iter().zip(&docs) {
        let offset = member_offsets[start / BGZF_MEMBER];
        assert_eq!(doc.place.to_string(), format!("t.warc.gz@{offset}"));
        start += record.len();
    }
}

/// Issue 19, item 6: a corrupt member of a BGZF-style file costs exactly the
/// records with a byte of their header or block in it (a record whose
/// trailing CRLF CRLF only is in it is whole): the one that runs into it is
/// reported as truncated, the member as corrupt, and the rest of the one that
/// runs out of it is skipped without a further error; every other record is
/// read.
#[test]
fn a_corrupt_member_in_a_bgzf_file_costs_the_records_touching_it() {
    let records = varied_records();
    let stream = records.concat();
    let mut members = bgzf_members(&stream);
    let bad = 5;
    let (lo, hi) = (bad * BGZF_MEMBER, (bad + 1) * BGZF_MEMBER);
    let middle = members[bad].len() / 2;
    members[bad][middle..middle + 8].copy_from_slice(&[0xff; 8]);
    // Each record's span without its trailer, and whether it touches the member.
    let mut start = 0;
    let mut expected = Vec::new();
    let mut runs_in = None;
    for (n, record) in records.iter().enumerate() {
        let end = start + record.len() - 4;
        if end <= lo || start >= hi {
            expected.push(Ok(format!("http://a.org/{n}")));
        } else if start < lo {
            runs_in = Some((n, start));
        }
        start += record.len();
    }
    let (runs_in, runs_in_start) = runs_in.expect("a record runs into the corrupt member");
    let offset_of = |member: usize| members[..member].iter().map(Vec::len).sum::<usize>();
    let out = outline(gz(members.concat(), ReadOptions::default()));
    let read: Vec<_> = out.iter().filter(|o| o.is_ok()).cloned().collect();
    assert_eq!(read, expected);
    // With these records: 22 runs into member 5, 23 to 27 lie in it, 28 runs out of it.
    let lost: Vec<_> = (0..300)
        .filter(|n| !expected.contains(&Ok(format!("http://a.org/{n}"))))
        .collect();
    assert_eq!(lost, (22..=28).collect::<Vec<_>>());
    assert_eq!(runs_in, 22);
    let errors: Vec<_> = out.iter().filter_map(|o| o.as_ref().err()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with(&format!(
            "t.warc.gz@{}: record truncated",
            offset_of(runs_in_start / BGZF_MEMBER)
        )),
        "record {runs_in}: {errors:?}"
    );
    assert!(
        errors[1].starts_with(&format!(
            "t.warc.gz@{}: corrupt or truncated gzip",
            offset_of(bad)
        )),
        "{errors:?}"
    );
}
