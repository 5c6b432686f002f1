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
    /// Spilling to disk failed (the temporary directory is missing, full or unwritable), or
    /// what was spilled came back damaged.
    #[error("spilling to disk: {what}")]
    Spill {
        /// What failed (with the I/O error's message, where one failed).
        what: String,
        /// The I/O error, where one failed.
        #[source]
        source: Option<std::io::Error>,
    },
    /// Reading the inputs again for the shingle sets failed.
    #[error("reading the inputs again for verification: {0}")]
    Reread(#[source] neardup_ingest::CorpusError),
    /// A file of seen units (`--seen`) could not be read or written, or is not one.
    #[error("seen units: {what}")]
    Seen {
        /// What failed, and where.
        what: String,
        /// The I/O error, where one failed.
        #[source]
        source: Option<std::io::Error>,
    },
    /// A record could not be rewritten with its new text.
    #[error("cannot rewrite the record: {0}")]
    Record(#[source] serde_json::Error),
    /// Reading the inputs failed (dedup below the document reads them itself).
    #[error(transparent)]
    Corpus(Box<neardup_ingest::CorpusError>),
    /// The search layer refused the request.
    #[error(transparent)]
    Index(#[from] neardup_index::IndexError),
}

impl From<neardup_index::SpillError> for DedupError {
    fn from(error: neardup_index::SpillError) -> Self {
        match error {
            neardup_index::SpillError::Index(e) => DedupError::Index(e),
            neardup_index::SpillError::Io { context, source } => DedupError::Spill {
                what: format!("{context}: {source}"),
                source: Some(source),
            },
        }
    }
}

impl From<neardup_ingest::CorpusError> for DedupError {
    fn from(error: neardup_ingest::CorpusError) -> Self {
        DedupError::Corpus(Box::new(error))
    }
}

impl DedupError {
    /// A file of seen units failed: `what`, with the I/O error `source` if one failed.
    pub fn seen(what: String, source: Option<std::io::Error>) -> DedupError {
        DedupError::Seen { what, source }
    }

    /// Spilling failed: `doing` met the I/O error `source`.
    pub fn spill(doing: &str, source: std::io::Error) -> DedupError {
        DedupError::Spill {
            what: format!("{doing}: {source}"),
            source: Some(source),
        }
    }
}
