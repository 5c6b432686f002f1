//! Running the built `neardup` binary in tests.

#[allow(dead_code)]
pub mod parquet;

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// The result of one run.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `neardup ARGS` with `stdin` as standard input.
pub fn neardup(args: &[&str], stdin: &[u8]) -> Run {
    neardup_in(&[], args, stdin)
}

/// Runs `neardup ARGS` with the environment variables `env` set and `stdin` as standard input.
pub fn neardup_in(env: &[(&str, &std::path::Path)], args: &[&str], stdin: &[u8]) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // A usage error exits before reading: a broken pipe here is expected then.
    let _ = child.stdin.take().unwrap().write_all(stdin);
    let Output {
        status,
        stdout,
        stderr,
    } = child.wait_with_output().unwrap();
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::from_utf8(stdout).unwrap(),
        stderr: String::from_utf8(stderr).unwrap(),
    }
}

/// Asserts a failed run printed exactly one line, starting with `neardup: ` and containing
/// `needle`, and exited with `code`.
pub fn assert_one_line_error(run: &Run, code: i32, needle: &str) {
    assert_eq!(run.code, code, "stderr: {}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1, "stderr: {}", run.stderr);
    assert!(
        run.stderr.starts_with("neardup: "),
        "stderr: {}",
        run.stderr
    );
    assert!(
        run.stderr.contains(needle),
        "{needle:?} not in {}",
        run.stderr
    );
}

/// The JSON objects of a JSON-lines output, one a line. (Not every test binary reads JSON lines.)
#[allow(dead_code)]
pub fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
