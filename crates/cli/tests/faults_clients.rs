//! Fault suite, clients (issue 12): a real `neardup serve` with the timeouts and connection
//! limit given on its command line, against a client that sends its body slowly (slowloris on
//! the body), idle and half-open connections, and SIGTERM while a client is mid-body.

mod service;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use service::{send, Server};

const HEAD: &[u8] = b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                      Content-Length: 100\r\n\r\n{\"text\": \"";

/// Sends a head promising a 100-byte body and the start of that body; returns the connection.
fn slow_body(addr: &str) -> TcpStream {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(HEAD).unwrap();
    stream
}

/// Reads the answer until the server closes the connection; asserts a JSON 408.
fn assert_408_and_closed(mut stream: TcpStream) {
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .expect("the server closes the connection");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("application/json"), "{answer}");
    assert!(answer.contains("\"error\""), "{answer}");
}

#[test]
fn slow_bodies_get_408_idle_clients_cannot_starve_a_request_and_sigterm_drains() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = Server::start(
        dir.path().join("db").to_str().unwrap(),
        &[
            "--header-timeout",
            "1",
            "--body-timeout",
            "1",
            "--max-connections",
            "8",
        ],
    );
    let addr = server.base.trim_start_matches("http://").to_string();

    // Slowloris on the body: answered 408 at the body timeout, and closed.
    let started = Instant::now();
    assert_408_and_closed(slow_body(&addr));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );

    // Idle connections and half request heads fill the 8 connections twice over; a normal
    // request waits at most about 16 / 8 header timeouts.
    let mut idle = Vec::new();
    for n in 0..16 {
        let mut stream = TcpStream::connect(&addr).unwrap();
        if n % 2 == 0 {
            stream
                .write_all(b"GET /v1/stats HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
        }
        idle.push(stream);
    }
    let reply = send("GET", &server.url("/v1/stats"), b"", None).unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.elapsed < Duration::from_secs(5), "{reply:?}");
    drop(idle);

    // SIGTERM while a client is mid-body: it gets its answer, then the server exits.
    let stream = slow_body(&addr);
    std::thread::sleep(Duration::from_millis(200));
    server.terminate();
    assert_408_and_closed(stream);
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}
