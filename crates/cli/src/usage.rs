//! Usage errors: an option value the command cannot run with (exit code 2, as clap's own).

use std::fmt;

/// An option value that is out of range or contradicts another option. `main` ends the run
/// with exit code 2 when this is anywhere in an error's chain, as it does for what clap refuses
/// while parsing; the message is the cause's.
#[derive(Debug)]
pub struct UsageError(pub anyhow::Error);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&crate::message::one_line(&self.0))
    }
}

impl std::error::Error for UsageError {}

/// Marks an error from checking option values as a usage error.
pub fn usage(error: impl Into<anyhow::Error>) -> UsageError {
    UsageError(error.into())
}

/// Whether `error` is a usage error (anywhere in its chain).
pub fn is_usage_error(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| cause.is::<UsageError>())
}
