//! [`EvictionWatch`]: a store that may evict acknowledged documents by itself (a Redis whose
//! `maxmemory-policy` evicts keys) is refused, at open and whenever a periodic check finds it
//! so, unless that was allowed ([`crate::OpenOptions::allow_eviction`]); then it is reported
//! (logged, and shown by stats and health), and keys found evicted are an error.
//!
//! No key of a database has a TTL, so `volatile-*` policies (which evict only keys with one)
//! never evict them and are accepted; `allkeys-*` policies with a `maxmemory` are refused.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::{Result, StoreError};
use crate::store::Store;

/// How often the store's eviction policy is read again while it serves.
pub const EVICTION_CHECK_INTERVAL: Duration = Duration::from_secs(3);

/// What the last check found.
#[derive(Debug)]
struct Seen {
    /// When the next check is due.
    next_check: Instant,
    /// The evicting policy found (allowed), if any.
    policy: Option<String>,
}

/// Reads the store's eviction policy at most once an [`EVICTION_CHECK_INTERVAL`] (see the
/// module documentation).
#[derive(Debug)]
pub(crate) struct EvictionWatch {
    allowed: bool,
    seen: Mutex<Seen>,
}

impl EvictionWatch {
    /// A watch that refuses an evicting store unless `allowed`.
    pub(crate) fn new(allowed: bool) -> EvictionWatch {
        EvictionWatch {
            allowed,
            seen: Mutex::new(Seen {
                next_check: Instant::now(),
                policy: None,
            }),
        }
    }

    fn seen(&self) -> MutexGuard<'_, Seen> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The evicting policy the last check found, when allowed.
    pub(crate) fn policy(&self) -> Option<String> {
        self.seen().policy.clone()
    }

    /// Checks `store` if a check is due (or now, if `force`): fails with
    /// [`StoreError::Eviction`] if it may evict keys and that is not allowed, or if it is
    /// allowed and `expects_meta` while the database's metadata is gone (evicted).
    pub(crate) fn check(&self, store: &dyn Store, force: bool, expects_meta: bool) -> Result<()> {
        {
            let mut seen = self.seen();
            let now = Instant::now();
            if !force && now < seen.next_check {
                return Ok(());
            }
            seen.next_check = now + EVICTION_CHECK_INTERVAL;
        }
        let found = store.eviction()?;
        let Some(policy) = found else {
            self.seen().policy = None;
            return Ok(());
        };
        if !self.allowed {
            return Err(StoreError::Eviction(format!(
                "{} has maxmemory-policy {policy}: it may evict acknowledged documents; run \
                 `CONFIG SET maxmemory-policy noeviction` (and set it in redis.conf), or allow \
                 eviction explicitly (--allow-eviction)",
                store.location()
            )));
        }
        let previous = self.seen().policy.replace(policy.clone());
        if previous.as_ref() != Some(&policy) {
            tracing::warn!(location = %store.location(), %policy, "{}", warning(&policy));
        }
        if expects_meta && !store.has_meta()? {
            return Err(StoreError::Eviction(format!(
                "the metadata of the database at {} is gone while Redis evicts keys \
                 (maxmemory-policy {policy}): acknowledged documents may have been evicted",
                store.location()
            )));
        }
        Ok(())
    }
}

/// The warning shown while an evicting policy is allowed.
pub(crate) fn warning(policy: &str) -> String {
    format!(
        "DANGER: the store may evict acknowledged documents (maxmemory-policy {policy}, allowed \
         by --allow-eviction): a document answered as stored may vanish, and a later check of \
         its text say \"unique\""
    )
}
