//! The big benchmark numbers of BENCHMARKS.md: batch all-pairs, the online index, rotate recall.
//!
//! ```text
//! cargo run --release -p neardup-index --example index_bench -- pairs 1000000 10000000
//! cargo run --release -p neardup-index --example index_bench -- online 10000000
//! cargo run --release -p neardup-index --example index_bench -- rotate 1000000
//! cargo run --release -p neardup-index --example index_bench -- gen 1000000 > fps.txt
//! cargo run --release -p neardup-index --example index_bench -- online 10000000 --skewed
//! cargo run --release -p neardup-index --example index_bench -- online 10000000 --k 6
//! ```
//!
//! `online` builds and queries both online indexes side by side, in one run: permuted tables
//! (the design for `n` and `k`, or `--design`) and multi-probe block tables (the block count for
//! `n` and `k`). `--k` sets the distance (3 by default).
//!
//! Data: `synth::planted` (random, plus 10% near-copies with 0–3 bits flipped and 1% exact
//! duplicates), seed 2024; with `--skewed`, `synth::skewed` instead (30% of the set share their
//! top 16 bits). Queries: half near-copies of stored fingerprints, half random.

use std::io::Write;
use std::time::{Duration, Instant};

use neardup_index::synth::{self, Rng};
use neardup_index::{
    all_pairs, rotate_pairs, Design, HammingIndex, PermutedTables, ProbedBlocks, RotateParams,
};

const SEED: u64 = 2024;
/// The distance of `pairs` and `rotate`, and of `online` unless `--k` says otherwise.
const K: u32 = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, sizes)) = args.split_first() else {
        return Err("usage: index_bench pairs|online|rotate|gen N [N ...] [--design D]".into());
    };
    let mut design: Option<Design> = None;
    let mut skewed = false;
    let mut k = K;
    let mut ns = Vec::new();
    let mut it = sizes.iter();
    while let Some(arg) = it.next() {
        if arg == "--design" {
            design = Some(it.next().ok_or("--design needs a value")?.parse()?);
        } else if arg == "--k" {
            k = it.next().ok_or("--k needs a value")?.parse()?;
        } else if arg == "--skewed" {
            skewed = true;
        } else {
            ns.push(arg.replace('_', "").parse::<usize>()?);
        }
    }
    for n in ns {
        let data = Data { n, skewed };
        match command.as_str() {
            "pairs" => pairs(data, design)?,
            "online" => online(data, design, k)?,
            "rotate" => rotate(data)?,
            "gen" => generate(data)?,
            other => return Err(format!("unknown command {other}").into()),
        }
    }
    Ok(())
}

/// Which data set to generate.
#[derive(Clone, Copy)]
struct Data {
    n: usize,
    skewed: bool,
}

impl Data {
    /// The fingerprints.
    fn fps(self) -> Vec<u64> {
        if self.skewed {
            synth::skewed(self.n, SEED, 0.3, 16)
        } else {
            synth::planted(self.n, SEED)
        }
    }

    /// A label for the output.
    fn name(self) -> &'static str {
        if self.skewed {
            "skewed"
        } else {
            "planted"
        }
    }
}

/// Times `f`, returning its result and the elapsed time.
fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = f();
    (value, start.elapsed())
}

/// Writes the planted set, one decimal fingerprint a line.
fn generate(data: Data) -> Result<(), Box<dyn std::error::Error>> {
    let fps = data.fps();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for fp in fps {
        writeln!(out, "{fp}")?;
    }
    Ok(())
}

/// Batch all-pairs at k = 3.
fn pairs(data: Data, design: Option<Design>) -> Result<(), Box<dyn std::error::Error>> {
    let n = data.n;
    let (fps, gen_time) = timed(|| data.fps());
    let design = design.unwrap_or_else(|| Design::for_expected_len(n, K, 64));
    let (pairs, time) = timed(|| all_pairs(&fps, K, design));
    let pairs = pairs?;
    let exact = pairs.iter().filter(|p| p.distance == 0).count();
    println!(
        "all_pairs n={n} data={} k={K} design={design} threads={} pairs={} (distance 0: {exact}) \
         time={:.3}s (data generated in {:.2}s)",
        data.name(),
        rayon::current_num_threads(),
        pairs.len(),
        time.as_secs_f64(),
        gen_time.as_secs_f64()
    );
    Ok(())
}

/// The online indexes at distance `k`, side by side: build time, memory, query latency.
fn online(data: Data, design: Option<Design>, k: u32) -> Result<(), Box<dyn std::error::Error>> {
    let n = data.n;
    let fps = data.fps();
    let items: Vec<(u64, u64)> = fps
        .iter()
        .enumerate()
        .map(|(i, &f)| (i as u64, f))
        .collect();
    let mut rng = Rng::new(SEED + 1);
    let queries: Vec<u64> = (0..10_000)
        .map(|i| {
            if i % 2 == 0 {
                let stored = fps[rng.below(n as u64) as usize];
                let flips = rng.below(u64::from(k) + 1) as u32;
                rng.flip(stored, flips)
            } else {
                rng.fingerprint()
            }
        })
        .collect();
    drop(fps);

    let design = design.unwrap_or_else(|| Design::for_expected_len(n, k, 64));
    let (permuted, build) = timed(|| -> Result<_, neardup_index::IndexError> {
        let mut index = PermutedTables::<u64>::with_capacity(design, n)?;
        index.insert_batch(&items)?;
        Ok(index)
    });
    let permuted = permuted?;
    let label = format!("permuted design={design}");
    report(&data, k, &label, build, &permuted, &queries, |q| {
        permuted.candidates(q)
    })?;
    drop(permuted);

    let blocks = ProbedBlocks::<u64>::blocks_for(n, k);
    let (probed, build) = timed(|| -> Result<_, neardup_index::IndexError> {
        let mut index = ProbedBlocks::<u64>::with_capacity(blocks, k, n)?;
        index.insert_batch(&items)?;
        Ok(index)
    });
    let probed = probed?;
    let label = format!("probed blocks={blocks}");
    report(&data, k, &label, build, &probed, &queries, |q| {
        probed.candidates(q, k)
    })
}

/// Runs the queries on one built index and prints its line.
fn report(
    data: &Data,
    k: u32,
    label: &str,
    build: Duration,
    index: &dyn HammingIndex<u64>,
    queries: &[u64],
    candidates_of: impl Fn(u64) -> usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let mut latencies = Vec::with_capacity(queries.len());
    let mut found = 0usize;
    let mut candidates = 0usize;
    for &q in queries {
        let (result, time) = timed(|| index.query(q, k));
        found += result?.len();
        latencies.push(time);
        candidates += candidates_of(q);
    }
    latencies.sort_unstable();
    let at = |p: f64| latencies[((latencies.len() - 1) as f64 * p) as usize];
    let n = data.n;
    println!(
        "online n={n} data={} k={k} {label} build={:.3}s memory={:.1} MiB ({:.1} bytes/fp) \
         queries={} median={:.1}µs p99={:.1}µs max={:.1}µs candidates/query={:.0} matches={found}",
        data.name(),
        build.as_secs_f64(),
        index.memory_bytes() as f64 / (1 << 20) as f64,
        index.memory_bytes() as f64 / n as f64,
        queries.len(),
        at(0.5).as_secs_f64() * 1e6,
        at(0.99).as_secs_f64() * 1e6,
        at(1.0).as_secs_f64() * 1e6,
        candidates as f64 / queries.len() as f64,
    );
    Ok(())
}

/// Recall of rotate-sort-compare against the exact all-pairs, for several rotations and windows.
fn rotate(data: Data) -> Result<(), Box<dyn std::error::Error>> {
    let n = data.n;
    let fps = data.fps();
    let (exact, exact_time) = timed(|| all_pairs(&fps, K, Design::for_expected_len(n, K, 64)));
    let exact = exact?;
    println!(
        "rotate n={n} k={K}: exact all_pairs finds {} pairs in {:.3}s",
        exact.len(),
        exact_time.as_secs_f64()
    );
    println!("| rotations | window | pairs found | recall | time |");
    println!("|---:|---:|---:|---:|---:|");
    for rotations in [1, 4, 16, 64] {
        for window in [1, 4, 16] {
            let params = RotateParams { rotations, window };
            let (found, time) = timed(|| rotate_pairs(&fps, K, params));
            let found = found?;
            println!(
                "| {rotations} | {window} | {} | {:.2}% | {:.2}s |",
                found.len(),
                100.0 * found.len() as f64 / exact.len().max(1) as f64,
                time.as_secs_f64()
            );
        }
    }
    Ok(())
}
