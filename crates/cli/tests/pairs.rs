//! `neardup pairs` run as a user would: the built binary, small inputs, exact output.

use std::io::Write;
use std::process::{Command, Stdio};

/// Runs `neardup pairs ARGS` with `input` on standard input; returns (exit code, stdout, stderr).
fn pairs(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_neardup"))
        .arg("pairs")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // A usage error exits before reading: a broken pipe here is expected then.
    let _ = child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(input.as_bytes());
    let out = child.wait_with_output().expect("the binary finishes");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Asserts success and returns standard output.
fn ok(args: &[&str], input: &str) -> String {
    let (code, stdout, stderr) = pairs(args, input);
    assert_eq!(code, 0, "stderr: {stderr}");
    stdout
}

#[test]
fn decimal_input_with_identical_fingerprints() {
    // Lines 0 and 3 are identical (seomoz's find_all drops such pairs); 7 = 0b111 is 2 bits
    // from 1 and 1 bit from 3.
    let out = ok(&["--k", "1"], "1\n2\n3\n1\n7\n");
    assert_eq!(
        out,
        "{\"a\":0,\"b\":2,\"distance\":1}\n\
         {\"a\":0,\"b\":3,\"distance\":0}\n\
         {\"a\":1,\"b\":2,\"distance\":1}\n\
         {\"a\":2,\"b\":3,\"distance\":1}\n\
         {\"a\":2,\"b\":4,\"distance\":1}\n"
    );
}

#[test]
fn hex_input_and_all_designs_agree() {
    let input = "ffffffffffffffff\n0000000000000000\nfffffffffffffff0\nFFFFFFFFFFFFFFFE\n";
    let expected = "{\"a\":0,\"b\":2,\"distance\":4}\n\
                    {\"a\":0,\"b\":3,\"distance\":1}\n\
                    {\"a\":2,\"b\":3,\"distance\":3}\n";
    let with_k4 = ok(&["--k", "4", "--blocks", "5"], input);
    assert_eq!(with_k4, expected);
    for design in ["4x16", "10", "16", "20"] {
        let out = ok(&["--k", "3", "--design", design], input);
        assert_eq!(
            out,
            "{\"a\":0,\"b\":3,\"distance\":1}\n{\"a\":2,\"b\":3,\"distance\":3}\n"
        );
    }
}

#[test]
fn wide_fingerprints() {
    let a = "0123456789abcdef0123456789abcdef";
    let b = "0123456789abcdef0123456789abcdee";
    let c = "f123456789abcdef0123456789abcdef";
    let out = ok(&["--k", "2", "-"], &format!("{a}\n{b}\n{c}\n{a}"));
    assert_eq!(
        out,
        "{\"a\":0,\"b\":1,\"distance\":1}\n\
         {\"a\":0,\"b\":3,\"distance\":0}\n\
         {\"a\":1,\"b\":3,\"distance\":1}\n"
    );
}

#[test]
fn clusters() {
    // 8–9, 1–9 and 1–3 are 1 bit apart; 0xFF00 and 0xFF03 are 2 bits apart.
    let out = ok(&["--k", "1", "--clusters"], "8\n1\n65280\n3\n9\n65283\n");
    assert_eq!(
        out,
        "{\"cluster\":0,\"members\":[0,1,3,4],\"representative\":0}\n"
    );
    let out = ok(&["--k", "2", "--clusters"], "8\n1\n65280\n3\n9\n65283\n");
    assert_eq!(
        out,
        "{\"cluster\":0,\"members\":[0,1,3,4],\"representative\":0}\n\
         {\"cluster\":1,\"members\":[2,5],\"representative\":2}\n"
    );
}

#[test]
fn file_argument_and_empty_input() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("pairs-input.txt");
    std::fs::write(&path, "5\n4\n").expect("the temporary file is written");
    let out = ok(&["--k", "1", path.to_str().expect("utf-8 path")], "");
    assert_eq!(out, "{\"a\":0,\"b\":1,\"distance\":1}\n");
    assert_eq!(ok(&["--k", "3"], ""), "");
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    let (code, out, err) = pairs(&["--k", "3"], "12\n34\nnot-a-number\n");
    assert_eq!((code, out.as_str()), (1, ""));
    assert_eq!(
        err.trim_end(),
        "neardup: line 3: not a decimal u64 fingerprint: \"not-a-number\""
    );
    let (code, _, err) = pairs(&["--k", "3"], "99999999999999999999\n");
    assert_eq!(code, 1);
    assert!(err.contains("line 1"), "{err}");
    let (code, _, err) = pairs(
        &["--k", "3"],
        "0123456789abcdef0123456789abcdef\nffffffffffffffff\n",
    );
    assert_eq!(code, 1);
    assert!(err.contains("line 2") && err.contains("mixed"), "{err}");
    let (code, _, err) = pairs(&["--k", "4", "--design", "4x16"], "1\n2\n");
    assert_eq!(code, 1);
    assert!(err.contains("k = 4"), "{err}");
    let (code, _, err) = pairs(&["--k", "3"], "1\n\n2\n");
    assert_eq!(code, 1);
    assert!(err.contains("line 2"), "{err}");
    let (code, _, _) = pairs(&["--k", "3", "--design", "7"], "1\n");
    assert_eq!(code, 2, "a bad --design is a usage error");
}

#[test]
fn format_override() {
    // Lines of 16 digits are read as hex unless told otherwise: 0x1000000000000000 and
    // 0x1000000000000010 differ in 1 bit, the decimal numbers 1000000000000000 and
    // 1000000000000010 in 2.
    let input = "1000000000000000\n1000000000000010\n";
    assert_eq!(
        ok(&["--k", "1"], input),
        "{\"a\":0,\"b\":1,\"distance\":1}\n"
    );
    assert_eq!(ok(&["--k", "1", "--format", "dec"], input), "");
    assert_eq!(
        ok(&["--k", "2", "--format", "dec"], input),
        "{\"a\":0,\"b\":1,\"distance\":2}\n"
    );
    let (code, _, err) = pairs(&["--k", "1", "--format", "hex"], "12\n");
    assert_eq!(code, 1);
    assert!(err.contains("line 1"), "{err}");
}
