//! `neardup`: find duplicate and near-duplicate text.
//!
//! A thin layer: each subcommand parses its arguments, calls the library crates and formats the
//! result. Exit codes: 0 success, 1 error (one readable line on stderr), 2 usage error, 130
//! and 143 a batch run ended by SIGINT or SIGTERM (see [`interrupt`]). A closed standard output
//! (`neardup ... | head`) ends the run quietly with 0.

mod budget_args;
mod choice;
mod commands;
mod db_args;
mod documents;
mod input;
mod interrupt;
mod kept;
mod message;
mod output;
mod plot;
mod policy_args;
mod profile_args;
mod progress;
mod usage;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Find duplicate and near-duplicate text in web crawls, news feeds and training corpora.
#[derive(Debug, Parser)]
#[command(name = "neardup", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Worker threads for the parallel work of every command (default: one per processor); a
    /// batch command uses at most one for every 64 MiB of its --memory.
    #[arg(long, global = true, value_name = "N", env = "NEARDUP_THREADS")]
    threads: Option<std::num::NonZeroUsize>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Find the exact and near duplicates in a corpus: what to keep, what goes, and why.
    Dedup(Box<commands::dedup::DedupArgs>),
    /// Find mirror sites: host or path-prefix pairs whose shared paths carry the same content.
    Mirrors(commands::mirrors::MirrorsArgs),
    /// Write one JSON line per document with the text the other commands fingerprint for it.
    Extract(commands::extract::ExtractArgs),
    /// Write one JSON line of fingerprints per document.
    Fingerprint(commands::fingerprint::FingerprintArgs),
    /// Explain how similar two texts are, and why.
    Compare(commands::compare::CompareArgs),
    /// Find every pair of fingerprints within a Hamming distance, or their clusters (JSON lines).
    Pairs(commands::pairs::PairsArgs),
    /// Precision, recall and F1 of the near-duplicate decision on labelled pairs.
    Eval(commands::eval::EvalArgs),
    /// Add, check, get and delete documents in a near-duplicate database.
    Index(commands::index::IndexArgs),
    /// Serve a near-duplicate database as JSON over HTTP.
    Serve(commands::serve::ServeArgs),
}

impl Command {
    /// The memory budget options of a batch command.
    fn budget(&self) -> Option<&budget_args::BudgetArgs> {
        match self {
            Command::Dedup(args) => Some(&args.budget),
            Command::Mirrors(args) => Some(&args.budget),
            Command::Pairs(args) => Some(&args.budget),
            Command::Eval(args) => Some(&args.budget),
            Command::Extract(_)
            | Command::Fingerprint(_)
            | Command::Compare(_)
            | Command::Index(_)
            | Command::Serve(_) => None,
        }
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("NEARDUP_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a person at a terminal, never in a log file or a pipe.
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    let cli = Cli::parse();
    let memory = cli.command.budget().map(budget_args::BudgetArgs::memory);
    if let Some(threads) = budget_args::worker_threads(cli.threads, memory) {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads);
        if let Err(error) = pool.build_global() {
            eprintln!("neardup: cannot start {threads} worker threads: {error}");
            return ExitCode::from(1);
        }
    }
    // `serve` drains its connections on SIGINT and SIGTERM itself.
    if !matches!(cli.command, Command::Serve(_)) {
        if let Err(error) = interrupt::install() {
            eprintln!("neardup: {}", message::one_line(&error));
            return ExitCode::from(1);
        }
    }
    let result = match cli.command {
        Command::Dedup(args) => commands::dedup::run(*args),
        Command::Extract(args) => commands::extract::run(args),
        Command::Fingerprint(args) => commands::fingerprint::run(args),
        Command::Mirrors(args) => commands::mirrors::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Pairs(args) => commands::pairs::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Index(args) => commands::index::run(args),
        Command::Serve(args) => commands::serve::run(args),
    };
    match (result, interrupt::received()) {
        (Ok(()), _) => ExitCode::SUCCESS,
        // Whatever error the signal made on its way up, the signal is what ended the run.
        (Err(_), Some(interrupted)) => {
            eprintln!("neardup: {interrupted}");
            ExitCode::from(interrupted.exit_code())
        }
        (Err(error), None) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        (Err(error), None) => {
            // One readable line: the error and its causes, joined.
            eprintln!("neardup: {}", message::one_line(&error));
            ExitCode::from(if usage::is_usage_error(&error) { 2 } else { 1 })
        }
    }
}

/// Whether an error comes from writing to a closed pipe: the reader of the output has what it
/// wanted (`| head`), so the run ends quietly, as ripgrep's does.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| cause.downcast_ref::<serde_json::Error>()?.io_error_kind());
        kind == Some(std::io::ErrorKind::BrokenPipe)
    })
}
