//! `neardup fingerprint`: one JSON line of fingerprints per document.

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::Context;
use neardup_core::{Fingerprinter, Fingerprints};
use neardup_ingest::{decode_utf8, parse_record, ErrorKind, JsonlFields};
use rayon::prelude::*;
use serde::Serialize;

use crate::blocks::{for_each_block, lines};
use crate::input::{open_input, read_text};
use crate::profile_args::ProfileArgs;

/// Arguments of `neardup fingerprint`.
#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {
    #[command(flatten)]
    profile: ProfileArgs,
    /// How inputs are read: each file one document (text), or one JSON object a line (jsonl).
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    input_format: InputFormat,
    /// JSONL field holding the document id (a string or number; line number if absent).
    #[arg(long, default_value = "id")]
    id_field: String,
    /// JSONL field holding the text.
    #[arg(long, default_value = "text")]
    text_field: String,
    /// Replace invalid UTF-8 with U+FFFD instead of failing.
    #[arg(long)]
    lossy: bool,
    /// Print the profile as JSON and exit (a starting point for --profile-file).
    #[arg(long)]
    show_profile: bool,
    /// Input files; `-` or nothing reads standard input.
    #[arg(value_name = "FILE")]
    inputs: Vec<PathBuf>,
}

/// How `neardup fingerprint` reads its inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum InputFormat {
    Text,
    Jsonl,
}

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    id: &'a str,
    #[serde(flatten)]
    fingerprints: &'a Fingerprints,
    bytes: usize,
}

/// Bytes of JSONL read and fingerprinted in parallel at a time.
const BLOCK_BYTES: usize = 16 << 20;

/// Runs `neardup fingerprint`.
pub fn run(args: FingerprintArgs) -> anyhow::Result<()> {
    let profile = args.profile.load()?;
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    if args.show_profile {
        serde_json::to_writer_pretty(&mut out, &profile)?;
        writeln!(out)?;
        return Ok(out.flush()?);
    }
    let fingerprinter = Fingerprinter::new(profile)?;
    let inputs = if args.inputs.is_empty() {
        vec![PathBuf::from("-")]
    } else {
        args.inputs.clone()
    };
    for path in &inputs {
        match args.input_format {
            InputFormat::Text => {
                let text = read_text(path, args.lossy)?;
                let fingerprints = fingerprinter.fingerprint(&text);
                let id = path.display().to_string();
                write_line(&mut out, &id, &fingerprints, text.len())?;
            }
            InputFormat::Jsonl => {
                let input = open_input(path)?;
                fingerprint_jsonl(&fingerprinter, &args, path, input, &mut out)?;
            }
        }
    }
    out.flush().context("cannot write output")?;
    Ok(())
}

fn write_line(
    out: &mut impl Write,
    id: &str,
    fingerprints: &Fingerprints,
    bytes: usize,
) -> anyhow::Result<()> {
    let line = Line {
        id,
        fingerprints,
        bytes,
    };
    serde_json::to_writer(&mut *out, &line)?;
    out.write_all(b"\n")?;
    Ok(())
}

/// Fingerprints a JSONL stream block by block, the lines of a block in parallel, writing the
/// results in input order. Stops at the first bad line, after writing every line before it.
fn fingerprint_jsonl(
    fingerprinter: &Fingerprinter,
    args: &FingerprintArgs,
    path: &std::path::Path,
    input: impl Read + Send,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    // Only the id and the text are read: other fields are not type-checked, and no html
    // field stands in for a missing text.
    let fields = JsonlFields::id_and_text(&args.id_field, &args.text_field);
    for_each_block(input, BLOCK_BYTES, |block, first_line| {
        let lines: Vec<(u64, &[u8])> = lines(block, first_line)
            .filter(|(_, line)| !line.iter().all(u8::is_ascii_whitespace))
            .collect();
        let results: Vec<anyhow::Result<Vec<u8>>> = lines
            .par_iter()
            .map(|&(number, line)| {
                let bad = |kind| anyhow::anyhow!("{}:{number}: {}", path.display(), describe(kind));
                let line = decode_utf8(line, args.lossy).map_err(bad)?;
                let record = parse_record(&line, &fields).map_err(bad)?;
                let text = record.body.as_str();
                let fingerprints = fingerprinter.fingerprint(text);
                let id = record.id.unwrap_or_else(|| number.to_string().into());
                let mut encoded = Vec::with_capacity(160);
                write_line(&mut encoded, &id, &fingerprints, text.len())?;
                Ok(encoded)
            })
            .collect();
        for result in results {
            out.write_all(&result?)?;
        }
        Ok(())
    })
}

/// What is wrong with a JSONL line, in the words `neardup fingerprint` has always used: type
/// errors and non-objects count as malformed JSON, as they did when serde reported them.
fn describe(kind: ErrorKind) -> String {
    match kind {
        ErrorKind::InvalidUtf8 { valid_up_to } => {
            format!("invalid UTF-8 at byte {valid_up_to} (use --lossy to replace invalid bytes)")
        }
        // A record is one line, so serde_json's own message ends "at line 1 column N".
        ErrorKind::Json { column, message } => {
            format!("malformed JSON: {message} at line 1 column {column}")
        }
        ErrorKind::MissingText { text, .. } => format!("no string field {text:?}"),
        other => format!("malformed JSON: {other}"),
    }
}
