//! Criterion benchmarks: query latency, batch all-pairs throughput, build time.
//!
//! `cargo bench -p neardup-index`. Sizes are modest so a run takes a few minutes; the 1M/10M/100M
//! figures of BENCHMARKS.md come from `examples/index_bench.rs`.

// `criterion_group!` generates functions without documentation.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use neardup_index::synth::{self, Rng};
use neardup_index::{
    all_pairs, rotate_pairs, BitInvertedIndex, BruteForce, Design, HammingIndex, PermutedTables,
    ProbedBlocks, RotateParams,
};

const K: u32 = 3;

/// The planted set as `(id, fingerprint)` items.
fn items(n: usize) -> Vec<(u64, u64)> {
    synth::planted::<u64>(n, 1)
        .into_iter()
        .enumerate()
        .map(|(i, fp)| (i as u64, fp))
        .collect()
}

/// Queries: half near-copies of stored fingerprints, half random.
fn queries(items: &[(u64, u64)], count: usize) -> Vec<u64> {
    let mut rng = Rng::new(2);
    (0..count)
        .map(|i| {
            if i % 2 == 0 {
                let fp = items[rng.below(items.len() as u64) as usize].1;
                let flips = rng.below(u64::from(K) + 1) as u32;
                rng.flip(fp, flips)
            } else {
                rng.fingerprint()
            }
        })
        .collect()
}

/// Runs every query once per iteration.
fn bench_queries(c: &mut Criterion, name: &str, n: usize, index: &dyn HammingIndex<u64>) {
    let qs = queries(&items(n), 256);
    let mut group = c.benchmark_group("query");
    group.throughput(Throughput::Elements(qs.len() as u64));
    group.bench_function(BenchmarkId::new(name, n), |b| {
        b.iter(|| {
            qs.iter()
                .map(|&q| index.query(q, K).map_or(0, |m| m.len()))
                .sum::<usize>()
        })
    });
    group.finish();
}

fn query(c: &mut Criterion) {
    for n in [100_000, 1_000_000] {
        let data = items(n);
        for design in [Design::Tables4x16, Design::Tables10] {
            let mut index = PermutedTables::with_capacity(design, n).expect("valid design");
            index.insert_batch(&data).expect("distinct ids");
            bench_queries(c, &format!("permuted-{design}"), n, &index);
        }
        let blocks = ProbedBlocks::<u64>::blocks_for(n, K);
        let mut probed = ProbedBlocks::with_capacity(blocks, K, n).expect("valid blocks");
        probed.insert_batch(&data).expect("distinct ids");
        bench_queries(c, &format!("probed-{blocks}"), n, &probed);
    }
    let n = 100_000;
    let data = items(n);
    let mut brute = BruteForce::new();
    brute.insert_batch(&data).expect("distinct ids");
    bench_queries(c, "brute-force", n, &brute);
    let mut bits = BitInvertedIndex::new();
    bits.insert_batch(&data).expect("distinct ids");
    bench_queries(c, "bit-inverted", n, &bits);
}

fn batch(c: &mut Criterion) {
    let mut group = c.benchmark_group("all_pairs");
    group.sample_size(10);
    for n in [100_000, 1_000_000] {
        let fps = synth::planted::<u64>(n, 1);
        group.throughput(Throughput::Elements(n as u64));
        group.bench_function(BenchmarkId::new("exact", n), |b| {
            b.iter(|| all_pairs(&fps, K, Design::for_expected_len(n, K, 64)).map(|p| p.len()))
        });
        let params = RotateParams {
            rotations: 16,
            window: 4,
        };
        group.bench_function(BenchmarkId::new("rotate-16x4", n), |b| {
            b.iter(|| rotate_pairs(&fps, K, params).map(|p| p.len()))
        });
    }
    group.finish();
}

fn build(c: &mut Criterion) {
    let mut group = c.benchmark_group("build");
    group.sample_size(10);
    let n = 1_000_000;
    let data = items(n);
    group.throughput(Throughput::Elements(n as u64));
    group.bench_function(BenchmarkId::new("batch-4x16", n), |b| {
        b.iter(|| {
            let mut index = PermutedTables::new(Design::Tables4x16).expect("valid design");
            index.insert_batch(&data).map(|()| index.len())
        })
    });
    group.bench_function(BenchmarkId::new("one-by-one-4x16", n), |b| {
        b.iter_batched(
            || PermutedTables::new(Design::Tables4x16).expect("valid design"),
            |mut index| {
                for &(id, fp) in &data {
                    index.insert(id, fp).expect("distinct ids");
                }
                index.len()
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

criterion_group!(benches, query, batch, build);
criterion_main!(benches);
