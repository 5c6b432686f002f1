//! Stop-word lists: English (NLTK's list, from the `stop-words` crate) and Chinese (bundled).

use std::collections::HashSet;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Which stop words a profile drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopWords {
    /// Keep every token (shingling usually wants this: stop words carry word order).
    None,
    /// NLTK's English list.
    English,
    /// The bundled Chinese list.
    Chinese,
    /// Both lists.
    EnglishAndChinese,
}

/// The Chinese stop words shipped with the crate, one per line.
const CHINESE: &str = include_str!("../data/stopwords-zh.txt");

/// A set of stop words, looked up by the (normalised, lower-cased) token.
#[derive(Debug)]
pub struct StopWordSet {
    words: HashSet<Box<str>>,
}

impl StopWordSet {
    /// Whether `token` is a stop word.
    #[inline]
    pub fn contains(&self, token: &str) -> bool {
        // Stop words are short; skip the hash for long tokens.
        token.len() <= 24 && self.words.contains(token)
    }

    /// The words, in no particular order.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.words.iter().map(|w| &**w)
    }

    /// Number of words in the set.
    pub fn len(&self) -> usize {
        self.words.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }
}

impl StopWords {
    /// The shared set for this choice, built once; `None` for [`StopWords::None`].
    pub fn set(self) -> Option<&'static StopWordSet> {
        static ENGLISH: OnceLock<StopWordSet> = OnceLock::new();
        static CHINESE_SET: OnceLock<StopWordSet> = OnceLock::new();
        static BOTH: OnceLock<StopWordSet> = OnceLock::new();
        let english = || stop_words::get(stop_words::LANGUAGE::English);
        let chinese = || {
            CHINESE
                .lines()
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(String::from)
        };
        let build = |words: Vec<String>| StopWordSet {
            words: words.into_iter().map(String::into_boxed_str).collect(),
        };
        match self {
            StopWords::None => None,
            StopWords::English => Some(ENGLISH.get_or_init(|| build(english()))),
            StopWords::Chinese => Some(CHINESE_SET.get_or_init(|| build(chinese().collect()))),
            StopWords::EnglishAndChinese => {
                Some(BOTH.get_or_init(|| build(english().into_iter().chain(chinese()).collect())))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_contain_the_usual_words() {
        let en = StopWords::English.set().unwrap();
        assert!(en.contains("the") && en.contains("and") && !en.contains("fox"));
        let zh = StopWords::Chinese.set().unwrap();
        assert!(zh.contains("的") && zh.contains("了") && !zh.contains("飞碟"));
        let both = StopWords::EnglishAndChinese.set().unwrap();
        assert_eq!(both.len(), en.len() + zh.len());
        assert!(StopWords::None.set().is_none());
    }
}
