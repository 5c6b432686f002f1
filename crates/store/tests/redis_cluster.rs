//! One database over a real Redis Cluster (3 masters, a replica each): its bodies spread over
//! every master, check-and-insert atomic across handles, a master killed mid-load without
//! losing an acknowledged insert, and a database of the one-tag layout moved at open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use neardup_dedup::Kind;
use neardup_store::{
    open_db, IndexIn, InsertMode, MemoryStore, Meta, NearDupDb, NewDocument, OpenOptions, Store,
    Verdict, DEFAULT_STORE_TIMEOUT, EVICTION_CHECK_INTERVAL,
};
use neardup_testkit::{redis_available, wait_until, RedisCluster, CLUSTER_NODE_TIMEOUT_MS};

fn doc(id: &str, text: &str) -> NewDocument {
    NewDocument {
        id: Some(id.into()),
        text: text.into(),
        ..NewDocument::default()
    }
}

/// A text of 60 words drawn by `seed` from a vocabulary of 400: texts of different seeds share
/// few shingles, so each is unique.
fn text(seed: u64) -> String {
    let mut state = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..60)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            format!("word{}", (state >> 33) % 400)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text(seed)` with its 30th word changed: a near duplicate of it.
fn edited(seed: u64) -> String {
    let mut words: Vec<String> = text(seed).split(' ').map(str::to_string).collect();
    words[30] = "changed".into();
    words.join(" ")
}

/// Options answering from the index `index_in` says.
fn answering_from(index_in: IndexIn) -> OpenOptions {
    OpenOptions {
        index_in,
        ..OpenOptions::default()
    }
}

#[test]
fn a_database_spreads_over_every_master_and_reads_back() {
    spreads_and_reads_back(
        "a_database_spreads_over_every_master_and_reads_back",
        IndexIn::Local,
    );
}

#[test]
fn a_database_answering_from_the_cluster_s_index_spreads_and_reads_back() {
    spreads_and_reads_back(
        "a_database_answering_from_the_cluster_s_index_spreads_and_reads_back",
        IndexIn::Store,
    );
}

fn spreads_and_reads_back(test: &str, index_in: IndexIn) {
    if !redis_available(test) {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("spread");
    let db = open_db(&url, answering_from(index_in)).unwrap();
    let n = 300u64;
    for i in 0..n {
        assert!(
            db.insert(&doc(&format!("d{i}"), &text(i)))
                .unwrap()
                .inserted
        );
    }
    let masters = cluster.masters();
    let keys: Vec<u64> = masters.iter().map(|m| m.keys_but_blocks()).collect();
    // + meta, log, last, seq, slots, ids, and the plan of the block keys
    assert_eq!(keys.iter().sum::<u64>(), n + 7, "{keys:?}");
    // The block keys of the SimHash index, each its own hash tag, spread too.
    let blocks: Vec<u64> = masters.iter().map(|m| m.block_keys()).collect();
    assert!(
        blocks.iter().all(|&b| b > 0),
        "every master holds block keys: {blocks:?}"
    );
    for held in &keys {
        assert!(
            *held >= n / 5,
            "every master holds a share of the bodies: {keys:?}"
        );
    }
    let other = open_db(&url, OpenOptions::default()).unwrap();
    assert_eq!(other.indexed(), n as usize);
    for i in 0..n {
        let id = format!("d{i}");
        assert_eq!(other.get(&id).unwrap().unwrap().id, id);
    }
    let near = other.check(&doc("x", &edited(7))).unwrap();
    let duplicate = near.verdict.duplicate().expect("a near duplicate of d7");
    assert_eq!(
        (duplicate.duplicate_of.as_str(), duplicate.kind),
        ("d7", Kind::Near)
    );
    // A delete removes the document from every handle, and its body from its node.
    assert_eq!(other.delete("d7").unwrap().unwrap().id, "d7");
    assert_eq!(
        db.check(&doc("x", &edited(7))).unwrap().verdict,
        Verdict::Unique
    );
    let keys_after: u64 = cluster.masters().iter().map(|m| m.keys_but_blocks()).sum();
    assert_eq!(keys_after, n + 6);
}

#[test]
fn two_handles_racing_one_near_duplicate_text_insert_it_once() {
    race(
        "two_handles_racing_one_near_duplicate_text_insert_it_once",
        IndexIn::Local,
    );
}

#[test]
fn two_handles_answering_from_the_cluster_s_index_insert_a_raced_text_once() {
    race(
        "two_handles_answering_from_the_cluster_s_index_insert_a_raced_text_once",
        IndexIn::Store,
    );
}

fn race(test: &str, index_in: IndexIn) {
    if !redis_available(test) {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("race");
    let handles: Vec<Arc<NearDupDb>> = (0..2)
        .map(|_| Arc::new(open_db(&url, answering_from(index_in)).unwrap()))
        .collect();
    for round in 0..30u64 {
        let start = Arc::new(Barrier::new(2));
        let racers: Vec<_> = handles
            .iter()
            .enumerate()
            .map(|(side, db)| {
                let (db, start) = (Arc::clone(db), Arc::clone(&start));
                std::thread::spawn(move || {
                    let body = if side == 0 {
                        text(round)
                    } else {
                        edited(round)
                    };
                    start.wait();
                    db.check_and_insert(
                        &doc(&format!("r{round}-{side}"), &body),
                        InsertMode::IfUnique,
                    )
                    .unwrap()
                })
            })
            .collect();
        let outcomes: Vec<_> = racers.into_iter().map(|r| r.join().unwrap()).collect();
        let unique: Vec<_> = outcomes
            .iter()
            .filter(|o| o.verdict == Verdict::Unique)
            .collect();
        assert_eq!(unique.len(), 1, "round {round}: {outcomes:?}");
        assert!(unique[0].inserted);
        let loser = outcomes
            .iter()
            .find(|o| o.verdict != Verdict::Unique)
            .unwrap();
        assert!(!loser.inserted);
        assert_eq!(
            loser.verdict.duplicate().unwrap().duplicate_of,
            unique[0].id
        );
    }
    assert_eq!(handles[0].stats().unwrap().documents, 30);
    // Every refused insert deleted its body: 30 bodies and the 7 ordering keys, nothing else.
    let keys: u64 = cluster.masters().iter().map(|m| m.keys_but_blocks()).sum();
    assert_eq!(keys, 30 + 7);
}

/// What the writers of the failover test saw.
#[derive(Default)]
struct Load {
    acknowledged: Vec<String>,
    errors: usize,
    slowest_error: Duration,
}

/// Writers inserting documents `PREFIX-THREAD-N` from 3 threads into `db`, until stopped; an
/// error must say the store is unavailable.
struct Writers {
    seen: Arc<Mutex<Load>>,
    stop: Arc<AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Writers {
    fn start(db: &Arc<NearDupDb>, prefix: u64) -> Writers {
        let (seen, stop) = (
            Arc::new(Mutex::new(Load::default())),
            Arc::new(AtomicBool::new(false)),
        );
        let threads = (0..3u64)
            .map(|t| {
                let (db, stop, seen) = (db.clone(), stop.clone(), seen.clone());
                std::thread::spawn(move || {
                    for n in 0u64.. {
                        if stop.load(Ordering::Relaxed) {
                            break;
                        }
                        let id = format!("load{prefix}-{t}-{n}");
                        let started = Instant::now();
                        let result = db.insert(&doc(&id, &text(prefix << 40 | t << 32 | n)));
                        let took = started.elapsed();
                        let mut seen = seen.lock().unwrap();
                        match result {
                            Ok(outcome) => {
                                assert!(outcome.inserted);
                                seen.acknowledged.push(id);
                            }
                            Err(error) => {
                                assert!(error.is_unavailable(), "{id}: {error}");
                                seen.errors += 1;
                                seen.slowest_error = seen.slowest_error.max(took);
                                drop(seen);
                                std::thread::sleep(Duration::from_millis(20));
                            }
                        }
                    }
                })
            })
            .collect();
        Writers {
            seen,
            stop,
            threads,
        }
    }

    /// Stops them; what they saw.
    fn stop(self) -> Load {
        self.stop.store(true, Ordering::Relaxed);
        self.threads.into_iter().for_each(|w| w.join().unwrap());
        std::mem::take(&mut *self.seen.lock().unwrap())
    }
}

/// Every id in `ids` is readable through each of `dbs`.
fn all_readable(ids: &[String], dbs: &[&NearDupDb]) {
    for id in ids {
        for db in dbs {
            assert!(db.get(id).unwrap().is_some(), "acknowledged {id} lost");
        }
    }
}

#[test]
fn a_master_killed_mid_load_fails_over_without_losing_an_acknowledged_insert() {
    fails_over(
        "a_master_killed_mid_load_fails_over_without_losing_an_acknowledged_insert",
        IndexIn::Local,
    );
}

/// The same with every handle answering from the index the cluster holds: its block keys
/// spread over the masters, the killed one's among them; after the heal every acknowledged
/// document is found as the near duplicate of its edited text.
#[test]
fn a_master_killed_under_the_cluster_s_index_fails_over_and_still_finds_every_document() {
    fails_over(
        "a_master_killed_under_the_cluster_s_index_fails_over_and_still_finds_every_document",
        IndexIn::Store,
    );
}

fn fails_over(test: &str, index_in: IndexIn) {
    if !redis_available(test) {
        return;
    }
    let mut cluster = RedisCluster::start();
    let url = cluster.url("failover");
    let strict = OpenOptions {
        strict_durability: true,
        ..answering_from(index_in)
    };
    let db = Arc::new(open_db(&url, strict.clone()).unwrap());
    assert!(
        db.durability().meaning.contains("failover"),
        "{:?}",
        db.durability()
    );
    let writers = Writers::start(&db, 1);
    std::thread::sleep(Duration::from_millis(1000));
    // The master of the ordering node: every insert goes through it. Its replica falls behind
    // first (stopped for half the node timeout): what the master acknowledges meanwhile is on
    // the master only, unless the acknowledgement waited for the replica.
    let victim = cluster.master_of("neardup:{failover}:log");
    let replica = cluster.replica_of(victim);
    cluster.nodes[replica].signal("STOP");
    std::thread::sleep(Duration::from_millis(CLUSTER_NODE_TIMEOUT_MS / 2));
    cluster.nodes[victim].kill();
    cluster.nodes[replica].signal("CONT");
    wait_until(
        || cluster.masters().len() == 3,
        "a replica takes over the killed master's slots",
    );
    // The killed node still down (and named in the URL), past a check of the nodes' settings,
    // strict inserts failing meanwhile (the ordering master has no replica): what was
    // acknowledged is readable, through this handle and a new one.
    std::thread::sleep(EVICTION_CHECK_INTERVAL + Duration::from_millis(500));
    let so_far = writers.seen.lock().unwrap().acknowledged.clone();
    let new = open_db(&url, answering_from(index_in)).unwrap();
    all_readable(&so_far, &[&db, &new]);
    let before = writers.stop();
    eprintln!(
        "until the failover: acknowledged {}, {} errors, the slowest after {:?}",
        before.acknowledged.len(),
        before.errors,
        before.slowest_error
    );
    assert!(before.errors > 0, "the load met the failover");
    let bound = DEFAULT_STORE_TIMEOUT + Duration::from_millis(500);
    assert!(
        before.slowest_error <= bound,
        "an error came after {:?}",
        before.slowest_error
    );
    all_readable(&before.acknowledged, &[&db, &new]);
    // The killed node comes back as a replica: strict inserts are acknowledged again.
    cluster.nodes[victim].restart();
    cluster.wait_healthy();
    let writers = Writers::start(&db, 2);
    wait_until(
        || writers.seen.lock().unwrap().acknowledged.len() >= 20,
        "inserts acknowledged after the heal",
    );
    let after = writers.stop();
    let reopened = open_db(&url, strict).unwrap();
    all_readable(&before.acknowledged, &[&db, &reopened]);
    all_readable(&after.acknowledged, &[&db, &reopened]);
    let acknowledged = before.acknowledged.len() + after.acknowledged.len();
    assert!(reopened.stats().unwrap().documents >= acknowledged as u64);
    all_found(&before.acknowledged, &reopened);
    all_found(&after.acknowledged, &reopened);
}

/// Each document of `ids` (written by [`Writers`]: `loadP-T-N` holds `text(P << 40 | T << 32
/// | N)`) is what a check of its edited text finds.
fn all_found(ids: &[String], db: &NearDupDb) {
    for id in ids {
        let parts: Vec<u64> = id
            .trim_start_matches("load")
            .split('-')
            .map(|part| part.parse().unwrap())
            .collect();
        let seed = parts[0] << 40 | parts[1] << 32 | parts[2];
        let near = db.check(&doc("probe", &edited(seed))).unwrap();
        assert_eq!(
            near.verdict.duplicate().map(|d| d.duplicate_of.as_str()),
            Some(id.as_str()),
            "{id}: {near:?}"
        );
    }
}

/// The insert script of the layout before spreading (every key of a database under `{name}`).
const UNSPREAD_INSERT: &str = r"
local last = redis.call('GET', KEYS[1]) or '0-0'
if last ~= ARGV[1] then return {'conflict'} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'exists'} end
local slot = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[4], 'record', ARGV[3], 'slot', slot)
redis.call('HSET', KEYS[5], slot, ARGV[2])
local xid = redis.call('XADD', KEYS[2], '*', 'op', 'i', 'slot', slot, 'sim', ARGV[4], 'dig', ARGV[5])
redis.call('SET', KEYS[1], xid)
return {'ok', tostring(slot), xid}
";

/// Writes `n` documents into the database `name` of the cluster as the version before spreading
/// did: its records made by a database in memory, then stored by that version's script.
fn write_unspread(cluster: &RedisCluster, name: &str, n: u64) {
    let memory = MemoryStore::new("records");
    let made = NearDupDb::open(Box::new(memory.clone()), OpenOptions::default()).unwrap();
    let client = redis::cluster::ClusterClient::new(vec![cluster.nodes[0].url()]).unwrap();
    let mut conn = client.get_connection().unwrap();
    let key = |what: &str| format!("neardup:{{{name}}}:{what}");
    let meta = serde_json::to_string(&Meta::new(made.policy().clone())).unwrap();
    redis::cmd("SET")
        .arg(key("meta"))
        .arg(meta)
        .exec(&mut conn)
        .unwrap();
    let script = redis::Script::new(UNSPREAD_INSERT);
    let mut last = "0-0".to_string();
    for i in 0..n {
        let id = format!("old{i}");
        made.insert(&doc(&id, &text(i))).unwrap();
        let record = memory.get(&id).unwrap().unwrap();
        let entry = record.entry();
        let reply: Vec<String> = script
            .key(key("last"))
            .key(key("log"))
            .key(key("seq"))
            .key(key(&format!("doc:{id}")))
            .key(key("slots"))
            .arg(&last)
            .arg(&id)
            .arg(serde_json::to_string(&record).unwrap())
            .arg(format!("{:x}", entry.simhash))
            .arg(format!("{:x}", entry.digest))
            .invoke(&mut conn)
            .unwrap();
        assert_eq!(reply[0], "ok");
        last = reply[2].clone();
    }
}

#[test]
fn a_database_of_the_one_tag_layout_is_moved_at_open_without_losing_a_document() {
    if !redis_available(
        "a_database_of_the_one_tag_layout_is_moved_at_open_without_losing_a_document",
    ) {
        return;
    }
    let cluster = RedisCluster::start();
    let n = 120u64;
    write_unspread(&cluster, "old", n);
    let before: Vec<u64> = cluster
        .masters()
        .iter()
        .map(|m| m.keys_but_blocks())
        .collect();
    assert!(
        before.contains(&(n + 5)),
        "one master holds it all: {before:?}"
    );
    let db = open_db(&cluster.url("old"), OpenOptions::default()).unwrap();
    assert_eq!(db.indexed(), n as usize);
    for i in 0..n {
        let id = format!("old{i}");
        assert_eq!(db.get(&id).unwrap().unwrap().id, id);
    }
    // The stored texts moved too: a near duplicate is verified against one.
    let near = db.check(&doc("x", &edited(11))).unwrap();
    assert_eq!(near.verdict.duplicate().unwrap().duplicate_of, "old11");
    let after: Vec<u64> = cluster
        .masters()
        .iter()
        .map(|m| m.keys_but_blocks())
        .collect();
    assert_eq!(after.iter().sum::<u64>(), n + 7, "{after:?}"); // no old record left
    for held in &after {
        assert!(*held >= n / 5, "every master holds a share: {after:?}");
    }
    // Opening again finds nothing to move, and the database takes new documents.
    let again = open_db(&cluster.url("old"), OpenOptions::default()).unwrap();
    assert!(again.insert(&doc("new", &text(999))).unwrap().inserted);
    assert_eq!(db.stats().unwrap().documents, n + 1);
}
