//! Fault suite, Redis (issue 12): real `redis-server` processes on free loopback ports under
//! real `neardup serve` processes. Redis stalled (SIGSTOP/SIGCONT), killed, restarted empty,
//! restarted from an older snapshot; kill -9 mid-load under `appendfsync always`; strict
//! durability. For each: every request answered within a stated time, 503 with `Retry-After`
//! and a JSON error while Redis is unavailable, `/healthz` truthful, recovery without a
//! restart, SIGTERM drained.

mod service;

use std::time::Duration;

use neardup_testkit::{redis_available, text, Redis};
use serde_json::json;
use service::{
    acknowledged_under_load, assert_all_stored, assert_unavailable, send, wait_healthy, Server,
};

/// The store timeout the servers run with (seconds).
const STORE_TIMEOUT: &str = "1";
/// Every answer while Redis is unavailable comes within twice the store timeout (a call of its
/// own, or the probe it makes, after one in progress), with room for a loaded machine.
const WITHIN: Duration = Duration::from_millis(3500);

fn doc(id: &str, seed: u64) -> Vec<u8> {
    json!({ "id": id, "text": text(seed) })
        .to_string()
        .into_bytes()
}

fn checked(text: String) -> Vec<u8> {
    json!({ "text": text }).to_string().into_bytes()
}

/// The verdict of checking `text(seed)` on the server at `base`.
fn verdict(base: &str, seed: u64) -> String {
    let reply = send(
        "POST",
        &format!("{base}/v1/check"),
        &checked(text(seed)),
        None,
    )
    .unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body["verdict"].as_str().unwrap().to_string()
}

/// `(documents, indexed)` of the server at `base`.
fn counts(base: &str) -> (u64, u64) {
    let reply = send("GET", &format!("{base}/v1/stats"), b"", None).unwrap();
    assert_eq!(reply.status, 200, "{reply:?}");
    let count = |name: &str| reply.body[name].as_u64().unwrap();
    (count("documents"), count("indexed"))
}

/// Every route that needs the store answers 503 in time, and so does `/healthz`.
fn assert_all_unavailable(server: &Server) {
    for (method, path, body) in [
        ("POST", "/v1/documents", doc("during", 100)),
        ("POST", "/v1/check", checked(text(100))),
        ("GET", "/v1/documents/a", Vec::new()),
        ("DELETE", "/v1/documents/a", Vec::new()),
        ("GET", "/v1/stats", Vec::new()),
        ("GET", "/healthz", Vec::new()),
    ] {
        let reply = send(method, &server.url(path), &body, None).unwrap();
        assert_unavailable(&reply, WITHIN);
    }
}

#[test]
fn a_stalled_redis_is_503_in_time_recovers_on_sigcont_and_sigterm_drains() {
    let Some(redis) =
        Redis::temporary("a_stalled_redis_is_503_in_time_recovers_on_sigcont_and_sigterm_drains")
    else {
        return;
    };
    let mut server = Server::start(&redis.url(), &["--store-timeout", STORE_TIMEOUT]);
    let documents = server.url("/v1/documents");
    let reply = send("POST", &documents, &doc("a", 1), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");

    redis.signal("STOP");
    // The first request waits out the store timeout; the next are answered at once.
    assert_unavailable(
        &send("POST", &documents, &doc("b", 2), None).unwrap(),
        WITHIN,
    );
    assert_all_unavailable(&server);

    redis.signal("CONT");
    let took = wait_healthy(&server.url("/healthz"));
    assert!(took < Duration::from_secs(5), "ready again after {took:?}");
    let reply = send("POST", &documents, &doc("b", 2), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");
    assert_eq!(verdict(&server.base, 1), "duplicate");

    // SIGTERM while a store call is blocked: the call ends at the store timeout, its request
    // is answered (503), and the server exits.
    redis.signal("STOP");
    let in_flight = std::thread::spawn(move || send("POST", &documents, &doc("c", 3), None));
    std::thread::sleep(Duration::from_millis(300));
    server.terminate();
    let reply = in_flight.join().unwrap();
    let reply = reply.expect("the request in flight at SIGTERM is answered, not dropped");
    assert_unavailable(&reply, WITHIN);
    let status = server.wait_exit(Duration::from_secs(5));
    redis.signal("CONT");
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}

#[test]
fn redis_killed_restarted_empty_and_from_an_older_snapshot() {
    if !redis_available("redis_killed_restarted_empty_and_from_an_older_snapshot") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start(dir.path());
    let mut server = Server::start(&redis.url(), &["--store-timeout", STORE_TIMEOUT]);
    let documents = server.url("/v1/documents");
    let healthz = server.url("/healthz");
    let insert = |id: &str, seed: u64| {
        let reply = send("POST", &documents, &doc(id, seed), None).unwrap();
        assert_eq!(reply.status, 201, "{id}: {reply:?}");
    };
    insert("a", 1);
    assert_eq!(redis.cli(&["SAVE"]).trim(), "OK");
    let (snapshot, older) = (dir.path().join("dump.rdb"), dir.path().join("older.rdb"));
    std::fs::rename(&snapshot, &older).unwrap();
    insert("b", 2);

    // Killed: unavailable, in time.
    redis.kill();
    assert_all_unavailable(&server);

    // Restarted empty (no persistence): the server reloads what Redis holds (nothing), writes
    // its metadata again, and serves; what Redis lost is gone.
    redis.restart();
    let took = wait_healthy(&healthz);
    assert!(took < Duration::from_secs(5), "ready again after {took:?}");
    insert("c", 3);
    assert_eq!(verdict(&server.base, 2), "unique", "b was lost with Redis");
    assert_eq!(counts(&server.base), (1, 1));

    // Restarted from an older snapshot (holding a only), and another server writes d before
    // this one looks: its log is not the one this server read, even though it now ends later.
    redis.kill();
    std::fs::copy(&older, &snapshot).unwrap();
    redis.restart();
    let other = Server::start(&redis.url(), &[]);
    let reply = send("POST", &other.url("/v1/documents"), &doc("d", 4), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");
    wait_healthy(&healthz);
    assert_eq!(
        verdict(&server.base, 1),
        "duplicate",
        "a is in the snapshot"
    );
    assert_eq!(verdict(&server.base, 3), "unique", "c is not");
    assert_eq!(verdict(&server.base, 4), "duplicate", "d was written since");
    assert_eq!(counts(&server.base), (2, 2));
    insert("e", 5);
    assert_eq!(counts(&other.base), (3, 3));

    server.terminate();
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}

#[test]
fn strict_durability_and_kill_9_mid_load_under_appendfsync_always() {
    if !redis_available("strict_durability_and_kill_9_mid_load_under_appendfsync_always") {
        return;
    }
    // Strict mode refuses a Redis that does not fsync every write, and says why.
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = Redis::start(plain_dir.path());
    let refused = Server::try_start(&plain.url(), &["--durability", "strict"])
        .err()
        .expect("strict durability refused a Redis without an AOF");
    assert!(
        refused.contains("strict durability refused") && refused.contains("appendonly=no"),
        "{refused}"
    );
    // Without it, the server says what an acknowledgement means.
    let lax = Server::start(&plain.url(), &[]);
    assert!(
        lax.banner.contains("a Redis restart loses every write"),
        "{}",
        lax.banner
    );

    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start_with(
        dir.path(),
        &["--appendonly", "yes", "--appendfsync", "always"],
    );
    let args = ["--durability", "strict", "--store-timeout", STORE_TIMEOUT];
    let mut server = Server::start(&redis.url(), &args);
    assert!(
        server.banner.contains("appendfsync=always"),
        "{}",
        server.banner
    );
    let base = server.base.clone();
    // kill -9 of the server and of Redis, mid-load.
    let acknowledged = acknowledged_under_load(&base, "k", Duration::from_millis(700), || {
        server.kill();
        redis.kill();
    });
    redis.restart();
    let server = Server::start(&redis.url(), &args);
    assert_all_stored(
        &server.base,
        &acknowledged,
        "kill -9 under appendfsync always",
    );
}

/// While Redis is down, every request is a 503 whose error says "unavailable" once at most, and the
/// server logs the first and then at most one line a period, not one a request.
#[test]
fn a_redis_down_is_logged_once_a_period_not_once_a_request() {
    let Some(mut redis) =
        Redis::temporary("a_redis_down_is_logged_once_a_period_not_once_a_request")
    else {
        return;
    };
    let server = Server::start(&redis.url(), &["--store-timeout", STORE_TIMEOUT]);
    redis.kill();
    for _ in 0..300 {
        let reply = send("GET", &server.url("/v1/stats"), b"", None).unwrap();
        assert_unavailable(&reply, WITHIN);
        let error = reply.body["error"].as_str().unwrap();
        assert!(error.matches("unavailable").count() <= 1, "{error}");
    }
    std::thread::sleep(Duration::from_millis(200));
    let stderr = server.stderr();
    let warnings = stderr.lines().filter(|l| l.contains("WARN")).count();
    assert!(
        warnings <= 5,
        "{warnings} warnings for 300 requests:\n{stderr}"
    );
}
