//! `neardup index`: add, check, get, delete documents in a database, and its stats.

use std::io::{BufWriter, Write};

use anyhow::Context;
use neardup_store::{open_store, InsertMode, NearDupDb, OpenOptions};

use crate::choice::choice;
use crate::db_args::{opening, DbArgs};
use crate::documents::InputArgs;

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
        #[arg(long, value_parser = choice::<InsertMode>(), default_value = "if_unique")]
        insert: InsertMode,
        /// The inputs.
        #[command(flatten)]
        inputs: InputArgs,
    },
    /// Check documents without inserting them; one JSON line each. Like every subcommand but
    /// `add`, it opens only an existing database.
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
    /// Print the policy the database decides by, as JSON (for --policy-file elsewhere).
    Policy {
        /// The database.
        #[command(flatten)]
        db: DbArgs,
    },
    /// Upgrade a database of an earlier format (2) in place, keeping the decision it made.
    Migrate {
        /// The database: a directory, redis://… or redis+cluster://… (or NEARDUP_DB).
        #[arg(
            long,
            value_name = "DIR|URL",
            env = "NEARDUP_DB",
            hide_env_values = true
        )]
        db: String,
    },
}

/// Runs `neardup index`.
pub fn run(args: IndexArgs) -> anyhow::Result<()> {
    match args.command {
        IndexCommand::Add { db, insert, inputs } => check_inputs(&db, &inputs, insert),
        IndexCommand::Check { db, inputs } => check_inputs(&db, &inputs, InsertMode::Never),
        IndexCommand::Get { db, id } => {
            let record = db.open_existing()?.get(&id)?;
            let record = record.with_context(|| format!("no document {id:?}"))?;
            print_json(&record)
        }
        IndexCommand::Delete { db, id } => {
            db.open_existing()?
                .delete(&id)?
                .with_context(|| format!("no document {id:?}"))?;
            print_json(&serde_json::json!({ "deleted": id }))
        }
        IndexCommand::Stats { db } => print_json(&db.open_existing()?.stats()?),
        IndexCommand::Policy { db } => print_json(db.open_existing()?.policy()),
        IndexCommand::Migrate { db } => {
            let options = OpenOptions {
                must_exist: true,
                ..OpenOptions::default()
            };
            let store = open_store(&db, &options).map_err(|error| opening(&db, error))?;
            let meta = NearDupDb::migrate(store.as_ref())?;
            eprintln!(
                "neardup: {} is in format {}; its policy: {}",
                store.location(),
                meta.version,
                meta.policy.describe()
            );
            Ok(())
        }
    }
}

/// Writes one JSON line to standard output (an error, not a panic, if it is closed).
fn print_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer(&mut out, value)?;
    out.write_all(b"\n")?;
    Ok(out.flush()?)
}

/// Reads the inputs (checked before the database is opened) and checks (and inserts) each
/// document in input order, in chunks that are fingerprinted in parallel and committed
/// together, writing one JSON line per document to standard output; a summary goes to
/// standard error.
fn check_inputs(db: &DbArgs, args: &InputArgs, mode: InsertMode) -> anyhow::Result<()> {
    let corpus = args.corpus(false)?;
    let db = match mode {
        InsertMode::Never => db.open_existing()?,
        _ => db.open()?,
    };
    let mut out = BufWriter::new(std::io::stdout().lock());
    let (mut read, mut inserted) = (0u64, 0u64);
    let stats = db.check_corpus(&corpus, mode, |_, outcome| {
        read += 1;
        inserted += u64::from(outcome.inserted);
        serde_json::to_writer(&mut out, &outcome)?;
        out.write_all(b"\n")?;
        Ok::<_, anyhow::Error>(())
    })?;
    out.flush()?;
    eprintln!(
        "neardup: {read} documents read, {inserted} inserted, {} bad records skipped",
        stats.errors
    );
    Ok(())
}
