//! `neardup extract`: one JSON line per document with the text the other commands fingerprint
//! for it — to see what main-content extraction keeps, or to feed another tool.

use std::io::{BufWriter, Write};

use anyhow::Context;
use serde::Serialize;

use crate::documents::{for_each_document, InputArgs};

/// Arguments of `neardup extract`.
#[derive(Debug, clap::Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    input: InputArgs,
}

/// One output line.
#[derive(Serialize)]
struct Line<'a> {
    id: &'a str,
    url: Option<&'a str>,
    title: Option<&'a str>,
    text: &'a str,
}

/// Runs `neardup extract`: `{"id", "url", "title", "text"}` per document, in input order, where
/// `text` is exactly what `dedup` and `index` fingerprint for it (with the same `--html`).
pub fn run(args: ExtractArgs) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    for_each_document(
        &args.input,
        false,
        |_, doc, text| {
            let line = Line {
                id: &doc.id,
                url: doc.url.as_deref(),
                title: doc.title.as_deref(),
                text,
            };
            let mut encoded = serde_json::to_vec(&line)?;
            encoded.push(b'\n');
            Ok::<_, serde_json::Error>(encoded)
        },
        |_, encoded| {
            out.write_all(&encoded?).context("cannot write output")?;
            Ok(())
        },
    )?;
    out.flush().context("cannot write output")?;
    Ok(())
}
