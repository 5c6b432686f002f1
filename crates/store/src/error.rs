//! The store crate's error type.

use std::sync::Arc;

/// The error beneath a [`StoreError`] that one failure can hand to several callers.
pub type Cause = Arc<dyn std::error::Error + Send + Sync>;

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
        /// The location as given, its password hidden ([`crate::redact`]).
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// No database is stored at this location (a directory without a database file, a Redis
    /// without this database's keys), and it was not to be created
    /// ([`crate::OpenOptions::must_exist`]).
    #[error("no neardup database at {0}")]
    NoDatabase(String),
    /// The index cannot be where it was asked to be: `--index-in store` on a store that holds
    /// no index (redb, process memory), or a local index over the memory budget.
    #[error("{0}")]
    IndexPlacement(String),
    /// The stored data is not what this version writes.
    #[error("corrupt database: {0}")]
    Corrupt(String),
    /// A stored record (or the metadata) is not the JSON this version writes.
    #[error("corrupt database: {what} does not parse: {source}")]
    Unparsable {
        /// What does not parse: a stored record, and where if known.
        what: String,
        /// The JSON parser's error.
        #[source]
        source: serde_json::Error,
    },
    /// A text could not be compressed or decompressed for storage (zstd failed).
    #[error("{what}")]
    StoredText {
        /// What failed: compressing a text, or a stored text that does not decompress.
        what: &'static str,
        /// zstd's error.
        #[source]
        source: std::io::Error,
    },
    /// The database file is damaged: redb panicked or failed reading it, or it is empty.
    #[error("corrupt database file {}: {detail}", path.display())]
    CorruptFile {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong, as far as known.
        detail: String,
    },
    /// The store cannot serve now, but may later: an I/O error of the embedded store (a full
    /// disk, or the error redb keeps reporting until the database is reopened), or a store
    /// closed until it answers a probe again (see [`crate::NearDupDb::health`]).
    #[error("the store is unavailable: {reason}")]
    Unavailable {
        /// Why, in words.
        reason: String,
        /// The error that made it so, where one did (redb's I/O error, the failure that closed
        /// the gate); shared, as one failure can reach every caller of a group commit.
        #[source]
        source: Option<Cause>,
    },
    /// The store did not answer within the store timeout; what was asked may still be done.
    #[error("the store did not answer in time: {0}")]
    Timeout(String),
    /// A write was made on a Redis master, but no replica acknowledged it within the wait (a
    /// cluster opened with strict durability): it may be lost if that master fails over. The
    /// store itself answers, so this does not close the service's gate.
    #[error("no replica acknowledged the write in time: {0}")]
    Unreplicated(String),
    /// The store may evict acknowledged documents by itself (a Redis whose `maxmemory-policy`
    /// evicts keys), and that was not allowed ([`crate::OpenOptions::allow_eviction`]); or,
    /// where it was, keys of the database were found evicted.
    #[error("{0}")]
    Eviction(String),
    /// The store is out of memory and refuses writes (a Redis at its `maxmemory` under
    /// `noeviction`): nothing was written.
    #[error("the store is full: {0}")]
    Full(String),
    /// Strict durability was asked for and the store does not fsync every acknowledged write.
    #[error("strict durability refused: {0}")]
    NotDurable(String),
    /// The embedded store failed.
    #[error("redb: {detail}")]
    Redb {
        /// What failed, with redb's message (and the file, where known).
        detail: String,
        /// redb's error; shared, as one failure can reach every caller of a group commit.
        #[source]
        source: Cause,
    },
    /// Redis failed. Shown with the password of any URL in the client's message hidden
    /// ([`crate::redact`]), in one line: the client's error already says its cause, so it is
    /// not given again as this error's source.
    #[error("redis: {}", crate::redact(&.0.to_string()))]
    Redis(redis::RedisError),
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

impl StoreError {
    /// The store cannot serve now, for `reason`, with no error beneath it (a gate closed, a
    /// file that could not be reopened).
    pub fn unavailable(reason: impl Into<String>) -> StoreError {
        StoreError::Unavailable {
            reason: reason.into(),
            source: None,
        }
    }

    /// Whether the error means "cannot be served now, retry later" rather than "failed": a
    /// connection refused, dropped or timed out, a Redis loading its data or a cluster without
    /// a master, an I/O error (a full disk), a store timeout, a committer that stopped.
    pub fn is_unavailable(&self) -> bool {
        match self {
            StoreError::Redis(error) => redis_unavailable(error),
            StoreError::Unavailable { .. }
            | StoreError::Eviction(_)
            | StoreError::Timeout(_)
            | StoreError::Unreplicated(_)
            | StoreError::Io(_)
            | StoreError::CommitterGone => true,
            _ => false,
        }
    }

    /// What went wrong without the variant's own words ("the store is unavailable: ",
    /// "redb: "): the text that a copy of this error for another caller carries, and the reason
    /// a closed gate gives.
    pub(crate) fn detail(&self) -> String {
        match self {
            StoreError::Unavailable { reason, .. } => reason.clone(),
            StoreError::Redb { detail, .. } => detail.clone(),
            other => other.to_string(),
        }
    }

    /// Whether the store is not answering as it should (an unavailable error other than a
    /// write left unreplicated, which the store answered): what closes the gate.
    pub(crate) fn closes_gate(&self) -> bool {
        self.is_unavailable() && !matches!(self, StoreError::Unreplicated(_))
    }

    /// Whether a write that failed so may be stored all the same: a timeout (it may finish
    /// later) or a write no replica acknowledged (it is on the master).
    pub(crate) fn may_be_stored(&self) -> bool {
        matches!(self, StoreError::Timeout(_) | StoreError::Unreplicated(_))
    }

    /// The error of a call on the redb file at `path`, naming the file if its message does not
    /// (`doing`: what was being done, e.g. `cannot open`).
    pub(crate) fn naming(self, path: &std::path::Path, doing: &str) -> StoreError {
        let file = path.display();
        match self {
            StoreError::Redb { detail, source } => StoreError::Redb {
                detail: format!("{doing} {file}: {detail}"),
                source,
            },
            StoreError::Corrupt(detail) => StoreError::Corrupt(format!("{file}: {detail}")),
            StoreError::Unparsable { what, source } => StoreError::Unparsable {
                what: format!("{what} in {file}"),
                source,
            },
            other => other,
        }
    }
}

impl From<redis::RedisError> for StoreError {
    fn from(error: redis::RedisError) -> Self {
        StoreError::Redis(error)
    }
}

/// Whether a Redis error means the server cannot serve now (see [`StoreError::is_unavailable`]).
pub(crate) fn redis_unavailable(error: &redis::RedisError) -> bool {
    use redis::{ErrorKind, ServerErrorKind};
    error.is_io_error()
        || error.is_connection_refusal()
        || error.is_connection_dropped()
        || error.is_timeout()
        || matches!(
            error.kind(),
            ErrorKind::Server(
                ServerErrorKind::BusyLoading
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::ClusterDown
                    | ServerErrorKind::MasterDown
            )
        )
}

/// Every redb error type converts through [`redb::Error`]: an I/O error (a full disk) or the
/// "previous I/O error" redb reports after one is [`StoreError::Unavailable`] (the store reopens
/// the database), anything else [`StoreError::Redb`]; either keeps redb's error as its source.
macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(error: $t) -> Self {
                StoreError::from(redb::Error::from(error))
            }
        }
    )*};
}

impl From<redb::Error> for StoreError {
    fn from(error: redb::Error) -> Self {
        let unavailable = matches!(error, redb::Error::Io(_) | redb::Error::PreviousIo);
        let detail = error.to_string();
        let source: Cause = Arc::new(error);
        if unavailable {
            StoreError::Unavailable {
                reason: format!("redb: {detail}"),
                source: Some(source),
            }
        } else {
            StoreError::Redb { detail, source }
        }
    }
}

from_redb!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

impl From<serde_json::Error> for StoreError {
    fn from(source: serde_json::Error) -> Self {
        StoreError::Unparsable {
            what: "a stored record".into(),
            source,
        }
    }
}

/// Results of this crate.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::{Cause, StoreError};
    use std::error::Error;

    /// redb's error beneath `error`, if it is there.
    fn redb_source(error: &StoreError) -> Option<&redb::Error> {
        let cause = error.source()?.downcast_ref::<Cause>()?;
        cause.downcast_ref::<redb::Error>()
    }

    #[test]
    fn a_redb_failure_keeps_redb_s_error_as_its_source() {
        let error = StoreError::from(redb::Error::DatabaseAlreadyOpen);
        assert!(matches!(error, StoreError::Redb { .. }), "{error:?}");
        assert!(matches!(
            redb_source(&error),
            Some(redb::Error::DatabaseAlreadyOpen)
        ));
        let named = error.naming(std::path::Path::new("db/neardup.redb"), "cannot open");
        assert!(named
            .to_string()
            .starts_with("redb: cannot open db/neardup.redb: "));
        assert!(
            redb_source(&named).is_some(),
            "naming the file keeps the source"
        );
    }

    #[test]
    fn a_redb_io_error_is_unavailable_and_keeps_its_source() {
        let full = std::io::Error::other("No space left on device");
        let error = StoreError::from(redb::Error::Io(full));
        assert!(error.is_unavailable());
        assert_eq!(
            error.to_string(),
            "the store is unavailable: redb: I/O error: No space left on device"
        );
        assert!(matches!(redb_source(&error), Some(redb::Error::Io(_))));
        assert_eq!(error.detail(), "redb: I/O error: No space left on device");
        assert!(StoreError::unavailable("closed").source().is_none());
    }
}
