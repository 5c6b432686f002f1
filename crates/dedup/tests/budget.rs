//! The budget of a run inside a host process: the memory the host holds is not the run's, nor
//! what was freed before it. A test binary of its own, with one test: the measure is the
//! process's resident memory, which no other test may move meanwhile.

use neardup_core::digest::{Digest, DigestAlgorithm};
use neardup_core::measure::FeatureSet;
use neardup_core::{Fingerprints, Simhash};
use neardup_dedup::{
    dedup, peak_resident_bytes, resident_bytes, Budget, DedupOptions, Item, Policy,
};

const MIB: u64 = 1 << 20;

/// 400 documents in 20 families of near copies (SimHash within 2 bits of their original), each
/// with a shingle set that overlaps its original's: every copy is a candidate whose sets the
/// decision reads.
fn families() -> Vec<Item> {
    let mut items = Vec::new();
    for family in 0..20u64 {
        let original = family.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        for copy in 0..20u64 {
            let simhash = original ^ ((copy & 3) << (copy % 60));
            let fingerprints = Fingerprints {
                simhash: Simhash::B64(simhash),
                minhash: None,
                digest: Digest::of(
                    DigestAlgorithm::Xxh3_128,
                    &(family * 100 + copy).to_le_bytes(),
                ),
                features: 200,
            };
            let mut item = Item::new(fingerprints, 1000);
            let shingles = (0..200u64).map(|i| family << 32 | if i < 190 { i } else { i + copy });
            item.features = Some(FeatureSet::new(shingles.collect()));
            items.push(item);
        }
    }
    items
}

#[test]
fn a_run_inside_a_host_gets_its_budget_beyond_what_the_host_holds() {
    // The host (an interpreter, a worker's batches): 200 MiB touched and held through the run.
    let host = vec![1u8; (200 * MIB) as usize];
    std::hint::black_box(&host);
    let resident = resident_bytes().expect("the platform measures its memory");
    assert!(
        resident >= 200 * MIB,
        "the host's memory is resident ({resident} bytes)"
    );

    let items = families();
    let dir = tempfile::tempdir().unwrap();
    // 256 MiB leave 128 MiB after the slack: room for every set of a run that counts from its
    // start, none for one that counts the host's 200 MiB too.
    let run = Budget::new(256 * MIB, Some(dir.path().to_path_buf())).unwrap();
    assert!(run.held_before.is_some_and(|held| held >= 200 * MIB));
    let whole = Budget::whole_process(256 * MIB, Some(dir.path().to_path_buf())).unwrap();
    let options = |budget: &Budget| DedupOptions {
        budget: budget.clone(),
        ..DedupOptions::new(Policy::default())
    };
    let beside = dedup(&items, &options(&run)).unwrap();
    let counted = dedup(&items, &options(&whole)).unwrap();
    assert!(beside.verified_candidates > 300, "the sets are read");
    assert_eq!(
        beside.spilled_bytes, 0,
        "the host's memory is not the run's"
    );
    assert!(
        counted.spilled_bytes > 0,
        "under a limit on the whole process it is"
    );
    assert_eq!(beside.removals, counted.removals);
    assert_eq!(beside.clusters, counted.clusters);

    // Memory freed before a run (the host's batch, an earlier phase's tables) is the run's to
    // use: the process's peak stays where it was, but it is not held.
    drop(host);
    let peak = peak_resident_bytes().unwrap();
    assert!(peak >= 200 * MIB);
    assert!(
        resident_bytes().unwrap() + 150 * MIB < peak,
        "the host's pages went back"
    );
    let freed = dedup(&items, &options(&whole)).unwrap();
    assert_eq!(freed.spilled_bytes, 0, "what was freed is not held");
    assert_eq!(freed.removals, counted.removals);
}
