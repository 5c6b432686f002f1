//! Feature weights: uniform, term frequency, TF-IDF with a fitted [`IdfModel`], and jieba's
//! bundled Chinese IDF table; plus top-K selection.

use std::collections::{BTreeSet, HashMap};
use std::io::{Read, Write};
use std::path::Path;
use std::sync::OnceLock;

use jieba_rs::{KeywordExtract, KeywordExtractConfig, TfIdf};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::stopwords::StopWords;
use crate::tokenize::jieba;

/// How each distinct feature is weighted in the SimHash sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Weighting {
    /// Every distinct feature weighs 1 (set semantics, as in Broder's shingling).
    Uniform,
    /// A feature weighs its number of occurrences (bag semantics, seed 000).
    Tf,
    /// Occurrences times inverse document frequency from an [`IdfModel`] fitted on a corpus.
    TfIdf,
    /// Keywords and TF-IDF weights as jieba's `extract_tags` computes them, with jieba's bundled
    /// IDF table (seed 002); features are the keywords themselves.
    JiebaTfIdf,
}

/// Document frequencies of features over a corpus, keyed by the feature's 64-bit hash under one
/// feature configuration (recorded as `spec`, so a model is never applied to other features).
///
/// IDF is smoothed: `ln((1 + N) / (1 + df)) + 1`, never zero or negative, and unseen features
/// get the largest value.
#[derive(Debug, Clone, PartialEq)]
pub struct IdfModel {
    spec: String,
    documents: u64,
    document_frequency: HashMap<u64, u32>,
}

const MAGIC: &[u8; 8] = b"NDIDF001";

impl IdfModel {
    /// An empty model for features described by `spec`.
    pub fn new(spec: impl Into<String>) -> Self {
        IdfModel {
            spec: spec.into(),
            documents: 0,
            document_frequency: HashMap::new(),
        }
    }

    /// Counts one document, given the hashes of its features (duplicates are ignored).
    pub fn add_document(&mut self, feature_hashes: impl IntoIterator<Item = u64>) {
        let distinct: BTreeSet<u64> = feature_hashes.into_iter().collect();
        for hash in distinct {
            let df = self.document_frequency.entry(hash).or_insert(0);
            *df = df.saturating_add(1);
        }
        self.documents += 1;
    }

    /// The feature specification the model was fitted under.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// Number of documents counted.
    pub fn documents(&self) -> u64 {
        self.documents
    }

    /// Number of distinct features seen.
    pub fn len(&self) -> usize {
        self.document_frequency.len()
    }

    /// Whether no feature has been seen.
    pub fn is_empty(&self) -> bool {
        self.document_frequency.is_empty()
    }

    /// The smoothed inverse document frequency of a feature.
    pub fn idf(&self, feature_hash: u64) -> f64 {
        let df = self
            .document_frequency
            .get(&feature_hash)
            .copied()
            .unwrap_or(0);
        ((1.0 + self.documents as f64) / (1.0 + f64::from(df))).ln() + 1.0
    }

    /// Writes the model in its binary format: magic, spec, document count, then the
    /// (hash, df) pairs sorted by hash, all little-endian.
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
        out.write_all(MAGIC)?;
        out.write_all(&(self.spec.len() as u64).to_le_bytes())?;
        out.write_all(self.spec.as_bytes())?;
        out.write_all(&self.documents.to_le_bytes())?;
        out.write_all(&(self.document_frequency.len() as u64).to_le_bytes())?;
        let mut entries: Vec<(u64, u32)> = self
            .document_frequency
            .iter()
            .map(|(&h, &d)| (h, d))
            .collect();
        entries.sort_unstable();
        for (hash, df) in entries {
            out.write_all(&hash.to_le_bytes())?;
            out.write_all(&df.to_le_bytes())?;
        }
        out.flush()?;
        Ok(())
    }

    /// Reads a model written by [`IdfModel::save`].
    pub fn load(path: &Path) -> Result<Self> {
        let mut input = std::io::BufReader::new(std::fs::File::open(path)?);
        let malformed =
            |what: &str| Error::MalformedIdfModel(format!("{}: {what}", path.display()));
        // A file that ends early is malformed; any other read error is the I/O error itself.
        let mut read = |buf: &mut [u8], what: &str| {
            input.read_exact(buf).map_err(|e| match e.kind() {
                std::io::ErrorKind::UnexpectedEof => malformed(what),
                _ => Error::Io(e),
            })
        };
        let mut magic = [0u8; 8];
        read(&mut magic, "too short")?;
        if &magic != MAGIC {
            return Err(malformed("not an IDF model (bad magic)"));
        }
        let mut word = [0u8; 8];
        read(&mut word, "truncated header")?;
        let spec_len = u64::from_le_bytes(word);
        if spec_len > 1 << 20 {
            return Err(malformed("implausible header"));
        }
        let mut spec = vec![0u8; spec_len as usize];
        read(&mut spec, "truncated header")?;
        let spec = String::from_utf8(spec).map_err(|_| malformed("header is not UTF-8"))?;
        read(&mut word, "truncated header")?;
        let documents = u64::from_le_bytes(word);
        read(&mut word, "truncated header")?;
        let entries = u64::from_le_bytes(word);
        let mut document_frequency = HashMap::new();
        let mut entry = [0u8; 12];
        for _ in 0..entries {
            read(&mut entry, "truncated entries")?;
            let (hash, df) = entry.split_at(8);
            document_frequency.insert(
                u64::from_le_bytes(hash.try_into().unwrap_or_default()),
                u32::from_le_bytes(df.try_into().unwrap_or_default()),
            );
        }
        Ok(IdfModel {
            spec,
            documents,
            document_frequency,
        })
    }
}

/// Keeps the `k` heaviest of `weighted` (ties broken by the smaller hash), in a deterministic
/// order: weight descending, then hash.
pub fn top_k(weighted: &mut Vec<(u128, f64)>, k: usize) {
    weighted.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    weighted.truncate(k);
}

/// Keywords of `text` with jieba's TF-IDF weights (`tf / total * idf`, unknown words at the
/// median IDF, words under two characters and stop words dropped), heaviest first, ties by
/// keyword. Deterministic, unlike iterating jieba's own hash map.
pub fn jieba_keywords(text: &str, stop_words: StopWords) -> Vec<(String, f64)> {
    let extractor = jieba_extractor(stop_words);
    // Every keyword has at least two characters, so this bounds their number.
    let bound = text.chars().count() / 2 + 1;
    let mut keywords: Vec<(String, f64)> = extractor
        .extract_keywords(jieba(), text, bound, Vec::new())
        .into_iter()
        .map(|k| (k.keyword, k.weight))
        .collect();
    keywords.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    keywords
}

/// jieba's extractor with its bundled IDF table and our stop words, built once per stop-word
/// choice (loading the table takes a fraction of a second).
fn jieba_extractor(stop_words: StopWords) -> &'static TfIdf {
    static EXTRACTORS: [OnceLock<TfIdf>; 4] = [const { OnceLock::new() }; 4];
    let slot = match stop_words {
        StopWords::None => 0,
        StopWords::English => 1,
        StopWords::Chinese => 2,
        StopWords::EnglishAndChinese => 3,
    };
    EXTRACTORS[slot].get_or_init(|| {
        let mut extractor = TfIdf::default();
        let words: BTreeSet<String> = stop_words
            .set()
            .map(|set| set.words().map(String::from).collect())
            .unwrap_or_default();
        if let Ok(config) = KeywordExtractConfig::builder()
            .set_stop_words(words)
            .build()
        {
            *extractor.config_mut() = config;
        }
        extractor
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idf_is_smoothed_and_model_round_trips() {
        let mut model = IdfModel::new("spec");
        model.add_document([1, 2, 2]);
        model.add_document([1, 3]);
        assert_eq!(model.documents(), 2);
        assert!((model.idf(1) - 1.0).abs() < 1e-12);
        assert!(model.idf(2) > model.idf(1));
        assert!(model.idf(99) > model.idf(2));
        let dir = std::env::temp_dir().join(format!("neardup-idf-{}", std::process::id()));
        model.save(&dir).unwrap();
        assert_eq!(IdfModel::load(&dir).unwrap(), model);
        std::fs::write(&dir, b"NDIDF001\x05").unwrap();
        assert!(matches!(
            IdfModel::load(&dir),
            Err(Error::MalformedIdfModel(_))
        ));
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn top_k_is_deterministic() {
        let mut weighted = vec![(5, 1.0), (3, 2.0), (4, 1.0), (1, 0.5)];
        top_k(&mut weighted, 3);
        assert_eq!(weighted, [(3, 2.0), (4, 1.0), (5, 1.0)]);
    }

    #[test]
    fn jieba_keywords_of_seed_002_style_text() {
        let text = "今天纽约的天气真好啊，京华大酒店的张尧经理吃了一只北京烤鸭。后天纽约的天气不好，昨天纽约的天气也不好，北京烤鸭真好吃";
        let keywords = jieba_keywords(text, StopWords::Chinese);
        let top: Vec<&str> = keywords.iter().take(3).map(|(k, _)| k.as_str()).collect();
        assert_eq!(top, ["北京烤鸭", "纽约", "天气"]);
        assert!(keywords.windows(2).all(|w| w[0].1 >= w[1].1));
    }
}
