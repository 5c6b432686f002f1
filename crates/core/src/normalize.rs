//! Text normalisation: the explicit choices that decide which texts count as "the same".
//!
//! Every choice the lecture slides discuss (case, punctuation, white space) is a field of
//! [`NormalizeOptions`], recorded in the profile, so an index never mixes fingerprints made under
//! different rules. Pure-ASCII input takes a single-pass fast path; everything else goes through
//! Unicode normalisation and full lower-casing (including the Greek final sigma).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};

use crate::stretch::for_each_stretch;

/// Which Unicode normalisation form to apply before anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnicodeForm {
    /// Leave the text as it is.
    None,
    /// Canonical composition: `e` + U+0301 becomes `é`.
    Nfc,
    /// Compatibility composition: also folds full-width forms, ligatures and superscripts.
    Nfkc,
}

/// Which characters count as "word" characters for the punctuation policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WordChars {
    /// Letters, marks, numbers and connector punctuation (Unicode categories L, M, N, Pc).
    Unicode,
    /// Python 3.11's `re` `\w`: letters, numbers and `_` but not combining marks, as the PyPI
    /// `simhash` package sees text; also switches lower-casing to Python 3.11's Unicode 14
    /// tables (see [`crate::python_compat`]).
    PythonRe,
}

/// What to do with a character that is neither a word character nor white space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PunctuationPolicy {
    /// Keep it (word tokenisation drops it later anyway).
    Keep,
    /// Delete it: `touch-down` becomes `touchdown`.
    Remove,
    /// Replace it with a space: `touch-down` becomes `touch down`.
    Space,
}

/// What to do with white space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WhitespacePolicy {
    /// Keep every white-space character as it is.
    Keep,
    /// Replace each run of white space by one ASCII space and trim both ends.
    Collapse,
    /// Delete all white space (`touch down` and `touchdown` become the same).
    Remove,
}

/// The normalisation choices of a profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NormalizeOptions {
    /// Unicode normalisation form.
    pub unicode: UnicodeForm,
    /// Map full-width ASCII variants (U+FF01–U+FF5E) and the ideographic space to ASCII
    /// (already implied by NFKC).
    pub fold_fullwidth: bool,
    /// Lower-case with the full Unicode mapping (as Python's `str.lower`).
    pub lowercase: bool,
    /// Which characters are word characters.
    pub word_chars: WordChars,
    /// Policy for characters that are neither word characters nor white space.
    pub punctuation: PunctuationPolicy,
    /// Policy for white space.
    pub whitespace: WhitespacePolicy,
}

impl NormalizeOptions {
    /// The policy of the default `web` profile: NFKC, lower case, punctuation kept for the
    /// tokeniser, white space collapsed.
    pub const fn web() -> Self {
        NormalizeOptions {
            unicode: UnicodeForm::Nfkc,
            fold_fullwidth: true,
            lowercase: true,
            word_chars: WordChars::Unicode,
            punctuation: PunctuationPolicy::Keep,
            whitespace: WhitespacePolicy::Collapse,
        }
    }
}

/// Normalises text under a fixed set of [`NormalizeOptions`].
///
/// ```
/// use neardup_core::normalize::{Normalizer, NormalizeOptions};
/// let normalizer = Normalizer::new(NormalizeOptions::web());
/// let mut out = String::new();
/// normalizer.normalize_into("  Ｈｅｌｌｏ,\t WORLD ", &mut out);
/// assert_eq!(out, "hello, world");
/// ```
#[derive(Debug, Clone)]
pub struct Normalizer {
    options: NormalizeOptions,
    /// What each ASCII byte becomes under the options.
    ascii_actions: [AsciiAction; 128],
}

/// What the ASCII pass does with one byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AsciiAction {
    /// Emit this (possibly lower-cased) byte.
    Emit(u8),
    /// Treat as white space (the byte itself is kept under [`WhitespacePolicy::Keep`]).
    Space,
    /// Drop it.
    Remove,
}

impl Normalizer {
    /// Creates a normaliser for these options.
    pub fn new(options: NormalizeOptions) -> Self {
        let mut ascii_actions = [AsciiAction::Remove; 128];
        for (b, action) in (0u8..128).zip(ascii_actions.iter_mut()) {
            let c = char::from(b);
            *action = match (classify(c, options.word_chars), options.punctuation) {
                (CharClass::Space, _) | (CharClass::Other, PunctuationPolicy::Space) => {
                    AsciiAction::Space
                }
                (CharClass::Other, PunctuationPolicy::Remove) => AsciiAction::Remove,
                _ if options.lowercase => AsciiAction::Emit(b.to_ascii_lowercase()),
                _ => AsciiAction::Emit(b),
            };
        }
        Normalizer {
            options,
            ascii_actions,
        }
    }

    /// The options this normaliser applies.
    pub fn options(&self) -> &NormalizeOptions {
        &self.options
    }

    /// Normalises `text` into `out` (cleared first), reusing its allocation.
    ///
    /// Pure-ASCII stretches (see [`crate::stretch`]) take a byte-level pass; only the stretches
    /// around non-ASCII characters pay for Unicode normalisation and full lower-casing.
    pub fn normalize_into(&self, text: &str, out: &mut String) {
        // Work on bytes (ASCII is pushed byte by byte) and validate once at the end.
        let mut bytes = std::mem::take(out).into_bytes();
        bytes.clear();
        bytes.reserve(text.len());
        let mut sink = Sink {
            out: bytes,
            last_space: false,
            whitespace: self.options.whitespace,
        };
        for_each_stretch(text, |stretch, ascii| {
            if ascii {
                self.ascii_pass(stretch.as_bytes(), &mut sink);
            } else {
                self.unicode_pass(stretch, &mut sink);
            }
        });
        if self.options.whitespace == WhitespacePolicy::Collapse && sink.last_space {
            sink.out.pop();
        }
        // SAFETY: `Sink` only ever appends bytes of `text`'s pure-ASCII stretches, ASCII bytes
        // it produces itself, or whole `char`s encoded by `char::encode_utf8`: always valid
        // UTF-8. (Validating again would cost a few percent of the hot path.)
        *out = unsafe { String::from_utf8_unchecked(sink.out) };
    }

    /// Case, punctuation and white space for ASCII bytes.
    ///
    /// When punctuation is kept (the usual case) the stretch is copied in bulk, lower-cased in
    /// place (vectorised) and its white space compacted in place; otherwise a per-byte action
    /// table built from the options drives one pass.
    fn ascii_pass(&self, bytes: &[u8], sink: &mut Sink) {
        if self.options.punctuation == PunctuationPolicy::Keep {
            let start = sink.out.len();
            if self.options.whitespace == WhitespacePolicy::Keep {
                sink.out.extend_from_slice(bytes);
            } else {
                sink.append_ascii_words(bytes);
            }
            if self.options.lowercase {
                sink.out[start..].make_ascii_lowercase();
            }
            return;
        }
        for &b in bytes {
            match self.ascii_actions[usize::from(b & 0x7f)] {
                AsciiAction::Emit(out) => {
                    sink.out.push(out);
                    sink.last_space = false;
                }
                AsciiAction::Space => sink.push_space(char::from(b)),
                AsciiAction::Remove => {}
            }
        }
    }

    /// Unicode form, full-width folding, lower case, then the character policies.
    fn unicode_pass(&self, text: &str, sink: &mut Sink) {
        let composed: Cow<'_, str> = match self.options.unicode {
            UnicodeForm::Nfkc if is_nfkc_quick(text.chars()) != IsNormalized::Yes => {
                text.nfkc().collect::<String>().into()
            }
            UnicodeForm::Nfc if is_nfc_quick(text.chars()) != IsNormalized::Yes => {
                text.nfc().collect::<String>().into()
            }
            _ => text.into(),
        };
        let folded = if self.options.fold_fullwidth && self.options.unicode != UnicodeForm::Nfkc {
            composed
                .chars()
                .map(fold_fullwidth)
                .collect::<String>()
                .into()
        } else {
            composed
        };
        // `str::to_lowercase` applies the context-sensitive final-sigma rule, as Python does;
        // Python mode also keeps to Python 3.11's (older) Unicode tables.
        let lowered: Cow<'_, str> = match (self.options.lowercase, self.options.word_chars) {
            (false, _) => folded,
            (true, WordChars::Unicode) => folded.to_lowercase().into(),
            (true, WordChars::PythonRe) => {
                let mut lowered = String::with_capacity(folded.len());
                crate::python_compat::lower(&folded, &mut lowered);
                lowered.into()
            }
        };
        for c in lowered.chars() {
            sink.push(
                c,
                classify(c, self.options.word_chars),
                self.options.punctuation,
            );
        }
    }
}

/// The output side of normalisation: applies the punctuation and white-space policies. Under
/// [`WhitespacePolicy::Collapse`] a space is written for the first white-space character after
/// a non-space (never at the start), and a trailing one is removed at the end; the state is
/// carried across stretches.
struct Sink {
    out: Vec<u8>,
    last_space: bool,
    whitespace: WhitespacePolicy,
}

impl Sink {
    /// Pushes a character of the given class under the punctuation policy.
    #[inline]
    fn push(&mut self, c: char, class: CharClass, punctuation: PunctuationPolicy) {
        match (class, punctuation) {
            (CharClass::Other, PunctuationPolicy::Remove) => {}
            (CharClass::Space, _) => self.push_space(c),
            (CharClass::Other, PunctuationPolicy::Space) => self.push_space(' '),
            _ => {
                self.out
                    .extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes());
                self.last_space = false;
            }
        }
    }

    /// Pushes white space `c` under the white-space policy.
    #[inline]
    fn push_space(&mut self, c: char) {
        match self.whitespace {
            WhitespacePolicy::Keep => self
                .out
                .extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
            WhitespacePolicy::Remove => {}
            WhitespacePolicy::Collapse => {
                if !self.last_space && !self.out.is_empty() {
                    self.out.push(b' ');
                    self.last_space = true;
                }
            }
        }
    }

    /// Appends ASCII `bytes` under the collapse or remove policy: the runs between white
    /// space are copied whole, and the white space is found eight bytes at a time.
    fn append_ascii_words(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            match find_ascii_whitespace(bytes) {
                Some(0) => {
                    self.push_space(' ');
                    bytes = &bytes[1..];
                }
                found => {
                    let end = found.unwrap_or(bytes.len());
                    self.out.extend_from_slice(&bytes[..end]);
                    self.last_space = false;
                    bytes = &bytes[end..];
                }
            }
        }
    }
}

/// Whether `b` is white space (the ASCII part of Unicode's White_Space property).
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Index of the first white-space byte of ASCII `bytes`. Bytes up to 0x20 are flagged eight
/// at a time (SWAR), then checked exactly.
fn find_ascii_whitespace(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let mut i = 0;
    while i + 8 <= bytes.len() {
        let word = u64::from_le_bytes(bytes[i..i + 8].try_into().unwrap_or([0; 8]));
        // High bit set in each byte below 0x21 (exact for ASCII input).
        let mut low = word.wrapping_sub(ONES * 0x21) & !word & HIGH;
        while low != 0 {
            let at = i + (low.trailing_zeros() / 8) as usize;
            if is_ascii_space(bytes[at]) {
                return Some(at);
            }
            low &= low - 1;
        }
        i += 8;
    }
    bytes[i..]
        .iter()
        .position(|&b| is_ascii_space(b))
        .map(|p| i + p)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CharClass {
    Word,
    Space,
    Other,
}

fn classify(c: char, word_chars: WordChars) -> CharClass {
    if is_word_char(c, word_chars) {
        CharClass::Word
    } else if c.is_whitespace() {
        CharClass::Space
    } else {
        CharClass::Other
    }
}

/// Whether `c` is a word character under the given definition.
pub fn is_word_char(c: char, word_chars: WordChars) -> bool {
    use GeneralCategory as G;
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    if word_chars == WordChars::PythonRe {
        return crate::python_compat::is_word_char(c);
    }
    is_letter_or_number(c)
        || matches!(
            get_general_category(c),
            G::NonspacingMark | G::SpacingMark | G::EnclosingMark | G::ConnectorPunctuation
        )
}

/// Whether `c` is in a letter (L*) or number (N*) category.
pub(crate) fn is_letter_or_number(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
            | G::DecimalNumber
            | G::LetterNumber
            | G::OtherNumber
    )
}

/// Maps a full-width ASCII variant to its ASCII form and the ideographic space to a space.
fn fold_fullwidth(c: char) -> char {
    match c {
        '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFF01 + 0x21).unwrap_or(c),
        '\u{3000}' => ' ',
        _ => c,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(options: NormalizeOptions, text: &str) -> String {
        let mut out = String::new();
        Normalizer::new(options).normalize_into(text, &mut out);
        out
    }

    #[test]
    fn web_collapses_space_and_folds_case_and_width() {
        let o = NormalizeOptions::web();
        assert_eq!(norm(o, "  The  Quick\n\tFox "), "the quick fox");
        assert_eq!(norm(o, "ＡＢＣ１２３　ｄｅｆ"), "abc123 def");
        assert_eq!(norm(o, "e\u{301}COLE"), "\u{e9}cole");
        assert_eq!(norm(o, ""), "");
    }

    #[test]
    fn final_sigma_is_lowercased_in_context() {
        assert_eq!(norm(NormalizeOptions::web(), "ΟΔΟΣ ΣΑΣ"), "οδος σας");
    }

    #[test]
    fn punctuation_policies_apply_to_ascii_and_unicode_alike() {
        let mut o = NormalizeOptions::web();
        o.punctuation = PunctuationPolicy::Remove;
        assert_eq!(norm(o, "touch-down!"), "touchdown");
        assert_eq!(norm(o, "touch—down!"), "touchdown");
        o.punctuation = PunctuationPolicy::Space;
        assert_eq!(norm(o, "touch-down!"), "touch down");
        assert_eq!(norm(o, "touch—down！"), "touch down");
        o.whitespace = WhitespacePolicy::Remove;
        assert_eq!(norm(o, "plane has touch down"), "planehastouchdown");
    }

    #[test]
    fn python_word_chars_drop_combining_marks() {
        let o = NormalizeOptions {
            unicode: UnicodeForm::None,
            fold_fullwidth: false,
            lowercase: true,
            word_chars: WordChars::PythonRe,
            punctuation: PunctuationPolicy::Remove,
            whitespace: WhitespacePolicy::Remove,
        };
        assert_eq!(norm(o, "Cafe\u{301} au lait!"), "cafeaulait");
        assert_eq!(norm(o, "美国“51区”"), "美国51区");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Stretch-wise normalisation equals whole-text NFKC, lower-casing and collapsing.
        #[test]
        fn stretches_equal_whole_text_normalisation(
            text in "[aB1 .\t\n\u{301}é\u{FF21}ΣΑ\u{3000}\u{A0}ﬁ²]{0,40}"
        ) {
            let reference: String = text.nfkc().collect::<String>().to_lowercase();
            let reference = reference.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(norm(NormalizeOptions::web(), &text), reference);
        }
    }
}
