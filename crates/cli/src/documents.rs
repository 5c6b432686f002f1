//! Reading documents for the commands that take corpora (`dedup`, `index`, `mirrors`,
//! `extract`): the input options they share, the text each document is fingerprinted by
//! ([`document_text`]), and mapping documents in parallel batches while a thread reads ahead.

use std::path::PathBuf;
use std::sync::mpsc::sync_channel;

use std::borrow::Cow;

use neardup_ingest::extract::{html_to_text, MainContentExtractor};
use neardup_ingest::{
    open_inputs, Body, Document, Format, IngestError, JsonlFields, ReadOptions, StatsSnapshot,
};
use rayon::prelude::*;

/// Input options shared by the commands that read corpora.
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Inputs: JSONL (.jsonl, .jsonl.gz, .jsonl.zst), folders (.txt, .html), WARC (.warc,
    /// .warc.gz); `-` reads JSONL from standard input.
    #[arg(value_name = "INPUT", required = true)]
    pub inputs: Vec<PathBuf>,
    /// Input format, instead of guessing from the extension.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<Format>,
    /// JSONL field holding the document id.
    #[arg(long, default_value = "id")]
    pub id_field: String,
    /// JSONL field holding the text.
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
    /// Largest document accepted, in bytes; larger ones are bad records.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_document_bytes: u64,
    /// Replace invalid UTF-8 with U+FFFD instead of treating the record as bad.
    #[arg(long)]
    pub lossy: bool,
    /// What to do with a bad record: report it and go on (skip), or stop (fail).
    #[arg(long, value_enum, default_value_t = OnError::Skip)]
    pub on_error: OnError,
    /// Which text of an HTML document is fingerprinted: its main content (navigation,
    /// sidebars, ads and footers dropped) or all visible text.
    #[arg(long, value_enum, default_value_t = HtmlText::Main)]
    pub html: HtmlText,
}

/// Which text of an HTML document is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum HtmlText {
    /// The main content.
    Main,
    /// All visible text.
    All,
}

/// What to do with a bad input record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnError {
    /// Report it on stderr with its place, count it, and go on.
    Skip,
    /// Stop with an error.
    Fail,
}

impl InputArgs {
    /// The reader options these arguments describe.
    pub fn read_options(&self, keep_raw: bool) -> ReadOptions {
        ReadOptions {
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
            keep_raw,
            ..ReadOptions::default()
        }
    }

    /// Whether any input is standard input (which cannot be read twice).
    pub fn reads_stdin(&self) -> bool {
        self.inputs.iter().any(|p| p.as_os_str() == "-")
    }
}

/// Documents handed to the worker pool at a time.
const BATCH_DOCUMENTS: usize = 2048;
/// Bytes of document bodies handed to the worker pool at a time.
const BATCH_BYTES: usize = 32 << 20;

/// Reads every document of `args`' inputs in order and maps each (with its
/// [`document_text`]) with `map(index, document, text)`, in parallel, calling `sink` with the results in
/// input order. `index` counts the documents read so far (bad records excluded), so a second
/// read of the same inputs gives every document the same index. Bad records
/// are reported and counted, or stop the run, as `args.on_error` says. Returns the reader's
/// statistics.
pub fn for_each_document<T: Send>(
    args: &InputArgs,
    keep_raw: bool,
    map: impl Fn(usize, &Document, &str) -> T + Sync,
    mut sink: impl FnMut(Document, T) -> anyhow::Result<()>,
) -> anyhow::Result<StatsSnapshot> {
    let inputs = open_inputs(&args.inputs, &args.read_options(keep_raw));
    let stats = inputs.stats().clone();
    let extractor = MainContentExtractor::default();
    std::thread::scope(|scope| -> anyhow::Result<()> {
        let (sender, receiver) = sync_channel::<Vec<Result<Document, IngestError>>>(2);
        scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH_DOCUMENTS);
            let mut bytes = 0;
            for record in inputs {
                bytes += record.as_ref().map_or(0, |d| d.body.as_str().len());
                batch.push(record);
                if batch.len() == BATCH_DOCUMENTS || bytes >= BATCH_BYTES {
                    if sender.send(std::mem::take(&mut batch)).is_err() {
                        return;
                    }
                    bytes = 0;
                }
            }
            let _ = sender.send(batch);
        });
        let mut next_index = 0usize;
        for batch in receiver {
            let indexed: Vec<(usize, Result<Document, IngestError>)> = batch
                .into_iter()
                .map(|record| {
                    let index = next_index;
                    next_index += usize::from(record.is_ok());
                    (index, record)
                })
                .collect();
            let mapped: Vec<Result<(Document, T), IngestError>> = indexed
                .into_par_iter()
                .map(|(index, record)| {
                    record.map(|doc| {
                        let text = document_text(&doc, args.html, &extractor);
                        let value = map(index, &doc, &text);
                        (doc, value)
                    })
                })
                .collect();
            for result in mapped {
                match result {
                    Ok((doc, value)) => sink(doc, value)?,
                    Err(error) => match args.on_error {
                        OnError::Skip => eprintln!("neardup: skipped {error}"),
                        OnError::Fail => anyhow::bail!("{error} (use --on-error skip to go on)"),
                    },
                }
            }
        }
        Ok(())
    })?;
    Ok(stats.snapshot())
}

/// The text a document is fingerprinted by: a text body as is; of an HTML body its main content
/// or all its visible text, as `html` says. The one rule every command that reads documents
/// uses (`dedup`, `index`, `mirrors`, `extract`).
pub fn document_text<'a>(
    doc: &'a Document,
    html: HtmlText,
    extractor: &MainContentExtractor,
) -> Cow<'a, str> {
    match (&doc.body, html) {
        (Body::Html(page), HtmlText::All) => Cow::Owned(html_to_text(page)),
        _ => doc.main_text(extractor),
    }
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

/// A progress bar on a terminal (documents and bytes so far); hidden in a pipe.
pub fn progress(what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        bar.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} {what}: {{human_pos}} documents, {{msg}} [{{elapsed}}]"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner());
    bar.set_style(style);
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

#[cfg(test)]
mod tests {
    use super::unix_seconds;

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
