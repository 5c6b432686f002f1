//! Errors of the dedup engine.

/// What can go wrong: invalid options, or items that do not fit the options.
#[derive(Debug, thiserror::Error)]
pub enum DedupError {
    /// An option is out of range or contradicts another.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// The items lack what the method needs (MinHash signatures, shingle sets).
    #[error("{0}")]
    MissingData(String),
    /// Spilling to disk failed (the temporary directory is missing, full or unwritable).
    #[error("spilling to disk: {0}")]
    Spill(String),
    /// The search layer refused the request.
    #[error(transparent)]
    Index(#[from] neardup_index::IndexError),
}
