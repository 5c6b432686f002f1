//! Features: what a document is made of, for fingerprinting.
//!
//! A feature is handed to the caller as a byte slice (a token, a run of characters, or tokens
//! joined by one space in a reused buffer), so the hot path hashes it at once and never
//! allocates a `String` per feature.

use serde::{Deserialize, Serialize};

use crate::stopwords::StopWordSet;
use crate::tokenize::Tokenizer;

/// Which features a profile extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "kind")]
pub enum FeatureKind {
    /// Each token on its own (bag of words).
    Tokens,
    /// Every run of `width` consecutive tokens, joined by one space (Broder's w-shingles).
    /// A document with fewer tokens (but at least one) gives one shingle of all of them.
    WordShingles {
        /// Tokens per shingle.
        width: usize,
    },
    /// Every run of `width` consecutive characters of the normalised text. A text shorter than
    /// `width`, even the empty text, gives itself as the one feature (as the PyPI `simhash`
    /// package does).
    CharShingles {
        /// Characters per shingle.
        width: usize,
    },
}

impl FeatureKind {
    /// The shingle width (1 for single tokens).
    pub fn width(self) -> usize {
        match self {
            FeatureKind::Tokens => 1,
            FeatureKind::WordShingles { width } | FeatureKind::CharShingles { width } => width,
        }
    }
}

/// Everything needed to turn normalised text into features.
#[derive(Debug, Clone, Copy)]
pub struct FeatureExtractor {
    /// What the features are.
    pub kind: FeatureKind,
    /// How tokens are found (unused for character shingles).
    pub tokenizer: Tokenizer,
    /// Tokens to drop before shingling.
    pub stop_words: Option<&'static StopWordSet>,
    /// Tokens with fewer characters than this are dropped (0 or 1 keeps all).
    pub min_token_chars: usize,
}

/// Reusable buffers for feature extraction, so that no allocation happens per document once
/// they have grown.
#[derive(Debug, Default)]
pub struct FeatureScratch {
    /// Byte ranges of the current document's kept tokens.
    token_ranges: Vec<(usize, usize)>,
    /// The shingle being assembled.
    shingle: Vec<u8>,
}

impl FeatureExtractor {
    /// Calls `emit` with the bytes of each feature of `text` (already normalised), in document
    /// order, duplicates included.
    ///
    /// ```
    /// use neardup_core::features::{FeatureExtractor, FeatureKind, FeatureScratch};
    /// use neardup_core::tokenize::Tokenizer;
    /// let extractor = FeatureExtractor {
    ///     kind: FeatureKind::WordShingles { width: 4 },
    ///     tokenizer: Tokenizer::Words,
    ///     stop_words: None,
    ///     min_token_chars: 0,
    /// };
    /// let mut shingles = Vec::new();
    /// extractor.for_each_feature("a rose is a rose is a rose", &mut FeatureScratch::default(), |f| {
    ///     shingles.push(String::from_utf8(f.to_vec()).unwrap())
    /// });
    /// assert_eq!(shingles, ["a rose is a", "rose is a rose", "is a rose is", "a rose is a", "rose is a rose"]);
    /// ```
    pub fn for_each_feature(
        &self,
        text: &str,
        scratch: &mut FeatureScratch,
        mut emit: impl FnMut(&[u8]),
    ) {
        match self.kind {
            FeatureKind::CharShingles { width } => char_shingles(text, width.max(1), &mut emit),
            FeatureKind::Tokens => {
                self.for_each_token(text, |token| emit(token.as_bytes()));
            }
            FeatureKind::WordShingles { width } => {
                let width = width.max(1);
                let ranges = &mut scratch.token_ranges;
                ranges.clear();
                let base = text.as_ptr() as usize;
                self.for_each_token(text, |token| {
                    let start = token.as_ptr() as usize - base;
                    ranges.push((start, start + token.len()));
                });
                let shingles = ranges.len().saturating_sub(width) + 1;
                let width = width.min(ranges.len());
                if width == 0 {
                    return;
                }
                let bytes = text.as_bytes();
                for window in ranges.windows(width).take(shingles) {
                    let (first, last) = (window[0].0, window[width - 1].1);
                    // When the tokens stand in the text separated by single spaces (the usual
                    // case after white-space collapsing), the shingle is a slice of the text.
                    let joined_len: usize =
                        window.iter().map(|(s, e)| e - s).sum::<usize>() + width - 1;
                    if last - first == joined_len
                        && window
                            .windows(2)
                            .all(|w| w[1].0 == w[0].1 + 1 && bytes[w[0].1] == b' ')
                    {
                        emit(&bytes[first..last]);
                        continue;
                    }
                    let shingle = &mut scratch.shingle;
                    shingle.clear();
                    for (i, &(start, end)) in window.iter().enumerate() {
                        if i > 0 {
                            shingle.push(b' ');
                        }
                        shingle.extend_from_slice(&bytes[start..end]);
                    }
                    emit(shingle);
                }
            }
        }
    }

    /// The features of `text` as windows over its bytes, when they are exactly that:
    /// character shingles of a pure-ASCII text longer than the width (by far the commonest
    /// case of the default profile). Gives the same features as
    /// [`FeatureExtractor::for_each_feature`]; lets a caller run its per-feature work in a loop
    /// of its own, where the compiler inlines it.
    pub fn ascii_windows<'t>(&self, text: &'t str) -> Option<std::slice::Windows<'t, u8>> {
        let FeatureKind::CharShingles { width } = self.kind else {
            return None;
        };
        let width = width.clamp(1, MAX_SHINGLE_WIDTH);
        (text.len() > width && text.is_ascii()).then(|| text.as_bytes().windows(width))
    }

    /// The kept tokens of `text`: stop words and too-short tokens removed.
    fn for_each_token<'t>(&self, text: &'t str, mut emit: impl FnMut(&'t str)) {
        let stop_words = self.stop_words;
        let min_chars = self.min_token_chars;
        self.tokenizer.for_each_token(text, |token| {
            if min_chars > 1 && token.chars().count() < min_chars {
                return;
            }
            if stop_words.is_some_and(|set| set.contains(token)) {
                return;
            }
            emit(token);
        });
    }
}

/// The widest shingle a profile may ask for (profiles are validated against it).
pub const MAX_SHINGLE_WIDTH: usize = 64;

/// Character `width`-grams of `text`; the whole text when it is shorter than `width`.
fn char_shingles(text: &str, width: usize, emit: &mut impl FnMut(&[u8])) {
    let width = width.min(MAX_SHINGLE_WIDTH);
    if text.is_ascii() {
        let bytes = text.as_bytes();
        if bytes.len() <= width {
            emit(bytes);
        } else {
            for window in bytes.windows(width) {
                emit(window);
            }
        }
        return;
    }
    // A ring of the byte offsets of the last `width + 1` character starts: shingle `j` (chars
    // `j..j + width`) is emitted when the start of char `j + width` is seen. No allocation.
    let bytes = text.as_bytes();
    let slots = width + 1;
    let mut ring = [0usize; MAX_SHINGLE_WIDTH + 1];
    let mut chars = 0usize;
    for (i, _) in text.char_indices() {
        if chars >= width {
            emit(&bytes[ring[(chars - width) % slots]..i]);
        }
        ring[chars % slots] = i;
        chars += 1;
    }
    if chars <= width {
        emit(bytes);
    } else {
        emit(&bytes[ring[(chars - width) % slots]..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features(kind: FeatureKind, text: &str) -> Vec<String> {
        let extractor = FeatureExtractor {
            kind,
            tokenizer: Tokenizer::Words,
            stop_words: None,
            min_token_chars: 0,
        };
        let mut out = Vec::new();
        extractor.for_each_feature(text, &mut FeatureScratch::default(), |f| {
            out.push(String::from_utf8(f.to_vec()).unwrap())
        });
        out
    }

    #[test]
    fn tropical_fish_has_sixteen_three_shingles() {
        // Seed 003 (lecture slides): "All 3-shingles (there are 16 of them)".
        let text = "tropical fish include fish found in tropical environments around the world, \
                    including both freshwater and salt water species";
        let shingles = features(FeatureKind::WordShingles { width: 3 }, text);
        assert_eq!(shingles.len(), 16);
        assert_eq!(shingles[0], "tropical fish include");
        assert_eq!(shingles[15], "salt water species");
    }

    #[test]
    fn short_inputs_give_one_feature() {
        assert_eq!(
            features(FeatureKind::WordShingles { width: 3 }, "two words"),
            ["two words"]
        );
        assert!(features(FeatureKind::WordShingles { width: 3 }, "  ").is_empty());
        assert_eq!(features(FeatureKind::CharShingles { width: 4 }, ""), [""]);
        assert_eq!(
            features(FeatureKind::CharShingles { width: 4 }, "飞碟"),
            ["飞碟"]
        );
    }

    #[test]
    fn ascii_windows_are_the_character_shingles() {
        let extractor = |width| FeatureExtractor {
            kind: FeatureKind::CharShingles { width },
            tokenizer: Tokenizer::Words,
            stop_words: None,
            min_token_chars: 0,
        };
        for text in ["plain ascii text here", "abcde", "abc", "", "naïve text"] {
            for width in [1, 4, 5] {
                let expected = features(FeatureKind::CharShingles { width }, text);
                if let Some(windows) = extractor(width).ascii_windows(text) {
                    let windows: Vec<String> = windows
                        .map(|w| String::from_utf8(w.to_vec()).unwrap())
                        .collect();
                    assert_eq!(windows, expected, "{text:?} at {width}");
                } else {
                    assert!(
                        !text.is_ascii() || text.len() <= width,
                        "{text:?} at {width}"
                    );
                }
            }
        }
    }

    #[test]
    fn char_shingles_slide_over_characters() {
        assert_eq!(
            features(FeatureKind::CharShingles { width: 2 }, "美国人a"),
            ["美国", "国人", "人a"]
        );
        assert_eq!(
            features(FeatureKind::CharShingles { width: 3 }, "abcd"),
            ["abc", "bcd"]
        );
    }
}
