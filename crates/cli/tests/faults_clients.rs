//! Fault suite, clients (issue 12): a real `neardup serve` with the timeouts and connection
//! limit given on its command line, against a client that sends its body slowly (slowloris on
//! the body), idle and half-open connections, and SIGTERM while a client is mid-body; and
//! (issue 19) fairness: every slot held by idle or slow clients, one address over its share,
//! an oversize Content-Length.

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

/// A `neardup serve` with these options on a fresh database (kept while the guard lives), and
/// its `host:port`.
fn serve(extra: &[&str]) -> (tempfile::TempDir, Server, String) {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path().join("db").to_str().unwrap(), extra);
    let addr = server.base.trim_start_matches("http://").to_string();
    (dir, server, addr)
}

/// Reads a whole answer (the server closes the connection after it).
fn read_answer(mut stream: TcpStream) -> String {
    let mut answer = Vec::new();
    stream
        .read_to_end(&mut answer)
        .expect("the server answers and closes the connection");
    String::from_utf8_lossy(&answer).into_owned()
}

/// Issue 19, item 7: a declared body over the limit is refused with a JSON 413 at once, before
/// any of it is read (it was a 408 at the body timeout).
#[test]
fn an_oversize_content_length_is_refused_at_once() {
    let (_dir, _server, addr) = serve(&["--body-timeout", "5"]);
    let mut stream = TcpStream::connect(&addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let started = Instant::now();
    stream
        .write_all(
            b"POST /v1/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
              Content-Length: 1000000000\r\n\r\n{\"text\": \"",
        )
        .unwrap();
    let answer = read_answer(stream);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("application/json"), "{answer}");
    assert!(answer.contains("\"error\""), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
}

/// Issue 19, item 7: idle connections and half request heads holding every connection slot
/// (five times over) do not delay a normal request: the longest idle makes room for it (it
/// waited 5 header timeouts).
#[test]
fn idle_connections_holding_every_slot_do_not_delay_a_request() {
    let (_dir, server, addr) = serve(&["--header-timeout", "10", "--max-connections", "8"]);
    let idle: Vec<_> = (0..40)
        .map(|n| {
            let mut stream = TcpStream::connect(&addr).unwrap();
            if n % 2 == 0 {
                stream
                    .write_all(b"GET /v1/stats HTTP/1.1\r\nHost: x\r\n")
                    .unwrap();
            }
            stream
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    for _ in 0..3 {
        let reply = send("GET", &server.url("/v1/stats"), b"", None).unwrap();
        assert_eq!(reply.status, 200, "{reply:?}");
        assert!(reply.elapsed < Duration::from_secs(1), "{reply:?}");
    }
    drop(idle);
}

/// Issue 19, item 7: bodies that stop coming, holding every slot twice over, cost a normal
/// request at most about two body grace periods (1 s each), not the 30 s body timeout: they
/// get a 408 once they fall under the minimum body rate.
#[test]
fn slow_bodies_holding_every_slot_do_not_delay_a_request_long() {
    let (_dir, server, addr) = serve(&["--body-timeout", "30", "--max-connections", "8"]);
    let slow: Vec<_> = (0..16).map(|_| slow_body(&addr)).collect();
    std::thread::sleep(Duration::from_millis(100));
    let body = br#"{"text": "a normal request"}"#;
    let reply = send("POST", &server.url("/v1/check"), body, None).unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.elapsed < Duration::from_secs(3), "{reply:?}");
    // Every slow client is let go within a few seconds (a 408, or a reset when the server
    // closed with its unread bytes).
    for mut stream in slow {
        let closed = stream.read_to_end(&mut Vec::new());
        assert!(
            closed.as_ref().map_or_else(
                |e| e.kind() == std::io::ErrorKind::ConnectionReset,
                |_| true
            ),
            "{closed:?}"
        );
    }
}

/// Issue 19, item 7: one address holds at most `--max-connections-per-ip` connections: over
/// it, its longest-idle connection makes room; if none of its connections is idle, the new
/// one is answered a JSON 503 at once.
#[test]
fn one_address_holds_at_most_its_share_of_connections() {
    let (_dir, server, addr) = serve(&[
        "--max-connections-per-ip",
        "4",
        "--min-body-rate",
        "0",
        "--header-timeout",
        "10",
    ]);
    let mut idle: Vec<_> = (0..6).map(|_| TcpStream::connect(&addr).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(200));
    let reply = send("GET", &server.url("/v1/stats"), b"", None).unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.elapsed < Duration::from_secs(1), "{reply:?}");
    // The first idle connections were closed to make room, without an answer.
    idle[0]
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    assert_eq!(idle[0].read(&mut [0; 16]).unwrap(), 0);
    drop(idle);

    let busy: Vec<_> = (0..4).map(|_| slow_body(&addr)).collect();
    std::thread::sleep(Duration::from_millis(200));
    let started = Instant::now();
    let mut refused = TcpStream::connect(&addr).unwrap();
    refused
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    refused
        .write_all(b"GET /v1/stats HTTP/1.1\r\nHost: x\r\n\r\n")
        .unwrap();
    let answer = read_answer(refused);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.contains("too many connections from 127.0.0.1"),
        "{answer}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    drop(busy);
}
