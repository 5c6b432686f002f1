//! `ExternalPairs` against `all_pairs` and brute force, with budgets that force every spill
//! path (fingerprints on disk, partitions and re-partitions, block-by-block buckets, sorted runs
//! merged in passes) and one that keeps everything in memory.

use neardup_index::synth::{planted, planted_with, skewed};
use neardup_index::{all_pairs, Design, ExternalPairs, Fingerprint, Pair};
use proptest::prelude::*;

/// Budgets: everything spilled (buckets of 16 records, runs of 16 pairs), a little, all in memory.
const BUDGETS: [u64; 3] = [1 << 10, 1 << 16, 1 << 30];

/// The pairs `ExternalPairs` finds within `memory`, and the bytes it spilled.
fn external<F: Fingerprint>(fps: &[F], k: u32, design: Design, memory: u64) -> (Vec<Pair>, u64) {
    let dir = tempfile::tempdir().unwrap();
    let mut search = ExternalPairs::new(memory, dir.path());
    for &fp in fps {
        search.push(fp).unwrap();
    }
    let mut found = search.finish(k, design).unwrap();
    let pairs = found.by_ref().map(Result::unwrap).collect();
    let spilled = found.spilled_bytes();
    drop(found);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
    (pairs, spilled)
}

/// Every pair within `k`, by comparing all of them.
fn brute<F: Fingerprint>(fps: &[F], k: u32) -> Vec<Pair> {
    let mut pairs = Vec::new();
    for (i, &x) in fps.iter().enumerate() {
        for (j, &y) in fps.iter().enumerate().skip(i + 1) {
            let d = x.distance(y);
            if d <= k {
                pairs.push(Pair::new(i as u32, j as u32, d));
            }
        }
    }
    pairs
}

/// Asserts the same answer as brute force and `all_pairs` at every budget; the smallest budget
/// must spill.
fn check<F: Fingerprint>(fps: &[F], k: u32, design: Design) {
    let expected = brute(fps, k);
    assert_eq!(all_pairs(fps, k, design).unwrap(), expected);
    for memory in BUDGETS {
        let (pairs, spilled) = external(fps, k, design, memory);
        assert_eq!(pairs, expected, "budget {memory}, design {design}");
        if memory == BUDGETS[0] && !fps.is_empty() {
            assert!(spilled > 0, "the tiny budget spills");
        }
        if memory == BUDGETS[2] {
            assert_eq!(spilled, 0, "the large budget holds everything");
        }
    }
}

#[test]
fn random_with_planted_copies() {
    let fps: Vec<u64> = planted_with(1500, 17, 300, 3, 60);
    for design in [
        Design::Tables4x16,
        Design::Tables10,
        Design::Blocks { blocks: 5, k: 3 },
    ] {
        check(&fps, 3, design);
    }
}

#[test]
fn a_huge_family_of_identical_values() {
    let mut fps = vec![0xDEAD_BEEF_0123_4567u64; 400];
    fps.extend(planted::<u64>(100, 3));
    fps.extend((0..100).map(|i| 0xDEAD_BEEF_0123_4567u64 ^ (1 << (i % 64))));
    check(&fps, 3, Design::Tables4x16);
    check(&vec![7u64; 300], 2, Design::Blocks { blocks: 3, k: 2 });
}

#[test]
fn skewed_top_bits() {
    // Most values share their top 40 bits: the tables keyed there put them in one bucket.
    let fps: Vec<u64> = skewed(800, 5, 0.9, 40);
    check(&fps, 3, Design::Tables4x16);
    check(&fps, 3, Design::Tables16);
    // Near copies among them: all within 24 bits.
    let close: Vec<u64> = planted_with::<u64>(600, 6, 200, 3, 30)
        .into_iter()
        .map(|fp| 0xABCD_EF12_3400_0000 | (fp & 0xFF_FFFF))
        .collect();
    check(&close, 3, Design::Tables4x16);
}

#[test]
fn wide_fingerprints() {
    let fps: Vec<u128> = planted_with(600, 11, 200, 4, 30);
    check(&fps, 4, Design::Blocks { blocks: 6, k: 4 });
}

#[test]
fn empty_input_and_bad_k() {
    check::<u64>(&[], 3, Design::Tables4x16);
    let dir = tempfile::tempdir().unwrap();
    let mut search = ExternalPairs::<u64>::new(1 << 10, dir.path());
    search.push(1).unwrap();
    assert!(
        search.finish(4, Design::Tables4x16).is_err(),
        "k above the design's"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_budget_gives_the_in_memory_answer(
        seed in any::<u64>(),
        n in 0usize..400,
        memory in 1u64..(1 << 18),
        top in prop_oneof![Just(0u64), Just(0xFFFF_0000_0000_0000u64)],
    ) {
        let fps: Vec<u64> = planted_with::<u64>(n, seed, n / 3, 3, n / 20)
            .into_iter()
            .map(|fp| fp | top)
            .collect();
        let (pairs, _) = external(&fps, 3, Design::Tables4x16, memory);
        prop_assert_eq!(pairs, all_pairs(&fps, 3, Design::Tables4x16).unwrap());
    }
}
