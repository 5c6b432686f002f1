//! The [`Store`] trait: what must survive a crash, behind one interface for redb and Redis.

use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Duration;

use crate::durability::Durability;
use crate::error::{Result, StoreError};
use crate::meta::Meta;
use crate::record::{Entry, Record};

/// A position in a store's log of changes. Stores with a single writer (redb) always report
/// the default position; Redis reports the id of the last stream entry seen.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cursor(pub u64, pub u64);

/// One change another writer made, as seen when catching up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// A document was inserted.
    Insert(Entry),
    /// The document in this slot was deleted.
    Delete(u64),
}

/// What [`Store::insert`] did.
#[derive(Debug)]
pub enum Insert {
    /// Accepted: stored under `slot`; durable once `durable` resolves. `cursor` is the store's
    /// position just after this insert.
    Accepted {
        /// The slot the store gave the document.
        slot: u64,
        /// The store's position after the insert.
        cursor: Cursor,
        /// Resolves when the insert is durable.
        durable: Durable,
    },
    /// Another writer changed the store since the caller's position: catch up and retry.
    Conflict,
    /// A document with this id is stored already.
    IdExists,
}

/// Resolves when a write is durable: at once, or when a group commit completes.
#[derive(Debug)]
pub struct Durable(Option<(Receiver<Result<()>>, Duration)>);

impl Durable {
    /// A write that is durable already.
    pub fn done() -> Durable {
        Durable(None)
    }

    /// A write that is durable when `receiver` yields `Ok`, waited for at most `timeout`.
    pub fn pending(receiver: Receiver<Result<()>>, timeout: Duration) -> Durable {
        Durable(Some((receiver, timeout)))
    }

    /// Waits until the write is durable, or fails if it could not be made so; fails with
    /// [`StoreError::Timeout`] if that is not known within the timeout (it may still be made
    /// durable later).
    pub fn wait(self) -> Result<()> {
        let Some((receiver, timeout)) = self.0 else {
            return Ok(());
        };
        reply_within(&receiver, timeout, "the commit")?
    }
}

/// The reply on `receiver` within `timeout`: [`StoreError::Timeout`] (naming `what`) after it,
/// [`StoreError::CommitterGone`] if the sender is gone.
pub(crate) fn reply_within<T>(receiver: &Receiver<T>, timeout: Duration, what: &str) -> Result<T> {
    receiver.recv_timeout(timeout).map_err(|error| match error {
        RecvTimeoutError::Timeout => {
            StoreError::Timeout(format!("{what} did not finish within {timeout:?}"))
        }
        RecvTimeoutError::Disconnected => StoreError::CommitterGone,
    })
}

/// Durable storage of records and of the compact rows the in-memory index is built from.
///
/// Writes go through [`crate::NearDupDb`], which holds its lock around check and insert; a store
/// shared by several processes (Redis) detects concurrent writers by [`Cursor`]: an insert made
/// from a stale position is refused with [`Insert::Conflict`].
pub trait Store: Send + Sync {
    /// Where the store is, for messages (a directory or a Redis URL).
    fn location(&self) -> String;

    /// The metadata, written at creation if absent. Returns what is stored (which may have
    /// been written by another process first).
    fn init_meta(&self, meta: &Meta) -> Result<Meta>;

    /// The stored metadata, if the database has been created.
    fn meta(&self) -> Result<Option<Meta>>;

    /// Replaces the stored metadata (a format migration).
    fn replace_meta(&self, meta: &Meta) -> Result<()>;

    /// Calls `sink` with every live document's compact row; returns the position reached.
    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor>;

    /// Calls `sink` with every change after `after` and its position; returns the position
    /// reached. Fails with [`crate::StoreError::Reset`] when the store's own position is behind
    /// `after` (it lost changes this process has seen).
    fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor>;

    /// Inserts `record` (its `slot` is ignored: the store assigns one) if the store is still at
    /// position `seen`.
    fn insert(&self, record: Record, seen: Cursor) -> Result<Insert>;

    /// Deletes the document `id`, durably; returns its record if it was stored.
    fn delete(&self, id: &str) -> Result<Option<Record>>;

    /// The record of document `id`.
    fn get(&self, id: &str) -> Result<Option<Record>>;

    /// The records in these slots (`None` for a slot deleted meanwhile).
    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>>;

    /// Number of stored documents.
    fn len(&self) -> Result<u64>;

    /// True if no document is stored.
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Checks that the store can serve reads and writes now (after it was unavailable): Redis
    /// answers a `PING`, redb reopens its file if an I/O error broke it and commits a write.
    fn probe(&self) -> Result<()>;

    /// What an acknowledged write survives, as the store is configured now.
    fn durability(&self) -> Result<Durability>;

    /// The key-eviction policy of the store if it may evict this database's keys by itself
    /// (Redis with a `maxmemory` and a `maxmemory-policy` of `allkeys-*`), `None` if it never
    /// does (redb, process memory, Redis with `noeviction` or `volatile-*`: no key of a database
    /// has a TTL, and those policies evict only keys with one).
    fn eviction(&self) -> Result<Option<String>> {
        Ok(None)
    }
}
