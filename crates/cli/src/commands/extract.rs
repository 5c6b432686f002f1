//! `neardup extract`: one JSON line per document with the text the other commands fingerprint
//! for it — to see what main-content extraction keeps, or to feed another tool.

use serde::Serialize;

use crate::documents::{write_json_lines, InputArgs};

/// Arguments of `neardup extract`.
#[derive(Debug, clap::Args)]
pub struct ExtractArgs {
    #[command(flatten)]
    input: InputArgs,
}

/// One output line: a document's id, URL, title and text (also what `dedup --granularity`
/// writes for a document that has no JSON record to rewrite).
#[derive(Serialize)]
pub(crate) struct TextLine<'a> {
    /// The document's id.
    pub id: &'a str,
    /// Its URL.
    pub url: Option<&'a str>,
    /// Its title.
    pub title: Option<&'a str>,
    /// Its text.
    pub text: &'a str,
}

/// Runs `neardup extract`: `{"id", "url", "title", "text"}` per document, in input order, where
/// `text` is exactly what `dedup` and `index` fingerprint for it (with the same `--html`).
pub fn run(args: ExtractArgs) -> anyhow::Result<()> {
    write_json_lines(&args.input, |doc, text| {
        serde_json::to_vec(&TextLine {
            id: &doc.id,
            url: doc.url.as_deref(),
            title: doc.title.as_deref(),
            text,
        })
    })
}
