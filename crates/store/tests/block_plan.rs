//! The plan of the index the store holds (its block keys) is chosen once per database and
//! recorded beside the keys: a database whose keys were written by the first plan (one 16-bit
//! block a table, recorded as `v1`) or the second (pairs of blocks, `v2`) keeps opening and
//! answering with it, and a new database gets tiers of keys (`v3`: seed 004's blocks for its
//! first 16 million slots, keys made for a billion documents after). On a real `redis-server`.

mod common;

use common::doc;

use neardup_core::Simhash;
use neardup_dedup::Kind;
use neardup_index::BlockKeys;
use neardup_store::{open_db, IndexIn, InsertMode, NearDupDb, OpenOptions, StoreError};
use neardup_testkit::{text, Redis};

const NAME: &str = "plans";

/// A handle answering from the index the store holds.
fn try_open(location: &str) -> Result<NearDupDb, StoreError> {
    open_db(
        location,
        OpenOptions {
            index_in: IndexIn::Store,
            ..OpenOptions::default()
        },
    )
}

fn open(location: &str) -> NearDupDb {
    try_open(location).unwrap()
}

/// `text(seed)` with its last word changed: a near duplicate of it.
fn edited(seed: u64) -> String {
    let original = text(seed);
    let (head, _) = original.rsplit_once(' ').unwrap();
    format!("{head} edited")
}

fn plan_key() -> String {
    format!("neardup:{{{NAME}}}:blocks")
}

fn block_keys(conn: &mut redis::Connection) -> Vec<String> {
    redis::cmd("KEYS")
        .arg(format!("neardup:{{{NAME}/b*"))
        .query(conn)
        .unwrap()
}

/// Rewrites the block keys of `ids` as an older plan `described` wrote them (`keys`' tables:
/// `neardup:{NAME/b<table>:<hex>}` holding 8-byte slot + 8-byte SimHash entries) and records
/// that plan, as a database made by that version holds them.
fn write_old_plan(
    conn: &mut redis::Connection,
    db: &NearDupDb,
    ids: &[&str],
    (keys, described): (BlockKeys<u64>, &str),
) {
    let old: Vec<String> = block_keys(conn);
    let _: () = redis::cmd("DEL").arg(&old).query(conn).unwrap();
    for id in ids {
        let record = db.get(id).unwrap().expect("stored");
        let Simhash::B64(simhash) = record.simhash else {
            panic!("a 64-bit profile")
        };
        let mut entry = record.slot.to_le_bytes().to_vec();
        entry.extend_from_slice(&simhash.to_le_bytes());
        for (table, key) in keys.homes(simhash) {
            let name = format!("neardup:{{{NAME}/b{table}:{key:x}}}");
            let _: () = redis::cmd("APPEND")
                .arg(name)
                .arg(&entry)
                .query(conn)
                .unwrap();
        }
    }
    let _: () = redis::cmd("SET")
        .arg(plan_key())
        .arg(described)
        .query(conn)
        .unwrap();
}

/// The first plan: 4 tables of one 16-bit block.
fn first_plan() -> (BlockKeys<u64>, &'static str) {
    (BlockKeys::new(4, 6).unwrap(), "v1 bits=64 blocks=4 k=6")
}

/// The second plan: 6 tables of two 16-bit blocks (32-bit keys, radius 2).
fn second_plan() -> (BlockKeys<u64>, &'static str) {
    (
        BlockKeys::with_choice(4, 2, 6).unwrap(),
        "v2 bits=64 blocks=4 choose=2 k=6",
    )
}

/// A database whose keys `old` wrote (for "a" and "b") opens in two processes, answers
/// near duplicates of documents written before and after, and keeps its plan: `tables` keys a
/// document.
fn an_old_plan_keeps_opening_and_answering(
    test: &str,
    old: (BlockKeys<u64>, &'static str),
    tables: usize,
) {
    let Some(redis) = Redis::temporary(test) else {
        return;
    };
    let described = old.1;
    let location = format!("{}?name={NAME}", redis.url());
    let mut conn = redis::Client::open(redis.url())
        .unwrap()
        .get_connection()
        .unwrap();
    {
        let db = open(&location);
        for (id, seed) in [("a", 1), ("b", 2)] {
            let outcome = db
                .check_and_insert(&doc(id, &text(seed)), InsertMode::IfUnique)
                .unwrap();
            assert!(outcome.inserted);
        }
        let plan: String = redis::cmd("GET").arg(plan_key()).query(&mut conn).unwrap();
        assert_eq!(
            plan, "v3 bits=64 k=6 tiers=0:4/1/16,16777216:4/2/26",
            "a new database's plan"
        );
        assert_eq!(
            block_keys(&mut conn).len(),
            2 * 4,
            "4 tables a document in the first tier"
        );
        write_old_plan(&mut conn, &db, &["a", "b"], old);
    }
    assert_eq!(block_keys(&mut conn).len(), 2 * tables);
    // Two processes open it again: both read the recorded plan, neither rebuilds.
    let (one, two) = (open(&location), open(&location));
    let near = one.check(&doc("c", &edited(1))).unwrap();
    let found = near.verdict.duplicate().expect("a near duplicate of a");
    assert_eq!((found.duplicate_of.as_str(), found.kind), ("a", Kind::Near));
    let added = one
        .check_and_insert(&doc("d", &text(3)), InsertMode::IfUnique)
        .unwrap();
    assert!(added.inserted);
    let near = two.check(&doc("e", &edited(3))).unwrap();
    assert_eq!(
        near.verdict.duplicate().map(|d| d.duplicate_of.as_str()),
        Some("d"),
        "{near:?}"
    );
    let plan: String = redis::cmd("GET").arg(plan_key()).query(&mut conn).unwrap();
    assert_eq!(plan, described, "the recorded plan stays");
    assert_eq!(
        block_keys(&mut conn).len(),
        3 * tables,
        "d written with the recorded plan"
    );
}

#[test]
fn a_database_of_the_first_plan_keeps_opening_and_answering() {
    an_old_plan_keeps_opening_and_answering(
        "a_database_of_the_first_plan_keeps_opening_and_answering",
        first_plan(),
        4,
    );
}

#[test]
fn a_database_of_the_second_plan_keeps_opening_and_answering() {
    an_old_plan_keeps_opening_and_answering(
        "a_database_of_the_second_plan_keeps_opening_and_answering",
        second_plan(),
        6,
    );
}

#[test]
fn a_recorded_plan_this_version_cannot_read_is_refused() {
    let Some(redis) = Redis::temporary("a_recorded_plan_this_version_cannot_read_is_refused")
    else {
        return;
    };
    let location = format!("{}?name={NAME}", redis.url());
    drop(open(&location));
    redis.cli(&["SET", &plan_key(), "v9 bits=64 blocks=4 k=6"]);
    let Err(refused) = try_open(&location) else {
        panic!("a plan this version cannot read is refused")
    };
    assert!(refused.to_string().contains("v9 bits=64"), "{refused}");
}
