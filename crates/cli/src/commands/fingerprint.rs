//! `neardup fingerprint`: one JSON line of fingerprints per document.

use std::io::{self, BufWriter, Write};

use anyhow::Context;
use neardup_core::{Fingerprinter, Fingerprints};
use serde::Serialize;

use crate::documents::InputArgs;
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
    if args.show_profile {
        crate::output::print_pretty_json(&profile)?;
        return Ok(());
    }
    let fingerprinter = Fingerprinter::new(profile)?;
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    // The workers fingerprint; each line is made here, in input order, in one buffer used
    // again and again (not a line of its own allocated on a worker and freed on this thread).
    let mut line = Vec::with_capacity(4096);
    args.input.corpus(false)?.map_each_document(
        "reading",
        false,
        |_, doc, text| (doc.id.clone(), fingerprinter.fingerprint(text), text.len()),
        |(id, fingerprints, bytes)| -> anyhow::Result<()> {
            line.clear();
            let fields = Line {
                id: &id,
                fingerprints: &fingerprints,
                bytes,
            };
            serde_json::to_writer(&mut line, &fields)?;
            line.push(b'\n');
            out.write_all(&line).context("cannot write output")
        },
    )?;
    out.flush().context("cannot write output")
}
