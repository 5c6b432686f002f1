//! neardup-fuzz: fuzzing that runs on stable Rust.
//!
//! Why a driver of our own: cargo-fuzz (libFuzzer) needs a nightly compiler for its sanitizer
//! flags; `afl` needs cargo-afl and an AFL++ build with LLVM plugins; bolero's coverage-guided
//! engines need cargo-bolero and, for libFuzzer, nightly too, and its stable engine is a plain
//! random generator. This driver needs nothing beyond the workspace's own crates, builds with
//! the test suite (no second instrumented build of every dependency: the machine has 2 cores),
//! and so runs in CI for a bounded time and locally for as long as one likes (see the README).
//! It is not coverage-guided: it mutates real samples the project makes itself (WARC crawls with
//! every record type, gzip members, zstd frames, JSON Lines, Parquet files, HTML pages, URLs, HTTP
//! requests, edits of a redb database file)
//! with byte edits, splices and each target's dictionary of tokens (`WARC/1.1`,
//! `Content-Length:`, the gzip magic, `%FF`, ...), which reaches the framing and resync paths
//! that matter here. A panic is a crash: its input is saved and the run fails; a found crash
//! becomes a file under `regressions/<target>/`, replayed by `tests/regressions.rs`.

mod stored;
mod targets;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use neardup_guard::panic_message;

pub use targets::{target, TARGETS};

/// Longest input the driver makes.
pub const MAX_INPUT: usize = 64 * 1024;

/// Most inputs kept besides the seeds, to mutate further.
const POOL: usize = 256;

/// One thing to fuzz: how to make its seeds, its dictionary, and its runner.
pub struct Target {
    /// Its name on the command line and in reports: `jsonl`, `warc`, ...
    pub name: &'static str,
    /// Real samples to start from.
    pub seeds: fn() -> Vec<Vec<u8>>,
    /// Tokens worth inserting.
    pub dictionary: &'static [&'static [u8]],
    /// Makes a runner (with its state: a database, a runtime) that feeds one input through the
    /// code under test and returns an error if an invariant does not hold; a panic is a crash.
    pub runner: fn() -> anyhow::Result<Runner>,
}

/// Runs one input.
pub type Runner = Box<dyn FnMut(&[u8]) -> anyhow::Result<()>>;

/// What one run found.
#[derive(Debug)]
pub struct Report {
    /// The target's name.
    pub target: &'static str,
    /// Inputs run.
    pub executions: u64,
    /// Time spent.
    pub elapsed: Duration,
    /// The slowest input's time.
    pub slowest: Duration,
    /// The first crash or broken invariant: its message and the file its input was saved to.
    pub failure: Option<(String, PathBuf)>,
}

/// A small fast generator (xorshift64*), seeded for reproducible runs.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (any value).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number below `n` (0 if `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
}

/// Applies one to four random edits to `input`.
pub fn mutate(input: &mut Vec<u8>, rng: &mut Rng, dictionary: &[&[u8]], other: &[u8]) {
    for _ in 0..=rng.below(4) {
        let len = input.len();
        let at = rng.below(len + 1);
        match rng.below(9) {
            0 if len > 0 => input[at.min(len - 1)] ^= 1 << rng.below(8),
            1 if len > 0 => input[at.min(len - 1)] = rng.next_u64() as u8,
            2 => {
                let bytes: Vec<u8> = (0..=rng.below(8)).map(|_| rng.next_u64() as u8).collect();
                input.splice(at..at, bytes);
            }
            3 if len > 0 => {
                let end = (at + 1 + rng.below(64)).min(len);
                input.drain(at.min(len - 1)..end);
            }
            4 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(256)).min(len);
                let copy = input[start..end].to_vec();
                input.splice(at..at, copy);
            }
            5 => input.truncate(at),
            6 if !other.is_empty() => {
                let start = rng.below(other.len());
                let end = (start + 1 + rng.below(1024)).min(other.len());
                input.splice(at..at, other[start..end].iter().copied());
            }
            _ if !dictionary.is_empty() => {
                let token = dictionary[rng.below(dictionary.len())];
                input.splice(at..at, token.iter().copied());
            }
            _ => {}
        }
    }
    input.truncate(MAX_INPUT);
}

/// Fuzzes `target` for `budget` from `seed`; a crash's input is saved under `crash_dir`, and the
/// run stops at the first one.
pub fn fuzz(target: &Target, budget: Duration, seed: u64, crash_dir: &Path) -> Report {
    let started = Instant::now();
    let mut report = Report {
        target: target.name,
        executions: 0,
        elapsed: Duration::ZERO,
        slowest: Duration::ZERO,
        failure: None,
    };
    let mut runner = match (target.runner)() {
        Ok(runner) => runner,
        Err(error) => {
            report.failure = Some((format!("cannot start: {error:#}"), PathBuf::new()));
            return report;
        }
    };
    let seeds = (target.seeds)();
    let mut pool: Vec<Vec<u8>> = Vec::new();
    let mut rng = Rng::new(seed);
    // The seeds first, as they are; then mutants of seeds and of earlier mutants.
    let mut queue = seeds.clone();
    while report.failure.is_none() && started.elapsed() < budget {
        let input = queue.pop().unwrap_or_else(|| {
            let from_pool = !pool.is_empty() && rng.below(2) == 0;
            let mut input = if from_pool {
                pool[rng.below(pool.len())].clone()
            } else {
                seeds[rng.below(seeds.len())].clone()
            };
            let other = &seeds[rng.below(seeds.len())];
            mutate(&mut input, &mut rng, target.dictionary, other);
            input
        });
        let one = Instant::now();
        let outcome = catch_unwind(AssertUnwindSafe(|| runner(&input)));
        report.slowest = report.slowest.max(one.elapsed());
        report.executions += 1;
        let message = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(format!("invariant broken: {error:#}")),
            Err(panic) => Some(format!("panic: {}", panic_message(&*panic))),
        };
        if let Some(message) = message {
            let path = save_crash(crash_dir, target.name, &input);
            report.failure = Some((message, path));
        } else if pool.len() < POOL {
            pool.push(input);
        } else if rng.below(16) == 0 {
            let slot = rng.below(POOL);
            pool[slot] = input;
        }
    }
    report.elapsed = started.elapsed();
    report
}

/// Runs `input` through `target` once (a regression file).
pub fn replay(target: &Target, input: &[u8]) -> anyhow::Result<()> {
    let mut runner = (target.runner)()?;
    match catch_unwind(AssertUnwindSafe(|| runner(input))) {
        Ok(result) => result,
        Err(panic) => anyhow::bail!("panic: {}", panic_message(&*panic)),
    }
}

/// Saves a crashing input as `crash_dir/<target>-<hash>.bin`; returns its path.
fn save_crash(crash_dir: &Path, name: &str, input: &[u8]) -> PathBuf {
    let hash = input.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let path = crash_dir.join(format!("{name}-{hash:016x}.bin"));
    let saved = std::fs::create_dir_all(crash_dir).and_then(|()| std::fs::write(&path, input));
    if let Err(error) = saved {
        eprintln!(
            "cannot save the crashing input to {}: {error}",
            path.display()
        );
    }
    path
}
