//! Profiles: named, serialisable pipeline configurations.
//!
//! A profile fixes every choice between a text and its fingerprints. Indexes and stores record
//! the profile their fingerprints were made with, and refuse fingerprints made under another
//! one: mixing them would give silently meaningless distances.

use serde::{Deserialize, Serialize};

use crate::digest::DigestAlgorithm;
use crate::error::{Error, Result};
use crate::features::FeatureKind;
use crate::hash::HashAlgorithm;
use crate::minhash::MinHashOptions;
use crate::normalize::{
    NormalizeOptions, PunctuationPolicy, UnicodeForm, WhitespacePolicy, WordChars,
};
use crate::simhash::Bits;
use crate::stopwords::StopWords;
use crate::tokenize::Tokenizer;
use crate::weight::Weighting;

/// A complete fingerprinting configuration.
///
/// ```
/// use neardup_core::profile::Profile;
/// let web = Profile::builtin("web").unwrap();
/// assert_eq!(web, Profile::web());
/// let json = serde_json::to_string(&web).unwrap();
/// assert_eq!(serde_json::from_str::<Profile>(&json).unwrap(), web);
/// assert!(Profile::builtin("nope").is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// The profile's name (built-in names: `web`, `zh`, `zh-short`, `python-simhash`).
    pub name: String,
    /// Normalisation applied first; also the text the exact digest is taken of.
    pub normalize: NormalizeOptions,
    /// How tokens are found.
    pub tokenizer: Tokenizer,
    /// Which tokens are dropped as stop words.
    pub stop_words: StopWords,
    /// Tokens shorter than this many characters are dropped (0 keeps all).
    pub min_token_chars: usize,
    /// What the features are.
    pub features: FeatureKind,
    /// How features are weighted.
    pub weighting: Weighting,
    /// Keep only the K heaviest distinct features (seed 002 keeps 20 keywords).
    pub top_k: Option<usize>,
    /// Feature hash.
    pub hash: HashAlgorithm,
    /// Fingerprint width.
    pub bits: Bits,
    /// MinHash signature, if wanted.
    pub minhash: Option<MinHashOptions>,
    /// Exact-duplicate digest.
    pub digest: DigestAlgorithm,
}

/// Names of the built-in profiles.
pub const BUILTIN_PROFILES: [&str; 4] = ["web", "zh", "zh-short", "python-simhash"];

impl Profile {
    /// A built-in profile by name.
    pub fn builtin(name: &str) -> Result<Profile> {
        match name {
            "web" => Ok(Profile::web()),
            "zh" => Ok(Profile::zh()),
            "zh-short" => Ok(Profile::zh_short()),
            "python-simhash" => Ok(Profile::python_simhash()),
            _ => Err(Error::UnknownProfile {
                name: name.to_string(),
                known: BUILTIN_PROFILES.join(", "),
            }),
        }
    }

    /// The default: web pages and general text in any language. NFKC, lower case, white space
    /// collapsed; character 5-shingles of the normalised text weighted by frequency, XXH3,
    /// 64 bits, BLAKE3. (The tokenizer, UAX #29 words with jieba for Chinese, serves only token
    /// measures such as `compare`'s edit distance.)
    ///
    /// Chosen with `neardup eval` on the Webis CopyCat canonical pairs (multilingual, already
    /// lower-cased and stemmed web pages; BENCHMARKS.md, "Quality"): character 5-shingles beat
    /// word 1–5-shingles, at 64 and 128 bits, with or without stop words, both as SimHash
    /// features (best F1 0.89 alone vs 0.85 for word 3-shingles) and as the sets a cascade
    /// verifies (SimHash distance ≤ 8, then Jaccard ≥ 0.9: F1 0.93 vs 0.85); frequency and
    /// uniform weights are within noise, and frequency takes the fast streaming path.
    pub fn web() -> Profile {
        Profile {
            name: "web".into(),
            normalize: NormalizeOptions::web(),
            tokenizer: Tokenizer::Words,
            stop_words: StopWords::None,
            min_token_chars: 0,
            features: FeatureKind::CharShingles { width: 5 },
            weighting: Weighting::Tf,
            top_k: None,
            hash: HashAlgorithm::Xxh3,
            bits: Bits::B64,
            minhash: None,
            digest: DigestAlgorithm::Blake3,
        }
    }

    /// Chinese news: jieba words of at least two characters, stop words dropped, weighted by
    /// frequency (all of them: no keyword selection).
    ///
    /// Chosen with `neardup eval` on the Sohu 2021 short-text pairs (BENCHMARKS.md, "Quality"):
    /// seed 002's 20 jieba TF-IDF keywords flag 2 same-topic (label 3) pairs at k = 3 where
    /// plain word frequencies flag none, for the same recall of re-posted copies; no setting
    /// flags an unrelated (label 0) pair. (Seed 002's keywords remain available as a profile
    /// file with `"weighting": "jieba-tf-idf", "top_k": 20`.)
    pub fn zh() -> Profile {
        Profile {
            name: "zh".into(),
            tokenizer: Tokenizer::Words,
            stop_words: StopWords::EnglishAndChinese,
            min_token_chars: 2,
            features: FeatureKind::Tokens,
            weighting: Weighting::Tf,
            top_k: None,
            ..Profile::web()
        }
    }

    /// Short Chinese texts (headlines, leads, posts) and their copies: character bigrams of the
    /// text with all white space removed (NFKC, lower case, full-width folded), weighted by
    /// frequency. No word segmentation: a re-posted or re-headlined copy shares its characters
    /// but is segmented differently once a few characters change, and a headline of 20
    /// characters has too few words for a set measure to mean much.
    ///
    /// Chosen with `neardup eval` on the Sohu 2021 short-text pairs (BENCHMARKS.md, "Quality"):
    /// with containment ≥ 0.95 and a length ratio ≥ 0.2 (`neardup dedup --method overlap
    /// --threshold 0.95 --min-length-ratio 0.2`), character bigrams find 17 of 26 re-posted
    /// short pairs and 6 of 24 short-in-long ones and flag no unrelated and no same-topic pair;
    /// jieba words (`zh`) find more but flag 2 same-topic pairs at every threshold measured
    /// (segmentation drops the numbers and single characters a re-report changes). Its SimHash
    /// is no better than `zh`'s: use it with a set measure.
    pub fn zh_short() -> Profile {
        Profile {
            name: "zh-short".into(),
            normalize: NormalizeOptions {
                whitespace: WhitespacePolicy::Remove,
                ..NormalizeOptions::web()
            },
            tokenizer: Tokenizer::Chars,
            features: FeatureKind::CharShingles { width: 2 },
            ..Profile::web()
        }
    }

    /// Bit-for-bit `Simhash(text).value` of the PyPI package `simhash` 2.1.2 with default
    /// arguments: lower case, keep only Python `\w` characters, character 4-grams counted by
    /// occurrence, MD5 (low 64 bits), 64-bit fingerprint.
    pub fn python_simhash() -> Profile {
        Profile {
            name: "python-simhash".into(),
            normalize: NormalizeOptions {
                unicode: UnicodeForm::None,
                fold_fullwidth: false,
                lowercase: true,
                word_chars: WordChars::PythonRe,
                punctuation: PunctuationPolicy::Remove,
                whitespace: WhitespacePolicy::Remove,
            },
            tokenizer: Tokenizer::Chars,
            stop_words: StopWords::None,
            min_token_chars: 0,
            features: FeatureKind::CharShingles { width: 4 },
            weighting: Weighting::Tf,
            top_k: None,
            hash: HashAlgorithm::Md5,
            bits: Bits::B64,
            minhash: None,
            digest: DigestAlgorithm::Blake3,
        }
    }

    /// Checks that the options fit together.
    pub fn validate(&self) -> Result<()> {
        let invalid = |reason: &str| {
            Err(Error::InvalidProfile {
                profile: self.name.clone(),
                reason: reason.to_string(),
            })
        };
        let width = self.features.width();
        if width == 0 || width > crate::features::MAX_SHINGLE_WIDTH {
            return invalid("shingle width must be between 1 and 64");
        }
        if self.top_k == Some(0) {
            return invalid("top_k must be at least 1");
        }
        if let Some(minhash) = self.minhash {
            if minhash.num_perm == 0 || minhash.num_perm > 8192 {
                return invalid("minhash.num_perm must be between 1 and 8192");
            }
        }
        if self.weighting == Weighting::JiebaTfIdf
            && (self.features != FeatureKind::Tokens || self.tokenizer != Tokenizer::Words)
        {
            return invalid(
                "jieba-tf-idf weighting extracts keywords: it needs word tokens as features",
            );
        }
        Ok(())
    }

    /// What the features are, as a string: an IDF model records it, and refuses to weight
    /// features of another kind.
    pub fn feature_spec(&self) -> String {
        serde_json::json!({
            "normalize": self.normalize,
            "tokenizer": self.tokenizer,
            "stop_words": self.stop_words,
            "min_token_chars": self.min_token_chars,
            "features": self.features,
            "hash": self.hash,
        })
        .to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_are_valid() {
        for name in BUILTIN_PROFILES {
            let profile = Profile::builtin(name).unwrap();
            assert_eq!(profile.name, name);
            profile.validate().unwrap();
        }
    }

    #[test]
    fn invalid_combinations_are_rejected() {
        let mut profile = Profile::web();
        profile.features = FeatureKind::WordShingles { width: 0 };
        assert!(profile.validate().is_err());
        let mut profile = Profile::zh();
        profile.weighting = Weighting::JiebaTfIdf;
        profile.features = FeatureKind::CharShingles { width: 2 };
        assert!(profile.validate().is_err());
        let unknown = r#"{"name": "x", "bogus": 1}"#;
        assert!(serde_json::from_str::<Profile>(unknown).is_err());
    }
}
