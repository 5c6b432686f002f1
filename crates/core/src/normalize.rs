//! Text normalisation: the explicit choices that decide which texts count as "the same".
//!
//! Every choice the lecture slides discuss (case, punctuation, white space) is a field of
//! [`NormalizeOptions`], recorded in the profile, so an index never mixes fingerprints made under
//! different rules. Pure-ASCII input takes a single-pass fast path; everything else goes through
//! Unicode normalisation and full lower-casing (including the Greek final sigma).

use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};
use unicode_general_category::{get_general_category, GeneralCategory};
use unicode_normalization::char::canonical_combining_class;
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
    /// `ascii_actions` as `[byte written, 1 if kept]`, for the branch-free pass used when
    /// white space is removed (then every byte is either written or dropped).
    ascii_compaction: [[u8; 2]; 128],
    /// Bit `b` set when ASCII byte `b` goes to the output as it stands under the options (its
    /// action is to emit itself): what [`Normalizer::table_pass`] copies without a look-up.
    ascii_as_is: u128,
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
        let mut ascii_compaction = [[0u8; 2]; 128];
        for ((b, action), entry) in (0u8..).zip(ascii_actions).zip(&mut ascii_compaction) {
            *entry = match action {
                AsciiAction::Emit(out) => [out, 1],
                AsciiAction::Space | AsciiAction::Remove => [b, 0],
            };
        }
        let ascii_as_is = (0u8..)
            .zip(ascii_actions)
            .filter(|&(b, action)| action == AsciiAction::Emit(b))
            .fold(0u128, |bits, (b, _)| bits | 1 << b);
        Normalizer {
            options,
            ascii_actions,
            ascii_compaction,
            ascii_as_is,
        }
    }

    /// The options this normaliser applies.
    pub fn options(&self) -> &NormalizeOptions {
        &self.options
    }

    /// Normalises `text` into `out` (cleared first), reusing its allocation.
    ///
    /// Pure-ASCII stretches (split off at boundaries no Unicode rule crosses) take a
    /// byte-level pass; only the stretches around non-ASCII characters pay for Unicode
    /// normalisation and full lower-casing.
    pub fn normalize_into(&self, text: &str, out: &mut String) {
        self.normalize_marking(text, out, |_| {});
    }

    /// [`Normalizer::normalize_into`], calling `mark` with the byte range of `out` that each
    /// non-ASCII stretch of `text` became: every non-ASCII byte of `out` is in one of them (the
    /// ASCII stretches give ASCII only), so that the shingler searches those ranges for
    /// non-ASCII characters instead of the whole text again.
    pub(crate) fn normalize_marking(
        &self,
        text: &str,
        out: &mut String,
        mut mark: impl FnMut(Range<usize>),
    ) {
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
                let start = sink.out.len();
                self.unicode_pass(stretch, &mut sink);
                mark(start..sink.out.len());
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
            if self.options.whitespace == WhitespacePolicy::Keep {
                let start = sink.out.len();
                sink.out.extend_from_slice(bytes);
                if self.options.lowercase {
                    sink.out[start..].make_ascii_lowercase();
                }
            } else {
                sink.append_ascii_words(bytes, self.options.lowercase);
            }
            return;
        }
        if self.options.whitespace == WhitespacePolicy::Remove {
            // Every byte is either written or dropped: a branch-free compaction (write it, then
            // advance past it only if it is kept).
            let start = sink.out.len();
            sink.out.resize(start + bytes.len(), 0);
            let mut end = start;
            for &b in bytes {
                let [out, kept] = self.ascii_compaction[usize::from(b & 0x7f)];
                sink.out[end] = out;
                end += usize::from(kept);
            }
            sink.out.truncate(end);
            sink.last_space &= end == start;
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
        if self.options.unicode == UnicodeForm::Nfkc
            && self.options.lowercase
            && self.options.word_chars == WordChars::Unicode
            && self.table_pass(text, sink)
        {
            return;
        }
        let composed: Cow<'_, str> = match self.options.unicode {
            UnicodeForm::Nfkc
                if !CharTable::get().nfkc_stable(text)
                    && is_nfkc_quick(text.chars()) != IsNormalized::Yes =>
            {
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
            // Without a capital sigma, `str::to_lowercase` is `char::to_lowercase` of each
            // character: lowered on the way to the sink, no string built.
            (true, WordChars::Unicode) if !folded.contains('Σ') => {
                for c in folded.chars() {
                    match CharTable::get().lookup(c) {
                        Some((lower, class)) => sink.push(lower, class, self.options.punctuation),
                        None => c.to_lowercase().for_each(|c| self.push_char(c, sink)),
                    }
                }
                return;
            }
            (true, WordChars::Unicode) => folded.to_lowercase().into(),
            (true, WordChars::PythonRe) => {
                let mut lowered = String::with_capacity(folded.len());
                crate::python_compat::lower(&folded, &mut lowered);
                lowered.into()
            }
        };
        lowered.chars().for_each(|c| self.push_char(c, sink));
    }

    /// The common case of [`Normalizer::unicode_pass`] under NFKC with lower-casing and
    /// Unicode word characters, in one pass: when the [`CharTable`] says NFKC leaves every
    /// character of `text` alone and gives each its one-character lower case (no capital sigma,
    /// whose lower case depends on its neighbours), the characters go to the sink as the general
    /// path would send them, without NFKC's quick check, a search for sigma or a second walk.
    /// Otherwise the sink is put back as it was and false returned.
    ///
    /// A run of characters that go to the output as they stand (word characters that are their
    /// own lower case, all of a Chinese stretch, and punctuation such as `§`, `·` or `’` when it
    /// is kept) goes to the sink as one copy of its bytes, as pushing them one by one would
    /// write them. Such ASCII bytes (most of a stretch: the word around a `’`) are told by one
    /// bit test ([`Normalizer::ascii_as_is`]), without decoding them or looking them up.
    fn table_pass(&self, text: &str, sink: &mut Sink) -> bool {
        let table = CharTable::get();
        let bytes = text.as_bytes();
        let keep_punctuation = self.options.punctuation == PunctuationPolicy::Keep;
        let (written, last_space) = (sink.out.len(), sink.last_space);
        // Where the run of characters still to be copied as they stand begins.
        let mut run = 0;
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            if byte < 0x80 {
                at += 1;
                if self.ascii_as_is >> byte & 1 == 0 {
                    // An upper-case letter, white space or punctuation the options change:
                    // what the table gives it, from the options' ASCII actions.
                    sink.push_words(&bytes[run..at - 1]);
                    self.push_ascii(byte, sink);
                    run = at;
                }
                continue;
            }
            let Some(c) = text.get(at..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            let next = at + c.len_utf8();
            // The CJK Unified Ideographs, most characters of Chinese text, are what the table
            // says without its look-up (a cache miss on a text that spreads over its pages):
            // each its own lower case, a word character, left alone by NFKC
            // (`cjk_ideographs_are_plain_words_in_the_table`).
            if !CharTable::CJK_IDEOGRAPHS.contains(&c) {
                // A character NFKC leaves alone that is its own lower case, a word character
                // or kept punctuation (`§`, `·`, `’`), told by comparing its entry whole.
                let entry = table.entry_of(c) as u32;
                let as_is = (c as u32) << 3 | CharTable::STABLE;
                if entry == as_is | CharTable::WORD
                    || (keep_punctuation && entry == as_is | CharTable::OTHER)
                {
                    at = next;
                    continue;
                }
                match table.stable_lookup(c) {
                    Some((lower, CharClass::Word)) if lower == c => {}
                    Some((lower, CharClass::Other)) if lower == c && keep_punctuation => {}
                    Some((lower, class)) => {
                        sink.push_words(&bytes[run..at]);
                        sink.push(lower, class, self.options.punctuation);
                        run = next;
                    }
                    None => {
                        sink.out.truncate(written);
                        sink.last_space = last_space;
                        return false;
                    }
                }
            }
            at = next;
        }
        sink.push_words(&bytes[run..]);
        true
    }

    /// Pushes ASCII `byte` to `sink` as the table pass would push its [`CharTable`] entry (its
    /// lower case, under the punctuation and white-space policies), by the byte's action.
    #[inline]
    fn push_ascii(&self, byte: u8, sink: &mut Sink) {
        match self.ascii_actions[usize::from(byte & 0x7f)] {
            AsciiAction::Emit(out) => {
                sink.out.push(out);
                sink.last_space = false;
            }
            AsciiAction::Space if is_ascii_space(byte) => sink.push_space(char::from(byte)),
            AsciiAction::Space => sink.push_space(' '),
            AsciiAction::Remove => {}
        }
    }

    /// Pushes `c` to `sink` under the character policies.
    #[inline]
    fn push_char(&self, c: char, sink: &mut Sink) {
        sink.push(
            c,
            classify(c, self.options.word_chars),
            self.options.punctuation,
        );
    }
}

/// Facts about the characters of the Basic Multilingual Plane that lower-case to one
/// character, worked out once per process, a page of 256 characters at a time on first use:
/// `char::to_lowercase`, the class (under [`WordChars::Unicode`]) of its result, and whether
/// NFKC leaves the character alone wherever it stands (its NFKC quick check is Yes and its
/// combining class 0); for a character NFKC does change, what it becomes when that is one such
/// stable character (full-width `，` is `,`, half-width `ｶ` is `カ`). The Unicode pass looks
/// them up instead of searching Unicode's tables at every occurrence (`§`, `·` and `’` are most
/// of the non-ASCII characters of prose; Chinese, Japanese and Korean text is all of them).
struct CharTable {
    /// Per page of 256 characters, its entries: the low half 0 when the character is not
    /// covered, else its lower case `<< 3`, [`CharTable::STABLE`] when NFKC leaves it alone,
    /// and the class + 1 in the low two bits; the high half, for a character NFKC changes into
    /// one stable character, the same of that character (its lower case and class), else 0.
    pages: Box<[OnceLock<Box<[u64]>>]>,
}

impl CharTable {
    /// The first character not covered (the end of the BMP).
    const END: u32 = 0x1_0000;
    /// Characters per page.
    const PAGE: u32 = 256;
    /// The CJK Unified Ideographs block, whose every character the table gives as its own
    /// lower case, a word character that NFKC leaves alone.
    const CJK_IDEOGRAPHS: std::ops::RangeInclusive<char> = '\u{4e00}'..='\u{9fff}';
    /// The entry bit of a character NFKC leaves alone.
    const STABLE: u32 = 4;
    /// The class bits of an entry for a word character.
    const WORD: u32 = 1;
    /// The class bits of an entry for a character neither word nor white space.
    const OTHER: u32 = 3;

    /// The process's table (its pages are built on first use).
    fn get() -> &'static CharTable {
        static TABLE: OnceLock<CharTable> = OnceLock::new();
        TABLE.get_or_init(|| CharTable {
            pages: (0..Self::END / Self::PAGE)
                .map(|_| OnceLock::new())
                .collect(),
        })
    }

    /// The entry of `c` (0 when not covered), its page built if it is the first asked for.
    #[inline]
    fn entry_of(&self, c: char) -> u64 {
        let code = c as u32;
        let Some(page) = self.pages.get((code / Self::PAGE) as usize) else {
            return 0;
        };
        let page = page.get_or_init(|| {
            let first = code & !(Self::PAGE - 1);
            (first..first + Self::PAGE).map(Self::entry).collect()
        });
        page[(code % Self::PAGE) as usize]
    }

    /// The entry of the character numbered `code`.
    fn entry(code: u32) -> u64 {
        let Some(c) = char::from_u32(code) else {
            return 0;
        };
        let plain = Self::plain_entry(c);
        if plain == 0 || plain & Self::STABLE != 0 {
            return u64::from(plain);
        }
        // NFKC changes `c`. Into one character that it leaves alone (quick check Yes: no
        // neighbour composes with it; combining class 0: none is reordered around it), that
        // character stands for `c` wherever `c` stands, as in the whole text's NFKC; capital
        // sigma is left out (its lower case depends on its neighbours).
        let mut nfkc = std::iter::once(c).nfkc();
        let folded = match (nfkc.next(), nfkc.next()) {
            (Some(one), None) if one != 'Σ' => Self::plain_entry(one),
            _ => 0,
        };
        let folded = if folded & Self::STABLE != 0 {
            folded
        } else {
            0
        };
        u64::from(folded) << 32 | u64::from(plain)
    }

    /// The low half of an entry: `c`'s lower case, class and stability.
    fn plain_entry(c: char) -> u32 {
        let mut lower = c.to_lowercase();
        match (lower.next(), lower.next()) {
            (Some(one), None) => {
                let class = match classify(one, WordChars::Unicode) {
                    CharClass::Word => Self::WORD,
                    CharClass::Space => 2,
                    CharClass::Other => Self::OTHER,
                };
                let stable = is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
                    && canonical_combining_class(c) == 0;
                (u32::from(one) << 3) | (u32::from(stable) * Self::STABLE) | class
            }
            _ => 0,
        }
    }

    /// The lower case of `c` and its class, if the table covers `c`.
    #[inline]
    fn lookup(&self, c: char) -> Option<(char, CharClass)> {
        Self::decode(self.entry_of(c) as u32)
    }

    /// What NFKC then lower-casing make of `c` wherever it stands, and its class: `c`'s own
    /// lower case when NFKC leaves `c` alone, else that of the one stable character NFKC turns
    /// it into; `None` for the others (capital sigma too).
    #[inline]
    fn stable_lookup(&self, c: char) -> Option<(char, CharClass)> {
        let entry = self.entry_of(c);
        if entry as u32 & Self::STABLE != 0 && c != 'Σ' {
            return Self::decode(entry as u32);
        }
        Self::decode((entry >> 32) as u32)
    }

    /// The lower case and class an entry holds (`None` for an uncovered character).
    #[inline]
    fn decode(entry: u32) -> Option<(char, CharClass)> {
        let class = match entry & 3 {
            1 => CharClass::Word,
            2 => CharClass::Space,
            3 => CharClass::Other,
            _ => return None,
        };
        Some((char::from_u32(entry >> 3)?, class))
    }

    /// Whether NFKC leaves `text` as it is because the table says so of each of its
    /// characters (false says nothing: ask `is_nfkc_quick`).
    fn nfkc_stable(&self, text: &str) -> bool {
        text.chars()
            .all(|c| c.is_ascii() || self.entry_of(c) as u32 & Self::STABLE != 0)
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

    /// Pushes word characters (UTF-8 `bytes`), as [`Sink::push`] of each would under any
    /// punctuation policy.
    #[inline]
    fn push_words(&mut self, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.out.extend_from_slice(bytes);
            self.last_space = false;
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

    /// Appends ASCII `bytes` under the collapse or remove white-space policy, lower-cased when
    /// asked. A 64-byte block at a time with AVX-512 ([`avx512::copy_block`]), else eight bytes
    /// at a time (SWAR), while a block holds no white space but single spaces that the policy
    /// keeps as they are (the common case in prose); byte by byte around anything else. The
    /// bytes are written straight into the buffer's spare capacity (no zero-filling first).
    fn append_ascii_words(&mut self, bytes: &[u8], lowercase: bool) {
        let words = AsciiWords {
            collapse: self.whitespace == WhitespacePolicy::Collapse,
            lowercase,
        };
        let start = self.out.len();
        // Room for every byte, plus the slack of one whole-word store.
        self.out.reserve(bytes.len() + 8);
        let out = &mut self.out.spare_capacity_mut()[..bytes.len() + 8];
        let mut end = 0;
        // Under collapse, white space at the very start of the output is dropped: as if a
        // space had just been written.
        let mut last_space = self.last_space || start == 0;
        let wide = avx512::available();
        let mut blocks = bytes.chunks_exact(avx512::BLOCK);
        for block in &mut blocks {
            if wide {
                // SAFETY: the processor has the features (checked above).
                let copied =
                    unsafe { avx512::copy_block(block, &mut out[end..], words, &mut last_space) };
                if copied {
                    end += block.len();
                    continue;
                }
            }
            words.append(block, out, &mut end, &mut last_space);
        }
        let rest = blocks.remainder();
        // SAFETY: as above.
        if wide && unsafe { avx512::copy_block(rest, &mut out[end..], words, &mut last_space) } {
            end += rest.len();
        } else {
            words.append(rest, out, &mut end, &mut last_space);
        }
        // SAFETY: `out[..end]`, the `end` bytes after `start`, were all written above
        // (`AsciiWords::append` and `avx512::copy_block` write every byte they count), and
        // `reserve` made room for them.
        unsafe { self.out.set_len(start + end) };
        self.last_space = last_space && !self.out.is_empty();
    }
}

/// How [`Sink::append_ascii_words`] treats ASCII bytes.
#[derive(Debug, Clone, Copy)]
struct AsciiWords {
    /// Collapse white space (else remove it).
    collapse: bool,
    /// Lower-case letters.
    lowercase: bool,
}

impl AsciiWords {
    /// Writes `bytes` as the policy says at `out[*end..]` (which has room for all of them plus
    /// eight), eight bytes at a time while a word needs no change but lower-casing.
    fn append(
        self,
        bytes: &[u8],
        out: &mut [MaybeUninit<u8>],
        end: &mut usize,
        last_space: &mut bool,
    ) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let spaceish = ascii_at_most_space(word);
            let spaces = ascii_spaces(word);
            let untouched = if self.collapse {
                spaceish == spaces && spaces & (spaces << 8 | u64::from(*last_space) << 7) == 0
            } else {
                spaceish == 0
            };
            if untouched {
                let word = if self.lowercase {
                    ascii_lower(word)
                } else {
                    word
                };
                for (slot, byte) in out[*end..*end + 8].iter_mut().zip(word.to_le_bytes()) {
                    slot.write(byte);
                }
                *end += 8;
                *last_space = spaces >> 63 != 0;
                continue;
            }
            for &b in chunk {
                self.push(b, out, end, last_space);
            }
        }
        for &b in chunks.remainder() {
            self.push(b, out, end, last_space);
        }
    }

    /// One byte of the slow path, written at `out[*end]`.
    #[inline]
    fn push(self, b: u8, out: &mut [MaybeUninit<u8>], end: &mut usize, last_space: &mut bool) {
        if is_ascii_space(b) {
            if self.collapse && !*last_space {
                out[*end].write(b' ');
                *end += 1;
                *last_space = true;
            }
        } else {
            out[*end].write(if self.lowercase {
                b.to_ascii_lowercase()
            } else {
                b
            });
            *end += 1;
            *last_space = false;
        }
    }
}

mod avx512 {
    //! A 64-byte block of ASCII prose copied, lower-cased, in four instructions when it needs
    //! nothing else: no white space but single spaces (collapse) or none at all (remove). The
    //! shorter last block of a stretch goes the same way under a byte mask.

    #[cfg(target_arch = "x86_64")]
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    use super::AsciiWords;

    /// Bytes per block.
    pub(super) const BLOCK: usize = 64;

    /// Whether this processor runs [`copy_block`].
    pub(super) fn available() -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            is_x86_feature_detected!("avx512f") && is_x86_feature_detected!("avx512bw")
        }
        #[cfg(not(target_arch = "x86_64"))]
        false
    }

    /// Copies the ASCII bytes of `block` (1 to 64 of them; a shorter block is loaded and
    /// stored under a mask) into `out[..block.len()]`, lower-cased when asked, if the policy
    /// keeps every one of them as it is, and says whether it did; `last_space` tells and is
    /// told whether the output ends with a space.
    ///
    /// # Safety
    /// The processor must have AVX-512 F and BW ([`available`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    pub(super) unsafe fn copy_block(
        block: &[u8],
        out: &mut [MaybeUninit<u8>],
        words: AsciiWords,
        last_space: &mut bool,
    ) -> bool {
        let len = block.len();
        if len == 0 || len > BLOCK || out.len() < len {
            return false;
        }
        let mask = u64::MAX >> (BLOCK - len);
        // SAFETY: the caller guarantees the features; the masked load reads `block[..len]` and
        // the masked store writes `out[..len]`, both checked long enough above (masked-off
        // bytes are neither read nor written and do not fault; unaligned accesses).
        unsafe {
            let bytes = _mm512_maskz_loadu_epi8(mask, block.as_ptr().cast());
            let spaceish = _mm512_cmple_epu8_mask(bytes, _mm512_set1_epi8(0x20)) & mask;
            let spaces = _mm512_cmpeq_epi8_mask(bytes, _mm512_set1_epi8(0x20)) & mask;
            let untouched = if words.collapse {
                spaceish == spaces && spaces & (spaces << 1 | u64::from(*last_space)) == 0
            } else {
                spaceish == 0
            };
            if !untouched {
                return false;
            }
            let upper = _mm512_cmplt_epu8_mask(
                _mm512_sub_epi8(bytes, _mm512_set1_epi8(b'A' as i8)),
                _mm512_set1_epi8(26),
            );
            let lowered = if words.lowercase {
                _mm512_mask_add_epi8(bytes, upper, bytes, _mm512_set1_epi8(0x20))
            } else {
                bytes
            };
            _mm512_mask_storeu_epi8(out.as_mut_ptr().cast(), mask, lowered);
            *last_space = (spaces >> (len - 1)) & 1 != 0;
            true
        }
    }

    /// Without x86-64 there is no wide path ([`available`] is false).
    #[cfg(not(target_arch = "x86_64"))]
    pub(super) unsafe fn copy_block(
        _block: &[u8],
        _out: &mut [MaybeUninit<u8>],
        _words: AsciiWords,
        _last_space: &mut bool,
    ) -> bool {
        false
    }
}

/// Whether `b` is white space (the ASCII part of Unicode's White_Space property).
fn is_ascii_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = ONES * 0x80;

/// The high bit of each byte of ASCII `word` that is at most 0x20 (white space and control
/// characters). Exact: no byte addition carries into the next byte for inputs below 0x80.
fn ascii_at_most_space(word: u64) -> u64 {
    !word.wrapping_add(ONES * (0x80 - 0x21)) & HIGH
}

/// The high bit of each byte of ASCII `word` that is a space (0x20). Exact, as above.
fn ascii_spaces(word: u64) -> u64 {
    let x = word ^ (ONES * 0x20);
    !(x.wrapping_add(ONES * 0x7f) | x) & HIGH
}

/// ASCII `word` with its upper-case letters lower-cased.
fn ascii_lower(word: u64) -> u64 {
    let at_least_a = word.wrapping_add(ONES * (0x80 - u64::from(b'A')));
    let beyond_z = word.wrapping_add(ONES * (0x80 - u64::from(b'Z') - 1));
    word | ((at_least_a & !beyond_z & HIGH) >> 2)
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
    fn the_char_table_is_lowercase_class_and_nfkc_stability() {
        let table = CharTable::get();
        let mut covered = 0;
        for c in (0..CharTable::END + 16).filter_map(char::from_u32) {
            let lower: Vec<char> = c.to_lowercase().collect();
            match table.lookup(c) {
                Some((one, class)) => {
                    assert_eq!(lower, [one], "{c:?}");
                    assert_eq!(class, classify(one, WordChars::Unicode), "{c:?}");
                    let stable = is_nfkc_quick(std::iter::once(c)) == IsNormalized::Yes
                        && canonical_combining_class(c) == 0;
                    assert_eq!(table.nfkc_stable(&c.to_string()), stable, "{c:?}");
                    covered += 1;
                }
                None => assert!(lower.len() > 1 || c as u32 >= CharTable::END, "{c:?}"),
            }
        }
        assert!(covered > 10_000, "{covered}");
    }

    /// The ASCII bytes the table pass copies without a look-up are exactly those the table
    /// says go to the output as they stand (their own lower case, a word character or kept
    /// punctuation), under every punctuation policy.
    #[test]
    fn ascii_as_is_is_what_the_table_says() {
        let table = CharTable::get();
        for punctuation in [
            PunctuationPolicy::Keep,
            PunctuationPolicy::Remove,
            PunctuationPolicy::Space,
        ] {
            let normalizer = Normalizer::new(NormalizeOptions {
                punctuation,
                ..NormalizeOptions::web()
            });
            for b in 0u8..128 {
                let c = char::from(b);
                let as_is = match table.stable_lookup(c) {
                    Some((lower, CharClass::Word)) => lower == c,
                    Some((lower, CharClass::Other)) => {
                        lower == c && punctuation == PunctuationPolicy::Keep
                    }
                    _ => false,
                };
                assert_eq!(
                    normalizer.ascii_as_is >> b & 1 != 0,
                    as_is,
                    "{c:?} {punctuation:?}"
                );
            }
        }
    }

    /// Every ASCII byte pushed by its action ([`Normalizer::push_ascii`]) writes what pushing
    /// its table entry writes, under every punctuation and white-space policy, after a space
    /// or not, into an empty output or not.
    #[test]
    fn push_ascii_is_the_table_entry_pushed() {
        let table = CharTable::get();
        let policies = [
            PunctuationPolicy::Keep,
            PunctuationPolicy::Remove,
            PunctuationPolicy::Space,
        ];
        let spaces = [
            WhitespacePolicy::Keep,
            WhitespacePolicy::Remove,
            WhitespacePolicy::Collapse,
        ];
        for (punctuation, whitespace) in policies
            .into_iter()
            .flat_map(|p| spaces.into_iter().map(move |w| (p, w)))
        {
            let normalizer = Normalizer::new(NormalizeOptions {
                punctuation,
                whitespace,
                ..NormalizeOptions::web()
            });
            for (b, before, last_space) in
                (0u8..128).flat_map(|b| [(b, "", false), (b, "x", false), (b, "x ", true)])
            {
                let sink = || Sink {
                    out: before.as_bytes().to_vec(),
                    last_space,
                    whitespace,
                };
                let (mut by_action, mut by_table) = (sink(), sink());
                normalizer.push_ascii(b, &mut by_action);
                let (lower, class) = table.stable_lookup(char::from(b)).expect("ASCII");
                by_table.push(lower, class, punctuation);
                let case = format!("{b:#x} {punctuation:?} {whitespace:?} {before:?}");
                assert_eq!(by_action.out, by_table.out, "{case}");
                assert_eq!(by_action.last_space, by_table.last_space, "{case}");
            }
        }
    }

    /// What the general path makes of `text` under the web profile's options with
    /// `punctuation`: whole-text NFKC, lower case (final sigma in context), then the
    /// punctuation and white-space policies.
    fn general_reference(text: &str, punctuation: PunctuationPolicy) -> String {
        let mut general = String::new();
        let lowered: String = text.nfkc().collect::<String>().to_lowercase();
        for c in lowered.chars() {
            match (classify(c, WordChars::Unicode), punctuation) {
                (CharClass::Space, _) | (CharClass::Other, PunctuationPolicy::Space) => {
                    general.push(' ')
                }
                (CharClass::Other, PunctuationPolicy::Remove) => {}
                _ => general.push(c),
            }
        }
        general.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// The table pass takes the CJK Unified Ideographs without a look-up: each must be what
    /// the table says of it (checked for every one of them).
    #[test]
    fn cjk_ideographs_are_plain_words_in_the_table() {
        let table = CharTable::get();
        for c in CharTable::CJK_IDEOGRAPHS {
            assert_eq!(table.stable_lookup(c), Some((c, CharClass::Word)), "{c:?}");
            assert_ne!(table.entry_of(c) as u32 & CharTable::STABLE, 0, "{c:?}");
        }
    }

    /// Every character of the BMP the one-pass table path takes (NFKC leaves it alone, or
    /// turns it into one character it leaves alone) normalises as the whole text does alone,
    /// between letters, doubled, and next to a character NFKC changes.
    #[test]
    fn every_table_character_normalises_as_the_whole_text() {
        let table = CharTable::get();
        let mut folded = 0;
        for c in (0..CharTable::END).filter_map(char::from_u32) {
            let Some((lower, _)) = table.stable_lookup(c) else {
                continue;
            };
            folded += usize::from(table.entry_of(c) as u32 & CharTable::STABLE == 0);
            let nfkc: String = std::iter::once(c).nfkc().collect();
            assert_eq!(nfkc.to_lowercase(), lower.to_string(), "{c:?}");
            for text in [
                format!("{c}"),
                format!("a{c}b"),
                format!("{c}{c}"),
                format!("\u{FF21}{c}\u{FF76}"),
            ] {
                let options = NormalizeOptions::web();
                assert_eq!(
                    norm(options, &text),
                    general_reference(&text, PunctuationPolicy::Keep),
                    "{text:?}"
                );
            }
        }
        assert!(folded > 1_000, "{folded}");
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
        let o = crate::Profile::python_simhash().normalize;
        assert_eq!(norm(o, "Cafe\u{301} au lait!"), "cafeaulait");
        assert_eq!(norm(o, "美国“51区”"), "美国51区");
    }

    #[test]
    fn word_at_a_time_helpers_are_exact_on_every_ascii_byte() {
        for b in 0u8..128 {
            for neighbour in [0u8, b' ', b'Z', 0x7f] {
                for at in 0..8 {
                    let mut bytes = [neighbour; 8];
                    bytes[at] = b;
                    let word = u64::from_le_bytes(bytes);
                    let flag = |mask: u64| (mask >> (8 * at + 7)) & 1 == 1;
                    assert_eq!(flag(ascii_at_most_space(word)), b <= 0x20, "{b:#x}");
                    assert_eq!(flag(ascii_spaces(word)), b == b' ', "{b:#x}");
                    let mut lowered = bytes;
                    lowered.make_ascii_lowercase();
                    assert_eq!(ascii_lower(word).to_le_bytes(), lowered, "{b:#x}");
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Stretch-wise normalisation equals whole-text NFKC, lower-casing and collapsing.
        #[test]
        fn stretches_equal_whole_text_normalisation(
            text in "[aBzZ@\\[`{1 .\t\n\r\u{b}\u{c}\u{1}\u{1f}\u{301}é\u{FF21}ΣΑ\u{3000}\u{A0}ﬁ²]{0,80}"
        ) {
            let reference: String = text.nfkc().collect::<String>().to_lowercase();
            let reference = reference.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(norm(NormalizeOptions::web(), &text), reference);
        }

        /// Words around the non-ASCII characters of prose (the one-pass table path), and
        /// around those it hands to the general path (capital sigma, NFKC-unstable, multi-
        /// character lower case, beyond the table), normalise as the whole-text reference does
        /// under every punctuation policy.
        #[test]
        fn table_pass_equals_whole_text_normalisation(
            text in "(([a-zA-Z0-9,.]{0,6}[§·’©→«»éÉßÆœ\u{A0}Σσς΄İ美ＡﬁǅK\u{301}的한の，：（）ｶﾞ\u{3099}Ϲ㎏…\u{11A8}가ℌÅ\u{F900}\u{2F00}\u{3000}]{1,3}[a-zA-Z,.]{0,6})[ \n\t]{1,2}){0,40}",
            punctuation in proptest::sample::select(vec![PunctuationPolicy::Keep, PunctuationPolicy::Remove, PunctuationPolicy::Space]),
        ) {
            let options = NormalizeOptions { punctuation, ..NormalizeOptions::web() };
            let mut general = String::new();
            let lowered: String = text.nfkc().collect::<String>().to_lowercase();
            for c in lowered.chars() {
                match (classify(c, WordChars::Unicode), punctuation) {
                    (CharClass::Space, _) | (CharClass::Other, PunctuationPolicy::Space) => general.push(' '),
                    (CharClass::Other, PunctuationPolicy::Remove) => {}
                    _ => general.push(c),
                }
            }
            let reference = general.split_whitespace().collect::<Vec<_>>().join(" ");
            proptest::prop_assert_eq!(norm(options, &text), reference);
        }

        /// Chinese, Japanese and Korean text (long stretches without white space, full- and
        /// half-width forms NFKC folds, kana that compose with a following voiced mark,
        /// Hangul syllables and trailing jamo, compatibility ideographs) normalises as the
        /// whole-text reference does under every punctuation policy.
        #[test]
        fn cjk_stretches_equal_whole_text_normalisation(
            text in "[a-zA-Z0-9,.的是中文数据用型한국어를다니の日本語をすまガカｶｷﾞﾟ\u{3099}\u{309A}゛，。、：；（）！？「」ＡＺａ０\u{3000}\u{11A8}\u{1100}\u{1161}가각\u{F900}\u{FA10}\u{2F00}㎏…Ϲ΄Σ ]{0,120}",
            punctuation in proptest::sample::select(vec![PunctuationPolicy::Keep, PunctuationPolicy::Remove, PunctuationPolicy::Space]),
        ) {
            let options = NormalizeOptions { punctuation, ..NormalizeOptions::web() };
            proptest::prop_assert_eq!(norm(options, &text), general_reference(&text, punctuation));
        }

        /// Long prose-like text (the 64-byte blocks of the wide path, single and double white
        /// space, the odd non-ASCII word) normalises as the whole-text reference does, under
        /// collapse and under removal of white space.
        #[test]
        fn prose_blocks_equal_whole_text_normalisation(
            text in "(([a-zA-Z0-9,.]{1,9}|Éé|ΣΑ|ﬁ|İx|ẞ)[ \n\t]{1,2}){0,90}",
            remove in proptest::bool::ANY,
        ) {
            let options = NormalizeOptions {
                whitespace: if remove { WhitespacePolicy::Remove } else { WhitespacePolicy::Collapse },
                ..NormalizeOptions::web()
            };
            let lowered: String = text.nfkc().collect::<String>().to_lowercase();
            let words: Vec<&str> = lowered.split_whitespace().collect();
            let reference = words.join(if remove { "" } else { " " });
            proptest::prop_assert_eq!(norm(options, &text), reference);
        }

        /// The wide path copies a block (whole, or shorter under a mask) exactly as the
        /// eight-byte path writes it, or declines.
        #[test]
        fn wide_blocks_equal_the_word_path(
            prose in "([a-zA-Z@\\[`{~.]{1,7} ){8,16}",
            len in proptest::prop_oneof![proptest::strategy::Just(avx512::BLOCK), 1..avx512::BLOCK],
            noise in proptest::option::of((0..avx512::BLOCK, proptest::sample::select(b" \n\t\x01".to_vec()))),
            collapse in proptest::bool::ANY,
            lowercase in proptest::bool::ANY,
            last_space in proptest::bool::ANY,
        ) {
            // The wide path exists only on processors with AVX-512 (those CI has run on so
            // far); elsewhere it is never taken, and there is nothing to compare. An
            // assumption here made every case a reject, which aborts the test on such a
            // processor.
            if !avx512::available() {
                return Ok(());
            }
            // Single spaces throughout (the string ends with one and starts with none), maybe
            // one byte that needs the slow path.
            let mut block: Vec<u8> = prose.bytes().cycle().take(len).collect();
            if let Some((at, byte)) = noise.filter(|&(at, _)| at < len) {
                block[at] = byte;
            }
            let words = AsciiWords { collapse, lowercase };
            let mut narrow = vec![MaybeUninit::new(0u8); avx512::BLOCK + 8];
            let (mut end, mut narrow_space) = (0, last_space);
            words.append(&block, &mut narrow, &mut end, &mut narrow_space);
            let mut wide = vec![MaybeUninit::new(0u8); avx512::BLOCK];
            let mut wide_space = last_space;
            // SAFETY: the features were checked above.
            if unsafe { avx512::copy_block(&block, &mut wide, words, &mut wide_space) } {
                // SAFETY: every byte of both buffers was initialised when they were made.
                let bytes = |v: &[MaybeUninit<u8>]| v.iter().map(|b| unsafe { b.assume_init() }).collect::<Vec<u8>>();
                proptest::prop_assert_eq!(end, len);
                proptest::prop_assert_eq!(bytes(&wide[..len]), bytes(&narrow[..end]));
                proptest::prop_assert_eq!(wide_space, narrow_space);
            }
        }

        /// The same without lower-casing and with white space removed.
        #[test]
        fn whitespace_removal_equals_whole_text_removal(
            text in "[aBzZ@\\[`{1 .\t\n\r\u{b}\u{c}\u{1}\u{1f}\u{301}é\u{FF21}ΣΑ\u{3000}\u{A0}ﬁ²]{0,80}"
        ) {
            let options = NormalizeOptions {
                lowercase: false,
                whitespace: WhitespacePolicy::Remove,
                ..NormalizeOptions::web()
            };
            let reference: String = text.nfkc().filter(|c| !c.is_whitespace()).collect();
            proptest::prop_assert_eq!(norm(options, &text), reference);
        }
    }
}
