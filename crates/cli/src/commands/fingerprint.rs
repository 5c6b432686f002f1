//! `neardup fingerprint`: one JSON line of fingerprints per document.

use std::io::{BufWriter, Write};

use anyhow::Context;
use neardup_core::{Fingerprinter, Fingerprints};
use serde::Serialize;

use crate::documents::{for_each_document, InputArgs};
use crate::profile_args::ProfileArgs;

/// Arguments of `neardup fingerprint`.
#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {
    #[command(flatten)]
    profile: ProfileArgs,
    /// Print the profile as JSON and exit (a starting point for --profile-file).
    #[arg(long)]
    show_profile: bool,
    #[command(flatten)]
    input: InputArgs,
}

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    id: &'a str,
    #[serde(flatten)]
    fingerprints: &'a Fingerprints,
    bytes: usize,
}

/// Runs `neardup fingerprint`: every document of the inputs (read as every command reads
/// them), fingerprinted in parallel, one line each in input order.
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
    for_each_document(
        &args.input,
        false,
        |_, doc, text| {
            let line = Line {
                id: &doc.id,
                fingerprints: &fingerprinter.fingerprint(text),
                bytes: text.len(),
            };
            let mut encoded = serde_json::to_vec(&line)?;
            encoded.push(b'\n');
            Ok(encoded)
        },
        |_, encoded: serde_json::Result<Vec<u8>>| Ok(out.write_all(&encoded?)?),
    )?;
    out.flush().context("cannot write output")?;
    Ok(())
}
