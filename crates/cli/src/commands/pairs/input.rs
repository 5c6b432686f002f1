//! The input of `neardup pairs`, streamed a line at a time (twice when the format must be
//! guessed from every line): nothing of it is held but the line being read. Standard input is
//! first copied to a temporary file in the run's folder, so that it can be read twice too.

use std::fs::File;
use std::io::{BufRead, BufReader, Seek, SeekFrom};
use std::path::Path;

use anyhow::{bail, Context};
use neardup_index::Fingerprint;

use super::FingerprintFormat;
use crate::interrupt;

/// The input, as a file that can be read from its start again.
pub struct Source {
    file: File,
    /// Its size.
    pub bytes: u64,
    /// Bytes copied to the run's folder (standard input).
    pub spilled: u64,
}

impl Source {
    /// The file at `path`, or standard input (for `-` or no path) copied to a file in `dir`.
    pub fn open(path: Option<&Path>, dir: &Path) -> anyhow::Result<Source> {
        let (file, spilled) = match path {
            Some(p) if p.as_os_str() != "-" => (
                File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
                0,
            ),
            _ => {
                let mut file = tempfile::tempfile_in(dir)
                    .with_context(|| format!("cannot make a file in {}", dir.display()))?;
                let copied = std::io::copy(&mut std::io::stdin().lock(), &mut file)
                    .context("cannot read standard input")?;
                (file, copied)
            }
        };
        let bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        Ok(Source {
            file,
            bytes,
            spilled,
        })
    }

    /// Hands each line (from 0, trimmed) to `each`; a missing final newline is fine, an empty
    /// line is an error (an input of one newline has no line).
    fn lines(
        &self,
        mut each: impl FnMut(usize, &[u8]) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut file = self.file.try_clone().context("cannot read the input")?;
        file.seek(SeekFrom::Start(0))
            .context("cannot read the input")?;
        let mut input = BufReader::with_capacity(1 << 20, file);
        let mut line = Vec::new();
        let mut empty = None;
        for i in 0usize.. {
            line.clear();
            if input
                .read_until(b'\n', &mut line)
                .context("cannot read the input")?
                == 0
            {
                break;
            }
            if let Some((at, _)) = empty {
                bail!("line {}: empty line, expected a fingerprint", at + 1);
            }
            if i.is_multiple_of(4096) {
                interrupt::check()?;
            }
            match line.trim_ascii() {
                [] => empty = Some((i, line == b"\n")),
                trimmed => each(i, trimmed)?,
            }
        }
        match empty {
            // The whole input is one newline: no line.
            Some((0, true)) | None => Ok(()),
            Some((at, _)) => bail!("line {}: empty line, expected a fingerprint", at + 1),
        }
    }

    /// The first line, trimmed (empty if there is none).
    fn first_line(&self) -> anyhow::Result<Vec<u8>> {
        let mut file = self.file.try_clone().context("cannot read the input")?;
        file.seek(SeekFrom::Start(0))
            .context("cannot read the input")?;
        let mut line = Vec::new();
        BufReader::new(file)
            .read_until(b'\n', &mut line)
            .context("cannot read the input")?;
        Ok(line.trim_ascii().to_vec())
    }
}

/// The fingerprint width of the input, and for 64 bits whether it is hexadecimal.
#[derive(Debug, Clone, Copy)]
pub enum Width {
    /// 64 bits, hexadecimal (`true`) or decimal.
    W64(bool),
    /// 128 bits, hexadecimal.
    W128,
}

/// How the input is read: JSON lines or not, and the width.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    /// JSON lines of `neardup fingerprint`: members are named by their `id`.
    pub jsonl: bool,
    /// The width of the fingerprints (hexadecimal in JSON lines).
    pub width: Width,
}

/// One line of `neardup fingerprint`'s output, as far as `pairs` reads it.
#[derive(serde::Deserialize)]
struct FingerprintLine {
    id: String,
    simhash: String,
}

/// Decides how to read the input (see the command's documentation): from its first line, or
/// for `--format auto` on lines that are not JSON, from every line.
pub fn decide(source: &Source, format: FingerprintFormat) -> anyhow::Result<Reading> {
    let first = source.first_line()?;
    let jsonl = match format {
        FingerprintFormat::Jsonl => true,
        FingerprintFormat::Auto => first.starts_with(b"{"),
        FingerprintFormat::Dec | FingerprintFormat::Hex => false,
    };
    let width = if first.is_empty() {
        Width::W64(false)
    } else if jsonl {
        let simhash = json_line(0, &first)?.simhash;
        hex_width(simhash.as_bytes())
    } else {
        match format {
            FingerprintFormat::Dec => Width::W64(false),
            FingerprintFormat::Auto => {
                let (mut any_wide, mut all_hex) = (false, true);
                source.lines(|_, line| {
                    any_wide |= is_hex(line, 32);
                    all_hex &= is_hex(line, 16);
                    Ok(())
                })?;
                if any_wide {
                    Width::W128
                } else {
                    Width::W64(all_hex)
                }
            }
            FingerprintFormat::Hex | FingerprintFormat::Jsonl => hex_width(&first),
        }
    };
    Ok(Reading { jsonl, width })
}

/// The width of hexadecimal fingerprints like `first`.
fn hex_width(first: &[u8]) -> Width {
    if is_hex(first, 32) {
        Width::W128
    } else {
        Width::W64(true)
    }
}

/// Hands every fingerprint of the input to `each`, with its id for JSON lines.
pub fn read<F: Fingerprint>(
    source: &Source,
    reading: Reading,
    mut each: impl FnMut(F, Option<&str>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let (hex, len) = match reading.width {
        Width::W64(hex) => (hex, 16),
        Width::W128 => (true, 32),
    };
    source.lines(|i, line| {
        if reading.jsonl {
            let parsed = json_line(i, line)?;
            each(
                value(i, parsed.simhash.as_bytes(), hex, len)?,
                Some(&parsed.id),
            )
        } else {
            each(value(i, line, hex, len)?, None)
        }
    })
}

/// Line `i` read as a fingerprint JSON line.
fn json_line(i: usize, line: &[u8]) -> anyhow::Result<FingerprintLine> {
    serde_json::from_slice(line).with_context(|| {
        format!(
            "line {}: not a fingerprint JSON line ({{\"id\", \"simhash\"}}): {}",
            i + 1,
            shown(line)
        )
    })
}

/// True if `line` is `len` hex digits.
fn is_hex(line: &[u8], len: usize) -> bool {
    line.len() == len && line.iter().all(u8::is_ascii_hexdigit)
}

/// Parses line `i` as a fingerprint: `len` hex digits, or a decimal `u64`.
fn value<F: Fingerprint>(i: usize, line: &[u8], hex: bool, len: usize) -> anyhow::Result<F> {
    if hex && !is_hex(line, len) {
        bail!(
            "line {}: expected {len} hex digits like line 1 (mixed widths or formats): {}",
            i + 1,
            shown(line)
        );
    }
    let parsed = if hex {
        parse_hex(line)
    } else {
        parse_decimal(line)
    };
    parsed.map(F::from_u128).with_context(|| {
        let form = if hex { "hex" } else { "decimal u64" };
        format!("line {}: not a {form} fingerprint: {}", i + 1, shown(line))
    })
}

/// A line for an error message, cut short.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(40)]);
    format!("{text:?}")
}

/// Parses hexadecimal digits (already checked to be 16 or 32 of them).
fn parse_hex(line: &[u8]) -> Option<u128> {
    line.iter().try_fold(0u128, |acc, &c| {
        let digit = (c as char).to_digit(16)?;
        Some((acc << 4) | u128::from(digit))
    })
}

/// Parses a decimal `u64`.
fn parse_decimal(line: &[u8]) -> Option<u128> {
    let value = line.iter().try_fold(0u64, |acc, &c| {
        let digit = c.checked_sub(b'0').filter(|d| *d <= 9)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })?;
    Some(u128::from(value))
}
