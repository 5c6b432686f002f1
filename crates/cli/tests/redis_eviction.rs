//! A Redis that may evict keys (issue 19): refused at open and while serving unless allowed,
//! shown in `/healthz` and `/v1/stats` when allowed, keys found evicted reported; a full Redis
//! under `noeviction` refuses inserts with a JSON 507 and loses nothing acknowledged. Real
//! `redis-server` processes with an 8 MB `maxmemory`.

mod common;
mod service;

use std::time::{Duration, Instant};

use common::{assert_one_line_error, neardup};
use neardup_testkit::{redis_available, text, wait_until, Redis};
use serde_json::{json, Value};
use service::{call, send, Server};

const EIGHT_MB: [&str; 2] = ["--maxmemory", "8mb"];

fn lru(dir: &std::path::Path) -> Redis {
    Redis::start_with(
        dir,
        &[
            EIGHT_MB[0],
            EIGHT_MB[1],
            "--maxmemory-policy",
            "allkeys-lru",
        ],
    )
}

/// Inserts `text(n)` as `d-n` for n = 0, 1, ... until `stop` says so with the last answer;
/// returns the ids answered 201 and the last answer.
fn insert_until(
    server: &Server,
    mut stop: impl FnMut(u64, &service::Reply) -> bool,
) -> (Vec<String>, service::Reply) {
    let url = server.url("/v1/documents?insert=always");
    let mut stored = Vec::new();
    for n in 0u64.. {
        let id = format!("d-{n}");
        let body = json!({ "id": id, "text": text(n) }).to_string();
        let reply = send("POST", &url, body.as_bytes(), None).unwrap();
        if reply.status == 201 {
            stored.push(id);
        }
        if stop(n, &reply) {
            return (stored, reply);
        }
    }
    unreachable!()
}

fn healthz(server: &Server) -> service::Reply {
    send("GET", &server.url("/healthz"), b"", None).unwrap()
}

#[test]
fn an_evicting_redis_is_refused_unless_allowed_then_shown_and_its_losses_reported() {
    if !redis_available(
        "an_evicting_redis_is_refused_unless_allowed_then_shown_and_its_losses_reported",
    ) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let redis = lru(dir.path());
    let run = neardup(&["index", "stats", "--db", &redis.url()], b"");
    assert_one_line_error(&run, 1, "maxmemory-policy allkeys-lru");
    assert_eq!(run.stdout, "", "refused, yet printed stats");
    assert!(
        run.stderr
            .contains("CONFIG SET maxmemory-policy noeviction"),
        "{}",
        run.stderr
    );
    assert!(Server::try_start(&redis.url(), &[]).is_err());

    let server = Server::start(&redis.url(), &["--allow-eviction"]);
    let listening = Instant::now();
    assert!(server.banner.contains("WARNING"), "{}", server.banner);
    let reply = healthz(&server);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert_eq!(reply.body["eviction"], "allkeys-lru", "{reply:?}");
    assert!(
        reply.body["warning"].as_str().unwrap().contains("evict"),
        "{reply:?}"
    );
    let (_, stats) = call("GET", &server.url("/v1/stats"), b"", None);
    assert_eq!(stats["eviction"], "allkeys-lru", "{stats}");

    // Fill it: Redis evicts the least recently used keys, the metadata among the first (the
    // server never reads it after open, its checks included: its idle time grows from the
    // start). Once it is gone the server says so (within the eviction check interval), and no
    // check of an evicted document is answered "unique".
    let meta_key = "neardup:{neardup}:meta";
    let mut idle_seen = 0;
    insert_until(&server, |n, reply| {
        assert!(matches!(reply.status, 201 | 503), "{reply:?}");
        if n % 100 != 0 {
            return false;
        }
        let Ok(idle) = redis
            .cli(&["OBJECT", "IDLETIME", meta_key])
            .trim()
            .parse::<u64>()
        else {
            return true; // Evicted.
        };
        let serving = listening.elapsed().as_secs();
        assert!(
            idle + 2 >= serving,
            "the metadata read while serving: idle {idle} s after {serving} s"
        );
        idle_seen = idle;
        false
    });
    eprintln!(
        "metadata evicted after {:?}, idle {idle_seen} s",
        listening.elapsed()
    );
    wait_until(
        || healthz(&server).status == 503,
        "healthz 503 after the eviction",
    );
    let reply = healthz(&server);
    assert!(
        reply.body["error"].as_str().unwrap().contains("evicted"),
        "{reply:?}"
    );
    let check = json!({ "text": text(0) }).to_string();
    let reply = send("POST", &server.url("/v1/check"), check.as_bytes(), None).unwrap();
    assert_eq!(
        reply.status, 503,
        "an evicted document checked as {reply:?}"
    );
}

#[test]
fn a_policy_turned_evicting_while_serving_closes_the_service_until_fixed() {
    let Some(redis) =
        Redis::temporary("a_policy_turned_evicting_while_serving_closes_the_service_until_fixed")
    else {
        return;
    };
    let server = Server::start(&redis.url(), &[]);
    assert_eq!(healthz(&server).status, 200);
    for setting in [EIGHT_MB, ["maxmemory-policy", "allkeys-lfu"]] {
        let name = setting[0].trim_start_matches("--");
        assert_eq!(redis.cli(&["CONFIG", "SET", name, setting[1]]).trim(), "OK");
    }
    let started = Instant::now();
    wait_until(
        || healthz(&server).status == 503,
        "healthz 503 after CONFIG SET",
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    let reply = healthz(&server);
    assert!(
        reply.body["error"]
            .as_str()
            .unwrap()
            .contains("allkeys-lfu"),
        "{reply:?}"
    );
    let body = json!({ "id": "x", "text": text(1) }).to_string();
    let reply = send("POST", &server.url("/v1/documents"), body.as_bytes(), None).unwrap();
    assert_eq!(reply.status, 503, "{reply:?}");
    assert_eq!(
        redis
            .cli(&["CONFIG", "SET", "maxmemory-policy", "noeviction"])
            .trim(),
        "OK"
    );
    wait_until(
        || healthz(&server).status == 200,
        "healthz 200 after the fix",
    );
    let reply = send("POST", &server.url("/v1/documents"), body.as_bytes(), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");
}

#[test]
fn a_full_redis_refuses_inserts_with_507_and_loses_nothing_acknowledged() {
    if !redis_available("a_full_redis_refuses_inserts_with_507_and_loses_nothing_acknowledged") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let redis = Redis::start_with(
        dir.path(),
        &[EIGHT_MB[0], EIGHT_MB[1], "--maxmemory-policy", "noeviction"],
    );
    let server = Server::start(&redis.url(), &[]);
    let (stored, full) = insert_until(&server, |_, reply| reply.status != 201);
    assert_eq!(full.status, 507, "{full:?}");
    assert_eq!(full.content_type.as_deref(), Some("application/json"));
    assert!(
        full.body["error"].as_str().unwrap().contains("OOM"),
        "{full:?}"
    );
    assert!(stored.len() > 1000, "only {} stored", stored.len());
    for id in &stored {
        let (status, record): (u16, Value) = call(
            "GET",
            &server.url(&format!("/v1/documents/{id}")),
            b"",
            None,
        );
        assert_eq!(status, 200, "acknowledged {id} lost: {record}");
    }
    let (_, stats) = call("GET", &server.url("/v1/stats"), b"", None);
    assert_eq!(stats["documents"], json!(stored.len()), "{stats}");
    let reply = healthz(&server);
    assert_eq!(reply.status, 200, "reads still served: {reply:?}");
}
