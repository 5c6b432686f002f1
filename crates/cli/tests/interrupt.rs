//! SIGINT, SIGTERM and SIGKILL in the middle of `neardup dedup` (issue 19): real processes on
//! a corpus made here, signalled while reading and while writing `--kept`, several times each.
//! SIGINT and SIGTERM: exit 130 and 143, no final output created, one already there left as it
//! was, no temporary file or stdin spool left. SIGKILL: no final output either (only, at most,
//! temporary files beside them, named `.NAME.neardup-XXXXXX.tmp`).

mod corpus;
mod files;
mod service;

use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use files::names;
use neardup_testkit::signal;

/// What `--kept` holds before each run: it must be left as it is.
const OLD_KEPT: &str = "{\"id\": \"old\"}\n";
/// The outputs of each run, in the output folder (`kept.jsonl` exists before).
const OUTPUTS: [&str; 5] = [
    "kept.jsonl",
    "removed.jsonl",
    "pairs.jsonl",
    "clusters.jsonl",
    "summary.json",
];
/// Rounds of each moment and signal: the defect left a half-written output in 4 runs of 6.
const ROUNDS: usize = 3;

/// When the signal is sent.
#[derive(Debug, Clone, Copy)]
enum Moment {
    /// While the corpus is read the first time.
    Reading,
    /// Once `--kept` is being written (its temporary file, or the final path, appeared).
    WritingKept,
}

/// A test folder: the corpus, the output folder and `$TMPDIR`.
struct Setup {
    _dir: tempfile::TempDir,
    corpus: PathBuf,
    out: PathBuf,
    tmp: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let corpus = dir.path().join("corpus.jsonl");
        std::fs::write(&corpus, corpus::random_corpus(12_000)).unwrap();
        let (out, tmp) = (dir.path().join("out"), dir.path().join("tmp"));
        std::fs::create_dir(&out).unwrap();
        std::fs::create_dir(&tmp).unwrap();
        Setup {
            _dir: dir,
            corpus,
            out,
            tmp,
        }
    }

    /// Starts `neardup dedup INPUT` with every output in the output folder, `kept.jsonl`
    /// holding [`OLD_KEPT`] first, `$TMPDIR` the test's, standard input piped.
    fn start(&self, input: &Path) -> Child {
        std::fs::write(self.out.join("kept.jsonl"), OLD_KEPT).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_neardup"));
        command.arg("dedup").arg(input);
        for (option, name) in ["--kept", "--removed", "--pairs", "--clusters", "--summary"]
            .into_iter()
            .zip(OUTPUTS)
        {
            command.arg(option).arg(self.out.join(name));
        }
        command
            .env("TMPDIR", &self.tmp)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Whether `--kept` is being written: its temporary file is there, or the final path no
    /// longer holds what it held.
    fn writing_kept(&self) -> bool {
        names(&self.out)
            .iter()
            .any(|name| name.starts_with(".kept.jsonl.neardup-"))
            || std::fs::read_to_string(self.out.join("kept.jsonl")).unwrap() != OLD_KEPT
    }

    /// Runs `neardup dedup` on the corpus and sends it `kill -SIGNAL` at `moment`; returns
    /// how it ended and its standard error.
    fn signal_at(&self, moment: Moment, name: &str) -> (ExitStatus, String) {
        let child = self.start(&self.corpus);
        match moment {
            Moment::Reading => {
                if name != "KILL" {
                    wait_for("SIGINT handled", || catches_sigint(child.id()));
                }
                std::thread::sleep(Duration::from_millis(300));
            }
            Moment::WritingKept => wait_for("writing --kept", || self.writing_kept()),
        }
        signal(child.id(), name);
        ended(child)
    }

    /// Asserts the output folder holds `kept.jsonl` as it was and no other final output; the
    /// other files in it are returned.
    fn others_than_outputs(&self) -> Vec<String> {
        let kept = std::fs::read_to_string(self.out.join("kept.jsonl")).unwrap();
        assert_eq!(kept, OLD_KEPT, "kept.jsonl was replaced");
        let names = names(&self.out);
        for name in &OUTPUTS[1..] {
            assert!(
                !names.contains(&name.to_string()),
                "{name} exists: {names:?}"
            );
        }
        names.into_iter().filter(|n| n != "kept.jsonl").collect()
    }
}

/// Whether the process `pid` has installed its handler of SIGINT (and SIGTERM, at the same
/// time): `SigCgt` in /proc/PID/status, a hexadecimal mask with bit N-1 for signal N.
fn catches_sigint(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (2 - 1)) != 0)
}

/// Waits until `ready`, for at most 60 s.
fn wait_for(what: &str, mut ready: impl FnMut() -> bool) {
    let started = Instant::now();
    while !ready() {
        assert!(started.elapsed() < Duration::from_secs(60), "never {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for the run to end (within 10 s of the signal) and returns its status and stderr.
fn ended(mut child: Child) -> (ExitStatus, String) {
    let signalled = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            signalled.elapsed() < Duration::from_secs(10),
            "still running 10 s after the signal"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

/// Signals runs at each moment, [`ROUNDS`] times, and checks what they leave.
fn signal_mid_run(name: &str, code: i32) {
    let setup = Setup::new();
    for moment in [Moment::Reading, Moment::WritingKept].repeat(ROUNDS) {
        let (status, stderr) = setup.signal_at(moment, name);
        assert_eq!(status.code(), Some(code), "{moment:?}: {status}, {stderr}");
        assert_eq!(
            stderr.lines().last(),
            Some(format!("neardup: interrupted by SIG{name}").as_str()),
            "{moment:?}: {stderr}"
        );
        let others = setup.others_than_outputs();
        assert!(others.is_empty(), "{moment:?}: left {others:?}");
        assert!(names(&setup.tmp).is_empty(), "{:?}", names(&setup.tmp));
    }
}

#[test]
fn sigint_mid_run_exits_130_and_leaves_no_output_and_no_temporary_file() {
    signal_mid_run("INT", 130);
}

#[test]
fn sigterm_mid_run_exits_143_and_leaves_no_output_and_no_temporary_file() {
    signal_mid_run("TERM", 143);
}

#[test]
fn sigkill_mid_run_leaves_no_final_output_only_named_temporary_files() {
    let setup = Setup::new();
    for moment in [Moment::Reading, Moment::WritingKept].repeat(ROUNDS) {
        let (status, _) = setup.signal_at(moment, "KILL");
        assert_eq!(status.signal(), Some(9), "{moment:?}: {status}");
        for name in setup.others_than_outputs() {
            let temporary = OUTPUTS.iter().any(|output| {
                name.strip_prefix(&format!(".{output}.neardup-"))
                    .and_then(|rest| rest.strip_suffix(".tmp"))
                    .is_some_and(|random| random.len() == 6)
            });
            assert!(temporary, "{moment:?}: {name} left beside the outputs");
            std::fs::remove_file(setup.out.join(name)).unwrap();
        }
    }
}

/// A run blocked reading standard input, which stays open, is ended too: its spool removed.
#[test]
fn a_run_blocked_on_standard_input_is_interrupted_and_its_spool_removed() {
    let setup = Setup::new();
    let corpus = std::fs::read(&setup.corpus).unwrap();
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        let mut child = setup.start(Path::new("-"));
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(&corpus[..corpus.len() / 4]).unwrap();
        wait_for("spooling standard input", || !names(&setup.tmp).is_empty());
        // Time to read what was written, and block reading more.
        std::thread::sleep(Duration::from_millis(500));
        let signalled = Instant::now();
        signal(child.id(), name);
        let (status, stderr) = ended(child);
        assert_eq!(status.code(), Some(code), "{status}, {stderr}");
        assert!(
            signalled.elapsed() < Duration::from_secs(3),
            "ended {:?} after the signal",
            signalled.elapsed()
        );
        assert!(names(&setup.tmp).is_empty(), "{:?}", names(&setup.tmp));
        assert!(setup.others_than_outputs().is_empty());
        drop(stdin);
    }
}

/// `neardup pairs` within a budget, interrupted while it copies standard input into its run
/// folder: it exits 130 and leaves no folder or file in `$TMPDIR`.
#[test]
fn pairs_interrupted_leaves_nothing_in_the_tmp_dir() {
    let setup = Setup::new();
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(["pairs", "--k", "3", "--memory", "16M", "-"])
        .env("TMPDIR", &setup.tmp)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let lines: String = (0..100_000u64)
        .map(|i| format!("{:016x}\n", i * 0x9E37_79B9))
        .collect();
    stdin.write_all(lines.as_bytes()).unwrap();
    wait_for("the run folder", || !names(&setup.tmp).is_empty());
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), "INT");
    let (status, stderr) = ended(child);
    assert_eq!(status.code(), Some(130), "{status}, {stderr}");
    assert!(names(&setup.tmp).is_empty(), "{:?}", names(&setup.tmp));
    drop(stdin);
}
