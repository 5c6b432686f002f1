//! The one error type of neardup-core.

/// Everything that can go wrong in the core: bad configuration, mismatched fingerprints, or a
/// malformed model file. Text input itself never fails: any `&str` can be fingerprinted.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A profile name that is not one of the built-in profiles.
    #[error("unknown profile {name:?} (built-in profiles: {known})")]
    UnknownProfile {
        /// The name that was asked for.
        name: String,
        /// The names that exist, comma-separated.
        known: String,
    },
    /// A profile whose options contradict each other or are out of range.
    #[error("invalid profile {profile:?}: {reason}")]
    InvalidProfile {
        /// The profile's name.
        profile: String,
        /// What is wrong, in words.
        reason: String,
    },
    /// Two fingerprints of different widths were compared.
    #[error("cannot compare a {left}-bit fingerprint with a {right}-bit one")]
    WidthMismatch {
        /// Width of the left operand in bits.
        left: u32,
        /// Width of the right operand in bits.
        right: u32,
    },
    /// A fingerprint written as text could not be parsed.
    #[error("invalid fingerprint {text:?}: expected 16 or 32 hexadecimal digits")]
    InvalidFingerprint {
        /// The text that was given.
        text: String,
    },
    /// The profile weights features by TF-IDF but no IDF model was supplied.
    #[error("profile {profile:?} weights by TF-IDF and needs an IDF model (fit one with `IdfModel::fit`)")]
    MissingIdfModel {
        /// The profile's name.
        profile: String,
    },
    /// An IDF model fitted under one feature configuration was used with another.
    #[error("the IDF model was fitted for features {model:?} but the profile makes {profile:?}")]
    IdfModelMismatch {
        /// The feature specification recorded in the model.
        model: String,
        /// The feature specification of the profile in use.
        profile: String,
    },
    /// A saved IDF model that is truncated or not an IDF model at all.
    #[error("malformed IDF model file: {0}")]
    MalformedIdfModel(String),
    /// Reading or writing a model file failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
}

/// The result type of neardup-core.
pub type Result<T, E = Error> = std::result::Result<T, E>;
