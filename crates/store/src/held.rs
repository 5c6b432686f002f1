//! The SimHash index held in the store (seed 004's block keys), for serving processes whose
//! memory does not grow with the database ([`crate::IndexIn::Store`]).
//!
//! # Keys and entries
//! [`neardup_index::BlockKeys`] splits a fingerprint into blocks, one table per block; a
//! document's *entry* — its slot (8 bytes, little-endian) and its SimHash (8 or 16 bytes) — is
//! appended to the list under its home key in every table. A check reads the keys within the
//! probe radius of its own and keeps the entries [`neardup_index::BlockKeys::accepts`] reports:
//! the same candidates, at the same distances, as the in-memory index.
//!
//! # Why check-and-insert stays atomic
//! An insert reserves a slot, writes its entries, *then* runs the conflict-checked insert on
//! the store's position. A check reads the position before the keys: every document inserted
//! up to that position wrote its entries before, so the keys show it. An insert that meets a
//! conflict reads the changes since its position (each with its SimHash) and judges again with
//! them. An entry whose insert was refused or not made yet names a slot the store does not hold:
//! reading its record finds nothing, and it is skipped as a deleted document is.

use neardup_core::Bits;
use neardup_index::{BlockKeys, Match};

use crate::error::{Result, StoreError};
use crate::memory::Found;
use crate::record::{digest_key_hex, Entry};
use crate::store::{Change, Store};

/// Bits of a fingerprint of `bits`.
fn width(bits: Bits) -> u32 {
    match bits {
        Bits::B64 => 64,
        Bits::B128 => 128,
    }
}

/// The block keys for the profile's width.
#[derive(Debug, Clone)]
pub(crate) enum Plan {
    B64(BlockKeys<u64>),
    B128(BlockKeys<u128>),
}

impl Plan {
    /// The keys planned for fingerprints of `bits` searched within `k` (a new database's).
    pub fn new(bits: Bits, k: u32) -> Result<Plan> {
        Ok(match bits {
            Bits::B64 => Plan::B64(BlockKeys::planned(k)?),
            Bits::B128 => Plan::B128(BlockKeys::planned(k)?),
        })
    }

    /// The plan a store recorded ([`Plan::describe`]'s words), checked against the database's
    /// width and largest distance. `v1` (one block a table, before wider keys) still reads.
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
        let mut field = |name: &str| -> Result<u32> {
            words
                .next()
                .and_then(|word| word.strip_prefix(name)?.strip_prefix('='))
                .and_then(|value| value.parse().ok())
                .ok_or_else(corrupt)
        };
        let stored_bits = field("bits")?;
        let blocks = field("blocks")?;
        let choose = match version {
            "v1" => 1,
            "v2" => field("choose")?,
            _ => return Err(corrupt()),
        };
        let stored_k = field("k")?;
        if stored_bits != width(bits) || stored_k != k || words.next().is_some() {
            return Err(corrupt());
        }
        Ok(match bits {
            Bits::B64 => Plan::B64(BlockKeys::with_choice(blocks, choose, k)?),
            Bits::B128 => Plan::B128(BlockKeys::with_choice(blocks, choose, k)?),
        })
    }

    /// The plan in words, as the store records it: width, blocks, blocks a table, largest
    /// distance.
    pub fn describe(&self) -> String {
        let (bits, blocks, choose, k) = match self {
            Plan::B64(keys) => (64, keys.blocks(), keys.choose(), keys.max_k()),
            Plan::B128(keys) => (128, keys.blocks(), keys.choose(), keys.max_k()),
        };
        format!("v2 bits={bits} blocks={blocks} choose={choose} k={k}")
    }

    /// Bytes of one entry.
    fn entry_len(&self) -> usize {
        match self {
            Plan::B64(_) => 16,
            Plan::B128(_) => 24,
        }
    }

    /// The keys a document with `simhash` is stored under.
    pub fn homes(&self, simhash: u128) -> Vec<(u32, u64)> {
        match self {
            Plan::B64(keys) => keys.homes(simhash as u64),
            Plan::B128(keys) => keys.homes(simhash),
        }
    }

    /// The keys a check of `simhash` reads.
    fn probes(&self, simhash: u128) -> Vec<(u32, u64)> {
        match self {
            Plan::B64(keys) => keys.probes(simhash as u64),
            Plan::B128(keys) => keys.probes(simhash),
        }
    }

    /// The distance of `stored`, read from `table`, if that table reports it for `query`.
    fn accepts(&self, table: u32, stored: u128, query: u128, k: u32) -> Option<u32> {
        match self {
            Plan::B64(keys) => keys.accepts(table, stored as u64, query as u64, k),
            Plan::B128(keys) => keys.accepts(table, stored, query, k),
        }
    }

    /// The entry of a document: its slot, then its SimHash.
    pub fn entry(&self, slot: u64, simhash: u128) -> Vec<u8> {
        let mut bytes = slot.to_le_bytes().to_vec();
        match self {
            Plan::B64(_) => bytes.extend_from_slice(&(simhash as u64).to_le_bytes()),
            Plan::B128(_) => bytes.extend_from_slice(&simhash.to_le_bytes()),
        }
        bytes
    }

    /// The (slot, SimHash) entries of one list.
    fn entries<'a>(&self, list: &'a [u8]) -> Result<impl Iterator<Item = (u64, u128)> + 'a> {
        let len = self.entry_len();
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
        let probes = self.probes(simhash);
        let lists = store.read_blocks(&probes)?;
        let mut near = Vec::new();
        for (&(table, _), list) in probes.iter().zip(&lists) {
            for (slot, stored) in self.entries(list)? {
                if let Some(distance) = self.accepts(table, stored, simhash, k) {
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

/// The plan of the store's block keys: the one recorded (every process reads the keys the
/// same way, whichever version planned them), or, for a store that recorded none, a new plan
/// whose entries are written for every stored document (a database written before the store
/// held its index, or by processes that did not write them) before it is recorded. Several
/// processes doing this at once write some entries twice, which queries ignore.
pub(crate) fn open(store: &dyn Store, bits: Bits, k: u32) -> Result<Plan> {
    if let Some(stored) = store.blocks_plan()? {
        return Plan::parse(&stored, bits, k);
    }
    let plan = Plan::new(bits, k)?;
    let described = plan.describe();
    let mut entries = Vec::new();
    store.load(&mut |entry| entries.push(entry))?;
    for entry in &entries {
        store.add_blocks(
            &plan.homes(entry.simhash),
            &plan.entry(entry.slot, entry.simhash),
        )?;
    }
    tracing::info!(location = %store.location(), documents = entries.len(), plan = %described, "block keys built");
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
    /// The index the store holds (Redis: block keys spread over the cluster): the process holds
    /// no index, only a bounded cache, whatever the size of the database. Each check reads its
    /// block keys (one round trip per node holding some). redb and process memory hold no
    /// index: opening them so is an error.
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
                "the index the store holds (Redis block keys): memory bounded by --memory"
            }
        }
    }
}
