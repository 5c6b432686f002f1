//! [`UrlKeys`]: the documents' canonical URLs (`--url-dedup`), as 128-bit hashes in sorted runs
//! within a share of the budget.
//!
//! The engine asks one thing of them: which documents share a canonical URL. Holding the URLs
//! took their bytes and a boxed string each (about 100 bytes a document of a web crawl, and a
//! hash map of them again to link them), with no bound. Each URL's BLAKE3 hash, cut to 128
//! bits, goes with its position into sorted runs ([`Runs`]: in memory up to a sixteenth of the
//! budget, on disk beyond), and the documents of equal hashes are linked as they come out of the
//! merged runs: 20 bytes a document with a URL, on disk beyond the share. Two URLs share a hash
//! by chance about once in 2⁶⁴ pairs (for 10¹² documents, about 10⁻¹⁵ that any two do).

use neardup_core::digest::{Digest, DigestAlgorithm};
use neardup_index::{RunRecord, Runs, SpillDir};

use crate::budget::Budget;
use crate::error::DedupError;

/// One document's canonical URL, as its hash and position: sorted by hash, then position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct UrlKey {
    hash: u128,
    position: u32,
}

/// A key in a run: the hash (16 bytes), then the position (4), little-endian.
impl RunRecord for UrlKey {
    const BYTES: usize = 20;

    fn encode(&self, out: &mut [u8]) {
        out[..16].copy_from_slice(&self.hash.to_le_bytes());
        out[16..20].copy_from_slice(&self.position.to_le_bytes());
    }

    fn decode(bytes: &[u8]) -> Self {
        let mut hash = [0u8; 16];
        hash.copy_from_slice(&bytes[..16]);
        let mut position = [0u8; 4];
        position.copy_from_slice(&bytes[16..20]);
        UrlKey {
            hash: u128::from_le_bytes(hash),
            position: u32::from_le_bytes(position),
        }
    }
}

/// The canonical URLs of the documents that have one (see the module documentation).
pub(crate) struct UrlKeys {
    keys: Runs<UrlKey>,
    /// Keys not yet handed to `keys` (a batch of [`Runs::batch`]).
    batch: Vec<UrlKey>,
    /// How many documents have a URL.
    count: u64,
    /// Bytes of keys `keys` holds before it writes a run.
    cap: u64,
    spill: SpillDir,
}

impl std::fmt::Debug for UrlKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UrlKeys")
            .field("count", &self.count)
            .finish()
    }
}

impl UrlKeys {
    /// No URL yet; their keys held up to a sixteenth of `budget`, sorted runs in its folder
    /// beyond.
    pub(crate) fn within(budget: &Budget) -> Self {
        let spill = SpillDir::new(&budget.spill_dir());
        let cap = budget.memory / 16;
        UrlKeys {
            keys: Runs::new(spill.clone(), cap),
            batch: Vec::new(),
            count: 0,
            cap,
            spill,
        }
    }

    /// Records that the document at `position` has the canonical URL `url`.
    pub(crate) fn push(&mut self, position: u32, url: &str) -> Result<(), DedupError> {
        let digest = Digest::of(DigestAlgorithm::Blake3, url.as_bytes());
        let mut hash = [0u8; 16];
        hash.copy_from_slice(&digest.as_bytes()[..16]);
        self.batch.push(UrlKey {
            hash: u128::from_le_bytes(hash),
            position,
        });
        self.count += 1;
        if self.batch.len() >= self.keys.batch() {
            self.keys.add(&mut self.batch)?;
        }
        Ok(())
    }

    /// Each document with the first document of its canonical URL, `(first, document)`, in
    /// no particular order. The keys are read once: the URLs are released.
    pub(crate) fn links(&mut self) -> Result<Vec<(u32, u32)>, DedupError> {
        let spill = self.spill.clone();
        let keys = std::mem::replace(&mut self.keys, Runs::new(spill, 0));
        keys.add(&mut self.batch)?;
        let mut links = Vec::new();
        let mut first: Option<UrlKey> = None;
        for key in keys.into_sorted()? {
            let key = key?;
            match first {
                Some(head) if head.hash == key.hash => links.push((head.position, key.position)),
                _ => first = Some(key),
            }
        }
        self.count = 0;
        Ok(links)
    }

    /// Bytes held in memory: the keys, up to their share (beyond it they are in runs on disk),
    /// as [`crate::digests`] counts its keys.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.cap
            .min(self.count * std::mem::size_of::<UrlKey>() as u64)
    }

    /// Bytes written to disk.
    pub(crate) fn spilled_bytes(&self) -> u64 {
        self.spill.written()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The links of equal URLs, within any share (held, or runs on disk merged), as a map of
    /// the URLs gives them.
    #[test]
    fn documents_sharing_a_url_are_linked_to_the_first() {
        let urls: Vec<String> = (0..5_000u32)
            .map(|i| format!("https://example.com/{}", (i * 7919) % 1_301))
            .collect();
        let mut want = Vec::new();
        let mut first = std::collections::HashMap::new();
        for (i, url) in urls.iter().enumerate() {
            match first.get(url) {
                Some(&head) => want.push((head, i as u32)),
                None => {
                    first.insert(url, i as u32);
                }
            }
        }
        want.sort_unstable();
        for memory in [0, 1 << 12, 1 << 30] {
            let dir = tempfile::tempdir().unwrap();
            let budget = Budget {
                memory,
                tmp_dir: Some(dir.path().to_path_buf()),
                held_before: None,
            };
            let mut keys = UrlKeys::within(&budget);
            for (i, url) in urls.iter().enumerate() {
                keys.push(i as u32, url).unwrap();
            }
            let mut links = keys.links().unwrap();
            links.sort_unstable();
            assert_eq!(links, want, "memory {memory}");
            assert_eq!(
                keys.spilled_bytes() > 0,
                memory < 1 << 20,
                "memory {memory}"
            );
            drop(keys);
        }
    }
}
