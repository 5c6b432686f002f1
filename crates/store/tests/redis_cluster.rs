//! One database over a real Redis Cluster (3 masters, a replica each): its bodies and id claims
//! spread over every master, check-and-insert atomic across handles (an id stored once), a
//! master killed mid-load without losing an acknowledged insert, and databases of earlier
//! layouts (one tag; slot and id maps on the ordering node) moved at open.

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
    let keys: Vec<u64> = masters.iter().map(|m| m.keys_but_index()).collect();
    // A body and a claim a document; + meta, layout, log, last, seq, state, count, the plan
    // of the block keys, the readers' positions, and (past slot 256) the sweep's mark.
    let ordering_keys = ORDERING_KEYS + 1;
    assert_eq!(keys.iter().sum::<u64>(), 2 * n + ordering_keys, "{keys:?}");
    // The block keys of the SimHash index, each its own hash tag, spread too.
    let blocks: Vec<u64> = masters.iter().map(|m| m.block_keys()).collect();
    assert!(
        blocks.iter().all(|&b| b > 0),
        "every master holds block keys: {blocks:?}"
    );
    for held in &keys {
        assert!(
            *held >= n / 5,
            "every master holds a share of the bodies and claims: {keys:?}"
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
    // A delete removes the document from every handle, and its body and claim from their nodes.
    assert_eq!(other.delete("d7").unwrap().unwrap().id, "d7");
    assert_eq!(
        db.check(&doc("x", &edited(7))).unwrap().verdict,
        Verdict::Unique
    );
    let keys_after: u64 = cluster.masters().iter().map(|m| m.keys_but_index()).sum();
    assert_eq!(keys_after, 2 * (n - 1) + ordering_keys);
    // The id is free again.
    assert!(db.insert(&doc("d7", &text(7))).unwrap().inserted);
}

/// The keys of a database on its ordering node: meta, layout, log, last, seq, state, count, the
/// plan of the block keys, and the readers' positions (a process loaded the index at open).
const ORDERING_KEYS: u64 = 9;

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

/// `f(side, handle)` run on each of `handles` in a thread of its own, the threads let go at once;
/// what each returned, in order.
fn at_once<T: Send>(
    handles: &[Arc<NearDupDb>],
    f: impl Fn(usize, &NearDupDb) -> T + Sync,
) -> Vec<T> {
    let start = Barrier::new(handles.len());
    std::thread::scope(|scope| {
        let racers: Vec<_> = handles
            .iter()
            .enumerate()
            .map(|(side, db)| {
                let (start, f) = (&start, &f);
                scope.spawn(move || {
                    start.wait();
                    f(side, db)
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).collect()
    })
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
        let bodies = [text(round), edited(round)];
        let outcomes = at_once(&handles, |side, db| {
            db.check_and_insert(
                &doc(&format!("r{round}-{side}"), &bodies[side]),
                InsertMode::IfUnique,
            )
            .unwrap()
        });
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
    // Every refused insert deleted its body and released its claim: 30 bodies, 30 claims and
    // the ordering keys, nothing else.
    let keys: u64 = cluster.masters().iter().map(|m| m.keys_but_index()).sum();
    assert_eq!(keys, 2 * 30 + ORDERING_KEYS);
}

#[test]
fn two_handles_racing_one_id_store_it_once() {
    if !redis_available("two_handles_racing_one_id_store_it_once") {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("sameid");
    let handles: Vec<Arc<NearDupDb>> = (0..2)
        .map(|_| Arc::new(open_db(&url, OpenOptions::default()).unwrap()))
        .collect();
    let rounds = 30u64;
    for round in 0..rounds {
        // Texts far apart: only the id decides.
        let bodies = [text(1000 + 2 * round), text(1001 + 2 * round)];
        let outcomes = at_once(&handles, |side, db| {
            let body = bodies[side].clone();
            let outcome = db.insert(&doc(&format!("same{round}"), &body));
            (body, outcome)
        });
        let stored: Vec<&String> = outcomes
            .iter()
            .filter(|(_, outcome)| outcome.as_ref().is_ok_and(|o| o.inserted))
            .map(|(body, _)| body)
            .collect();
        assert_eq!(stored.len(), 1, "round {round}: {outcomes:?}");
        let refused = outcomes
            .iter()
            .find_map(|(_, outcome)| outcome.as_ref().err())
            .unwrap_or_else(|| panic!("round {round}: {outcomes:?}"));
        assert!(
            matches!(refused, neardup_store::StoreError::IdExists(_)),
            "{refused}"
        );
        // The stored record is the winner's, through either handle.
        let id = format!("same{round}");
        for db in &handles {
            let found = db.check(&doc("probe", stored[0])).unwrap();
            assert_eq!(
                found.verdict.duplicate().map(|d| d.duplicate_of.as_str()),
                Some(id.as_str())
            );
        }
    }
    assert_eq!(handles[1].stats().unwrap().documents, rounds);
    let keys: u64 = cluster.masters().iter().map(|m| m.keys_but_index()).sum();
    assert_eq!(keys, 2 * rounds + ORDERING_KEYS);
}

/// A claim left by a writer that died before its insert script (its slot never committed) is
/// taken over once older than the store timeout, and its slot can never be committed after.
#[test]
fn a_claim_left_by_a_dead_writer_is_taken_over() {
    if !redis_available("a_claim_left_by_a_dead_writer_is_taken_over") {
        return;
    }
    let cluster = RedisCluster::start();
    let db = open_db(&cluster.url("dead"), OpenOptions::default()).unwrap();
    let client = redis::cluster::ClusterClient::new(vec![cluster.nodes[0].url()]).unwrap();
    let mut conn = client.get_connection().unwrap();
    let claim = "neardup:{dead:orphan}:id";
    let now: Vec<u64> = redis::cmd("TIME").query(&mut conn).unwrap();
    // A writer that reserved slot 900, claimed the id just now, then died.
    let fresh = format!("900:{}", now[0] * 1000 + now[1] / 1000);
    redis::cmd("SET")
        .arg(claim)
        .arg(&fresh)
        .exec(&mut conn)
        .unwrap();
    let started = Instant::now();
    assert!(db.insert(&doc("orphan", &text(5))).unwrap().inserted);
    let waited = started.elapsed();
    assert!(
        waited >= DEFAULT_STORE_TIMEOUT - Duration::from_millis(100)
            && waited <= DEFAULT_STORE_TIMEOUT + Duration::from_secs(1),
        "the stale claim was taken over after {waited:?}"
    );
    let held: String = redis::cmd("GET").arg(claim).query(&mut conn).unwrap();
    assert!(!held.starts_with("900:"), "{held}");
    // Slot 900 is dead: the dead writer's insert script, were it to run now, is refused.
    let reply: Vec<String> = redis::cmd("EVAL")
        .arg("return {tostring(redis.call('BITFIELD', KEYS[1], 'GET', 'u2', '#900')[1])}")
        .arg(1)
        .arg("neardup:{dead}:state")
        .query(&mut conn)
        .unwrap();
    assert_eq!(reply, ["2"]);
    // An old claim is taken over at once; a claim of a stored document means "stored".
    redis::cmd("SET")
        .arg("neardup:{dead:older}:id")
        .arg("901:1")
        .exec(&mut conn)
        .unwrap();
    let started = Instant::now();
    assert!(db.insert(&doc("older", &text(6))).unwrap().inserted);
    assert!(started.elapsed() < DEFAULT_STORE_TIMEOUT);
    assert!(matches!(
        db.insert(&doc("older", &text(7))),
        Err(neardup_store::StoreError::IdExists(_))
    ));
    assert_eq!(db.stats().unwrap().documents, 2);
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

/// The `n` documents `PREFIX<i>` of an earlier layout (text `text(i)`) moved: each readable
/// through each of `dbs`, their texts verified against (a near duplicate found), and the
/// cluster holds a body and a claim a document, spread over every master, and the ordering keys:
/// no old record, body, slot or id map left.
fn all_moved(cluster: &RedisCluster, dbs: &[&NearDupDb], prefix: &str, n: u64) {
    for db in dbs {
        for i in 0..n {
            let id = format!("{prefix}{i}");
            assert_eq!(db.get(&id).unwrap().unwrap().id, id);
        }
        let near = db.check(&doc("x", &edited(11))).unwrap();
        assert_eq!(
            near.verdict.duplicate().unwrap().duplicate_of,
            format!("{prefix}11")
        );
    }
    let after: Vec<u64> = cluster
        .masters()
        .iter()
        .map(|m| m.keys_but_index())
        .collect();
    assert_eq!(
        after.iter().sum::<u64>(),
        2 * n + ORDERING_KEYS,
        "{after:?}"
    );
    for held in &after {
        assert!(*held >= n / 5, "every master holds a share: {after:?}");
    }
}

/// Starts a database `name` of an earlier layout on the cluster: writes its meta, and makes `n`
/// records (ids `PREFIX<i>`, texts `text(i)`) by a database in memory; a connection to the
/// cluster to store them with, and the records.
fn old_records(
    cluster: &RedisCluster,
    name: &str,
    prefix: &str,
    n: u64,
) -> (
    redis::cluster::ClusterConnection,
    Vec<neardup_store::Record>,
) {
    let memory = MemoryStore::new("records");
    let made = NearDupDb::open(Box::new(memory.clone()), OpenOptions::default()).unwrap();
    let client = redis::cluster::ClusterClient::new(vec![cluster.nodes[0].url()]).unwrap();
    let mut conn = client.get_connection().unwrap();
    let meta = serde_json::to_string(&Meta::new(made.policy().clone())).unwrap();
    redis::cmd("SET")
        .arg(format!("neardup:{{{name}}}:meta"))
        .arg(meta)
        .exec(&mut conn)
        .unwrap();
    let records = (0..n)
        .map(|i| {
            let id = format!("{prefix}{i}");
            made.insert(&doc(&id, &text(i))).unwrap();
            memory.get(&id).unwrap().unwrap()
        })
        .collect();
    (conn, records)
}

/// An earlier layout of a database in Redis.
#[derive(Clone, Copy, PartialEq)]
enum Old {
    /// Before spreading: every key under `{name}`, records in hashes (ids `old<i>`).
    OneTag,
    /// Layout 3: bodies spread under `neardup:{name:<id>}:<nonce>`, `slots` and `ids` on the
    /// ordering node (ids `v3-<i>`).
    V3,
}

impl Old {
    /// The ids' prefix.
    fn prefix(self) -> &'static str {
        match self {
            Old::OneTag => "old",
            Old::V3 => "v3-",
        }
    }
}

/// Writes `n` documents into the database `name` of the cluster as the version of layout `old`
/// did: its records made by a database in memory, then stored by that version's script (after
/// the body, for layout 3).
fn write_old(cluster: &RedisCluster, name: &str, n: u64, old: Old) {
    let (mut conn, records) = old_records(cluster, name, old.prefix(), n);
    let key = |what: &str| format!("neardup:{{{name}}}:{what}");
    let script = redis::Script::new(match old {
        Old::OneTag => UNSPREAD_INSERT,
        Old::V3 => V3_INSERT,
    });
    let mut last = "0-0".to_string();
    for (i, record) in records.into_iter().enumerate() {
        let (id, entry) = (record.id.clone(), record.entry());
        let json = serde_json::to_string(&record).unwrap();
        let mut invocation = script.prepare_invoke();
        invocation.key(key("last")).key(key("log")).key(key("seq"));
        if old == Old::OneTag {
            invocation.key(key(&format!("doc:{id}"))).key(key("slots"));
            invocation.arg(&last).arg(&id).arg(json);
        } else {
            let nonce = format!("{:x}", 0xabc0 + i);
            redis::cmd("SET")
                .arg(format!("neardup:{{{name}:{id}}}:{nonce}"))
                .arg(json)
                .exec(&mut conn)
                .unwrap();
            invocation.key(key("slots")).key(key("ids"));
            invocation.arg(&last).arg(&id).arg(nonce);
        }
        let reply: Vec<String> = invocation
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
    write_old(&cluster, "old", n, Old::OneTag);
    let before: Vec<u64> = cluster
        .masters()
        .iter()
        .map(|m| m.keys_but_index())
        .collect();
    assert!(
        before.contains(&(n + 5)),
        "one master holds it all: {before:?}"
    );
    let db = open_db(&cluster.url("old"), OpenOptions::default()).unwrap();
    assert_eq!(db.indexed(), n as usize);
    all_moved(&cluster, &[&db], "old", n);
    // Opening again finds nothing to move, and the database takes new documents.
    let again = open_db(&cluster.url("old"), OpenOptions::default()).unwrap();
    assert!(again.insert(&doc("new", &text(999))).unwrap().inserted);
    assert_eq!(db.stats().unwrap().documents, n + 1);
}

/// The insert script of layout 3 (bodies spread under `neardup:{name:<id>}:<nonce>`, `slots` and
/// `ids` on the ordering node).
const V3_INSERT: &str = r"
local held = redis.call('HGET', KEYS[5], ARGV[2])
if held then return {'exists'} end
local last = redis.call('GET', KEYS[1]) or '0-0'
if last ~= ARGV[1] then return {'conflict'} end
local slot = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[4], slot, ARGV[2])
redis.call('HSET', KEYS[5], ARGV[2], slot .. ':' .. ARGV[3])
local xid = redis.call('XADD', KEYS[2], '*', 'op', 'i', 'slot', slot, 'sim', ARGV[4], 'dig', ARGV[5])
redis.call('SET', KEYS[1], xid)
return {'ok', tostring(slot), xid}
";

#[test]
fn a_database_of_layout_3_is_moved_at_open_without_losing_a_document() {
    if !redis_available("a_database_of_layout_3_is_moved_at_open_without_losing_a_document") {
        return;
    }
    let cluster = RedisCluster::start();
    let n = 150u64;
    write_old(&cluster, "v3", n, Old::V3);
    let ordering = cluster.master_of("neardup:{v3}:log");
    let slots_and_ids = || {
        cluster.nodes[ordering]
            .cli(&["EXISTS", "neardup:{v3}:slots", "neardup:{v3}:ids"])
            .trim()
            .to_string()
    };
    assert_eq!(slots_and_ids(), "2");
    // Two processes opening at once each move what is left.
    let url = cluster.url("v3");
    let openers: Vec<_> = (0..2)
        .map(|_| {
            let url = url.clone();
            std::thread::spawn(move || open_db(&url, OpenOptions::default()).unwrap())
        })
        .collect();
    let dbs: Vec<NearDupDb> = openers.into_iter().map(|o| o.join().unwrap()).collect();
    assert_eq!(slots_and_ids(), "0", "the slot and id maps are gone");
    for db in &dbs {
        assert_eq!(db.indexed(), n as usize);
        assert_eq!(db.stats().unwrap().documents, n);
    }
    all_moved(&cluster, &[&dbs[0], &dbs[1]], "v3-", n);
    // Ids moved are stored once; deletes and new documents work.
    assert!(matches!(
        dbs[1].insert(&doc("v3-3", &text(5000))),
        Err(neardup_store::StoreError::IdExists(_))
    ));
    assert_eq!(dbs[1].delete("v3-3").unwrap().unwrap().id, "v3-3");
    assert!(dbs[0].get("v3-3").unwrap().is_none());
    assert!(dbs[0].insert(&doc("v3-3", &text(5001))).unwrap().inserted);
    let again = open_db(&url, OpenOptions::default()).unwrap();
    assert!(again.insert(&doc("new", &text(999))).unwrap().inserted);
    assert_eq!(again.stats().unwrap().documents, n + 1);
}

/// Options trimming the log to a `window` (ms), with readers silent for `timeout` (ms) ignored.
fn windowed(index_in: IndexIn, window: u64, timeout: u64) -> OpenOptions {
    OpenOptions {
        log_window: Duration::from_millis(window),
        reader_timeout: Duration::from_millis(timeout),
        ..answering_from(index_in)
    }
}

/// `redis-cli ARGS` on the master holding the ordering keys of database `name`, as a number.
fn ordering(cluster: &RedisCluster, name: &str, args: &[&str]) -> u64 {
    let node = &cluster.nodes[cluster.master_of(&format!("neardup:{{{name}}}:log"))];
    let out = node.cli(args);
    out.trim()
        .parse()
        .unwrap_or_else(|_| panic!("{args:?}: {out}"))
}

/// Entries in the log of database `name`.
fn log_len(cluster: &RedisCluster, name: &str) -> u64 {
    ordering(cluster, name, &["XLEN", &format!("neardup:{{{name}}}:log")])
}

/// Inserts `text(i)` as `PREFIX<i>` for each `i` of `seeds` through `db`.
fn insert_all(db: &NearDupDb, prefix: &str, seeds: impl Iterator<Item = u64>) {
    for i in seeds {
        assert!(
            db.insert(&doc(&format!("{prefix}{i}"), &text(i)))
                .unwrap()
                .inserted
        );
    }
}

/// The verdict (duplicate of, kind) of each of the questions the one-decision tests ask: the
/// near duplicate and the exact copy of each of `seeds`, and texts never inserted.
fn verdicts(db: &NearDupDb, seeds: &[u64]) -> Vec<Option<(String, Kind)>> {
    let mut asked: Vec<String> = seeds.iter().flat_map(|&i| [edited(i), text(i)]).collect();
    asked.extend((0..5).map(|i| text(1_000_000 + i)));
    asked
        .iter()
        .map(|asked| {
            db.check(&doc("q", asked))
                .unwrap()
                .verdict
                .duplicate()
                .map(|d| (d.duplicate_of.clone(), d.kind))
        })
        .collect()
}

#[test]
fn a_process_started_after_the_log_was_trimmed_answers_as_one_that_read_it_all() {
    if !redis_available(
        "a_process_started_after_the_log_was_trimmed_answers_as_one_that_read_it_all",
    ) {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("trimmed");
    // The writer read the whole log (it wrote it); a window of half a second, readers silent
    // for 300 ms ignored.
    let writer = open_db(&url, windowed(IndexIn::Local, 500, 300)).unwrap();
    insert_all(&writer, "d", 0..300);
    assert!(writer.delete("d5").unwrap().is_some());
    std::thread::sleep(Duration::from_millis(700));
    // Trimmed by the insert of slot 512 at the latest.
    insert_all(&writer, "d", 300..600);
    let kept = log_len(&cluster, "trimmed");
    assert!(kept < 400, "the log was trimmed: {kept} entries of 601");
    let seeds: Vec<u64> = (0..600).step_by(37).chain([5, 6, 599]).collect();
    let expected = verdicts(&writer, &seeds);
    assert_eq!(
        expected[..4],
        [
            Some(("d0".to_string(), Kind::Near)),
            Some(("d0".to_string(), Kind::Exact)),
            Some(("d37".to_string(), Kind::Near)),
            Some(("d37".to_string(), Kind::Exact)),
        ]
    );
    assert_eq!(
        expected.iter().flatten().count(),
        2 * seeds.len() - 2,
        "all but d5's"
    );
    for index_in in [IndexIn::Local, IndexIn::Store] {
        let late = open_db(&url, windowed(index_in, 500, 300)).unwrap();
        assert_eq!(late.indexed(), 599);
        assert_eq!(verdicts(&late, &seeds), expected, "{index_in:?}");
    }
}

#[test]
fn a_reader_behind_the_window_reloads_and_answers_right() {
    if !redis_available("a_reader_behind_the_window_reloads_and_answers_right") {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("behind");
    let options = windowed(IndexIn::Local, 400, 200);
    let away = open_db(&url, options.clone()).unwrap();
    insert_all(&away, "a", 0..50);
    let writer = open_db(&url, options).unwrap();
    let readers = || ordering(&cluster, "behind", &["HLEN", "neardup:{behind}:readers"]);
    assert_eq!(readers(), 2);
    // `away` says nothing while the writer inserts for longer than the window.
    let started = Instant::now();
    let mut i = 1000;
    while started.elapsed() < Duration::from_millis(1500) || i < 1600 {
        insert_all(&writer, "w", i..i + 1);
        i += 1;
    }
    assert_eq!(readers(), 1, "the silent reader was removed");
    let kept = log_len(&cluster, "behind");
    assert!(
        kept < i - 1000,
        "trimmed past the silent reader: {kept} of {}",
        i - 1000
    );
    // It reloads from the rows, then answers for every document.
    let near = away.check(&doc("x", &edited(1200))).unwrap();
    let found = near.verdict.duplicate().expect("a near duplicate of w1200");
    assert_eq!(
        (found.duplicate_of.as_str(), found.kind),
        ("w1200", Kind::Near)
    );
    assert_eq!(away.indexed() as u64, 50 + i - 1000);
    let exact = away.check(&doc("x", &text(7))).unwrap();
    assert_eq!(exact.verdict.duplicate().unwrap().kind, Kind::Exact);
    assert_eq!(readers(), 2, "it reports again");
}

#[test]
fn inserts_made_while_a_process_loads_are_not_lost() {
    if !redis_available("inserts_made_while_a_process_loads_are_not_lost") {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("loading");
    let options = windowed(IndexIn::Local, 300, 200);
    let first = Arc::new(open_db(&url, options.clone()).unwrap());
    insert_all(&first, "p", 0..1500);
    let writing = Arc::new(AtomicBool::new(true));
    let writer = {
        let (db, writing) = (Arc::clone(&first), Arc::clone(&writing));
        std::thread::spawn(move || {
            let mut i = 10_000;
            while writing.load(Ordering::Relaxed) {
                insert_all(&db, "c", i..i + 1);
                i += 1;
            }
            i
        })
    };
    let loaded: Vec<NearDupDb> = (0..6)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(100));
            open_db(&url, options.clone()).unwrap()
        })
        .collect();
    writing.store(false, Ordering::Relaxed);
    let end = writer.join().unwrap();
    assert!(
        end > 10_020,
        "inserts ran during the loads: {}",
        end - 10_000
    );
    let total = 1500 + end - 10_000;
    for db in &loaded {
        let _ = db.check(&doc("x", &text(3))).unwrap(); // catches up
        assert_eq!(db.indexed() as u64, total);
        for i in (10_000..end).step_by(7) {
            let exact = db.check(&doc("x", &text(i))).unwrap();
            assert_eq!(
                exact.verdict.duplicate().map(|d| d.duplicate_of.clone()),
                Some(format!("c{i}"))
            );
        }
    }
}

#[test]
fn the_ordering_master_s_log_stays_bounded_by_the_window() {
    if !redis_available("the_ordering_master_s_log_stays_bounded_by_the_window") {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("bounded");
    let db = open_db(&url, windowed(IndexIn::Store, 300, 100)).unwrap();
    let started = Instant::now();
    let mut longest = 0;
    let n = 1200;
    for chunk in 0..n / 100 {
        insert_all(&db, "b", chunk * 100..(chunk + 1) * 100);
        longest = longest.max(log_len(&cluster, "bounded"));
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    // The window's inserts, a trim every 256 slots, and a page of the insert rate's noise.
    let bound = (rate * 0.3) as u64 + 256 + 100;
    assert!(
        longest <= bound,
        "the log held {longest} entries, over {bound}"
    );
    assert!(longest < n / 2, "{longest} of {n}");
    assert_eq!(db.indexed(), n as usize);
}

#[test]
fn a_database_of_layout_4_gets_its_rows_at_open_without_losing_a_document() {
    if !redis_available("a_database_of_layout_4_gets_its_rows_at_open_without_losing_a_document") {
        return;
    }
    let cluster = RedisCluster::start();
    let url = cluster.url("four");
    let db = open_db(&url, answering_from(IndexIn::Store)).unwrap();
    insert_all(&db, "f", 0..1100);
    assert!(db.delete("f9").unwrap().is_some());
    drop(db);
    // Layout 4: the same keys without rows (nor readers).
    for master in cluster.masters() {
        for key in master
            .cli(&["--scan", "--pattern", "neardup:{four/r*}"])
            .lines()
        {
            master.cli(&["DEL", key]);
        }
    }
    let node = &cluster.nodes[cluster.master_of("neardup:{four}:log")];
    node.cli(&["SET", "neardup:{four}:layout", "4"]);
    node.cli(&["DEL", "neardup:{four}:readers"]);
    let opened: Vec<NearDupDb> = std::thread::scope(|scope| {
        let opening: Vec<_> = (0..2)
            .map(|_| scope.spawn(|| open_db(&url, OpenOptions::default()).unwrap()))
            .collect();
        opening.into_iter().map(|o| o.join().unwrap()).collect()
    });
    assert_eq!(node.cli(&["GET", "neardup:{four}:layout"]).trim(), "5");
    for db in &opened {
        assert_eq!(db.indexed(), 1099);
        assert_eq!(
            db.check(&doc("x", &text(9))).unwrap().verdict,
            Verdict::Unique
        );
        let near = db.check(&doc("x", &edited(1050))).unwrap();
        assert_eq!(near.verdict.duplicate().unwrap().duplicate_of, "f1050");
    }
    // A process starting later reads the rows (two buckets of slots), not the log.
    node.cli(&["DEL", "neardup:{four}:log"]);
    let late = open_db(&url, OpenOptions::default()).unwrap();
    assert_eq!(late.indexed(), 1099);
}

/// The bytes of every key matching `pattern` on the masters of `cluster`.
fn bytes_under(cluster: &RedisCluster, pattern: &str) -> usize {
    let mut total = 0;
    for node in cluster.masters() {
        let mut conn = redis::Client::open(node.url())
            .unwrap()
            .get_connection()
            .unwrap();
        let keys: Vec<String> = redis::cmd("KEYS").arg(pattern).query(&mut conn).unwrap();
        for key in keys {
            total += redis::cmd("STRLEN")
                .arg(&key)
                .query::<usize>(&mut conn)
                .unwrap();
        }
    }
    total
}

/// Inserts `id` through `db`, then undoes its commit: its slot free again, its count taken
/// back, as a writer that died just before its insert script leaves it (its block entries,
/// claim, body and row written). Returns the slot.
fn orphan(
    db: &NearDupDb,
    conn: &mut redis::cluster::ClusterConnection,
    id: &str,
    seed: u64,
) -> u64 {
    assert!(db.insert(&doc(id, &text(seed))).unwrap().inserted);
    let slot = db.get(id).unwrap().unwrap().slot;
    redis::cmd("EVAL")
        .arg("redis.call('BITFIELD', KEYS[1], 'SET', 'u2', '#' .. ARGV[1], 0) return redis.call('DECR', KEYS[2])")
        .arg(2)
        .arg("neardup:{sweep}:state")
        .arg("neardup:{sweep}:count")
        .arg(slot)
        .exec(conn)
        .unwrap();
    slot
}

fn exists(conn: &mut redis::cluster::ClusterConnection, key: &str) -> bool {
    redis::cmd("EXISTS").arg(key).query::<u64>(conn).unwrap() == 1
}

/// The remains of inserts never stored (a writer that died before its insert script) are swept
/// once older than `sweep_after`: their bodies, rows, claims and block entries removed, their
/// slots dead; a slot fenced by a claim taken over is swept too; stored documents are left as
/// they were; writers sweep by themselves every 256 slots.
#[test]
fn the_remains_of_inserts_never_stored_are_swept() {
    if !redis_available("the_remains_of_inserts_never_stored_are_swept") {
        return;
    }
    let cluster = RedisCluster::start();
    let sweeping = |after: u64| OpenOptions {
        sweep_after: Duration::from_millis(after),
        ..answering_from(IndexIn::Store)
    };
    let db = open_db(&cluster.url("sweep"), sweeping(500)).unwrap();
    let client = redis::cluster::ClusterClient::new(vec![cluster.nodes[0].url()]).unwrap();
    let mut conn = client.get_connection().unwrap();
    insert_all(&db, "kept", 0..5);
    let (blocks, rows) = (
        bytes_under(&cluster, "neardup:{sweep/b*"),
        bytes_under(&cluster, "neardup:{sweep/r*"),
    );
    let died = orphan(&db, &mut conn, "died", 10);
    // A writer that died after claiming `taken` long ago: its next insert takes the claim over
    // at once, fencing the slot.
    let taken = orphan(&db, &mut conn, "taken", 11);
    redis::cmd("SET")
        .arg("neardup:{sweep:taken}:id")
        .arg(format!("{taken}:1"))
        .exec(&mut conn)
        .unwrap();
    assert!(db.insert(&doc("taken", &text(12))).unwrap().inserted);
    assert_eq!(db.stats().unwrap().documents, 6);
    let body = |slot: u64| format!("neardup:{{sweep/d{slot}}}");
    assert!(exists(&mut conn, &body(died)) && exists(&mut conn, &body(taken)));
    // The first pass marks where the slots are now; the next, once that is 500 ms old, sweeps.
    assert_eq!(db.sweep().unwrap(), 0);
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(db.sweep().unwrap(), 2);
    assert!(!exists(&mut conn, &body(died)) && !exists(&mut conn, &body(taken)));
    assert!(
        !exists(&mut conn, "neardup:{sweep:died}:id"),
        "the dead insert's claim released"
    );
    // What is left: the 5 kept documents' and the new `taken`'s (4 tables of 16-byte entries,
    // 32-byte rows), as if the dead inserts had never been.
    assert_eq!(bytes_under(&cluster, "neardup:{sweep/b*"), blocks + 4 * 16);
    assert_eq!(bytes_under(&cluster, "neardup:{sweep/r*"), rows + 32);
    assert_eq!(
        ordering(
            &cluster,
            "sweep",
            &[
                "BITFIELD",
                "neardup:{sweep}:state",
                "GET",
                "u2",
                &format!("#{died}")
            ]
        ),
        2
    );
    assert_eq!(db.stats().unwrap().documents, 6);
    // The swept id is free again at once; every stored document reads back, and a process
    // loading now answers as this one.
    let started = Instant::now();
    assert!(db.insert(&doc("died", &text(10))).unwrap().inserted);
    assert!(started.elapsed() < DEFAULT_STORE_TIMEOUT);
    let fresh = open_db(&cluster.url("sweep"), OpenOptions::default()).unwrap();
    let seeds: Vec<u64> = (0..5).chain([10, 12]).collect();
    assert_eq!(verdicts(&db, &seeds), verdicts(&fresh, &seeds));
    for id in ["kept0", "kept4", "died", "taken"] {
        assert!(fresh.get(id).unwrap().is_some(), "{id}");
    }
    // Writers sweep by themselves: one inserting 600 documents passes two multiples of 256.
    let writer = open_db(&cluster.url("sweep"), sweeping(1)).unwrap();
    let later = orphan(&writer, &mut conn, "later", 20);
    insert_all(&writer, "more", 100..700);
    assert!(!exists(&mut conn, &body(later)));
}
