//! `--memory` and `--tmp-dir`: the memory budget of a batch command (see
//! [`neardup_dedup::Budget`]).

use std::num::NonZeroUsize;
use std::path::PathBuf;

use anyhow::Context;
use neardup_dedup::Budget;

use crate::interrupt;

/// The memory budget options every batch command takes.
#[derive(Debug, clap::Args)]
pub struct BudgetArgs {
    /// Memory the run may hold for its own data (e.g. 512M, 2G, 8GiB): what does not fit is
    /// written to --tmp-dir and read back. Decisions are the same at any budget.
    #[arg(long, value_name = "SIZE", default_value = "2GiB", value_parser = parse_memory)]
    memory: u64,
    /// Where data that does not fit the budget goes (removed when the run ends) [default:
    /// $TMPDIR, else /tmp].
    #[arg(long, value_name = "DIR")]
    tmp_dir: Option<PathBuf>,
}

impl BudgetArgs {
    /// The budget, spilling into a folder of its own in --tmp-dir, made now (a missing or
    /// unwritable --tmp-dir fails before any input is read) and removed when the returned
    /// guard is dropped, or by the signal thread if a signal ends the run.
    pub fn budget(&self) -> anyhow::Result<(Budget, tempfile::TempDir)> {
        let parent = Budget::new(self.memory, self.tmp_dir.clone())?.spill_dir();
        let mut registry = interrupt::lock()?;
        let dir = tempfile::Builder::new()
            .prefix("neardup-run-")
            .tempdir_in(&parent)
            .with_context(|| format!("--tmp-dir {}: cannot make a folder", parent.display()))?;
        registry.remove_on_signal(dir.path());
        let budget = Budget::new(self.memory, Some(dir.path().to_path_buf()))?;
        Ok((budget, dir))
    }

    /// The budget, in bytes.
    pub fn memory(&self) -> u64 {
        self.memory
    }

    /// For the commands that hold their data in memory instead of spilling it (`held` says
    /// what they hold): warns when the peak resident memory the kernel measured went above the
    /// budget, naming what was held, so that the budget is never exceeded silently.
    pub fn warn_if_exceeded(&self, command: &str, held: &str) {
        if let Some(peak) = neardup_dedup::peak_resident_bytes().filter(|&p| p > self.memory) {
            tracing::warn!(
                "{command}: peak resident memory {} MiB above --memory {} MiB: it holds {held} in memory",
                peak >> 20,
                self.memory >> 20
            );
        }
    }
}

/// The worker threads a command runs with, or `None` to leave rayon's default: `requested`
/// (`--threads`), else the default (`RAYON_NUM_THREADS`, else one a processor), but for a batch
/// command with `memory` bytes of budget at most [`Budget::max_threads`] of it. Lowering an
/// explicit `--threads` is said in a warning.
pub fn worker_threads(requested: Option<NonZeroUsize>, memory: Option<u64>) -> Option<usize> {
    let Some(memory) = memory else {
        return requested.map(NonZeroUsize::get);
    };
    let most = Budget::max_threads(memory);
    match requested.map(NonZeroUsize::get) {
        Some(threads) if threads > most => {
            tracing::warn!(
                "--threads {threads} lowered to {most}: each worker thread holds about {} MiB \
                 beside what the engine counts, and --memory is {} MiB",
                Budget::THREAD_MEMORY >> 20,
                memory >> 20
            );
            Some(most)
        }
        Some(threads) => Some(threads),
        None => (default_threads() > most).then_some(most),
    }
}

/// The worker threads rayon starts by default: `RAYON_NUM_THREADS` if it names a number,
/// else one a processor.
fn default_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|&threads| threads > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, NonZeroUsize::get))
}

/// Parses a size such as `512M`, `2G`, `2GiB` or `1500000000`.
pub(crate) fn parse_memory(text: &str) -> Result<u64, String> {
    let bytes = parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .map_err(|e| format!("{e} (try 512M, 2G or 8GiB)"))?;
    if bytes < Budget::MIN_MEMORY {
        return Err(format!(
            "{bytes} bytes is below the least a run needs ({} MiB)",
            Budget::MIN_MEMORY >> 20
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::parse_memory;

    #[test]
    fn sizes_are_read_in_binary_units() {
        assert_eq!(parse_memory("2G"), Ok(2 << 30));
        assert_eq!(parse_memory("2GiB"), Ok(2 << 30));
        assert_eq!(parse_memory("512M"), Ok(512 << 20));
        assert!(parse_memory("lots").is_err());
        assert!(parse_memory("10").is_err(), "below the minimum");
    }
}
