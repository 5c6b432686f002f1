//! Throughput of the fingerprinting hot paths: tokenise, shingle + hash, SimHash accumulation
//! at 64 and 128 bits, MinHash, the whole pipeline per profile, and the exact Jaccard check
//! that verifies dedup candidates. Each group reports bytes (or features) per second.
//!
//! Run: `cargo bench -p neardup-core --bench core`.

// `criterion_group!` generates functions without documentation.
#![allow(missing_docs)]

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use neardup_core::bit_columns::{self, ColumnCounter, Path};
use neardup_core::features::{FeatureExtractor, FeatureKind, FeatureScratch};
use neardup_core::hash::{FeatureHasher, Xxh3};
use neardup_core::measure::{jaccard_at_least, FeatureSet};
use neardup_core::minhash::{MinHashOptions, MinHasher};
use neardup_core::normalize::{NormalizeOptions, Normalizer};
use neardup_core::simhash::{BitCounter, Bits, WeightedSums};
use neardup_core::tokenize::Tokenizer;
use neardup_core::xxh3_short;
use neardup_core::{Fingerprinter, Profile};

/// About 1 MB of English prose with some punctuation, digits and the odd non-ASCII character,
/// made deterministically (the benchmark must not depend on files outside the repo).
fn english_text() -> String {
    let words = [
        "the",
        "quick",
        "brown",
        "fox",
        "jumps",
        "over",
        "lazy",
        "dog",
        "memory",
        "safety",
        "without",
        "garbage",
        "collection",
        "release",
        "compiler",
        "library",
        "iterator",
        "trait",
        "generic",
        "lifetime",
        "borrow",
        "checker",
        "thread",
        "async",
        "future",
        "crate",
        "module",
        "function",
        "returns",
        "value",
        "error",
        "handling",
        "2024",
        "version",
        "1.80",
        "can't",
        "e.g.",
        "naïve",
        "café",
        "→",
    ];
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut text = String::with_capacity(1 << 20);
    while text.len() < 1 << 20 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        text.push_str(words[(state % words.len() as u64) as usize]);
        text.push_str(match state % 17 {
            0 => ". ",
            1 => ", ",
            2 => "\n",
            _ => " ",
        });
    }
    text
}

fn chinese_text() -> String {
    "美国“51区”雇员称内部有9架飞碟，曾看见灰色外星人。直击儿科急诊现状忙碌不止，儿科接诊进行时。"
        .repeat(2000)
}

fn tokenize(c: &mut Criterion) {
    let mut group = c.benchmark_group("tokenize");
    for (name, text) in [("english", english_text()), ("chinese", chinese_text())] {
        let normalized = Fingerprinter::new(Profile::web()).unwrap().normalize(&text);
        group.throughput(Throughput::Bytes(normalized.len() as u64));
        group.bench_with_input(BenchmarkId::new("words", name), &normalized, |b, text| {
            b.iter(|| {
                let mut count = 0usize;
                Tokenizer::Words.for_each_token(text, |t| count += t.len());
                black_box(count)
            })
        });
    }
    group.finish();
}

fn shingle_and_hash(c: &mut Criterion) {
    let text = Fingerprinter::new(Profile::web())
        .unwrap()
        .normalize(&english_text());
    let mut group = c.benchmark_group("shingle+hash");
    group.throughput(Throughput::Bytes(text.len() as u64));
    for kind in [
        FeatureKind::Tokens,
        FeatureKind::WordShingles { width: 3 },
        FeatureKind::CharShingles { width: 4 },
    ] {
        let extractor = FeatureExtractor {
            kind,
            tokenizer: Tokenizer::Words,
            stop_words: None,
            min_token_chars: 0,
        };
        let mut scratch = FeatureScratch::default();
        group.bench_function(format!("{kind:?}"), |b| {
            b.iter(|| {
                let mut acc = 0u64;
                extractor.for_each_feature(&text, &mut scratch, |f| acc ^= Xxh3.hash64(f));
                black_box(acc)
            })
        });
    }
    group.finish();
}

fn accumulate(c: &mut Criterion) {
    let hashes: Vec<u128> = (0..100_000u64)
        .map(|i| Xxh3.hash128(&i.to_le_bytes()))
        .collect();
    let mut group = c.benchmark_group("simhash-accumulate");
    group.throughput(Throughput::Elements(hashes.len() as u64));
    group.bench_function("bit-parallel-64", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<1>::default();
            hashes.iter().for_each(|&h| counter.add(h));
            black_box(counter.finish())
        })
    });
    group.bench_function("bit-parallel-128", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<2>::default();
            hashes.iter().for_each(|&h| counter.add(h));
            black_box(counter.finish())
        })
    });
    group.bench_function("weighted-64", |b| {
        b.iter(|| {
            let mut sums = WeightedSums::new(Bits::B64);
            hashes.iter().for_each(|&h| sums.add(h, 1.5));
            black_box(sums.finish())
        })
    });
    group.bench_function("weighted-128", |b| {
        b.iter(|| {
            let mut sums = WeightedSums::new(Bits::B128);
            hashes.iter().for_each(|&h| sums.add(h, 1.5));
            black_box(sums.finish())
        })
    });
    group.finish();
}

/// One document's counter, from empty to fingerprint: 500 hashes (a short web page's shingles)
/// added and the fingerprint taken. The weighted sums are the reference; the bit-sliced
/// counter (`add`, one at a time) and the SIMD column counter (written in place, as the
/// pipeline's sink does for 64-bit profiles) each pay `finish` once per document.
fn document_counts(c: &mut Criterion) {
    let hashes: Vec<u64> = (0..500u64).map(|i| Xxh3.hash64(&i.to_le_bytes())).collect();
    let mut group = c.benchmark_group("simhash-document");
    group.throughput(Throughput::Elements(hashes.len() as u64));
    group.bench_function("weighted sums (reference)", |b| {
        b.iter(|| {
            let mut sums = WeightedSums::new(Bits::B64);
            hashes.iter().for_each(|&h| sums.add(u128::from(h), 1.0));
            black_box(sums.finish())
        })
    });
    group.bench_function("BitCounter::add + finish", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<1>::default();
            hashes.iter().for_each(|&h| counter.add(u128::from(h)));
            black_box(counter.finish())
        })
    });
    group.bench_function("BitCounter::spare + commit + finish", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<1>::default();
            for chunk in hashes.chunks(64) {
                match counter.spare() {
                    Some(spare) if spare.len() >= chunk.len() => {
                        spare[..chunk.len()].copy_from_slice(chunk);
                        counter.commit(chunk.len());
                    }
                    _ => counter.add_many(chunk),
                }
            }
            black_box(counter.finish())
        })
    });
    group.finish();
}

/// XXH3-64 of every 5-byte window of ASCII text: the crate's function per window (the
/// reference), the closed form per window, and the closed form eight windows at a time (the
/// path this processor dispatches to).
fn xxh3_windows(c: &mut Criterion) {
    let text = english_text().replace(|c: char| !c.is_ascii(), " ");
    let bytes = text.as_bytes();
    let mut out = vec![0u64; bytes.len() - 4];
    let mut group = c.benchmark_group("xxh3-windows");
    group.throughput(Throughput::Elements(out.len() as u64));
    group.bench_function("xxhash-rust xxh3_64 (reference)", |b| {
        b.iter(|| {
            for (slot, window) in out.iter_mut().zip(bytes.windows(5)) {
                *slot = xxhash_rust::xxh3::xxh3_64(window);
            }
            black_box(out[0])
        })
    });
    group.bench_function("closed form, one at a time", |b| {
        b.iter(|| {
            xxh3_short::scalar_windows(bytes, 5, &mut out);
            black_box(out[0])
        })
    });
    group.bench_function("closed form, dispatched", |b| {
        b.iter(|| {
            xxh3_short::xxh3_64_windows(bytes, 5, &mut out);
            black_box(out[0])
        })
    });
    #[cfg(target_arch = "x86_64")]
    if xxh3_short::avx2::available() {
        group.bench_function("closed form, AVX2", |b| {
            b.iter(|| {
                // SAFETY: the feature was checked above.
                let done = unsafe { xxh3_short::avx2::windows(bytes, 5, &mut out) };
                xxh3_short::scalar_windows(&bytes[done..], 5, &mut out[done..]);
                black_box(out[0])
            })
        });
    }
    group.finish();
}

/// XXH3-64 of every character 5-shingle of Chinese text (15 bytes each, a shingle from each
/// character start): the crate's function per shingle (the reference) and the closed form for
/// 9 to 16 bytes that the pipeline inlines.
fn xxh3_chinese_shingles(c: &mut Criterion) {
    let text = chinese_text().replace(|c: char| c.len_utf8() != 3, "字");
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let shingles: Vec<&[u8]> = starts
        .windows(6)
        .map(|w| &text.as_bytes()[w[0]..w[5]])
        .collect();
    let mut out = vec![0u64; shingles.len()];
    let mut group = c.benchmark_group("xxh3-mid");
    group.throughput(Throughput::Elements(out.len() as u64));
    group.bench_function("xxhash-rust xxh3_64 (reference)", |b| {
        b.iter(|| {
            for (slot, shingle) in out.iter_mut().zip(&shingles) {
                *slot = xxhash_rust::xxh3::xxh3_64(black_box(shingle));
            }
            black_box(out[0])
        })
    });
    group.bench_function("closed form 9 to 16 bytes", |b| {
        b.iter(|| {
            for (slot, shingle) in out.iter_mut().zip(&shingles) {
                *slot = xxh3_short::xxh3_64_9to16(black_box(shingle));
            }
            black_box(out[0])
        })
    });
    group.finish();
}

/// Bit-column counts of 64-bit hashes: the carry-save [`BitCounter`] one hash at a time (the
/// portable scheme), one bit at a time (the reference), and every path of [`ColumnCounter`]
/// this processor runs, through `BitCounter::add_many` and alone.
fn bit_columns(c: &mut Criterion) {
    let hashes: Vec<u64> = (0..100_000u64)
        .map(|i| Xxh3.hash64(&i.to_le_bytes()))
        .collect();
    let mut group = c.benchmark_group("bit-columns");
    group.throughput(Throughput::Elements(hashes.len() as u64));
    group.bench_function("BitCounter::add (reference)", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<1>::default();
            hashes.iter().for_each(|&h| counter.add(u128::from(h)));
            black_box(counter.finish())
        })
    });
    group.bench_function("BitCounter::add_many", |b| {
        b.iter(|| {
            let mut counter = BitCounter::<1>::default();
            hashes.chunks(256).for_each(|chunk| counter.add_many(chunk));
            black_box(counter.finish())
        })
    });
    group.bench_function("one bit at a time", |b| {
        b.iter(|| {
            let mut counts = [0u64; 64];
            bit_columns::scalar_columns(&hashes, &mut counts);
            black_box(counts)
        })
    });
    for path in [Path::Avx512, Path::Avx2, Path::Portable] {
        if ColumnCounter::with_path(path).is_none() {
            continue;
        }
        group.bench_function(format!("ColumnCounter, {path:?}"), |b| {
            b.iter(|| {
                let mut counter = ColumnCounter::with_path(path).unwrap();
                hashes.chunks(256).for_each(|chunk| counter.add(chunk));
                black_box(counter.counts())
            })
        });
    }
    group.finish();
}

/// The feature loop of the default profile without its shingling: XXH3 of every 5-byte window
/// counted into SimHash bit columns, in runs of 170 bytes (prose between two non-ASCII
/// characters), through a batch copied into the counter (`add`: the reference) and written
/// in place into its block buffer (`spare` then `commit`: what fingerprinting does).
fn feature_loop(c: &mut Criterion) {
    let text = english_text().replace(|c: char| !c.is_ascii(), " ");
    let runs: Vec<&[u8]> = text.as_bytes().chunks(170).collect();
    let windows: usize = runs.iter().map(|run| run.len().saturating_sub(4)).sum();
    let mut group = c.benchmark_group("feature-loop");
    group.throughput(Throughput::Elements(windows as u64));
    group.bench_function("hash into a batch, ColumnCounter::add (reference)", |b| {
        b.iter(|| {
            let mut counter = ColumnCounter::new();
            let mut batch = [0u64; 256];
            for run in &runs {
                let out = &mut batch[..run.len().saturating_sub(4)];
                xxh3_short::xxh3_64_windows(run, 5, out);
                counter.add(out);
            }
            black_box(counter.counts())
        })
    });
    group.bench_function("hash in place, ColumnCounter::spare + commit", |b| {
        b.iter(|| {
            let mut counter = ColumnCounter::new();
            for run in &runs {
                let (mut first, windows) = (0, run.len().saturating_sub(4));
                while first < windows {
                    let spare = counter.spare();
                    let count = spare.len().min(windows - first);
                    xxh3_short::xxh3_64_windows(
                        &run[first..first + count + 4],
                        5,
                        &mut spare[..count],
                    );
                    counter.commit(count);
                    first += count;
                }
            }
            black_box(counter.counts())
        })
    });
    group.finish();
}

fn minhash(c: &mut Criterion) {
    let hashes: Vec<u64> = (0..10_000u64)
        .map(|i| Xxh3.hash64(&i.to_le_bytes()))
        .collect();
    let mut group = c.benchmark_group("minhash");
    group.throughput(Throughput::Elements(hashes.len() as u64));
    for num_perm in [64, 128, 256] {
        let hasher = MinHasher::new(MinHashOptions { num_perm, seed: 1 });
        group.bench_function(format!("num_perm={num_perm}"), |b| {
            b.iter(|| black_box(hasher.signature(hashes.iter().copied())))
        });
    }
    group.finish();
}

fn pipeline(c: &mut Criterion) {
    let english = english_text();
    let chinese = chinese_text();
    let mut group = c.benchmark_group("fingerprint");
    for (profile, language, text) in [
        ("web", "english", &english),
        ("python-simhash", "english", &english),
        ("web", "chinese", &chinese),
        ("zh", "chinese", &chinese),
        ("python-simhash", "chinese", &chinese),
    ] {
        let fingerprinter = Fingerprinter::new(Profile::builtin(profile).unwrap()).unwrap();
        fingerprinter.fingerprint("warm up 中文"); // load jieba outside the measurement
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{profile}/{language}"), |b| {
            b.iter(|| black_box(fingerprinter.fingerprint(text)))
        });
    }
    group.finish();
}

/// The cascade's verification: building shingle sets of 5,000 to 2,000,000 hashes (against a
/// plain sort), and exact Jaccard ≥ 0.9 of two 5,000-shingle sets, one pair that passes (J ≈
/// 0.95) and one that fails late (J ≈ 0.85: the early stop comes near the end).
fn verify(c: &mut Criterion) {
    let set = |skip_every: u64, offset: u64| {
        FeatureSet::new(
            (0..5_300u64)
                .filter(|i| i % skip_every != offset)
                .map(|i| Xxh3.hash64(&i.to_le_bytes()))
                .collect(),
        )
    };
    let mut group = c.benchmark_group("feature-set");
    // Distinct hashes, and (`-repeats`) passages of 3,000 hashes each said three times in a row,
    // as in the long documents of the dedup corpus (a third distinct; its sets of 2^14 hashes
    // or more are 28% distinct or less); 2,000,000 is split into parts first.
    let inputs = [5_000u64, 200_000, 2_000_000].into_iter().flat_map(|len| {
        let distinct: Vec<u64> = (0..len).map(|i| Xxh3.hash64(&i.to_le_bytes())).collect();
        let repeats: Vec<u64> = (0..len)
            .map(|i| Xxh3.hash64(&(i / 9_000 * 3_000 + i % 3_000).to_le_bytes()))
            .collect();
        [
            (format!("{len}"), distinct),
            (format!("{len}-repeats"), repeats),
        ]
    });
    for (name, hashes) in inputs {
        group.throughput(Throughput::Elements(hashes.len() as u64));
        group.bench_function(format!("from_hashes-{name}"), |bench| {
            bench.iter(|| black_box(FeatureSet::from_hashes(&hashes)))
        });
        group.bench_function(format!("sort_unstable-dedup-{name} (reference)"), |bench| {
            bench.iter(|| {
                let mut sorted = hashes.clone();
                sorted.sort_unstable();
                sorted.dedup();
                black_box(sorted)
            })
        });
    }
    group.finish();
    let mut group = c.benchmark_group("verify-jaccard");
    for (name, a, b) in [
        ("passes-0.95", set(40, 0), set(40, 1)),
        ("fails-0.85", set(12, 0), set(12, 1)),
    ] {
        group.throughput(Throughput::Elements((a.len() + b.len()) as u64));
        group.bench_function(name, |bench| {
            bench.iter(|| black_box(jaccard_at_least(&a, &b, 0.9)))
        });
    }
    group.finish();
}

/// The normaliser under the web profile's options: English prose whose non-ASCII words
/// (`naïve`, `café`, `→`) take the table pass, and the same text with every non-ASCII
/// character replaced (the ASCII pass alone), bytes of input per second.
fn normalize(c: &mut Criterion) {
    let mut group = c.benchmark_group("normalize");
    let mixed = english_text();
    let ascii: String = mixed
        .chars()
        .map(|c| if c.is_ascii() { c } else { 'x' })
        .collect();
    let normalizer = Normalizer::new(NormalizeOptions::web());
    for (name, text) in [("mixed", &mixed), ("ascii", &ascii)] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_with_input(BenchmarkId::new("web", name), text, |b, text| {
            let mut out = String::new();
            b.iter(|| {
                normalizer.normalize_into(black_box(text), &mut out);
                black_box(out.len())
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(3));
    targets = normalize, tokenize, shingle_and_hash, xxh3_windows, xxh3_chinese_shingles, accumulate, document_counts, bit_columns, feature_loop, minhash, pipeline, verify
}
criterion_main!(benches);
