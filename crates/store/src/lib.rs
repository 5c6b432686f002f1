//! neardup-store: what must survive a crash, and the online "have we seen this, or nearly?".
//!
//! A [`NearDupDb`] is a [`Store`] (durable records, each with its text compressed for
//! verification), plus the [`neardup_dedup::Policy`] it decides by (stored with the data:
//! every door opens it with no options, and opening with another policy is an error), plus an
//! in-memory index (multi-probe SimHash block tables and each document's digest key, rebuilt at open
//! from compact rows; exact duplicates are the distance-0 matches with the same digest). It
//! answers [`NearDupDb::check`] with a [`Verdict`] and the matching documents, candidates
//! within the policy's k verified as the batch engine verifies them, and does check-and-insert
//! atomically ([`NearDupDb::check_and_insert`]).
//!
//! Stores: [`RedbStore`] (embedded, the default: a directory, nothing to install),
//! [`RedisStore`] (several processes share one database) and [`MemoryStore`] (one process's
//! memory, with the shared stores' multi-writer protocol). [`open_db`] opens either from a
//! location string.
//!
//! Faults: every store call takes at most [`OpenOptions::timeout`]; a store that is
//! unavailable (timed out, unreachable, a full disk) is answered at once with
//! [`StoreError::Unavailable`] until a probe shows it is back (see [`NearDupDb::health`]); what
//! an acknowledged write survives is read at open ([`Durability`]) and can be required
//! ([`OpenOptions::strict_durability`]).
//!
//! ```
//! use neardup_dedup::Kind;
//! use neardup_store::{open_db, InsertMode, NewDocument, OpenOptions, Verdict};
//! let dir = tempfile::tempdir().unwrap();
//! let db = open_db(dir.path().to_str().unwrap(), OpenOptions::default()).unwrap();
//! let doc = |id: &str, text: &str| NewDocument {
//!     id: Some(id.into()),
//!     text: text.into(),
//!     ..NewDocument::default()
//! };
//! let text = "The council approved the new budget on Monday after a long debate about schools, \
//!     roads and the library. The mayor said the vote was the end of a hard year, and that the \
//!     repairs to the town hall would start in the spring.";
//! let first = db.check_and_insert(&doc("a", text), InsertMode::IfUnique).unwrap();
//! assert_eq!(first.verdict, Verdict::Unique);
//! let again = db.check(&doc("b", text)).unwrap();
//! let duplicate = again.verdict.duplicate().unwrap();
//! assert_eq!((duplicate.duplicate_of.as_str(), duplicate.kind), ("a", Kind::Exact));
//! let edited = text.replace("spring", "summer");
//! let near = db.check(&doc("c", &edited)).unwrap();
//! let duplicate = near.verdict.duplicate().unwrap();
//! assert_eq!((duplicate.duplicate_of.as_str(), duplicate.kind), ("a", Kind::Near));
//! ```

mod corpus;
mod db;
mod durability;
mod error;
mod eviction;
mod gate;
mod held;
mod memory;
mod memory_store;
mod meta;
mod record;
mod redact;
mod redb_store;
mod redis_conn;
mod redis_layout;
mod redis_store;
mod set_cache;
mod spec;
mod store;
mod verdict;

pub use corpus::DocumentError;
pub use db::{
    NearDupDb, NewDocument, OpenOptions, Stats, DEFAULT_STORE_TIMEOUT, MAX_MATCHES, SWEEP_EVERY,
};
pub use durability::Durability;
pub use error::{Cause, Result, StoreError};
pub use eviction::EVICTION_CHECK_INTERVAL;
pub use gate::PROBE_INTERVAL;
pub use held::IndexIn;
pub use memory_store::MemoryStore;
pub use meta::{Meta, FORMAT_VERSION};
pub use record::{digest_key, Entry, Record, StoredText};
pub use redact::redact;
pub use redb_store::{RedbStore, CHUNK_ROWS, MAX_BATCH};
pub use redis_store::{
    RedisStore, DEFAULT_LOG_WINDOW, DEFAULT_READER_TIMEOUT, DEFAULT_SWEEP_AFTER,
};
pub use spec::{open_db, open_store, DbSpec};
pub use store::{BlockWrite, Change, Cursor, Durable, Insert, Store};
pub use verdict::{CheckOutcome, DocMatch, InsertMode, Verdict};
