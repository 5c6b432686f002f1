//! A document rewritten without its repeated units, and the report of what went.

use serde::Serialize;

use super::split::{DocumentUnits, UnitSplitter};
use crate::error::DedupError;

/// What was removed from one document.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct UnitReport {
    /// Units the document has.
    pub units: u64,
    /// Units removed as repeats.
    pub units_removed: u64,
    /// Bytes of the text removed (units and the white space after each).
    pub bytes_removed: u64,
    /// The removed byte ranges `[start, end)` of the text (as extracted, before the rewrite),
    /// ascending, adjacent ones merged.
    pub removed_spans: Vec<[u64; 2]>,
    /// Whether the document is dropped: what is left is under the minimum.
    pub dropped: bool,
}

/// A document's text with its repeated units removed, and the report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// The text left (empty when the document is dropped).
    pub text: String,
    /// What was removed.
    pub report: UnitReport,
}

impl Rewritten {
    /// `text` (split into `units`) without the units its keys' `seen` flags remove
    /// ([`DocumentUnits::removed`]);
    /// dropped when fewer than `min_chars` characters other than white space are left.
    pub fn new(text: &str, units: &DocumentUnits, seen: &[bool], min_chars: u64) -> Rewritten {
        let removed = units.removed(seen);
        let mut report = UnitReport {
            units: units.segments.len() as u64,
            ..UnitReport::default()
        };
        let mut kept = String::with_capacity(text.len());
        for (segment, removed) in units.segments.iter().zip(&removed) {
            let range = [segment.start as u64, segment.end as u64];
            if !removed {
                kept.push_str(&text[segment.start..segment.end]);
                continue;
            }
            report.units_removed += 1;
            report.bytes_removed += range[1] - range[0];
            match report.removed_spans.last_mut() {
                Some(last) if last[1] == range[0] => last[1] = range[1],
                _ => report.removed_spans.push(range),
            }
        }
        // Counted up to the minimum only: a long document is not walked to its end.
        let enough = usize::try_from(min_chars).unwrap_or(usize::MAX);
        let left = kept
            .chars()
            .filter(|c| !c.is_whitespace())
            .take(enough)
            .count();
        report.dropped = left < enough;
        if report.dropped {
            kept.clear();
        }
        Rewritten { text: kept, report }
    }
}

/// `text` split by `splitter` and rewritten without what its repeated keys remove: `repeats`
/// are the indexes of its keys (in [`DocumentUnits::keys`]) whose first occurrence is
/// elsewhere, as a distributed run finds them (the Spark job: the first position of each key
/// by an aggregation). An index beyond the text's keys is an error.
pub fn rewrite_repeats(
    splitter: &UnitSplitter,
    text: &str,
    repeats: &[u32],
    min_chars: u64,
) -> Result<Rewritten, DedupError> {
    let units = splitter.split(text);
    let mut seen = vec![false; units.keys.len()];
    for &i in repeats {
        *seen.get_mut(i as usize).ok_or_else(|| {
            DedupError::InvalidOption(format!(
                "key {i} of a text of {} keys: the repeats are of another text or rule",
                units.keys.len()
            ))
        })? = true;
    }
    Ok(Rewritten::new(text, &units, &seen, min_chars))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Unit, UnitSplitter};
    use neardup_core::normalize::NormalizeOptions;

    #[test]
    fn removed_units_take_their_trailing_space_and_spans_merge() {
        let text = "Menu\n\nStory one.\n\nFooter\n\nLegal\n";
        let units = UnitSplitter::new(Unit::Paragraph, NormalizeOptions::web()).split(text);
        let done = Rewritten::new(text, &units, &[true, false, true, true], 1);
        assert_eq!(done.text, "Story one.\n\n");
        assert_eq!(done.report.units_removed, 3);
        assert_eq!(done.report.removed_spans, [[0, 6], [18, 32]]);
        assert_eq!(done.report.bytes_removed, 20);
        assert!(!done.report.dropped);
        let dropped = Rewritten::new(text, &units, &[true, false, true, true], 20);
        assert!(dropped.report.dropped && dropped.text.is_empty());
        let splitter = UnitSplitter::new(Unit::Paragraph, NormalizeOptions::web());
        let again = rewrite_repeats(&splitter, text, &[3, 0, 2], 1).unwrap();
        assert_eq!(again, done);
        assert!(rewrite_repeats(&splitter, text, &[4], 1).is_err());
    }
}
