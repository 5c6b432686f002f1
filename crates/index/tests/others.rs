//! MinHash LSH, the exact index, clusters and rotate-sort-compare.

use neardup_index::synth::{self, Rng};
use neardup_index::{
    all_pairs, candidate_pairs, clusters, estimated_jaccard, exact_groups, near_components,
    rotate_pairs, Cluster, Design, ExactIndex, IndexError, LshParams, MinHashLsh, Representative,
    RotateParams, UnionFind,
};
use proptest::prelude::*;

#[test]
fn optimal_params_match_datasketch() {
    // datasketch 2.0.0 `_optimal_param(threshold, num_perm, fp_weight, fn_weight)` (scipy quad).
    let cases = [
        (0.5, 128, 0.5, 0.5, (25, 5)),
        (0.8, 128, 0.5, 0.5, (9, 13)),
        (0.9, 256, 0.5, 0.5, (9, 28)),
        (0.3, 64, 0.5, 0.5, (21, 3)),
        (0.7, 128, 0.2, 0.8, (18, 7)),
        (0.5, 16, 0.5, 0.5, (5, 3)),
        (0.95, 128, 0.9, 0.1, (2, 64)),
    ];
    for (t, n, fpw, fnw, (bands, rows)) in cases {
        let p = LshParams::optimal(t, n, fpw, fnw).unwrap();
        assert_eq!(
            (p.bands, p.rows),
            (bands, rows),
            "threshold {t}, num_perm {n}"
        );
    }
}

/// `n` signatures of 32 values: groups that share a prefix of values, so some pairs collide.
fn signatures(n: usize, seed: u64) -> Vec<Vec<u32>> {
    let mut rng = Rng::new(seed);
    let bases: Vec<Vec<u32>> = (0..4)
        .map(|_| (0..32).map(|_| rng.below(1000) as u32).collect())
        .collect();
    (0..n)
        .map(|_| {
            let base = &bases[rng.below(4) as usize];
            let keep = rng.below(33) as usize;
            (0..32)
                .map(|i| {
                    if i < keep {
                        base[i]
                    } else {
                        rng.below(1000) as u32
                    }
                })
                .collect()
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn batch_and_online_lsh_agree(n in 0usize..80, seed: u64, bands in 1usize..9, rows in 1usize..5) {
        let sigs = signatures(n, seed);
        let params = LshParams { bands, rows };
        let pairs = candidate_pairs(&sigs, params, None).unwrap();
        let mut lsh = MinHashLsh::with_params(0.5, 32, params).unwrap();
        for (i, s) in sigs.iter().enumerate() {
            lsh.insert(i as u64, s).unwrap();
        }
        let mut from_queries = Vec::new();
        for (i, s) in sigs.iter().enumerate() {
            for j in lsh.query(s).unwrap() {
                if (i as u64) < j {
                    from_queries.push((i as u32, j as u32));
                }
            }
        }
        let from_batch: Vec<(u32, u32)> = pairs.iter().map(|p| (p.a, p.b)).collect();
        prop_assert_eq!(&from_batch, &from_queries);
        // Brute force: a pair is a candidate iff some band is equal.
        let mut brute = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                let (a, b) = (&sigs[i], &sigs[j]);
                if (0..bands).any(|t| a[t * rows..(t + 1) * rows] == b[t * rows..(t + 1) * rows]) {
                    brute.push((i as u32, j as u32));
                }
            }
        }
        prop_assert_eq!(from_batch, brute);
        let verified = candidate_pairs(&sigs, params, Some(0.6)).unwrap();
        prop_assert!(verified.iter().all(|p| p.similarity >= 0.6));
        prop_assert_eq!(
            verified.len(),
            pairs.iter().filter(|p| p.similarity >= 0.6).count()
        );
    }
}

#[test]
fn lsh_remove_and_verified_query() {
    let mut lsh = MinHashLsh::new(0.5, 8).unwrap();
    let a = [1, 2, 3, 4, 5, 6, 7, 8];
    lsh.insert(1, &a).unwrap();
    lsh.insert(2, &[1, 2, 3, 4, 5, 6, 0, 0]).unwrap();
    lsh.insert(3, &[1, 2, 0, 0, 0, 0, 0, 0]).unwrap();
    let verified = lsh.query_verified(&a).unwrap();
    assert_eq!(verified[0], (1, 1.0));
    assert!(verified.iter().all(|&(_, s)| s >= 0.5));
    assert!(lsh.remove(1));
    assert!(!lsh.remove(1));
    assert!(!lsh.query(&a).unwrap().contains(&1));
    assert_eq!(lsh.len(), 2);
    assert_eq!(estimated_jaccard(&a, &[1, 2, 3, 4, 0, 0, 0, 0]), 0.5);
    assert!(matches!(
        lsh.query(&[1, 2]),
        Err(IndexError::SignatureLength {
            got: 2,
            expected: 8
        })
    ));
    assert!(candidate_pairs(&[vec![1u32, 2]], LshParams { bands: 2, rows: 2 }, None).is_err());
}

#[test]
fn exact_index() {
    let mut index: ExactIndex<Vec<u8>> = ExactIndex::new();
    index.insert(5, b"abc".to_vec()).unwrap();
    index.insert(2, b"abc".to_vec()).unwrap();
    index.insert(9, b"xyz".to_vec()).unwrap();
    assert_eq!(index.query(b"abc".as_slice()), &[2, 5]);
    assert_eq!(
        index.insert(9, b"q".to_vec()),
        Err(IndexError::DuplicateId(9))
    );
    assert_eq!(index.remove(5), Some(b"abc".to_vec()));
    assert_eq!(index.query(b"abc".as_slice()), &[2]);
    assert_eq!(index.len(), 2);
    assert_eq!(
        exact_groups(3, |i| [[1u8; 32], [2; 32], [1; 32]][i as usize]),
        vec![vec![0, 2]]
    );
}

#[test]
fn clusters_and_representatives() {
    let pairs = [(4, 1), (1, 0), (2, 5)];
    let lengths = [3, 9, 1, 1, 9, 2];
    let times = [10, 20, 30, 40, 50, 5];
    let first = clusters(6, pairs, Representative::FirstSeen, false).unwrap();
    assert_eq!(
        first,
        vec![
            Cluster {
                members: vec![0, 1, 4],
                representative: 0
            },
            Cluster {
                members: vec![2, 5],
                representative: 2
            },
        ]
    );
    let longest = clusters(6, pairs, Representative::Longest(&lengths), false).unwrap();
    assert_eq!(
        longest.iter().map(|c| c.representative).collect::<Vec<_>>(),
        vec![1, 5],
        "ties go to the lowest position"
    );
    let newest = clusters(6, pairs, Representative::Newest(&times), true).unwrap();
    assert_eq!(
        newest.iter().map(|c| c.representative).collect::<Vec<_>>(),
        vec![4, 2, 3]
    );
    // The same components whatever the order of the pairs.
    let reversed = clusters(
        6,
        pairs.iter().rev().copied(),
        Representative::FirstSeen,
        false,
    );
    assert_eq!(reversed.unwrap(), first);
    assert!(clusters(3, [(0, 3)], Representative::FirstSeen, false).is_err());
    assert!(clusters(3, [(0, 1)], Representative::Longest(&[1, 2]), false).is_err());
}

#[test]
fn rotate_finds_a_subset_and_errors() {
    let fps: Vec<u64> = synth::planted(3000, 5);
    let exact = all_pairs(&fps, 3, Design::Tables4x16).unwrap();
    let mut previous = 0;
    for rotations in [1, 8, 64] {
        let params = RotateParams {
            rotations,
            window: 4,
        };
        let found = rotate_pairs(&fps, 3, params).unwrap();
        assert!(found.iter().all(|p| exact.binary_search(p).is_ok()));
        assert!(found.len() >= previous);
        previous = found.len();
    }
    assert!(
        previous * 10 >= exact.len() * 9,
        "64 rotations find most pairs"
    );
    let bad = RotateParams {
        rotations: 0,
        window: 1,
    };
    assert!(rotate_pairs(&fps, 3, bad).is_err());
    let wide: Vec<u128> = synth::planted(500, 6);
    let params = RotateParams {
        rotations: 128,
        window: 2,
    };
    let exact = all_pairs(&wide, 3, Design::Blocks { blocks: 4, k: 3 }).unwrap();
    let found = rotate_pairs(&wide, 3, params).unwrap();
    assert!(found.iter().all(|p| exact.binary_search(p).is_ok()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// `UnionFind::labels` names each element of a cluster of two or more by the cluster's
    /// smallest member, ascending, as `clusters` groups them; singletons are left out.
    #[test]
    fn labels_are_the_clusters_by_element(
        n in 1usize..60,
        pairs in prop::collection::vec((0u32..60, 0u32..60), 0..80),
    ) {
        let pairs: Vec<(u32, u32)> = pairs
            .into_iter()
            .map(|(a, b)| (a % n as u32, b % n as u32))
            .collect();
        let mut sets = UnionFind::new(n).unwrap();
        for &(a, b) in &pairs {
            sets.union(a, b);
        }
        let mut expected: Vec<(u32, u32)> = clusters(n, pairs, Representative::FirstSeen, false)
            .unwrap()
            .iter()
            .flat_map(|c| c.members.iter().map(|&m| (m, c.members[0])))
            .collect();
        expected.sort_unstable();
        prop_assert_eq!(sets.labels().collect::<Vec<_>>(), expected);
    }

    /// `near_components` links exactly what brute force links (every pair within `k`,
    /// transitively): identical values, families of near values, chains and loners alike,
    /// under every preset design.
    #[test]
    fn near_components_equal_brute_force(
        base in prop::collection::vec(any::<u64>(), 1..40),
        copies in prop::collection::vec((0usize..40, any::<u64>(), 0u32..6), 0..80),
        k in 0u32..=3,
    ) {
        let mut fps = base.clone();
        for (of, bits, flips) in copies {
            let mut fp = base[of % base.len()];
            for i in 0..flips {
                fp ^= 1 << ((bits >> (6 * i)) & 63);
            }
            fps.push(fp);
        }
        let n = fps.len() as u32;
        let mut reference = UnionFind::new(fps.len()).unwrap();
        for i in 0..n {
            for j in i + 1..n {
                if (fps[i as usize] ^ fps[j as usize]).count_ones() <= k {
                    reference.union(i, j);
                }
            }
        }
        for design in Design::PRESETS {
            let mut found = near_components(&fps, k, design).unwrap();
            for i in 0..n {
                for j in i + 1..n {
                    prop_assert_eq!(
                        found.find(i) == found.find(j),
                        reference.find(i) == reference.find(j)
                    );
                }
            }
        }
    }
}
