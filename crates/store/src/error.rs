//! The store crate's error type.

/// Why a database operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database was created with another policy.
    #[error(
        "the database at {location} was created with {stored}; it cannot be opened with {wanted}"
    )]
    ProfileMismatch {
        /// Where the database is.
        location: String,
        /// What the database records.
        stored: String,
        /// What the caller asked for.
        wanted: String,
    },
    /// The policy cannot be served online (its candidate search is batch-only).
    #[error("invalid policy: {0}")]
    InvalidPolicy(String),
    /// The store went back in time: its change log is behind what this process has already
    /// applied (a Redis restarted without persistence, or restored from an older snapshot).
    /// [`crate::NearDupDb`] recovers by reloading its index from the store.
    #[error("the store went back in time: {0}")]
    Reset(String),
    /// The store is reachable but cannot take the request now (writers kept racing past a
    /// bounded number of retries); the caller may retry later.
    #[error("the store is busy: {0}")]
    Busy(String),
    /// A document with this id is stored already.
    #[error("a document with id {0:?} is stored already")]
    IdExists(String),
    /// The document is not acceptable (empty text, empty id, ...).
    #[error("invalid document: {0}")]
    InvalidDocument(String),
    /// The database location could not be understood.
    #[error("invalid database location {spec:?}: {reason}")]
    InvalidSpec {
        /// The location as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The stored data is not what this version writes.
    #[error("corrupt database: {0}")]
    Corrupt(String),
    /// The embedded store failed.
    #[error("redb: {0}")]
    Redb(String),
    /// Redis failed.
    #[error("redis: {0}")]
    Redis(#[from] redis::RedisError),
    /// Fingerprinting or the profile failed.
    #[error(transparent)]
    Core(#[from] neardup_core::Error),
    /// The in-memory index failed.
    #[error(transparent)]
    Index(#[from] neardup_index::IndexError),
    /// A file-system error.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// The background committer stopped (the process is shutting down or a commit thread died).
    #[error("the store's commit thread has stopped")]
    CommitterGone,
}

/// Every redb error type converts through its message.
macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(error: $t) -> Self {
                StoreError::Redb(error.to_string())
            }
        }
    )*};
}

from_redb!(
    redb::Error,
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

impl From<serde_json::Error> for StoreError {
    fn from(error: serde_json::Error) -> Self {
        StoreError::Corrupt(error.to_string())
    }
}

/// Results of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;
