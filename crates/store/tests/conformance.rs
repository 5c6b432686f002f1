//! One suite of behaviours every [`Store`] must have, run over each: process memory
//! ([`MemoryStore`]), redb (a temporary directory) and Redis (a real `redis-server`), the last
//! two twice: with the index in each process and with the index the store holds. Only the
//! public API is used: a database is opened, written and read through [`NearDupDb`].
//!
//! Behaviours: check, insert, get, delete; changes made through one handle reach another;
//! check-and-insert racing from two handles inserts one of near-identical documents;
//! acknowledged documents are there when the database is opened again; stats; and opening
//! only an existing database creates none.

mod common;

use common::doc;
use std::sync::Arc;

use neardup_dedup::Kind;
use neardup_store::{
    open_db, IndexIn, InsertMode, MemoryStore, NearDupDb, NewDocument, OpenOptions, StoreError,
    Verdict,
};
use neardup_testkit::{text, Redis};

/// A database of one kind of store, opened as often as a test likes.
struct Subject {
    /// Opens a handle on the database.
    open: Box<dyn Fn(OpenOptions) -> Result<NearDupDb, StoreError>>,
    /// Whether several handles may be open at once (a shared store: memory clones, Redis);
    /// redb has one handle, shared by threads.
    shared: bool,
    /// What must live as long as the database (its directory, its server).
    _keep: Box<dyn std::any::Any>,
    /// Where its handles find candidates.
    index_in: IndexIn,
    /// Whether the store holds an index of its own (block keys) when the test looks at it.
    holds_index: bool,
}

impl Subject {
    fn memory() -> Subject {
        let store = MemoryStore::new("conformance");
        Subject {
            open: Box::new(move |options| NearDupDb::open(Box::new(store.clone()), options)),
            shared: true,
            _keep: Box::new(()),
            index_in: IndexIn::Local,
            holds_index: false,
        }
    }

    fn redb() -> Subject {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("db").to_str().unwrap().to_string();
        Subject {
            open: Box::new(move |options| open_db(&location, options)),
            shared: false,
            _keep: Box::new(dir),
            index_in: IndexIn::Local,
            holds_index: false,
        }
    }

    /// redb, every handle checking against the block keys in its file.
    fn redb_held() -> Subject {
        let dir = tempfile::tempdir().unwrap();
        let location = dir.path().join("db").to_str().unwrap().to_string();
        Subject {
            open: opening_held(location),
            shared: false,
            _keep: Box::new(dir),
            index_in: IndexIn::Store,
            holds_index: true,
        }
    }

    /// `None` if the environment opts out of the Redis tests.
    fn redis(test: &str) -> Option<Subject> {
        let redis = Redis::temporary(test)?;
        let location = format!("{}?name=conformance", redis.url());
        Some(Subject {
            open: Box::new(move |options| open_db(&location, options)),
            shared: true,
            _keep: Box::new(redis),
            index_in: IndexIn::Local,
            holds_index: true,
        })
    }

    /// Redis, every handle checking against the index the store holds (block keys), none
    /// holding one of its own.
    fn redis_held(test: &str) -> Option<Subject> {
        let redis = Redis::temporary(&format!("held_{test}"))?;
        let location = format!("{}?name=conformance", redis.url());
        Some(Subject {
            open: opening_held(location),
            shared: true,
            _keep: Box::new(redis),
            index_in: IndexIn::Store,
            holds_index: true,
        })
    }

    fn open(&self) -> NearDupDb {
        (self.open)(OpenOptions::default()).unwrap()
    }

    /// Two handles on the database: two for a shared store, the same one twice for redb.
    fn two_handles(&self) -> (Arc<NearDupDb>, Arc<NearDupDb>) {
        let a = Arc::new(self.open());
        let b = if self.shared {
            Arc::new(self.open())
        } else {
            Arc::clone(&a)
        };
        (a, b)
    }
}

/// Opens the database at `location` checking against the index the store holds.
fn opening_held(location: String) -> Box<dyn Fn(OpenOptions) -> Result<NearDupDb, StoreError>> {
    Box::new(move |options| {
        let options = OpenOptions {
            index_in: IndexIn::Store,
            ..options
        };
        open_db(&location, options)
    })
}

/// A text of about 320 words, different for every seed.
fn long_text(seed: u64) -> String {
    (0..4)
        .map(|part| text(seed * 4 + part))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `long_text(seed)` with its last word changed: a near duplicate of it.
fn edited(seed: u64) -> String {
    let original = long_text(seed);
    let (head, _) = original.rsplit_once(' ').unwrap();
    format!("{head} edited")
}

fn duplicate_kind(verdict: &Verdict, of: &str) -> Option<Kind> {
    verdict
        .duplicate()
        .filter(|d| d.duplicate_of == of)
        .map(|d| d.kind)
}

fn check_insert_get(subject: &Subject) {
    let db = subject.open();
    let first = db
        .check_and_insert(&doc("a", &long_text(1)), InsertMode::IfUnique)
        .unwrap();
    assert_eq!((first.verdict, first.inserted), (Verdict::Unique, true));
    let copy = db
        .check_and_insert(&doc("b", &long_text(1)), InsertMode::IfUnique)
        .unwrap();
    assert_eq!(duplicate_kind(&copy.verdict, "a"), Some(Kind::Exact));
    assert!(!copy.inserted);
    assert_eq!(
        copy.matches[0].url.as_deref(),
        Some("https://example.com/a")
    );
    let near = db.check(&doc("c", &edited(1))).unwrap();
    assert_eq!(
        duplicate_kind(&near.verdict, "a"),
        Some(Kind::Near),
        "{near:?}"
    );
    let other = db.check(&doc("d", &long_text(2))).unwrap();
    assert_eq!(other.verdict, Verdict::Unique);
    let record = db.get("a").unwrap().expect("a is stored");
    assert_eq!(record.url.as_deref(), Some("https://example.com/a"));
    assert!(
        db.get("b").unwrap().is_none(),
        "a duplicate is not inserted"
    );
    let again = db.insert(&doc("a", &long_text(3)));
    assert!(matches!(again, Err(StoreError::IdExists(_))), "{again:?}");
    let blank = db.check(&doc("e", "  "));
    assert!(
        matches!(blank, Err(StoreError::InvalidDocument(_))),
        "{blank:?}"
    );
}

fn delete(subject: &Subject) {
    let db = subject.open();
    db.insert(&doc("z", &long_text(4))).unwrap();
    assert_eq!(db.delete("z").unwrap().map(|r| r.id).as_deref(), Some("z"));
    assert!(db.delete("z").unwrap().is_none());
    assert!(db.get("z").unwrap().is_none());
    let after = db.check(&doc("y", &long_text(4))).unwrap();
    assert_eq!(after.verdict, Verdict::Unique);
}

fn changes_reach_another_handle(subject: &Subject) {
    let (a, b) = subject.two_handles();
    a.insert(&doc("first", &long_text(5))).unwrap();
    let seen = b.check(&doc("x", &edited(5))).unwrap();
    assert_eq!(
        duplicate_kind(&seen.verdict, "first"),
        Some(Kind::Near),
        "{seen:?}"
    );
    assert_eq!(
        b.get("first").unwrap().map(|r| r.id).as_deref(),
        Some("first")
    );
    a.delete("first").unwrap();
    let gone = b.check(&doc("x", &edited(5))).unwrap();
    assert_eq!(gone.verdict, Verdict::Unique);
}

fn racing_inserts_from_two_handles_make_one_unique(subject: &Subject) {
    let (a, b) = subject.two_handles();
    let inserted = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..8)
            .map(|i| {
                let db = Arc::clone(if i % 2 == 0 { &a } else { &b });
                scope.spawn(move || {
                    // Near-identical: each a near duplicate of every other.
                    let text = if i % 2 == 0 { long_text(6) } else { edited(6) };
                    let d = doc(&format!("r{i}"), &text);
                    db.check_and_insert(&d, InsertMode::IfUnique)
                        .unwrap()
                        .inserted
                })
            })
            .collect();
        racers
            .into_iter()
            .map(|racer| racer.join().unwrap())
            .filter(|&inserted| inserted)
            .count()
    });
    assert_eq!(inserted, 1, "one of near-identical documents is unique");
    assert_eq!(a.stats().unwrap().documents, 1);
}

fn acknowledged_documents_are_there_when_opened_again(subject: &Subject) {
    let db = subject.open();
    assert!(!db.durability().persistence.is_empty());
    db.insert(&doc("kept", &long_text(7))).unwrap();
    drop(db);
    let db = subject.open();
    assert_eq!(db.indexed(), 1);
    assert!(db.get("kept").unwrap().is_some());
    let copy = db.check(&doc("copy", &long_text(7))).unwrap();
    assert_eq!(duplicate_kind(&copy.verdict, "kept"), Some(Kind::Exact));
}

fn stats(subject: &Subject) {
    let db = subject.open();
    let docs: Vec<NewDocument> = (0..3)
        .map(|i| doc(&format!("s{i}"), &long_text(10 + i)))
        .collect();
    for outcome in db.check_and_insert_many(&docs, InsertMode::Always) {
        assert!(outcome.unwrap().inserted);
    }
    let stats = db.stats().unwrap();
    assert_eq!((stats.documents, stats.indexed), (3, 3));
    assert!(!stats.location.is_empty());
    assert_eq!(stats.policy, db.policy().describe());
    // What the process holds, and what the store holds, each said as it is.
    assert_eq!(stats.index_in, subject.index_in);
    match subject.index_in {
        IndexIn::Local => assert!(stats.index_bytes > 0, "{stats:?}"),
        // An empty index's tables: nothing grows with the documents.
        IndexIn::Store => assert!(stats.index_bytes < 16 << 10, "{stats:?}"),
    }
    assert_eq!(
        stats.store_index.is_some(),
        subject.holds_index,
        "{stats:?}"
    );
    assert_eq!(stats.memory_budget_bytes, None);
    drop(db);
    let budget = (subject.open)(OpenOptions {
        memory: Some(64 << 20),
        index_in: subject.index_in,
        ..OpenOptions::default()
    });
    assert_eq!(
        budget.unwrap().stats().unwrap().memory_budget_bytes,
        Some(64 << 20)
    );
}

fn opening_an_existing_database_only_creates_none(subject: &Subject) {
    let must_exist = || {
        (subject.open)(OpenOptions {
            must_exist: true,
            ..OpenOptions::default()
        })
    };
    for _ in 0..2 {
        let missing = must_exist();
        assert!(
            matches!(missing, Err(StoreError::NoDatabase(_))),
            "{missing:?}"
        );
    }
    let created = subject.open();
    created.insert(&doc("one", &long_text(8))).unwrap();
    drop(created);
    assert_eq!(must_exist().unwrap().stats().unwrap().documents, 1);
}

/// Each behaviour, as a test for each store.
macro_rules! conformance {
    ($($behaviour:ident),*) => {
        mod memory {
            $(#[test]
            fn $behaviour() {
                super::$behaviour(&super::Subject::memory());
            })*
        }
        mod redb {
            $(#[test]
            fn $behaviour() {
                super::$behaviour(&super::Subject::redb());
            })*
        }
        mod redb_index_in_store {
            $(#[test]
            fn $behaviour() {
                super::$behaviour(&super::Subject::redb_held());
            })*
        }
        mod redis {
            $(#[test]
            fn $behaviour() {
                if let Some(subject) = super::Subject::redis(stringify!($behaviour)) {
                    super::$behaviour(&subject);
                }
            })*
        }
        mod redis_index_in_store {
            $(#[test]
            fn $behaviour() {
                if let Some(subject) = super::Subject::redis_held(stringify!($behaviour)) {
                    super::$behaviour(&subject);
                }
            })*
        }
    };
}

conformance!(
    check_insert_get,
    delete,
    changes_reach_another_handle,
    racing_inserts_from_two_handles_make_one_unique,
    acknowledged_documents_are_there_when_opened_again,
    stats,
    opening_an_existing_database_only_creates_none
);

/// `--index-in store` on a store that holds no index is refused, saying why; a local index
/// over the memory budget is refused, naming the way out.
#[test]
fn the_index_is_where_it_can_be() {
    let subject = Subject::memory();
    let refused = (subject.open)(OpenOptions {
        index_in: IndexIn::Store,
        ..OpenOptions::default()
    });
    let Err(StoreError::IndexPlacement(why)) = refused else {
        panic!("{refused:?}");
    };
    assert!(why.contains("holds no index"), "{why}");
    for subject in [Subject::memory(), Subject::redb()] {
        subject.open().insert(&doc("one", &long_text(3))).unwrap();
        let over = (subject.open)(OpenOptions {
            memory: Some(1),
            ..OpenOptions::default()
        });
        let Err(StoreError::IndexPlacement(why)) = over else {
            panic!("{over:?}");
        };
        assert!(why.contains("--index-in store"), "{why}");
    }
    // redb: the way out it names works, within the same budget.
    let subject = Subject::redb();
    subject.open().insert(&doc("one", &long_text(3))).unwrap();
    let held = (subject.open)(OpenOptions {
        memory: Some(1),
        index_in: IndexIn::Store,
        ..OpenOptions::default()
    })
    .unwrap();
    let copy = held.check(&doc("copy", &long_text(3))).unwrap();
    assert_eq!(duplicate_kind(&copy.verdict, "one"), Some(Kind::Exact));
}
