//! Opening inputs: files or standard input, with clear errors.

use std::io::Read;
use std::path::Path;

use anyhow::Context;

/// Opens `path` for reading; `-` is standard input.
pub fn open_input(path: &Path) -> anyhow::Result<Box<dyn Read + Send>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(std::io::stdin()));
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    Ok(Box::new(file))
}

/// Reads a whole input as text. Invalid UTF-8 is an error naming the byte offset, unless
/// `lossy`, which replaces it with U+FFFD.
pub fn read_text(path: &Path, lossy: bool) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    open_input(path)?
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(error) if lossy => Ok(String::from_utf8_lossy(error.as_bytes()).into_owned()),
        Err(error) => anyhow::bail!(
            "{}: invalid UTF-8 at byte {} (use --lossy to replace invalid bytes)",
            path.display(),
            error.utf8_error().valid_up_to()
        ),
    }
}
