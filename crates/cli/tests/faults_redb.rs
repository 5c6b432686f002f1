//! Fault suite, embedded store (issue 12): a real `neardup serve` on a redb database in a small
//! tmpfs this test mounts (it runs as root, as `scripts/test` does in CI), filled up and freed;
//! and kill -9 mid-load. For each fault: every request answered within a stated time, 503 with
//! `Retry-After` and a JSON error while the store cannot write, `/healthz` truthful, recovery
//! without a restart, SIGTERM drained; no acknowledged write lost (redb fsyncs every commit).

mod files;
mod service;

use std::time::Duration;

use files::{fill, Tmpfs};
use neardup_testkit::text;
use serde_json::json;
use service::{
    acknowledged_under_load, assert_all_stored, assert_unavailable, post, send, wait_healthy,
    Server,
};

/// The store timeout the servers run with (seconds).
const STORE_TIMEOUT: &str = "1";
/// Every answer while the store is unavailable comes within twice the store timeout (a call of
/// its own, or the probe it makes, after one in progress), with room for a loaded machine.
const WITHIN: Duration = Duration::from_millis(3500);

/// A document of about 40 KB that compresses poorly, different for every `seed`.
fn big_doc(id: &str, seed: u64) -> Vec<u8> {
    let text: Vec<String> = (0..80).map(|i| text(seed * 1000 + i)).collect();
    json!({ "id": id, "text": text.join(" ") })
        .to_string()
        .into_bytes()
}

#[test]
fn a_full_disk_is_503_until_space_is_freed_then_writes_resume_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let mount = Tmpfs::mount(&dir.path().join("small"), "6m");
    let db = mount.0.join("db");
    // Declared after the mount: dropped (killed) before it is unmounted.
    let mut server = Server::start(
        db.to_str().unwrap(),
        &["--store-timeout", STORE_TIMEOUT, "--max-connections", "64"],
    );
    let documents = server.url("/v1/documents");
    let (healthz, stats) = (server.url("/healthz"), server.url("/v1/stats"));
    let reply = send("POST", &documents, &big_doc("before", 1), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");

    let filler = mount.0.join("filler");
    fill(&filler);
    let mut failed = None;
    for n in 0..300 {
        let reply = send(
            "POST",
            &documents,
            &big_doc(&format!("full-{n}"), n + 2),
            None,
        )
        .unwrap();
        match reply.status {
            201 => continue,
            _ => {
                failed = Some(reply);
                break;
            }
        }
    }
    let failed = failed.expect("300 inserts of 40 KB fitted in a full 6 MB file system");
    assert_unavailable(&failed, WITHIN);
    assert!(
        failed.body["error"]
            .as_str()
            .is_some_and(|e| e.contains("No space left")),
        "{failed:?}"
    );
    // The truth: not ready, and every request answered in time, while the disk is full.
    assert_unavailable(&send("GET", &healthz, b"", None).unwrap(), WITHIN);
    for _ in 0..3 {
        let reply = send("POST", &documents, &big_doc("while-full", 999), None).unwrap();
        assert_unavailable(&reply, WITHIN);
        let reply = send("GET", &stats, b"", None).unwrap();
        assert!(reply.status == 200 || reply.status == 503, "{reply:?}");
        assert!(reply.elapsed < WITHIN, "{reply:?}");
    }

    // Space freed: the database is reopened and writes resume, no restart.
    std::fs::remove_file(&filler).unwrap();
    let took = wait_healthy(&healthz);
    assert!(took < Duration::from_secs(5), "ready again after {took:?}");
    let reply = send("POST", &documents, &big_doc("after", 1000), None).unwrap();
    assert_eq!(reply.status, 201, "{reply:?}");
    for id in ["before", "after"] {
        let reply = send(
            "GET",
            &server.url(&format!("/v1/documents/{id}")),
            b"",
            None,
        )
        .unwrap();
        assert_eq!(reply.status, 200, "{id}: {reply:?}");
    }

    // SIGTERM: drained and gone.
    server.terminate();
    let status = server.wait_exit(Duration::from_secs(5));
    assert!(status.is_some_and(|s| s.success()), "{status:?}");
}

/// kill -9 mid-load, three times at different moments: every insert answered 201 is there after
/// a restart (redb fsyncs each group commit before answering).
#[test]
fn acknowledged_inserts_survive_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let mut acknowledged = Vec::new();
    for round in 0..3u64 {
        let mut server = Server::start(db.to_str().unwrap(), &[]);
        let base = server.base.clone();
        let load_for = Duration::from_millis(400 + 250 * round);
        acknowledged.extend(acknowledged_under_load(
            &base,
            &format!("k{round}"),
            load_for,
            || server.kill(),
        ));
        let server = Server::start(db.to_str().unwrap(), &[]);
        assert_all_stored(&server.base, &acknowledged, &format!("round {round}"));
    }
}

/// kill -9 mid-load of servers checking against the block keys their redb file holds
/// (`--index-in store`), twice: after a restart every insert answered 201 is stored and a check
/// of its text finds it through those keys (an insert and its entries commit together).
#[test]
fn acknowledged_inserts_keep_their_block_entries_through_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let args = ["--index-in", "store"];
    let mut acknowledged = Vec::new();
    for round in 0..2u64 {
        let mut server = Server::start(db.to_str().unwrap(), &args);
        let base = server.base.clone();
        let prefix = format!("s{round}");
        let load_for = Duration::from_millis(400 + 300 * round);
        acknowledged.extend(acknowledged_under_load(&base, &prefix, load_for, || {
            server.kill()
        }));
        let server = Server::start(db.to_str().unwrap(), &args);
        assert_all_stored(&server.base, &acknowledged, &format!("round {round}"));
        for id in &acknowledged {
            // `PREFIX-THREAD-N`, written with the text of the seed `acknowledged_under_load` uses.
            let parts: Vec<&str> = id.split('-').collect();
            let (t, n): (u64, u64) = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
            let seed = (parts[0].len() as u64) << 40 | t << 32 | n;
            let (status, reply) = post(&server.url("/v1/check"), &json!({ "text": text(seed) }));
            assert_eq!(status, 200, "{reply}");
            // Each round writes the same texts: the copy of an earlier round is found too.
            let found = reply["matches"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| (&m["id"], &m["kind"]) == (&json!(id), &json!("exact")));
            assert!(found, "round {round}: {id} not found: {reply}");
        }
    }
}
