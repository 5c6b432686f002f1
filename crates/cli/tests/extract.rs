//! `neardup extract`, end to end: every reader, `--html main|all`, bad input, and the text being
//! the one `dedup` fingerprints.

mod common;

use common::{assert_one_line_error, json_lines, neardup};
use serde_json::json;

const STORY: &str =
    "The harbour authority approved the new ferry timetable on Tuesday, adding a late \
    crossing on weekdays and a second boat on summer weekends after a year of complaints.";

/// A page whose main content is `STORY`, wrapped in navigation and a footer that differ by `site`.
fn page(site: &str) -> String {
    format!(
        "<html><head><title>Ferries | {site}</title></head><body>\
         <nav><a href='/'>{site} home</a> <a href='/news'>News</a></nav>\
         <div class='sidebar'><a href='/x'>Most read on {site}</a></div>\
         <main><h1>New ferry timetable</h1><p>{STORY}</p></main>\
         <footer>Copyright {site}</footer></body></html>"
    )
}

#[test]
fn jsonl_from_stdin_main_and_all() {
    let input = [
        json!({"id": "p1", "url": "https://a.example/f", "html": page("Alpha")}),
        json!({"id": 2, "text": "Plain text stays as it is.", "title": "Given"}),
    ]
    .iter()
    .map(|v| format!("{v}\n"))
    .collect::<String>();
    let run = neardup(&["extract", "-"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0],
        json!({"id": "p1", "url": "https://a.example/f", "title": "Ferries | Alpha",
               "text": format!("New ferry timetable\n{STORY}")})
    );
    assert_eq!(
        lines[1],
        json!({"id": "2", "url": null, "title": "Given", "text": "Plain text stays as it is."})
    );

    let all = neardup(&["extract", "--html", "all", "-"], input.as_bytes());
    let text = json_lines(&all.stdout)[0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    for furniture in ["Alpha home", "Most read on Alpha", "Copyright Alpha", STORY] {
        assert!(text.contains(furniture), "{furniture:?} not in {text:?}");
    }
}

#[test]
fn folders_warc_and_the_text_dedup_fingerprints() {
    let dir = tempfile::tempdir().unwrap();
    let site = dir.path().join("site");
    std::fs::create_dir_all(site.join("sub")).unwrap();
    std::fs::write(site.join("a.html"), page("Alpha")).unwrap();
    std::fs::write(site.join("sub/b.html"), page("Beta")).unwrap();
    let site = site.to_str().unwrap();
    let run = neardup(&["extract", site], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a.html", "sub/b.html"]);
    assert_eq!(
        lines[0]["text"], lines[1]["text"],
        "navigation is not content"
    );

    // The same text is what dedup fingerprints: the pages are exact duplicates under
    // `--html main`, and not even near duplicates under `--html all`, as `extract` says.
    let dedup = |html: &str| neardup(&["dedup", "--html", html, site, "--removed", "-"], b"");
    let removed = json_lines(&dedup("main").stdout);
    assert_eq!(
        (removed.len(), removed[0]["kind"].as_str()),
        (1, Some("exact"))
    );
    let all = json_lines(&neardup(&["extract", "--html", "all", site], b"").stdout);
    assert_ne!(all[0]["text"], all[1]["text"]);
    assert!(json_lines(&dedup("all").stdout)
        .iter()
        .all(|r| r["kind"] != "exact"));

    // WARC, with a GBK page declared by its HTTP header.
    let gbk_story: &[u8] = b"\xd6\xd0\xce\xc4\xd0\xc2\xce\xc5"; // 中文新闻
    let record = |uri: &str, content_type: &str, body: &[u8]| {
        let mut http =
            format!("HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\n\r\n").into_bytes();
        http.extend_from_slice(body);
        let mut record = format!(
            "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\nContent-Length: {}\r\n\r\n",
            http.len()
        )
        .into_bytes();
        record.extend(http);
        record.extend(b"\r\n\r\n");
        record
    };
    let mut gbk_page = b"<html><body><nav>x</nav><p>".to_vec();
    gbk_page.extend_from_slice(gbk_story);
    gbk_page.extend_from_slice(b"</p></body></html>");
    let mut warc = record(
        "http://a.example/1",
        "text/html; charset=utf-8",
        page("Alpha").as_bytes(),
    );
    warc.extend(record(
        "http://zh.example/2",
        "text/html; charset=GBK",
        &gbk_page,
    ));
    let path = dir.path().join("crawl.warc");
    std::fs::write(&path, warc).unwrap();
    let run = neardup(&["extract", path.to_str().unwrap()], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines[0]["url"], "http://a.example/1");
    assert_eq!(lines[0]["text"], format!("New ferry timetable\n{STORY}"));
    assert_eq!(lines[1]["text"], "中文新闻");
}

#[test]
fn bad_input_is_reported_with_its_place() {
    let input = format!(
        "{}\nnot json\n{}\n",
        json!({"id": "ok", "html": page("Alpha")}),
        json!({"id": "no-body"})
    );
    let run = neardup(&["extract", "-"], input.as_bytes());
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(json_lines(&run.stdout).len(), 1);
    for place in ["-:2", "-:3"] {
        assert!(run.stderr.contains(place), "{place} in {}", run.stderr);
    }
    let fail = neardup(&["extract", "--on-error", "fail", "-"], input.as_bytes());
    assert_one_line_error(&fail, 1, "-:2");
    assert_eq!(neardup(&["extract", "-", "--html", "some"], b"").code, 2);
}

#[test]
fn files_given_one_by_one_come_out_in_order() {
    // Files of one document each are read in batches: the order, a JSONL between them and a
    // bad file among them must not notice.
    let dir = tempfile::tempdir().unwrap();
    let mut args = vec!["extract".to_string()];
    let mut expected = Vec::new();
    for i in 0..40 {
        let path = match i {
            17 => {
                let path = dir.path().join("middle.jsonl");
                std::fs::write(
                    &path,
                    format!("{}\n", json!({"id": "j", "text": "from jsonl"})),
                )
                .unwrap();
                expected.push("j".to_string());
                path
            }
            23 => {
                let path = dir.path().join("binary.txt");
                std::fs::write(&path, b"a\0b").unwrap();
                path
            }
            _ => {
                let path = dir.path().join(format!("p{i}.html"));
                std::fs::write(&path, page(&format!("Site{i}"))).unwrap();
                expected.push(path.to_str().unwrap().to_string());
                path
            }
        };
        args.push(path.to_str().unwrap().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = neardup(&args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    let ids: Vec<&str> = lines.iter().map(|l| l["id"].as_str().unwrap()).collect();
    assert_eq!(ids, expected);
    assert!(run.stderr.contains("binary.txt"), "{}", run.stderr);
    assert_eq!(lines[1]["text"], format!("New ferry timetable\n{STORY}"));
}
