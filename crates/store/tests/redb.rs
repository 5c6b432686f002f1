//! NearDupDb over the embedded store, on a temporary directory: what is redb's own (the
//! behaviours every store shares are in conformance.rs).

mod common;

use common::doc;
use neardup_core::Profile;
use neardup_dedup::{DuplicateOf, Evidence, Kind, Policy};
use neardup_store::{open_db, IndexIn, InsertMode, NearDupDb, NewDocument, OpenOptions, Verdict};

#[path = "redb/corrupt.rs"]
mod corrupt;

/// The verdict "exact duplicate of `of`".
fn duplicate_of(of: &str) -> Verdict {
    Verdict::Duplicate(DuplicateOf {
        duplicate_of: of.into(),
        kind: Kind::Exact,
        distance: 0,
        evidence: Evidence::EXACT,
    })
}

fn text(n: u64) -> String {
    (0..60)
        .map(|i| format!("w{}", (n * 7919 + i * 104_729) % 5003))
        .collect::<Vec<_>>()
        .join(" ")
}

fn open(dir: &std::path::Path) -> NearDupDb {
    open_db(dir.to_str().unwrap(), OpenOptions::default()).unwrap()
}

#[test]
fn another_profile_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(open(dir.path()));
    let policy = Policy {
        profile: Profile::zh(),
        ..Policy::default()
    };
    let options = OpenOptions {
        policy: Some(policy),
        ..OpenOptions::default()
    };
    let message = open_db(dir.path().to_str().unwrap(), options)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("profile web") && message.contains("profile zh"),
        "{message}"
    );
}

#[test]
fn batches_see_their_own_earlier_documents() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let docs = [doc("a", &text(5)), doc("b", &text(5)), doc("c", &text(6))];
    let verdicts: Vec<_> = db
        .check_and_insert_many(&docs, InsertMode::IfUnique)
        .into_iter()
        .map(|o| o.unwrap().verdict)
        .collect();
    let expected = [Verdict::Unique, duplicate_of("a"), Verdict::Unique];
    assert_eq!(verdicts, expected);
}

/// A handle on the redb database in `dir` whose checks read the block keys in its file.
fn open_held(dir: &std::path::Path) -> NearDupDb {
    let options = OpenOptions {
        index_in: IndexIn::Store,
        ..OpenOptions::default()
    };
    open_db(dir.to_str().unwrap(), options).unwrap()
}

/// `text(n)` with its last word changed: a near duplicate of it.
fn edited(n: u64) -> String {
    let original = text(n);
    let (head, _) = original.rsplit_once(' ').unwrap();
    format!("{head} edited")
}

/// Documents with exact and near copies of each other and of `stored` earlier ones.
fn mixed(from: u64, count: u64, stored: u64) -> Vec<NewDocument> {
    (from..from + count)
        .map(|i| {
            let body = match i % 4 {
                0 => text(i % stored),
                1 => edited(i % stored),
                2 => edited(i / 2),
                _ => text(i),
            };
            doc(&format!("d{i}"), &body)
        })
        .collect()
}

fn verdicts(db: &NearDupDb, docs: &[NewDocument]) -> Vec<Verdict> {
    db.check_and_insert_many(docs, InsertMode::IfUnique)
        .into_iter()
        .map(|outcome| outcome.unwrap().verdict)
        .collect()
}

/// A database written with the index in the process gets its block keys when it is first
/// opened with the index in the store: a batch checked against it then gets the verdicts the
/// same batch gets against a copy with the index loaded; every insert after (whichever index
/// its process reads) and every delete keeps the keys current.
#[test]
fn the_store_s_index_answers_as_the_process_s() {
    let first = tempfile::tempdir().unwrap();
    let stored = 300;
    let db = open(first.path());
    verdicts(&db, &mixed(0, stored, 50));
    assert_eq!(db.stats().unwrap().store_index, None, "no keys until asked");
    drop(db);
    let second = tempfile::tempdir().unwrap();
    std::fs::copy(
        first.path().join("neardup.redb"),
        second.path().join("neardup.redb"),
    )
    .unwrap();
    let batch = mixed(stored, 400, stored);
    let local = verdicts(&open(first.path()), &batch);
    let held_db = open_held(second.path());
    assert!(held_db.stats().unwrap().store_index.is_some());
    let held = verdicts(&held_db, &batch);
    assert_eq!(held, local);
    assert!(held.contains(&Verdict::Unique));
    assert!(held.iter().any(|v| v.duplicate().is_some()));
    drop(held_db);
    // Written by a process reading its own index: the keys it found recorded stay current.
    let db = open(second.path());
    db.insert(&doc("late", &text(9_999))).unwrap();
    db.delete("d3").unwrap();
    drop(db);
    let db = open_held(second.path());
    let late = db.check(&doc("late copy", &edited(9_999))).unwrap();
    assert_eq!(late.verdict.duplicate().unwrap().duplicate_of, "late");
    let gone = db.check(&doc("d3 copy", &text(3))).unwrap();
    assert!(
        gone.verdict
            .duplicate()
            .is_none_or(|d| d.duplicate_of != "d3"),
        "{gone:?}"
    );
}

/// The store's page cache is its share of the budget: a quarter, and redb opened through a
/// location holds that much ([`neardup_store::Store::cache_bytes`]); without a budget, redb's
/// default. A database opened within a small budget still works.
#[test]
fn redb_s_page_cache_follows_the_budget() {
    let within = |memory: Option<u64>| OpenOptions {
        memory,
        ..OpenOptions::default()
    };
    assert_eq!(within(None).store_cache_bytes(), None);
    assert_eq!(within(Some(2 << 30)).store_cache_bytes(), Some(512 << 20));
    assert_eq!(within(Some(512 << 20)).store_cache_bytes(), Some(128 << 20));
    let dir = tempfile::tempdir().unwrap();
    let location = dir.path().to_str().unwrap();
    for memory in [Some(1 << 30), Some(4 << 20), None] {
        let store = neardup_store::open_store(location, &within(memory)).unwrap();
        assert_eq!(store.cache_bytes(), memory.map_or(0, |m| m / 4));
    }
    let options = OpenOptions {
        index_in: IndexIn::Store,
        ..within(Some(4 << 20))
    };
    let db = open_db(location, options).unwrap();
    let docs = mixed(0, 200, 40);
    let small = verdicts(&db, &docs);
    assert_eq!(db.stats().unwrap().memory_budget_bytes, Some(4 << 20));
    drop(db);
    let again = tempfile::tempdir().unwrap();
    assert_eq!(verdicts(&open_held(again.path()), &docs), small);
}

/// A delete with the index in the store removes the record and its block entries together:
/// the raw lists of its keys no longer hold it, and a copy of it is unique.
#[test]
fn a_delete_removes_its_block_entries_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = open_held(dir.path());
    let body = text(77);
    db.insert(&doc("gone", &body)).unwrap();
    db.insert(&doc("kept", &text(78))).unwrap();
    assert!(db.delete("gone").unwrap().is_some());
    assert!(db.delete("gone").unwrap().is_none());
    assert_eq!(
        db.check(&doc("copy", &body)).unwrap().verdict,
        Verdict::Unique
    );
    drop(db);
    let db = open_held(dir.path());
    assert_eq!(
        db.check(&doc("copy", &body)).unwrap().verdict,
        Verdict::Unique
    );
    let kept = db.check(&doc("copy", &text(78))).unwrap();
    assert_eq!(kept.verdict, duplicate_of("kept"));
}
