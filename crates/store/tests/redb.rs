//! NearDupDb over the embedded store, on a temporary directory.

use std::sync::Arc;

use neardup_core::Profile;
use neardup_dedup::{DuplicateOf, Evidence, Kind, Policy};
use neardup_store::{
    open_db, InsertMode, NearDupDb, NewDocument, OpenOptions, StoreError, Verdict,
};

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

fn doc(id: &str, text: &str) -> NewDocument {
    NewDocument {
        id: Some(id.into()),
        url: Some(format!("https://example.com/{id}")),
        text: text.into(),
        ..NewDocument::default()
    }
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
fn check_insert_get_delete_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let first = db
        .check_and_insert(&doc("a", &text(1)), InsertMode::IfUnique)
        .unwrap();
    assert_eq!((first.verdict, first.inserted), (Verdict::Unique, true));
    let dup = db
        .check_and_insert(&doc("b", &text(1)), InsertMode::IfUnique)
        .unwrap();
    assert_eq!(dup.verdict, duplicate_of("a"));
    assert!(!dup.inserted);
    assert_eq!(dup.matches[0].url.as_deref(), Some("https://example.com/a"));
    let near = db.check(&doc("c", &format!("{}!", text(1)))).unwrap();
    assert!(near
        .verdict
        .duplicate()
        .is_some_and(|d| d.kind == Kind::Near && d.duplicate_of == "a"));
    db.insert(&doc("z", &text(2))).unwrap();
    assert!(matches!(
        db.insert(&doc("z", &text(3))),
        Err(StoreError::IdExists(_))
    ));
    assert!(matches!(
        db.check(&doc("e", "  ")),
        Err(StoreError::InvalidDocument(_))
    ));
    let record = db.get("a").unwrap().unwrap();
    assert_eq!(record.url.as_deref(), Some("https://example.com/a"));
    assert_eq!(db.stats().unwrap().documents, 2);
    assert!(db.delete("z").unwrap().is_some());
    assert!(db.delete("z").unwrap().is_none());
    drop(db);

    let db = open(dir.path());
    assert_eq!(db.stats().unwrap().indexed, 1);
    assert_eq!(
        db.check(&doc("b", &text(1))).unwrap().verdict,
        duplicate_of("a")
    );
    assert_eq!(
        db.check(&doc("z", &text(2))).unwrap().verdict,
        Verdict::Unique
    );
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

#[test]
fn concurrent_near_identical_inserts_one_unique() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open(dir.path()));
    let inserted = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|i| {
                let db = Arc::clone(&db);
                scope.spawn(move || {
                    // At most 3 dots: every pair is within k = 3 (with 0 to 7 dots some pairs
                    // are 4 bits apart, and whichever lands first decides whether both are
                    // unique: near duplication is not transitive).
                    let dots = ".".repeat(i % 4);
                    let d = doc(&format!("d{i}"), &format!("{}{dots}", text(9)));
                    db.check_and_insert(&d, InsertMode::IfUnique)
                        .unwrap()
                        .inserted
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .filter(|&x| x)
            .count()
    });
    assert_eq!(inserted, 1);
}
