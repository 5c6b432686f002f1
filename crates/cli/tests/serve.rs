//! `neardup serve` and `neardup index` end to end, on the embedded store: real processes, real
//! HTTP.

mod service;

use std::sync::{Arc, Barrier};

use neardup_testkit::text;
use serde_json::json;
use service::{call, post, Server};

#[test]
fn bad_requests_never_stop_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let server = Server::start(
        db.to_str().unwrap(),
        &["--token", "sesame", "--body-limit", "4096"],
    );
    let token = Some("sesame");
    let url = server.url("/v1/check");
    let good = || {
        let body = json!({ "text": text(1) }).to_string();
        let (status, reply) = call("POST", &url, body.as_bytes(), token);
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["verdict"], "unique");
    };
    let cases: [(&[u8], Option<&str>, u16); 7] = [
        (b"{not json", token, 400),
        (b"{\"text\": \"caf\xff\"}", token, 400),
        (b"{\"text\": \"   \"}", token, 400),
        (b"{\"text\": \"a b c\", \"colour\": 1}", token, 400),
        (b"{}", token, 400),
        (b"{\"text\": \"a b c\"}", Some("wrong"), 401),
        (b"{\"text\": \"a b c\"}", None, 401),
    ];
    for (body, token, expected) in cases {
        let (status, reply) = call("POST", &url, body, token);
        assert_eq!(status, expected, "{reply}");
        assert!(reply["error"].is_string(), "not a JSON error: {reply}");
        good();
    }
    // A declared length over the limit is a 413 before the body is read (the server closes
    // without reading it): asked with the headers alone, so that no client is left writing a
    // body into a closed connection (a broken pipe, not the server's answer).
    let (status, reply) = declared_too_big(&url);
    assert_eq!(status, 413, "{reply}");
    assert!(reply["error"].is_string(), "not a JSON error: {reply}");
    good();
    let (status, reply) = call("GET", &server.url("/v1/nothing"), b"", token);
    assert_eq!((status, reply["error"].is_string()), (404, true));
    let (status, _) = call("GET", &server.url("/healthz"), b"", None);
    assert_eq!(status, 200);
    good();
}

/// POSTs headers declaring a 10,000-byte body to `url` and reads the answer: status and JSON.
fn declared_too_big(url: &str) -> (u16, serde_json::Value) {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://").split('/').next().unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /v1/check HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer sesame\r\n\
         Content-Type: application/json\r\nContent-Length: 10000\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    (status, serde_json::from_str(body).unwrap_or_default())
}

#[test]
fn documents_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path().join("db").to_str().unwrap(), &[]);
    let documents = server.url("/v1/documents");
    let doc = json!({ "id": "a", "url": "https://example.com/a", "title": "A", "text": text(7) });
    let (status, reply) = post(&documents, &doc);
    assert_eq!(
        (status, &reply["verdict"]),
        (201, &json!("unique")),
        "{reply}"
    );
    // The same text again: a duplicate of a, not inserted.
    let (status, reply) = post(&documents, &json!({ "id": "b", "text": text(7) }));
    assert_eq!(status, 200);
    assert_eq!(reply["verdict"], "duplicate");
    assert_eq!(reply["matches"][0]["id"], "a");
    assert_eq!(reply["matches"][0]["url"], "https://example.com/a");
    // Punctuation only: the same SimHash, another digest: a near duplicate.
    let near = json!({ "text": format!("{}!!", text(7)) });
    let (_, reply) = post(&server.url("/v1/check"), &near);
    assert_eq!(
        (&reply["verdict"], &reply["kind"], &reply["duplicate_of"]),
        (&json!("duplicate"), &json!("near"), &json!("a")),
        "{reply}"
    );
    // insert=always stores a duplicate too; the same id twice is a conflict.
    let url = server.url("/v1/documents?insert=always");
    let (status, _) = post(&url, &json!({ "id": "c", "text": text(7) }));
    assert_eq!(status, 201);
    let (status, reply) = post(&url, &json!({ "id": "c", "text": text(8) }));
    assert_eq!(status, 409, "{reply}");
    let (status, reply) = post(
        &server.url("/v1/documents?insert=sometimes"),
        &json!({ "text": text(9) }),
    );
    assert_eq!(status, 400, "{reply}");
    // HTML goes through main-content extraction.
    let html = format!(
        "<html><head><title>T</title></head><body><p>{}</p></body></html>",
        text(10)
    );
    let (status, reply) = post(&documents, &json!({ "id": "h", "html": html }));
    assert_eq!(status, 201, "{reply}");
    let (status, record) = call("GET", &server.url("/v1/documents/h"), b"", None);
    assert_eq!((status, &record["title"]), (200, &json!("T")));
    // Batch.
    let batch = json!([{ "text": text(11) }, { "text": text(11) }, { "text": "" }]);
    let (status, reply) = post(&server.url("/v1/documents/batch"), &batch);
    assert_eq!(status, 200);
    let verdicts: Vec<_> = reply["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r["verdict"]
                .as_str()
                .or(r["error"].as_str().map(|_| "error"))
        })
        .collect();
    assert_eq!(verdicts, [Some("unique"), Some("duplicate"), Some("error")]);
    // Delete, stats, metrics, OpenAPI.
    let (status, _) = call("DELETE", &server.url("/v1/documents/a"), b"", None);
    assert_eq!(status, 200);
    let (status, _) = call("GET", &server.url("/v1/documents/a"), b"", None);
    assert_eq!(status, 404);
    let (_, stats) = call("GET", &server.url("/v1/stats"), b"", None);
    assert_eq!(stats["documents"], 3, "{stats}");
    let metrics = ureq::get(&server.url("/metrics"))
        .call()
        .unwrap()
        .into_string()
        .unwrap();
    assert!(metrics.contains("neardup_index_documents 3"), "{metrics}");
    assert!(metrics.contains("route=\"/v1/documents\",status=\"201\""));
    let (status, openapi) = call("GET", &server.url("/v1/openapi.json"), b"", None);
    assert_eq!((status, &openapi["openapi"]), (200, &json!("3.0.3")));
}

#[test]
fn racing_near_identical_documents_one_is_unique() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path().join("db").to_str().unwrap(), &[]);
    let url = server.url("/v1/documents");
    let threads = 16;
    let barrier = Arc::new(Barrier::new(threads));
    let verdicts: Vec<(u16, String)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (barrier, url) = (Arc::clone(&barrier), url.clone());
                scope.spawn(move || {
                    // The same text once normalised: white space differs.
                    let body = json!({ "id": format!("r{i}"), "text": format!("{}{}", " ".repeat(i), text(3)) });
                    barrier.wait();
                    let (status, reply) = post(&url, &body);
                    (status, reply["verdict"].as_str().unwrap_or("?").to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let unique: Vec<_> = verdicts.iter().filter(|(_, v)| v == "unique").collect();
    assert_eq!(unique.len(), 1, "{verdicts:?}");
    assert_eq!(unique[0].0, 201);
    assert!(verdicts
        .iter()
        .all(|(s, v)| v == "unique" || (*s == 200 && v.ends_with("duplicate"))));
}

#[test]
fn index_command_and_profile_check() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let input = dir.path().join("docs.jsonl");
    let lines: Vec<String> = [("a", text(1)), ("b", text(1)), ("c", text(2))]
        .iter()
        .map(|(id, t)| json!({ "id": id, "text": t, "url": format!("u/{id}") }).to_string())
        .collect();
    std::fs::write(&input, lines.join("\n")).unwrap();
    let run = |args: &[&str]| service_run(args);
    let (code, out) = run(&["index", "add", "--db", db, input.to_str().unwrap()]);
    assert_eq!(code, 0);
    let verdicts: Vec<String> = out
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["verdict"].to_string())
        .collect();
    assert_eq!(verdicts, ["\"unique\"", "\"duplicate\"", "\"unique\""]);
    let (code, out) = run(&["index", "check", "--db", db, input.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(out.lines().all(|l| !l.contains("\"unique\"")), "{out}");
    let (code, out) = run(&["index", "get", "--db", db, "c"]);
    assert_eq!((code, out.contains("\"url\":\"u/c\"")), (0, true), "{out}");
    let (code, _) = run(&["index", "delete", "--db", db, "c"]);
    assert_eq!(code, 0);
    let (code, _) = run(&["index", "get", "--db", db, "c"]);
    assert_eq!(code, 1);
    let (code, out) = run(&["index", "stats", "--db", db]);
    assert_eq!(code, 0);
    assert!(out.contains("\"documents\":1"), "{out}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["index", "stats", "--db", db, "--profile", "zh"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("profile web") && stderr.contains("profile zh"),
        "{stderr}"
    );
    // Serving anything but loopback needs a token.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["serve", "--db", db, "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--token"));
}

/// Runs the binary; returns its exit code and standard output.
fn service_run(args: &[&str]) -> (i32, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}
