//! The plan of the index the store holds (its block keys) is chosen once per database and
//! recorded beside the keys: a database whose keys were written by the first plan (one 16-bit
//! block a table, recorded as `v1`) keeps opening and answering with it, and a new database
//! gets the plan made for a billion documents (`v2`, pairs of blocks). On a real `redis-server`.

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

/// Rewrites the block keys of `ids` as the first plan wrote them (4 tables of one 16-bit
/// block: `neardup:{NAME/b<table>:<hex>}` holding 8-byte slot + 8-byte SimHash entries) and
/// records that plan, as a database made before wider keys holds them.
fn write_first_plan(conn: &mut redis::Connection, db: &NearDupDb, ids: &[&str]) {
    let old: Vec<String> = block_keys(conn);
    let _: () = redis::cmd("DEL").arg(&old).query(conn).unwrap();
    let keys = BlockKeys::<u64>::new(4, 6).unwrap();
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
        .arg("v1 bits=64 blocks=4 k=6")
        .query(conn)
        .unwrap();
}

#[test]
fn a_database_of_the_first_plan_keeps_opening_and_answering() {
    let Some(redis) = Redis::temporary("a_database_of_the_first_plan_keeps_opening_and_answering")
    else {
        return;
    };
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
            plan, "v2 bits=64 blocks=4 choose=2 k=6",
            "a new database's plan"
        );
        assert_eq!(block_keys(&mut conn).len(), 2 * 6, "6 tables a document");
        write_first_plan(&mut conn, &db, &["a", "b"]);
    }
    assert_eq!(block_keys(&mut conn).len(), 2 * 4);
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
    assert_eq!(plan, "v1 bits=64 blocks=4 k=6", "the recorded plan stays");
    assert_eq!(
        block_keys(&mut conn).len(),
        3 * 4,
        "d written with the first plan"
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
