//! `neardup fingerprint`: one JSON line of fingerprints per document.

use neardup_core::{Fingerprinter, Fingerprints};
use serde::Serialize;

use crate::documents::{write_json_lines, InputArgs};
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
    write_json_lines(&args.input, |doc, text| {
        // Room for a whole line at once (a 64-bit line is about 150 bytes and the id's),
        // not grown from empty in steps.
        let mut line = Vec::with_capacity(256 + doc.id.len());
        serde_json::to_writer(
            &mut line,
            &Line {
                id: &doc.id,
                fingerprints: &fingerprinter.fingerprint(text),
                bytes: text.len(),
            },
        )?;
        Ok(line)
    })
}
