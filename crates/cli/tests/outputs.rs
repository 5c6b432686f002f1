//! Output files (issue 19): written beside their final paths and moved into place only when
//! the run succeeds; a failed run creates or replaces none; a full disk names the file that
//! could not be written, on an output and on the spool of standard input (a small tmpfs this
//! test mounts: it runs as root, as `scripts/test` does in CI).

mod common;
mod corpus;
mod files;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{assert_one_line_error, neardup, neardup_in};
use files::{names, Tmpfs};

/// Writes the small news corpus to `dir`, returning its path.
fn news_corpus(dir: &Path) -> PathBuf {
    let corpus = dir.join("corpus.jsonl");
    std::fs::write(&corpus, corpus::corpus()).unwrap();
    corpus
}

#[test]
fn a_failed_run_creates_no_output_and_leaves_one_already_there_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = news_corpus(dir.path());
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("removed.jsonl"), "old\n").unwrap();
    // --removed and --pairs are written before --summary, whose folder does not exist.
    let summary = dir.path().join("missing").join("summary.json");
    let run = neardup(
        &[
            "dedup",
            corpus.to_str().unwrap(),
            "--removed",
            out.join("removed.jsonl").to_str().unwrap(),
            "--pairs",
            out.join("pairs.jsonl").to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
        ],
        b"",
    );
    let needle = format!("cannot create {}", summary.display());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let last = run.stderr.lines().last().unwrap();
    assert!(
        last.starts_with("neardup: ") && last.contains(&needle),
        "{last}"
    );
    assert_eq!(names(&out), ["removed.jsonl"]);
    let removed = std::fs::read_to_string(out.join("removed.jsonl")).unwrap();
    assert_eq!(removed, "old\n");
}

#[test]
fn outputs_get_the_usual_permissions_and_a_fifo_is_written_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = news_corpus(dir.path());
    let fifo = dir.path().join("removed.fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let kept = dir.path().join("kept.jsonl");
    let run = neardup(
        &[
            "dedup",
            corpus.to_str().unwrap(),
            "--kept",
            kept.to_str().unwrap(),
            "--removed",
            fifo.to_str().unwrap(),
            "--pairs",
            "-",
        ],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);
    assert_eq!(reader.join().unwrap().lines().count(), 2);
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert_eq!(std::fs::read_to_string(&kept).unwrap().lines().count(), 3);
    // As a file created by the test itself: the umask's mode, not a temporary file's 0600.
    let usual = dir.path().join("usual");
    std::fs::File::create(&usual).unwrap();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&kept), mode(&usual));
    assert_eq!(
        names(dir.path()),
        ["corpus.jsonl", "kept.jsonl", "removed.fifo", "usual"]
    );
}

#[test]
fn a_full_disk_on_kept_names_the_file_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus.jsonl");
    std::fs::write(&corpus, corpus::random_corpus(6_000)).unwrap();
    let mount = Tmpfs::mount(&dir.path().join("small"), "1m");
    let kept = mount.0.join("kept.jsonl");
    let run = neardup(
        &[
            "dedup",
            corpus.to_str().unwrap(),
            "--kept",
            kept.to_str().unwrap(),
        ],
        b"",
    );
    let needle = format!(
        "neardup: cannot write {}: No space left on device",
        kept.display()
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(run.stderr, format!("{needle} (os error 28)\n"));
    assert!(names(&mount.0).is_empty(), "{:?}", names(&mount.0));
}

#[test]
fn a_full_tmpdir_while_spooling_standard_input_says_so_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mount = Tmpfs::mount(&dir.path().join("small"), "1m");
    let kept = dir.path().join("kept.jsonl");
    let run = neardup_in(
        &[("TMPDIR", &mount.0)],
        &["dedup", "-", "--kept", kept.to_str().unwrap()],
        corpus::random_corpus(6_000).as_bytes(),
    );
    let spool = format!(
        "cannot spool standard input to {}/neardup-spool-",
        mount.0.display()
    );
    assert_one_line_error(&run, 1, &spool);
    assert!(
        run.stderr.contains("No space left on device"),
        "{}",
        run.stderr
    );
    assert!(names(&mount.0).is_empty(), "{:?}", names(&mount.0));
    assert!(!kept.exists());
}
