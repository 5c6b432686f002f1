//! Test support for the service: real `neardup serve` and `redis-server` processes on free
//! loopback ports, stopped when dropped, and a small HTTP client.

#![allow(dead_code)] // Each test file uses part of this module.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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

/// Sends `kill -SIGNAL pid` (`TERM`, `STOP`, `CONT`, ...).
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid} failed");
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

/// An answer, with what the fault tests look at.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// The body as JSON (`Value::Null` if not JSON).
    pub body: Value,
    /// The `Retry-After` header.
    pub retry_after: Option<String>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// How long the answer took.
    pub elapsed: Duration,
}

/// Sends a request (30 s at most); a transport error (server gone) is an `Err`.
pub fn send(method: &str, url: &str, body: &[u8], token: Option<&str>) -> Result<Reply, String> {
    let started = Instant::now();
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
    let retry_after = response.header("retry-after").map(str::to_string);
    let content_type = response.header("content-type").map(str::to_string);
    let text = response.into_string().map_err(|e| e.to_string())?;
    Ok(Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        retry_after,
        content_type,
        elapsed: started.elapsed(),
    })
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

/// A running `redis-server` (without persistence unless `extra` says otherwise), killed when
/// dropped.
pub struct Redis {
    child: Child,
    /// Its port.
    pub port: u16,
    /// Its data directory.
    pub dir: PathBuf,
    extra: Vec<String>,
    /// Arguments `redis-cli` needs to reach it (TLS).
    cli_args: Vec<String>,
    /// Its password (`--requirepass`), if any.
    password: Option<String>,
    /// Served over TLS only.
    tls: bool,
}

impl Redis {
    /// Starts a standalone server.
    pub fn start(dir: &Path) -> Redis {
        Self::start_with(dir, &[])
    }

    /// Starts a server with extra arguments and waits for PING.
    pub fn start_with(dir: &Path, extra: &[&str]) -> Redis {
        Self::start_on(free_port(), dir, extra, &[])
    }

    /// Starts a server reached over TLS only (`rediss://`), its certificate signed by the CA
    /// of `certs`, and waits for PING.
    pub fn start_tls(dir: &Path, certs: &Certificates) -> Redis {
        let port = free_port();
        let path = |p: &PathBuf| p.to_str().unwrap().to_string();
        let (cert, key, ca) = (path(&certs.cert), path(&certs.key), path(&certs.ca));
        let tls_port = port.to_string();
        let extra = [
            "--port",
            "0",
            "--tls-port",
            &tls_port,
            "--tls-cert-file",
            &cert,
            "--tls-key-file",
            &key,
            "--tls-ca-cert-file",
            &ca,
            "--tls-auth-clients",
            "no",
        ];
        Self::start_on(port, dir, &extra, &["--tls", "--cacert", &ca])
    }

    fn start_on(port: u16, dir: &Path, extra: &[&str], cli_args: &[&str]) -> Redis {
        let owned = |args: &[&str]| -> Vec<String> { args.iter().map(|s| s.to_string()).collect() };
        let password = extra
            .iter()
            .position(|a| *a == "--requirepass")
            .map(|at| extra[at + 1].to_string());
        let redis = Redis {
            child: Self::spawn(port, dir, &owned(extra)),
            port,
            dir: dir.to_path_buf(),
            extra: owned(extra),
            cli_args: owned(cli_args),
            password,
            tls: !cli_args.is_empty(),
        };
        redis.wait_ready();
        redis
    }

    fn spawn(port: u16, dir: &Path, extra: &[String]) -> Child {
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(dir)
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts")
    }

    fn wait_ready(&self) {
        wait_until(|| self.cli(&["PING"]).trim() == "PONG", "redis PING");
    }

    /// SIGKILL, now (the data directory stays).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port, with the same arguments and directory (it loads what
    /// the directory holds), and waits for PING.
    pub fn restart(&mut self) {
        self.kill();
        self.child = Self::spawn(self.port, &self.dir, &self.extra);
        self.wait_ready();
    }

    /// Sends `kill -SIGNAL` to the server (`STOP`, `CONT`, ...).
    pub fn signal(&self, name: &str) {
        signal(self.child.id(), name);
    }

    /// Runs `redis-cli -p PORT ARGS` (with its password and TLS settings) and returns its
    /// output.
    pub fn cli(&self, args: &[&str]) -> String {
        Command::new("redis-cli")
            .args(["-p", &self.port.to_string()])
            .args(&self.cli_args)
            .envs(self.password.iter().map(|p| ("REDISCLI_AUTH", p)))
            .args(args)
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    }

    /// `redis://127.0.0.1:PORT` (`rediss://` over TLS).
    pub fn url(&self) -> String {
        let scheme = if self.tls { "rediss" } else { "redis" };
        format!("{scheme}://127.0.0.1:{}", self.port)
    }
}

/// A certificate authority and a server certificate it signed (for 127.0.0.1 and localhost),
/// made with the `openssl` command.
pub struct Certificates {
    /// The CA's certificate (PEM).
    pub ca: PathBuf,
    /// The server's certificate (PEM).
    pub cert: PathBuf,
    /// The server's private key (PEM).
    pub key: PathBuf,
}

impl Certificates {
    /// Makes a CA named `name` and a server certificate it signs, in `dir`.
    pub fn make(dir: &Path, name: &str) -> Certificates {
        let file = |what: &str| dir.join(format!("{name}-{what}"));
        let certs = Certificates {
            ca: file("ca.crt"),
            cert: file("server.crt"),
            key: file("server.key"),
        };
        let (ca_key, csr, ext) = (file("ca.key"), file("server.csr"), file("ext.cnf"));
        std::fs::write(&ext, "subjectAltName=IP:127.0.0.1,DNS:localhost\n").unwrap();
        let p = |path: &PathBuf| path.to_str().unwrap().to_string();
        let subject = format!("/CN={name} test CA");
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &subject,
            "-keyout",
            &p(&ca_key),
            "-out",
            &p(&certs.ca),
        ]);
        openssl(&[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            &p(&certs.key),
            "-out",
            &p(&csr),
        ]);
        openssl(&[
            "x509",
            "-req",
            "-days",
            "2",
            "-in",
            &p(&csr),
            "-CA",
            &p(&certs.ca),
            "-CAkey",
            &p(&ca_key),
            "-CAcreateserial",
            "-extfile",
            &p(&ext),
            "-out",
            &p(&certs.cert),
        ]);
        certs
    }
}

/// Runs `openssl ARGS`, which must succeed (the test fails if it is missing).
fn openssl(args: &[&str]) {
    let output = Command::new("openssl")
        .args(args)
        .output()
        .expect("the openssl command runs (apt-get install openssl)");
    assert!(
        output.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
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
