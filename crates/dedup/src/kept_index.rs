//! The kept units of one component, searched for the ones a unit could join: by SimHash within
//! `k` ([`SimhashNear`]), by MinHash bands ([`BandNear`]) or by the prefixes of their shingle
//! sets ([`PrefixNear`]). The linear decision
//! ([`crate::by_kept`]) walks a component in keep order and asks its index, for each unit,
//! which kept units are its candidates; the rest of the walk is the same for every method.
//!
//! Units are named by their place in the component's keep order.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use rayon::prelude::*;

use neardup_index::{
    estimated_jaccard, BruteForce, Fingerprint, HammingIndex, LshParams, ProbedBlocks,
};

use crate::candidates::Verifier;
use crate::documents::Documents;
use crate::engine::distance;
use crate::error::DedupError;
use crate::policy::{Evidence, Measure, Policy};
use crate::prefixes::{prefix_lens, Prefix, PrefixIndex, ShingleOrder};

/// Components up to this many units are searched by a scan of their kept units: cheaper than the
/// probes of a [`ProbedBlocks`] query (64 comparisons a probe, 68 probes a table set at k = 6).
pub(crate) const SCAN_LIMIT: usize = 4096;

/// A kept unit a unit could join: its place, how near it is (the SimHash distance, by which
/// choices are ordered under every method), and the evidence their pair is accepted by when
/// the policy does not verify.
pub(crate) struct Near {
    /// The kept unit's place in the component's keep order.
    pub(crate) place: u32,
    /// The SimHash distance of the two units.
    pub(crate) distance: u32,
    /// The SimHash distance against `k`, or the MinHash estimate against the threshold.
    pub(crate) evidence: Evidence,
}

/// How the walk searches a component's kept units.
pub(crate) trait Nearness: Sync {
    /// The index of one component's kept units.
    type Index: KeptIndex;

    /// An empty index of `component`'s kept units (`component`: its units in keep order).
    fn index(&self, component: &[u32]) -> Result<Self::Index, DedupError>;

    /// The most bytes an index of `len` units holds for `unit`: what it reads of the unit when
    /// it is made, and the unit's entries once it is kept (counted high: the room growing
    /// vectors and maps keep). The walk splits a component whose index would not fit its share
    /// of the budget by these ([`crate::by_kept`]).
    fn unit_bytes(&self, unit: u32, len: usize) -> u64;
}

/// The kept units of one component (see the module documentation).
pub(crate) trait KeptIndex: Send + Sync {
    /// The kept units indexed so far that the unit at `place` is a candidate with.
    fn near(&self, place: u32) -> Result<Vec<Near>, DedupError>;

    /// Those of `places` (kept, not indexed yet) the unit at `place` is a candidate with.
    fn near_among(&self, place: u32, places: &[u32]) -> Result<Vec<Near>, DedupError>;

    /// Indexes the unit at `place` as kept.
    fn insert(&mut self, place: u32) -> Result<(), DedupError>;

    /// The unit at `place` joined a kept unit: it is never searched for again.
    fn joined(&mut self, _place: u32) {}
}

/// An index of the units of one part of a component, from its place `start` on, that speaks
/// of places in the whole component: the walk of a component too large for one index in its
/// share of the budget makes one a part ([`crate::by_kept`]).
pub(crate) struct Shifted<I> {
    inner: I,
    start: u32,
}

impl<I: KeptIndex> Shifted<I> {
    /// `inner`, made over the component's units from the place `start` on.
    pub(crate) fn new(inner: I, start: u32) -> Self {
        Shifted { inner, start }
    }

    fn shifted(&self, mut found: Vec<Near>) -> Vec<Near> {
        for near in &mut found {
            near.place += self.start;
        }
        found
    }
}

impl<I: KeptIndex> KeptIndex for Shifted<I> {
    fn near(&self, place: u32) -> Result<Vec<Near>, DedupError> {
        Ok(self.shifted(self.inner.near(place - self.start)?))
    }

    fn near_among(&self, place: u32, places: &[u32]) -> Result<Vec<Near>, DedupError> {
        if self.start == 0 {
            return self.inner.near_among(place, places);
        }
        let local: Vec<u32> = places.iter().map(|&p| p - self.start).collect();
        Ok(self.shifted(self.inner.near_among(place - self.start, &local)?))
    }

    fn insert(&mut self, place: u32) -> Result<(), DedupError> {
        self.inner.insert(place - self.start)
    }

    fn joined(&mut self, place: u32) {
        self.inner.joined(place - self.start);
    }
}

/// SimHash values within `k` bits: `fingerprint` gives a unit's value.
pub(crate) struct SimhashNear<FP> {
    /// A unit's SimHash value.
    pub(crate) fingerprint: FP,
    /// The policy's `k`.
    pub(crate) k: u32,
}

impl<F: Fingerprint, FP: Fn(u32) -> F + Sync> Nearness for SimhashNear<FP> {
    type Index = SimhashKept<F>;

    fn index(&self, component: &[u32]) -> Result<SimhashKept<F>, DedupError> {
        let len = component.len();
        let index: Box<dyn HammingIndex<F> + Send + Sync> = if len <= SCAN_LIMIT {
            Box::new(BruteForce::new())
        } else {
            let blocks = ProbedBlocks::<F>::blocks_for(len, self.k);
            Box::new(ProbedBlocks::with_capacity(blocks, self.k, len)?)
        };
        let fps = if len <= SCAN_LIMIT {
            component.iter().map(|&u| (self.fingerprint)(u)).collect()
        } else {
            component
                .par_iter()
                .map(|&u| (self.fingerprint)(u))
                .collect()
        };
        Ok(SimhashKept {
            fps,
            index,
            k: self.k,
        })
    }

    /// The value (read for every unit), and once kept its entries: a scan's slot (the value, an
    /// id of 8 bytes and 4 of map), or a [`ProbedBlocks`]' slot and one entry a block (the value
    /// and 4 bytes), twice for the room its buckets keep as they grow.
    fn unit_bytes(&self, _unit: u32, len: usize) -> u64 {
        let value = std::mem::size_of::<F>() as u64;
        let slot = value + 12;
        let entries = if len <= SCAN_LIMIT {
            slot
        } else {
            slot + 2 * u64::from(ProbedBlocks::<F>::blocks_for(len, self.k)) * (value + 4)
        };
        value + entries
    }
}

/// A component's SimHash values by place, its kept places indexed by them (a scan for a small
/// component, a [`ProbedBlocks`] sized for a large one).
pub(crate) struct SimhashKept<F> {
    fps: Vec<F>,
    index: Box<dyn HammingIndex<F> + Send + Sync>,
    k: u32,
}

impl<F: Fingerprint> SimhashKept<F> {
    fn near_at(&self, place: u32, distance: u32) -> Near {
        Near {
            place,
            distance,
            evidence: Evidence {
                measure: Measure::SimhashDistance,
                value: f64::from(distance),
                threshold: f64::from(self.k),
            },
        }
    }
}

impl<F: Fingerprint> KeptIndex for SimhashKept<F> {
    fn near(&self, place: u32) -> Result<Vec<Near>, DedupError> {
        Ok(self
            .index
            .query(self.fps[place as usize], self.k)?
            .into_iter()
            .map(|found| self.near_at(found.id as u32, found.distance))
            .collect())
    }

    fn near_among(&self, place: u32, places: &[u32]) -> Result<Vec<Near>, DedupError> {
        let fp = self.fps[place as usize];
        Ok(places
            .iter()
            .filter_map(|&other| {
                let distance = fp.xor(self.fps[other as usize]).ones();
                (distance <= self.k).then(|| self.near_at(other, distance))
            })
            .collect())
    }

    fn insert(&mut self, place: u32) -> Result<(), DedupError> {
        Ok(self
            .index
            .insert(u64::from(place), self.fps[place as usize])?)
    }
}

/// MinHash signatures that share a band and whose estimated Jaccard reaches `threshold`: the
/// candidates of the MinHash LSH search, which the decision from every pair finds with
/// [`neardup_index::candidate_pairs`].
pub(crate) struct BandNear<'a> {
    /// The documents, their signatures written out and the units' rows gathered.
    pub(crate) documents: &'a Documents,
    /// The banding of the search.
    pub(crate) params: LshParams,
    /// The least estimate a candidate has.
    pub(crate) threshold: f64,
}

impl Nearness for BandNear<'_> {
    type Index = BandKept;

    /// Reads the component's signatures (spilled ones from disk, by position) and SimHash
    /// values: a unit holds its signature (4 bytes a value), its SimHash (16 bytes) and its
    /// band keys (8 bytes a band) while its component is walked.
    fn index(&self, component: &[u32]) -> Result<BandKept, DedupError> {
        let signatures = self.documents.signatures();
        let width = signatures.width();
        let read = signatures.read_flat(component)?;
        let bands = self.params.bands;
        let mut keys = Vec::with_capacity(component.len() * bands);
        for signature in read.chunks_exact(width.max(1)) {
            keys.extend(self.params.band_keys(signature));
        }
        Ok(BandKept {
            width,
            signatures: read,
            simhashes: component
                .iter()
                .map(|&u| self.documents.simhash(u).as_u128())
                .collect(),
            keys,
            buckets: HashMap::new(),
            params: self.params,
            threshold: self.threshold,
        })
    }

    /// Its signature, SimHash and band keys, and once kept a place in a bucket a band (4 bytes,
    /// and as much again for the map's entry and room).
    fn unit_bytes(&self, _unit: u32, _len: usize) -> u64 {
        let width = self.documents.signatures().width() as u64;
        let bands = self.params.bands as u64;
        width * 4 + 16 + bands * 8 + bands * 16
    }
}

/// A component's signatures, SimHash values and band keys by place, its kept places by band key.
pub(crate) struct BandKept {
    width: usize,
    signatures: Vec<u32>,
    simhashes: Vec<u128>,
    keys: Vec<u64>,
    buckets: HashMap<u64, Vec<u32>>,
    params: LshParams,
    threshold: f64,
}

impl BandKept {
    fn signature(&self, place: u32) -> &[u32] {
        let at = place as usize * self.width;
        &self.signatures[at..at + self.width]
    }

    fn keys(&self, place: u32) -> &[u64] {
        let bands = self.params.bands;
        &self.keys[place as usize * bands..(place as usize + 1) * bands]
    }

    /// The unit at `other` as a candidate of the unit at `place`, if it is one: a band equal
    /// value for value, and the estimate at the threshold or above.
    fn candidate(&self, place: u32, other: u32) -> Option<Near> {
        let (a, b) = (self.signature(place), self.signature(other));
        if !self.params.share_band(a, b) {
            return None;
        }
        let estimate = estimated_jaccard(a, b);
        (estimate >= self.threshold).then(|| Near {
            place: other,
            distance: (self.simhashes[place as usize] ^ self.simhashes[other as usize])
                .count_ones(),
            evidence: Evidence {
                measure: Measure::MinhashEstimate,
                value: estimate,
                threshold: self.threshold,
            },
        })
    }
}

impl KeptIndex for BandKept {
    fn near(&self, place: u32) -> Result<Vec<Near>, DedupError> {
        let mut others: Vec<u32> = self
            .keys(place)
            .iter()
            .filter_map(|key| self.buckets.get(key))
            .flatten()
            .copied()
            .collect();
        others.sort_unstable();
        others.dedup();
        Ok(others
            .into_iter()
            .filter_map(|other| self.candidate(place, other))
            .collect())
    }

    fn near_among(&self, place: u32, places: &[u32]) -> Result<Vec<Near>, DedupError> {
        Ok(places
            .iter()
            .filter_map(|&other| self.candidate(place, other))
            .collect())
    }

    fn insert(&mut self, place: u32) -> Result<(), DedupError> {
        let bands = self.params.bands;
        for i in 0..bands {
            let key = self.keys[place as usize * bands + i];
            self.buckets.entry(key).or_default().push(place);
        }
        Ok(())
    }
}

/// Shingle sets whose prefixes in the [`ShingleOrder`] make them candidates of the overlap
/// search ([`crate::prefixes`]): the pairs verification can accept, and a few more.
pub(crate) struct PrefixNear<'a> {
    /// The documents, the units' rows gathered.
    pub(crate) documents: &'a Documents,
    /// The units' shingle sets.
    pub(crate) sets: Arc<Verifier>,
    /// The order of shingles.
    pub(crate) order: &'a ShingleOrder,
    /// The policy (its threshold and length guard).
    pub(crate) policy: &'a Policy,
}

impl<'a> Nearness for PrefixNear<'a> {
    type Index = PrefixKept<'a>;

    /// Holds 4 bytes a unit of the component, the prefixes of its kept units indexed (about
    /// 16 bytes a shingle of each, the share of a set that could still reach the threshold)
    /// and those of the units of the batch being decided.
    fn index(&self, component: &[u32]) -> Result<PrefixKept<'a>, DedupError> {
        Ok(PrefixKept {
            near: PrefixNear {
                documents: self.documents,
                sets: Arc::clone(&self.sets),
                order: self.order,
                policy: self.policy,
            },
            component: component.to_vec(),
            index: PrefixIndex::default(),
            pending: Mutex::new(HashMap::new()),
        })
    }

    /// Its place in the component, and its prefix: made once (16 bytes a shingle of the probe
    /// prefix), then indexed once kept ([`Prefix::index_bytes`], counted high).
    fn unit_bytes(&self, unit: u32, _len: usize) -> u64 {
        let len = self.sets.set_len(unit).unwrap_or(0);
        let (_, probe) = prefix_lens(len, self.policy);
        4 + probe as u64 * (16 + 32)
    }
}

/// A component's kept units by the shingles of their prefixes, and the prefixes of the units
/// being decided (made once a unit, when it is first searched for).
pub(crate) struct PrefixKept<'a> {
    near: PrefixNear<'a>,
    component: Vec<u32>,
    index: PrefixIndex,
    pending: Mutex<HashMap<u32, Arc<Prefix>>>,
}

impl PrefixKept<'_> {
    /// The prefix of the unit at `place`: made from its set once, then held until it is kept
    /// or has joined.
    fn prefix(&self, place: u32) -> Result<Arc<Prefix>, DedupError> {
        if let Some(prefix) = self.lock().get(&place) {
            return Ok(Arc::clone(prefix));
        }
        let near = &self.near;
        let unit = self.component[place as usize];
        let set = near.sets.set(unit)?.unwrap_or_default();
        let prefix = Arc::new(near.order.prefix(&set, near.policy));
        self.lock().insert(place, Arc::clone(&prefix));
        Ok(prefix)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u32, Arc<Prefix>>> {
        // The map only holds prefixes made again on demand: a panic elsewhere leaves it usable.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The kept unit at `other` as a candidate of the unit at `place` (verification decides).
    fn near_at(&self, place: u32, other: u32) -> Near {
        let (unit, kept) = (
            self.component[place as usize],
            self.component[other as usize],
        );
        let distance = distance(self.near.documents, unit, kept);
        Near {
            place: other,
            distance,
            evidence: Evidence {
                measure: Measure::SimhashDistance,
                value: f64::from(distance),
                threshold: f64::from(self.near.policy.k),
            },
        }
    }
}

impl KeptIndex for PrefixKept<'_> {
    fn near(&self, place: u32) -> Result<Vec<Near>, DedupError> {
        let prefix = self.prefix(place)?;
        Ok(self
            .index
            .candidates(&prefix, self.near.policy)
            .into_iter()
            .map(|other| self.near_at(place, other))
            .collect())
    }

    fn near_among(&self, place: u32, places: &[u32]) -> Result<Vec<Near>, DedupError> {
        // The prefixes of the batch's units were made by `near`, before: this reads no set.
        let prefix = self.prefix(place)?;
        let mut found = Vec::new();
        for &other in places {
            if prefix.candidates(&*self.prefix(other)?, self.near.policy) {
                found.push(self.near_at(place, other));
            }
        }
        Ok(found)
    }

    fn insert(&mut self, place: u32) -> Result<(), DedupError> {
        let prefix = self.prefix(place)?;
        self.lock().remove(&place);
        self.index.insert(place, &prefix);
        Ok(())
    }

    fn joined(&mut self, place: u32) {
        self.lock().remove(&place);
    }
}
