//! The [`Fingerprinter`]: one profile's whole pipeline, text → [`Fingerprints`].

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;

use crate::digest::Digest;
use crate::error::{Error, Result};
use crate::feature_hashing::{BatchedMd5, Direct, HashSink, HashStrategy, Memoized};
use crate::features::{
    char_shingle_parts_within, char_shingle_width, FeatureExtractor, FeatureKind, FeatureScratch,
    ShinglePart,
};
use crate::hash::{FeatureHasher, Fnv1a64, Fnv1a64Utf16, HashAlgorithm, HashMemo, SipHash13, Xxh3};
use crate::measure::FeatureSet;
use crate::minhash::MinHasher;
use crate::normalize::Normalizer;
use crate::profile::Profile;
use crate::scratch::{with_work_space, Reused, WorkSpace};
use crate::simhash::{BitCounter, Bits, Simhash, WeightedSums};
use crate::weight::{jieba_keywords, top_k, IdfModel, Weighting};

/// What the pipeline makes of one document.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Fingerprints {
    /// The SimHash fingerprint.
    pub simhash: Simhash,
    /// The MinHash signature, when the profile asks for one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minhash: Option<Vec<u32>>,
    /// The digest of the normalised text, for exact duplicates.
    pub digest: Digest,
    /// How many features went into the fingerprint (occurrences, after top-K selection).
    pub features: u64,
}

/// A distinct feature with its text and final weight, for explaining a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WeightedFeature {
    /// The feature as text (a token, a shingle or a keyword).
    pub text: String,
    /// Its 64-bit hash (the low 64 bits for 128-bit profiles).
    pub hash: u64,
    /// Its weight in the SimHash sums.
    pub weight: f64,
}

/// Evaluates `$body` with `$strategy` bound to the profile's [`HashStrategy`], a `&mut` of a
/// concrete type, so that the body is compiled once per hash function. `$wide` says whether the
/// body asks for 128-bit hashes: the memo holds the values of one hasher at one width.
macro_rules! with_strategy {
    ($fingerprinter:expr, $memo:expr, $wide:expr, |$strategy:ident| $body:expr) => {{
        let owner = ($fingerprinter.profile.hash as u8) << 1 | u8::from($wide);
        let memo = $memo.owned_by(owner);
        match $fingerprinter.profile.hash {
            HashAlgorithm::Xxh3 => {
                let $strategy = &mut Direct(&Xxh3);
                $body
            }
            HashAlgorithm::Fnv1a64 => {
                let $strategy = &mut Direct(&Fnv1a64);
                $body
            }
            HashAlgorithm::Fnv1a64Utf16 => {
                let $strategy = &mut Direct(&Fnv1a64Utf16);
                $body
            }
            HashAlgorithm::Md5 => {
                let $strategy = &mut BatchedMd5::new(memo);
                $body
            }
            HashAlgorithm::Siphash13 => {
                let $strategy = &mut Memoized {
                    hasher: &SipHash13,
                    memo,
                };
                $body
            }
        }
    }};
}

/// A document's MinHash signature being built, with the profile's [`MinHasher`].
struct Signature<'a> {
    hasher: &'a MinHasher,
    values: &'a mut [u32],
}

impl Signature<'_> {
    /// Folds one feature hash (its low 64 bits) into the signature.
    #[inline(always)]
    fn one(&mut self, hash: u128) {
        self.hasher.update(self.values, hash as u64);
    }

    /// Folds 64-bit feature hashes into the signature.
    #[inline(always)]
    fn many64(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            self.hasher.update(self.values, hash);
        }
    }
}

/// The streaming path's sink: SimHash bit counts, and the MinHash signature when there is one
/// (asked once per slice of hashes, not once per hash).
struct Counting<'m, const WORDS: usize> {
    counter: BitCounter<WORDS>,
    minhash: Option<Signature<'m>>,
}

impl<const WORDS: usize> HashSink for Counting<'_, WORDS> {
    /// A 64-bit hash goes to the SIMD column counter when there is one, beside the windows'
    /// hashes, so that a document's counts sit in one place and [`BitCounter::finish`] skips
    /// the bit-sliced counters (the same counts either way).
    #[inline(always)]
    fn one(&mut self, hash: u128) {
        match self.counter.spare() {
            Some([slot, ..]) if WORDS == 1 => {
                *slot = hash as u64;
                self.counter.commit(1);
            }
            _ => self.counter.add(hash),
        }
        if let Some(minhash) = &mut self.minhash {
            minhash.one(hash);
        }
    }

    #[inline(always)]
    fn many64(&mut self, hashes: &[u64]) {
        self.counter.add_many(hashes);
        if let Some(minhash) = &mut self.minhash {
            minhash.many64(hashes);
        }
    }

    #[inline(always)]
    fn spare64(&mut self) -> Option<&mut [u64]> {
        self.counter.spare()
    }

    #[inline(always)]
    fn commit64(&mut self, n: usize) {
        if let (Some(minhash), Some(spare)) = (&mut self.minhash, self.counter.spare()) {
            minhash.many64(&spare[..n.min(spare.len())]);
        }
        self.counter.commit(n);
    }
}

/// Reusable per-thread buffers.
#[derive(Debug, Default)]
struct Scratch {
    normalized: String,
    features: FeatureScratch,
    hashes: Vec<u128>,
    memo: HashMemo,
}

impl WorkSpace for Scratch {
    fn keep_small(&mut self) {
        self.normalized.keep_small();
        self.features.keep_small();
        self.hashes.keep_small();
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

/// Turns texts into fingerprints under one [`Profile`]. Cheap to share across threads (`&self`
/// everywhere; scratch buffers are per thread).
///
/// ```
/// use neardup_core::{features::FeatureKind, Fingerprinter, Profile};
/// let mut profile = Profile::web();
/// profile.features = FeatureKind::WordShingles { width: 3 };
/// let fingerprinter = Fingerprinter::new(profile).unwrap();
/// let a = fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog, again and again.");
/// let b = fingerprinter.fingerprint("The quick brown fox jumps over the lazy dog, again and again!");
/// assert_eq!(a.simhash, b.simhash, "the features (word shingles) are the same");
/// assert_ne!(a.digest, b.digest, "but the normalised texts differ: not an exact duplicate");
/// ```
pub struct Fingerprinter {
    profile: Profile,
    normalizer: Normalizer,
    extractor: FeatureExtractor,
    hasher: &'static dyn FeatureHasher,
    minhasher: Option<MinHasher>,
    idf: Option<Arc<IdfModel>>,
}

impl std::fmt::Debug for Fingerprinter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fingerprinter")
            .field("profile", &self.profile.name)
            .finish()
    }
}

impl Fingerprinter {
    /// Builds the pipeline of `profile`. Fails on an invalid profile, or on a TF-IDF profile
    /// (use [`Fingerprinter::with_idf_model`] for that).
    pub fn new(profile: Profile) -> Result<Self> {
        profile.validate()?;
        if profile.weighting == Weighting::TfIdf {
            return Err(Error::MissingIdfModel {
                profile: profile.name.clone(),
            });
        }
        Ok(Self::build(profile, None))
    }

    /// Builds a TF-IDF pipeline with a fitted model; the model must have been fitted under the
    /// same features.
    pub fn with_idf_model(profile: Profile, model: Arc<IdfModel>) -> Result<Self> {
        profile.validate()?;
        if model.spec() != profile.feature_spec() {
            return Err(Error::IdfModelMismatch {
                model: model.spec().to_string(),
                profile: profile.feature_spec(),
            });
        }
        Ok(Self::build(profile, Some(model)))
    }

    fn build(profile: Profile, idf: Option<Arc<IdfModel>>) -> Self {
        Fingerprinter {
            normalizer: Normalizer::new(profile.normalize),
            extractor: FeatureExtractor {
                kind: profile.features,
                tokenizer: profile.tokenizer,
                stop_words: profile.stop_words.set(),
                min_token_chars: profile.min_token_chars,
            },
            hasher: profile.hash.hasher(),
            minhasher: profile.minhash.map(MinHasher::new),
            idf,
            profile,
        }
    }

    /// The profile this pipeline runs.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// Fits an IDF model for `profile`'s features on a corpus.
    pub fn fit_idf<'a>(
        profile: &Profile,
        texts: impl IntoIterator<Item = &'a str>,
    ) -> Result<IdfModel> {
        let mut plain = profile.clone();
        plain.weighting = Weighting::Tf;
        plain.top_k = None;
        let fingerprinter = Fingerprinter::new(plain)?;
        let mut model = IdfModel::new(profile.feature_spec());
        for text in texts {
            model.add_document(fingerprinter.feature_set(text).as_slice().iter().copied());
        }
        Ok(model)
    }

    /// The fingerprints of `text`.
    pub fn fingerprint(&self, text: &str) -> Fingerprints {
        with_work_space(&SCRATCH, |scratch| self.fingerprint_with(text, scratch))
    }

    fn fingerprint_with(&self, text: &str, scratch: &mut Scratch) -> Fingerprints {
        let Scratch {
            normalized,
            features,
            hashes,
            memo,
            ..
        } = scratch;
        self.normalize_marking(text, normalized, features);
        let digest = Digest::of(self.profile.digest, normalized.as_bytes());
        let mut minhash = self.minhasher.as_ref().map(MinHasher::empty_signature);
        let mut signature = self
            .minhasher
            .as_ref()
            .zip(minhash.as_deref_mut())
            .map(|(hasher, values)| Signature { hasher, values });
        let (bits, count) =
            if self.profile.weighting == Weighting::Tf && self.profile.top_k.is_none() {
                // The hot path: every occurrence adds 1, no collection, no sorting.
                self.streaming_tf(normalized, features, memo, signature)
            } else {
                let weighted = self.weighted_hashes(normalized, features, hashes);
                let mut sums = WeightedSums::new(self.profile.bits);
                let mut count = 0u64;
                for &(hash, weight) in &weighted {
                    if let Some(signature) = &mut signature {
                        signature.one(hash);
                    }
                    sums.add(hash, weight);
                    count += 1;
                }
                (sums.finish(), count)
            };
        let simhash = match self.profile.bits {
            Bits::B64 => Simhash::B64(bits as u64),
            Bits::B128 => Simhash::B128(bits),
        };
        Fingerprints {
            simhash,
            minhash,
            digest,
            features: count,
        }
    }

    /// TF weighting as a stream: dispatches once on the hash algorithm and width, so that the
    /// per-feature loop is compiled for one concrete hash function (inlined, no virtual call
    /// per feature). MD5 and SipHash go through the per-thread [`HashMemo`]; MD5's misses are
    /// hashed sixteen at a time.
    fn streaming_tf(
        &self,
        normalized: &str,
        features: &mut FeatureScratch,
        memo: &mut HashMemo,
        minhash: Option<Signature<'_>>,
    ) -> (u128, u64) {
        with_strategy!(self, memo, self.profile.bits == Bits::B128, |strategy| {
            match self.profile.bits {
                Bits::B64 => self.accumulate::<1>(normalized, features, minhash, strategy),
                Bits::B128 => self.accumulate::<2>(normalized, features, minhash, strategy),
            }
        })
    }

    fn accumulate<const WORDS: usize>(
        &self,
        normalized: &str,
        features: &mut FeatureScratch,
        minhash: Option<Signature<'_>>,
        strategy: &mut impl HashStrategy<WORDS>,
    ) -> (u128, u64) {
        let mut sink = Counting {
            counter: BitCounter::<WORDS>::default(),
            minhash,
        };
        self.hash_features(normalized, features, strategy, &mut sink);
        let total = sink.counter.total();
        (sink.counter.finish(), total)
    }

    /// Normalises `text` into `normalized`, the ranges that may hold non-ASCII characters
    /// marked in `features` for [`Fingerprinter::hash_features`].
    fn normalize_marking(
        &self,
        text: &str,
        normalized: &mut String,
        features: &mut FeatureScratch,
    ) {
        let marked = &mut features.non_ascii;
        marked.clear();
        self.normalizer
            .normalize_marking(text, normalized, |range| marked.push(range));
    }

    /// Hands the hash of every feature of `normalized` (as [`Fingerprinter::normalize_marking`]
    /// left it and its marks) to `sink`. Character shingles go by
    /// [`ShinglePart`]s, so that the windows of pure-ASCII runs and of stretches with other
    /// characters are hashed and counted a batch at a time (through `for_each_feature` they
    /// stay a call per feature).
    #[inline(always)]
    fn hash_features<const WORDS: usize>(
        &self,
        normalized: &str,
        features: &mut FeatureScratch,
        strategy: &mut impl HashStrategy<WORDS>,
        sink: &mut impl HashSink,
    ) {
        if let FeatureKind::CharShingles { width } = self.extractor.kind {
            let width = char_shingle_width(width);
            let marked = Some(features.non_ascii.as_slice());
            char_shingle_parts_within(normalized, marked, width, |part| match part {
                ShinglePart::Windows(run) => strategy.hash_windows(run, width, sink),
                ShinglePart::CharWindows(run) => strategy.hash_char_windows(run, width, sink),
                ShinglePart::One(shingle) => strategy.hash(shingle, &mut |hash| sink.one(hash)),
            });
        } else {
            self.extractor
                .for_each_feature(normalized, features, |feature| {
                    strategy.hash(feature, &mut |hash| sink.one(hash))
                });
        }
        strategy.flush(&mut |hash| sink.one(hash));
    }

    #[inline]
    fn hash(&self, feature: &[u8]) -> u128 {
        match self.profile.bits {
            Bits::B64 => u128::from(self.hasher.hash64(feature)),
            Bits::B128 => self.hasher.hash128(feature),
        }
    }

    /// Distinct feature hashes with their final weights, top-K applied, in a deterministic order.
    fn weighted_hashes(
        &self,
        normalized: &str,
        features: &mut FeatureScratch,
        hashes: &mut Vec<u128>,
    ) -> Vec<(u128, f64)> {
        let mut weighted: Vec<(u128, f64)> = if self.profile.weighting == Weighting::JiebaTfIdf {
            jieba_keywords(normalized, self.profile.stop_words)
                .into_iter()
                .map(|(keyword, weight)| (self.hash(keyword.as_bytes()), weight))
                .collect()
        } else {
            hashes.clear();
            self.extractor
                .for_each_feature(normalized, features, |feature| {
                    hashes.push(self.hash(feature))
                });
            hashes.sort_unstable();
            let mut grouped = Vec::new();
            for run in hashes.chunk_by(|a, b| a == b) {
                let hash = run[0];
                let occurrences = run.len() as f64;
                let weight = match self.profile.weighting {
                    Weighting::Uniform => 1.0,
                    Weighting::Tf => occurrences,
                    Weighting::TfIdf => {
                        occurrences * self.idf.as_ref().map_or(1.0, |m| m.idf(hash as u64))
                    }
                    Weighting::JiebaTfIdf => unreachable!("handled above"),
                };
                grouped.push((hash, weight));
            }
            grouped
        };
        if let Some(k) = self.profile.top_k {
            top_k(&mut weighted, k);
        }
        weighted
    }

    /// The normalised text, as fingerprinting sees it.
    pub fn normalize(&self, text: &str) -> String {
        let mut out = String::new();
        self.normalizer.normalize_into(text, &mut out);
        out
    }

    /// The set of 64-bit feature hashes of `text` (before weighting and top-K): what Jaccard
    /// resemblance and containment are measured on.
    pub fn feature_set(&self, text: &str) -> FeatureSet {
        with_work_space(&SCRATCH, |scratch| self.feature_set_with(text, scratch))
    }

    fn feature_set_with(&self, text: &str, scratch: &mut Scratch) -> FeatureSet {
        let Scratch {
            normalized,
            features,
            memo,
            ..
        } = scratch;
        self.normalize_marking(text, normalized, features);
        // At most one feature a byte of the normalised text.
        FeatureSet::from_hashing(normalized.len(), |sink| {
            if self.profile.weighting == Weighting::JiebaTfIdf {
                for (keyword, _) in jieba_keywords(normalized, self.profile.stop_words) {
                    sink.one(u128::from(self.hasher.hash64(keyword.as_bytes())));
                }
            } else {
                // Always 64-bit hashes (the low half for 128-bit profiles), in any order.
                with_strategy!(self, memo, false, |strategy| {
                    self.hash_features::<1>(normalized, features, strategy, sink)
                });
            }
        })
    }

    /// The 64-bit hashes of the tokens of `text`, in order: what token edit distance compares.
    pub fn token_hashes(&self, text: &str) -> Vec<u64> {
        let normalized = self.normalize(text);
        let mut tokens = Vec::new();
        self.profile.tokenizer.for_each_token(&normalized, |t| {
            tokens.push(self.hasher.hash64(t.as_bytes()))
        });
        tokens
    }

    /// The distinct features of `text` with their text and final weights, heaviest first (ties
    /// by text): what `neardup compare` explains a verdict with. Slower than
    /// [`Fingerprinter::fingerprint`]; meant for one document at a time.
    pub fn weighted_features(&self, text: &str) -> Vec<WeightedFeature> {
        let normalized = self.normalize(text);
        let mut texts: HashMap<u128, String> = HashMap::new();
        if self.profile.weighting != Weighting::JiebaTfIdf {
            self.extractor.for_each_feature(
                &normalized,
                &mut FeatureScratch::default(),
                |feature| {
                    texts
                        .entry(self.hash(feature))
                        .or_insert_with(|| String::from_utf8_lossy(feature).into_owned());
                },
            );
        } else {
            for (keyword, _) in jieba_keywords(&normalized, self.profile.stop_words) {
                texts.insert(self.hash(keyword.as_bytes()), keyword);
            }
        }
        let weighted =
            self.weighted_hashes(&normalized, &mut FeatureScratch::default(), &mut Vec::new());
        let mut out: Vec<WeightedFeature> = weighted
            .into_iter()
            .map(|(hash, weight)| WeightedFeature {
                text: texts.remove(&hash).unwrap_or_default(),
                hash: hash as u64,
                weight,
            })
            .collect();
        out.sort_by(|a, b| {
            b.weight
                .total_cmp(&a.weight)
                .then_with(|| a.text.cmp(&b.text))
        });
        out
    }
}
