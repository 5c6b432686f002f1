//! `--threads`: one global option that sizes the worker pool of every command.

// Only `neardup` of the shared helpers is used here.
#[allow(dead_code)]
mod common;

use common::neardup;

const INPUT: &str = r#"{"id": "a", "text": "The cat sat on the mat, and then the cat sat on the hat."}
{"id": "b", "text": "Le chat s'est assis sur le tapis · § © ’ 美国"}
"#;

#[test]
fn any_number_of_threads_gives_the_same_fingerprints() {
    let default = neardup(&["fingerprint", "--format", "jsonl", "-"], INPUT.as_bytes());
    assert_eq!(default.code, 0, "{}", default.stderr);
    for threads in ["1", "2", "7"] {
        let run = neardup(
            &[
                "--threads",
                threads,
                "fingerprint",
                "--format",
                "jsonl",
                "-",
            ],
            INPUT.as_bytes(),
        );
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert_eq!(run.stdout, default.stdout, "--threads {threads}");
        // Global: also after the subcommand.
        let after = neardup(
            &[
                "fingerprint",
                "--threads",
                threads,
                "--format",
                "jsonl",
                "-",
            ],
            INPUT.as_bytes(),
        );
        assert_eq!(after.stdout, default.stdout, "--threads {threads} after");
    }
}

#[test]
fn zero_threads_is_a_usage_error() {
    let run = neardup(&["--threads", "0", "fingerprint", "-"], INPUT.as_bytes());
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("--threads"), "{}", run.stderr);
}

#[test]
fn a_batch_command_runs_no_more_threads_than_its_budget_holds() {
    // The least budget (16 MiB) holds one worker thread: `--threads 4` is lowered, and said.
    let lowered = neardup(
        &["--threads", "4", "dedup", "--memory", "16M", "-"],
        INPUT.as_bytes(),
    );
    assert_eq!(lowered.code, 0, "{}", lowered.stderr);
    assert!(
        lowered.stderr.contains("--threads 4 lowered to 1"),
        "{}",
        lowered.stderr
    );
    let one = neardup(
        &["--threads", "1", "dedup", "--memory", "16M", "-"],
        INPUT.as_bytes(),
    );
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(!one.stderr.contains("lowered"), "{}", one.stderr);
    assert_eq!(lowered.stdout, one.stdout);
    // Within the budget, or without one, the threads asked for.
    let within = neardup(
        &["--threads", "2", "dedup", "--memory", "128M", "-"],
        INPUT.as_bytes(),
    );
    assert_eq!(within.code, 0, "{}", within.stderr);
    assert!(!within.stderr.contains("lowered"), "{}", within.stderr);
    let no_budget = neardup(&["--threads", "4", "fingerprint", "-"], INPUT.as_bytes());
    assert_eq!(no_budget.code, 0, "{}", no_budget.stderr);
    assert!(
        !no_budget.stderr.contains("lowered"),
        "{}",
        no_budget.stderr
    );
}
