//! Exact-duplicate digests of the normalised text.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

/// Which digest a profile uses for exact duplicates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DigestAlgorithm {
    /// SHA-256: cryptographic, what auditors expect.
    Sha256,
    /// BLAKE3: cryptographic and several times faster than SHA-256; the default.
    Blake3,
    /// XXH3-128: not cryptographic (collisions can be forged) but fastest of all.
    Xxh3_128,
}

/// A digest: 32 bytes (XXH3-128 uses the first 16).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Digest {
    bytes: [u8; 32],
    len: u8,
}

impl Digest {
    /// The digest of `text` under `algorithm`.
    pub fn of(algorithm: DigestAlgorithm, text: &[u8]) -> Digest {
        let mut bytes = [0u8; 32];
        let len = match algorithm {
            DigestAlgorithm::Sha256 => {
                bytes.copy_from_slice(&Sha256::digest(text));
                32
            }
            DigestAlgorithm::Blake3 => {
                bytes.copy_from_slice(blake3::hash(text).as_bytes());
                32
            }
            DigestAlgorithm::Xxh3_128 => {
                bytes[..16].copy_from_slice(&xxhash_rust::xxh3::xxh3_128(text).to_be_bytes());
                16
            }
        };
        Digest { bytes, len }
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Display for Digest {
    /// Lower-case hexadecimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_bytes()
            .iter()
            .try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_digests() {
        assert_eq!(
            Digest::of(DigestAlgorithm::Sha256, b"abc").to_string(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            Digest::of(DigestAlgorithm::Blake3, b"").to_string(),
            "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262"
        );
        assert_eq!(
            Digest::of(DigestAlgorithm::Xxh3_128, b"").to_string().len(),
            32
        );
        assert_ne!(
            Digest::of(DigestAlgorithm::Blake3, b"a"),
            Digest::of(DigestAlgorithm::Blake3, b"b")
        );
    }
}
