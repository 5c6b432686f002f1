//! The dedup engine against a brute-force reference, and its policies.

use neardup_core::digest::{Digest, DigestAlgorithm};
use neardup_core::measure::FeatureSet;
use neardup_core::{Fingerprints, Profile, Simhash};
use neardup_dedup::{
    dedup, dedup_every_pair, Budget, DedupOptions, KeepPolicy, Kind, Method, Policy, Side,
    VerifyMeasure,
};
use proptest::prelude::*;

/// An item with a given fingerprint and a digest standing for text `text_id`.
fn item(simhash: u64, text_id: u64) -> neardup_dedup::Item {
    let fingerprints = Fingerprints {
        simhash: Simhash::B64(simhash),
        minhash: None,
        digest: Digest::of(DigestAlgorithm::Xxh3_128, &text_id.to_le_bytes()),
        features: 1,
    };
    neardup_dedup::Item::new(fingerprints, 100)
}

/// An item as one side of a pair decision.
fn side(item: &neardup_dedup::Item) -> Side<'_> {
    Side::new(&item.fingerprints, item.features.as_ref())
}

/// Plain SimHash within `k`, no verification.
fn simhash(k: u32) -> DedupOptions {
    DedupOptions::new(Policy::simhash(Profile::web(), k))
}

/// Options whose policy is the default one changed by `change`, listing every accepted pair.
fn policy(change: impl FnOnce(&mut Policy)) -> DedupOptions {
    let mut policy = Policy::default();
    change(&mut policy);
    DedupOptions {
        list_pairs: true,
        ..DedupOptions::new(policy)
    }
}

/// `options` with no memory at all (everything that can spill does), spilling to a new folder.
fn with_no_room(options: &DedupOptions) -> (DedupOptions, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget {
        memory: 0,
        tmp_dir: Some(dir.path().to_path_buf()),
        held_before: None,
    };
    (
        DedupOptions {
            budget,
            ..options.clone()
        },
        dir,
    )
}

/// Shingle sets that overlap more the closer the fingerprints' low bits are.
fn with_features(fps: &[(u64, u64)]) -> Vec<neardup_dedup::Item> {
    fps.iter()
        .map(|&(f, t)| {
            let mut item = item(f, t);
            item.features = Some(FeatureSet::new(
                (0..20).map(|i| (f >> (i % 8)) & 0xff | i << 8).collect(),
            ));
            item
        })
        .collect()
}

/// Representative-centred clusters by brute force with verification, in input order: an
/// exact copy goes where the first of its text went; any other document joins the kept
/// document nearest to it (SimHash distance, ties to the earliest) that the policy's one-pair
/// decision accepts, or is kept.
fn reference_decided_clusters(items: &[neardup_dedup::Item], policy: &Policy) -> Vec<Vec<u32>> {
    let mut leader_of: Vec<usize> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let digest = &item.fingerprints.digest;
        if let Some(first) = items[..i]
            .iter()
            .position(|o| &o.fingerprints.digest == digest)
        {
            leader_of.push(leader_of[first]);
            continue;
        }
        let distance = |j: usize| {
            let (x, y) = (item.fingerprints.simhash, items[j].fingerprints.simhash);
            x.distance(y).unwrap()
        };
        let nearest = (0..i)
            .filter(|&j| leader_of[j] == j)
            .filter(|&j| {
                policy
                    .decide(&side(&items[j]), &side(item))
                    .unwrap()
                    .is_duplicate()
            })
            .min_by_key(|&j| (distance(j), j));
        leader_of.push(nearest.unwrap_or(i));
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for (i, &leader) in leader_of.iter().enumerate() {
        groups.entry(leader).or_default().push(i as u32);
    }
    groups.into_values().filter(|g| g.len() > 1).collect()
}

/// Fingerprints with large families: a few originals, each with up to 120 near copies (0–3
/// bits from the original or from an earlier copy: chains), and one exact copy in ten.
fn families() -> impl Strategy<Value = Vec<(u64, u64)>> {
    (
        prop::collection::vec(any::<u64>(), 1..4),
        prop::collection::vec((any::<usize>(), 0u32..4, any::<u64>(), 0u8..10), 0..120),
    )
        .prop_map(|(base, plants)| {
            let plants = plants.into_iter().map(|(s, f, b, how)| (s, f, b, how == 0));
            plant(&base, plants.collect())
        })
}

/// Representative-centred clusters by brute force, document by document in input order: an
/// exact copy goes where the first of its text went; any other document joins the kept
/// document nearest to it within `k` bits (ties to the earliest), or is kept.
fn reference_clusters(fps: &[(u64, u64)], k: u32) -> Vec<Vec<u32>> {
    let mut leader_of: Vec<usize> = Vec::new();
    for (i, &(fp, text)) in fps.iter().enumerate() {
        if let Some(first) = fps[..i].iter().position(|&(_, t)| t == text) {
            leader_of.push(leader_of[first]);
            continue;
        }
        let nearest = (0..i)
            .filter(|&j| leader_of[j] == j)
            .map(|j| ((fps[j].0 ^ fp).count_ones(), j))
            .filter(|&(d, _)| d <= k)
            .min();
        leader_of.push(nearest.map_or(i, |(_, j)| j));
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<u32>> = Default::default();
    for (i, &leader) in leader_of.iter().enumerate() {
        groups.entry(leader).or_default().push(i as u32);
    }
    let mut clusters: Vec<Vec<u32>> = groups.into_values().filter(|g| g.len() > 1).collect();
    clusters.sort();
    clusters
}

/// Originals `base` (text i for the i-th) and, for each plant `(source, flips, bits, exact)`,
/// a copy of a document already there: the same text, or a new text whose fingerprint is the
/// source's with `flips` bits flipped (chosen by `bits`).
fn plant(base: &[u64], plants: Vec<(usize, u32, u64, bool)>) -> Vec<(u64, u64)> {
    let mut fps: Vec<(u64, u64)> = base
        .iter()
        .enumerate()
        .map(|(i, &f)| (f, i as u64))
        .collect();
    for (source, flips, bits, exact) in plants {
        let (fp, text) = fps[source % fps.len()];
        if exact {
            fps.push((fp, text));
        } else {
            let mut fp = fp;
            for b in 0..flips {
                fp ^= 1 << ((bits >> (6 * b)) % 64);
            }
            fps.push((fp, 1_000_000 + fps.len() as u64));
        }
    }
    fps
}

/// Fingerprints with planted near-copies (0–4 bits flipped) and exact copies (same text).
fn corpus() -> impl Strategy<Value = Vec<(u64, u64)>> {
    (
        prop::collection::vec(any::<u64>(), 1..40),
        prop::collection::vec(
            (any::<usize>(), 0u32..5, any::<u64>(), any::<bool>()),
            0..40,
        ),
    )
        .prop_map(|(base, plants)| plant(&base, plants))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn clusters_equal_brute_force(fps in corpus(), k in 0u32..=3) {
        let items: Vec<_> = fps.iter().map(|&(f, t)| item(f, t)).collect();
        let options = simhash(k);
        let outcome = dedup(&items, &options).unwrap();
        let found: Vec<Vec<u32>> = outcome.clusters.iter().map(|c| c.members.clone()).collect();
        prop_assert_eq!(found, reference_clusters(&fps, k));
        // Exactly one kept per cluster; removals point at kept documents, each a duplicate of
        // it by the policy itself (never through a chain).
        for removal in &outcome.removals {
            prop_assert!(!outcome.kept[removal.index as usize]);
            prop_assert!(outcome.kept[removal.of as usize]);
            let (a, b) = (&items[removal.index as usize], &items[removal.of as usize]);
            let decision = options.policy.decide(&Side::new(&a.fingerprints, None), &Side::new(&b.fingerprints, None)).unwrap();
            prop_assert!(decision.is_duplicate());
            prop_assert!(removal.distance <= k);
        }
        let removed = outcome.kept.iter().filter(|k| !**k).count();
        let expected: usize = outcome.clusters.iter().map(|c| c.members.len() - 1).sum();
        prop_assert_eq!(removed, expected);
        // Deterministic.
        let again = dedup(&items, &options).unwrap();
        prop_assert_eq!(again.pairs, outcome.pairs);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// With no room, every document's row (SimHash, length, fetch time) but the first goes to
    /// disk and is read back for the phases that need it: the same decisions under every keep
    /// policy, with canonical URLs, with and without verification, and every accepted pair
    /// listed or not.
    #[test]
    fn spilled_rows_decide_the_same_under_every_keep_policy(
        fps in prop_oneof![families(), corpus()],
        keep in prop_oneof![Just(KeepPolicy::First), Just(KeepPolicy::Longest), Just(KeepPolicy::Newest)],
        verify in any::<bool>(),
        list_pairs in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let mut items = with_features(&fps);
        for (i, item) in items.iter_mut().enumerate() {
            let mix = (i as u64 ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            item.bytes = 50 + mix % 7;
            item.fetched_at = (!mix.is_multiple_of(3)).then_some((mix >> 8) as i64 % 5 - 2);
            item.url_key = mix.is_multiple_of(5).then(|| format!("example.com/{}", mix % 3));
        }
        let base = if verify { policy(|p| p.k = 3) } else { simhash(3) };
        let in_memory = DedupOptions { keep, list_pairs, url_dedup: true, ..base };
        let (spilled, dir) = with_no_room(&in_memory);
        let expected = dedup(&items, &in_memory).unwrap();
        let found = dedup(&items, &spilled).unwrap();
        prop_assert_eq!(&found.removals, &expected.removals);
        prop_assert_eq!(&found.clusters, &expected.clusters);
        prop_assert_eq!(&found.pairs, &expected.pairs);
        prop_assert_eq!(&found.kept, &expected.kept);
        prop_assert!(items.len() < 2 || found.spilled_bytes > expected.spilled_bytes);
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// For every pair, the batch run accepts it exactly when the one-pair decision does
    /// (`compare` and the online database decide by [`Policy::decide`]).
    #[test]
    fn batch_pairs_equal_pairwise_decisions(fps in corpus(), threshold in 0.0f64..1.0, k in 0u32..=4) {
        let items = with_features(&fps);
        let options = policy(|p| { p.threshold = threshold; p.k = k; });
        let outcome = dedup(&items, &options).unwrap();
        let accepted: std::collections::HashSet<(u32, u32)> =
            outcome.pairs.iter().map(|p| (p.a, p.b)).collect();
        // Near pairs are listed between the first members of exact groups.
        let first = |i: usize| fps.iter().position(|&(_, t)| t == fps[i].1).unwrap() as u32;
        for i in 0..items.len() {
            for j in i + 1..items.len() {
                let decision = options.policy.decide(&side(&items[i]), &side(&items[j])).unwrap();
                let (fi, fj) = (first(i), first(j));
                let batch = if fi == fj {
                    true
                } else {
                    accepted.contains(&(fi.min(fj), fi.max(fj)))
                };
                prop_assert_eq!(decision.is_duplicate(), batch, "pair {} {}", i, j);
            }
        }
        for removal in &outcome.removals {
            prop_assert!(removal.evidence.passes());
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// Verifying only the candidates that could decide (the default) gives the clusters,
    /// removals and kept documents of verifying every candidate, and those of the brute-force
    /// reference, on corpora of large families, chains and exact copies; it never verifies more.
    #[test]
    fn deciding_verification_equals_every_pair_and_brute_force(
        fps in prop_oneof![families(), corpus()],
        threshold in prop_oneof![0.3f64..1.0, Just(0.6), Just(0.9)],
        k in 0u32..=4,
        keep in prop_oneof![Just(KeepPolicy::First), Just(KeepPolicy::Longest), Just(KeepPolicy::Newest)],
    ) {
        let mut items = with_features(&fps);
        for (i, item) in items.iter_mut().enumerate() {
            item.bytes = (fps[i].0 % 7) * 10;
            item.fetched_at = Some((fps[i].0 % 5) as i64);
        }
        let every = DedupOptions { keep, ..policy(|p| { p.threshold = threshold; p.k = k; }) };
        let deciding = DedupOptions { list_pairs: false, ..every.clone() };
        let all = dedup_every_pair(&items, &every).unwrap();
        let lazy = dedup(&items, &deciding).unwrap();
        // Every pair listed after the linear decision: the reference's pairs and decisions.
        let listed = dedup(&items, &every).unwrap();
        prop_assert_eq!(&listed.pairs, &all.pairs);
        prop_assert_eq!(&listed.removals, &all.removals);
        prop_assert_eq!(listed.candidates, all.candidates);
        prop_assert_eq!(&lazy.clusters, &all.clusters);
        prop_assert_eq!(&lazy.removals, &all.removals);
        prop_assert_eq!(&lazy.kept, &all.kept);
        prop_assert!(lazy.verified_candidates <= all.verified_candidates);
        // The decision looks at pairs of a document and a kept one: a subset of every pair.
        prop_assert!(lazy.candidates <= all.candidates);
        // The pairs listed are the exact ones and those that decided a removal.
        for pair in &lazy.pairs {
            prop_assert!(all.pairs.contains(pair));
        }
        if keep == KeepPolicy::First {
            let found: Vec<Vec<u32>> = lazy.clusters.iter().map(|c| c.members.clone()).collect();
            prop_assert_eq!(found, reference_decided_clusters(&items, &deciding.policy));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// A budget with no room for shingle sets writes every one to a spill file and reads them
    /// back through a cache of one, and walks every component of more than a batch in parts
    /// (each part's index alone, the units kept before it searched in chunks): the same
    /// decisions and candidates as in memory, with every accepted pair listed or not (only more
    /// pairs verified, never more than every candidate), and the spill file is gone when the run
    /// ends.
    #[test]
    fn a_budget_with_no_room_spills_and_decides_the_same(
        fps in prop_oneof![families(), corpus()],
        threshold in prop_oneof![0.3f64..1.0, Just(0.6)],
        list_pairs in any::<bool>(),
    ) {
        let items = with_features(&fps);
        let in_memory = DedupOptions { list_pairs, ..policy(|p| { p.threshold = threshold; p.k = 3; }) };
        let (spilled, dir) = with_no_room(&in_memory);
        let expected = dedup(&items, &in_memory).unwrap();
        let found = dedup(&items, &spilled).unwrap();
        prop_assert_eq!(expected.spilled_bytes, 0);
        prop_assert_eq!(&found.removals, &expected.removals);
        prop_assert_eq!(&found.clusters, &expected.clusters);
        prop_assert_eq!(&found.pairs, &expected.pairs);
        prop_assert_eq!(found.candidates, expected.candidates);
        prop_assert!(found.verified_candidates >= expected.verified_candidates);
        // No room: the digests and the search's fingerprints go to disk, whatever is found.
        prop_assert!(found.spilled_bytes > 0);
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// URL duplicates link documents whatever their SimHash: the decision that searches kept
    /// documents component by component gives what the decision from every pair gives.
    #[test]
    fn url_links_decide_the_same_either_way(
        fps in prop_oneof![families(), corpus()],
        urls in 1u64..12,
        keep in prop_oneof![Just(KeepPolicy::First), Just(KeepPolicy::Longest), Just(KeepPolicy::Newest)],
    ) {
        let mut items = with_features(&fps);
        for (i, item) in items.iter_mut().enumerate() {
            item.bytes = (fps[i].0 % 7) * 10;
            item.fetched_at = Some((fps[i].0 % 5) as i64);
            item.url_key = (i % 3 == 0).then(|| format!("https://example.com/{}", fps[i].1 % urls));
        }
        let every = DedupOptions { keep, url_dedup: true, ..policy(|p| p.k = 3) };
        let deciding = DedupOptions { list_pairs: false, ..every.clone() };
        let all = dedup_every_pair(&items, &every).unwrap();
        let lazy = dedup(&items, &deciding).unwrap();
        prop_assert_eq!(&lazy.removals, &all.removals);
        prop_assert_eq!(&lazy.clusters, &all.clusters);
        prop_assert_eq!(&dedup(&items, &every).unwrap().pairs, &all.pairs);
    }
}

/// The outcomes of the decision from every candidate pair under `every` (which lists every
/// accepted pair) and of the same options deciding against the kept documents only; the
/// pairs listed after the linear decision under `every` are checked against the first.
fn every_pair_and_deciding(
    items: &[neardup_dedup::Item],
    every: DedupOptions,
) -> (neardup_dedup::Outcome, neardup_dedup::Outcome) {
    let all = dedup_every_pair(items, &every).unwrap();
    assert_eq!(dedup(items, &every).unwrap().pairs, all.pairs);
    let deciding = DedupOptions {
        list_pairs: false,
        ..every
    };
    (all, dedup(items, &deciding).unwrap())
}

/// One component larger than the walk scans (over 4,096 units: its kept units go into a probed
/// index sized for it): 5,000 distinct weight-3 fingerprints, each within 2 bits of 183 others,
/// whose shingle sets pass or fail by how many elements they share, so many units are kept.
/// The decision searching kept units equals the decision from every candidate pair.
#[test]
fn a_component_larger_than_a_scan_decides_as_every_pair() {
    let mut weight_three = Vec::new();
    for a in 0..64u64 {
        for b in a + 1..64 {
            for c in b + 1..64 {
                weight_three.push(1u64 << a | 1 << b | 1 << c);
            }
        }
    }
    let m = 5000usize;
    let fps: Vec<u64> = (0..m)
        .map(|i| weight_three[i * 7919 % weight_three.len()])
        .collect();
    let items: Vec<neardup_dedup::Item> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| {
            let mut item = item(f, i as u64);
            let bits = (0..64).filter(|b| f >> b & 1 == 1);
            let shared = 100..100 + (i as u64 % 4);
            item.features = Some(FeatureSet::new(bits.chain(shared).collect()));
            item
        })
        .collect();
    let (all, lazy) = every_pair_and_deciding(
        &items,
        policy(|p| {
            p.threshold = 0.6;
            p.k = 3;
        }),
    );
    assert_eq!(lazy.clusters, all.clusters);
    assert_eq!(lazy.removals, all.removals);
    assert_eq!(lazy.kept, all.kept);
    let kept = lazy.kept.iter().filter(|k| **k).count();
    assert!(
        kept > 500 && kept < m - 500,
        "kept {kept}: both outcomes are common"
    );
    assert!(lazy.verified_candidates < all.verified_candidates);
    // With no room, the component is walked in 20 parts of a batch (256 units): each part's
    // kept units in an index of their own, every part's units searched among the units kept
    // before it a chunk at a time. The same decisions; as many pairs verified as in one walk or
    // more (a chunk's choices are verified before a nearer one in a later chunk is known), never
    // more than every pair.
    let deciding = DedupOptions {
        list_pairs: false,
        ..policy(|p| {
            p.threshold = 0.6;
            p.k = 3;
        })
    };
    let (no_room, dir) = with_no_room(&deciding);
    let parted = dedup(&items, &no_room).unwrap();
    assert_eq!(parted.clusters, all.clusters);
    assert_eq!(parted.removals, all.removals);
    assert_eq!(parted.kept, all.kept);
    assert_eq!(parted.candidates, lazy.candidates);
    assert!(parted.verified_candidates >= lazy.verified_candidates);
    assert!(parted.verified_candidates <= all.verified_candidates);
    drop(dir);
}

/// More links than the external components hold in memory (the search's least share holds
/// about 32,000): with no room, the units' components are found from links on disk in rounds
/// (`neardup_index::FoundLinks`), not a union-find of every unit, and decide as in memory under
/// every keep policy. 3,000 chains of 20 near copies (each 2 bits from the one before: the ends
/// are 38 apart) among exact copies and URL duplicates.
#[test]
fn components_beyond_memory_decide_as_in_memory() {
    let mut rng = neardup_index::synth::Rng::new(0x1234_5678_9ABC_DEF0);
    let mut next = || rng.next_u64();
    let mut items = Vec::new();
    for family in 0..3000u64 {
        let mut fp = next();
        for member in 0..20u64 {
            fp ^= 1 << (next() % 64) | 1 << (next() % 64);
            let text = if member % 7 == 6 {
                family * 100
            } else {
                family * 100 + member
            };
            let mut item = item(fp, text);
            item.bytes = 50 + next() % 5;
            item.fetched_at = Some((next() % 9) as i64);
            item.url_key = (next() % 50 == 0).then(|| format!("example.com/{}", next() % 200));
            items.push(item);
        }
    }
    for keep in [KeepPolicy::First, KeepPolicy::Longest, KeepPolicy::Newest] {
        let in_memory = DedupOptions {
            keep,
            url_dedup: true,
            ..simhash(3)
        };
        let (spilled, dir) = with_no_room(&in_memory);
        let expected = dedup(&items, &in_memory).unwrap();
        let found = dedup(&items, &spilled).unwrap();
        assert_eq!(found.removals, expected.removals);
        assert_eq!(found.clusters, expected.clusters);
        assert_eq!(found.kept, expected.kept);
        assert!(expected.removals.len() > 30_000, "chains join");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

/// A family of m near copies of one text: every candidate pair passes, and deciding costs one
/// verification a copy (against the kept original), not one a pair.
#[test]
fn a_family_costs_one_verification_a_copy() {
    let m = 200u64;
    let fps: Vec<(u64, u64)> = (0..m).map(|i| (1u64 << (i % 3), 10 + i)).collect();
    let mut items = with_features(&fps);
    for item in &mut items {
        item.features = Some(FeatureSet::new((0..100).collect()));
    }
    let (all, lazy) = every_pair_and_deciding(&items, policy(|p| p.k = 3));
    assert_eq!(all.candidates as u64, m * (m - 1) / 2);
    assert_eq!(all.verified_candidates as u64, m * (m - 1) / 2);
    assert_eq!(lazy.verified_candidates as u64, m - 1);
    assert_eq!(lazy.clusters, all.clusters);
    assert_eq!(lazy.kept.iter().filter(|k| **k).count(), 1);
}

#[test]
fn exact_near_and_unrelated() {
    let items = vec![item(0, 1), item(0b111, 2), item(0, 1), item(u64::MAX, 3)];
    let outcome = dedup(&items, &simhash(3)).unwrap();
    assert_eq!(outcome.kept, [true, false, false, true]);
    let kinds: Vec<(u32, u32, Kind)> = outcome.pairs.iter().map(|p| (p.a, p.b, p.kind)).collect();
    assert_eq!(kinds, [(0, 1, Kind::Near), (0, 2, Kind::Exact)]);
    assert_eq!(outcome.removals[0].distance, 3);
    assert_eq!(outcome.removals[1].kind, Kind::Exact);

    let mut exact_only = simhash(3);
    exact_only.policy.method = Method::Exact;
    assert_eq!(
        dedup(&items, &exact_only).unwrap().kept,
        [true, true, false, true]
    );
}

#[test]
fn keep_policies_choose_the_representative() {
    let mut items = vec![item(0, 1), item(1, 2), item(3, 3)];
    items[1].bytes = 500;
    items[2].fetched_at = Some(1_700_000_000);
    let keep = |keep| {
        dedup(&items, &DedupOptions { keep, ..simhash(3) })
            .unwrap()
            .kept
    };
    assert_eq!(keep(KeepPolicy::First), [true, false, false]);
    assert_eq!(keep(KeepPolicy::Longest), [false, true, false]);
    assert_eq!(keep(KeepPolicy::Newest), [false, false, true]);
}

#[test]
fn verification_drops_candidates_below_the_threshold() {
    let mut items = vec![item(0, 1), item(1, 2), item(2, 3)];
    items[0].features = Some(FeatureSet::new((0..10).collect()));
    items[1].features = Some(FeatureSet::new((0..9).collect())); // Jaccard 0.9 with 0
    items[2].features = Some(FeatureSet::new((5..10).collect())); // contained in 0 and 1
    let run = |verify, threshold| {
        let options = policy(|p| {
            p.k = 3;
            p.verify = Some(verify);
            p.threshold = threshold;
        });
        dedup(&items, &options).unwrap()
    };
    let jaccard = run(VerifyMeasure::Jaccard, 0.85);
    assert_eq!(jaccard.kept, [true, false, true]);
    // Every candidate verified for the list (and those that could decide, by the decision).
    assert_eq!(jaccard.candidates, 3);
    assert!(jaccard.verified_candidates >= 3);
    assert!((jaccard.pairs[0].evidence.value - 0.9).abs() < 1e-12);
    assert_eq!(jaccard.removals[0].evidence, jaccard.pairs[0].evidence);
    let containment = run(VerifyMeasure::Containment, 0.99);
    assert_eq!(containment.kept, [true, false, false]);
    // Cascade needs a measure; verification needs shingle sets.
    let no_measure = policy(|p| p.verify = None);
    assert!(dedup(&items, &no_measure).is_err());
    items[1].features = None;
    assert!(dedup(&items, &DedupOptions::default()).is_err());
}

#[test]
fn url_duplicates_and_empty_input() {
    let mut items = vec![item(0, 1), item(u64::MAX, 2)];
    items[0].url_key = Some("example.com/a".into());
    items[1].url_key = Some("example.com/a".into());
    let options = DedupOptions {
        url_dedup: true,
        ..simhash(3)
    };
    let outcome = dedup(&items, &options).unwrap();
    assert_eq!(outcome.removals[0].kind, Kind::Url);
    assert!(dedup(&[], &DedupOptions::default())
        .unwrap()
        .kept
        .is_empty());
}

/// A unit linked to others by its canonical URL only is never verified (an accepted pair is
/// not), so the run asks for no shingle set of it, in memory or with everything on disk (where
/// the components are found from links on disk); the units the search links are verified on
/// their sets.
#[test]
fn units_linked_by_url_only_need_no_shingle_set() {
    let mut items = vec![
        item(0, 1),
        item(u64::MAX, 2),
        item(0xffff_0000_ffff_0000, 3),
    ];
    for item in &mut items {
        item.url_key = Some("example.com/a".into());
    }
    // Two near copies (one bit apart, the same set), far from the three above.
    items.extend(with_features(&[
        (0x1234_5678, 4),
        (0x1234_5678 ^ 1 << 40, 5),
    ]));
    let in_memory = DedupOptions {
        url_dedup: true,
        ..policy(|p| p.k = 3)
    };
    let (spilled, dir) = with_no_room(&in_memory);
    for options in [&in_memory, &spilled] {
        let outcome = dedup(&items, options).unwrap();
        let removed: Vec<(u32, u32, Kind)> = outcome
            .removals
            .iter()
            .map(|r| (r.index, r.of, r.kind))
            .collect();
        assert_eq!(
            removed,
            [(1, 0, Kind::Url), (2, 0, Kind::Url), (4, 3, Kind::Near)]
        );
        assert!(outcome.verified_candidates >= 1);
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Holds the linear decision under `every`'s policy (deciding alone, in memory or with no
/// room at all) to the decision from every candidate pair: the same removals, clusters and kept
/// documents, never more verifications; listing every pair after it gives every accepted
/// candidate pair from the same candidates; its files are gone when it ends.
fn linear_as_every_pair(
    items: &[neardup_dedup::Item],
    every: &DedupOptions,
    no_room: bool,
) -> Result<(), TestCaseError> {
    let deciding = DedupOptions {
        list_pairs: false,
        ..every.clone()
    };
    let (deciding, dir) = match no_room {
        true => with_no_room(&deciding),
        false => (deciding, tempfile::tempdir().unwrap()),
    };
    let all = dedup_every_pair(items, every).unwrap();
    let lazy = dedup(items, &deciding).unwrap();
    prop_assert_eq!(&lazy.removals, &all.removals);
    prop_assert_eq!(&lazy.clusters, &all.clusters);
    prop_assert_eq!(&lazy.kept, &all.kept);
    prop_assert!(lazy.verified_candidates <= all.verified_candidates);
    let listing = DedupOptions {
        list_pairs: true,
        ..deciding.clone()
    };
    let listed = dedup(items, &listing).unwrap();
    prop_assert_eq!(&listed.pairs, &all.pairs);
    prop_assert_eq!(&listed.removals, &all.removals);
    prop_assert_eq!(listed.candidates, all.candidates);
    for pair in &lazy.pairs {
        prop_assert!(all.pairs.contains(pair));
    }
    if no_room {
        prop_assert!(lazy.spilled_bytes > 0);
    }
    prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    Ok(())
}

/// `items` with MinHash signatures of 16 values made from their SimHash values (value `j`
/// from bits `4j` to `4j + 3`), so that documents a few bits apart share most values and
/// several bands: families, chains and exact copies as the SimHash tests plant them.
fn signed(mut items: Vec<neardup_dedup::Item>) -> Vec<neardup_dedup::Item> {
    for item in &mut items {
        let simhash = item.fingerprints.simhash.as_u128() as u64;
        item.fingerprints.minhash = Some(
            (0..16u32)
                .map(|j| ((simhash >> (4 * j)) & 0xf) as u32 | j << 8)
                .collect(),
        );
    }
    items
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(120))]

    /// MinHash decides linearly (each document against the kept documents of its component
    /// that share a band with it at the threshold or above, nearest first): the removals,
    /// clusters and kept documents of the decision from every candidate pair, with and without
    /// verification, in memory and with no room at all (signatures, band keys and links on
    /// disk); it never verifies more; every pair listed after it is every accepted candidate
    /// pair; its files are gone when it ends.
    #[test]
    fn minhash_decides_linearly_as_from_every_pair(
        fps in prop_oneof![families(), corpus()],
        threshold in prop_oneof![0.3f64..1.0, Just(0.5), Just(0.75)],
        verify in any::<bool>(),
        no_room in any::<bool>(),
        keep in prop_oneof![Just(KeepPolicy::First), Just(KeepPolicy::Longest), Just(KeepPolicy::Newest)],
    ) {
        let mut items = signed(with_features(&fps));
        for (i, item) in items.iter_mut().enumerate() {
            item.bytes = (fps[i].0 % 7) * 10;
            item.fetched_at = Some((fps[i].0 % 5) as i64);
        }
        let every = DedupOptions {
            keep,
            ..policy(|p| {
                p.method = Method::Minhash;
                p.profile.minhash = Some(neardup_core::minhash::MinHashOptions { num_perm: 16, seed: 1 });
                p.threshold = threshold;
                p.verify = verify.then_some(VerifyMeasure::Jaccard);
            })
        };
        linear_as_every_pair(&items, &every, no_room)?;
    }
}

#[test]
fn minhash_method_needs_signatures() {
    let items = vec![item(0, 1), item(1, 2)];
    let mut options = simhash(3);
    options.policy.method = Method::Minhash;
    assert!(dedup(&items, &options)
        .unwrap_err()
        .to_string()
        .contains("MinHash signatures"));
}

/// Items with distinct texts and the given shingle sets, all with one SimHash fingerprint (so
/// that every pair is a cascade candidate).
fn items_with_sets(sets: &[Vec<u64>]) -> Vec<neardup_dedup::Item> {
    sets.iter()
        .enumerate()
        .map(|(i, set)| {
            let mut item = item(0, i as u64);
            item.features = Some(FeatureSet::new(set.clone()));
            item
        })
        .collect()
}

/// Every pair whose `measure` is ≥ `threshold` and size ratio ≥ `ratio`, by brute force.
fn reference_pairs(
    sets: &[Vec<u64>],
    measure: VerifyMeasure,
    threshold: f64,
    ratio: f64,
) -> Vec<(u32, u32)> {
    let sets: Vec<FeatureSet> = sets.iter().map(|s| FeatureSet::new(s.clone())).collect();
    let guard = Policy {
        min_length_ratio: ratio,
        ..Policy::default()
    };
    let mut pairs = Vec::new();
    for i in 0..sets.len() {
        for j in i + 1..sets.len() {
            let (a, b) = (&sets[i], &sets[j]);
            if a.is_empty() || b.is_empty() || !guard.length_ratio_passes(a.len(), b.len()) {
                continue;
            }
            let shared = a.intersection_len(b) as f64;
            let similarity = match measure {
                VerifyMeasure::Containment => {
                    (shared / a.len() as f64).max(shared / b.len() as f64)
                }
                VerifyMeasure::Jaccard => shared / ((a.len() + b.len()) as f64 - shared),
            };
            if similarity >= threshold {
                pairs.push((i as u32, j as u32));
            }
        }
    }
    pairs
}

/// Sets over a small alphabet (so that they overlap), with planted contained copies.
fn overlapping_sets() -> impl Strategy<Value = Vec<Vec<u64>>> {
    (
        prop::collection::vec(prop::collection::vec(0u64..80, 0..40), 1..25),
        prop::collection::vec((any::<usize>(), 0usize..30, 0usize..10), 0..15),
    )
        .prop_map(|(mut sets, plants)| {
            for (source, keep, extra) in plants {
                let base = sets[source % sets.len()].clone();
                let mut copy: Vec<u64> = base.iter().copied().take(keep).collect();
                copy.extend((0..extra as u64).map(|e| 1000 + e));
                sets.push(copy);
            }
            sets
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The overlap search misses no pair that containment verification accepts, with or
    /// without the length-ratio guard.
    #[test]
    fn overlap_method_finds_every_contained_pair(
        sets in overlapping_sets(),
        threshold in prop_oneof![0.05f64..=1.0, Just(0.5), Just(0.8), Just(0.9), Just(1.0)],
        ratio in prop_oneof![Just(0.0), 0.0f64..=1.0, Just(0.2), Just(0.5)],
    ) {
        let items = items_with_sets(&sets);
        let options = policy(|p| {
            p.method = Method::Overlap;
            p.verify = Some(VerifyMeasure::Containment);
            p.threshold = threshold;
            p.min_length_ratio = ratio;
        });
        let outcome = dedup(&items, &options).unwrap();
        let found: Vec<(u32, u32)> = outcome
            .pairs
            .iter()
            .filter(|p| p.kind == Kind::Near)
            .map(|p| (p.a, p.b))
            .collect();
        // Exact copies (equal digests) never happen here: every text is distinct.
        prop_assert_eq!(found, reference_pairs(&sets, VerifyMeasure::Containment, threshold, ratio));
        // Jaccard ≥ t implies containment ≥ t: the same search serves Jaccard verification.
        let mut jaccard = options;
        jaccard.policy.verify = Some(VerifyMeasure::Jaccard);
        let found: Vec<(u32, u32)> = dedup(&items, &jaccard).unwrap().pairs.iter().map(|p| (p.a, p.b)).collect();
        prop_assert_eq!(found, reference_pairs(&sets, VerifyMeasure::Jaccard, threshold, ratio));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// The overlap method's linear decision (prefix keys linked into components, each walked
    /// against its kept units' prefixes) makes the removals, clusters and kept documents of the
    /// decision from every candidate pair, in memory and with no room at all (sets, prefix keys
    /// and links on disk), under every keep policy, with SimHash distances that order the
    /// choices, exact copies and URL-free families of contained copies; it never verifies more;
    /// every pair listed after it is every accepted candidate pair, from the same candidates;
    /// its files are gone when it ends.
    #[test]
    fn overlap_decides_linearly_as_from_every_pair(
        sets in overlapping_sets(),
        simhashes in prop::collection::vec(0u64..16, 40),
        copies in prop::collection::vec(any::<usize>(), 0..4),
        threshold in prop_oneof![0.3f64..=1.0, Just(0.5), Just(0.8)],
        ratio in prop_oneof![Just(0.0), Just(0.5)],
        measure in prop_oneof![Just(VerifyMeasure::Containment), Just(VerifyMeasure::Jaccard)],
        no_room in any::<bool>(),
        keep in prop_oneof![Just(KeepPolicy::First), Just(KeepPolicy::Longest), Just(KeepPolicy::Newest)],
    ) {
        let mut items = items_with_sets(&sets);
        // Exact copies: the same text (digest) and set as an earlier item.
        for at in copies {
            let copy = items[at % items.len()].clone();
            items.push(copy);
        }
        for (i, item) in items.iter_mut().enumerate() {
            item.fingerprints.simhash = Simhash::B64(simhashes[i % simhashes.len()]);
            item.bytes = (i as u64 * 7919) % 13 * 10;
            item.fetched_at = Some((i % 5) as i64);
        }
        let every = DedupOptions {
            keep,
            ..policy(|p| {
                p.method = Method::Overlap;
                p.verify = Some(measure);
                p.threshold = threshold;
                p.min_length_ratio = ratio;
            })
        };
        linear_as_every_pair(&items, &every, no_room)?;
    }
}

#[test]
fn length_ratio_guard_drops_a_short_text_inside_a_long_one() {
    // 0: 100 shingles; 1: 18 of them (ratio 0.18); 2: 25 of them (0.25); 3: 20 of them (0.2).
    let sets = vec![
        (0..100).collect::<Vec<u64>>(),
        (0..18).collect(),
        (50..75).collect(),
        (80..100).collect(),
    ];
    let items = items_with_sets(&sets);
    for method in [Method::Cascade, Method::Overlap] {
        let run = |ratio| {
            let options = policy(|p| {
                p.method = method;
                p.verify = Some(VerifyMeasure::Containment);
                p.threshold = 0.9;
                p.min_length_ratio = ratio;
            });
            let outcome = dedup(&items, &options).unwrap();
            outcome.pairs.iter().map(|p| (p.a, p.b)).collect::<Vec<_>>()
        };
        // Off: every contained text is a near-duplicate of the long one.
        assert_eq!(run(0.0), [(0, 1), (0, 2), (0, 3)], "{method:?}");
        // At 0.2: the boundary (exactly 0.2) passes, 0.18 does not.
        assert_eq!(run(0.2), [(0, 2), (0, 3)], "{method:?}");
        assert_eq!(run(0.21), [(0, 2)], "{method:?}");
        assert!(run(0.3).is_empty(), "{method:?}");
    }
}

#[test]
fn overlap_and_guard_options_are_validated() {
    let items = items_with_sets(&[vec![1, 2], vec![1, 2, 3]]);
    let overlap = policy(|p| {
        p.method = Method::Overlap;
        p.verify = Some(VerifyMeasure::Containment);
    });
    assert!(dedup(&items, &overlap).is_ok());
    let error = |change: &dyn Fn(&mut Policy)| {
        let mut options = overlap.clone();
        change(&mut options.policy);
        dedup(&items, &options).unwrap_err().to_string()
    };
    assert!(error(&|p| p.verify = None).contains("verify candidates"));
    assert!(error(&|p| p.threshold = 0.0).contains("above 0"));
    assert!(error(&|p| p.min_length_ratio = 1.5).contains("between 0 and 1"));
    let mut unverified = simhash(3);
    unverified.policy.min_length_ratio = 0.2;
    assert!(dedup(&items, &unverified)
        .unwrap_err()
        .to_string()
        .contains("needs verification"));
    // Missing shingle sets are an error, not an empty result.
    let mut bare = items.clone();
    bare[0].features = None;
    assert!(dedup(&bare, &overlap).is_err());
}

#[test]
fn chains_split_into_centred_clusters_but_stay_one_component() {
    // B is 3 bits from A and from C; A and C are 6 bits apart.
    let items = vec![item(0, 1), item(0b111, 2), item(0b11_1111, 3)];
    for list_pairs in [false, true] {
        let options = DedupOptions {
            list_pairs,
            ..simhash(3)
        };
        let outcome = dedup(&items, &options).unwrap();
        let clusters: Vec<Vec<u32>> = outcome.clusters.iter().map(|c| c.members.clone()).collect();
        assert_eq!(clusters, [vec![0, 1]], "C is not within k of A: it is kept");
        assert_eq!(outcome.kept, [true, false, true]);
        // Components follow every accepted pair: listed only when asked.
        let components = outcome.components().unwrap();
        if list_pairs {
            assert_eq!(components, [vec![0, 1, 2]]);
        } else {
            assert_eq!(components, [vec![0, 1]]);
        }
    }
}
