//! The SimHash index held in the store (seed 004's block keys), for serving processes whose
//! memory does not grow with the database ([`crate::IndexIn::Store`]).
//!
//! # Keys and entries
//! [`neardup_index::BlockKeys`] splits a fingerprint into blocks and keys each table on a union
//! of them (or its first bits); a document's *entry* — its slot (8 bytes, little-endian) and its
//! SimHash (8 or 16 bytes) — is appended to the list under its home key in every table. A check
//! reads the keys within the probe radius of its own and keeps the entries
//! [`neardup_index::BlockKeys::accepts`] reports: the same candidates, at the same distances,
//! as the in-memory index.
//!
//! # Tiers
//! A [`Plan`] is a list of tiers, each the keys of a range of slots, planned for the size the
//! database has when those slots are written ([`TIERS`]): few keys a check while the database is
//! small, keys fit for a billion after. A document's entries go to its slot's tier; a check
//! reads every tier whose first slot was reserved (the slot counter comes with its keys).
//!
//! # Why check-and-insert stays atomic
//! An insert reserves a slot, writes its entries, *then* runs the conflict-checked insert on
//! the store's position. A check reads the position before the keys: every document inserted
//! up to that position wrote its entries before, so the keys show it. An insert that meets a
//! conflict reads the changes since its position (each with its SimHash) and judges again with
//! them. An entry whose insert was refused or not made yet names a slot the store does not hold:
//! reading its record finds nothing, and it is skipped as a deleted document is.

use std::sync::atomic::{AtomicUsize, Ordering};

use neardup_core::Bits;
use neardup_index::{BlockKeys, Match};

use crate::error::{Result, StoreError};
use crate::memory::Found;
use crate::record::{digest_key_hex, Entry};
use crate::store::{Change, Store};

/// A tier's keys: blocks, blocks a table, most key bits.
type Shape = (u32, u32, u32);

/// Documents whose entries are written in one batch when a database's keys are built.
const BUILD_BATCH: usize = 1000;

/// Bits of a fingerprint of `bits`.
fn width(bits: Bits) -> u32 {
    match bits {
        Bits::B64 => 64,
        Bits::B128 => 128,
    }
}

/// The block keys of one tier, for the profile's width.
#[derive(Debug, Clone)]
enum Keys {
    B64(BlockKeys<u64>),
    B128(BlockKeys<u128>),
}

impl Keys {
    /// The keys planned for `n` fingerprints of `bits` searched within `k`.
    fn planned_for(bits: Bits, n: usize, k: u32) -> Result<Keys> {
        Ok(match bits {
            Bits::B64 => Keys::B64(BlockKeys::planned_for(n, k)?),
            Bits::B128 => Keys::B128(BlockKeys::planned_for(n, k)?),
        })
    }

    /// The keys of `blocks` blocks, `choose` a table, at most `width` bits.
    fn with_width(bits: Bits, (blocks, choose, width): Shape, k: u32) -> Result<Keys> {
        Ok(match bits {
            Bits::B64 => Keys::B64(BlockKeys::with_width(blocks, choose, width, k)?),
            Bits::B128 => Keys::B128(BlockKeys::with_width(blocks, choose, width, k)?),
        })
    }

    /// Blocks, blocks a table, most key bits.
    fn shape(&self) -> Shape {
        match self {
            Keys::B64(keys) => (keys.blocks(), keys.choose(), keys.width()),
            Keys::B128(keys) => (keys.blocks(), keys.choose(), keys.width()),
        }
    }

    fn tables(&self) -> u32 {
        match self {
            Keys::B64(keys) => keys.tables(),
            Keys::B128(keys) => keys.tables(),
        }
    }

    fn homes(&self, simhash: u128) -> Vec<(u32, u64)> {
        match self {
            Keys::B64(keys) => keys.homes(simhash as u64),
            Keys::B128(keys) => keys.homes(simhash),
        }
    }

    fn probes(&self, simhash: u128) -> Vec<(u32, u64)> {
        match self {
            Keys::B64(keys) => keys.probes(simhash as u64),
            Keys::B128(keys) => keys.probes(simhash),
        }
    }

    fn accepts(&self, table: u32, stored: u128, query: u128, k: u32) -> Option<u32> {
        match self {
            Keys::B64(keys) => keys.accepts(table, stored as u64, query as u64, k),
            Keys::B128(keys) => keys.accepts(table, stored, query, k),
        }
    }
}

/// The keys of the documents in slots from `from` on (up to the next tier's): their tables are
/// numbered from `base` in the store.
#[derive(Debug, Clone)]
struct Tier {
    from: u64,
    base: u32,
    keys: Keys,
}

/// Where tiers start, in slots, and the size each is planned for: a database's first 16
/// million slots get keys made for 16 million documents (few keys a check), the rest keys made
/// for a billion ([`neardup_index::PLANNED_LEN`]).
const TIERS: [(u64, usize); 2] = [(0, 1 << 24), (1 << 24, neardup_index::PLANNED_LEN)];

/// The block keys of a database: one tier of keys per range of slots, each planned for the
/// size the database has reached when its slots are written. A document's entries go to the
/// tier of its slot; a check reads every tier whose first slot was reserved already.
#[derive(Debug)]
pub(crate) struct Plan {
    tiers: Vec<Tier>,
    described: String,
    entry_len: usize,
    /// Tiers a check reads: those whose first slot the store had reserved when last asked
    /// (slots only grow, so once read, a tier stays read).
    live: AtomicUsize,
}

impl Clone for Plan {
    fn clone(&self) -> Plan {
        Plan {
            tiers: self.tiers.clone(),
            described: self.described.clone(),
            entry_len: self.entry_len,
            live: AtomicUsize::new(self.live.load(Ordering::Relaxed)),
        }
    }
}

impl Plan {
    /// Tiers of `shapes` (each its first slot and keys), described as `described`.
    fn of(bits: Bits, k: u32, shapes: &[(u64, Shape)], described: String) -> Result<Plan> {
        let mut tiers: Vec<Tier> = Vec::new();
        let mut base = 0;
        for &(from, shape) in shapes {
            let keys = Keys::with_width(bits, shape, k)?;
            let tables = keys.tables();
            tiers.push(Tier { from, base, keys });
            base += tables;
        }
        Ok(Plan {
            tiers,
            described,
            entry_len: 8 + width(bits) as usize / 8,
            live: AtomicUsize::new(1),
        })
    }

    /// The keys planned for fingerprints of `bits` searched within `k` (a new database's):
    /// one tier per size of [`TIERS`] (one for both if they get the same keys).
    pub fn new(bits: Bits, k: u32) -> Result<Plan> {
        let mut shapes: Vec<(u64, Shape)> = Vec::new();
        for (from, n) in TIERS {
            let shape = Keys::planned_for(bits, n, k)?.shape();
            if shapes.last().is_none_or(|&(_, last)| last != shape) {
                shapes.push((from, shape));
            }
        }
        let tiers: Vec<String> = shapes
            .iter()
            .map(|(from, (blocks, choose, width))| format!("{from}:{blocks}/{choose}/{width}"))
            .collect();
        let described = format!("v3 bits={} k={k} tiers={}", width(bits), tiers.join(","));
        Plan::of(bits, k, &shapes, described)
    }

    /// The plan a store recorded ([`Plan::describe`]'s words), checked against the database's
    /// width and largest distance. `v1` (one block a table, before wider keys) and `v2` (one
    /// tier of whole unions, before tiers) still read.
    pub fn parse(described: &str, bits: Bits, k: u32) -> Result<Plan> {
        let corrupt = || {
            StoreError::Corrupt(format!(
                "the store's block keys were written for {described:?}, which this version does \
                 not read (or not for {}-bit fingerprints within {k})",
                width(bits)
            ))
        };
        let mut words = described.split(' ');
        let version = words.next().ok_or_else(corrupt)?;
        let mut field = |name: &str| -> Option<&str> {
            words
                .next()
                .and_then(|word| word.strip_prefix(name)?.strip_prefix('='))
        };
        let number = |value: Option<&str>| -> Result<u32> {
            value.and_then(|v| v.parse().ok()).ok_or_else(corrupt)
        };
        let stored_bits = number(field("bits"))?;
        let shapes = match version {
            "v1" | "v2" => {
                let blocks = number(field("blocks"))?;
                let choose = if version == "v1" {
                    1
                } else {
                    number(field("choose"))?
                };
                vec![(0, (blocks, choose, u32::MAX))]
            }
            "v3" => Vec::new(),
            _ => return Err(corrupt()),
        };
        let stored_k = number(field("k"))?;
        let shapes = if version == "v3" {
            parse_tiers(field("tiers").ok_or_else(corrupt)?).ok_or_else(corrupt)?
        } else {
            shapes
        };
        if stored_bits != width(bits) || stored_k != k || words.next().is_some() {
            return Err(corrupt());
        }
        Plan::of(bits, k, &shapes, described.to_string())
    }

    /// The plan in words, as the store records it: width, largest distance, and each tier's
    /// first slot, blocks, blocks a table and most key bits (`v1`/`v2` for a plan they wrote).
    pub fn describe(&self) -> String {
        self.described.clone()
    }

    /// The tier of `slot`.
    fn tier(&self, slot: u64) -> &Tier {
        self.tiers
            .iter()
            .rev()
            .find(|tier| tier.from <= slot)
            .unwrap_or(&self.tiers[0])
    }

    /// The keys a document in `slot` with `simhash` is stored under.
    pub fn homes(&self, slot: u64, simhash: u128) -> Vec<(u32, u64)> {
        let tier = self.tier(slot);
        tier.keys
            .homes(simhash)
            .into_iter()
            .map(|(table, key)| (tier.base + table, key))
            .collect()
    }

    /// The lists of every key a check of `simhash` reads, with the table of the tier that
    /// owns each: the live tiers' keys, read with the slot counter while a later tier has not
    /// started (no round trip more), then the keys of the tiers that counter shows started.
    fn read_lists(&self, store: &dyn Store, simhash: u128) -> Result<Vec<(&Tier, u32, Vec<u8>)>> {
        let named = |probes: &[(&Tier, u32, u64)]| -> Vec<(u32, u64)> {
            probes
                .iter()
                .map(|&(tier, table, key)| (tier.base + table, key))
                .collect()
        };
        let live = self.live.load(Ordering::Relaxed);
        let mut read = probes(&self.tiers[..live], simhash);
        let mut lists = if live < self.tiers.len() {
            let (lists, reserved) = store.read_blocks_reserved(&named(&read))?;
            let now = self.tiers.iter().filter(|t| t.from <= reserved).count();
            let now = self.live.fetch_max(now, Ordering::Relaxed).max(now);
            if now > live {
                let more = probes(&self.tiers[live..now], simhash);
                let more_lists = store.read_blocks(&named(&more))?;
                read.extend(more);
                lists.into_iter().chain(more_lists).collect()
            } else {
                lists
            }
        } else {
            store.read_blocks(&named(&read))?
        };
        Ok(read
            .into_iter()
            .zip(lists.drain(..))
            .map(|((tier, table, _), list)| (tier, table, list))
            .collect())
    }

    /// The entry of a document: its slot, then its SimHash.
    pub fn entry(&self, slot: u64, simhash: u128) -> Vec<u8> {
        let mut bytes = slot.to_le_bytes().to_vec();
        bytes.extend_from_slice(&simhash.to_le_bytes()[..self.entry_len - 8]);
        bytes
    }

    /// The (slot, SimHash) entries of one list.
    fn entries<'a>(&self, list: &'a [u8]) -> Result<impl Iterator<Item = (u64, u128)> + 'a> {
        let len = self.entry_len;
        if !list.len().is_multiple_of(len) {
            return Err(StoreError::Corrupt(format!(
                "a block list of {} bytes is not made of {len}-byte entries",
                list.len()
            )));
        }
        Ok(list.chunks_exact(len).map(|chunk| {
            let (slot, sim) = chunk.split_at(8);
            let mut wide = [0u8; 16];
            wide[..sim.len()].copy_from_slice(sim);
            (
                u64::from_le_bytes(slot.try_into().unwrap_or_default()),
                u128::from_le_bytes(wide),
            )
        }))
    }

    /// Everything within `k` of `simhash` in the store's block keys, nearest first, each slot
    /// once; the exact duplicates are the distance-0 candidates whose stored digest is `digest`
    /// (their records are read to know it).
    pub fn query(&self, store: &dyn Store, simhash: u128, digest: u128, k: u32) -> Result<Found> {
        let mut near = Vec::new();
        for (tier, table, list) in self.read_lists(store, simhash)? {
            for (slot, stored) in self.entries(&list)? {
                if let Some(distance) = tier.keys.accepts(table, stored, simhash, k) {
                    near.push(Match { distance, id: slot });
                }
            }
        }
        near.sort_unstable_by_key(|m| (m.distance, m.id));
        // An entry written twice (two processes building the keys at once) comes twice.
        near.dedup_by_key(|m| m.id);
        let mut found = Found {
            near,
            exact: Vec::new(),
        };
        found.exact = exact_among(store, &found.near, digest)?;
        Ok(found)
    }

    /// `found` with the changes another writer made since it was read: inserts within `k` of
    /// `simhash` added (exact if their digest is `digest`), deleted slots dropped; `own` (this
    /// insert's reserved slot) is never a candidate.
    pub fn merge(
        found: &mut Found,
        changes: Vec<Change>,
        (simhash, digest): (u128, u128),
        k: u32,
        own: Option<u64>,
    ) {
        for change in changes {
            match change {
                Change::Insert(Entry {
                    slot,
                    simhash: stored,
                    digest: stored_digest,
                }) if Some(slot) != own => {
                    let distance = (stored ^ simhash).count_ones();
                    if distance <= k && !found.near.iter().any(|m| m.id == slot) {
                        found.near.push(Match { distance, id: slot });
                        if distance == 0 && stored_digest == digest {
                            found.exact.push(slot);
                        }
                    }
                }
                Change::Insert(_) => {}
                Change::Delete(slot) => {
                    found.near.retain(|m| m.id != slot);
                    found.exact.retain(|&s| s != slot);
                }
            }
        }
        found.near.sort_unstable_by_key(|m| (m.distance, m.id));
    }
}

/// Every key a check of `simhash` reads in `tiers`: (tier, its table, key).
fn probes(tiers: &[Tier], simhash: u128) -> Vec<(&Tier, u32, u64)> {
    tiers
        .iter()
        .flat_map(|tier| {
            let keys = tier.keys.probes(simhash);
            keys.into_iter().map(move |(table, key)| (tier, table, key))
        })
        .collect()
}

/// The tiers of a `v3` plan's words (`from:blocks/choose/width`, comma-separated, the first
/// from slot 0, each after the one before), or `None`.
fn parse_tiers(words: &str) -> Option<Vec<(u64, Shape)>> {
    let mut shapes: Vec<(u64, Shape)> = Vec::new();
    for tier in words.split(',') {
        let (from, shape) = tier.split_once(':')?;
        let mut parts = shape.split('/').map(|part| part.parse::<u32>().ok());
        let shape = (parts.next()??, parts.next()??, parts.next()??);
        let from: u64 = from.parse().ok()?;
        let after = shapes.last().is_none_or(|&(last, _)| from > last);
        if parts.next().is_some() || !after || (shapes.is_empty() && from != 0) {
            return None;
        }
        shapes.push((from, shape));
    }
    Some(shapes)
}

/// The slots among the distance-0 candidates whose stored digest key is `digest`.
fn exact_among(store: &dyn Store, near: &[Match], digest: u128) -> Result<Vec<u64>> {
    let zero: Vec<u64> = near
        .iter()
        .take_while(|m| m.distance == 0)
        .map(|m| m.id)
        .collect();
    if zero.is_empty() {
        return Ok(Vec::new());
    }
    Ok(store
        .get_slots(&zero)?
        .into_iter()
        .flatten()
        .filter(|record| digest_key_hex(&record.digest) == digest)
        .map(|record| record.slot)
        .collect())
}

/// The plan the store recorded for its block keys, if it recorded one.
pub(crate) fn recorded(store: &dyn Store, bits: Bits, k: u32) -> Result<Option<Plan>> {
    store
        .blocks_plan()?
        .map(|stored| Plan::parse(&stored, bits, k))
        .transpose()
}

/// The plan of the store's block keys: the one recorded (every process reads the keys the
/// same way, whichever version planned them), or, for a store that recorded none, a new plan
/// whose entries are written for every stored document (a database written before the store
/// held its index, or by processes that did not write them) before it is recorded, a batch of
/// [`BUILD_BATCH`] documents at a time (the process holds one batch, whatever the database's
/// size). Several processes doing this at once write some entries twice, which queries ignore.
pub(crate) fn open(store: &dyn Store, bits: Bits, k: u32) -> Result<Plan> {
    if let Some(plan) = recorded(store, bits, k)? {
        return Ok(plan);
    }
    let plan = Plan::new(bits, k)?;
    let described = plan.describe();
    let mut writes = Vec::with_capacity(BUILD_BATCH);
    let (mut documents, mut failed) = (0u64, None);
    store.load(&mut |entry| {
        if failed.is_some() {
            return;
        }
        writes.push((
            plan.homes(entry.slot, entry.simhash),
            plan.entry(entry.slot, entry.simhash),
        ));
        documents += 1;
        if writes.len() == BUILD_BATCH {
            failed = store.add_blocks_batch(&writes).err();
            writes.clear();
        }
    })?;
    if let Some(error) = failed {
        return Err(error);
    }
    if !writes.is_empty() {
        store.add_blocks_batch(&writes)?;
    }
    tracing::info!(location = %store.location(), documents, plan = %described, "block keys built");
    let recorded = store.set_blocks_plan(&described)?;
    if recorded != described {
        return Err(StoreError::Corrupt(format!(
            "another process recorded block keys of {recorded:?} while this one wrote {described:?}"
        )));
    }
    Ok(plan)
}

/// Where a serving process finds the SimHash candidates of a check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IndexIn {
    /// An index of every document in the process's memory, built at open from the store's
    /// compact rows and kept current from its log (about 90 bytes a document): the fastest
    /// checks; the process grows with the database.
    #[default]
    Local,
    /// The index the store holds (Redis: block keys spread over the cluster; redb: a table of
    /// block keys in its file, built when a process first opens it so and written by every
    /// insert from then on): the process holds no index, only a bounded cache, whatever the size
    /// of the database. Each check reads its block keys (Redis: one round trip per node holding
    /// some; redb: one read transaction). Process memory holds no index: opening it so is an
    /// error.
    Store,
}

impl neardup_core::Choice for IndexIn {
    const ALL: &'static [Self] = &[IndexIn::Local, IndexIn::Store];

    fn help(self) -> &'static str {
        match self {
            IndexIn::Local => {
                "an index of every document in this process's memory (fastest checks)"
            }
            IndexIn::Store => {
                "the index the store holds (its block keys): memory bounded by --memory"
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OpenOptions, RedisStore};
    use neardup_testkit::Redis;

    /// A fixed-seed generator of 64-bit values.
    fn generator(mut state: u64) -> impl FnMut() -> u64 {
        move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        }
    }

    /// `fp` with `bits` flipped in each 16-bit block (most significant block first), at bit
    /// positions drawn from `next`.
    fn flipped(fp: u64, bits: [u32; 4], next: &mut impl FnMut() -> u64) -> u64 {
        let mut out = fp;
        for (block, &n) in bits.iter().enumerate() {
            let mut done = 0;
            while done < n {
                let bit = 1u64 << (48 - 16 * block as u32 + (next() % 16) as u32);
                if (out ^ fp) & bit == 0 {
                    out ^= bit;
                    done += 1;
                }
            }
        }
        out
    }

    /// Fingerprints meant to break an index: many identical ones, ones at exactly k = 6 (and
    /// 7) from a base in every way of spreading the bits over the blocks, a skewed bucket (200
    /// sharing their first 32 bits), and near copies of random bases at every distance to 8.
    fn adversarial() -> Vec<u64> {
        let mut next = generator(0x9E37_79B9_7F4A_7C15);
        let bases: Vec<u64> = (0..30).map(|_| next()).collect();
        let mut fps = vec![bases[0]; 40];
        let spreads = [
            [6, 0, 0, 0],
            [0, 0, 0, 6],
            [2, 2, 1, 1],
            [1, 1, 2, 2],
            [1, 2, 1, 2],
            [3, 3, 0, 0],
            [0, 3, 0, 3],
            [2, 2, 2, 1],
            [2, 2, 2, 0],
            [1, 1, 1, 3],
        ];
        for spread in spreads {
            for _ in 0..3 {
                fps.push(flipped(bases[1], spread, &mut next));
            }
        }
        fps.extend((0..200).map(|_| bases[2] & !0xFFFF_FFFF | next() & 0xFFFF_FFFF));
        fps.extend((0..200).map(|_| bases[3] & !0xFFFF | next() & 0xFFFF));
        for i in 0..300 {
            let base = bases[4 + i % 26];
            let bits = (i % 9) as u32;
            let mut spread = [0; 4];
            for _ in 0..bits {
                spread[(next() % 4) as usize] += 1;
            }
            let spread = spread.map(|n: u32| n.min(16));
            fps.push(flipped(base, spread, &mut next));
        }
        fps
    }

    /// Every document within each k of a query found by the keys in Redis, once, at its
    /// distance: as brute force, over both tiers of a new plan (documents in slots of each).
    #[test]
    fn store_held_keys_find_what_brute_force_finds() {
        let Some(redis) = Redis::temporary("store_held_keys_find_what_brute_force_finds") else {
            return;
        };
        let store = RedisStore::open(&redis.url(), "bf", &OpenOptions::default()).unwrap();
        let plan = Plan::new(Bits::B64, 6).unwrap();
        assert_eq!(
            plan.describe(),
            "v3 bits=64 k=6 tiers=0:4/1/16,16777216:4/2/26"
        );
        let fps = adversarial();
        let tier2 = TIERS[1].0;
        let slots: Vec<u64> = (0..fps.len() as u64)
            .map(|i| if i % 2 == 0 { 1 + i } else { tier2 + i })
            .collect();
        let writes: Vec<_> = slots
            .iter()
            .zip(&fps)
            .map(|(&slot, &fp)| {
                (
                    plan.homes(slot, u128::from(fp)),
                    plan.entry(slot, u128::from(fp)),
                )
            })
            .collect();
        store.add_blocks_batch(&writes).unwrap();
        // Only the first tier's slots were reserved: a check reads the first tier only.
        redis.cli(&["SET", "neardup:{bf}:seq", "1000"]);
        let first = plan.query(&store, u128::from(fps[0]), 0, 6).unwrap();
        assert_eq!(plan.live.load(Ordering::Relaxed), 1);
        assert_eq!(
            first.near.len(),
            20,
            "the 20 identical copies in the first tier"
        );
        redis.cli(&["SET", "neardup:{bf}:seq", &(tier2 + 10_000).to_string()]);
        let mut next = generator(7);
        let queries: Vec<u64> = fps
            .iter()
            .step_by(3)
            .copied()
            .chain((0..40).map(|i| flipped(fps[i * 7], [1, 1, 1, 0], &mut next)))
            .collect();
        for k in 0..=6 {
            for &query in &queries {
                let found = plan.query(&store, u128::from(query), 0, k).unwrap();
                let mut got: Vec<(u32, u64)> =
                    found.near.iter().map(|m| (m.distance, m.id)).collect();
                got.sort_unstable();
                let mut expected: Vec<(u32, u64)> = fps
                    .iter()
                    .zip(&slots)
                    .map(|(&fp, &slot)| ((fp ^ query).count_ones(), slot))
                    .filter(|&(distance, _)| distance <= k)
                    .collect();
                expected.sort_unstable();
                assert_eq!(got, expected, "k = {k}, query {query:016x}");
            }
        }
        assert_eq!(plan.live.load(Ordering::Relaxed), 2);
    }

    /// The plans each version recorded read back as they were written; a plan of another
    /// width, distance or shape is refused.
    #[test]
    fn recorded_plans_parse() {
        let shape = |plan: &Plan| -> Vec<(u64, u32, (u32, u32, u32))> {
            plan.tiers
                .iter()
                .map(|t| (t.from, t.base, t.keys.shape()))
                .collect()
        };
        let v1 = Plan::parse("v1 bits=64 blocks=4 k=6", Bits::B64, 6).unwrap();
        assert_eq!(shape(&v1), vec![(0, 0, (4, 1, 16))]);
        let v2 = Plan::parse("v2 bits=64 blocks=4 choose=2 k=6", Bits::B64, 6).unwrap();
        assert_eq!(shape(&v2), vec![(0, 0, (4, 2, 32))]);
        let new = Plan::new(Bits::B64, 6).unwrap();
        let v3 = Plan::parse(&new.describe(), Bits::B64, 6).unwrap();
        assert_eq!(
            shape(&v3),
            vec![(0, 0, (4, 1, 16)), (1 << 24, 4, (4, 2, 26))]
        );
        assert_eq!(v3.describe(), new.describe());
        let wide = Plan::new(Bits::B128, 6).unwrap();
        assert!(wide.describe().starts_with("v3 bits=128 k=6 tiers=0:"));
        assert_eq!(wide.entry(1, 2).len(), 24);
        for refused in [
            "v3 bits=64 k=6 tiers=5:4/1/16",
            "v3 bits=64 k=6 tiers=0:4/1/16,0:4/2/26",
            "v3 bits=64 k=6 tiers=0:4/1",
            "v3 bits=64 k=6",
            "v3 bits=64 k=5 tiers=0:4/1/16",
            "v3 bits=128 k=6 tiers=0:4/1/16",
            "v2 bits=64 blocks=4 k=6",
        ] {
            assert!(Plan::parse(refused, Bits::B64, 6).is_err(), "{refused}");
        }
    }
}
