//! Output files, written atomically: each to a temporary file beside its final path (in the
//! same folder, so that the rename is atomic; named `.NAME.neardup-XXXXXX.tmp`), flushed and
//! fsynced, and renamed into place only at the end of a run that succeeded, all of the run's
//! outputs together ([`Outputs::commit`]). A run that fails or is interrupted creates or
//! replaces no final path (a file already there is left as it was), and its temporary files are
//! removed: by their destructors, or on a signal by [`interrupt`]. `-` is standard output,
//! streamed; so is a path that is no regular file (a FIFO, `>(...)`, `/dev/stdout`), which
//! cannot be replaced. An error writing an output names it, whatever layers (JSON, gzip,
//! Parquet) the error went through: `cannot write PATH: No space left on device`.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use neardup_ingest::watched::{Failure, Watched};
use tempfile::NamedTempFile;

use crate::interrupt;

/// The output files of a run: written one by one with [`Outputs::write`], moved into place
/// together by [`Outputs::commit`]; dropped without it, they remove their temporary files.
#[derive(Default)]
pub struct Outputs {
    finished: Vec<(NamedTempFile, PathBuf)>,
}

impl Outputs {
    /// Writes the output `path` with `write`, into a temporary file beside it kept until
    /// [`Outputs::commit`] (or to the stream `path` names, `-` for standard output). An error
    /// of the file written is reported as `cannot write PATH: ...`.
    pub fn write(
        &mut self,
        path: &Path,
        write: impl FnOnce(&mut Output) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let mut out = Output::create(path)?;
        let written = write(&mut out).and_then(|()| Ok(out.writer.flush()?));
        if let Some(error) = out.failure.error() {
            return Err(error.into());
        }
        written?;
        let sink = out.writer.into_inner().map_err(|e| e.into_error())?;
        if let Sink::Temporary(file, target) = sink.into_inner() {
            file.as_file()
                .sync_all()
                .with_context(|| format!("cannot write {}", path.display()))?;
            self.finished.push((file, target));
        }
        Ok(())
    }

    /// Takes over the outputs `other` wrote, to be committed with these.
    pub fn extend(&mut self, other: Outputs) {
        self.finished.extend(other.finished);
    }

    /// Moves every output written into place, unless a signal came: then none is, and the
    /// temporary files are removed.
    pub fn commit(self) -> anyhow::Result<()> {
        let _registry = interrupt::lock()?;
        for (file, target) in self.finished {
            file.persist(&target)
                .map_err(|e| e.error)
                .with_context(|| format!("cannot write {}", target.display()))?;
            sync_folder(&target);
        }
        Ok(())
    }
}

/// Makes a rename in the folder of `path` durable. Best effort: some file systems cannot sync
/// a folder, and the output is complete either way.
fn sync_folder(path: &Path) {
    if let Ok(folder) = File::open(folder_of(path)) {
        let _ = folder.sync_all();
    }
}

/// The folder a path is in (`.` for a bare name).
fn folder_of(path: &Path) -> &Path {
    match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    }
}

/// One output being written (see [`Outputs::write`]).
pub struct Output {
    writer: BufWriter<Watched<Sink>>,
    failure: Failure,
}

/// Where an output goes.
enum Sink {
    /// A stream: standard output or a path that is no regular file.
    Stream(Box<dyn Write + Send>),
    /// A temporary file beside its final path, the second field.
    Temporary(NamedTempFile, PathBuf),
}

impl Output {
    /// Opens the output `path`: `-` and paths that are no regular file as streams, any other
    /// as a temporary file beside it (beside the file a symbolic link points to).
    fn create(path: &Path) -> anyhow::Result<Output> {
        let cannot_create = || format!("cannot create {}", path.display());
        let (sink, name) = if path.as_os_str() == "-" {
            let stdout = Box::new(io::stdout());
            (Sink::Stream(stdout), "standard output".to_string())
        } else if is_stream(path) {
            let file = File::create(path).with_context(cannot_create)?;
            (Sink::Stream(Box::new(file)), path.display().to_string())
        } else {
            let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
            let file = temporary_beside(&target).with_context(cannot_create)?;
            (Sink::Temporary(file, target), path.display().to_string())
        };
        let failure = Failure::default();
        let watched = Watched::new(sink, format!("cannot write {name}"), failure.clone());
        Ok(Output {
            writer: BufWriter::with_capacity(1 << 20, watched),
            failure,
        })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Stream(stream) => stream.write(buf),
            Sink::Temporary(file, _) => file.as_file_mut().write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Stream(stream) => stream.flush(),
            Sink::Temporary(file, _) => file.as_file_mut().flush(),
        }
    }
}

/// Whether `path` is written in place: an existing path that is no regular file, or a device
/// path (`/dev/stdout` leads to the file standard output was redirected to, which must not be
/// replaced under the shell).
fn is_stream(path: &Path) -> bool {
    path.starts_with("/dev")
        || path.starts_with("/proc")
        || std::fs::metadata(path).is_ok_and(|m| !m.is_file())
}

/// Creates the temporary file of the output `target` in its folder, registered to be removed
/// on a signal; readable as a file created by `File::create` would be.
fn temporary_beside(target: &Path) -> anyhow::Result<NamedTempFile> {
    let name = target
        .file_name()
        .context("not a file name")?
        .to_string_lossy();
    let prefix = format!(".{name}.neardup-");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".tmp");
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666));
    let mut registry = interrupt::lock()?;
    let file = builder.tempfile_in(folder_of(target))?;
    registry.remove_on_signal(file.path());
    Ok(file)
}

/// Prints `value` as indented JSON and a newline on standard output (`--show-profile`,
/// `--show-policy`). A closed pipe (`| head`) is an error that `main` ends quietly, where
/// `println!` panicked.
pub fn print_pretty_json(value: &impl serde::Serialize) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    out.flush()?;
    Ok(())
}
