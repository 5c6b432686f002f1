//! [`SearchKeys`]: the candidate search of a policy cut into keys, for a search spread over
//! many machines (the Spark job of the Python package).
//!
//! The batch engine searches candidates in one process ([`crate::dedup`]). A distributed job
//! cannot hold every fingerprint in one place; it groups documents by keys instead (a shuffle)
//! and compares only within a group. The keys are those the engine's own search uses: under a
//! SimHash method, the tables of the permuted-table design (`neardup_index::Design`: every pair
//! within `k` bits agrees on the key bits of at least one table, by the pigeonhole rule); under
//! MinHash, the LSH bands ([`Policy::lsh_params`], as the engine bands). So every
//! candidate pair of the engine shares at least one key, and every pair sharing a key is a pair
//! the engine's search could report: a group's pairs are then tested with
//! [`SearchKeys::simhash_candidate`] and decided by [`Policy::decide`], as the engine decides.

use neardup_core::{Fingerprints, Simhash};
use neardup_index::{Design, LshParams, Table};

use crate::error::DedupError;
use crate::policy::Method;
use crate::policy::Policy;

/// Bytes of a key's prefix naming its table or band (big-endian `u16`), so that keys of
/// different tables never meet.
const INDEX_BYTES: usize = 2;

/// Expected candidates per document up to which [`SearchKeys`] takes the design with the fewest
/// tables. Higher than the in-memory search's budget: there a table costs a probe, here every
/// key of every document is a row of the shuffle (about 30 bytes), while a candidate is one
/// comparison of two fingerprints in an executor (nanoseconds). For `k = 6` on 64 bits: 7 keys
/// a document up to about 5 million documents, 28 up to about 150 million, 84 beyond a billion.
const CANDIDATE_BUDGET: f64 = 65_536.0;

/// The keys of a policy's candidate search: fixed-width byte strings, several per document.
///
/// ```
/// use neardup_core::Fingerprinter;
/// use neardup_dedup::{Policy, SearchKeys};
/// let policy = Policy::default();
/// let keys = SearchKeys::new(&policy, 1_000).unwrap();
/// let fingerprinter = Fingerprinter::new(policy.profile.clone()).unwrap();
/// let (a, b) = (
///     fingerprinter.fingerprint("The council approved the budget on Tuesday after a long debate."),
///     fingerprinter.fingerprint("The council approved the budget on Tuesday after a long debate!"),
/// );
/// let (mut ka, mut kb) = (Vec::new(), Vec::new());
/// keys.write(&a, &mut ka).unwrap();
/// keys.write(&b, &mut kb).unwrap();
/// let shared = ka.chunks(keys.width()).any(|k| kb.chunks(keys.width()).any(|l| k == l));
/// assert_eq!(shared, a.simhash.distance(b.simhash).unwrap() <= policy.k);
/// ```
#[derive(Debug, Clone)]
pub struct SearchKeys {
    kind: KeyKind,
    width: usize,
    policy: Policy,
}

#[derive(Debug, Clone)]
enum KeyKind {
    /// Exact duplicates only: no near-duplicate search, no keys.
    None,
    /// Permuted tables over 64-bit SimHash fingerprints.
    Tables64(Vec<Table<u64>>),
    /// Permuted tables over 128-bit SimHash fingerprints (keys cut to their first 64 bits).
    Tables128(Vec<Table<u128>>),
    /// MinHash LSH bands.
    Bands(LshParams),
}

impl SearchKeys {
    /// The keys of `policy`'s search over a corpus of about `expected_len` documents (the
    /// size chooses the permuted-table design; any design finds the same pairs). Fails for the overlap method, whose exact search needs every shingle set in
    /// one place, and for an invalid policy.
    pub fn new(policy: &Policy, expected_len: usize) -> Result<SearchKeys, DedupError> {
        policy.validate()?;
        let bits = policy.profile.bits.count();
        let (kind, width) = match policy.method {
            Method::Exact => (KeyKind::None, 0),
            Method::Simhash | Method::Cascade => {
                let design = design(expected_len, policy.k, bits);
                let kind = if bits == 64 {
                    KeyKind::Tables64(design.tables::<u64>()?)
                } else {
                    KeyKind::Tables128(design.tables::<u128>()?)
                };
                (kind, INDEX_BYTES + 8)
            }
            Method::Minhash => {
                let num_perm = policy.profile.minhash.as_ref().map_or(0, |m| m.num_perm);
                let params = policy.lsh_params(num_perm)?;
                (KeyKind::Bands(params), INDEX_BYTES + 4 * params.rows)
            }
            Method::Overlap => {
                return Err(DedupError::InvalidOption(
                    "the overlap method has no search keys: its exact search holds every shingle set in one place (choose cascade, simhash, minhash or exact)".into(),
                ))
            }
        };
        Ok(SearchKeys {
            kind,
            width,
            policy: policy.clone(),
        })
    }

    /// Bytes of one key (0 when the policy searches exact duplicates only).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Appends the keys of one document to `out` ([`SearchKeys::width`] bytes each) and
    /// returns how many. Fails when the fingerprints are not the policy's (a SimHash of
    /// another width, no MinHash signature or a short one).
    pub fn write(
        &self,
        fingerprints: &Fingerprints,
        out: &mut Vec<u8>,
    ) -> Result<usize, DedupError> {
        match &self.kind {
            KeyKind::None => Ok(0),
            KeyKind::Tables64(_) | KeyKind::Tables128(_) => {
                self.write_simhash(fingerprints.simhash, out)
            }
            KeyKind::Bands(params) => {
                let needed = params.bands * params.rows;
                let signature = fingerprints
                    .minhash
                    .as_deref()
                    .filter(|s| s.len() >= needed)
                    .ok_or_else(|| {
                        DedupError::MissingData(format!(
                            "the minhash method needs MinHash signatures of {needed} values or more"
                        ))
                    })?;
                for (band, values) in signature[..needed].chunks(params.rows).enumerate() {
                    out.extend_from_slice(&(band as u16).to_be_bytes());
                    for value in values {
                        out.extend_from_slice(&value.to_be_bytes());
                    }
                }
                Ok(params.bands)
            }
        }
    }

    /// Appends the keys of a document whose SimHash fingerprint is `simhash`, as
    /// [`SearchKeys::write`] does from its fingerprints, and returns how many: the SimHash
    /// methods' tables need nothing else ([`SearchKeys::tests_simhash`]), so the keys of a
    /// corpus can be cut once its size is known from fingerprints made before. Fails for the
    /// other methods (MinHash bands need the signature) and for a SimHash of another width.
    pub fn write_simhash(&self, simhash: Simhash, out: &mut Vec<u8>) -> Result<usize, DedupError> {
        let wrong_width = || {
            DedupError::MissingData(format!(
                "a {}-bit SimHash under a {}-bit policy",
                simhash.bits().count(),
                self.policy.profile.bits.count()
            ))
        };
        match (&self.kind, simhash) {
            (KeyKind::Tables64(tables), Simhash::B64(fp)) => Ok(write_tables(tables, fp, out)),
            (KeyKind::Tables128(tables), Simhash::B128(fp)) => Ok(write_tables(tables, fp, out)),
            (KeyKind::Tables64(_) | KeyKind::Tables128(_), _) => Err(wrong_width()),
            (KeyKind::None | KeyKind::Bands(_), _) => Err(DedupError::MissingData(
                "only the SimHash methods' keys are cut from the SimHash alone".into(),
            )),
        }
    }

    /// Whether a pair that shares a key must pass the SimHash test too
    /// ([`SearchKeys::simhash_candidate`] is not always true): the SimHash methods' tables.
    pub fn tests_simhash(&self) -> bool {
        matches!(self.kind, KeyKind::Tables64(_) | KeyKind::Tables128(_))
    }

    /// Whether two documents that share a key can be a candidate pair by their SimHash
    /// fingerprints alone: under a SimHash method the policy's own candidate test (within
    /// `k`, [`Policy::simhash_evidence`]); under MinHash always (the estimate needs the
    /// signatures, and [`Policy::decide`] tests it).
    pub fn simhash_candidate(&self, a: Simhash, b: Simhash) -> Result<bool, DedupError> {
        match self.kind {
            KeyKind::Tables64(_) | KeyKind::Tables128(_) => {
                Ok(self.policy.simhash_evidence(a, b)?.passes())
            }
            KeyKind::None | KeyKind::Bands(_) => Ok(true),
        }
    }
}

/// The pigeonhole design with the fewest tables (`k + 1` blocks and up) whose expected
/// candidates per document among `n` stay within [`CANDIDATE_BUDGET`], else the one with the
/// most tables allowed. Every design finds every pair within `k`; this only trades keys
/// (shuffled) for candidates (compared).
fn design(n: usize, k: u32, bits: u32) -> Design {
    let designs: Vec<Design> = (k + 1..=bits)
        .map(|blocks| Design::Blocks { blocks, k })
        .take_while(|d| d.table_count(bits).is_ok())
        .collect();
    let within = |d: &&Design| {
        d.expected_candidates(n, bits)
            .is_ok_and(|c| c <= CANDIDATE_BUDGET)
    };
    designs
        .iter()
        .find(within)
        .or(designs.last())
        .copied()
        .unwrap_or(Design::Blocks { blocks: k + 1, k })
}

/// Writes one key per table: the table's index, then the first 64 of its key bits.
fn write_tables<F: neardup_index::Fingerprint>(
    tables: &[Table<F>],
    fp: F,
    out: &mut Vec<u8>,
) -> usize {
    for (index, table) in tables.iter().enumerate() {
        out.extend_from_slice(&(index as u16).to_be_bytes());
        let key = table.key(fp, table.key_bits().min(64));
        out.extend_from_slice(&key.to_be_bytes());
    }
    tables.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{dedup, DedupOptions, Item, PolicyChanges};
    use neardup_core::Fingerprinter;

    fn corpus() -> Vec<String> {
        let words: Vec<String> = (0..400)
            .map(|i| format!("w{}", (i * 7919) % 1009))
            .collect();
        let mut texts = Vec::new();
        for doc in 0..60 {
            let base: Vec<&str> = (0..60)
                .map(|j| words[(doc * 13 + j) % words.len()].as_str())
                .collect();
            texts.push(base.join(" "));
            let mut copy = base.clone();
            copy[doc % 60] = "changed";
            texts.push(copy.join(" "));
            copy[(doc + 7) % 60] = "again";
            texts.push(copy.join(" "));
        }
        texts
    }

    fn keys_of(keys: &SearchKeys, fp: &Fingerprints) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        keys.write(fp, &mut out).unwrap();
        out.chunks(keys.width()).map(<[u8]>::to_vec).collect()
    }

    /// Every pair the engine accepts as a near duplicate shares a key, and a shared key with
    /// the SimHash test passing is all a pair needs to be a candidate.
    #[test]
    fn every_accepted_pair_shares_a_key() {
        let texts = corpus();
        for method in [Method::Cascade, Method::Simhash, Method::Minhash] {
            let policy = PolicyChanges {
                method: Some(method),
                threshold: Some(0.8),
                ..Default::default()
            }
            .apply(Policy::default())
            .unwrap();
            let fingerprinter = Fingerprinter::new(policy.profile.clone()).unwrap();
            let items: Vec<Item> = texts
                .iter()
                .map(|t| {
                    let mut item = Item::new(fingerprinter.fingerprint(t), t.len() as u64);
                    item.features = Some(fingerprinter.feature_set(t));
                    item
                })
                .collect();
            let outcome = dedup(&items, &DedupOptions::new(policy.clone())).unwrap();
            let near: Vec<_> = outcome
                .pairs
                .iter()
                .filter(|p| p.kind == crate::Kind::Near)
                .collect();
            assert!(near.len() > 20, "{method:?}: {} near pairs", near.len());
            let keys = SearchKeys::new(&policy, texts.len()).unwrap();
            for p in near {
                let (a, b) = (
                    &items[p.a as usize].fingerprints,
                    &items[p.b as usize].fingerprints,
                );
                let (ka, kb) = (keys_of(&keys, a), keys_of(&keys, b));
                assert!(
                    ka.iter().any(|k| kb.contains(k)),
                    "{method:?}: {p:?} shares no key"
                );
                assert!(keys.simhash_candidate(a.simhash, b.simhash).unwrap());
            }
        }
    }

    /// The keys cut from the SimHash alone are the keys cut from the fingerprints, under the
    /// SimHash methods (64 and 128 bits); the other methods refuse.
    #[test]
    fn the_simhash_methods_cut_the_same_keys_from_the_simhash_alone() {
        use neardup_core::simhash::Bits;
        for (method, bits) in [(Method::Cascade, Bits::B64), (Method::Simhash, Bits::B128)] {
            let mut policy = Policy {
                method,
                ..Policy::default()
            };
            policy.profile.bits = bits;
            let fingerprinter = Fingerprinter::new(policy.profile.clone()).unwrap();
            let keys = SearchKeys::new(&policy, 1_000).unwrap();
            for text in corpus().iter().take(20) {
                let fp = fingerprinter.fingerprint(text);
                let (mut from_fp, mut from_simhash) = (Vec::new(), Vec::new());
                let count = keys.write(&fp, &mut from_fp).unwrap();
                assert_eq!(
                    keys.write_simhash(fp.simhash, &mut from_simhash).unwrap(),
                    count
                );
                assert_eq!(from_simhash, from_fp, "{method:?} at {bits:?}");
                assert!(count > 0);
            }
            let other = if bits == Bits::B64 {
                Simhash::B128(1)
            } else {
                Simhash::B64(1)
            };
            assert!(keys.write_simhash(other, &mut Vec::new()).is_err());
        }
        let minhash = PolicyChanges {
            method: Some(Method::Minhash),
            ..Default::default()
        }
        .apply(Policy::default())
        .unwrap();
        let keys = SearchKeys::new(&minhash, 1_000).unwrap();
        assert!(keys
            .write_simhash(Simhash::B64(1), &mut Vec::new())
            .is_err());
    }

    #[test]
    fn the_design_grows_with_the_corpus() {
        let tables = |n| design(n, 6, 64).table_count(64).unwrap();
        assert_eq!(tables(1_000), 7);
        assert_eq!(tables(4_000_000), 7);
        assert_eq!(tables(100_000_000), 28);
        assert_eq!(tables(1_000_000_000), 84);
        assert_eq!(design(10, 3, 128).table_count(128).unwrap(), 4);
    }

    #[test]
    fn overlap_and_exact() {
        let overlap = PolicyChanges {
            method: Some(Method::Overlap),
            ..Default::default()
        }
        .apply(Policy::default())
        .unwrap();
        assert!(SearchKeys::new(&overlap, 10)
            .unwrap_err()
            .to_string()
            .contains("overlap"));
        let exact = Policy {
            method: Method::Exact,
            ..Policy::default()
        };
        let keys = SearchKeys::new(&exact, 10).unwrap();
        let fp = Fingerprinter::new(exact.profile.clone())
            .unwrap()
            .fingerprint("a text");
        assert_eq!(keys.write(&fp, &mut Vec::new()).unwrap(), 0);
    }
}
