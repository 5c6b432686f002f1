//! Connected components from links in sorted runs ([`FoundLinks::components`]) against a
//! union-find of every position, on random graphs, long paths (the worst case of label
//! propagation, which stresses the rounds), stars and dense families, within budgets from one
//! that runs every round on disk to one that holds everything.

use neardup_index::synth::Rng;
use neardup_index::{Design, ExternalPairs, FoundLinks, UnionFind};
use proptest::prelude::*;

/// Budgets: a few links in memory (every round on disk, runs of 16 links), some, all.
const BUDGETS: [u64; 3] = [1 << 10, 1 << 16, 1 << 30];

/// An empty search's links within `memory`, in `dir`.
fn no_links(memory: u64, dir: &std::path::Path) -> FoundLinks {
    ExternalPairs::<u64>::new(memory, dir)
        .links(3, Design::Tables4x16)
        .unwrap()
}

/// Each of `0..n` named by its component's smallest position, as `UnionFind` finds them.
fn reference(n: usize, links: &[(u32, u32)]) -> Vec<u32> {
    let mut sets = UnionFind::new(n).unwrap();
    for &(x, y) in links {
        sets.union(x, y);
    }
    let mut smallest = vec![u32::MAX; n];
    (0..n as u32)
        .map(|i| {
            let root = sets.find(i) as usize;
            smallest[root] = smallest[root].min(i);
            smallest[root]
        })
        .collect()
}

/// The components of `links` over `0..n` from sorted runs within `memory` (a position no link
/// names by itself), the rounds run on disk; checks the order and that no file is left.
fn external(n: usize, links: &[(u32, u32)], memory: u64) -> (Vec<u32>, u32) {
    let dir = tempfile::tempdir().unwrap();
    let found = no_links(memory, dir.path());
    for chunk in links.chunks(100) {
        found.link(&mut chunk.to_vec()).unwrap();
    }
    let mut labels: Vec<u32> = (0..n as u32).collect();
    let mut named = vec![false; n];
    for (x, y) in links {
        named[*x as usize] |= x != y;
        named[*y as usize] |= x != y;
    }
    let mut components = found.components().unwrap();
    let mut last = None;
    for label in components.by_ref() {
        let (position, smallest) = label.unwrap();
        assert!(last < Some(position), "ascending, each once");
        assert!(named[position as usize], "only linked positions listed");
        last = Some(position);
        labels[position as usize] = smallest;
    }
    let rounds = components.rounds();
    drop(components);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "no file left"
    );
    (labels, rounds)
}

/// Asserts the reference at every budget; the least runs rounds on disk when the links do not
/// fit it.
fn check(n: usize, links: &[(u32, u32)]) {
    let want = reference(n, links);
    for memory in BUDGETS {
        let (found, rounds) = external(n, links, memory);
        assert_eq!(found, want, "within {memory}");
        if memory == BUDGETS[0] && links.len() > 8 {
            assert!(rounds > 0, "the least budget runs rounds on disk");
        }
        if memory == BUDGETS[2] {
            assert_eq!(rounds, 0, "the largest holds every link");
        }
    }
}

/// Random links among `n` positions.
fn random_links(n: usize, m: usize, seed: u64) -> Vec<(u32, u32)> {
    let mut rng = Rng::new(seed);
    (0..m)
        .map(|_| (rng.below(n as u64) as u32, rng.below(n as u64) as u32))
        .collect()
}

#[test]
fn a_long_path_in_any_order() {
    // A path of 3000 positions, shuffled both in its order and its links' order: label
    // propagation would need 3000 rounds.
    let mut rng = Rng::new(7);
    let mut order: Vec<u32> = (0..3000).collect();
    rng.shuffle(&mut order);
    let mut links: Vec<(u32, u32)> = order.windows(2).map(|w| (w[0], w[1])).collect();
    rng.shuffle(&mut links);
    check(3000, &links);
    // And in order, the smallest position at one end.
    let path: Vec<(u32, u32)> = (0..2999).map(|i| (i, i + 1)).collect();
    check(3000, &path);
    let reversed: Vec<(u32, u32)> = (0..2999).map(|i| (2999 - i, 2998 - i)).collect();
    check(3000, &reversed);
}

#[test]
fn stars_cliques_and_repeats() {
    // A star around its largest position, a clique, every link repeated and self-links.
    let mut links: Vec<(u32, u32)> = (0..500).map(|i| (i, 500)).collect();
    for a in 600..640 {
        for b in 600..640 {
            links.push((a, b));
        }
    }
    links.extend(links.clone());
    links.extend((700..710).map(|i| (i, i)));
    check(800, &links);
}

#[test]
fn no_links_no_labels() {
    check(10, &[]);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn random_graphs_as_a_union_find(
        seed in any::<u64>(),
        n in 1usize..2000,
        density in 0usize..3,
        memory in 1u64..(1 << 16),
    ) {
        let links = random_links(n, n * density / 2 + n / 10, seed);
        let (found, _) = external(n, &links, memory);
        prop_assert_eq!(found, reference(n, &links));
    }

    #[test]
    fn paths_and_trees_as_a_union_find(seed in any::<u64>(), n in 2usize..1500) {
        // A random tree (each position linked to an earlier one) of paths: long chains.
        let mut rng = Rng::new(seed);
        let links: Vec<(u32, u32)> = (1..n as u32)
            .map(|i| {
                let back = if rng.below(8) == 0 { rng.below(u64::from(i)) as u32 } else { i - 1 };
                (back, i)
            })
            .collect();
        let mut relabel: Vec<u32> = (0..n as u32).collect();
        rng.shuffle(&mut relabel);
        let links: Vec<(u32, u32)> =
            links.iter().map(|&(x, y)| (relabel[x as usize], relabel[y as usize])).collect();
        let (found, _) = external(n, &links, 1 << 10);
        prop_assert_eq!(found, reference(n, &links));
    }
}
