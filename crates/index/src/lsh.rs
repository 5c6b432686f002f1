//! MinHash LSH: banding a signature so that similar sets collide in at least one band.
//!
//! Signatures are `&[u32]` slices of `num_perm` values (what `neardup-core` produces). The first
//! `bands × rows` values are cut into `bands` bands of `rows` values; two signatures are
//! *candidates* when some band is equal value for value. Two sets of Jaccard similarity `s`
//! collide with probability `1 − (1 − s^rows)^bands`; [`LshParams::optimal`] picks `bands` and
//! `rows` as datasketch does, minimising the weighted integrals of false positives (below the
//! threshold) and false negatives (above it).
//!
//! Band values are found through a 64-bit hash of the band, but candidates are confirmed by
//! comparing the band itself, so a hash collision never yields a candidate.

use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::{checked_len, IndexError, Result};

/// Number of intervals of the composite Simpson rule used for the probability integrals.
const SIMPSON_STEPS: usize = 2048;

/// LSH banding: `bands` bands of `rows` signature values each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LshParams {
    /// Number of bands `b`.
    pub bands: usize,
    /// Values per band `r`.
    pub rows: usize,
}

impl LshParams {
    /// The `(bands, rows)` with `bands × rows ≤ num_perm` minimising
    /// `fp_weight · ∫₀^t P(candidate | s) ds + fn_weight · ∫_t^1 P(not candidate | s) ds`,
    /// the rule of datasketch's `_optimal_param` (the first minimum in `b`, then `r` order wins).
    ///
    /// Needs `0 ≤ threshold ≤ 1`, `num_perm ≥ 2`, weights in `[0, 1]` summing to 1.
    ///
    /// ```
    /// use neardup_index::LshParams;
    /// let p = LshParams::optimal(0.8, 128, 0.5, 0.5).unwrap();
    /// assert!(p.bands * p.rows <= 128);
    /// ```
    pub fn optimal(
        threshold: f64,
        num_perm: usize,
        fp_weight: f64,
        fn_weight: f64,
    ) -> Result<Self> {
        check_threshold(threshold)?;
        if num_perm < 2 {
            return Err(IndexError::InvalidParam(format!(
                "num_perm must be at least 2 (got {num_perm})"
            )));
        }
        let weight_ok = |w: f64| (0.0..=1.0).contains(&w);
        if !weight_ok(fp_weight)
            || !weight_ok(fn_weight)
            || (fp_weight + fn_weight - 1.0).abs() > 1e-9
        {
            return Err(IndexError::InvalidParam(format!(
                "weights must be in [0, 1] and sum to 1 (got {fp_weight} and {fn_weight})"
            )));
        }
        let mut best = (f64::INFINITY, LshParams { bands: 1, rows: 1 });
        for bands in 1..=num_perm {
            for rows in 1..=num_perm / bands {
                let p = LshParams { bands, rows };
                let error = fp_weight * p.false_positive_probability(threshold)
                    + fn_weight * p.false_negative_probability(threshold);
                if error < best.0 {
                    best = (error, p);
                }
            }
        }
        Ok(best.1)
    }

    /// Signature values the bands use, `bands × rows`; fails if either is 0 or the product
    /// overflows.
    pub fn values(&self) -> Result<usize> {
        self.bands
            .checked_mul(self.rows)
            .filter(|&v| v > 0)
            .ok_or_else(|| {
                IndexError::InvalidParam(format!(
                    "{} bands of {} rows is not a banding",
                    self.bands, self.rows
                ))
            })
    }

    /// The key of each band of `sig` (which has at least [`LshParams::values`] values), in
    /// band order: a 64-bit hash of the band's values and its place, so that two signatures
    /// equal in band `i` have equal `i`-th keys, and keys of different bands seldom meet.
    /// Equal keys are a hint, not a proof: confirm with [`LshParams::share_band`].
    ///
    /// ```
    /// use neardup_index::LshParams;
    /// let p = LshParams { bands: 2, rows: 2 };
    /// let (a, b) = ([1, 2, 3, 4], [1, 2, 9, 9]);
    /// let (ka, kb): (Vec<u64>, Vec<u64>) = (p.band_keys(&a).collect(), p.band_keys(&b).collect());
    /// assert_eq!(ka[0], kb[0]);
    /// assert_ne!(ka[1], kb[1]);
    /// assert!(p.share_band(&a, &b));
    /// ```
    pub fn band_keys<'s>(&self, sig: &'s [u32]) -> impl Iterator<Item = u64> + 's {
        let rows = self.rows.max(1);
        sig.chunks_exact(rows)
            .take(self.bands)
            .enumerate()
            .map(|(i, band)| band_hash(band) ^ (i as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }

    /// Whether `a` and `b` are equal in some band, value for value: whether they are
    /// candidates.
    pub fn share_band(&self, a: &[u32], b: &[u32]) -> bool {
        self.first_shared_band(a, b).is_some()
    }

    /// The first band in which `a` and `b` are equal, value for value, if any.
    pub fn first_shared_band(&self, a: &[u32], b: &[u32]) -> Option<usize> {
        let rows = self.rows.max(1);
        a.chunks_exact(rows)
            .zip(b.chunks_exact(rows))
            .take(self.bands)
            .position(|(x, y)| x == y)
    }

    /// Probability that two sets of Jaccard similarity `s` share a band.
    pub fn collision_probability(&self, s: f64) -> f64 {
        1.0 - (1.0 - s.powi(self.rows as i32)).powi(self.bands as i32)
    }

    /// `∫₀^threshold` of the collision probability: the false-positive area.
    pub fn false_positive_probability(&self, threshold: f64) -> f64 {
        simpson(|s| self.collision_probability(s), 0.0, threshold)
    }

    /// `∫_threshold^1` of the miss probability: the false-negative area.
    pub fn false_negative_probability(&self, threshold: f64) -> f64 {
        simpson(|s| 1.0 - self.collision_probability(s), threshold, 1.0)
    }
}

/// Fails unless `0 ≤ threshold ≤ 1`.
fn check_threshold(threshold: f64) -> Result<()> {
    if (0.0..=1.0).contains(&threshold) {
        Ok(())
    } else {
        Err(IndexError::InvalidParam(format!(
            "threshold must be in [0, 1] (got {threshold})"
        )))
    }
}

/// Composite Simpson integral of `f` over `[a, b]`.
fn simpson(f: impl Fn(f64) -> f64, a: f64, b: f64) -> f64 {
    let h = (b - a) / SIMPSON_STEPS as f64;
    let inner: f64 = (1..SIMPSON_STEPS)
        .map(|i| f(a + i as f64 * h) * if i % 2 == 1 { 4.0 } else { 2.0 })
        .sum();
    (f(a) + inner + f(b)) * h / 3.0
}

/// The estimated Jaccard similarity of two signatures: the share of equal positions.
pub fn estimated_jaccard(a: &[u32], b: &[u32]) -> f64 {
    let len = a.len().min(b.len());
    if len == 0 {
        return 0.0;
    }
    let equal = a.iter().zip(b).filter(|(x, y)| x == y).count();
    equal as f64 / len as f64
}

/// A 64-bit hash of one band (in memory only; never stored).
fn band_hash(band: &[u32]) -> u64 {
    let mut h: u64 = 0x243F_6A88_85A3_08D3 ^ band.len() as u64;
    for &v in band {
        h = (h ^ u64::from(v)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
    }
    h ^ (h >> 32)
}

/// Two positions of a batch whose signatures share a band, `a < b`, with their estimated
/// Jaccard similarity.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimilarPair {
    /// The smaller position.
    pub a: u32,
    /// The larger position.
    pub b: u32,
    /// Estimated Jaccard similarity (share of equal signature values).
    pub similarity: f64,
}

/// An online MinHash LSH index under caller-chosen `u64` ids.
///
/// ```
/// use neardup_index::MinHashLsh;
/// let mut lsh = MinHashLsh::new(0.5, 8).unwrap();
/// lsh.insert(1, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
/// lsh.insert(2, &[1, 2, 3, 4, 5, 6, 0, 0]).unwrap();
/// lsh.insert(3, &[9, 9, 9, 9, 9, 9, 9, 9]).unwrap();
/// assert_eq!(lsh.query(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap(), vec![1, 2]);
/// ```
#[derive(Debug, Clone)]
pub struct MinHashLsh {
    params: LshParams,
    num_perm: usize,
    threshold: f64,
    /// Per band: band hash → ids whose band has that hash.
    bands: Vec<HashMap<u64, Vec<u64>>>,
    /// Signature of every stored id.
    sigs: HashMap<u64, Box<[u32]>>,
}

impl MinHashLsh {
    /// An index for signatures of `num_perm` values, banded for `threshold` with equal weights
    /// (datasketch's defaults).
    pub fn new(threshold: f64, num_perm: usize) -> Result<Self> {
        let params = LshParams::optimal(threshold, num_perm, 0.5, 0.5)?;
        Self::with_params(threshold, num_perm, params)
    }

    /// An index with explicit banding; `bands × rows` must not exceed `num_perm`. `threshold` is
    /// the one verification uses.
    pub fn with_params(threshold: f64, num_perm: usize, params: LshParams) -> Result<Self> {
        check_threshold(threshold)?;
        if params.values()? > num_perm {
            return Err(IndexError::InvalidParam(format!(
                "{} bands of {} rows do not fit {num_perm} values",
                params.bands, params.rows
            )));
        }
        Ok(MinHashLsh {
            params,
            num_perm,
            threshold,
            bands: vec![HashMap::new(); params.bands],
            sigs: HashMap::new(),
        })
    }

    /// The banding in use.
    pub fn params(&self) -> LshParams {
        self.params
    }

    /// Number of stored signatures.
    pub fn len(&self) -> usize {
        self.sigs.len()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.sigs.is_empty()
    }

    /// The band `i` of `sig`.
    fn band<'s>(&self, sig: &'s [u32], i: usize) -> &'s [u32] {
        &sig[i * self.params.rows..(i + 1) * self.params.rows]
    }

    /// Fails unless `sig` has `num_perm` values.
    fn check(&self, sig: &[u32]) -> Result<()> {
        if sig.len() == self.num_perm {
            Ok(())
        } else {
            Err(IndexError::SignatureLength {
                got: sig.len(),
                expected: self.num_perm,
            })
        }
    }

    /// Stores `sig` under `id`.
    pub fn insert(&mut self, id: u64, sig: &[u32]) -> Result<()> {
        self.check(sig)?;
        if self.sigs.contains_key(&id) {
            return Err(IndexError::DuplicateId(id));
        }
        for i in 0..self.params.bands {
            let key = band_hash(self.band(sig, i));
            self.bands[i].entry(key).or_default().push(id);
        }
        self.sigs.insert(id, sig.into());
        Ok(())
    }

    /// Removes `id`; returns whether it was stored.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(sig) = self.sigs.remove(&id) else {
            return false;
        };
        for i in 0..self.params.bands {
            let key = band_hash(self.band(&sig, i));
            if let Some(ids) = self.bands[i].get_mut(&key) {
                ids.retain(|&x| x != id);
                if ids.is_empty() {
                    self.bands[i].remove(&key);
                }
            }
        }
        true
    }

    /// Ids of stored signatures sharing at least one band with `sig`, ascending.
    pub fn query(&self, sig: &[u32]) -> Result<Vec<u64>> {
        self.check(sig)?;
        let mut found = Vec::new();
        for i in 0..self.params.bands {
            let band = self.band(sig, i);
            let Some(ids) = self.bands[i].get(&band_hash(band)) else {
                continue;
            };
            found.extend(
                ids.iter()
                    .filter(|id| self.sigs.get(id).is_some_and(|s| self.band(s, i) == band)),
            );
        }
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Candidates whose estimated Jaccard similarity with `sig` is at least the threshold, with
    /// that estimate; sorted by similarity (highest first), then id.
    pub fn query_verified(&self, sig: &[u32]) -> Result<Vec<(u64, f64)>> {
        let mut found: Vec<(u64, f64)> = self
            .query(sig)?
            .into_iter()
            .filter_map(|id| {
                let s = estimated_jaccard(self.sigs.get(&id)?, sig);
                (s >= self.threshold).then_some((id, s))
            })
            .collect();
        found.sort_by(|x, y| y.1.total_cmp(&x.1).then(x.0.cmp(&y.0)));
        Ok(found)
    }
}

/// Every pair of positions in `sigs` that share a band under `params`, each once, sorted by
/// `(a, b)`. With `verify = Some(t)`, only pairs whose estimated Jaccard similarity is `≥ t`.
///
/// A pair is reported by the first band it shares (later bands check the earlier ones), so no
/// global set of pairs is kept. Bands are processed in parallel.
pub fn candidate_pairs<S: AsRef<[u32]> + Sync>(
    sigs: &[S],
    params: LshParams,
    verify: Option<f64>,
) -> Result<Vec<SimilarPair>> {
    checked_len(sigs.len())?;
    if let Some(t) = verify {
        check_threshold(t)?;
    }
    let needed = params.values()?;
    if let Some(short) = sigs.iter().find(|s| s.as_ref().len() < needed) {
        return Err(IndexError::SignatureLength {
            got: short.as_ref().len(),
            expected: needed,
        });
    }
    let rows = params.rows;
    fn band<S: AsRef<[u32]>>(sig: &S, i: usize, rows: usize) -> &[u32] {
        &sig.as_ref()[i * rows..(i + 1) * rows]
    }
    let mut pairs: Vec<SimilarPair> = (0..params.bands)
        .into_par_iter()
        .flat_map_iter(|i| {
            let mut keyed: Vec<(u64, u32)> = sigs
                .iter()
                .enumerate()
                .map(|(p, s)| (band_hash(band(s, i, rows)), p as u32))
                .collect();
            keyed.sort_unstable();
            let mut found = Vec::new();
            for run in keyed.chunk_by(|x, y| x.0 == y.0) {
                for (j, &(_, a)) in run.iter().enumerate() {
                    let sa = &sigs[a as usize];
                    for &(_, b) in &run[j + 1..] {
                        let sb = &sigs[b as usize];
                        let first = band(sa, i, rows) == band(sb, i, rows)
                            && (0..i).all(|e| band(sa, e, rows) != band(sb, e, rows));
                        if !first {
                            continue;
                        }
                        let similarity = estimated_jaccard(sa.as_ref(), sb.as_ref());
                        if verify.is_none_or(|t| similarity >= t) {
                            found.push(SimilarPair { a, b, similarity });
                        }
                    }
                }
            }
            found
        })
        .collect();
    pairs.par_sort_unstable_by_key(|p| (p.a, p.b));
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_params_are_errors() {
        assert!(LshParams::optimal(1.5, 128, 0.5, 0.5).is_err());
        assert!(LshParams::optimal(0.5, 1, 0.5, 0.5).is_err());
        assert!(LshParams::optimal(0.5, 128, 0.9, 0.5).is_err());
        assert!(MinHashLsh::with_params(0.5, 8, LshParams { bands: 3, rows: 3 }).is_err());
        assert!(LshParams {
            bands: usize::MAX,
            rows: 2
        }
        .values()
        .is_err());
        assert!(LshParams { bands: 0, rows: 2 }.values().is_err());
        let mut lsh = MinHashLsh::new(0.5, 8).unwrap();
        assert!(lsh.insert(1, &[1, 2, 3]).is_err());
        lsh.insert(1, &[0; 8]).unwrap();
        assert_eq!(lsh.insert(1, &[0; 8]), Err(IndexError::DuplicateId(1)));
    }

    #[test]
    fn probabilities_are_consistent() {
        let p = LshParams { bands: 20, rows: 5 };
        let total = p.false_positive_probability(0.5) + p.false_negative_probability(0.5);
        // FP area + FN area = ∫₀^t P + ∫_t^1 (1 − P); P integrates to a known closed form only
        // for special cases, so check the sum against a direct integral.
        let direct = simpson(|s| p.collision_probability(s), 0.0, 0.5) + 0.5
            - simpson(|s| p.collision_probability(s), 0.5, 1.0);
        assert!((total - direct).abs() < 1e-12);
    }
}
