//! The errors of this crate: bad parameters and bad input are reported, never panicked on.

/// Everything that can go wrong when building or using an index.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// A query or batch asked for a distance the index's design cannot answer exactly.
    #[error("distance k = {k} is larger than this design allows (at most {max})")]
    KTooLarge {
        /// The distance asked for.
        k: u32,
        /// The largest distance the design answers exactly.
        max: u32,
    },
    /// A design that cannot be built for this fingerprint width (e.g. blocks ≤ k).
    #[error("invalid design: {0}")]
    InvalidDesign(String),
    /// `insert` with an id that is already stored.
    #[error("id {0} is already in the index")]
    DuplicateId(u64),
    /// More items than the index can address (slots are `u32`).
    #[error("too many items: {0} (at most {max})", max = u32::MAX - 1)]
    TooMany(usize),
    /// Invalid parameters (LSH threshold, weights, rotations, ...).
    #[error("invalid parameter: {0}")]
    InvalidParam(String),
    /// A MinHash signature whose length differs from the index's `num_perm`.
    #[error("signature has {got} values, expected {expected}")]
    SignatureLength {
        /// Length of the signature passed in.
        got: usize,
        /// The length the index was built for.
        expected: usize,
    },
    /// A position (in a pair or a side table) outside `0..n`.
    #[error("index {index} out of range (n = {n})")]
    OutOfRange {
        /// The offending position.
        index: usize,
        /// The number of items.
        n: usize,
    },
}

/// Shorthand for results of this crate.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;

/// Converts a length to `u32` slots, or reports [`IndexError::TooMany`].
pub(crate) fn checked_len(n: usize) -> Result<u32> {
    u32::try_from(n)
        .ok()
        .filter(|&v| v < u32::MAX)
        .ok_or(IndexError::TooMany(n))
}
