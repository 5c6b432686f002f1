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

    /// Whether the metadata is stored, asked without counting as a use of it. A store that
    /// evicts its least recently (or frequently) used keys ([`Store::eviction`]) then evicts
    /// the metadata, never read after open, among a database's first keys: its absence is how
    /// evictions are found, which a read that kept it recently used would hide for ever.
    fn has_meta(&self) -> Result<bool> {
        Ok(self.meta()?.is_some())
    }

    /// Replaces the stored metadata (a format migration).
    fn replace_meta(&self, meta: &Meta) -> Result<()>;

    /// Calls `sink` with every live document's compact row; returns the position reached.
    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor>;

    /// Calls `sink` with every change after `after` and its position; returns the position
    /// reached. Fails with [`crate::StoreError::Reset`] when the store's own position is behind
    /// `after` (it lost changes this process has seen).
    fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor>;

    /// Records that this process's index reflects the store's changes up to `at` (a store
    /// whose log is trimmed keeps it from there while this process reports; Redis). Called
    /// after each catch-up; the store decides how often it writes.
    fn reader_at(&self, at: Cursor) -> Result<()> {
        let _ = at;
        Ok(())
    }

    /// Removes what inserts never stored left, once their writer is taken for dead (a store
    /// whose insert writes several keys before it commits: Redis), if a pass is due; returns
    /// the rows of those it removed, whose block entries the caller removes (it knows the
    /// plan). Default: nothing to remove.
    fn sweep(&self) -> Result<Vec<Entry>> {
        Ok(Vec::new())
    }

    /// Inserts `record` (its `slot` is ignored, unless a store holding blocks reserved it with
    /// [`Store::reserve_slot`]: the store assigns one otherwise) if the store is still at
    /// position `seen`.
    fn insert(&self, record: Record, seen: Cursor) -> Result<Insert>;

    /// Deletes the document `id`, durably; returns its record if it was stored.
    fn delete(&self, id: &str) -> Result<Option<Record>>;

    /// [`Store::delete`] of `id` with its block entry removed from each of its keys (`blocks`
    /// names them from the record). The default deletes the record, then removes the entries
    /// (Redis: an entry left by a failure there names a slot the store no longer holds, which
    /// checks skip; it is logged); redb does both in one commit.
    fn delete_with_blocks(
        &self,
        id: &str,
        blocks: &dyn Fn(&Record) -> BlockWrite,
    ) -> Result<Option<Record>> {
        let deleted = self.delete(id)?;
        if let Some(record) = &deleted {
            let (keys, entry) = blocks(record);
            if let Err(error) = self.remove_blocks(&keys, &entry) {
                tracing::warn!(%error, id, "block entries of a deleted document are left");
            }
        }
        Ok(deleted)
    }

    /// Bytes of its own page cache the store holds in this process, out of the budget
    /// ([`crate::OpenOptions::store_cache_bytes`]): redb's cache, sized so; 0 for a store
    /// that keeps none here (Redis, process memory).
    fn cache_bytes(&self) -> u64 {
        0
    }

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

    /// Whether the store can hold the SimHash index itself as block keys, so a process may
    /// check against it instead of an index of its own ([`crate::IndexIn::Store`]): Redis (every
    /// insert writes them, whatever index its process reads) and redb (once a process asked for
    /// them: see [`Store::blocks_when_asked`]). Process memory does not.
    fn holds_blocks(&self) -> bool {
        false
    }

    /// Whether the block keys are built only when a process first opens the database with the
    /// index in the store, and written by every insert from then on (redb: one process owns the
    /// file, so no other writer can have opened it before the keys were recorded), instead of
    /// by every insert from the start (Redis: a writer that opened the database earlier must
    /// already be writing them).
    fn blocks_when_asked(&self) -> bool {
        false
    }

    /// [`Store::insert`] of `record`, in the slot [`Store::reserve_slot`] gave it, with its block
    /// entry `blocks` appended to each of its keys. The default writes the entries first, then
    /// the record (Redis: see the `held` module for why a check stays atomic); redb writes both
    /// in one commit, so an insert and its entries are durable together or not at all.
    fn insert_with_blocks(
        &self,
        record: Record,
        seen: Cursor,
        blocks: &BlockWrite,
    ) -> Result<Insert> {
        self.add_blocks(&blocks.0, &blocks.1)?;
        self.insert(record, seen)
    }

    /// The block plan the store's keys were written for (`None` before any were: then they
    /// are built), or an error for a store that holds no index.
    fn blocks_plan(&self) -> Result<Option<String>> {
        Err(no_blocks(self))
    }

    /// Records that block keys of `plan` exist for every stored document; returns the plan
    /// recorded (another process's, if it recorded one first).
    fn set_blocks_plan(&self, plan: &str) -> Result<String> {
        let _ = plan;
        Err(no_blocks(self))
    }

    /// The store's position now, without reading its changes.
    fn position(&self) -> Result<Cursor> {
        Err(no_blocks(self))
    }

    /// The raw lists held under these block keys `(table, key)`, in order (empty for a key
    /// never written); each a run of fixed-size entries (see the store crate's `held` module).
    fn read_blocks(&self, keys: &[(u32, u64)]) -> Result<Vec<Vec<u8>>> {
        let _ = keys;
        Err(no_blocks(self))
    }

    /// A slot for an insert to come: its block entries are written under it before the insert
    /// names it, and [`Store::insert`] of a record with this slot uses it.
    fn reserve_slot(&self) -> Result<u64> {
        Err(no_blocks(self))
    }

    /// Appends `entry` to the list of each block key.
    fn add_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        let _ = (keys, entry);
        Err(no_blocks(self))
    }

    /// [`Store::add_blocks`] of each (keys, entry) of a batch, in fewer round trips where the
    /// store can (building the keys of a whole database).
    fn add_blocks_batch(&self, batch: &[BlockWrite]) -> Result<()> {
        batch
            .iter()
            .try_for_each(|(keys, entry)| self.add_blocks(keys, entry))
    }

    /// [`Store::read_blocks`], and the highest slot reserved when they were read (0 before
    /// any): every document the store's position showed before has a slot at most this.
    fn read_blocks_reserved(&self, keys: &[(u32, u64)]) -> Result<(Vec<Vec<u8>>, u64)> {
        let _ = keys;
        Err(no_blocks(self))
    }

    /// Removes `entry` from the list of each block key (absent: nothing to do).
    fn remove_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        let _ = (keys, entry);
        Err(no_blocks(self))
    }

    /// The key-eviction policy of the store if it may evict this database's keys by itself
    /// (Redis with a `maxmemory` and a `maxmemory-policy` of `allkeys-*`), `None` if it never
    /// does (redb, process memory, Redis with `noeviction` or `volatile-*`: no key of a database
    /// has a TTL, and those policies evict only keys with one).
    fn eviction(&self) -> Result<Option<String>> {
        Ok(None)
    }
}

/// One document's block entry and the keys `(table, key)` it is appended to.
pub type BlockWrite = (Vec<(u32, u64)>, Vec<u8>);

/// The error of a block-index call on a store that holds no index.
fn no_blocks(store: &(impl Store + ?Sized)) -> StoreError {
    StoreError::IndexPlacement(format!(
        "{} holds no index: the index is in the serving process (--index-in local)",
        store.location()
    ))
}
