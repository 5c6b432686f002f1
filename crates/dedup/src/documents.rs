//! [`Documents`]: what the engine holds of each document, in columns.
//!
//! An [`Item`] takes 192 bytes (a `Fingerprints` of 112, aligned for 128-bit SimHash values,
//! the options and their padding) before its heap parts; the engine reads a few things of it
//! all run long. Held as columns, a document of a 64-bit profile costs 8 bytes of SimHash, 8 of
//! length and 8 of digest key: 24 bytes, an eighth. The SimHash, length and fetch time
//! ([`crate::rows`]) are held within an eighth of the budget and spilled beyond it, read back
//! for the documents a phase needs; the whole digest, read once for the exact groups, within
//! another eighth (see [`crate::digests`]); MinHash signatures, when the profile makes them,
//! within a sixteenth ([`crate::signatures`]). The canonical URL, when given, as a hash in sorted
//! runs within another sixteenth ([`crate::url_keys`]).

use neardup_core::Simhash;

use crate::budget::Budget;
use crate::digests::Digests;
use crate::engine::Item;
use crate::error::DedupError;
use crate::exact::Groups;
use crate::rows::{Row, Rows};
use crate::signatures::Signatures;
use crate::url_keys::UrlKeys;

/// What the engine needs of each document, by position, in columns (see the module
/// documentation). Built with [`Documents::push`] in input order.
///
/// ```
/// use neardup_core::{Fingerprinter, Profile};
/// use neardup_dedup::{dedup_documents, DedupOptions, Documents, Item, NoFeatures};
/// let fingerprinter = Fingerprinter::new(Profile::web()).unwrap();
/// let mut documents = Documents::new();
/// for text in ["Rain is expected on Monday.", "Rain is expected on Monday!", "Sunny."] {
///     documents.push(Item::new(fingerprinter.fingerprint(text), text.len() as u64)).unwrap();
/// }
/// let policy = neardup_dedup::Policy::simhash(Profile::web(), 3);
/// let outcome =
///     dedup_documents(&mut documents, &DedupOptions::new(policy), &mut NoFeatures).unwrap();
/// assert_eq!(outcome.kept, [true, false, true]);
/// ```
#[derive(Debug)]
pub struct Documents {
    rows: Rows,
    digests: Digests,
    signatures: Signatures,
    /// The canonical URLs, as hashes in sorted runs within a share of the budget.
    url_keys: UrlKeys,
}

impl Default for Documents {
    fn default() -> Self {
        Self::new()
    }
}

impl Documents {
    /// No documents yet, within the default [`Budget`].
    pub fn new() -> Self {
        Self::within(&Budget::default())
    }

    /// No documents yet; their SimHash values, lengths and fetch times are held within an
    /// eighth of `budget`, whole digests within another, and both go to its spill folder beyond
    /// (the budget the run is given: pass the same).
    pub fn within(budget: &Budget) -> Self {
        Documents {
            rows: Rows::within(budget),
            digests: Digests::within(budget),
            signatures: Signatures::within(budget),
            url_keys: UrlKeys::within(budget),
        }
    }

    /// The documents of `items`, in order (their shingle sets are not copied), within `budget`.
    pub fn from_items(items: &[Item], budget: &Budget) -> Result<Self, DedupError> {
        let mut documents = Documents::within(budget);
        for item in items {
            documents.push(Item {
                fingerprints: item.fingerprints.clone(),
                bytes: item.bytes,
                fetched_at: item.fetched_at,
                url_key: item.url_key.clone(),
                features: None,
            })?;
        }
        Ok(documents)
    }

    /// Adds the next document, its parts moved into the columns (its shingle set, if any, is
    /// not kept: verification asks a [`crate::FeatureSource`]). Fails, adding nothing, if its
    /// SimHash width, digest length or MinHash signature (its length, or whether it has one)
    /// differs from the first document's: one run has one profile.
    pub fn push(&mut self, item: Item) -> Result<(), DedupError> {
        let at = self.len();
        let Item {
            fingerprints,
            bytes,
            fetched_at,
            url_key,
            features: _,
        } = item;
        let digest = fingerprints.digest.as_bytes();
        let mixed = |what: &str| {
            DedupError::InvalidOption(format!(
                "document {at} has a {what} unlike the first document's: one run takes one profile"
            ))
        };
        if at > 0 && digest.len() != self.digests.digest_len() {
            return Err(mixed("digest length"));
        }
        let row = Row {
            simhash: fingerprints.simhash,
            bytes,
            fetched_at,
        };
        if !self.signatures.accepts(fingerprints.minhash.as_deref()) {
            return Err(mixed("MinHash signature"));
        }
        if !self.rows.push(row)? {
            return Err(mixed("SimHash width"));
        }
        self.digests.push(digest)?;
        self.signatures.push(fingerprints.minhash.as_deref())?;
        if let Some(url) = url_key {
            self.url_keys.push(at as u32, &url)?;
        }
        Ok(())
    }

    /// How many documents there are.
    pub fn len(&self) -> usize {
        self.rows.len() as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rows.len() == 0
    }

    /// Bytes the columns take in memory (their capacity, and the heap parts of the optional
    /// ones).
    pub fn held_bytes(&self) -> u64 {
        self.rows.held_bytes()
            + self.digests.held_bytes()
            + self.signatures.held_bytes()
            + self.url_keys.held_bytes()
    }

    /// The SimHash of document `i` (held, or [gathered](Documents::gather) before).
    pub(crate) fn simhash(&self, i: u32) -> Simhash {
        self.rows.simhash(i)
    }

    /// Reads back the spilled columns of the documents at `positions` (ascending) that a phase
    /// is about to read; those gathered before stay.
    pub(crate) fn gather(&mut self, positions: &[u32]) -> Result<(), DedupError> {
        self.rows.gather(positions)
    }

    /// Every document's columns in memory (the decisions from every candidate pair read any
    /// document's), beyond the budget if they were spilled.
    pub(crate) fn gather_all(&mut self) -> Result<(), DedupError> {
        if self.rows.all_held() {
            return Ok(());
        }
        let all: Vec<u32> = (0..self.rows.len()).collect();
        self.rows.gather(&all)
    }

    /// Hands the SimHash values of the documents at `positions` (ascending) to `visit`, in
    /// order, reading spilled ones front to back (once [flushed](Documents::flush)).
    pub(crate) fn scan_simhashes(
        &self,
        positions: impl Iterator<Item = u32>,
        mut visit: impl FnMut(Simhash) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        self.rows.scan(positions, |_, row| visit(row.simhash))
    }

    /// Hands the position and row of each document at `positions` (ascending) to `visit`, in
    /// order, reading spilled ones front to back (once [flushed](Documents::flush)).
    pub(crate) fn scan_rows(
        &self,
        positions: impl Iterator<Item = u32>,
        visit: impl FnMut(u32, Row) -> Result<(), DedupError>,
    ) -> Result<(), DedupError> {
        self.rows.scan(positions, visit)
    }

    /// Groups of two or more documents whose digests are equal (exact duplicates): positions
    /// ascending within a group, groups ordered by their first position.
    pub(crate) fn exact_groups(&mut self) -> Result<std::sync::Arc<Groups>, DedupError> {
        self.digests.exact_groups()
    }

    /// Bytes written to disk beyond their shares of the budget: whole digests and columns.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.digests.spilled_bytes()
            + self.rows.spilled_bytes()
            + self.signatures.spilled_bytes()
            + self.url_keys.spilled_bytes()
    }

    /// Each document's place in `keep`'s order ([`crate::KeepPolicy::ranks`]): the order the unit
    /// pass below the document takes the kept documents in. Reads the held columns in place;
    /// when rows were spilled, every document's length and fetch time are read front to back
    /// into memory while it sorts them.
    pub fn keep_ranks(&mut self, keep: crate::KeepPolicy) -> Result<Vec<u32>, DedupError> {
        let count = self.len() as u32;
        if self.rows.all_held() {
            // Read in place: no copy of the columns.
            return Ok(keep.ranks(count, |i| (self.bytes(i), self.fetched_at(i))));
        }
        self.rows.flush()?;
        let mut keys = Vec::with_capacity(self.len());
        self.rows.scan(0..self.rows.len(), |_, row| {
            keys.push((row.bytes, row.fetched_at));
            Ok(())
        })?;
        Ok(keep.ranks(count, |i| keys[i as usize]))
    }

    /// Writes out the rows and MinHash signatures still buffered for their spill files, so that
    /// they can be read: called by a run before it reads any.
    pub(crate) fn flush(&mut self) -> Result<(), DedupError> {
        self.rows.flush()?;
        self.signatures.flush()
    }

    /// The MinHash signatures (read once [flushed](Documents::flush)); a clear
    /// error on reading when the profile makes none.
    pub(crate) fn signatures(&self) -> &Signatures {
        &self.signatures
    }

    /// The length of document `i`'s text in bytes (held, or gathered before).
    pub(crate) fn bytes(&self, i: u32) -> u64 {
        self.rows.bytes(i)
    }

    /// When document `i` was fetched, if known (held, or gathered before).
    pub(crate) fn fetched_at(&self, i: u32) -> Option<i64> {
        self.rows.fetched_at(i)
    }

    /// Each document that shares its canonical URL with an earlier one, with the first
    /// document of its URL: `(first, document)`, in no particular order. Read once: the URLs
    /// are released.
    pub(crate) fn url_links(&mut self) -> Result<Vec<(u32, u32)>, DedupError> {
        self.url_keys.links()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use neardup_core::digest::{Digest, DigestAlgorithm};
    use neardup_core::Fingerprints;

    fn item(simhash: Simhash, algorithm: DigestAlgorithm, minhash: Option<Vec<u32>>) -> Item {
        Item::new(
            Fingerprints {
                simhash,
                minhash,
                digest: Digest::of(algorithm, b"text"),
                features: 1,
            },
            4,
        )
    }

    /// Every part pushed comes back by position, optional columns included (before and after
    /// their first value).
    #[test]
    fn parts_come_back_by_position() {
        let mut documents = Documents::new();
        for i in 0..5u64 {
            let mut item = item(
                Simhash::B64(i),
                DigestAlgorithm::Blake3,
                Some(vec![i as u32; 3]),
            );
            item.bytes = i * 10;
            item.fetched_at = (i >= 3).then_some(i as i64);
            item.url_key = (i % 2 == 1).then(|| "https://a.example/".to_string());
            documents.push(item).unwrap();
        }
        assert_eq!(documents.len(), 5);
        let groups = documents.exact_groups().unwrap();
        assert_eq!(groups.to_vecs(), [[0, 1, 2, 3, 4]]);
        for i in 0..5u32 {
            assert_eq!(documents.simhash(i), Simhash::B64(u64::from(i)));
            assert_eq!(documents.bytes(i), u64::from(i) * 10);
            let mut signature = Vec::new();
            documents.signatures().read(i, &mut signature).unwrap();
            assert_eq!(signature, [i; 3]);
            assert_eq!(documents.fetched_at(i), (i >= 3).then_some(i64::from(i)));
        }
        assert_eq!(documents.url_links().unwrap(), [(1, 3)]);
        assert!(documents.held_bytes() >= 5 * (8 + 32 + 8 + 8));
    }

    /// One run takes one profile: a second SimHash width, digest length or signature length, or a
    /// signature present on one document and not another, is refused.
    #[test]
    fn mixed_widths_are_refused() {
        let mut documents = Documents::new();
        documents
            .push(item(Simhash::B64(1), DigestAlgorithm::Blake3, None))
            .unwrap();
        let wide = documents.push(item(Simhash::B128(1), DigestAlgorithm::Blake3, None));
        assert!(matches!(wide, Err(DedupError::InvalidOption(_))));
        let short = documents.push(item(Simhash::B64(1), DigestAlgorithm::Xxh3_128, None));
        assert!(matches!(short, Err(DedupError::InvalidOption(_))));
        let signed = documents.push(item(
            Simhash::B64(1),
            DigestAlgorithm::Blake3,
            Some(vec![1]),
        ));
        assert!(matches!(signed, Err(DedupError::InvalidOption(_))));
        assert_eq!(documents.len(), 1, "a refused document is not added");
        let mut signed = Documents::new();
        let with = |values: Vec<u32>| item(Simhash::B64(1), DigestAlgorithm::Blake3, Some(values));
        signed.push(with(vec![1, 2])).unwrap();
        assert!(signed.push(with(vec![1, 2, 3])).is_err());
        assert!(signed
            .push(item(Simhash::B64(1), DigestAlgorithm::Blake3, None))
            .is_err());
        assert_eq!(signed.len(), 1);
    }
}
