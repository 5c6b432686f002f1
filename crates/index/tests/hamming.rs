//! Every exact Hamming method against brute force: online queries and batch all-pairs, at 64 and
//! 128 bits, on random data, planted near-copies, many identical fingerprints and skewed data.

use neardup_index::synth::{self, Rng};
use neardup_index::{
    all_pairs, near_components, run_components, BitInvertedIndex, BruteForce, Design,
    ExternalPairs, Fingerprint, HammingIndex, IndexError, Match, Pair, PermutedTables,
    ProbedBlocks, UnionFind,
};
use proptest::prelude::*;

/// The kinds of data every method must get right.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Random,
    Planted,
    Identical,
    Skewed,
}

/// `n` fingerprints of the given kind; near-copies differ by up to `k` bits.
fn data<F: Fingerprint>(kind: Kind, n: usize, k: u32, seed: u64) -> Vec<F> {
    match kind {
        Kind::Random => synth::random(n, seed),
        Kind::Planted => synth::planted_with(n, seed, n / 3, k, n / 10),
        Kind::Identical => {
            let mut rng = Rng::new(seed);
            let pool: Vec<F> = (0..3).map(|_| rng.fingerprint()).collect();
            (0..n)
                .map(|i| {
                    let fp = pool[i % pool.len()];
                    if i % 4 == 0 {
                        let flips = rng.below(u64::from(k) + 2) as u32;
                        rng.flip(fp, flips)
                    } else {
                        fp
                    }
                })
                .collect()
        }
        Kind::Skewed => {
            // 30% share one top-16-bit value; add near-copies so there are pairs inside it.
            let mut fps: Vec<F> = synth::skewed(n, seed, 0.3, 16);
            let mut rng = Rng::new(seed ^ 1);
            for i in (1..fps.len()).step_by(5) {
                let flips = rng.below(u64::from(k) + 1) as u32;
                fps[i] = rng.flip(fps[i - 1], flips);
            }
            fps
        }
    }
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::Random),
        Just(Kind::Planted),
        Just(Kind::Identical),
        Just(Kind::Skewed)
    ]
}

/// Brute-force all pairs: the reference.
fn reference_pairs<F: Fingerprint>(fps: &[F], k: u32) -> Vec<Pair> {
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

/// Designs valid for `F` that answer distance `k`.
fn designs<F: Fingerprint>(k: u32, extra_blocks: u32) -> Vec<Design> {
    let mut designs = vec![
        Design::Blocks {
            blocks: k + 1 + extra_blocks,
            k,
        },
        Design::for_expected_len(1000, k, F::BITS),
    ];
    if F::BITS == 64 && k <= 3 {
        designs.extend(Design::PRESETS);
    }
    designs
}

/// Loads `fps` (id = 1000 + position) half by batch, half one by one; removes every 7th; then
/// checks that queries agree with brute force for existing fingerprints, their near-copies and
/// random ones.
fn check_online<F: Fingerprint>(fps: &[F], k: u32, seed: u64, index: &mut dyn HammingIndex<F>) {
    let mut brute = BruteForce::<F>::new();
    let items: Vec<(u64, F)> = fps
        .iter()
        .enumerate()
        .map(|(i, &fp)| (1000 + i as u64, fp))
        .collect();
    let half = items.len() / 2;
    index.insert_batch(&items[..half]).unwrap();
    brute.insert_batch(&items[..half]).unwrap();
    for &(id, fp) in &items[half..] {
        index.insert(id, fp).unwrap();
        brute.insert(id, fp).unwrap();
    }
    for &(id, fp) in items.iter().step_by(7) {
        assert_eq!(index.remove(id), Some(fp));
        assert_eq!(brute.remove(id), Some(fp));
        assert_eq!(index.remove(id), None);
    }
    assert_eq!(index.len(), brute.len());
    let mut rng = Rng::new(seed);
    let mut queries: Vec<F> = fps.iter().copied().step_by(3).collect();
    queries.extend(fps.iter().take(20).map(|&fp| {
        let flips = rng.below(u64::from(k) + 2) as u32;
        rng.flip(fp, flips)
    }));
    queries.extend((0..5).map(|_| rng.fingerprint::<F>()));
    for q in queries {
        let got = index.query(q, k).unwrap();
        let want = brute.query(q, k).unwrap();
        assert_eq!(got, want, "query {q:?} at k = {k}");
    }
    for &(id, fp) in items.iter().skip(1).step_by(7) {
        assert_eq!(index.get(id), Some(fp));
    }
}

/// Checks every online method and all-pairs on one data set.
fn check_all<F: Fingerprint>(kind: Kind, n: usize, k: u32, seed: u64, extra: u32) {
    let fps: Vec<F> = data(kind, n, k, seed);
    check_online(&fps, k, seed, &mut BitInvertedIndex::<F>::new());
    let planned = ProbedBlocks::<F>::blocks_for(n, k);
    check_online(
        &fps,
        k,
        seed,
        &mut ProbedBlocks::<F>::new(planned, k).unwrap(),
    );
    // Other block counts, where their probe count is allowed: radius 0 to k.
    for blocks in [1, 2, 3, k + 1 + extra] {
        if let Ok(mut index) = ProbedBlocks::<F>::new(blocks, k) {
            check_online(&fps, k, seed, &mut index);
        }
    }
    let want = reference_pairs(&fps, k);
    for (d, design) in designs::<F>(k, extra).into_iter().enumerate() {
        check_online(
            &fps,
            k,
            seed,
            &mut PermutedTables::<F>::new(design).unwrap(),
        );
        let got = all_pairs(&fps, k, design).unwrap();
        assert_eq!(
            got, want,
            "all_pairs with {design:?} on {kind:?} data at k = {k}"
        );
        if d == 0 {
            let (spilled, _) = external(&fps, k, design, BUDGETS[0]);
            assert_eq!(
                spilled, want,
                "ExternalPairs within {} bytes with {design:?} on {kind:?} data at k = {k}",
                BUDGETS[0]
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn exact_methods_agree_with_brute_force_64(
        kind in kind(), n in 0usize..160, k in 0u32..=3, seed: u64, extra in 0u32..3
    ) {
        check_all::<u64>(kind, n, k, seed, extra);
    }

    #[test]
    fn exact_methods_agree_with_brute_force_64_large_k(
        kind in kind(), n in 0usize..120, k in 4u32..=12, seed: u64
    ) {
        check_all::<u64>(kind, n, k, seed, 0);
    }

    #[test]
    fn exact_methods_agree_with_brute_force_128(
        kind in kind(), n in 0usize..120, k in 0u32..=8, seed: u64, extra in 0u32..2
    ) {
        check_all::<u128>(kind, n, k, seed, extra);
    }
}

#[test]
fn skewed_runs_recurse_and_stay_exact() {
    // 30% of 3000 share the top 16 bits: runs far longer than the recursion threshold.
    for k in [0, 1, 3] {
        let fps: Vec<u64> = data(Kind::Skewed, 3000, k, 42);
        let want = reference_pairs(&fps, k);
        assert!(!want.is_empty());
        assert_eq!(all_pairs(&fps, k, Design::Tables4x16).unwrap(), want);
        let wide: Vec<u128> = data(Kind::Skewed, 1500, k, 43);
        let design = Design::for_expected_len(wide.len(), k, 128);
        assert_eq!(
            all_pairs(&wide, k, design).unwrap(),
            reference_pairs(&wide, k)
        );
    }
}

#[test]
fn identical_fingerprints_are_all_returned_once() {
    let fp = 0xDEAD_BEEF_0BAD_F00Du64;
    let mut fps = vec![fp; 300];
    fps.push(fp ^ 0b111);
    fps.push(!fp);
    let pairs = all_pairs(&fps, 3, Design::Tables4x16).unwrap();
    assert_eq!(pairs.len(), 300 * 299 / 2 + 300);
    assert!(pairs
        .windows(2)
        .all(|w| (w[0].a, w[0].b) < (w[1].a, w[1].b)));

    let mut index = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    let items: Vec<(u64, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (i as u64, f))
        .collect();
    index.insert_batch(&items).unwrap();
    let found = index.query(fp, 3).unwrap();
    assert_eq!(found.len(), 301);
    assert!(found[..300].iter().all(|m| m.distance == 0));
    assert_eq!(
        found[300],
        Match {
            distance: 3,
            id: 300
        }
    );
    let mut ids: Vec<u64> = found.iter().map(|m| m.id).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 301, "an id returned twice");
}

#[test]
fn many_single_inserts_grow_the_directory() {
    let fps: Vec<u64> = synth::planted(5000, 7);
    let mut index = PermutedTables::<u64>::new(Design::Tables10).unwrap();
    let mut brute = BruteForce::new();
    for (i, &fp) in fps.iter().enumerate() {
        index.insert(i as u64, fp).unwrap();
        brute.insert(i as u64, fp).unwrap();
    }
    for &q in fps.iter().step_by(11) {
        assert_eq!(index.query(q, 3).unwrap(), brute.query(q, 3).unwrap());
    }
    assert!(index.memory_bytes() > 5000 * 8);
}

#[test]
fn errors_for_bad_input() {
    let mut index = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    index.insert(1, 5).unwrap();
    assert_eq!(index.insert(1, 6), Err(IndexError::DuplicateId(1)));
    assert_eq!(index.get(1), Some(5));
    assert_eq!(
        index.insert_batch(&[(2, 1), (3, 1), (2, 9)]),
        Err(IndexError::DuplicateId(2))
    );
    assert_eq!(index.len(), 1);
    assert_eq!(
        index.query(5, 4),
        Err(IndexError::KTooLarge { k: 4, max: 3 })
    );
    assert!(all_pairs(&[1u64, 2], 4, Design::Tables4x16).is_err());
    assert!(PermutedTables::<u128>::new(Design::Tables20).is_err());
    assert!(PermutedTables::<u64>::new(Design::Blocks { blocks: 2, k: 2 }).is_err());
    assert!(BruteForce::<u64>::new().query(0, 65).is_err());
}

#[test]
fn skewed_buckets_split_and_stay_exact() {
    // 30% of 12,000 share their top 16 bits: that bucket of the first table is split.
    let fps: Vec<u64> = data(Kind::Skewed, 12_000, 3, 9);
    let items: Vec<(u64, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (i as u64, f))
        .collect();
    let mut batch = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    batch.insert_batch(&items).unwrap();
    let mut single = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    let mut brute = BruteForce::new();
    for &(id, fp) in &items {
        single.insert(id, fp).unwrap();
        brute.insert(id, fp).unwrap();
    }
    for &(id, _) in items.iter().step_by(5) {
        assert!(batch.remove(id).is_some());
        assert!(single.remove(id).is_some());
        assert!(brute.remove(id).is_some());
    }
    let mut rng = Rng::new(3);
    for &q in fps.iter().step_by(37) {
        let flips = rng.below(4) as u32;
        let q = rng.flip(q, flips);
        for k in [0, 1, 3] {
            let want = brute.query(q, k).unwrap();
            assert_eq!(batch.query(q, k).unwrap(), want);
            assert_eq!(single.query(q, k).unwrap(), want);
        }
        // Far fewer candidates than the 3,600 fingerprints sharing the skewed block.
        assert!(batch.candidates(q) < 1500, "{}", batch.candidates(q));
        assert!(single.candidates(q) < 1500, "{}", single.candidates(q));
    }
}

/// Dense clusters: `copies` identical fingerprints plus every value of a 12-bit subspace around
/// another fingerprint — each block value but one is shared by the whole cluster.
fn dense_clusters(copies: usize, seed: u64) -> Vec<u64> {
    let mut rng = Rng::new(seed);
    let same: u64 = rng.fingerprint();
    let base: u64 = rng.fingerprint::<u64>() & !0xFFF;
    let mut fps: Vec<u64> = vec![same; copies];
    fps.extend((0..4096u64).map(|low| base | low));
    fps.extend(synth::random::<u64>(500, seed));
    rng.shuffle(&mut fps);
    fps
}

#[test]
fn dense_clusters_stay_exact_and_small() {
    let fps = dense_clusters(3000, 11);
    let want = reference_pairs(&fps, 3);
    assert_eq!(all_pairs(&fps, 3, Design::Tables4x16).unwrap(), want);
    let items: Vec<(u64, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (i as u64, f))
        .collect();
    let mut batch = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    batch.insert_batch(&items).unwrap();
    let mut single = PermutedTables::<u64>::new(Design::Tables4x16).unwrap();
    let mut brute = BruteForce::new();
    for &(id, fp) in &items {
        single.insert(id, fp).unwrap();
        brute.insert(id, fp).unwrap();
    }
    for index in [&batch, &single] {
        // No blow-up: well under 100 bytes per fingerprint.
        assert!(
            index.memory_bytes() < fps.len() * 100,
            "{}",
            index.memory_bytes()
        );
        for &q in fps.iter().step_by(97) {
            assert_eq!(index.query(q, 3).unwrap(), brute.query(q, 3).unwrap());
        }
    }
}

/// One step of an interleaved workload.
#[derive(Debug, Clone)]
enum Op {
    /// Insert id with a near-copy (`flips` bits) of pool entry `base`.
    Insert {
        id: u64,
        base: usize,
        flips: u32,
    },
    Remove {
        id: u64,
    },
    Query {
        base: usize,
        flips: u32,
        k: u32,
    },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u64..60, 0usize..8, 0u32..5).prop_map(|(id, base, flips)| Op::Insert { id, base, flips }),
        2 => (0u64..60).prop_map(|id| Op::Remove { id }),
        2 => (0usize..8, 0u32..5, 0u32..=3).prop_map(|(base, flips, k)| Op::Query { base, flips, k }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn interleaved_operations_agree_with_brute_force(ops in prop::collection::vec(op(), 0..200), seed: u64) {
        let mut rng = Rng::new(seed);
        let pool: Vec<u64> = (0..8).map(|_| rng.fingerprint()).collect();
        let mut indexes: Vec<Box<dyn HammingIndex<u64>>> = vec![
            Box::new(PermutedTables::<u64>::new(Design::Tables4x16).unwrap()),
            Box::new(PermutedTables::<u64>::new(Design::Blocks { blocks: 5, k: 3 }).unwrap()),
            Box::new(BitInvertedIndex::<u64>::new()),
            // Built for k = 7, queried at k <= 3: radius 0 with four blocks, 1 with two.
            Box::new(ProbedBlocks::<u64>::new(4, 7).unwrap()),
            Box::new(ProbedBlocks::<u64>::new(2, 7).unwrap()),
        ];
        let mut brute = BruteForce::<u64>::new();
        for op in ops {
            match op {
                Op::Insert { id, base, flips } => {
                    let fp = rng.flip(pool[base], flips);
                    let want = brute.insert(id, fp);
                    for index in &mut indexes {
                        prop_assert_eq!(index.insert(id, fp), want.clone());
                    }
                }
                Op::Remove { id } => {
                    let want = brute.remove(id);
                    for index in &mut indexes {
                        prop_assert_eq!(index.remove(id), want);
                    }
                }
                Op::Query { base, flips, k } => {
                    let q = rng.flip(pool[base], flips);
                    let want = brute.query(q, k).unwrap();
                    for index in &indexes {
                        prop_assert_eq!(index.query(q, k).unwrap(), want.clone());
                        prop_assert_eq!(index.len(), brute.len());
                    }
                }
            }
        }
    }
}

// ExternalPairs: the answer of all_pairs within a memory budget, with budgets that force every
// spill path (fingerprints on disk, partitions and re-partitions, block-by-block buckets, sorted
// runs merged in passes) and one that keeps everything in memory.

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

/// Each position's component, named by its first position.
fn labels(components: &mut UnionFind) -> Vec<u32> {
    let n = components.len() as u32;
    let mut first = vec![u32::MAX; n as usize];
    let roots: Vec<u32> = (0..n).map(|i| components.find(i)).collect();
    for (i, &root) in roots.iter().enumerate() {
        first[root as usize] = first[root as usize].min(i as u32);
    }
    roots.iter().map(|&root| first[root as usize]).collect()
}

/// The components `ExternalPairs` finds within `memory`; no file is left.
fn external_components<F: Fingerprint>(fps: &[F], k: u32, design: Design, memory: u64) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let mut search = ExternalPairs::new(memory, dir.path());
    for &fp in fps {
        search.push(fp).unwrap();
    }
    let found = labels(&mut search.components(k, design).unwrap().components);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
    assert_eq!(
        linked_components(fps, k, design, memory),
        found,
        "the components from links within {memory}"
    );
    found
}

/// The components `ExternalPairs::links` and `FoundLinks::components` find within `memory`, each
/// position named by its component's first position (a position no link names by itself); no
/// file is left.
fn linked_components<F: Fingerprint>(fps: &[F], k: u32, design: Design, memory: u64) -> Vec<u32> {
    let dir = tempfile::tempdir().unwrap();
    let mut search = ExternalPairs::new(memory, dir.path());
    for &fp in fps {
        search.push(fp).unwrap();
    }
    let mut found: Vec<u32> = (0..fps.len() as u32).collect();
    let mut last = None;
    for label in search.links(k, design).unwrap().components().unwrap() {
        let (position, smallest) = label.unwrap();
        assert!(last < Some(position), "ascending, each once");
        assert!(smallest <= position);
        last = Some(position);
        found[position as usize] = smallest;
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
    found
}

/// Asserts the same answer as brute force and `all_pairs` at every budget, and the components
/// of those pairs from `near_components` and `ExternalPairs::components`; the smallest budget
/// must spill.
fn check<F: Fingerprint>(fps: &[F], k: u32, design: Design) {
    let expected = reference_pairs(fps, k);
    assert_eq!(all_pairs(fps, k, design).unwrap(), expected);
    let mut linked = UnionFind::new(fps.len()).unwrap();
    for pair in &expected {
        linked.union(pair.a, pair.b);
    }
    let components = labels(&mut linked);
    let in_memory = labels(&mut near_components(fps, k, design).unwrap());
    assert_eq!(in_memory, components, "near_components, design {design}");
    let run = labels(&mut run_components(fps, k).unwrap());
    assert_eq!(run, components, "run_components");
    for memory in BUDGETS {
        let found = external_components(fps, k, design, memory);
        assert_eq!(
            found, components,
            "components within {memory}, design {design}"
        );
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
    let fps: Vec<u64> = synth::planted_with(1500, 17, 300, 3, 60);
    for design in [
        Design::Tables4x16,
        Design::Tables10,
        Design::Blocks { blocks: 5, k: 3 },
        // 20 tables of 3 of 6 blocks: spilled, the tables sharing a first block share a pass.
        Design::Blocks { blocks: 6, k: 3 },
    ] {
        check(&fps, 3, design);
    }
}

#[test]
fn a_huge_family_of_identical_values() {
    let mut fps = vec![0xDEAD_BEEF_0123_4567u64; 300];
    fps.extend(synth::planted::<u64>(100, 3));
    fps.extend((0..100).map(|i| 0xDEAD_BEEF_0123_4567u64 ^ (1 << (i % 64))));
    check(&fps, 3, Design::Tables4x16);
    check(&[7u64; 120], 2, Design::Blocks { blocks: 3, k: 2 });
}

#[test]
fn a_dense_family_of_distinct_values() {
    // 600 values one or two bits from a template (up to 4 apart from each other: linked
    // through the template and their neighbours; runs far longer than a recursion starts at),
    // a chain of values 3 bits apart, and unrelated values.
    let template = 0x0123_4567_89AB_CDEFu64;
    let mut fps = vec![template];
    fps.extend((0..600u64).map(|i| template ^ (1 << (i % 64)) ^ (1 << (i / 64))));
    let mut link = 0xFFFF_0000_FFFF_0000u64;
    for i in 0..50 {
        link ^= 0b111 << (i % 60);
        fps.push(link);
    }
    fps.extend(synth::planted::<u64>(200, 5));
    check(&fps, 3, Design::Tables4x16);
    check(&fps, 3, Design::Blocks { blocks: 5, k: 3 });
}

/// 20,000 copies of one value and near copies of it, beyond a tiny budget: the components'
/// search links the copies through the bucket's distinct values (not record by record, which
/// took minutes for 200,000), and gives the in-memory components.
#[test]
fn a_family_of_identical_values_beyond_memory_links_as_in_memory() {
    let template = 0x0F0F_1234_5678_9ABCu64;
    let mut fps = vec![template; 20_000];
    fps.extend((0..64).map(|i| template ^ (1 << i)));
    fps.extend(synth::planted::<u64>(300, 9));
    let want = labels(&mut near_components(&fps, 3, Design::Tables4x16).unwrap());
    assert_eq!(
        external_components(&fps, 3, Design::Tables4x16, 1 << 10),
        want
    );
}

#[test]
fn skewed_top_bits() {
    // Most values share their top 40 bits: the tables keyed there put them in one bucket.
    let fps: Vec<u64> = synth::skewed(800, 5, 0.9, 40);
    check(&fps, 3, Design::Tables4x16);
    check(&fps, 3, Design::Tables16);
    // Near copies among them: all within 24 bits.
    let close: Vec<u64> = synth::planted_with::<u64>(600, 6, 200, 3, 30)
        .into_iter()
        .map(|fp| 0xABCD_EF12_3400_0000 | (fp & 0xFF_FFFF))
        .collect();
    check(&close, 3, Design::Tables4x16);
}

#[test]
fn wide_fingerprints() {
    let fps: Vec<u128> = synth::planted_with(600, 11, 200, 4, 30);
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
        let fps: Vec<u64> = synth::planted_with::<u64>(n, seed, n / 3, 3, n / 20)
            .into_iter()
            .map(|fp| fp | top)
            .collect();
        for design in [Design::Tables4x16, Design::Tables10] {
            let (pairs, _) = external(&fps, 3, design, memory);
            prop_assert_eq!(pairs, all_pairs(&fps, 3, design).unwrap());
            prop_assert_eq!(
                external_components(&fps, 3, design, memory),
                labels(&mut near_components(&fps, 3, design).unwrap())
            );
        }
    }
}

/// The components of `fps` within `k` by brute force: every pair compared.
fn brute_components<F: Fingerprint>(fps: &[F], k: u32) -> Vec<u32> {
    let mut linked = UnionFind::new(fps.len()).unwrap();
    for pair in reference_pairs(fps, k) {
        linked.union(pair.a, pair.b);
    }
    labels(&mut linked)
}

/// `run_components` on what the Spark job hands it: the members of one key's group, which agree
/// on a table's key bits (here a block of 9 or 18 bits, as the default design's at `k = 6`) and
/// differ anywhere else; families of near copies among random values, more than a run compared
/// pair by pair (256) and fewer, at 64 and 128 bits. The components are brute force's.
#[test]
fn run_components_on_groups_sharing_a_key() {
    fn group<F: Fingerprint>(n: usize, seed: u64, k: u32, key: F, mask: F) -> Vec<F> {
        synth::planted_with::<F>(n, seed, n / 3, k, n / 8)
            .into_iter()
            .map(|fp| fp.and(mask.xor(F::from_u128(u128::MAX))).or(key))
            .collect()
    }
    for (n, seed) in [(40, 1), (300, 2), (2_000, 3)] {
        for k in [3, 6] {
            let fps: Vec<u64> = group(n, seed, k, 0x1FF << 20, 0x1FF << 20);
            assert_eq!(
                labels(&mut run_components(&fps, k).unwrap()),
                brute_components(&fps, k),
                "64 bits, {n} values, k {k}"
            );
            let wide: Vec<u128> = group(n, seed, k, 0x3_FFFF << 70, 0x3_FFFF << 70);
            assert_eq!(
                labels(&mut run_components(&wide, k).unwrap()),
                brute_components(&wide, k),
                "128 bits, {n} values, k {k}"
            );
        }
    }
    // Identical values, a value alone, none.
    let mut same = labels(&mut run_components(&[5u64; 300], 6).unwrap());
    same.dedup();
    assert_eq!(same.len(), 1);
    assert_eq!(labels(&mut run_components(&[5u64], 6).unwrap()), vec![0]);
    assert!(labels(&mut run_components::<u64>(&[], 6).unwrap()).is_empty());
}
