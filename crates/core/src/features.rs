//! Features: what a document is made of, for fingerprinting.
//!
//! A feature is handed to the caller as a byte slice (a token, a run of characters, or tokens
//! joined by one space in a reused buffer), so the hot path hashes it at once and never
//! allocates a `String` per feature.

use serde::{Deserialize, Serialize};

use crate::scratch::Reused;
use crate::stopwords::StopWordSet;
use crate::stretch::find_non_ascii;
use crate::tokenize::Tokenizer;
use std::ops::Range;

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
    /// The byte ranges of the normalised text that may hold non-ASCII characters, as the
    /// normaliser marked them ([`crate::normalize::Normalizer::normalize_marking`]); filled
    /// by the fingerprinter just before it hashes that text's features.
    pub(crate) non_ascii: Vec<Range<usize>>,
}

impl FeatureScratch {
    /// Gives back the buffers a long document grew ([`crate::scratch`]).
    pub(crate) fn keep_small(&mut self) {
        self.token_ranges.keep_small();
        self.shingle.keep_small();
        self.non_ascii.keep_small();
    }
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
            FeatureKind::CharShingles { width } => {
                let width = char_shingle_width(width);
                char_shingle_parts(text, width, |part| match part {
                    ShinglePart::Windows(run) => run.windows(width).for_each(&mut emit),
                    ShinglePart::CharWindows(run) => {
                        CharWindows::new(run, width).for_each(&mut emit)
                    }
                    ShinglePart::One(shingle) => emit(shingle),
                })
            }
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

/// A piece of a text's character shingles, as [`char_shingle_parts`] hands them over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShinglePart<'t> {
    /// A pure-ASCII run (where characters are bytes) of at least the width: each of its
    /// windows of the width is a shingle.
    Windows(&'t [u8]),
    /// A stretch with non-ASCII characters: each of its windows of the width in characters
    /// (one from each character start, while the width's characters remain;
    /// [`CharWindows`]) is a shingle. It ends where the windows of a pure-ASCII run take
    /// over, or at the text's end.
    CharWindows(&'t [u8]),
    /// The whole of a text with fewer characters than the width: its one shingle.
    One(&'t [u8]),
}

/// The character shingle width a profile's `width` stands for (1 to [`MAX_SHINGLE_WIDTH`]).
pub(crate) fn char_shingle_width(width: usize) -> usize {
    width.clamp(1, MAX_SHINGLE_WIDTH)
}

/// Character `width`-grams of `text` in document order, the whole text when it has at most
/// `width` characters, handed over in [`ShinglePart`]s: the shingles inside pure-ASCII runs as
/// whole runs (a document with one non-ASCII character keeps the byte-window fast path for
/// nearly all of its text), each shingle with a non-ASCII character on its own. No allocation.
pub(crate) fn char_shingle_parts<'t>(
    text: &'t str,
    width: usize,
    visit: impl FnMut(ShinglePart<'t>),
) {
    char_shingle_parts_within(text, None, width, visit);
}

/// [`char_shingle_parts`], searching for non-ASCII characters only inside `marked` (ranges of
/// `text`, in order, outside which it is all ASCII) when given, else in the whole text.
pub(crate) fn char_shingle_parts_within<'t>(
    text: &'t str,
    marked: Option<&[Range<usize>]>,
    width: usize,
    mut visit: impl FnMut(ShinglePart<'t>),
) {
    let width = char_shingle_width(width);
    let bytes = text.as_bytes();
    let mut search = NonAsciiSearch { marked, next: 0 };
    // The byte offset of the current shingle's first character, and the first non-ASCII byte
    // at or after it (the text's length when there is none).
    let mut start = 0;
    let mut non_ascii = search.find(bytes, 0).unwrap_or(bytes.len());
    loop {
        if non_ascii < start {
            non_ascii = search.find(bytes, start).unwrap_or(bytes.len());
        }
        if non_ascii - start >= width {
            visit(ShinglePart::Windows(&bytes[start..non_ascii]));
            if non_ascii == bytes.len() {
                return;
            }
            start = non_ascii + 1 - width;
            continue;
        }
        // The shingles from `start` hold a non-ASCII character, up to the first character
        // start `ascii` whose next `width` bytes are ASCII (where the windows take over).
        let resume = loop {
            if non_ascii == bytes.len() {
                break None;
            }
            let ascii = non_ascii + utf8_len(bytes[non_ascii]);
            non_ascii = search.find(bytes, ascii).unwrap_or(bytes.len());
            if non_ascii - ascii >= width {
                break Some(ascii);
            }
        };
        if let Some(ascii) = resume {
            // The shingle of the last character before `ascii` ends `width - 1` bytes after it.
            visit(ShinglePart::CharWindows(&bytes[start..ascii + width - 1]));
            start = ascii;
            continue;
        }
        // No ASCII run of the width before the text's end.
        match end_of_chars(bytes, start, width) {
            Some(_) => visit(ShinglePart::CharWindows(&bytes[start..])),
            None if start == 0 => visit(ShinglePart::One(bytes)),
            None => {}
        }
        return;
    }
}

/// The windows of `width` characters of a UTF-8 text, one from each character start while
/// `width` characters remain, in order: [`ShinglePart::CharWindows`]'s shingles. Each window's
/// end is found from the last one's (a character further on), not counted again from its start.
pub(crate) struct CharWindows<'t> {
    text: &'t [u8],
    start: usize,
    /// The current window's end; past the text's end when there is no window left.
    end: usize,
}

impl<'t> CharWindows<'t> {
    /// The windows of `text`, which must be whole UTF-8 characters (none when it has fewer
    /// than `width` of them).
    #[inline(always)]
    pub(crate) fn new(text: &'t [u8], width: usize) -> Self {
        let end = end_of_chars(text, 0, width).unwrap_or(usize::MAX);
        CharWindows {
            text,
            start: 0,
            end,
        }
    }
}

impl<'t> Iterator for CharWindows<'t> {
    type Item = &'t [u8];

    #[inline(always)]
    fn next(&mut self) -> Option<&'t [u8]> {
        let window = self.text.get(self.start..self.end)?;
        match self.text.get(self.end) {
            Some(&lead) => {
                self.start += utf8_len(self.text[self.start]);
                self.end += utf8_len(lead);
            }
            None => self.end = usize::MAX,
        }
        Some(window)
    }
}

/// Finds the non-ASCII bytes of a text, in the whole text or only inside the ranges marked
/// as possibly holding them; asked for positions that never go back.
struct NonAsciiSearch<'m> {
    marked: Option<&'m [Range<usize>]>,
    /// The first marked range that may hold a position asked for.
    next: usize,
}

impl NonAsciiSearch<'_> {
    /// The first non-ASCII byte of `bytes` at or after `from` (never less than a `from` asked
    /// before).
    fn find(&mut self, bytes: &[u8], from: usize) -> Option<usize> {
        let Some(marked) = self.marked else {
            return find_non_ascii(bytes, from);
        };
        while let Some(range) = marked.get(self.next) {
            // A marked range is one normalised word or so, its first non-ASCII byte near its
            // start: a byte loop beats a call of the SIMD search here.
            let start = from.max(range.start);
            let inside = bytes
                .get(start..range.end.min(bytes.len()))
                .unwrap_or_default();
            if let Some(found) = inside.iter().position(|&b| b >= 0x80) {
                return Some(start + found);
            }
            self.next += 1;
        }
        None
    }
}

/// The byte offset after `chars` characters of UTF-8 `bytes` from the character starting at
/// `start`, if there are that many.
fn end_of_chars(bytes: &[u8], start: usize, chars: usize) -> Option<usize> {
    let mut end = start;
    for _ in 0..chars {
        end += utf8_len(*bytes.get(end)?);
    }
    Some(end)
}

/// The length of the UTF-8 sequence that starts with `lead`.
fn utf8_len(lead: u8) -> usize {
    match lead {
        0..0x80 => 1,
        0x80..0xe0 => 2,
        0xe0..0xf0 => 3,
        _ => 4,
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
    fn a_non_ascii_character_leaves_the_ascii_runs_whole() {
        let mut parts = Vec::new();
        char_shingle_parts("some text § more text", 5, |part| parts.push(part));
        assert_eq!(
            parts,
            [
                ShinglePart::Windows(b"some text "),
                ShinglePart::CharWindows("ext § mor".as_bytes()),
                ShinglePart::Windows(b" more text"),
            ]
        );
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

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// The ranges the normaliser marks hold every non-ASCII byte of its output under every
        /// policy, and the shingles found searching only inside them are those found searching
        /// the whole text, at every width.
        #[test]
        fn marked_ranges_find_the_same_shingles(
            text in proptest::prop_oneof![
                3 => "([a-z ]{0,30}|[A-Z.,;\\n\\t]{0,3}|[é§·’©→美国😀\\u{301}ＡＢΣ\\u{a0}\\u{3000}]{1,3})*",
                1 => proptest::prelude::any::<String>(),
            ],
            width in 1..=12usize,
            policies in (0..3usize, 0..2usize, 0..3usize, 0..3usize, proptest::prelude::any::<bool>()),
        ) {
            use crate::normalize::*;
            let (unicode, words, punctuation, whitespace, lowercase) = policies;
            let normalizer = Normalizer::new(NormalizeOptions {
                unicode: [UnicodeForm::None, UnicodeForm::Nfc, UnicodeForm::Nfkc][unicode],
                fold_fullwidth: lowercase,
                lowercase,
                word_chars: [WordChars::Unicode, WordChars::PythonRe][words],
                punctuation: [PunctuationPolicy::Keep, PunctuationPolicy::Space, PunctuationPolicy::Remove][punctuation],
                whitespace: [WhitespacePolicy::Keep, WhitespacePolicy::Collapse, WhitespacePolicy::Remove][whitespace],
            });
            let (mut out, mut marked) = (String::new(), Vec::new());
            normalizer.normalize_marking(&text, &mut out, |range| marked.push(range));
            let mut unmarked = out.clone().into_bytes();
            for range in &marked {
                let end = range.end.min(unmarked.len());
                unmarked[range.start.min(end)..end].fill(b'x');
            }
            proptest::prop_assert!(unmarked.is_ascii());
            let (mut whole, mut within) = (Vec::new(), Vec::new());
            char_shingle_parts(&out, width, |part| whole.push(part));
            char_shingle_parts_within(&out, Some(&marked), width, |part| within.push(part));
            proptest::prop_assert_eq!(within, whole);
        }
    }
}
