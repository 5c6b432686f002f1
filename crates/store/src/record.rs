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
    /// The document's text, compressed, for verification under a verifying policy (format 3;
    /// absent for documents of a migrated format-2 database and under policies that do not
    /// verify).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<StoredText>,
}

/// A document's text as a database keeps it for verification: zstd-compressed (level 3), and
/// written as base64 in the JSON record.
///
/// Why the text and not a sketch: verification must decide as the batch run does, on the
/// exact shingle set. A fixed-size sketch only estimates the measure, and near the threshold
/// (where labelled pairs crowd) an estimate flips decisions: bottom-k sketches of 2,048
/// hashes still disagreed with the exact Jaccard on 4 of 374 CopyCat pairs. The compressed
/// text is smaller than the shingle set it gives (8 bytes a shingle, about one shingle a
/// character, against well under a byte a character), and rebuilding the set costs tens of
/// microseconds, paid only for candidates within k.
///
/// ```
/// use neardup_store::StoredText;
/// let stored = StoredText::compress("A text kept for verification.").unwrap();
/// assert_eq!(stored.text().unwrap(), "A text kept for verification.");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct StoredText(Vec<u8>);

impl StoredText {
    /// Compresses `text` (zstd level 3, its default: hundreds of MB/s, well under the cost of
    /// fingerprinting).
    pub fn compress(text: &str) -> crate::Result<StoredText> {
        zstd::bulk::compress(text.as_bytes(), 3)
            .map(StoredText)
            .map_err(|source| crate::StoreError::StoredText {
                what: "cannot compress a text for storage",
                source,
            })
    }

    /// The text back.
    pub fn text(&self) -> crate::Result<String> {
        let bytes = zstd::stream::decode_all(self.0.as_slice()).map_err(|source| {
            crate::StoreError::StoredText {
                what: "corrupt database: a stored text does not decompress",
                source,
            }
        })?;
        String::from_utf8(bytes).map_err(|error| crate::StoreError::StoredText {
            what: "corrupt database: a stored text is not UTF-8",
            source: std::io::Error::new(std::io::ErrorKind::InvalidData, error),
        })
    }

    /// Its size in bytes, compressed.
    pub fn compressed_len(&self) -> usize {
        self.0.len()
    }
}

impl std::fmt::Debug for StoredText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StoredText({} bytes)", self.0.len())
    }
}

impl Serialize for StoredText {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use base64::Engine;
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(&self.0))
    }
}

impl<'de> Deserialize<'de> for StoredText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use base64::Engine;
        let encoded = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD
            .decode(encoded.as_bytes())
            .map(StoredText)
            .map_err(serde::de::Error::custom)
    }
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

    #[test]
    fn a_stored_text_that_does_not_read_back_keeps_its_cause() {
        use std::error::Error;
        let not_utf8 = StoredText(zstd::bulk::compress(&[b'a', 0xff], 3).unwrap());
        let error = not_utf8.text().unwrap_err();
        assert!(error.to_string().contains("not UTF-8"), "{error}");
        let cause = error.source().expect("the cause is kept");
        assert!(cause.to_string().contains("invalid utf-8"), "{cause}");
        let not_zstd = StoredText(b"not zstd".to_vec()).text().unwrap_err();
        assert!(not_zstd.source().is_some(), "{not_zstd}");
    }
}
