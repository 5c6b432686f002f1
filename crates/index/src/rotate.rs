//! The lecture slides' batch method: rotate, sort, compare neighbours. Approximate.
//!
//! Sorting puts fingerprints that differ only in low bits next to each other; rotating all of
//! them by the same amount (which preserves Hamming distance) lets other bits take the low
//! positions. For `r` in `0..rotations`, every fingerprint is rotated left by
//! `r · BITS / rotations` bits, the list is radix-sorted, and each entry is compared with its next
//! `window` entries. Pairs within `k` are collected, duplicates across rotations dropped.
//!
//! A pair is missed when, in every rotation, more than `window` other fingerprints sort between
//! them — e.g. whenever they differ in a high bit of every rotation, or sit inside a group of
//! more than `window` identical values. Its recall against brute force is measured in
//! BENCHMARKS.md; use [`crate::all_pairs`] when every pair matters.

use rayon::prelude::*;

use crate::allpairs::Pair;
use crate::error::{checked_len, IndexError, Result};
use crate::fingerprint::Fingerprint;
use crate::radix::lsd_sort;

/// How much work rotate-sort-compare does: more rotations and a wider window find more pairs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RotateParams {
    /// Number of rotations (sorts), `1..=BITS`; evenly spaced over the fingerprint width.
    pub rotations: u32,
    /// How many following entries each entry is compared with after a sort (`≥ 1`).
    pub window: u32,
}

/// Pairs within `k` found by rotate-sort-compare: a subset of [`crate::all_pairs`]' answer, sorted
/// by `(a, b)`, each once.
///
/// ```
/// use neardup_index::{rotate_pairs, Pair, RotateParams};
/// let fps: Vec<u64> = vec![0b1011, 0xF000_0000_0000_0000, 0b1001];
/// let params = RotateParams { rotations: 4, window: 1 };
/// assert_eq!(rotate_pairs(&fps, 3, params).unwrap(), vec![Pair::new(0, 2, 1)]);
/// ```
pub fn rotate_pairs<F: Fingerprint>(fps: &[F], k: u32, params: RotateParams) -> Result<Vec<Pair>> {
    if params.rotations == 0 || params.rotations > F::BITS || params.window == 0 {
        return Err(IndexError::InvalidParam(format!(
            "rotations must be in 1..={} and window ≥ 1 (got {} and {})",
            F::BITS,
            params.rotations,
            params.window
        )));
    }
    checked_len(fps.len())?;
    let mut pairs: Vec<Pair> = (0..params.rotations)
        .into_par_iter()
        .flat_map_iter(|r| {
            let shift = r * F::BITS / params.rotations;
            let mut rotated: Vec<(F, u32)> = fps
                .iter()
                .enumerate()
                .map(|(i, &fp)| (fp.rotate(shift), i as u32))
                .collect();
            lsd_sort(&mut rotated, 0, F::BITS, |&(fp, _), s| {
                fp.field(s, 8) as usize
            });
            let mut found = Vec::new();
            for (i, &(x, a)) in rotated.iter().enumerate() {
                let end = rotated.len().min(i + 1 + params.window as usize);
                for &(y, b) in &rotated[i + 1..end] {
                    let distance = x.distance(y);
                    if distance <= k {
                        found.push(Pair::new(a, b, distance));
                    }
                }
            }
            found
        })
        .collect();
    pairs.par_sort_unstable();
    pairs.dedup();
    Ok(pairs)
}
