//! `--kept`: the input records of the kept documents, unchanged and in input order, in the
//! format they came in: JSON Lines as read (byte for byte, each followed by a newline), WARC
//! records as WARC, one gzip member a record when the input was `.warc.gz`. One output holds
//! one format: inputs of two formats are refused up front.

use std::io::Write;

use neardup_ingest::Format;

use crate::documents::Corpus;

/// The format of a `--kept` output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KeptFormat {
    /// JSON Lines: each record's line as read; a file read whole (`.txt`, `.html`) as a line
    /// `{"id", "text"}`.
    Jsonl,
    /// WARC records as read.
    Warc,
    /// WARC records as read, each compressed as a gzip member.
    WarcGz,
}

impl KeptFormat {
    fn of(format: Format) -> KeptFormat {
        match format {
            Format::Warc => KeptFormat::Warc,
            Format::WarcGz => KeptFormat::WarcGz,
            _ => KeptFormat::Jsonl,
        }
    }

    fn name(self) -> &'static str {
        match self {
            KeptFormat::Jsonl => "JSON Lines",
            KeptFormat::Warc => "WARC",
            KeptFormat::WarcGz => "gzip-compressed WARC",
        }
    }
}

/// The one format the corpus' kept records are written in (JSON Lines when no input's format
/// is known yet); an error naming both when the inputs hold records of two.
fn kept_format(corpus: &Corpus) -> anyhow::Result<KeptFormat> {
    let mut formats = corpus.formats().map(KeptFormat::of);
    let first = formats.next().unwrap_or(KeptFormat::Jsonl);
    if let Some(other) = formats.find(|f| *f != first) {
        anyhow::bail!(
            "--kept writes records in the format they came in, one format a file, but the inputs hold {} and {} records: dedup them in separate runs, or leave out --kept",
            first.name(),
            other.name()
        );
    }
    Ok(first)
}

/// Checks, before anything is read, that the kept records can go in one output.
pub fn check(corpus: &Corpus) -> anyhow::Result<()> {
    kept_format(corpus).map(|_| ())
}

/// Writes the input records of the documents whose `kept` entry is true, read again from the
/// corpus, to `out`.
pub fn write_kept(out: &mut impl Write, corpus: &Corpus, kept: &[bool]) -> anyhow::Result<()> {
    let format = kept_format(corpus)?;
    let mut index = 0usize;
    corpus.for_each_document(
        "writing kept records",
        true,
        // Only a document without a raw record (a file read whole) needs its text.
        |_, doc, text| doc.raw.is_none().then(|| text.to_string()),
        |doc, text| {
            if kept.get(index).copied().unwrap_or(false) {
                match (doc.raw.as_deref(), format) {
                    (Some(raw), KeptFormat::WarcGz) => {
                        let mut member = flate2::write::GzEncoder::new(
                            &mut *out,
                            flate2::Compression::default(),
                        );
                        member.write_all(raw)?;
                        member.finish()?;
                    }
                    (Some(raw), KeptFormat::Warc) => out.write_all(raw)?,
                    (Some(raw), KeptFormat::Jsonl) => {
                        out.write_all(raw)?;
                        out.write_all(b"\n")?;
                    }
                    (None, _) => {
                        let line = serde_json::json!({ "id": doc.id, "text": text });
                        serde_json::to_writer(&mut *out, &line)?;
                        out.write_all(b"\n")?;
                    }
                }
            }
            index += 1;
            Ok(())
        },
    )?;
    anyhow::ensure!(
        index == kept.len(),
        "the inputs changed while deduplicating ({index} documents on the last read, {} on the first)",
        kept.len()
    );
    Ok(())
}
