//! What is stored per document, and the compact row the in-memory index is rebuilt from.

use neardup_core::{Fingerprints, Simhash};
use serde::{Deserialize, Serialize};

/// One stored document: who it is, where it came from, and its fingerprints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The caller's id (any non-empty string).
    pub id: String,
    /// The document's URL, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The document's title, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When the document was fetched, as the caller wrote it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_at: Option<String>,
    /// The SimHash fingerprint.
    pub simhash: Simhash,
    /// The exact-duplicate digest, lower-case hexadecimal.
    pub digest: String,
    /// The MinHash signature, when the profile makes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minhash: Option<Vec<u32>>,
    /// When the record was inserted, milliseconds since the Unix epoch.
    pub inserted_at: u64,
    /// The dense internal number the in-memory index knows the document by (set by the store).
    pub slot: u64,
}

impl Record {
    /// The compact row of this record.
    pub fn entry(&self) -> Entry {
        Entry {
            slot: self.slot,
            simhash: self.simhash.as_u128(),
            digest: digest_key_hex(&self.digest),
        }
    }
}

/// The compact row the in-memory index is built from: 40 bytes per document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The document's slot.
    pub slot: u64,
    /// The SimHash bits (64-bit fingerprints zero-extended).
    pub simhash: u128,
    /// The first 128 bits of the digest: the exact-duplicate key.
    pub digest: u128,
}

/// The exact-duplicate key of a document's fingerprints: the digest's first 16 bytes.
pub fn digest_key(fingerprints: &Fingerprints) -> u128 {
    key_of_bytes(fingerprints.digest.as_bytes())
}

/// The exact-duplicate key of a digest written in hexadecimal (0 if it is not hexadecimal).
pub fn digest_key_hex(hex: &str) -> u128 {
    let prefix = hex.get(..32).unwrap_or(hex);
    u128::from_str_radix(prefix, 16)
        .map(|v| v << (4 * (32 - prefix.len() as u32)))
        .unwrap_or(0)
}

fn key_of_bytes(bytes: &[u8]) -> u128 {
    let mut key = [0u8; 16];
    let n = bytes.len().min(16);
    key[..n].copy_from_slice(&bytes[..n]);
    u128::from_be_bytes(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digest_keys_agree() {
        let fp = neardup_core::Fingerprinter::new(neardup_core::Profile::web())
            .unwrap()
            .fingerprint("some text to digest");
        assert_eq!(digest_key(&fp), digest_key_hex(&fp.digest.to_string()));
        assert_ne!(digest_key(&fp), 0);
    }
}
