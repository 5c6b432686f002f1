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
        let width = algorithm.width();
        match algorithm {
            DigestAlgorithm::Sha256 => bytes.copy_from_slice(&Sha256::digest(text)),
            DigestAlgorithm::Blake3 => bytes.copy_from_slice(blake3::hash(text).as_bytes()),
            DigestAlgorithm::Xxh3_128 => {
                bytes[..width].copy_from_slice(&xxhash_rust::xxh3::xxh3_128(text).to_be_bytes())
            }
        }
        Digest {
            bytes,
            len: width as u8,
        }
    }

    /// The digest under `algorithm` whose bytes are `bytes` (what [`Digest::as_bytes`] gave),
    /// for a digest made elsewhere and carried as bytes (the Spark job's count makes each
    /// record's, its engine step takes them); `None` when `bytes` is not `algorithm`'s length.
    pub fn from_bytes(algorithm: DigestAlgorithm, bytes: &[u8]) -> Option<Digest> {
        if bytes.len() != algorithm.width() {
            return None;
        }
        let mut all = [0u8; 32];
        all[..bytes.len()].copy_from_slice(bytes);
        Some(Digest {
            bytes: all,
            len: bytes.len() as u8,
        })
    }

    /// The digest's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl DigestAlgorithm {
    /// Bytes of a digest under this algorithm: 32, or 16 for XXH3-128.
    pub fn width(self) -> usize {
        match self {
            DigestAlgorithm::Sha256 | DigestAlgorithm::Blake3 => 32,
            DigestAlgorithm::Xxh3_128 => 16,
        }
    }
}

impl fmt::Display for Digest {
    /// Lower-case hexadecimal.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.hex(&mut [0; 64]))
    }
}

impl Digest {
    /// The digest in lower-case hexadecimal, written into `buffer`: one string for the
    /// formatter or serialiser, not a formatting call per byte (every output line has one).
    fn hex<'b>(&self, buffer: &'b mut [u8; 64]) -> &'b str {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let bytes = self.as_bytes();
        for (pair, byte) in buffer.chunks_exact_mut(2).zip(bytes) {
            pair[0] = DIGITS[usize::from(byte >> 4)];
            pair[1] = DIGITS[usize::from(byte & 0xf)];
        }
        // Always ASCII digits and letters.
        std::str::from_utf8(&buffer[..2 * bytes.len()]).unwrap_or_default()
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.hex(&mut [0; 64]))
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

    #[test]
    fn a_digest_is_made_again_from_its_bytes() {
        for algorithm in [
            DigestAlgorithm::Sha256,
            DigestAlgorithm::Blake3,
            DigestAlgorithm::Xxh3_128,
        ] {
            let digest = Digest::of(algorithm, b"the quick brown fox");
            assert_eq!(digest.as_bytes().len(), algorithm.width());
            assert_eq!(
                Digest::from_bytes(algorithm, digest.as_bytes()),
                Some(digest)
            );
            let other = Digest::of(algorithm, b"the quick brown cat");
            assert_ne!(
                Digest::from_bytes(algorithm, other.as_bytes()),
                Some(digest)
            );
            assert_eq!(Digest::from_bytes(algorithm, &digest.as_bytes()[1..]), None);
        }
        let long = Digest::of(DigestAlgorithm::Blake3, b"x");
        assert_eq!(
            Digest::from_bytes(DigestAlgorithm::Xxh3_128, long.as_bytes()),
            None
        );
    }

    #[test]
    fn hexadecimal_is_two_digits_a_byte_everywhere() {
        for algorithm in [
            DigestAlgorithm::Sha256,
            DigestAlgorithm::Blake3,
            DigestAlgorithm::Xxh3_128,
        ] {
            let digest = Digest::of(algorithm, b"the quick brown fox");
            let per_byte: String = digest
                .as_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            assert_eq!(digest.to_string(), per_byte);
            assert_eq!(
                serde_json::to_string(&digest).unwrap(),
                format!("\"{per_byte}\"")
            );
        }
    }
}
