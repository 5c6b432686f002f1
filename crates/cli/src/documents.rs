//! The input options of every command that reads documents (`fingerprint`, `dedup`, `index
//! add`/`check`, `mirrors`, `extract`, and `compare`'s [`ReadArgs`]), turned into the library's
//! [`CorpusOptions`]; the [`Corpus`] (neardup-ingest's one reader) made with the command line's
//! hooks: progress bars on standard error, skipped records reported there, SIGINT and SIGTERM
//! ([`crate::interrupt`]) stopping the read and removing its temporary folder.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use indicatif::ProgressBar;
use neardup_ingest::{
    Corpus, CorpusOptions, Document, Format, HtmlText, IngestError, JsonlFields, OnError,
    ReadHooks, ReadOptions, ReadProgress, StatsSnapshot, Stop, DEFAULT_MAX_DOCUMENT_BYTES,
};

use crate::choice::choice;
use crate::usage::usage;
use crate::{interrupt, progress};

/// Input options shared by the commands that read documents.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Inputs: JSONL (.jsonl, .jsonl.gz, .jsonl.zst), WARC (.warc, .warc.gz), Parquet
    /// (.parquet, a document a row, columns named as the JSONL fields), text (.txt, one
    /// document a file), HTML (.html), folders of these; `-` (or no input) is standard input.
    /// Pipes, FIFOs and `<(...)` work too; a stream's format is guessed from its first bytes
    /// unless its name or --format gives it.
    #[arg(value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// How they are read.
    #[command(flatten)]
    pub read: ReadArgs,
}

/// How documents are read: the options of every command that reads them (`compare` too).
#[derive(Debug, Clone, clap::Args)]
pub struct ReadArgs {
    /// Input format of every input (one of jsonl, jsonl.gz, jsonl.zst, warc, warc.gz, txt,
    /// html, parquet), instead of telling it from the name.
    #[arg(long, value_name = "FORMAT", alias = "input-format")]
    pub format: Option<Format>,
    /// JSONL field (Parquet column) holding the document id (a string or a number; `FILE:LINE`,
    /// or `FILE:ROW`, if absent).
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// JSONL field (Parquet column) holding the text.
    #[arg(long, default_value = "text")]
    pub text_field: String,
    /// JSONL field holding HTML (used when the text field is absent).
    #[arg(long, default_value = "html")]
    pub html_field: String,
    /// JSONL field holding the URL.
    #[arg(long, default_value = "url")]
    pub url_field: String,
    /// JSONL field holding the title.
    #[arg(long, default_value = "title")]
    pub title_field: String,
    /// JSONL field holding the fetch time (RFC 3339 or Unix seconds).
    #[arg(long, default_value = "fetched_at")]
    pub fetched_at_field: String,
    /// Largest record accepted, in bytes (a JSONL line, a file, a WARC record); a larger one
    /// is a bad record, read through without being held.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_DOCUMENT_BYTES)]
    pub max_document_bytes: u64,
    /// Replace invalid UTF-8 with U+FFFD instead of treating the record as bad.
    #[arg(long)]
    pub lossy: bool,
    /// What to do with a bad record inside a readable input: report it once with its place and
    /// go on (skip), or stop (fail). An input that cannot be opened or read, or whose format
    /// is unknown, always stops the run.
    #[arg(long, value_parser = choice::<OnError>(), default_value = "skip")]
    pub on_error: OnError,
    /// Which text of an HTML document is used.
    #[arg(long, value_parser = choice::<HtmlText>(), default_value = "main")]
    pub html: HtmlText,
}

impl InputArgs {
    /// The corpus of these inputs, checked (see [`Corpus::new`]); with `reread`, streams are
    /// copied aside to be read again. No input while standard input is a terminal is a usage
    /// error: the run would wait silently for documents typed in.
    pub fn corpus(&self, reread: bool) -> anyhow::Result<Corpus> {
        if would_wait_for_a_terminal(&self.inputs, io::stdin().is_terminal()) {
            return Err(usage(anyhow::anyhow!(
                "no input given, and standard input is a terminal: give files or folders to read, or pipe documents in (`-` reads standard input)"
            ))
            .into());
        }
        let inputs = match self.inputs.is_empty() {
            true => vec![PathBuf::from("-")],
            false => self.inputs.clone(),
        };
        let options = CorpusOptions {
            inputs,
            ..self.read.options()
        };
        Ok(Corpus::new(options, reread, Arc::new(CliHooks))?)
    }
}

/// Whether a run would wait for documents typed at a terminal: no input is given (standard
/// input is read) and standard input is a terminal.
fn would_wait_for_a_terminal(inputs: &[PathBuf], stdin_is_terminal: bool) -> bool {
    inputs.is_empty() && stdin_is_terminal
}

impl ReadArgs {
    /// The library's options for these arguments (no input yet).
    pub fn options(&self) -> CorpusOptions {
        CorpusOptions {
            inputs: Vec::new(),
            read: ReadOptions {
                format: self.format,
                fields: JsonlFields {
                    id: self.id_field.clone(),
                    text: self.text_field.clone(),
                    html: Some(self.html_field.clone()),
                    url: Some(self.url_field.clone()),
                    title: Some(self.title_field.clone()),
                    fetched_at: Some(self.fetched_at_field.clone()),
                },
                max_document_bytes: self.max_document_bytes,
                lossy_utf8: self.lossy,
                ..ReadOptions::default()
            },
            on_error: self.on_error,
            html: self.html,
        }
    }
}

/// The command line's [`ReadHooks`].
struct CliHooks;

impl ReadHooks for CliHooks {
    fn check(&self) -> Result<(), Stop> {
        Ok(interrupt::check()?)
    }

    fn register_temporary(&self, create: &mut dyn FnMut() -> Option<PathBuf>) -> Result<(), Stop> {
        let mut registry = interrupt::lock()?;
        if let Some(path) = create() {
            registry.remove_on_signal(&path);
        }
        Ok(())
    }

    fn progress(&self, label: &str, total_bytes: Option<u64>) -> Box<dyn ReadProgress> {
        let bar = progress::read_bar(label, total_bytes);
        bar.set_message("0 documents");
        Box::new(Bar(bar))
    }

    fn skipped(&self, error: &IngestError) {
        eprintln!("neardup: skipped {error}");
    }
}

/// A read's progress bar.
struct Bar(ProgressBar);

impl ReadProgress for Bar {
    fn advance(&self, bytes: u64, documents: u64) {
        self.0.set_position(bytes);
        self.0.set_message(format!("{documents} documents"));
    }

    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// Reads every document of `args`' inputs once, in order, and maps each (with its text) with
/// `map(index, document, text)`, in parallel, calling `sink` with the results in input order,
/// with a progress bar labelled `reading` (see [`Corpus::for_each_document`]).
pub fn for_each_document<T: Send>(
    args: &InputArgs,
    map: impl Fn(usize, &Document, &str) -> T + Sync,
    sink: impl FnMut(Document, T) -> anyhow::Result<()>,
) -> anyhow::Result<StatsSnapshot> {
    args.corpus(false)?
        .for_each_document("reading", false, map, sink)
}

/// Writes one JSON line per document of `args`' inputs to standard output, in input order:
/// `encode(document, text)` serialises a document's line (in parallel, as
/// [`for_each_document`] maps). The output of `extract`.
pub fn write_json_lines(
    args: &InputArgs,
    encode: impl Fn(&Document, &str) -> serde_json::Result<Vec<u8>> + Sync,
) -> anyhow::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    // Only the lines come back: each document is dropped where it was encoded.
    args.corpus(false)?.map_each_document(
        "reading",
        false,
        |_, doc, text| {
            encode(doc, text).map(|mut line| {
                line.push(b'\n');
                line
            })
        },
        |line| -> anyhow::Result<()> {
            out.write_all(&line?).context("cannot write output")?;
            Ok(())
        },
    )?;
    out.flush().context("cannot write output")?;
    Ok(())
}

/// Unix seconds of a fetch time given as RFC 3339 or as a number of seconds.
pub fn unix_seconds(fetched_at: &str) -> Option<i64> {
    let text = fetched_at.trim();
    if let Ok(seconds) = text.parse::<i64>() {
        return Some(seconds);
    }
    time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339)
        .ok()
        .map(|t| t.unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_input_on_a_terminal_would_wait() {
        assert!(would_wait_for_a_terminal(&[], true));
        assert!(!would_wait_for_a_terminal(&[], false), "a pipe or a file");
        let given = [PathBuf::from("-")];
        assert!(!would_wait_for_a_terminal(&given, true), "asked for");
    }

    #[test]
    fn fetch_times_parse() {
        assert_eq!(unix_seconds("1700000000"), Some(1_700_000_000));
        assert_eq!(unix_seconds("2023-11-14T22:13:20Z"), Some(1_700_000_000));
        assert_eq!(
            unix_seconds("2023-11-15T00:13:20+02:00"),
            Some(1_700_000_000)
        );
        assert_eq!(unix_seconds("yesterday"), None);
    }
}
