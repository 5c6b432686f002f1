//! Several `neardup serve` processes sharing one database in Redis: one server, and a 3-node
//! Redis Cluster. Real `redis-server` processes on free loopback ports.

mod service;

use std::sync::{Arc, Barrier};

use neardup_testkit::{redis_available, text, Redis, RedisCluster};
use serde_json::json;
use service::{call, post, Server};

/// Two servers on one database: each sees the other's inserts, and racing near-identical
/// documents across both yields exactly one unique.
fn two_servers_share(db: &str) {
    let a = Server::start(db, &[]);
    let b = Server::start(db, &[]);
    let (status, reply) = post(
        &a.url("/v1/documents"),
        &json!({ "id": "x", "text": text(1) }),
    );
    assert_eq!(status, 201, "{reply}");
    let (_, reply) = post(&b.url("/v1/check"), &json!({ "text": text(1) }));
    assert_eq!(reply["verdict"], "duplicate", "{reply}");
    assert_eq!(reply["matches"][0]["id"], "x");
    let (status, record) = call("GET", &b.url("/v1/documents/x"), b"", None);
    assert_eq!(status, 200, "{record}");
    let (status, _) = call("DELETE", &b.url("/v1/documents/x"), b"", None);
    assert_eq!(status, 200);
    let (_, reply) = post(&a.url("/v1/check"), &json!({ "text": text(1) }));
    assert_eq!(
        reply["verdict"], "unique",
        "a did not see b's delete: {reply}"
    );

    let threads = 12;
    let barrier = Arc::new(Barrier::new(threads));
    let urls = [a.url("/v1/documents"), b.url("/v1/documents")];
    let verdicts: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (barrier, url) = (Arc::clone(&barrier), urls[i % 2].clone());
                scope.spawn(move || {
                    let body = json!({ "id": format!("r{i}"), "text": format!("{}{}", " ".repeat(i), text(2)) });
                    barrier.wait();
                    let (_, reply) = post(&url, &body);
                    reply["verdict"].as_str().unwrap_or("?").to_string()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(
        verdicts.iter().filter(|v| *v == "unique").count(),
        1,
        "{verdicts:?}"
    );
    // A third server opened later loads everything.
    let c = Server::start(db, &[]);
    let (_, stats) = call("GET", &c.url("/v1/stats"), b"", None);
    assert_eq!(stats["documents"], 1, "{stats}");
    assert_eq!(stats["indexed"], 1, "{stats}");
}

#[test]
fn servers_share_one_redis() {
    let Some(redis) = Redis::temporary("servers_share_one_redis") else {
        return;
    };
    two_servers_share(&redis.url());
}

#[test]
fn servers_share_a_redis_cluster() {
    if !redis_available("servers_share_a_redis_cluster") {
        return;
    }
    let cluster = RedisCluster::start();
    two_servers_share(&cluster.url("news"));
}

/// Redis loses its data under a running server (FLUSHALL: what a restart without persistence
/// leaves): the next insert is answered, not retried for ever, and the server goes on with
/// what Redis holds now (its database metadata written again).
#[test]
fn a_redis_that_lost_its_data_is_reloaded_without_a_restart() {
    let Some(redis) = Redis::temporary("a_redis_that_lost_its_data_is_reloaded_without_a_restart")
    else {
        return;
    };
    let server = Server::start(&redis.url(), &[]);
    let (status, reply) = post(
        &server.url("/v1/documents"),
        &json!({ "id": "before", "text": text(1) }),
    );
    assert_eq!(status, 201, "{reply}");
    assert_eq!(redis.cli(&["FLUSHALL"]).trim(), "OK");
    let started = std::time::Instant::now();
    let (status, reply) = post(
        &server.url("/v1/documents"),
        &json!({ "id": "after", "text": text(2) }),
    );
    assert_eq!(status, 201, "{reply}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let (_, stats) = call("GET", &server.url("/v1/stats"), b"", None);
    assert_eq!(
        (stats["documents"].as_u64(), stats["indexed"].as_u64()),
        (Some(1), Some(1)),
        "{stats}"
    );
    let (_, reply) = post(&server.url("/v1/check"), &json!({ "text": text(1) }));
    assert_eq!(
        reply["verdict"], "unique",
        "what Redis lost is gone: {reply}"
    );
}
