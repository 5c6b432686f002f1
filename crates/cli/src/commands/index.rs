//! `neardup index`: add, check, get, delete documents in a database, and its stats.

use std::io::{BufWriter, Write};
use std::path::PathBuf;

use anyhow::Context;
use neardup_ingest::extract::MainContentExtractor;
use neardup_ingest::{open_inputs, Format, ReadOptions};
use neardup_store::{InsertMode, NearDupDb, NewDocument};

use crate::db_args::DbArgs;

/// Documents read and checked per group (fingerprinted in parallel, committed together).
const CHUNK: usize = 1024;

/// Arguments of `neardup index`.
#[derive(Debug, clap::Args)]
pub struct IndexArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: IndexCommand,
}

/// The `neardup index` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum IndexCommand {
    /// Check documents and insert them (by default only the unique ones); one JSON line each.
    Add {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
        /// Which documents to insert.
        #[arg(long, value_enum, default_value_t = Mode::IfUnique)]
        insert: Mode,
        /// The inputs.
        #[command(flatten)]
        inputs: InputArgs,
    },
    /// Check documents without inserting them; one JSON line each.
    Check {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
        /// The inputs.
        #[command(flatten)]
        inputs: InputArgs,
    },
    /// Print one document's record as JSON.
    Get {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
        /// The document's id.
        id: String,
    },
    /// Delete one document.
    Delete {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
        /// The document's id.
        id: String,
    },
    /// Print the database's figures as JSON.
    Stats {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
    },
}

/// `--insert` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Mode {
    /// Insert unique documents only.
    IfUnique,
    /// Insert every document.
    Always,
}

/// The documents to read (the same inputs `neardup dedup` takes).
#[derive(Debug, Clone, clap::Args)]
pub struct InputArgs {
    /// Input files or folders (JSONL, text, HTML, WARC; compressed too); `-` is standard input.
    #[arg(default_value = "-")]
    pub inputs: Vec<PathBuf>,
    /// Input format, instead of guessing from each name.
    #[arg(long)]
    pub format: Option<Format>,
    /// Stop at the first bad record instead of reporting it and going on.
    #[arg(long)]
    pub strict: bool,
}

/// Runs `neardup index`.
pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    match args.command {
        IndexCommand::Add { db, insert, inputs } => {
            let mode = match insert {
                Mode::IfUnique => InsertMode::IfUnique,
                Mode::Always => InsertMode::Always,
            };
            check_inputs(&db.open()?, &inputs, mode)
        }
        IndexCommand::Check { db, inputs } => check_inputs(&db.open()?, &inputs, InsertMode::Never),
        IndexCommand::Get { db, id } => {
            let record = db.open()?.get(&id)?;
            let record = record.with_context(|| format!("no document {id:?}"))?;
            println!("{}", serde_json::to_string(&record)?);
            Ok(())
        }
        IndexCommand::Delete { db, id } => {
            db.open()?
                .delete(&id)?
                .with_context(|| format!("no document {id:?}"))?;
            println!("{}", serde_json::json!({ "deleted": id }));
            Ok(())
        }
        IndexCommand::Stats { db } => {
            println!("{}", serde_json::to_string(&db.open()?.stats()?)?);
            Ok(())
        }
    }
}

/// Reads the inputs in chunks and checks (and inserts) each document, writing one JSON line per
/// document to standard output; a summary goes to standard error.
fn check_inputs(db: &NearDupDb, args: &InputArgs, mode: InsertMode) -> anyhow::Result<()> {
    let options = ReadOptions {
        format: args.format,
        ..ReadOptions::default()
    };
    let extractor = MainContentExtractor::default();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut read, mut inserted, mut failed) = (0u64, 0u64, 0u64);
    let mut chunk = Vec::with_capacity(CHUNK);
    let mut inputs = open_inputs(&args.inputs, &options).peekable();
    while inputs.peek().is_some() {
        chunk.clear();
        for item in inputs.by_ref().take(CHUNK) {
            match item {
                Ok(doc) => chunk.push(NewDocument {
                    text: doc.main_text(&extractor).into_owned(),
                    id: Some(doc.id),
                    url: doc.url,
                    title: doc.title,
                    fetched_at: doc.fetched_at,
                }),
                Err(error) if !args.strict => {
                    failed += 1;
                    eprintln!("neardup: skipped: {error}");
                }
                Err(error) => return Err(error.into()),
            }
        }
        read += chunk.len() as u64;
        for (doc, result) in chunk.iter().zip(db.check_and_insert_many(&chunk, mode)) {
            match result {
                Ok(outcome) => {
                    inserted += u64::from(outcome.inserted);
                    serde_json::to_writer(&mut out, &outcome)?;
                    out.write_all(b"\n")?;
                }
                Err(error) if !args.strict => {
                    failed += 1;
                    eprintln!("neardup: {}: {error}", doc.id.as_deref().unwrap_or("?"));
                }
                Err(error) => return Err(error.into()),
            }
        }
    }
    out.flush()?;
    eprintln!("neardup: {read} documents read, {inserted} inserted, {failed} failed");
    Ok(())
}
