//! [`Budget`]: how much memory a batch run may hold, and where what does not fit goes.

use std::path::{Path, PathBuf};

use crate::error::DedupError;

/// The memory a batch run may hold, and the directory it spills to.
///
/// The engine adds up what it holds per document (fingerprints, exact groups, the values and
/// pairs of the search, the order of decisions) and gives what is left to the shingle sets
/// verification reads: those are held in memory while they fit, and written to a temporary file
/// in [`Budget::tmp_dir`] beyond that, read back through a cache of the same share. The
/// temporary files are removed when the run ends, fails or is dropped.
///
/// What the run holds is also measured: the process's resident memory as the kernel counts it
/// when the engine asks ([`resident_bytes`]), beyond [`Budget::held_before`]. One rule for
/// every door: a budget made by [`Budget::new`] (or [`Budget::default`]) bounds what the run
/// adds to what the process held when the budget was made. The CLI makes its budget as it
/// starts (so its whole process counts, less the few MB of the program loaded); a library call
/// inside a host process (`neardup.dedup` in a Python interpreter, `PartEngine` in a Spark
/// worker after the JVM's batches and pyarrow grew it) gets its budget on top of what the host
/// holds, not less that. Measured now, not at the kernel's peak: what an earlier phase freed
/// (the candidate search's tables, a host's batch) is memory to use again, where the peak
/// would count it until the process ends. A budget for a hard limit on the whole process
/// (Spark's `spark.executor.pyspark.memory`) is made by [`Budget::whole_process`] and counts
/// everything the process holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// Bytes of memory the run may hold for its own data.
    pub memory: u64,
    /// Where spilled data goes; `None`: the system's temporary directory (`$TMPDIR`).
    pub tmp_dir: Option<PathBuf>,
    /// The process's resident memory (bytes) when the run began, which is its host's, not the
    /// run's: what the run holds is measured as the resident memory beyond it. `None`: the
    /// whole process counts (a limit on the process, [`Budget::whole_process`]).
    pub held_before: Option<u64>,
}

impl Budget {
    /// The default budget: 2 GiB, what a laptop spares for a batch job while other work goes on.
    pub const DEFAULT_MEMORY: u64 = 2 << 30;

    /// The smallest budget accepted: what the engine needs to make progress at all.
    pub const MIN_MEMORY: u64 = 16 << 20;

    /// What a worker thread of a run holds beside the shares the engine counts, rounded up:
    /// its allocator's arena, its work spaces (up to 1 MiB a buffer), its spare strings, the
    /// block of text it works on and the shingle sets made from it. Measured on the 1 GB
    /// corpus at `--memory 256M` (268.4 MB): the peak grows by about 16 MB a thread, and 4
    /// threads peaked at 233 MB, 6 at 273, 8 at 283 (BENCHMARKS.md, issue 17 step 22).
    pub const THREAD_MEMORY: u64 = 64 << 20;

    /// The most worker threads a run with `memory` bytes of budget uses: one for every
    /// [`Budget::THREAD_MEMORY`] of it, at least one (`--memory 256M`: 4; the default 2 GiB:
    /// 32). More threads would hold more than the budget before the engine's own shares, and
    /// leave those nothing (every component walked in parts of a few units: 16 threads at
    /// 256 MiB ran for more than 15 minutes where 2 took 50 seconds).
    pub fn max_threads(memory: u64) -> usize {
        usize::try_from(memory / Self::THREAD_MEMORY)
            .unwrap_or(usize::MAX)
            .max(1)
    }

    /// A budget of `memory` bytes spilling to `tmp_dir` (or `$TMPDIR`) for a run that starts
    /// now: what the process holds now is its host's ([`Budget::held_before`]), and the run may
    /// add `memory` to it.
    pub fn new(memory: u64, tmp_dir: Option<PathBuf>) -> Result<Self, DedupError> {
        let mut budget = Self::whole_process(memory, tmp_dir)?;
        budget.held_before = Some(0);
        budget.restart();
        Ok(budget)
    }

    /// A budget of `memory` bytes for the whole process, spilling to `tmp_dir` (or
    /// `$TMPDIR`): everything the process holds counts, its host's too. For a hard limit on
    /// the process (a Spark Python worker under `spark.executor.pyspark.memory`), where the
    /// host's memory and the run's share one bound.
    pub fn whole_process(memory: u64, tmp_dir: Option<PathBuf>) -> Result<Self, DedupError> {
        if memory < Self::MIN_MEMORY {
            return Err(DedupError::InvalidOption(format!(
                "a memory budget of {memory} bytes is below the least the engine needs ({} bytes)",
                Self::MIN_MEMORY
            )));
        }
        Ok(Budget {
            memory,
            tmp_dir,
            held_before: None,
        })
    }

    /// Starts a new run under this budget: what the process holds now becomes
    /// [`Budget::held_before`] (nothing changes for a [whole-process](Budget::whole_process)
    /// budget). For one budget kept across runs in one process (`PartEngine` runs the engine
    /// once per batch of parts): what a run leaves held (a cache, the allocator's pages) is
    /// not the next run's.
    pub fn restart(&mut self) {
        if self.held_before.is_some() {
            self.held_before = Some(resident_bytes().unwrap_or(0));
        }
    }

    /// The directory spilled files go to.
    pub fn spill_dir(&self) -> PathBuf {
        self.tmp_dir.clone().unwrap_or_else(std::env::temp_dir)
    }

    /// The bytes left for what the engine holds next (the candidate search, or the shingle
    /// sets verification reads): what is left of the budget once what the run holds already
    /// is taken (the process's resident memory now beyond [`Budget::held_before`], the caller's
    /// ids and buffers made since included, or the engine's own `estimate` if that is larger)
    /// and the slack. Possibly nothing: then the search works from disk, and every set goes to
    /// disk and is read back one at a time (slower, but the run finishes).
    pub(crate) fn left(&self, estimate: u64) -> u64 {
        self.left_at(estimate, resident_bytes().unwrap_or(0))
    }

    /// [`Budget::left`] with the process's resident memory at `resident` bytes.
    fn left_at(&self, estimate: u64, resident: u64) -> u64 {
        let held = estimate.max(resident.saturating_sub(self.held_before.unwrap_or(0)));
        self.memory.saturating_sub(held + self.slack())
    }

    /// The bytes the candidate search may hold: what is [left](Budget::left) once `estimate` is
    /// held, but at least half of [`Budget::MIN_MEMORY`]. With less, a family of distinct
    /// fingerprints sharing a table's key (near copies of one page) would be searched from disk
    /// a few records at a time, in time quadratic in the family; the floor lets the search hold
    /// about 18,000 records at once (2 threads), whatever else the budget holds.
    pub(crate) fn for_search(&self, estimate: u64) -> u64 {
        self.left(estimate).max(Self::MIN_MEMORY / 2)
    }

    /// What the budget keeps free for what the engine does not count itself: the program and
    /// the allocator's own overhead (a sixth), and the reader's batch in flight during the
    /// second read (up to 32 MB of text handed to the workers at a time, whose shingle sets
    /// take 8 bytes a character: 256 MiB). Measured on the 1 GB corpus at the default budget:
    /// an eighth alone left the peak 100 MB above the budget, an eighth and the batch 2.6 MB.
    fn slack(&self) -> u64 {
        ((self.memory / 6).max(64 << 20) + (256 << 20)).min(self.memory / 2)
    }
}

impl Default for Budget {
    /// [`Budget::DEFAULT_MEMORY`] for a run that starts now ([`Budget::new`]), spilling to
    /// `$TMPDIR`.
    fn default() -> Self {
        let mut budget = Budget {
            memory: Self::DEFAULT_MEMORY,
            tmp_dir: None,
            held_before: Some(0),
        };
        budget.restart();
        budget
    }
}

/// Gives the allocator's free memory back to the system: with glibc, what a phase's worker
/// threads freed stays in their arenas, resident (and counted by [`resident_bytes`]) until the
/// process ends, unless trimmed (`malloc_trim`). Called where each phase of a run ends; does
/// nothing elsewhere than with glibc.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas to the system.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// A temporary file in `dir`, removed when dropped.
pub(crate) fn spill_file(dir: &Path) -> Result<tempfile::NamedTempFile, DedupError> {
    tempfile::Builder::new()
        .prefix("neardup-spill-")
        .tempfile_in(dir)
        .map_err(|e| DedupError::spill(&format!("cannot create a file in {}", dir.display()), e))
}

/// The resident memory of this process now, in bytes, as the kernel counts it
/// (`/proc/self/statm`): what a [`Budget`] measures a run by. Elsewhere than on Linux, the
/// peak so far ([`peak_resident_bytes`]), which only overstates it. `None` where the platform
/// says neither.
pub fn resident_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
        let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
        // SAFETY: sysconf only reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        Some(pages * u64::try_from(page).ok()?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        peak_resident_bytes()
    }
}

/// The peak resident memory of this process so far, in bytes, as the kernel counts it
/// (`getrusage`): what a summary reports, measured rather than estimated. `None` where the
/// platform does not say.
pub fn peak_resident_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `usage` is a valid, writable rusage; getrusage only writes into it.
        let status = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
        if status != 0 {
            return None;
        }
        // SAFETY: getrusage succeeded, so it filled the struct (zeroed before in any case).
        let usage = unsafe { usage.assume_init() };
        let max = u64::try_from(usage.ru_maxrss).ok()?;
        // Linux and the BSDs count kilobytes, macOS bytes.
        Some(if cfg!(target_os = "macos") {
            max
        } else {
            max * 1024
        })
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::Budget;

    const MIB: u64 = 1 << 20;

    #[test]
    fn a_budget_runs_a_thread_for_every_64_mib_of_it() {
        assert_eq!(Budget::max_threads(Budget::MIN_MEMORY), 1);
        assert_eq!(Budget::max_threads(256 * MIB), 4);
        assert_eq!(Budget::max_threads(Budget::DEFAULT_MEMORY), 32);
    }

    #[test]
    fn a_run_counts_what_the_process_holds_beyond_what_it_held_when_it_began() {
        let mut budget = Budget::whole_process(1024 * MIB, None).unwrap();
        let slack = budget.slack();
        // A limit on the whole process: the host's 300 MiB count.
        assert_eq!(budget.left_at(0, 300 * MIB), 1024 * MIB - 300 * MIB - slack);
        // A run that began with 300 MiB resident: only what it added counts, or its own
        // estimate when that is larger.
        budget.held_before = Some(300 * MIB);
        assert_eq!(budget.left_at(0, 300 * MIB), 1024 * MIB - slack);
        assert_eq!(budget.left_at(0, 250 * MIB), 1024 * MIB - slack);
        assert_eq!(budget.left_at(0, 400 * MIB), 1024 * MIB - 100 * MIB - slack);
        assert_eq!(
            budget.left_at(200 * MIB, 400 * MIB),
            1024 * MIB - 200 * MIB - slack
        );
        assert_eq!(budget.left_at(0, 2000 * MIB), 0);
    }

    #[test]
    fn restarting_moves_only_a_budget_that_counts_from_its_start() {
        let mut whole = Budget::whole_process(Budget::MIN_MEMORY, None).unwrap();
        whole.restart();
        assert_eq!(whole.held_before, None);
        let mut run = Budget::new(Budget::MIN_MEMORY, None).unwrap();
        run.held_before = Some(0);
        run.restart();
        assert!(run.held_before.is_some_and(|held| held > 0));
        assert!(run.held_before <= super::peak_resident_bytes());
    }
}
