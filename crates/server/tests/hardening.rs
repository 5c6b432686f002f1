//! Issue 12, items 6 to 8: slow and idle clients, metrics cardinality, ids, JSON errors,
//! bearer tokens. A real server on loopback, raw sockets where a client library would not send
//! what a hostile client does.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{call, Server};
use neardup_server::{ServerConfig, MAX_ID_BYTES};
use serde_json::json;

fn with_token() -> ServerConfig {
    ServerConfig {
        token: Some("sesame".into()),
        header_timeout: Duration::from_secs(1),
        ..ServerConfig::default()
    }
}

fn text(n: usize) -> String {
    format!("document {n} says something about the weather in spring and the price of bread")
}

#[test]
fn a_partial_request_head_is_dropped_after_the_header_timeout() {
    let server = Server::start(with_token());
    let started = Instant::now();
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /v1/stats HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .unwrap();
    let mut buf = [0u8; 256];
    // The server closes the connection: a read gives 0 bytes (or a reset), not a timeout.
    match stream.read(&mut buf) {
        Ok(n) => assert_eq!(n, 0, "{}", String::from_utf8_lossy(&buf[..n])),
        Err(error) => assert_ne!(error.kind(), std::io::ErrorKind::WouldBlock, "{error}"),
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
}

#[test]
fn every_error_is_json() {
    let server = Server::start(with_token());
    let auth = "Authorization: Bearer sesame\r\n";
    let long_uri = format!(
        "GET /v1/documents/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(70_000)
    );
    let big_head = format!(
        "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\n\r\n",
        "b".repeat(500_000)
    );
    let cases = [
        (
            format!(
                "GET /v1/documents/%FF%FE HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
            ),
            "400",
        ),
        (
            format!(
                "DELETE /v1/documents/%C3 HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
            ),
            "400",
        ),
        ("GARBAGE\r\n\r\n".to_string(), "400"),
        (long_uri, "414"),
        (big_head, "431"),
    ];
    for (request, status) in cases {
        let answer = server.raw(request.as_bytes());
        let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
        assert!(head.starts_with(&format!("HTTP/1.1 {status} ")), "{answer}");
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{answer}"
        );
        let body: serde_json::Value = serde_json::from_str(body).unwrap();
        assert!(body["error"].is_string(), "{answer}");
    }
}

#[test]
fn ids_over_the_limit_are_refused_and_every_accepted_id_can_be_read_and_deleted() {
    let server = Server::start(with_token());
    let token = Some("Bearer sesame");
    let documents = server.url("/v1/documents");
    let too_long = "x".repeat(MAX_ID_BYTES + 1);
    let (status, reply) = call(
        "POST",
        &documents,
        Some(json!({ "id": too_long, "text": text(1) })),
        token,
    );
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply["error"].as_str().unwrap().contains("limit"),
        "{reply}"
    );
    // The longest id allowed, of bytes that percent-encode to 3 bytes each.
    let longest = "é/ ?".repeat(MAX_ID_BYTES / 5) + &"z".repeat(MAX_ID_BYTES % 5);
    assert_eq!(longest.len(), MAX_ID_BYTES);
    let (status, reply) = call(
        "POST",
        &documents,
        Some(json!({ "id": longest, "text": text(2) })),
        token,
    );
    assert_eq!(status, 201, "{reply}");
    let encoded: String = longest.bytes().map(|b| format!("%{b:02X}")).collect();
    let one = server.url(&format!("/v1/documents/{encoded}"));
    let (status, reply) = call("GET", &one, None, token);
    assert_eq!(
        (status, reply["id"].as_str()),
        (200, Some(longest.as_str())),
        "{reply}"
    );
    let (status, reply) = call("DELETE", &one, None, token);
    assert_eq!(status, 200, "{reply}");
}

#[test]
fn bearer_is_case_insensitive_and_tokens_must_match() {
    let server = Server::start(with_token());
    let stats = server.url("/v1/stats");
    for (header, expected) in [
        ("Bearer sesame", 200),
        ("bearer sesame", 200),
        ("BEARER  sesame ", 200),
        ("Bearer sesam", 401),
        ("Bearer sesame!", 401),
        ("Bearer ", 401),
        ("Basic sesame", 401),
        ("sesame", 401),
    ] {
        let (status, reply) = call("GET", &stats, None, Some(header));
        assert_eq!(status, expected, "{header:?}: {reply}");
    }
}

#[test]
fn metrics_series_are_bounded_whatever_the_methods() {
    let server = Server::start(with_token());
    for n in 0..200 {
        let method = format!("M{n}X");
        for auth in ["", "Authorization: Bearer sesame\r\n"] {
            let request = format!(
                "{method} /v1/stats HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n"
            );
            let answer = server.raw(request.as_bytes());
            assert!(answer.starts_with("HTTP/1.1 4"), "{answer}");
        }
    }
    let answer = server.raw(b"GET /metrics HTTP/1.1\r\nHost: x\r\nAuthorization: bearer sesame\r\nConnection: close\r\n\r\n");
    let series: Vec<&str> = answer
        .lines()
        .filter(|line| line.starts_with("neardup_http_requests_total{"))
        .collect();
    assert_eq!(
        series,
        [
            "neardup_http_requests_total{method=\"other\",route=\"/v1/stats\",status=\"405\"} 200",
            "neardup_http_requests_total{method=\"other\",route=\"unauthenticated\",status=\"401\"} 200",
        ],
        "{answer}"
    );
}

#[test]
fn healthz_asks_the_store() {
    let server = Server::start(with_token());
    let (status, reply) = call("GET", &server.url("/healthz"), None, None);
    assert_eq!((status, reply["status"].as_str()), (200, Some("ok")));
}

#[test]
fn an_idle_kept_alive_connection_is_closed_after_the_header_timeout() {
    let server = Server::start(with_token());
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).unwrap();
    assert!(buf[..n].starts_with(b"HTTP/1.1 200 "));
    let idle = Instant::now();
    let rest = stream.read(&mut buf);
    assert!(matches!(rest, Ok(0) | Err(_)), "{rest:?}");
    let elapsed = idle.elapsed();
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
}
