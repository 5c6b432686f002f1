//! SIGINT and SIGTERM in the batch commands (every command but `serve`, which drains its
//! connections on them itself): a signal ends the run cleanly, with exit code 128 + the signal
//! (130, 143), no temporary file or spool left and no output path half-written.
//!
//! A signal sets a flag; the read and write loops [`check`] it and return [`Interrupted`], so
//! the run unwinds and the destructors remove its temporary files. A run that cannot unwind
//! within [`GRACE`] (blocked reading a pipe that stays open, or deep in the engine) is ended by
//! the signal thread itself, which first removes every temporary path registered with
//! [`lock`]. The registry's lock is held while a temporary file is created and registered, and
//! while finished outputs are moved into place, so the exit on a signal comes before or after
//! either, never in between.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering::SeqCst};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long the run has to unwind after a signal before the signal thread ends it.
const GRACE: Duration = Duration::from_secs(1);

/// The signal received, 0 before any.
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// The temporary files and folders of the run, removed if the signal thread ends it.
static TEMPORARY: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The run was ended by a signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted(i32);

impl Interrupted {
    /// The exit code of a run ended by this signal: 128 + its number.
    pub fn exit_code(self) -> u8 {
        u8::try_from(128 + self.0).unwrap_or(u8::MAX)
    }
}

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            2 => write!(f, "interrupted by SIGINT"),
            15 => write!(f, "interrupted by SIGTERM"),
            signal => write!(f, "interrupted by signal {signal}"),
        }
    }
}

impl std::error::Error for Interrupted {}

/// The signal that ends the run, if one came.
pub fn received() -> Option<Interrupted> {
    match SIGNAL.load(SeqCst) {
        0 => None,
        signal => Some(Interrupted(signal)),
    }
}

/// Fails once a signal came: called by the loops that read and write.
pub fn check() -> Result<(), Interrupted> {
    received().map_or(Ok(()), Err)
}

/// The registry of temporary paths, locked (see [`lock`]).
pub struct Registry(MutexGuard<'static, Vec<PathBuf>>);

impl Registry {
    /// Registers a temporary file or folder, to be removed if the signal thread ends the run.
    /// (It stays registered: removing a path already gone does nothing.)
    pub fn remove_on_signal(&mut self, path: &Path) {
        self.0.push(path.to_path_buf());
    }
}

/// Locks the registry of temporary paths, failing if a signal came: the signal thread waits
/// for the lock before it removes them and ends the run.
pub fn lock() -> Result<Registry, Interrupted> {
    let registry = Registry(TEMPORARY.lock().unwrap_or_else(|e| e.into_inner()));
    check()?;
    Ok(registry)
}

/// Handles SIGINT and SIGTERM for the rest of the run (see the module's documentation).
#[cfg(unix)]
pub fn install() -> anyhow::Result<()> {
    use anyhow::Context;
    use signal_hook::consts::{SIGINT, SIGTERM};

    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
        .context("cannot handle SIGINT and SIGTERM")?;
    std::thread::Builder::new()
        .name("signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                SIGNAL.store(signal, SeqCst);
                std::thread::sleep(GRACE);
                end_run(Interrupted(signal));
            }
        })
        .context("cannot start the signal thread")?;
    Ok(())
}

/// Handles nothing: signals end the run as they do by default.
#[cfg(not(unix))]
pub fn install() -> anyhow::Result<()> {
    Ok(())
}

/// Ends a run that did not unwind in time: removes its temporary paths and exits, holding the
/// registry's lock so that no other is created meanwhile.
#[cfg(unix)]
fn end_run(interrupted: Interrupted) -> ! {
    let registry = TEMPORARY.lock().unwrap_or_else(|e| e.into_inner());
    for path in registry.iter() {
        if std::fs::remove_file(path).is_err() {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    eprintln!("neardup: {interrupted}");
    std::process::exit(i32::from(interrupted.exit_code()))
}
