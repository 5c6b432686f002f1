//! An error as the one line a command prints when it fails.

/// `error` and its causes joined by ": ", as anyhow's `{:#}` joins them, each said once: a cause
/// whose message the line holds already is left out. Many errors show their source in their own
/// message (what a server or a Python exception shows) and also return it as their
/// [`std::error::Error::source`] (what a program inspects); the line says it once.
pub fn one_line(error: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in error.chain() {
        let message = cause.to_string();
        if line.is_empty() {
            line = message;
        } else if !message.is_empty() && !line.contains(&message) {
            line.push_str(": ");
            line.push_str(&message);
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::one_line;
    use anyhow::Context;

    /// An error that says its source in its message and returns it as its source too.
    #[derive(Debug)]
    struct Telling(std::io::Error);

    impl std::fmt::Display for Telling {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "cannot read Parquet: the footer: {}", self.0)
        }
    }

    impl std::error::Error for Telling {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_the_message_says_already_is_not_repeated() {
        let io = std::io::Error::other("invalid magic");
        let error = anyhow::Error::new(Telling(io)).context("data.parquet");
        assert_eq!(
            one_line(&error),
            "data.parquet: cannot read Parquet: the footer: invalid magic"
        );
        assert_eq!(error.chain().count(), 3, "the source is kept for programs");
    }

    #[test]
    fn causes_not_said_are_joined() {
        let error: Result<(), _> = Err(std::io::Error::other("No space left on device"));
        let error = error.context("cannot write out.jsonl").unwrap_err();
        assert_eq!(
            one_line(&error),
            "cannot write out.jsonl: No space left on device"
        );
    }
}
