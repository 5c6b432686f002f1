//! NearDupDb over the embedded store, on a temporary directory: what is redb's own (the
//! behaviours every store shares are in conformance.rs).

mod common;

use common::doc;
use neardup_core::Profile;
use neardup_dedup::{DuplicateOf, Evidence, Kind, Policy};
use neardup_store::{open_db, InsertMode, NearDupDb, OpenOptions, Verdict};

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
