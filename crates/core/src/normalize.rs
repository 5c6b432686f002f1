//! Text normalisation: the explicit choices that decide which texts count as "the same".
//!
//! Every choice the lecture slides discuss (case, punctuation, white space) is a field of
//! [`NormalizeOptions`], recorded in the profile, so an index never mixes fingerprints made under
//! different rules. Pure-ASCII input takes a single-pass fast path; everything else goes through
//! Unicode normalisation and full lower-casing (including the Greek final sigma).

use serde::{Deserialize, Serialize};
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::{is_nfc_quick, is_nfkc_quick, IsNormalized, UnicodeNormalization};

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
}

impl Normalizer {
    /// Creates a normaliser for these options.
    pub fn new(options: NormalizeOptions) -> Self {
        Normalizer { options }
    }

    /// The options this normaliser applies.
    pub fn options(&self) -> &NormalizeOptions {
        &self.options
    }

    /// Normalises `text` into `out` (cleared first), reusing its allocation.
    pub fn normalize_into(&self, text: &str, out: &mut String) {
        out.clear();
        if text.is_ascii() {
            self.ascii_pass(text.as_bytes(), out);
            return;
        }
        let composed: std::borrow::Cow<'_, str> = match self.options.unicode {
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
        let lowered = match (self.options.lowercase, self.options.word_chars) {
            (false, _) => folded,
            (true, WordChars::Unicode) => folded.to_lowercase().into(),
            (true, WordChars::PythonRe) => {
                let mut lowered = String::with_capacity(folded.len());
                crate::python_compat::lower(&folded, &mut lowered);
                lowered.into()
            }
        };
        self.policy_pass(lowered.chars(), out);
    }

    /// The single pass for ASCII input: case, punctuation and white space together.
    fn ascii_pass(&self, bytes: &[u8], out: &mut String) {
        let o = &self.options;
        let trivial = !o.lowercase
            && o.punctuation == PunctuationPolicy::Keep
            && o.whitespace == WhitespacePolicy::Keep;
        if trivial {
            // Safe: the input is ASCII.
            out.push_str(std::str::from_utf8(bytes).unwrap_or_default());
            return;
        }
        let mut buf = std::mem::take(out).into_bytes();
        buf.reserve(bytes.len());
        let mut pending_space = false;
        for &b in bytes {
            let class = if b.is_ascii_alphanumeric() || b == b'_' {
                CharClass::Word
            } else if b.is_ascii_whitespace() || b == 0x0b {
                CharClass::Space
            } else {
                CharClass::Other
            };
            let emitted = match (class, o.punctuation) {
                (CharClass::Other, PunctuationPolicy::Remove) => None,
                (CharClass::Other, PunctuationPolicy::Space) => Some(b' '),
                (CharClass::Space, _) => Some(b),
                _ => Some(if o.lowercase {
                    b.to_ascii_lowercase()
                } else {
                    b
                }),
            };
            let Some(byte) = emitted else { continue };
            let is_space = class == CharClass::Space || byte == b' ';
            match o.whitespace {
                WhitespacePolicy::Keep => buf.push(byte),
                WhitespacePolicy::Remove if is_space => {}
                WhitespacePolicy::Remove => buf.push(byte),
                WhitespacePolicy::Collapse if is_space => pending_space = !buf.is_empty(),
                WhitespacePolicy::Collapse => {
                    if pending_space {
                        buf.push(b' ');
                        pending_space = false;
                    }
                    buf.push(byte);
                }
            }
        }
        // Only ASCII bytes were pushed, so this cannot fail.
        *out = String::from_utf8(buf).unwrap_or_default();
    }

    /// Punctuation and white-space policies over already composed and lower-cased characters.
    fn policy_pass(&self, chars: impl Iterator<Item = char>, out: &mut String) {
        let o = &self.options;
        let mut pending_space = false;
        for c in chars {
            let class = classify(c, o.word_chars);
            let emitted = match (class, o.punctuation) {
                (CharClass::Other, PunctuationPolicy::Remove) => None,
                (CharClass::Other, PunctuationPolicy::Space) => Some(' '),
                _ => Some(c),
            };
            let Some(ch) = emitted else { continue };
            let is_space = class == CharClass::Space || ch == ' ';
            match o.whitespace {
                WhitespacePolicy::Keep => out.push(ch),
                WhitespacePolicy::Remove if is_space => {}
                WhitespacePolicy::Remove => out.push(ch),
                WhitespacePolicy::Collapse if is_space => pending_space = !out.is_empty(),
                WhitespacePolicy::Collapse => {
                    if pending_space {
                        out.push(' ');
                        pending_space = false;
                    }
                    out.push(ch);
                }
            }
        }
    }
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
    match get_general_category(c) {
        G::UppercaseLetter
        | G::LowercaseLetter
        | G::TitlecaseLetter
        | G::ModifierLetter
        | G::OtherLetter
        | G::DecimalNumber
        | G::LetterNumber
        | G::OtherNumber => true,
        G::NonspacingMark | G::SpacingMark | G::EnclosingMark | G::ConnectorPunctuation => true,
        _ => false,
    }
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
}
