//! Issue 12, item 6: idle and half-open connections cannot starve a normal request. Alone in
//! its test binary because it lowers this process's file-descriptor limit (as an operator's
//! `ulimit -n 256` would): client and server sockets share it.

mod common;

use std::io::Write;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{call, Server};
use neardup_server::ServerConfig;

#[test]
fn idle_connections_cannot_starve_a_normal_request() {
    let limited = std::process::Command::new("prlimit")
        .arg(format!("--pid={}", std::process::id()))
        .arg("--nofile=512:512")
        .status();
    // prlimit (util-linux) is on every Debian system; without it the test cannot make the
    // descriptor shortage it is about, and must not pass silently.
    assert!(
        limited.is_ok_and(|s| s.success()),
        "prlimit --nofile=512:512 failed: this test needs prlimit (util-linux)"
    );
    let server = Server::start(ServerConfig {
        header_timeout: Duration::from_secs(1),
        max_connections: 64,
        ..ServerConfig::default()
    });
    // 200 connections that send nothing and 100 that send half a request head: with the
    // server's sockets, more than the descriptors this process may hold.
    let mut idle = Vec::new();
    for n in 0..300 {
        let Ok(mut stream) = TcpStream::connect(server.addr) else {
            break;
        };
        if n % 3 == 0 {
            let _ = stream.write_all(b"POST /v1/check HTTP/1.1\r\nHost: x\r\n");
        }
        idle.push(stream);
    }
    assert!(idle.len() >= 250, "only {} connections opened", idle.len());
    let started = Instant::now();
    let (status, reply) = call("GET", &server.url("/v1/stats"), None, None);
    let elapsed = started.elapsed();
    assert_eq!(status, 200, "{reply}");
    // 300 connections at 64 a second of header timeout: about 5 s in the worst case.
    assert!(elapsed < Duration::from_secs(8), "{elapsed:?}");
    drop(idle);
}
