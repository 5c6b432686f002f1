//! The fast paths of fingerprinting (character shingles by ASCII runs, XXH3 of 4- to 8-byte
//! windows in closed form and eight at a time, SIMD bit counting) against a reference pipeline
//! written the plain way: shingles from `char_indices`, the `xxhash-rust` functions, weighted
//! sums and MinHash one hash at a time. On this machine the tests exercise whichever SIMD path
//! the processor has; the kernels' own tests compare every path with the portable one.

use neardup_core::features::{FeatureExtractor, FeatureKind, FeatureScratch};
use neardup_core::hash::HashAlgorithm;
use neardup_core::measure::FeatureSet;
use neardup_core::minhash::{MinHashOptions, MinHasher};
use neardup_core::simhash::{BitCounter, WeightedSums};
use neardup_core::tokenize::Tokenizer;
use neardup_core::{Bits, Fingerprinter, Profile, Simhash};
use proptest::prelude::*;

/// Character `width`-grams of `text` from its character starts; the whole text when it has at
/// most `width` characters.
fn reference_shingles(text: &str, width: usize) -> Vec<&[u8]> {
    let bytes = text.as_bytes();
    let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    if starts.len() <= width {
        return vec![bytes];
    }
    (0..=starts.len() - width)
        .map(|j| &bytes[starts[j]..starts.get(j + width).copied().unwrap_or(bytes.len())])
        .collect()
}

/// The hash of a feature as the profile defines it, without the crate's fast paths for XXH3.
fn reference_hash(profile: &Profile, feature: &[u8]) -> u128 {
    match (profile.hash, profile.bits) {
        (HashAlgorithm::Xxh3, Bits::B64) => u128::from(xxhash_rust::xxh3::xxh3_64(feature)),
        (HashAlgorithm::Xxh3, Bits::B128) => xxhash_rust::xxh3::xxh3_128(feature),
        (other, Bits::B64) => u128::from(other.hasher().hash64(feature)),
        (other, Bits::B128) => other.hasher().hash128(feature),
    }
}

/// ASCII words and spaces with non-ASCII characters of every UTF-8 length between them.
fn mixed_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        6 => "[a-z ]{0,40}",
        2 => "[A-Z.,;\\n\\t]{0,3}",
        1 => "[é§·’©→美国😀\\u{301}ＡＢ]{1,3}",
        1 => "[美国人中文字日本語한국어，。ｶﾞ😀 ]{2,14}",
        1 => any::<char>().prop_map(String::from),
    ];
    proptest::collection::vec(piece, 0..16).prop_map(|pieces| pieces.concat())
}

fn profile(width: usize, hash: HashAlgorithm, bits: Bits, minhash: bool) -> Profile {
    let mut profile = Profile::web();
    profile.name = "fast-path-check".into();
    profile.features = FeatureKind::CharShingles { width };
    profile.hash = hash;
    profile.bits = bits;
    profile.minhash = minhash.then(MinHashOptions::default);
    profile
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Character shingles, found by ASCII runs and single shingles around other characters,
    /// are the reference's at every width.
    #[test]
    fn char_shingles_equal_the_reference(
        text in prop_oneof![3 => mixed_text(), 1 => any::<String>()],
        width in prop_oneof![3 => 1..=10usize, 1 => 11..=64usize],
    ) {
        let extractor = FeatureExtractor {
            kind: FeatureKind::CharShingles { width },
            tokenizer: Tokenizer::Words,
            stop_words: None,
            min_token_chars: 0,
        };
        let mut shingles = Vec::new();
        extractor.for_each_feature(&text, &mut FeatureScratch::default(), |f| {
            shingles.push(f.to_vec())
        });
        prop_assert_eq!(shingles, reference_shingles(&text, width));
    }

    /// Every character shingle width and hash function, at 64 and 128 bits, with MinHash:
    /// fingerprint, feature count, MinHash signature and feature set equal the reference's.
    #[test]
    fn fingerprints_equal_the_reference_pipeline(
        text in prop_oneof![3 => mixed_text(), 1 => any::<String>()],
        width in prop_oneof![3 => 1..=10usize, 1 => 11..=64usize],
        hash in prop_oneof![
            4 => Just(HashAlgorithm::Xxh3),
            1 => Just(HashAlgorithm::Fnv1a64),
            1 => Just(HashAlgorithm::Siphash13),
            1 => Just(HashAlgorithm::Md5),
        ],
        wide in any::<bool>(),
        minhash in any::<bool>(),
    ) {
        let bits = if wide { Bits::B128 } else { Bits::B64 };
        let profile = profile(width, hash, bits, minhash);
        let fingerprinter = Fingerprinter::new(profile.clone()).unwrap();
        let normalized = fingerprinter.normalize(&text);
        let hashes: Vec<u128> = reference_shingles(&normalized, width)
            .into_iter()
            .map(|feature| reference_hash(&profile, feature))
            .collect();
        let mut sums = WeightedSums::new(bits);
        hashes.iter().for_each(|&hash| sums.add(hash, 1.0));
        let expected = match bits {
            Bits::B64 => Simhash::B64(sums.finish() as u64),
            Bits::B128 => Simhash::B128(sums.finish()),
        };
        let got = fingerprinter.fingerprint(&text);
        prop_assert_eq!(got.simhash, expected);
        prop_assert_eq!(got.features, hashes.len() as u64);
        let signature = profile
            .minhash
            .map(|options| MinHasher::new(options).signature(hashes.iter().map(|&h| h as u64)));
        prop_assert_eq!(got.minhash, signature);
        // Feature sets always hold the 64-bit hashes (XXH3-64, not XXH3-128's low half).
        let narrow = Profile { bits: Bits::B64, ..profile.clone() };
        let set: Vec<u64> = reference_shingles(&normalized, width)
            .into_iter()
            .map(|feature| reference_hash(&narrow, feature) as u64)
            .collect();
        prop_assert_eq!(fingerprinter.feature_set(&text), FeatureSet::from_hashes(&set));
    }

    /// Adding 64-bit hashes as a slice counts exactly what adding them one by one counts,
    /// across byte-counter flushes and mixed with single additions.
    #[test]
    fn bit_counter_slices_equal_single_additions(
        before in prop::collection::vec(any::<u128>(), 0..40),
        hashes in prop::collection::vec(any::<u64>(), 0..700),
        ones in any::<u64>(),
        repeat in 1usize..4,
    ) {
        let mut single = BitCounter::<1>::default();
        let mut sliced = BitCounter::<1>::default();
        let mut wide_single = BitCounter::<2>::default();
        let mut wide_sliced = BitCounter::<2>::default();
        for &hash in &before {
            single.add(hash);
            sliced.add(hash);
            wide_single.add(hash);
            wide_sliced.add(hash);
        }
        // Columns biased towards one, so that counts sit near a half.
        let hashes: Vec<u64> = hashes.iter().map(|h| h | (ones & h.rotate_left(7))).collect();
        for _ in 0..repeat {
            hashes.iter().for_each(|&h| single.add(u128::from(h)));
            hashes.iter().for_each(|&h| wide_single.add(u128::from(h)));
            sliced.add_many(&hashes);
            wide_sliced.add_many(&hashes);
        }
        prop_assert_eq!(sliced.total(), single.total());
        prop_assert_eq!(wide_sliced.total(), wide_single.total());
        prop_assert_eq!(sliced.finish(), single.finish());
        prop_assert_eq!(wide_sliced.finish(), wide_single.finish());
    }

    /// `finish` gives the weighted sums' answer whichever parts of the counter the hashes went
    /// to: the column counter only (written in place), the bit-sliced counters only, or both
    /// interleaved, as the pipeline's sink sends them.
    #[test]
    fn bit_counter_finish_reads_every_part(
        hashes in prop::collection::vec((any::<u64>(), 0u8..3), 0..900),
        ones in any::<u64>(),
    ) {
        let mut counter = BitCounter::<1>::default();
        let mut wide = BitCounter::<2>::default();
        let mut sums = WeightedSums::new(Bits::B64);
        for &(hash, part) in &hashes {
            let hash = hash | (ones & hash.rotate_left(11));
            sums.add(u128::from(hash), 1.0);
            match (part, counter.spare(), wide.spare()) {
                (0, Some(narrow_spare), Some(wide_spare)) => {
                    narrow_spare[0] = hash;
                    wide_spare[0] = hash;
                    counter.commit(1);
                    wide.commit(1);
                }
                (1, _, _) => {
                    counter.add_many(&[hash]);
                    wide.add_many(&[hash]);
                }
                _ => {
                    counter.add(u128::from(hash));
                    wide.add(u128::from(hash));
                }
            }
        }
        prop_assert_eq!(counter.total(), hashes.len() as u64);
        prop_assert_eq!(counter.finish(), sums.finish());
        prop_assert_eq!(wide.finish(), sums.finish());
    }
}

proptest! {
    // Long texts: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A long text of repeated passages (past the length from which the feature set's hashes
    /// are rid of most repeats as they are made): the feature set is still the reference's,
    /// with every hash function and width, the second document on the same thread too.
    #[test]
    fn long_repeated_texts_have_the_reference_feature_set(
        passage in mixed_text(),
        extra in mixed_text(),
        length in (1usize << 14)..(1usize << 17),
        width in 1..=10usize,
        hash in prop_oneof![
            3 => Just(HashAlgorithm::Xxh3),
            1 => Just(HashAlgorithm::Fnv1a64),
            1 => Just(HashAlgorithm::Md5),
        ],
    ) {
        let passage = format!("{passage} ");
        let mut text = passage.repeat(length / passage.len() + 1);
        text.push_str(&extra);
        let profile = profile(width, hash, Bits::B64, false);
        let fingerprinter = Fingerprinter::new(profile.clone()).unwrap();
        for text in [text.as_str(), extra.as_str(), text.as_str()] {
            let normalized = fingerprinter.normalize(text);
            let set: Vec<u64> = reference_shingles(&normalized, width)
                .into_iter()
                .map(|feature| reference_hash(&profile, feature) as u64)
                .collect();
            prop_assert_eq!(fingerprinter.feature_set(text), FeatureSet::from_hashes(&set));
        }
    }
}
