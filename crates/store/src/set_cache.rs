//! The shingle sets of stored documents, kept in memory between checks so that verification
//! does not rebuild them from the stored texts every time.
//!
//! Why: under a verifying policy a check verifies every SimHash candidate within k, and on
//! template-heavy data (pages of one site, one generator) the same stored documents are the
//! candidates of check after check: rebuilding each set (read the record, decompress, shingle,
//! hash, sort) costs tens of microseconds, the bucket bound on a held set well under one.
//! Bounded by a budget of shingles; when full it is emptied and refills with what the checks
//! need next (slots are never reused, so an entry is never stale; a reload empties it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use neardup_core::measure::{BucketCounts, FeatureSet};

/// Shingles held at most (about 9 bytes each with their bucket counts: ~150 MB).
pub(crate) const BUDGET_SHINGLES: usize = 16 << 20;

/// A stored document's shingle set and its bucket counts.
#[derive(Debug)]
pub(crate) struct Verifiable {
    pub set: FeatureSet,
    pub counts: BucketCounts,
}

impl Verifiable {
    pub fn new(set: FeatureSet) -> Verifiable {
        let counts = BucketCounts::of(&set);
        Verifiable { set, counts }
    }
}

/// Heap bytes one held shingle takes with its share of the bucket counts and the map.
const BYTES_PER_SHINGLE: u64 = 9;

/// Slot → verification data, within a budget of shingles.
#[derive(Debug)]
pub(crate) struct SetCache {
    inner: Mutex<Inner>,
    /// Shingles held at most.
    budget: usize,
}

impl Default for SetCache {
    fn default() -> Self {
        SetCache {
            inner: Mutex::default(),
            budget: BUDGET_SHINGLES,
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    sets: HashMap<u64, Arc<Verifiable>>,
    shingles: usize,
}

impl SetCache {
    /// A cache holding at most about `bytes` (and at most the default budget).
    pub fn with_bytes(bytes: u64) -> SetCache {
        let shingles = usize::try_from(bytes / BYTES_PER_SHINGLE).unwrap_or(usize::MAX);
        SetCache {
            inner: Mutex::default(),
            budget: shingles.min(BUDGET_SHINGLES),
        }
    }

    /// The held entries for `slots`, in order (`None` where not held).
    pub fn get_many(&self, slots: &[u64]) -> Vec<Option<Arc<Verifiable>>> {
        let inner = self.lock();
        slots.iter().map(|s| inner.sets.get(s).cloned()).collect()
    }

    /// Holds `entry` for `slot`, emptying the cache first if it would exceed the budget.
    pub fn insert(&self, slot: u64, entry: Arc<Verifiable>) {
        let mut inner = self.lock();
        let size = entry.set.len();
        if inner.shingles + size > self.budget {
            inner.sets.clear();
            inner.shingles = 0;
        }
        if size <= self.budget {
            inner.shingles += size;
            if let Some(old) = inner.sets.insert(slot, entry) {
                inner.shingles -= old.set.len();
            }
        }
    }

    /// Forgets everything (the store was reloaded).
    pub fn clear(&self) {
        *self.lock() = Inner::default();
    }

    /// Shingles held now.
    pub fn shingles(&self) -> usize {
        self.lock().shingles
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}
