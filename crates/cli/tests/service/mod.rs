//! Test support for the service: real `neardup serve` processes on free loopback ports, stopped
//! when dropped, and a small HTTP client; the `redis-server` processes and generated texts come
//! from `neardup-testkit`.

#![allow(dead_code)] // Each test file uses part of this module.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use neardup_testkit::http::Reply;
use neardup_testkit::{signal, text, wait_until};
use serde_json::Value;

/// A running `neardup serve`, killed (SIGKILL) when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its standard error up to the line saying it listens.
    pub banner: String,
    /// Its standard error after that line, as read so far.
    later: Arc<Mutex<String>>,
}

impl Server {
    /// Starts `neardup serve --db DB --listen 127.0.0.1:0 EXTRA...` and waits until it listens.
    pub fn start(db: &str, extra: &[&str]) -> Server {
        Self::try_start(db, extra)
            .unwrap_or_else(|stderr| panic!("neardup serve exited before listening: {stderr}"))
    }

    /// Like [`Server::start`]; if the server exits before it listens, its standard error.
    pub fn try_start(db: &str, extra: &[&str]) -> Result<Server, String> {
        let args: Vec<&str> = ["--db", db].iter().chain(extra).copied().collect();
        Self::try_start_with(&args, &[])
    }

    /// Starts `neardup serve --listen 127.0.0.1:0 ARGS...` with these environment variables
    /// added; if it exits before it listens, its standard error.
    pub fn try_start_with(args: &[&str], env: &[(&str, &str)]) -> Result<Server, String> {
        let child = Command::new(env!("CARGO_BIN_EXE_neardup"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("neardup serve starts");
        // Owned by the `Server` at once, so a panic below still kills it.
        let mut server = Server {
            child,
            base: String::new(),
            banner: String::new(),
            later: Arc::default(),
        };
        let mut stderr = BufReader::new(server.child.stderr.take().unwrap());
        let mut line = String::new();
        loop {
            line.clear();
            let read = stderr.read_line(&mut line).unwrap();
            if read == 0 {
                return Err(std::mem::take(&mut server.banner));
            }
            server.banner.push_str(&line);
            if let Some(addr) = line.trim().strip_prefix("neardup: listening on ") {
                server.base = addr.to_string();
                // Keep draining stderr so the server never blocks on a full pipe.
                let later = Arc::clone(&server.later);
                std::thread::spawn(move || {
                    let mut line = String::new();
                    while stderr.read_line(&mut line).is_ok_and(|n| n > 0) {
                        later.lock().unwrap().push_str(&line);
                        line.clear();
                    }
                });
                return Ok(server);
            }
        }
    }

    /// Everything it wrote to standard error so far.
    pub fn stderr(&self) -> String {
        format!("{}{}", self.banner, self.later.lock().unwrap())
    }

    /// SIGKILL, now.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        signal(self.child.id(), "TERM");
    }

    /// Waits up to `limit` for the process to exit; its status, or `None` if it still runs.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Some(status);
            }
            if start.elapsed() > limit {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
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

/// Sends a request with the bearer `token`, if any (see [`neardup_testkit::http::send`]).
pub fn send(method: &str, url: &str, body: &[u8], token: Option<&str>) -> Result<Reply, String> {
    let authorization = token.map(|token| format!("Bearer {token}"));
    neardup_testkit::http::send(method, url, body, authorization.as_deref())
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
    send(method, url, body, token).map(|reply| (reply.status, reply.body))
}

/// Asserts `reply` is what a client gets while the store is unavailable: 503, `Retry-After`, a
/// JSON error, and in less than `within`.
pub fn assert_unavailable(reply: &Reply, within: Duration) {
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(reply.retry_after.as_deref(), Some("1"), "{reply:?}");
    assert_eq!(
        reply.content_type.as_deref(),
        Some("application/json"),
        "{reply:?}"
    );
    assert!(reply.body["error"].is_string(), "{reply:?}");
    assert!(
        reply.elapsed < within,
        "answered in {:?}: {reply:?}",
        reply.elapsed
    );
}

/// Polls `url` with GET until it answers 200 (20 s at most); returns how long that took.
pub fn wait_healthy(url: &str) -> Duration {
    let started = Instant::now();
    wait_until(
        || send("GET", url, b"", None).is_ok_and(|reply| reply.status == 200),
        url,
    );
    started.elapsed()
}

/// `POST url` with a JSON value.
pub fn post(url: &str, body: &Value) -> (u16, Value) {
    call("POST", url, body.to_string().as_bytes(), None)
}

/// Inserts documents (`?insert=always`) from 4 threads into the server at `base` until it is
/// gone: `kill` is called after `load_for`. Returns the ids acknowledged with 201 (named
/// `PREFIX-THREAD-N`); a 503 is not an acknowledgement, any other status fails the test.
pub fn acknowledged_under_load(
    base: &str,
    prefix: &str,
    load_for: Duration,
    kill: impl FnOnce(),
) -> Vec<String> {
    let url = format!("{base}/v1/documents?insert=always");
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..4u64)
        .map(|t| {
            let (url, stop, prefix) = (url.clone(), stop.clone(), prefix.to_string());
            std::thread::spawn(move || {
                let mut acknowledged = Vec::new();
                for n in 0u64.. {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        break;
                    }
                    let id = format!("{prefix}-{t}-{n}");
                    let seed = (prefix.len() as u64) << 40 | t << 32 | n;
                    let body = serde_json::json!({ "id": id, "text": text(seed) }).to_string();
                    match try_call("POST", &url, body.as_bytes(), None) {
                        Ok((201, _)) => acknowledged.push(id),
                        Ok((503, _)) => {}
                        Ok((status, reply)) => panic!("{status}: {reply}"),
                        Err(_) => break, // killed
                    }
                }
                acknowledged
            })
        })
        .collect();
    std::thread::sleep(load_for);
    kill();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writers
        .into_iter()
        .flat_map(|writer| writer.join().unwrap())
        .collect()
}

/// Asserts every id in `ids` can be read from the server at `base`.
pub fn assert_all_stored(base: &str, ids: &[String], what: &str) {
    assert!(!ids.is_empty(), "{what}: nothing was acknowledged");
    for id in ids {
        let (status, record) = call("GET", &format!("{base}/v1/documents/{id}"), b"", None);
        assert_eq!(status, 200, "{what}: acknowledged {id} lost");
        assert_eq!(record["id"], serde_json::json!(id));
    }
}
