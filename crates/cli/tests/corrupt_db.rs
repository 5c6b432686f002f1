//! A damaged redb database file: every command that opens it says so in one line naming the
//! file, exit 1 (it was a panic, exit 101, or invented figures); an empty file is not taken for
//! a new database.

mod common;

use std::path::Path;

use common::{assert_one_line_error, neardup};

const NEWS: &str = "../../examples/news.jsonl";

/// A database directory holding the example's documents; returns its file's bytes.
fn database(dir: &Path) -> Vec<u8> {
    let db = dir.to_str().unwrap();
    let run = neardup(
        &["index", "add", "--db", db, "--insert", "always", NEWS],
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Opened again, as a database at rest is: its last two commits (the one redb would roll
    // back to) share the pages of the documents.
    let run = neardup(&["index", "stats", "--db", db], b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    std::fs::read(dir.join("neardup.redb")).unwrap()
}

#[test]
fn a_damaged_or_empty_database_file_is_one_line_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("db");
    let bytes = database(&dir);
    let file = dir.join("neardup.redb");
    // Every copy of the first id: in the live page, and in old ones the file may still hold.
    let id = b"\"id\":\"";
    let at = bytes
        .windows(id.len())
        .position(|w| w == id)
        .expect("a record")
        + id.len();
    let first = &bytes[at..at + 8];
    let mut flipped = bytes.clone();
    for copy in (0..bytes.len() - 8).filter(|&c| &bytes[c..c + 8] == first) {
        flipped[copy] ^= 0x01;
    }
    let damages = [
        ("truncated", bytes[..bytes.len() / 2].to_vec()),
        ("zero-filled", vec![0; bytes.len()]),
        ("a byte flipped", flipped),
        ("empty", Vec::new()),
    ];
    let db = dir.to_str().unwrap();
    for (how, damaged) in damages {
        std::fs::write(&file, &damaged).unwrap();
        for args in [
            &["index", "stats", "--db", db][..],
            &["dedup", "--index", db, NEWS][..],
        ] {
            let run = neardup(args, b"");
            assert_one_line_error(&run, 1, &file.display().to_string());
            assert!(run.stdout.is_empty(), "{how}: {args:?}: {}", run.stdout);
        }
        assert_eq!(std::fs::read(&file).unwrap().len(), damaged.len(), "{how}");
    }
}
