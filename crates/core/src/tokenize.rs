//! Tokenisers: UAX #29 words (with jieba word segmentation for runs of Han characters) and
//! single characters.
//!
//! Tokens are borrowed slices of the (normalised) input; nothing is allocated per token. Pure
//! ASCII stretches take a hand-written scanner that implements exactly the ASCII subset of the
//! UAX #29 word rules (a property test checks it against `unicode-segmentation`), because the
//! general segmenter is the largest cost of fingerprinting English text.

use std::sync::OnceLock;

use jieba_rs::Jieba;

use crate::stretch::for_each_stretch;
use serde::{Deserialize, Serialize};
use unicode_segmentation::UnicodeSegmentation;

/// How text is split into tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tokenizer {
    /// UAX #29 words containing a letter or digit; Han runs are segmented by jieba.
    Words,
    /// Every character that is not white space.
    Chars,
}

impl Tokenizer {
    /// Calls `emit` with each token of `text`, in order.
    ///
    /// ```
    /// use neardup_core::tokenize::Tokenizer;
    /// let mut tokens = Vec::new();
    /// Tokenizer::Words.for_each_token("we can't stop: 3.14 美国雇员称", |t| tokens.push(t.to_string()));
    /// assert_eq!(tokens, ["we", "can't", "stop", "3.14", "美国", "雇员", "称"]);
    /// ```
    pub fn for_each_token<'t>(self, text: &'t str, mut emit: impl FnMut(&'t str)) {
        match self {
            Tokenizer::Words => words(text, &mut emit),
            Tokenizer::Chars => {
                for (i, c) in text.char_indices() {
                    if !c.is_whitespace() {
                        emit(&text[i..i + c.len_utf8()]);
                    }
                }
            }
        }
    }
}

/// Word tokens: pure-ASCII stretches go to the ASCII scanner; in the others, Han runs go to
/// jieba and the rest to the UAX #29 segmenter. (A Han run never crosses a stretch boundary:
/// boundaries sit at ASCII bytes.)
fn words<'t>(text: &'t str, emit: &mut impl FnMut(&'t str)) {
    for_each_stretch(text, |stretch, ascii| {
        if ascii {
            ascii_words(stretch, emit);
            return;
        }
        let mut start = 0;
        let mut in_han = false;
        for (i, c) in stretch.char_indices() {
            let han = is_han(c);
            if han != in_han {
                segment(&stretch[start..i], in_han, emit);
                start = i;
                in_han = han;
            }
        }
        segment(&stretch[start..], in_han, emit);
    });
}

fn segment<'t>(run: &'t str, han: bool, emit: &mut impl FnMut(&'t str)) {
    if run.is_empty() {
        return;
    }
    if han {
        for word in jieba().cut(run, true) {
            emit(word);
        }
    } else {
        for word in run.unicode_words() {
            emit(word);
        }
    }
}

/// The shared jieba segmenter: loading its dictionary takes a fraction of a second, so it is
/// loaded once, and only when Han text is first seen.
pub fn jieba() -> &'static Jieba {
    static JIEBA: OnceLock<Jieba> = OnceLock::new();
    JIEBA.get_or_init(Jieba::new)
}

/// Whether `c` is a Han ideograph (CJK unified ideographs, extensions and compatibility forms).
pub fn is_han(c: char) -> bool {
    matches!(c,
        '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{2A6DF}'
        | '\u{2A700}'..='\u{2EBEF}'
        | '\u{30000}'..='\u{3134F}')
}

/// UAX #29 word-break classes of the ASCII characters that matter for words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wb {
    /// A–Z, a–z.
    Letter,
    /// 0–9.
    Numeric,
    /// `_`.
    ExtendNumLet,
    /// `:` (MidLetter).
    MidLetter,
    /// `.` (MidNumLet) and `'` (Single_Quote): join letters and digits alike.
    MidNumLetQ,
    /// `,` and `;` (MidNum).
    MidNum,
    /// Everything else.
    Other,
}

const fn wb_class(b: u8) -> Wb {
    match b {
        b'a'..=b'z' | b'A'..=b'Z' => Wb::Letter,
        b'0'..=b'9' => Wb::Numeric,
        b'_' => Wb::ExtendNumLet,
        b':' => Wb::MidLetter,
        b'.' | b'\'' => Wb::MidNumLetQ,
        b',' | b';' => Wb::MidNum,
        _ => Wb::Other,
    }
}

static WB_TABLE: [Wb; 128] = {
    let mut table = [Wb::Other; 128];
    let mut b = 0;
    while b < 128 {
        table[b] = wb_class(b as u8);
        b += 1;
    }
    table
};

/// Bytes that always join a word: letters, digits and `_`.
static JOINS: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = matches!(
            wb_class(b as u8),
            Wb::Letter | Wb::Numeric | Wb::ExtendNumLet
        );
        b += 1;
    }
    table
};

/// UAX #29 words of an ASCII string, keeping those with a letter or digit (as
/// `unicode_words` does). Rules WB5–WB13b restricted to ASCII: letters, digits and `_` always
/// join (WB5, WB8–WB10, WB13a/b); a MidLetter or MidNumLetQ joins two letters (WB6/7); a MidNum
/// or MidNumLetQ joins two digits (WB11/12).
fn ascii_words<'t>(text: &'t str, emit: &mut impl FnMut(&'t str)) {
    let bytes = text.as_bytes();
    let class = |i: usize| WB_TABLE[usize::from(bytes[i] & 0x7f)];
    let joins = |i: usize| JOINS[usize::from(bytes[i])];
    let n = bytes.len();
    let mut i = 0;
    while i < n {
        if !joins(i) {
            i += 1;
            continue;
        }
        let start = i;
        loop {
            // The common case: a run of letters, digits and underscores.
            while i < n && joins(i) {
                i += 1;
            }
            if i + 1 >= n {
                break;
            }
            let mid_joins = matches!(
                (class(i - 1), class(i), class(i + 1)),
                (Wb::Letter, Wb::MidLetter | Wb::MidNumLetQ, Wb::Letter)
                    | (Wb::Numeric, Wb::MidNum | Wb::MidNumLetQ, Wb::Numeric)
            );
            if !mid_joins {
                break;
            }
            i += 1;
        }
        // A word without a letter or digit can only be a run of underscores.
        if bytes[start] != b'_' || bytes[start..i].iter().any(|&b| b != b'_') {
            emit(&text[start..i]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tokens(tokenizer: Tokenizer, text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        tokenizer.for_each_token(text, |t| out.push(t));
        out
    }

    #[test]
    fn ascii_words_follow_uax29() {
        let text = "e.g. it's 3.14, 1,000; a:b __x_ y__ ___ 'quoted' -5.5.5 end.";
        let expected: Vec<&str> = text.unicode_words().collect();
        assert_eq!(tokens(Tokenizer::Words, text), expected);
    }

    #[test]
    fn mixed_chinese_and_english_use_jieba_for_han() {
        let words = tokens(Tokenizer::Words, "美国51区雇员称内部有9架飞碟 UFO sighting");
        assert_eq!(
            words,
            [
                "美国", "51", "区", "雇员", "称", "内部", "有", "9", "架", "飞碟", "UFO",
                "sighting"
            ]
        );
    }

    #[test]
    fn chars_skip_white_space() {
        assert_eq!(
            tokens(Tokenizer::Chars, "a b\t飞碟"),
            ["a", "b", "飞", "碟"]
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The ASCII fast path is exactly UAX #29 on ASCII input.
        #[test]
        fn ascii_fast_path_equals_unicode_words(text in "[a-cA-C0-2_:.',; \\-\"!\n]{0,40}") {
            let fast = tokens(Tokenizer::Words, &text);
            let reference: Vec<&str> = text.unicode_words().collect();
            prop_assert_eq!(fast, reference);
        }

        /// Splitting into ASCII and mixed stretches never changes the words (Han excluded:
        /// it goes to jieba by design).
        #[test]
        fn stretch_splitting_equals_unicode_words(
            text in "[a-b0-1_:.', \n\\-é\u{301}\u{200D}\u{1F600}ßΣα\u{A0}\u{3000}\u{FF21}\u{5F4}]{0,40}"
        ) {
            let fast = tokens(Tokenizer::Words, &text);
            let reference: Vec<&str> = text.unicode_words().collect();
            prop_assert_eq!(fast, reference);
        }
    }
}
