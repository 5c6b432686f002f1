//! Dense storage shared by the online indexes: fingerprints and ids in slot order, and a compact
//! id → slot map.
//!
//! Slots are `u32` positions `0..len`. Removing swaps the last slot into the hole, so the arrays
//! stay dense and an index only has to re-point the one moved slot. The id map is an
//! open-addressing table of `u32` slots (4 bytes a bucket, load ≤ 3/4) that hashes `ids[slot]`
//! instead of storing the id again: a `HashMap<u64, u32>` would cost about 27 bytes per entry,
//! which alone would break the 40 bytes per fingerprint budget of the permuted tables.

use crate::error::{checked_len, IndexError, Result};
use crate::radix::sort_by_high_bits;

/// Marks an empty bucket of the id map.
const EMPTY: u32 = u32::MAX;

/// Fingerprints and ids by slot, plus the id → slot map.
#[derive(Debug, Clone, Default)]
pub(crate) struct Slots<F> {
    /// Fingerprint of each slot.
    pub fps: Vec<F>,
    /// Caller's id of each slot.
    pub ids: Vec<u64>,
    /// Buckets holding slots, found by hashing the slot's id; capacity a power of two.
    map: Vec<u32>,
}

/// What [`Slots::remove`] did: the removed slot, and the slot moved into its place (if any).
pub(crate) struct Removed<F> {
    /// Slot the removed item occupied.
    pub slot: u32,
    /// The removed fingerprint.
    pub fp: F,
    /// The former last slot, now living at `slot` (None if the removed item was the last).
    pub moved_from: Option<u32>,
}

/// Id map buckets for `n` items: a power of two, load at most 3/4.
fn map_capacity(n: usize) -> usize {
    (n * 4 / 3 + 1).next_power_of_two().max(16)
}

/// Spreads an id over the table (the SplitMix64 finaliser: sequential ids do not cluster).
#[inline]
fn hash(id: u64) -> u64 {
    let mut z = id.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl<F: Copy> Slots<F> {
    /// Number of stored items.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Heap bytes held, counting capacity.
    pub fn memory_bytes(&self) -> usize {
        self.fps.capacity() * std::mem::size_of::<F>()
            + self.ids.capacity() * 8
            + self.map.capacity() * 4
    }

    /// The slot holding `id`.
    pub fn find(&self, id: u64) -> Option<u32> {
        self.bucket_of(id).map(|at| self.map[at])
    }

    /// Appends an item; fails (changing nothing) if `id` is already stored.
    pub fn push(&mut self, id: u64, fp: F) -> Result<u32> {
        if self.find(id).is_some() {
            return Err(IndexError::DuplicateId(id));
        }
        let slot = checked_len(self.len() + 1).map(|_| self.len() as u32)?;
        self.reserve_map(self.len() + 1);
        self.fps.push(fp);
        self.ids.push(id);
        self.map_insert(slot);
        Ok(slot)
    }

    /// Appends many items at once; on a duplicate id (in the batch or already stored) nothing is
    /// added.
    ///
    /// The new slots enter the id map in order of their home bucket, so the map is written
    /// front to back instead of at random: several times faster for millions of items.
    pub fn extend(&mut self, items: &[(u64, F)]) -> Result<()> {
        let old = self.len();
        checked_len(old + items.len())?;
        if items.is_empty() {
            return Ok(());
        }
        if old > 0 {
            if let Some(&(id, _)) = items.iter().find(|(id, _)| self.find(*id).is_some()) {
                return Err(IndexError::DuplicateId(id));
            }
        }
        self.fps.reserve_exact(items.len());
        self.ids.reserve_exact(items.len());
        self.fps.extend(items.iter().map(|&(_, fp)| fp));
        self.ids.extend(items.iter().map(|&(id, _)| id));
        let mut first_new = old;
        if self.map.is_empty() || self.len() * 4 > self.map.len() * 3 {
            self.map = vec![EMPTY; map_capacity(self.len())];
            first_new = 0;
        }
        let homes = self.sorted_homes(first_new..self.len());
        if let Some(id) = self.duplicate(&homes) {
            // Only items already stored may be in the map (and they are unique): re-map them.
            self.fps.truncate(old);
            self.ids.truncate(old);
            if first_new == 0 {
                self.map.fill(EMPTY);
                let homes = self.sorted_homes(0..old);
                self.map_sorted(&homes);
            }
            return Err(IndexError::DuplicateId(id));
        }
        self.map_sorted(&homes);
        Ok(())
    }

    /// `home bucket << 32 | slot` for the given slots, sorted by home bucket.
    fn sorted_homes(&self, slots: std::ops::Range<usize>) -> Vec<u64> {
        let bits = self.map.len().trailing_zeros();
        let mask = self.map.len() as u64 - 1;
        let mut homes: Vec<u64> = slots
            .map(|s| ((hash(self.ids[s]) & mask) << 32) | s as u64)
            .collect();
        sort_by_high_bits(&mut homes, 32, 32 + bits, |&v| v);
        homes
    }

    /// An id appearing twice among sorted homes (equal ids share a home bucket).
    fn duplicate(&self, homes: &[u64]) -> Option<u64> {
        let runs = homes.chunk_by(|x, y| x >> 32 == y >> 32);
        runs.filter(|run| run.len() > 1).find_map(|run| {
            run.iter().enumerate().find_map(|(i, &x)| {
                let id = self.ids[x as u32 as usize];
                run[i + 1..]
                    .iter()
                    .any(|&y| self.ids[y as u32 as usize] == id)
                    .then_some(id)
            })
        })
    }

    /// Inserts the slots of sorted homes (ids not yet in the map) into the map.
    fn map_sorted(&mut self, homes: &[u64]) {
        for &v in homes {
            self.map_insert_from((v >> 32) as usize, v as u32);
        }
    }

    /// Adds a batch ([`Slots::extend`]) and returns the new slots if the tables should take
    /// them one by one, or `None` if the batch is large next to what was stored (an eighth or
    /// more) and rebuilding every table at once is faster.
    pub fn extend_batch(&mut self, items: &[(u64, F)]) -> Result<Option<std::ops::Range<u32>>> {
        let old = self.len();
        self.extend(items)?;
        Ok((items.len() < old / 8).then(|| old as u32..self.len() as u32))
    }

    /// Removes `id`, moving the last slot into its place.
    pub fn remove(&mut self, id: u64) -> Option<Removed<F>> {
        let slot = self.find(id)?;
        self.map_delete(id);
        let last = (self.len() - 1) as u32;
        let fp = self.fps.swap_remove(slot as usize);
        self.ids.swap_remove(slot as usize);
        let moved_from = (slot != last).then(|| {
            let moved_id = self.ids[slot as usize];
            self.map_repoint(moved_id, last, slot);
            last
        });
        Some(Removed {
            slot,
            fp,
            moved_from,
        })
    }

    /// Makes room in the map for `n` items at load ≤ 3/4, rehashing the stored ones if it grows.
    /// Called before new slots are pushed.
    fn reserve_map(&mut self, n: usize) {
        if n * 4 <= self.map.len() * 3 {
            return;
        }
        self.map = vec![EMPTY; map_capacity(n)];
        let homes = self.sorted_homes(0..self.len());
        self.map_sorted(&homes);
    }

    /// Puts `slot` (whose id is not in the map) into the map.
    fn map_insert(&mut self, slot: u32) {
        let home = hash(self.ids[slot as usize]) as usize & (self.map.len() - 1);
        self.map_insert_from(home, slot);
    }

    /// Puts `slot` into the first free bucket from its `home` bucket on.
    fn map_insert_from(&mut self, home: usize, slot: u32) {
        let mask = self.map.len() - 1;
        let mut at = home;
        while self.map[at] != EMPTY {
            at = (at + 1) & mask;
        }
        self.map[at] = slot;
    }

    /// The bucket holding the slot of `id`.
    fn bucket_of(&self, id: u64) -> Option<usize> {
        let mask = self.map.len().checked_sub(1)?;
        let mut at = hash(id) as usize & mask;
        loop {
            let slot = self.map[at];
            if slot == EMPTY {
                return None;
            }
            if self.ids[slot as usize] == id {
                return Some(at);
            }
            at = (at + 1) & mask;
        }
    }

    /// Changes the slot recorded for `id` from `from` to `to` (after a swap-remove).
    fn map_repoint(&mut self, id: u64, from: u32, to: u32) {
        let mask = self.map.len() - 1;
        let mut at = hash(id) as usize & mask;
        while self.map[at] != from {
            at = (at + 1) & mask;
        }
        self.map[at] = to;
    }

    /// Deletes `id` from the map by backward-shift deletion (linear probing keeps no tombstones).
    fn map_delete(&mut self, id: u64) {
        let Some(mut hole) = self.bucket_of(id) else {
            return;
        };
        let mask = self.map.len() - 1;
        let mut at = hole;
        loop {
            at = (at + 1) & mask;
            let slot = self.map[at];
            if slot == EMPTY {
                break;
            }
            let home = hash(self.ids[slot as usize]) as usize & mask;
            // Move the entry back if its home is not in the cyclic range (hole, at].
            let in_range = if hole <= at {
                hole < home && home <= at
            } else {
                hole < home || home <= at
            };
            if !in_range {
                self.map[hole] = slot;
                hole = at;
            }
        }
        self.map[hole] = EMPTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_find_remove() {
        let mut s: Slots<u64> = Slots::default();
        for id in 0..1000u64 {
            s.push(id * 7919, id).unwrap();
        }
        assert_eq!(s.push(7919, 5), Err(IndexError::DuplicateId(7919)));
        for id in (0..1000u64).step_by(3) {
            let r = s.remove(id * 7919).unwrap();
            assert_eq!(r.fp, id);
        }
        assert!(s.remove(0).is_none());
        for id in 0..1000u64 {
            let found = s.find(id * 7919);
            assert_eq!(found.is_some(), id % 3 != 0);
            if let Some(slot) = found {
                assert_eq!(s.fps[slot as usize], id);
            }
        }
        assert!(s.extend(&[(1, 1), (2, 2), (1, 3)]).is_err());
        assert!(s.find(2).is_none());
        s.extend(&[(1, 1), (2, 2)]).unwrap();
        assert_eq!(s.find(2).map(|x| s.fps[x as usize]), Some(2));
    }
}
