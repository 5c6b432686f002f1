//! Test support for the service: real `neardup serve` and `redis-server` processes on free
//! loopback ports, stopped when dropped, and a small HTTP client.

#![allow(dead_code)] // Each test file uses part of this module.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// A running `neardup serve`, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Server {
    /// Starts `neardup serve --db DB --listen 127.0.0.1:0 EXTRA...` and waits until it listens.
    pub fn start(db: &str, extra: &[&str]) -> Server {
        let child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--db", db, "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("neardup serve starts");
        // Owned by the `Server` at once, so a panic below still kills it.
        let mut server = Server {
            child,
            base: String::new(),
        };
        let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            let read = stderr.read_line(&mut line).unwrap();
            assert!(read > 0, "neardup serve exited before listening");
            if let Some(addr) = line.trim().strip_prefix("neardup: listening on ") {
                server.base = addr.to_string();
                // Keep draining stderr so the server never blocks on a full pipe.
                std::thread::spawn(move || {
                    let mut sink = String::new();
                    while stderr.read_line(&mut sink).is_ok_and(|n| n > 0) {
                        sink.clear();
                    }
                });
                return server;
            }
        }
    }

    /// SIGKILL, now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The URL of `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Sends a request; returns the status and the body as JSON (`Value::Null` if not JSON).
pub fn call(method: &str, url: &str, body: &[u8], token: Option<&str>) -> (u16, Value) {
    try_call(method, url, body, token).unwrap_or_else(|error| panic!("{method} {url}: {error}"))
}

/// Like [`call`], but a transport error (server gone) is an `Err`.
pub fn try_call(
    method: &str,
    url: &str,
    body: &[u8],
    token: Option<&str>,
) -> Result<(u16, Value), String> {
    let mut request = ureq::request(method, url).timeout(Duration::from_secs(30));
    if let Some(token) = token {
        request = request.set("Authorization", &format!("Bearer {token}"));
    }
    let result = if method == "GET" || method == "DELETE" {
        request.call()
    } else {
        request
            .set("Content-Type", "application/json")
            .send_bytes(body)
    };
    let response = match result {
        Ok(response) => response,
        Err(ureq::Error::Status(_, response)) => response,
        Err(error) => return Err(error.to_string()),
    };
    let status = response.status();
    let text = response.into_string().map_err(|e| e.to_string())?;
    Ok((status, serde_json::from_str(&text).unwrap_or(Value::Null)))
}

/// `POST url` with a JSON value.
pub fn post(url: &str, body: &Value) -> (u16, Value) {
    call("POST", url, body.to_string().as_bytes(), None)
}

/// A news-like text, different for every `seed` (80 words from a 4,000-word vocabulary drawn
/// by a fixed-seed generator), so two seeds are never near duplicates.
pub fn text(seed: u64) -> String {
    const SYLLABLES: [&str; 16] = [
        "ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ber", "dan", "gor", "hel", "jun", "pas",
        "qui", "zen",
    ];
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xD1B5_4A32_D192_ED03;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    (0..80)
        .map(|_| {
            let w = next() % 4000;
            let mut word = String::new();
            for part in [w % 16, (w / 16) % 16, w / 256] {
                word.push_str(SYLLABLES[part as usize % 16]);
            }
            word
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// True if `redis-server` can be run. Without it the test fails, unless the environment opts
/// out explicitly with `NEARDUP_SKIP_REDIS=1` (then it says it skips): a missing server must
/// not pass silently.
pub fn redis_available(test: &str) -> bool {
    let found = Command::new("redis-server")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var("NEARDUP_SKIP_REDIS").is_ok_and(|v| v == "1"),
            "{test}: redis-server is not installed: scripts/test installs it \
             (or set NEARDUP_SKIP_REDIS=1 to skip the Redis tests on purpose)"
        );
        eprintln!("SKIPPED {test}: NEARDUP_SKIP_REDIS=1");
    }
    found
}

/// A free loopback port (bound and released).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `redis-server` without persistence, killed when dropped.
pub struct Redis {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl Redis {
    /// Starts a standalone server.
    pub fn start(dir: &Path) -> Redis {
        Self::start_with(dir, &[])
    }

    /// Starts a server with extra arguments and waits for PING.
    pub fn start_with(dir: &Path, extra: &[&str]) -> Redis {
        let port = free_port();
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let redis = Redis { child, port };
        wait_until(|| redis.cli(&["PING"]).trim() == "PONG", "redis PING");
        redis
    }

    /// Runs `redis-cli -p PORT ARGS` and returns its output.
    pub fn cli(&self, args: &[&str]) -> String {
        Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Three Redis Cluster nodes (no replicas) with every slot assigned.
pub struct Cluster {
    /// The nodes.
    pub nodes: Vec<Redis>,
}

impl Cluster {
    /// Starts three nodes and creates the cluster.
    pub fn start(dir: &Path) -> Cluster {
        let nodes: Vec<Redis> = (0..3)
            .map(|i| {
                let conf = dir.join(format!("nodes-{i}.conf"));
                Redis::start_with(
                    dir,
                    &[
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        conf.to_str().unwrap(),
                    ],
                )
            })
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let status = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("redis-cli runs");
        assert!(status.success(), "redis-cli --cluster create failed");
        wait_until(
            || {
                nodes
                    .iter()
                    .all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
            },
            "cluster_state:ok",
        );
        Cluster { nodes }
    }

    /// `redis+cluster://host:port,host:port,host:port`.
    pub fn url(&self) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}", hosts.join(","))
    }
}

/// Polls `ready` for up to 20 s.
pub fn wait_until(mut ready: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
