//! Test support shared by the crates' tests (a dev-dependency only, never published): real
//! `redis-server` processes on free loopback ports (standalone, over TLS, a three-node
//! cluster), signals, polling, generated texts, and a small HTTP client ([`http`]). Nothing here is mocked: the tests run the
//! real programs, and a test that needs one fails when it is missing unless the environment
//! opts out on purpose ([`redis_available`]).

pub mod http;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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
    /// The temporary data directory it owns ([`Redis::temporary`]), removed after it is killed.
    _temp: Option<tempfile::TempDir>,
}

impl Redis {
    /// Starts a standalone server in a temporary directory of its own, for the test named
    /// `test`; `None` if the environment opts out of the Redis tests (see [`redis_available`]).
    pub fn temporary(test: &str) -> Option<Redis> {
        if !redis_available(test) {
            return None;
        }
        let temp = tempfile::tempdir().expect("a temporary directory");
        let mut redis = Self::start(temp.path());
        redis._temp = Some(temp);
        Some(redis)
    }

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
            _temp: None,
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
pub struct RedisCluster {
    /// The nodes.
    pub nodes: Vec<Redis>,
}

impl RedisCluster {
    /// Starts three nodes and creates the cluster.
    pub fn start(dir: &Path) -> RedisCluster {
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
        RedisCluster { nodes }
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

/// Sends `kill -SIGNAL pid` (`TERM`, `STOP`, `CONT`, ...).
pub fn signal(pid: u32, name: &str) {
    let status = Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{name} {pid} failed");
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
