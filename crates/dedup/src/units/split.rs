//! A text cut into units ([`Segment`]s) and the keys of their normalised text.

use std::ops::Range;

use neardup_core::hash::{FeatureHasher, Xxh3};
use neardup_core::normalize::{NormalizeOptions, Normalizer};

use neardup_core::tokenize::Tokenizer;

use super::{NgramRule, Unit, UnitRule};

/// One unit of a text, as byte offsets: its content `start..content_end`, and the white space
/// after it up to the next unit (or the end) `content_end..end`. A text's segments cover it
/// whole, the first from offset 0 (white space before the first unit goes with it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Where the segment starts.
    pub start: usize,
    /// Where the unit's content ends.
    pub content_end: usize,
    /// Where the segment ends: the start of the next, or the text's end.
    pub end: usize,
}

/// A document's units and keys, and which units a key decides ([`Cover`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentUnits {
    /// The units, in text order.
    pub segments: Vec<Segment>,
    /// The keys, in text order.
    pub keys: Vec<u64>,
    /// How the keys' seen flags decide the units.
    pub cover: Cover,
}

/// How the seen flags of a document's keys decide which of its units go.
#[derive(Debug, Clone, PartialEq)]
pub enum Cover {
    /// The exact rule: key `i` covers `n` units from unit `i` (every unit of a document that
    /// has fewer), removed when the key was seen (`n` is 1 for paragraphs and lines).
    Window(usize),
    /// The fraction rule: unit `i` has the keys `starts[i]..starts[i + 1]`, and goes when at
    /// least `threshold` of them were seen.
    Fraction {
        /// Where each unit's keys start, and the end of the last.
        starts: Vec<u32>,
        /// The least fraction seen.
        threshold: f64,
    },
}

impl Default for Cover {
    fn default() -> Self {
        Cover::Window(1)
    }
}

impl DocumentUnits {
    /// The units key `i` covers under the exact rule: `n` of them from `i`, or every unit of
    /// a document that has fewer; under the fraction rule, the unit that has the key.
    pub fn covered(&self, i: usize) -> Range<usize> {
        match &self.cover {
            Cover::Window(n) => i..(i + n).min(self.segments.len()),
            Cover::Fraction { starts, .. } => {
                let unit = starts.partition_point(|&start| start as usize <= i) - 1;
                unit..unit + 1
            }
        }
    }

    /// Which units go, given the seen flag of each key.
    pub fn removed(&self, seen: &[bool]) -> Vec<bool> {
        let mut removed = vec![false; self.segments.len()];
        match &self.cover {
            Cover::Window(_) => {
                for (i, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
                    removed[self.covered(i)].fill(true);
                }
            }
            Cover::Fraction { starts, threshold } => {
                for (unit, keys) in starts.windows(2).enumerate() {
                    let keys = &seen[keys[0] as usize..keys[1] as usize];
                    let count = keys.iter().filter(|s| **s).count();
                    removed[unit] =
                        !keys.is_empty() && count as f64 >= threshold * keys.len() as f64;
                }
            }
        }
        removed
    }
}

/// Cuts texts into units and hashes their keys, under the policy's normalisation.
#[derive(Debug, Clone)]
pub struct UnitSplitter {
    unit: Unit,
    normalizer: Normalizer,
    ngrams: Option<NgramRule>,
}

impl UnitSplitter {
    /// A splitter for `unit`, normalising as `normalize` says (the policy's profile's), with
    /// the exact rule's keys.
    pub fn new(unit: Unit, normalize: NormalizeOptions) -> Self {
        UnitSplitter {
            unit,
            normalizer: Normalizer::new(normalize),
            ngrams: None,
        }
    }

    /// The splitter of `rule`: its unit, and n-gram keys under the fraction rule.
    pub fn of_rule(rule: &UnitRule, normalize: NormalizeOptions) -> Self {
        UnitSplitter {
            ngrams: rule.ngrams,
            ..Self::new(rule.unit, normalize)
        }
    }

    /// The units of `text`, without keys: of plain text if `extracted` is false, else of
    /// text extracted from HTML, which has one block element a line (a paragraph is then a
    /// line).
    pub fn segments(&self, text: &str, extracted: bool) -> Vec<Segment> {
        let contents = match self.unit {
            Unit::Paragraph if extracted => lines(text),
            Unit::Paragraph => paragraphs(text),
            Unit::Line => lines(text),
            Unit::Sentences(_) => sentences(text),
        };
        let mut segments: Vec<Segment> = Vec::with_capacity(contents.len());
        for (i, content) in contents.iter().enumerate() {
            segments.push(Segment {
                start: if i == 0 { 0 } else { content.start },
                content_end: content.end,
                end: contents.get(i + 1).map_or(text.len(), |next| next.start),
            });
        }
        segments
    }

    /// The units of the plain text `text` and their keys.
    pub fn split(&self, text: &str) -> DocumentUnits {
        self.split_as(text, false)
    }

    /// The units of `text` and their keys; `extracted`: the text was extracted from HTML
    /// (see [`UnitSplitter::segments`]).
    pub fn split_as(&self, text: &str, extracted: bool) -> DocumentUnits {
        let segments = self.segments(text, extracted);
        match self.ngrams {
            None => self.exact_keys(text, segments),
            Some(rule) => self.ngram_keys(text, segments, rule),
        }
    }

    /// The keys of the exact rule: one a unit, or one a window of `n` sentences.
    fn exact_keys(&self, text: &str, segments: Vec<Segment>) -> DocumentUnits {
        let window = self.unit.window();
        // Every unit normalised into one buffer, a newline between two: the units of a window
        // joined by newlines are then one slice of it.
        let mut joined = String::with_capacity(text.len() + segments.len());
        let mut ends: Vec<(usize, usize)> = Vec::with_capacity(segments.len());
        let mut unit = String::new();
        for segment in &segments {
            self.normalizer
                .normalize_into(&text[segment.start..segment.content_end], &mut unit);
            if !ends.is_empty() {
                joined.push('\n');
            }
            ends.push((joined.len(), joined.len() + unit.len()));
            joined.push_str(&unit);
        }
        let count = match segments.len() {
            0 => 0,
            n if n < window => 1,
            n => n - window + 1,
        };
        let keys = (0..count)
            .map(|i| {
                let last = (i + window).min(ends.len()) - 1;
                Xxh3.hash64(&joined.as_bytes()[ends[i].0..ends[last].1])
            })
            .collect();
        DocumentUnits {
            segments,
            keys,
            cover: Cover::Window(window),
        }
    }

    /// The keys of the fraction rule: each unit's n-grams of words (the 64-bit XXH3 of the
    /// n words' own hashes), or its whole normalised text when it has fewer than two.
    fn ngram_keys(&self, text: &str, segments: Vec<Segment>, rule: NgramRule) -> DocumentUnits {
        let n = rule.n as usize;
        let mut keys = Vec::with_capacity(text.len() / 5);
        let mut starts = Vec::with_capacity(segments.len() + 1);
        let mut unit = String::new();
        let mut words: Vec<u64> = Vec::new();
        let mut gram: Vec<u8> = Vec::with_capacity(n * 8);
        for segment in &segments {
            starts.push(keys.len() as u32);
            self.normalizer
                .normalize_into(&text[segment.start..segment.content_end], &mut unit);
            words.clear();
            Tokenizer::Words.for_each_token(&unit, |word| words.push(Xxh3.hash64(word.as_bytes())));
            if words.len() <= n {
                keys.push(Xxh3.hash64(unit.as_bytes()));
                continue;
            }
            for window in words.windows(n) {
                gram.clear();
                for word in window {
                    gram.extend_from_slice(&word.to_le_bytes());
                }
                keys.push(Xxh3.hash64(&gram));
            }
        }
        starts.push(keys.len() as u32);
        DocumentUnits {
            segments,
            keys,
            cover: Cover::Fraction {
                starts,
                threshold: rule.threshold,
            },
        }
    }
}

/// The lines of `text` with their content (without the line break), blank ones included.
fn all_lines(text: &str) -> impl Iterator<Item = (Range<usize>, bool)> + '_ {
    let mut start = 0;
    text.split_inclusive('\n').map(move |line| {
        let range = start..start + line.trim_end_matches(['\n', '\r']).len();
        start += line.len();
        let blank = text[range.clone()].trim().is_empty();
        (range, blank)
    })
}

/// Non-blank lines, trimmed of white space at either end.
fn lines(text: &str) -> Vec<Range<usize>> {
    all_lines(text)
        .filter(|(_, blank)| !blank)
        .map(|(range, _)| trimmed(text, range))
        .collect()
}

/// Runs of non-blank lines, trimmed of white space at either end.
fn paragraphs(text: &str) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    let mut open = false;
    for (range, blank) in all_lines(text) {
        match (blank, open, out.last_mut()) {
            (true, _, _) => open = false,
            (false, true, Some(last)) => last.end = range.end,
            (false, _, _) => {
                out.push(range);
                open = true;
            }
        }
    }
    out.into_iter().map(|range| trimmed(text, range)).collect()
}

/// Sentences: ended by a terminator (`.`, `!`, `?`, `…`, and closing quotes or brackets after
/// it) before white space, by `。`, `！`, `？`, and by line breaks; trimmed, empty ones left out.
/// A byte scan: every terminator but `…` and the full-width ones is ASCII, and the scan skips
/// 16 bytes at a time where none may end a sentence ([`next_candidate`]).
fn sentences(text: &str) -> Vec<Range<usize>> {
    sentences_skipping(text, next_candidate)
}

/// [`sentences`], going on from each position to the one `skip` gives (the next byte that may
/// end a sentence, or any before it).
fn sentences_skipping(text: &str, skip: impl Fn(&[u8], usize) -> usize) -> Vec<Range<usize>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let (mut start, mut at) = (0, 0);
    loop {
        at = skip(bytes, at);
        if at >= bytes.len() {
            break;
        }
        let rest = &bytes[at..];
        let is = |c: &str| rest.starts_with(c.as_bytes());
        let (end, next) = match bytes[at] {
            b'\n' => (Some(at), at + 1),
            b'.' | b'!' | b'?' => terminated(text, at + 1),
            0xE2 if is("…") => terminated(text, at + 3),
            0xE3 if is("。") => (Some(at + 3), at + 3),
            0xEF if is("！") || is("？") => (Some(at + 3), at + 3),
            _ => (None, at + 1),
        };
        if let Some(end) = end {
            push_trimmed(text, start..end, &mut out);
            start = end;
        }
        at = next;
    }
    push_trimmed(text, start..text.len(), &mut out);
    out
}

/// Whether the byte `b` may end a sentence: a line break, `.`, `!`, `?`, or a lead byte of
/// three (`…` is `E2 80 A6`, `。` `E3 80 82`, `！` and `？` `EF BC 81` and `EF BC 9F`; every
/// lead byte from `E2` on passes, and the scan looks closer).
#[inline(always)]
fn may_end(b: u8) -> bool {
    matches!(b, b'\n' | b'.' | b'!' | b'?') | (b >= 0xE2)
}

/// The first position from `at` on whose byte may end a sentence, or the end of `bytes`:
/// 16 bytes at a time (compared together, as vector instructions), then byte by byte.
fn next_candidate(bytes: &[u8], mut at: usize) -> usize {
    const LANES: usize = 16;
    while let Some(chunk) = bytes.get(at..at + LANES) {
        if chunk.iter().fold(false, |any, &b| any | may_end(b)) {
            break;
        }
        at += LANES;
    }
    while at < bytes.len() && !may_end(bytes[at]) {
        at += 1;
    }
    at
}

/// After a terminator ending at `at`: more terminators and closing quotes or brackets, then
/// the sentence's end if white space (or the text's end) follows; and where to scan on.
fn terminated(text: &str, mut at: usize) -> (Option<usize>, usize) {
    let mut rest = text[at..].chars();
    for c in rest.by_ref() {
        if !matches!(
            c,
            '.' | '!' | '?' | '…' | '"' | '\'' | '”' | '’' | ')' | ']'
        ) {
            let end = c.is_whitespace().then_some(at);
            return (end, at);
        }
        at += c.len_utf8();
    }
    (Some(at), at)
}

/// Pushes `range` trimmed, unless it holds only white space.
fn push_trimmed(text: &str, range: Range<usize>, out: &mut Vec<Range<usize>>) {
    let range = trimmed(text, range);
    if !range.is_empty() {
        out.push(range);
    }
}

/// `range` of `text` without white space at either end.
fn trimmed(text: &str, range: Range<usize>) -> Range<usize> {
    let part = &text[range.clone()];
    let start = range.start + (part.len() - part.trim_start().len());
    let end = range.start + part.trim_end().len();
    start..end.max(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(unit: Unit, text: &str) -> Vec<&str> {
        let splitter = UnitSplitter::new(unit, NormalizeOptions::web());
        let segments = splitter.segments(text, false);
        let mut end = 0;
        for s in &segments {
            assert!(s.start <= s.content_end && s.content_end <= s.end);
            end = s.end;
        }
        assert!(
            segments.is_empty() || end == text.len(),
            "segments cover the text"
        );
        segments
            .iter()
            .map(|s| text[s.start..s.content_end].trim_start())
            .collect()
    }

    #[test]
    fn paragraphs_are_blocks_between_blank_lines() {
        let text = "\n  Home | About\n\nFirst line\nsecond line.\n \t\n\nCookies.\n";
        assert_eq!(
            contents(Unit::Paragraph, text),
            ["Home | About", "First line\nsecond line.", "Cookies."]
        );
        assert_eq!(
            contents(Unit::Line, text),
            ["Home | About", "First line", "second line.", "Cookies."]
        );
        assert!(contents(Unit::Paragraph, " \n\n ").is_empty());
        let splitter = UnitSplitter::new(Unit::Paragraph, NormalizeOptions::web());
        let html = splitter.segments("Home | About\nFirst block\nSecond block", true);
        assert_eq!(html.len(), 3, "extracted HTML: a block element a line");
    }

    #[test]
    fn sentences_end_at_terminators_before_space_and_at_line_breaks() {
        let text = "Dr. Smith said \"Go!\" Then left... A 3.5 value? 第一句。第二句！Heading\nNext";
        assert_eq!(
            contents(Unit::Sentences(2), text),
            [
                "Dr.",
                "Smith said \"Go!\"",
                "Then left...",
                "A 3.5 value?",
                "第一句。",
                "第二句！",
                "Heading",
                "Next"
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn the_skipping_scan_finds_the_sentences_of_the_byte_scan(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "a", "word ", "longer words without an end here ", ".", "!", "?", "…",
                    "。", "！", "？", "\n", " ", "\"", ")", "é", "—", "中文", "⁇", "\r\n",
                ]),
                0..80,
            )
        ) {
            let text: String = pieces.concat();
            // Byte by byte: the scan without the skip.
            proptest::prop_assert_eq!(sentences(&text), sentences_skipping(&text, |_, at| at));
        }
    }

    #[test]
    fn keys_are_normalised_and_windows_cover_runs() {
        let splitter = UnitSplitter::new(Unit::Sentences(2), NormalizeOptions::web());
        let a = splitter.split("One.  Two. Three.");
        let b = splitter.split("ONE. two.\nFour.");
        assert_eq!(a.keys.len(), 2);
        assert_eq!(a.keys[0], b.keys[0], "normalised: case and spaces");
        assert_ne!(a.keys[1], b.keys[1]);
        assert_eq!(a.covered(1), 1..3);
        assert_eq!(a.removed(&[false, true]), [false, true, true]);
        let short = splitter.split("Alone.");
        assert_eq!((short.keys.len(), short.covered(0)), (1, 0..1));
        assert!(splitter.split("  ").keys.is_empty());
    }
}
