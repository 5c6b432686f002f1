//! [`Gated`]: a store behind a gate that closes when the store is unavailable, so that callers
//! are answered at once instead of each waiting out the store timeout, and that opens again
//! when a probe succeeds: recovery without a restart.
//!
//! Every store call goes through [`Gated::call`]. A call failing with an error that means
//! "unavailable" ([`StoreError::is_unavailable`]: a timeout, a refused or dropped connection,
//! an I/O error such as a full disk) closes the gate; a write the store made but no replica
//! acknowledged ([`StoreError::Unreplicated`]) does not: the store answers, and reads go on. While it is closed, calls fail at once
//! with [`StoreError::Unavailable`], except one every [`PROBE_INTERVAL`]: that one first runs
//! [`Store::probe`] (Redis: `PING`; redb: reopen the file if an I/O error broke it, then commit
//! a small write) and, if the probe succeeds, opens the gate and goes on. So while the store is
//! unavailable a request waits at most one store timeout (its own call or the probe), and the
//! service comes back by itself within about a second of the store.
//!
//! The gate also watches the store's eviction policy ([`EvictionWatch`]): read again by a call
//! at most once an [`crate::EVICTION_CHECK_INTERVAL`] and by every probe, a policy that may
//! evict documents (not allowed) closes the gate like an unavailable store, and it opens again
//! once the policy is fixed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::durability::Durability;
use crate::error::{Result, StoreError};
use crate::eviction::EvictionWatch;
use crate::meta::Meta;
use crate::record::{Entry, Record};
use crate::store::{BlockWrite, Change, Cursor, Insert, Store};

/// How often a closed gate lets one call probe the store.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// Whether calls reach the store.
#[derive(Debug)]
enum State {
    Open,
    /// Unavailable because of `reason`; the next probe may start at `next_probe`.
    Closed {
        reason: String,
        next_probe: Instant,
    },
}

/// A store behind a gate (see the module documentation).
pub(crate) struct Gated {
    inner: Box<dyn Store>,
    state: Mutex<State>,
    eviction: EvictionWatch,
    /// Set once the database's metadata is known to be stored: from then on, its absence
    /// under an evicting policy means keys were evicted.
    has_meta: AtomicBool,
}

impl Gated {
    /// `inner` behind an open gate; a store that may evict keys is refused unless
    /// `allow_eviction`.
    pub(crate) fn new(inner: Box<dyn Store>, allow_eviction: bool) -> Gated {
        Gated {
            inner,
            state: Mutex::new(State::Open),
            eviction: EvictionWatch::new(allow_eviction),
            has_meta: AtomicBool::new(false),
        }
    }

    /// Records that the database's metadata is stored (see [`EvictionWatch::check`]).
    pub(crate) fn meta_stored(&self) {
        self.has_meta.store(true, Ordering::Relaxed);
    }

    /// Reads the store's eviction policy now (see [`EvictionWatch::check`]); the gate is left
    /// as it is (the caller may [`Gated::watch`] the result).
    pub(crate) fn check_eviction(&self) -> Result<()> {
        self.check_eviction_if(true)
    }

    fn check_eviction_if(&self, force: bool) -> Result<()> {
        let expects_meta = self.has_meta.load(Ordering::Relaxed);
        self.eviction
            .check(self.inner.as_ref(), force, expects_meta)
    }

    /// The evicting policy the store has (allowed), if any.
    pub(crate) fn allowed_eviction(&self) -> Option<String> {
        self.eviction.policy()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the store if the gate is open or a due probe opens it; closes the gate if it
    /// fails as unavailable.
    fn call<T>(&self, f: impl FnOnce(&dyn Store) -> Result<T>) -> Result<T> {
        self.admit()?;
        self.watch(f(self.inner.as_ref()))
    }

    /// Passes `result` on, closing the gate if it is an error that means unavailable (for the
    /// results of store work finished outside a call, such as a group commit).
    pub(crate) fn watch<T>(&self, result: Result<T>) -> Result<T> {
        if let Err(error) = &result {
            if error.closes_gate() {
                self.close(error);
            }
        }
        result
    }

    /// Ok if the store can serve now: a closed gate is probed when due (else the reason it
    /// closed), an open one asks the store for its document count.
    pub(crate) fn health(&self) -> Result<()> {
        self.call(|store| store.len().map(drop))
    }

    fn close(&self, error: &StoreError) {
        let reason = error.detail();
        let mut state = self.state();
        if matches!(*state, State::Open) {
            tracing::warn!(location = %self.inner.location(), %reason, "store unavailable: answering 503 until a probe succeeds");
        }
        *state = State::Closed {
            reason,
            next_probe: Instant::now() + PROBE_INTERVAL,
        };
    }

    /// Ok if the gate is open, or closed and this caller's probe opened it.
    fn admit(&self) -> Result<()> {
        let mut state = self.state();
        let State::Closed { reason, next_probe } = &mut *state else {
            drop(state);
            return self.watch(self.check_eviction_if(false));
        };
        let now = Instant::now();
        if now < *next_probe {
            return Err(StoreError::unavailable(reason.clone()));
        }
        // This caller probes; the others fail at once meanwhile.
        *next_probe = now + PROBE_INTERVAL;
        drop(state);
        match self
            .inner
            .probe()
            .and_then(|()| self.check_eviction_if(true))
        {
            Ok(()) => {
                *self.state() = State::Open;
                tracing::info!(location = %self.inner.location(), "store available again");
                Ok(())
            }
            Err(error) => {
                self.close(&error);
                Err(StoreError::Unavailable {
                    reason: error.detail(),
                    source: Some(Arc::new(error)),
                })
            }
        }
    }
}

impl Store for Gated {
    fn location(&self) -> String {
        self.inner.location()
    }

    fn init_meta(&self, meta: &Meta) -> Result<Meta> {
        self.call(|store| store.init_meta(meta))
    }

    fn meta(&self) -> Result<Option<Meta>> {
        self.call(|store| store.meta())
    }

    fn has_meta(&self) -> Result<bool> {
        self.call(|store| store.has_meta())
    }

    fn replace_meta(&self, meta: &Meta) -> Result<()> {
        self.call(|store| store.replace_meta(meta))
    }

    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        self.call(|store| store.load(sink))
    }

    fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        self.call(|store| store.changes(after, sink))
    }

    fn reader_at(&self, at: Cursor) -> Result<()> {
        self.call(|store| store.reader_at(at))
    }

    fn sweep(&self) -> Result<Vec<Entry>> {
        self.call(|store| store.sweep())
    }

    fn insert(&self, record: Record, seen: Cursor) -> Result<Insert> {
        self.call(|store| store.insert(record, seen))
    }

    fn delete(&self, id: &str) -> Result<Option<Record>> {
        self.call(|store| store.delete(id))
    }

    fn delete_with_blocks(
        &self,
        id: &str,
        blocks: &dyn Fn(&Record) -> BlockWrite,
    ) -> Result<Option<Record>> {
        self.call(|store| store.delete_with_blocks(id, blocks))
    }

    fn cache_bytes(&self) -> u64 {
        self.inner.cache_bytes()
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        self.call(|store| store.get(id))
    }

    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        self.call(|store| store.get_slots(slots))
    }

    fn len(&self) -> Result<u64> {
        self.call(|store| store.len())
    }

    fn probe(&self) -> Result<()> {
        self.call(|store| store.probe())
    }

    fn durability(&self) -> Result<Durability> {
        self.call(|store| store.durability())
    }

    fn eviction(&self) -> Result<Option<String>> {
        self.call(|store| store.eviction())
    }

    fn holds_blocks(&self) -> bool {
        self.inner.holds_blocks()
    }

    fn blocks_when_asked(&self) -> bool {
        self.inner.blocks_when_asked()
    }

    fn insert_with_blocks(
        &self,
        record: Record,
        seen: Cursor,
        blocks: &BlockWrite,
    ) -> Result<Insert> {
        self.call(|store| store.insert_with_blocks(record, seen, blocks))
    }

    fn blocks_plan(&self) -> Result<Option<String>> {
        self.call(|store| store.blocks_plan())
    }

    fn set_blocks_plan(&self, plan: &str) -> Result<String> {
        self.call(|store| store.set_blocks_plan(plan))
    }

    fn position(&self) -> Result<Cursor> {
        self.call(|store| store.position())
    }

    fn read_blocks(&self, keys: &[(u32, u64)]) -> Result<Vec<Vec<u8>>> {
        self.call(|store| store.read_blocks(keys))
    }

    fn reserve_slot(&self) -> Result<u64> {
        self.call(|store| store.reserve_slot())
    }

    fn add_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        self.call(|store| store.add_blocks(keys, entry))
    }

    fn remove_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        self.call(|store| store.remove_blocks(keys, entry))
    }

    fn add_blocks_batch(&self, batch: &[BlockWrite]) -> Result<()> {
        self.call(|store| store.add_blocks_batch(batch))
    }

    fn read_blocks_reserved(&self, keys: &[(u32, u64)]) -> Result<(Vec<Vec<u8>>, u64)> {
        self.call(|store| store.read_blocks_reserved(keys))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use super::*;
    use crate::MemoryStore;

    /// A memory store that fails every call with `error()` while `down` is set.
    struct Flaky {
        store: MemoryStore,
        down: Arc<AtomicBool>,
        calls: Arc<std::sync::atomic::AtomicUsize>,
        error: fn() -> StoreError,
    }

    impl Flaky {
        fn check(&self) -> Result<()> {
            self.calls.fetch_add(1, Ordering::Relaxed);
            if self.down.load(Ordering::Relaxed) {
                return Err((self.error)());
            }
            Ok(())
        }
    }

    fn stalled() -> StoreError {
        StoreError::Timeout("stalled".into())
    }

    impl Store for Flaky {
        fn location(&self) -> String {
            self.store.location()
        }
        fn init_meta(&self, meta: &Meta) -> Result<Meta> {
            self.check()?;
            self.store.init_meta(meta)
        }
        fn meta(&self) -> Result<Option<Meta>> {
            self.check()?;
            self.store.meta()
        }
        fn replace_meta(&self, meta: &Meta) -> Result<()> {
            self.check()?;
            self.store.replace_meta(meta)
        }
        fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
            self.check()?;
            self.store.load(sink)
        }
        fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
            self.check()?;
            self.store.changes(after, sink)
        }
        fn insert(&self, record: Record, seen: Cursor) -> Result<Insert> {
            self.check()?;
            self.store.insert(record, seen)
        }
        fn delete(&self, id: &str) -> Result<Option<Record>> {
            self.check()?;
            self.store.delete(id)
        }
        fn get(&self, id: &str) -> Result<Option<Record>> {
            self.check()?;
            self.store.get(id)
        }
        fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
            self.check()?;
            self.store.get_slots(slots)
        }
        fn len(&self) -> Result<u64> {
            self.check()?;
            self.store.len()
        }
        fn probe(&self) -> Result<()> {
            self.check()
        }
        fn durability(&self) -> Result<Durability> {
            self.store.durability()
        }
    }

    #[test]
    fn a_closed_gate_fails_fast_and_a_due_probe_opens_it() {
        let down = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let gated = Gated::new(
            Box::new(Flaky {
                store: MemoryStore::new("gate"),
                down: Arc::clone(&down),
                calls: Arc::clone(&calls),
                error: stalled,
            }),
            false,
        );
        assert_eq!(gated.len().unwrap(), 0);
        down.store(true, Ordering::Relaxed);
        assert!(matches!(gated.len(), Err(StoreError::Timeout(_))));
        let before = calls.load(Ordering::Relaxed);
        for _ in 0..100 {
            assert!(matches!(
                gated.health(),
                Err(StoreError::Unavailable { .. })
            ));
        }
        assert_eq!(
            calls.load(Ordering::Relaxed),
            before,
            "a closed gate asked the store"
        );
        down.store(false, Ordering::Relaxed);
        assert!(gated.health().is_err(), "probed before it was due");
        std::thread::sleep(PROBE_INTERVAL);
        gated.health().unwrap();
        assert_eq!(gated.len().unwrap(), 0);
    }

    #[test]
    fn a_failed_probe_says_unavailable_once() {
        let down = Arc::new(AtomicBool::new(true));
        let gated = Gated::new(
            Box::new(Flaky {
                store: MemoryStore::new("gate"),
                down: Arc::clone(&down),
                calls: Arc::default(),
                error: || StoreError::unavailable("redb: No space left on device"),
            }),
            false,
        );
        assert!(gated.len().is_err());
        std::thread::sleep(PROBE_INTERVAL);
        let message = gated.health().unwrap_err().to_string();
        assert_eq!(
            message,
            "the store is unavailable: redb: No space left on device"
        );
    }
}
