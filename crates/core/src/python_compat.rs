//! Python 3.11's view of Unicode text, for bit-for-bit compatibility with the PyPI `simhash`
//! package: `str.lower()` and the `re` word class `\w`, as of Unicode 14.0 (Python 3.11's
//! database).
//!
//! Rust's own tables are newer (Unicode 16/17). The differences are code points assigned after
//! 14.0 (Python sees them as unassigned: not `\w`, not lower-cased, neither cased nor
//! case-ignorable) and two characters whose properties changed (`ʕ` U+0295 was cased; Ahom
//! U+1171E was a non-spacing mark). The ranges below were computed by comparing the Rust tables
//! against Python 3.11 over every code point (see `tools/peers/PYTHON_SIMHASH.md`).

use unicode_general_category::{get_general_category, GeneralCategory as G};

/// Code points that are letters or numbers in the Unicode 16 tables but unassigned in 14.0.
const NEW_WORD_CHARS: [(u32, u32); 43] = [
    (0x1C89, 0x1C8A),
    (0xA7CB, 0xA7CD),
    (0xA7DA, 0xA7DC),
    (0x105C0, 0x105F3),
    (0x10D40, 0x10D65),
    (0x10D6F, 0x10D85),
    (0x10EC2, 0x10EC4),
    (0x1123F, 0x11240),
    (0x11380, 0x11389),
    (0x1138B, 0x1138B),
    (0x1138E, 0x1138E),
    (0x11390, 0x113B5),
    (0x113B7, 0x113B7),
    (0x113D1, 0x113D1),
    (0x113D3, 0x113D3),
    (0x116D0, 0x116E3),
    (0x11BC0, 0x11BE0),
    (0x11BF0, 0x11BF9),
    (0x11F02, 0x11F02),
    (0x11F04, 0x11F10),
    (0x11F12, 0x11F33),
    (0x11F50, 0x11F59),
    (0x1342F, 0x1342F),
    (0x13441, 0x13446),
    (0x13460, 0x143FA),
    (0x16100, 0x1611D),
    (0x16130, 0x16139),
    (0x16D40, 0x16D6C),
    (0x16D70, 0x16D79),
    (0x18CFF, 0x18CFF),
    (0x1B132, 0x1B132),
    (0x1B155, 0x1B155),
    (0x1CCF0, 0x1CCF9),
    (0x1D2C0, 0x1D2D3),
    (0x1DF25, 0x1DF2A),
    (0x1E030, 0x1E06D),
    (0x1E4D0, 0x1E4EB),
    (0x1E4F0, 0x1E4F9),
    (0x1E5D0, 0x1E5ED),
    (0x1E5F0, 0x1E5FA),
    (0x2B739, 0x2B739),
    (0x2EBF0, 0x2EE5D),
    (0x31350, 0x323AF),
];

/// Code points that Rust lower-cases but Python 3.11 does not (all unassigned in 14.0).
const NEW_LOWERCASED: [(u32, u32); 9] = [
    (0x1C89, 0x1C89),
    (0xA7CB, 0xA7CC),
    (0xA7CE, 0xA7CE),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7DA, 0xA7DA),
    (0xA7DC, 0xA7DC),
    (0x10D50, 0x10D65),
    (0x16EA0, 0x16EB8),
];

/// Whether `c` falls in one of `ranges` (sorted, disjoint).
fn in_ranges(c: char, ranges: &[(u32, u32)]) -> bool {
    let c = c as u32;
    let after = ranges.partition_point(|&(lo, _)| lo <= c);
    after > 0 && c <= ranges[after - 1].1
}

/// Whether Python 3.11's `re` matches `c` with `\w` (`c.isalnum() or c == '_'`).
pub fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_alphanumeric() || c == '_';
    }
    crate::normalize::is_letter_or_number(c) && !in_ranges(c, &NEW_WORD_CHARS)
}

/// Whether `c` was assigned after Unicode 14.0 (so Python 3.11 treats it as unassigned).
/// Only the ranges that matter for lower-casing and case context are listed.
fn is_new(c: char) -> bool {
    in_ranges(c, &NEW_WORD_CHARS) || in_ranges(c, &NEW_LOWERCASED)
}

/// Unicode's Cased property as of 14.0.
fn is_cased(c: char) -> bool {
    if c == '\u{0295}' {
        return true;
    }
    !is_new(c)
        && (c.is_lowercase() || c.is_uppercase() || get_general_category(c) == G::TitlecaseLetter)
}

/// Unicode's Case_Ignorable property as of 14.0: word-break MidLetter, MidNumLet and
/// Single_Quote characters, and categories Mn, Me, Cf, Lm, Sk.
fn is_case_ignorable(c: char) -> bool {
    if c == '\u{1171E}' {
        return true;
    }
    if is_new(c) {
        return false;
    }
    matches!(
        c,
        '\'' | '.'
            | ':'
            | '\u{00B7}'
            | '\u{0387}'
            | '\u{055F}'
            | '\u{05F4}'
            | '\u{2018}'
            | '\u{2019}'
            | '\u{2024}'
            | '\u{2027}'
            | '\u{FE13}'
            | '\u{FE52}'
            | '\u{FE55}'
            | '\u{FF07}'
            | '\u{FF0E}'
            | '\u{FF1A}'
    ) || matches!(
        get_general_category(c),
        G::NonspacingMark | G::EnclosingMark | G::Format | G::ModifierLetter | G::ModifierSymbol
    )
}

/// Python 3.11's `str.lower()`: full case mapping with CPython's final-sigma rule, Unicode 14.
pub fn lower(text: &str, out: &mut String) {
    for (i, c) in text.char_indices() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if c == '\u{03A3}' {
            let (before, after) = (&text[..i], &text[i + c.len_utf8()..]);
            out.push(if is_final_sigma(before, after) {
                'ς'
            } else {
                'σ'
            });
        } else if is_new(c) {
            out.push(c);
        } else {
            out.extend(c.to_lowercase());
        }
    }
}

/// CPython's `handle_capital_sigma` for a capital sigma between `before` and `after`:
/// preceded by a cased character and not followed by one, skipping case-ignorable characters
/// both ways.
fn is_final_sigma(before: &str, after: &str) -> bool {
    let before = before.chars().rev().find(|&c| !is_case_ignorable(c));
    if !before.is_some_and(is_cased) {
        return false;
    }
    let after = after.chars().find(|&c| !is_case_ignorable(c));
    !after.is_some_and(is_cased)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lowered(text: &str) -> String {
        let mut out = String::new();
        lower(text, &mut out);
        out
    }

    #[test]
    fn lower_matches_python_311() {
        assert_eq!(lowered("ΟΔΟΣ ΣΑΣ Σ ΑΣ1 A.Σ"), "οδος σας σ ας1 a.ς");
        assert_eq!(lowered("ΑʕΣ"), "αʕς");
        assert_eq!(lowered("İ"), "i\u{307}");
        assert_eq!(lowered("\u{A7CB}"), "\u{A7CB}");
    }

    #[test]
    fn range_lookup_equals_a_linear_scan_at_every_edge() {
        for ranges in [&NEW_WORD_CHARS[..], &NEW_LOWERCASED[..]] {
            for &(lo, hi) in ranges {
                for code in [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1] {
                    let Some(c) = char::from_u32(code) else {
                        continue;
                    };
                    let linear = ranges.iter().any(|&(l, h)| (l..=h).contains(&code));
                    assert_eq!(in_ranges(c, ranges), linear, "{code:#x}");
                }
            }
        }
    }

    #[test]
    fn word_chars_match_python_311() {
        for c in ['a', '_', '²', '①', '〇', 'ª', 'ʰ', '美'] {
            assert!(is_word_char(c), "{c:?}");
        }
        for c in ['\u{301}', '😀', '\u{200D}', '＿', '\u{A0}', '\u{1C89}'] {
            assert!(!is_word_char(c), "{c:?}");
        }
    }
}
