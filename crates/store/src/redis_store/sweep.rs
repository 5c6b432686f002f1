//! The remains of inserts whose writer died, swept: a slot reserved, its block entries, claim,
//! body and row written, and its insert script never run, is never stored (every reader skips
//! it), but its keys would stay for ever. See [`crate::redis_layout::SWEEP`] for which slots a
//! pass takes, and docs/redis-cluster.md ("Orphans of inserts never stored") for who runs it.

use std::collections::BTreeSet;
use std::time::Duration;

use crate::error::Result;
use crate::record::Entry;

use super::{corrupt, parse_record, RedisStore};

/// Default of [`crate::OpenOptions::sweep_after`]: a slot still free ten minutes after it was
/// reserved is an insert whose writer died (an insert in progress takes at most a few store
/// timeouts, waiting for a claim included).
pub const DEFAULT_SWEEP_AFTER: Duration = Duration::from_secs(600);
/// The most slots one pass reads the states of (256 KB of the bitmap).
const SWEEP_SLOTS: u64 = 1 << 20;
/// Bodies read per `MGET` while sweeping.
const SWEEP_PAGE: usize = 1000;

impl RedisStore {
    /// Runs a pass of [`crate::redis_layout::SWEEP`] if one is due, then deletes the body, the
    /// row and the claim of each slot it fenced (or a claim taken over fenced since the last
    /// pass); returns the entries of those whose body was found (their block entries are the
    /// caller's to remove: it knows the plan). A slot without a body left nothing else this
    /// finds (its writer died before writing it: see the layout's documentation).
    pub(super) fn sweep_orphans(&self) -> Result<Vec<Entry>> {
        let state = self.key("state");
        let mut invocation = self.sweep_script.prepare_invoke();
        invocation
            .key(self.key("swept"))
            .key(self.key("seq"))
            .key(&state)
            .key(self.key("fenced"))
            .arg(self.sweep_after.as_millis() as u64)
            .arg(SWEEP_SLOTS);
        let slots: Vec<String> = self.run(|conn| {
            let slots: Vec<String> = invocation.invoke(conn)?;
            Ok(match self.unreplicated(conn, &state) {
                // A fence no replica holds may be lost with its master: the slot could then be
                // committed by a writer that was only stalled, so its keys stay.
                Some(error) => Err(error),
                None => Ok(slots),
            })
        })??;
        let slots = slots
            .iter()
            .map(|slot| slot.parse().map_err(|_| corrupt("sweep script reply")))
            .collect::<Result<BTreeSet<u64>>>()?;
        let slots: Vec<u64> = slots.into_iter().collect();
        let mut swept = Vec::new();
        for page in slots.chunks(SWEEP_PAGE) {
            let names: Vec<String> = page.iter().map(|&slot| self.keys.body(slot)).collect();
            let jsons: Vec<Option<String>> =
                self.run(|conn| redis::cmd("MGET").arg(&names).query(conn))?;
            for ((&slot, name), json) in page.iter().zip(&names).zip(jsons) {
                let Some(json) = json else { continue };
                let record = parse_record(&json, slot)?;
                let entry = record.entry();
                self.remove_row(&entry, record.simhash.bits().count() as usize / 8)?;
                self.release(&record.id, slot);
                self.run(|conn| redis::cmd("DEL").arg(name).exec(conn))?;
                swept.push(entry);
            }
        }
        if !slots.is_empty() {
            tracing::info!(location = %self.location, fenced = slots.len(), bodies = swept.len(), "the remains of inserts never stored swept");
        }
        Ok(swept)
    }
}
