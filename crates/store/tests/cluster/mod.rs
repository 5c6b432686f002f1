//! A real Redis Cluster for the tests: 6 `redis-server --cluster-enabled yes` processes on free
//! loopback ports (3 masters, a replica each), each in its own directory with an AOF fsynced on
//! every write, stopped when dropped.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a node may be unreachable before the cluster fails it over.
pub const NODE_TIMEOUT_MS: u64 = 1000;

/// True if `redis-server` and `redis-cli` are installed; if not, the test fails unless
/// `NEARDUP_SKIP_REDIS=1` says to skip the Redis tests on purpose (then it says it skipped).
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

/// Waits until `ready` (checked every 50 ms), failing the test after 30 s.
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

/// A free loopback port whose cluster bus port (10000 above it, so below 55536) is free too.
fn free_port() -> u16 {
    loop {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        if port < 55536 && TcpListener::bind(("127.0.0.1", port + 10000)).is_ok() {
            return port;
        }
    }
}

/// One `redis-server` in its own directory, killed when dropped.
pub struct Node {
    child: Option<Child>,
    /// Its port on 127.0.0.1.
    pub port: u16,
    dir: PathBuf,
    cluster: bool,
}

impl Node {
    /// Starts a server (a cluster node if `cluster`) with an AOF fsynced on every write, in
    /// `dir`, and waits for PING.
    pub fn start(dir: &Path, cluster: bool) -> Node {
        std::fs::create_dir_all(dir).unwrap();
        let mut node = Node {
            child: None,
            port: free_port(),
            dir: dir.to_path_buf(),
            cluster,
        };
        node.spawn();
        node
    }

    fn spawn(&mut self) {
        let mut command = Command::new("redis-server");
        command
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args([
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ])
            .arg("--dir")
            .arg(&self.dir);
        if self.cluster {
            command.args([
                "--cluster-enabled",
                "yes",
                "--cluster-config-file",
                "nodes.conf",
                "--cluster-node-timeout",
                &NODE_TIMEOUT_MS.to_string(),
            ]);
        }
        let child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        self.child = Some(child);
        wait_until(|| self.cli(&["PING"]).trim() == "PONG", "redis PING");
    }

    /// SIGKILL, now (its directory stays).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port from its directory (a cluster node rejoins the
    /// cluster, as a replica if its slots were taken over meanwhile).
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Sends `kill -SIGNAL` to it (`STOP`, `CONT`).
    pub fn signal(&self, name: &str) {
        let pid = self.child.as_ref().expect("the node runs").id();
        let status = Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name} {pid}");
    }

    /// True while it runs.
    pub fn alive(&self) -> bool {
        self.child.is_some()
    }

    /// `redis-cli -p PORT ARGS`, its output.
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

    /// How many keys it holds besides block keys: record bodies and ordering keys.
    pub fn keys_but_blocks(&self) -> u64 {
        self.keys() - self.block_keys()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A Redis Cluster of 3 masters with a replica each, its directories removed when dropped.
pub struct Cluster {
    /// Its 6 nodes (the first 3 masters when created).
    pub nodes: Vec<Node>,
    _dir: tempfile::TempDir,
}

impl Cluster {
    /// Starts 6 nodes, creates the cluster (`redis-cli --cluster create ... --cluster-replicas
    /// 1`) and waits until every node says `cluster_state:ok` and every replica is in sync.
    pub fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let nodes: Vec<Node> = (0..6)
            .map(|i| Node::start(&dir.path().join(format!("node-{i}")), true))
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
        let cluster = Cluster { nodes, _dir: dir };
        cluster.wait_healthy();
        cluster
    }

    /// Waits until every running node says `cluster_state:ok`, sees 3 masters, and every
    /// replica's link to its master is up.
    pub fn wait_healthy(&self) {
        wait_until(
            || {
                let live: Vec<&Node> = self.nodes.iter().filter(|n| n.alive()).collect();
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
    pub fn masters(&self) -> Vec<&Node> {
        self.nodes
            .iter()
            .filter(|n| n.alive() && n.info("replication", "role") == "master")
            .collect()
    }

    /// Index in [`Cluster::nodes`] of the master serving `key`'s slot (as a running node sees
    /// the cluster).
    pub fn master_of(&self, key: &str) -> usize {
        let asked = self.nodes.iter().find(|n| n.alive()).expect("a node runs");
        let slot: u16 = asked
            .cli(&["CLUSTER", "KEYSLOT", key])
            .trim()
            .parse()
            .unwrap();
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
        self.nodes.iter().position(|n| n.port == port).unwrap()
    }

    /// Index in [`Cluster::nodes`] of the replica of the node at `master`.
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
