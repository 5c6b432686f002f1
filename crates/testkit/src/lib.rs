//! Test support shared by the crates' tests (a dev-dependency only, never published): real
//! `redis-server` processes on free loopback ports (standalone, over TLS, a Redis Cluster of
//! three masters with a replica each), signals, polling, generated texts, and a small HTTP client ([`http`]). Nothing here is mocked: the tests run the
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
    let runs = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = runs("redis-server") && runs("redis-cli");
    if !found {
        assert!(
            std::env::var("NEARDUP_SKIP_REDIS").is_ok_and(|v| v == "1"),
            "{test}: redis-server or redis-cli is not installed: scripts/test installs them \
             (or set NEARDUP_SKIP_REDIS=1 to skip the Redis tests on purpose)"
        );
        eprintln!("SKIPPED {test}: NEARDUP_SKIP_REDIS=1");
    }
    found
}

/// A free loopback port (bound and released) whose Redis Cluster bus port (10000 above it, so
/// below 55536) is free too.
pub fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if port < 55536 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

/// A running `redis-server` (without persistence unless `extra` says otherwise), killed when
/// dropped.
pub struct Redis {
    /// The process, while it runs.
    child: Option<Child>,
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
            child: Some(Self::spawn(port, dir, &owned(extra))),
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

    /// Starts a Redis Cluster node in `dir` (its own directory: it holds the node's
    /// `nodes.conf`) with an AOF fsynced on every write, failed over after
    /// [`CLUSTER_NODE_TIMEOUT_MS`] unreachable, and waits for PING.
    pub fn start_cluster_node(dir: &Path) -> Redis {
        std::fs::create_dir_all(dir).expect("the node's directory");
        let timeout = CLUSTER_NODE_TIMEOUT_MS.to_string();
        Self::start_with(
            dir,
            &[
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                &timeout,
            ],
        )
    }

    /// SIGKILL, now (the data directory stays).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same arguments and directory (it loads what
    /// the directory holds; a cluster node rejoins, as a replica if its slots were taken over
    /// meanwhile), and waits for PING.
    pub fn restart(&mut self) {
        self.kill();
        self.child = Some(Self::spawn(self.port, &self.dir, &self.extra));
        self.wait_ready();
    }

    /// Sends `kill -SIGNAL` to the server (`STOP`, `CONT`, ...).
    pub fn signal(&self, name: &str) {
        signal(self.child.as_ref().expect("the server runs").id(), name);
    }

    /// True while it runs (not killed).
    pub fn alive(&self) -> bool {
        self.child.is_some()
    }

    /// A line `field:value` of `INFO section`, its value.
    pub fn info(&self, section: &str, field: &str) -> String {
        let info = self.cli(&["INFO", section]);
        info.lines()
            .find_map(|line| line.strip_prefix(&format!("{field}:")))
            .unwrap_or_default()
            .trim()
            .to_string()
    }

    /// Keys it holds (`DBSIZE`).
    pub fn keys(&self) -> u64 {
        self.cli(&["DBSIZE"]).trim().parse().unwrap_or(0)
    }

    /// How many of its keys are block keys of a SimHash index held in the store
    /// (`neardup:{NAME/b<table>:<hex>}`, each its own hash tag).
    pub fn block_keys(&self) -> u64 {
        self.cli(&["--scan", "--pattern", "neardup:{*/b*}"])
            .lines()
            .filter(|line| !line.is_empty())
            .count() as u64
    }

    /// How many keys it holds besides the index's (block keys and rows): bodies, claims and
    /// ordering keys.
    pub fn keys_but_index(&self) -> u64 {
        self.keys() - self.block_keys() - self.rows_keys()
    }

    /// How many of its keys are rows of a database (`neardup:{NAME/r<bucket>}`, each its own
    /// hash tag: each stored document's slot, SimHash and digest key, a range of slots a key).
    pub fn rows_keys(&self) -> u64 {
        self.cli(&["--scan", "--pattern", "neardup:{*/r*}"])
            .lines()
            .filter(|line| !line.is_empty())
            .count() as u64
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

/// How long a Redis Cluster node may be unreachable before the cluster fails it over.
pub const CLUSTER_NODE_TIMEOUT_MS: u64 = 1000;

/// A Redis Cluster of 3 masters with a replica each (6 [`Redis::start_cluster_node`] nodes,
/// each in its own directory), its directories removed when dropped.
pub struct RedisCluster {
    /// Its 6 nodes (the first 3 masters when created).
    pub nodes: Vec<Redis>,
    _dir: tempfile::TempDir,
}

impl RedisCluster {
    /// Starts 6 nodes, creates the cluster (`redis-cli --cluster create ... --cluster-replicas
    /// 1`) and waits until every node says `cluster_state:ok` and every replica is in sync.
    pub fn start() -> RedisCluster {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let nodes: Vec<Redis> = (0..6)
            .map(|i| Redis::start_cluster_node(&dir.path().join(format!("node-{i}"))))
            .collect();
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        let output = Command::new("redis-cli")
            .args(["--cluster", "create"])
            .args(&addrs)
            .args(["--cluster-replicas", "1", "--cluster-yes"])
            .output()
            .expect("redis-cli runs");
        assert!(
            output.status.success(),
            "redis-cli --cluster create: {}",
            String::from_utf8_lossy(&output.stdout)
        );
        let cluster = RedisCluster { nodes, _dir: dir };
        cluster.wait_healthy();
        cluster
    }

    /// Waits until every running node says `cluster_state:ok`, sees 3 masters, and every
    /// replica's link to its master is up.
    pub fn wait_healthy(&self) {
        wait_until(
            || {
                let live: Vec<&Redis> = self.nodes.iter().filter(|n| n.alive()).collect();
                live.iter().all(|n| {
                    n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok")
                        && (n.info("replication", "role") == "master"
                            || n.info("replication", "master_link_status") == "up")
                }) && self.masters().len() == 3
            },
            "cluster_state:ok with 3 masters and replicas in sync",
        );
    }

    /// The running masters.
    pub fn masters(&self) -> Vec<&Redis> {
        self.nodes
            .iter()
            .filter(|n| n.alive() && n.info("replication", "role") == "master")
            .collect()
    }

    /// Index in [`RedisCluster::nodes`] of the master serving `key`'s slot (as a running node
    /// sees the cluster).
    pub fn master_of(&self, key: &str) -> usize {
        let asked = self.nodes.iter().find(|n| n.alive()).expect("a node runs");
        let slot: u16 = asked
            .cli(&["CLUSTER", "KEYSLOT", key])
            .trim()
            .parse()
            .expect("a slot number");
        let nodes = asked.cli(&["CLUSTER", "NODES"]);
        let port = nodes
            .lines()
            .filter(|line| line.contains("master") && !line.contains("fail"))
            .find(|line| {
                line.split_whitespace().skip(8).any(|range| {
                    let (from, to) = range.split_once('-').unwrap_or((range, range));
                    match (from.parse::<u16>(), to.parse::<u16>()) {
                        (Ok(from), Ok(to)) => (from..=to).contains(&slot),
                        _ => false,
                    }
                })
            })
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|addr| addr.split(['@', ':']).nth(1))
            .and_then(|port| port.parse::<u16>().ok())
            .expect("a master serves the slot");
        self.nodes
            .iter()
            .position(|n| n.port == port)
            .expect("a node of this cluster")
    }

    /// Index in [`RedisCluster::nodes`] of the replica of the node at `master`.
    pub fn replica_of(&self, master: usize) -> usize {
        let port = self.nodes[master].port.to_string();
        self.nodes
            .iter()
            .position(|n| n.alive() && n.info("replication", "master_port") == port)
            .expect("the master has a replica")
    }

    /// `redis+cluster://HOST:PORT,...?name=NAME` over every node.
    pub fn url(&self, name: &str) -> String {
        let hosts: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        format!("redis+cluster://{}?name={name}", hosts.join(","))
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

/// Polls `ready` every 50 ms for up to 30 s.
pub fn wait_until(mut ready: impl FnMut() -> bool, what: &str) {
    let start = Instant::now();
    while !ready() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
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
