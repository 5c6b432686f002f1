//! The log trimmed to a window: each process holding an index of its own reports its position
//! (`readers`), writers trim the log to the oldest live one but keep nothing older than the
//! window, and a process loads its index from the rows spread over the cluster and the slot
//! states, never from the whole log.
//!
//! # Why a load from the rows misses nothing
//! [`RedisStore::load_rows`] reads the log's end `P`, reports it (so the log from `P` stays while
//! it loads), then the slot counter, the states, and the rows of every slot up to the counter.
//! A document committed at or before `P` had its slot reserved before, and its row written
//! before its commit: the rows hold it and the states say it is stored (unless a delete after
//! `P` removed it: the log from `P` has that delete). A document committed after `P` is in the
//! log from `P`, which the process reads next; one found in both is inserted once.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::{Result, StoreError};
use crate::record::Entry;
use crate::redis_layout::{row, rows, LIVE, ROWS_BUCKET};
use crate::store::{Change, Cursor, Store};

use super::{corrupt, parse_stream_id, RedisStore};

/// How long the log keeps an entry by default: a day. A process away longer loads again.
pub const DEFAULT_LOG_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// How long a process's reported position holds the log back after it last reported, by
/// default; entries younger than this are never trimmed (an insert's conflict reads the log
/// from a position it read moments before).
pub const DEFAULT_READER_TIMEOUT: Duration = Duration::from_secs(60);
/// A writer trims the log after each insert whose slot is a multiple of this.
pub(super) const TRIM_EVERY: u64 = 256;
/// Rows keys read per `MGET` while loading.
const ROWS_PAGE: u64 = 64;
/// Bytes of the slot states read per `GETRANGE` while loading (4 million slots).
const STATES_PAGE: usize = 1 << 20;

/// A fresh name for this process's entry in `readers`: its process id, the time, a counter.
pub(super) fn reader_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static OPENED: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{:x}-{nanos:x}-{}",
        std::process::id(),
        OPENED.fetch_add(1, Ordering::Relaxed)
    )
}

/// The state of `slot` in the states bitmap `bits` (`BITFIELD u2 #slot`: most significant bit
/// first).
fn state_of(bits: &[u8], slot: u64) -> u8 {
    let Some(&byte) = usize::try_from(slot / 4).ok().and_then(|at| bits.get(at)) else {
        return 0;
    };
    (byte >> (6 - 2 * (slot % 4))) & 3
}

impl RedisStore {
    /// Records that this process's index reflects the log up to `at` ([`crate::redis_layout::READER`]),
    /// unless it did less than a sixth of the readers' timeout ago (`force`: whatever the time).
    pub(super) fn report(&self, at: Cursor, force: bool) -> Result<()> {
        {
            let mut beat = self.beat.lock().unwrap_or_else(|e| e.into_inner());
            let due = beat.is_none_or(|then| then.elapsed() >= self.reader_timeout / 6);
            if !(force || due) {
                return Ok(());
            }
            *beat = Some(Instant::now());
        }
        let mut invocation = self.reader_script.prepare_invoke();
        invocation
            .key(self.key("readers"))
            .arg(&self.reader)
            .arg(format!("{}-{}", at.0, at.1));
        match self.run(|conn| invocation.invoke::<i64>(conn)) {
            // A full store refuses every write, this one too. The position only holds the log
            // back for this process (a process the trim passes reloads from the rows), so the
            // reads it came with go on.
            Err(StoreError::Full(message)) => {
                tracing::warn!(%message, "this process's log position not recorded");
                Ok(())
            }
            other => other.map(drop),
        }
    }

    /// Removes this process's position from `readers` (it holds the log back no more).
    pub(super) fn leave(&self) {
        let registered = self.beat.lock().map(|beat| beat.is_some()).unwrap_or(false);
        if registered {
            let key = self.key("readers");
            let _ = self.run(|conn| {
                redis::cmd("HDEL")
                    .arg(&key)
                    .arg(&self.reader)
                    .query::<i64>(conn)
            });
        }
    }

    /// Trims the log ([`crate::redis_layout::TRIM`]); the entries removed.
    pub(super) fn trim_log(&self) -> Result<u64> {
        let mut invocation = self.trim_script.prepare_invoke();
        invocation
            .key(self.key("readers"))
            .key(self.key("log"))
            .key(self.key("last"))
            .arg(self.window.as_millis() as u64)
            .arg(self.reader_timeout.as_millis() as u64);
        self.run(|conn| invocation.invoke(conn))
    }

    /// Bytes of a SimHash in this database's rows (from its metadata), `None` before it has any.
    fn sim_len(&self) -> Result<Option<usize>> {
        if let Some(&len) = self.sim_len.get() {
            return Ok(Some(len));
        }
        let len = self
            .meta()?
            .map(|meta| meta.policy.profile.bits.count() as usize / 8);
        if let Some(len) = len {
            let _ = self.sim_len.set(len);
        }
        Ok(len)
    }

    /// Every stored document's row, from the rows and the slot states (see the module's
    /// comment); returns the log position the process must read from next.
    pub(super) fn load_rows(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        let (last, seq) = (self.key("last"), self.key("seq"));
        let at: Option<String> = self.run(|conn| redis::cmd("GET").arg(&last).query(conn))?;
        let at = at
            .as_deref()
            .map_or(Ok(Cursor::default()), parse_stream_id)?;
        self.report(at, true)?;
        let top: Option<u64> = self.run(|conn| redis::cmd("GET").arg(&seq).query(conn))?;
        let (Some(top), Some(sim_len)) = (top, self.sim_len()?) else {
            return Ok(at);
        };
        let mut states = self.all_states()?;
        for first in (0..=top / ROWS_BUCKET).step_by(ROWS_PAGE as usize) {
            let names: Vec<String> = (first..(first + ROWS_PAGE).min(top / ROWS_BUCKET + 1))
                .map(|bucket| self.keys.rows(bucket))
                .collect();
            let lists: Vec<Option<Vec<u8>>> =
                self.run(|conn| redis::cmd("MGET").arg(&names).query(conn))?;
            for list in lists.into_iter().flatten() {
                let found = rows(&list, sim_len).ok_or_else(|| corrupt("a rows key"))?;
                for entry in found {
                    if state_of(&states, entry.slot) == LIVE {
                        // A row written twice (two processes moving a database) loads once.
                        clear_state(&mut states, entry.slot);
                        sink(entry);
                    }
                }
            }
            self.report(at, false)?;
        }
        Ok(at)
    }

    /// The slot states, the whole bitmap, a page at a time.
    fn all_states(&self) -> Result<Vec<u8>> {
        let key = self.key("state");
        let mut bits = Vec::new();
        loop {
            let start = bits.len();
            let page: Vec<u8> = self.run(|conn| {
                redis::cmd("GETRANGE")
                    .arg(&key)
                    .arg(start)
                    .arg(start + STATES_PAGE - 1)
                    .query(conn)
            })?;
            let full = page.len() == STATES_PAGE;
            bits.extend(page);
            if !full {
                return Ok(bits);
            }
        }
    }

    /// Appends `entry`'s row to its rows key, then waits for a replica under strict durability.
    pub(super) fn add_row(&self, entry: &Entry, sim_len: usize) -> Result<()> {
        let key = self.keys.rows(entry.slot / ROWS_BUCKET);
        let bytes = row(entry, sim_len);
        self.run(|conn| {
            redis::cmd("APPEND").arg(&key).arg(&bytes).exec(conn)?;
            Ok(self.unreplicated(conn, &key))
        })?
        .map_or(Ok(()), Err)
    }

    /// Removes `entry`'s row from its rows key (absent: nothing to do).
    pub(super) fn remove_row(&self, entry: &Entry, sim_len: usize) -> Result<()> {
        let key = self.keys.rows(entry.slot / ROWS_BUCKET);
        let bytes = row(entry, sim_len);
        self.run(|conn| {
            self.remove_entry
                .key(&key)
                .arg(&bytes)
                .invoke::<i64>(conn)
                .map(drop)
        })
    }

    /// Writes the rows of every stored document from the log (a database of layout 4 or
    /// older, whose log was never trimmed): appended a rows key at a time. Returns the rows
    /// written.
    pub(super) fn rows_from_log(&self) -> Result<u64> {
        let Some(sim_len) = self.sim_len()? else {
            return Ok(0);
        };
        let mut live = BTreeMap::new();
        self.read_log(Cursor::default(), &mut |_, change| match change {
            Change::Insert(entry) => {
                live.insert(entry.slot, entry);
            }
            Change::Delete(slot) => {
                live.remove(&slot);
            }
        })?;
        let mut buckets: BTreeMap<u64, Vec<u8>> = BTreeMap::new();
        for entry in live.values() {
            buckets
                .entry(entry.slot / ROWS_BUCKET)
                .or_default()
                .extend(row(entry, sim_len));
        }
        for (bucket, bytes) in &buckets {
            let key = self.keys.rows(*bucket);
            self.run(|conn| {
                redis::cmd("APPEND").arg(&key).arg(bytes).exec(conn)?;
                Ok(self.unreplicated(conn, &key))
            })?
            .map_or(Ok(()), Err)?;
        }
        Ok(live.len() as u64)
    }
}

/// Marks `slot` read in the states bitmap `bits` (so a second row of it is skipped).
fn clear_state(bits: &mut [u8], slot: u64) {
    if let Some(byte) = usize::try_from(slot / 4)
        .ok()
        .and_then(|at| bits.get_mut(at))
    {
        *byte &= !(3 << (6 - 2 * (slot % 4)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_read_as_bitfield_writes_them() {
        // BITFIELD SET u2 #0 1, #1 2, #5 1: bits 01 10 00 00 | 00 01 00 00.
        let mut bits = vec![0b0110_0000, 0b0001_0000];
        assert_eq!(
            (0..8).map(|slot| state_of(&bits, slot)).collect::<Vec<_>>(),
            [1, 2, 0, 0, 0, 1, 0, 0]
        );
        assert_eq!(state_of(&bits, 1000), 0);
        clear_state(&mut bits, 5);
        assert_eq!(state_of(&bits, 5), 0);
        assert_eq!(state_of(&bits, 1), 2);
    }
}
