//! The multi-writer protocol (catch-up, conflicts, retries) on the in-memory store, and the
//! policy a database records: verification online, migration of format 2.

mod common;

use common::doc;
use std::sync::Mutex;

use neardup_dedup::{DuplicateOf, Kind, Measure, Policy};
use neardup_store::{
    Change, Cursor, Entry, Insert, InsertMode, MemoryStore, Meta, NearDupDb, OpenOptions, Record,
    RedbStore, Store, StoreError, Verdict, DEFAULT_STORE_TIMEOUT,
};

/// A long story and a copy with one word changed (Jaccard of 5-shingles about 0.97).
fn story() -> (String, String) {
    let base: String = (0..40)
        .map(|i| format!("sentence {i} of the council report on roads and schools. "))
        .collect();
    let edited = base.replace("sentence 17 ", "sentence seventeen ");
    (base, edited)
}

fn open(store: impl Store + 'static) -> NearDupDb {
    NearDupDb::open(Box::new(store), OpenOptions::default()).unwrap()
}

/// Whether `verdict` says "a near duplicate of `of`".
fn is_near_duplicate_of(verdict: &Verdict, of: &str) -> bool {
    verdict
        .duplicate()
        .is_some_and(|d| d.kind == Kind::Near && d.duplicate_of == of)
}

/// A store that lets another writer insert just before its own first insert: the race two
/// processes run when both check a document before either inserts it.
struct Racing {
    inner: MemoryStore,
    before_first_insert: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl Store for Racing {
    fn location(&self) -> String {
        self.inner.location()
    }
    fn init_meta(&self, meta: &Meta) -> neardup_store::Result<Meta> {
        self.inner.init_meta(meta)
    }
    fn meta(&self) -> neardup_store::Result<Option<Meta>> {
        self.inner.meta()
    }
    fn replace_meta(&self, meta: &Meta) -> neardup_store::Result<()> {
        self.inner.replace_meta(meta)
    }
    fn load(&self, sink: &mut dyn FnMut(Entry)) -> neardup_store::Result<Cursor> {
        self.inner.load(sink)
    }
    fn changes(
        &self,
        after: Cursor,
        sink: &mut dyn FnMut(Cursor, Change),
    ) -> neardup_store::Result<Cursor> {
        self.inner.changes(after, sink)
    }
    fn insert(&self, record: Record, seen: Cursor) -> neardup_store::Result<Insert> {
        let race = self.before_first_insert.lock().unwrap().take();
        if let Some(race) = race {
            race();
        }
        self.inner.insert(record, seen)
    }
    fn delete(&self, id: &str) -> neardup_store::Result<Option<Record>> {
        self.inner.delete(id)
    }
    fn get(&self, id: &str) -> neardup_store::Result<Option<Record>> {
        self.inner.get(id)
    }
    fn get_slots(&self, slots: &[u64]) -> neardup_store::Result<Vec<Option<Record>>> {
        self.inner.get_slots(slots)
    }
    fn len(&self) -> neardup_store::Result<u64> {
        self.inner.len()
    }
    fn probe(&self) -> neardup_store::Result<()> {
        self.inner.probe()
    }
    fn durability(&self) -> neardup_store::Result<neardup_store::Durability> {
        self.inner.durability()
    }
}

#[test]
fn a_stale_insert_conflicts_and_the_retry_sees_the_winner() {
    let store = MemoryStore::new("race");
    let (base, edited) = story();
    let other = open(store.clone());
    let racing = Racing {
        inner: store.clone(),
        before_first_insert: Mutex::new(Some(Box::new(move || {
            assert!(other.insert(&doc("winner", &edited)).unwrap().inserted);
        }))),
    };
    let loser = open(racing);
    // The loser checked (unique), then found the store moved on: its insert was refused, it
    // caught up and judged again, and now the document is a near-duplicate of the winner.
    let outcome = loser
        .check_and_insert(&doc("loser", &base), InsertMode::IfUnique)
        .unwrap();
    assert!(!outcome.inserted);
    assert!(
        is_near_duplicate_of(&outcome.verdict, "winner"),
        "{outcome:?}"
    );
    assert_eq!(store.len().unwrap(), 1);
}

#[test]
fn candidates_are_verified_and_explained() {
    let db = open(MemoryStore::new("verify"));
    let (base, edited) = story();
    db.insert(&doc("a", &base)).unwrap();
    let near = db.check(&doc("b", &edited)).unwrap();
    let Some(DuplicateOf {
        kind: Kind::Near,
        evidence,
        ..
    }) = near.verdict.duplicate().cloned()
    else {
        panic!("{near:?}");
    };
    assert_eq!(evidence.measure, Measure::Jaccard);
    assert!(
        evidence.value >= 0.9 && evidence.threshold == 0.9,
        "{evidence:?}"
    );
    assert_eq!(near.matches[0].kind, Kind::Near);
    // Within k but under the Jaccard threshold: unique, as the batch run decides.
    let policy = Policy::default();
    let loose = base.replace("council", "committee");
    let fingerprinter = neardup_core::Fingerprinter::new(policy.profile.clone()).unwrap();
    let decision = policy
        .decide(
            &neardup_dedup::Side::new(
                &fingerprinter.fingerprint(&base),
                Some(&fingerprinter.feature_set(&base)),
            ),
            &neardup_dedup::Side::new(
                &fingerprinter.fingerprint(&loose),
                Some(&fingerprinter.feature_set(&loose)),
            ),
        )
        .unwrap();
    let online = db.check(&doc("c", &loose)).unwrap();
    assert_eq!(
        decision.is_duplicate(),
        online.verdict != Verdict::Unique,
        "{decision:?} {online:?}"
    );
}

#[test]
fn batch_only_policies_are_refused_online() {
    let overlap = Policy {
        method: neardup_dedup::Method::Overlap,
        verify: Some(neardup_dedup::VerifyMeasure::Containment),
        ..Policy::default()
    };
    let error = NearDupDb::open(
        Box::new(MemoryStore::new("overlap")),
        OpenOptions {
            policy: Some(overlap),
            ..OpenOptions::default()
        },
    )
    .unwrap_err();
    assert!(matches!(error, StoreError::InvalidPolicy(_)), "{error}");
}

#[test]
fn a_format_2_database_is_refused_then_migrated() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = RedbStore::open(dir.path(), DEFAULT_STORE_TIMEOUT).unwrap();
        let mut old = Meta::new(Policy::simhash(neardup_core::Profile::web(), 3));
        old.version = 2;
        store.init_meta(&old).unwrap();
    }
    let open = || {
        NearDupDb::open(
            Box::new(RedbStore::open(dir.path(), DEFAULT_STORE_TIMEOUT).unwrap()),
            OpenOptions::default(),
        )
    };
    let error = open().unwrap_err().to_string();
    assert!(error.contains("neardup index migrate"), "{error}");
    let migrated =
        NearDupDb::migrate(&RedbStore::open(dir.path(), DEFAULT_STORE_TIMEOUT).unwrap()).unwrap();
    assert_eq!(
        migrated.policy,
        Policy::simhash(neardup_core::Profile::web(), 3)
    );
    let db = open().unwrap();
    assert_eq!(db.policy().k, 3);
}

#[test]
fn a_store_restarted_empty_is_reloaded_not_retried_for_ever() {
    let store = MemoryStore::new("restart");
    let db = open(store.clone());
    let (base, edited) = story();
    db.insert(&doc("before", &base)).unwrap();
    // The store restarts without its data (a Redis without persistence).
    store.clear();
    // The next insert does not conflict for ever: the database sees the store went back,
    // reloads what the store holds (nothing), writes its metadata again and goes on.
    let outcome = db
        .check_and_insert(&doc("after", &edited), InsertMode::IfUnique)
        .unwrap();
    assert_eq!((outcome.verdict, outcome.inserted), (Verdict::Unique, true));
    assert_eq!(store.len().unwrap(), 1);
    assert_eq!(db.indexed(), 1);
    assert!(store.meta().unwrap().is_some());
    // A second process opening the store now sees the same database.
    let other = open(store.clone());
    assert!(other.check(&doc("x", &edited)).unwrap().verdict != Verdict::Unique);
}
