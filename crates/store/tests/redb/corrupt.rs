//! A damaged redb file (truncated, zero-filled, bytes flipped, empty) is an error naming the
//! file, never a panic, at open and at every read after it.

use std::path::{Path, PathBuf};

use neardup_store::{open_db, InsertMode, NearDupDb, NewDocument, OpenOptions, StoreError};

use super::{doc, text};

/// The database file inside a redb store's directory.
const FILE: &str = "neardup.redb";

fn try_open(dir: &Path) -> Result<NearDupDb, StoreError> {
    open_db(dir.to_str().unwrap(), OpenOptions::default())
}

/// The bytes of a database of `documents` documents.
fn database(documents: u64) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = try_open(dir.path()).unwrap();
        let docs: Vec<NewDocument> = (0..documents)
            .map(|n| doc(&format!("d{n}"), &text(n)))
            .collect();
        for outcome in db.check_and_insert_many(&docs, InsertMode::Always) {
            outcome.unwrap();
        }
    }
    // Opened again, as a database at rest is: its last two commits (the one redb would roll
    // back to) share the pages of the documents.
    drop(try_open(dir.path()).unwrap());
    std::fs::read(dir.path().join(FILE)).unwrap()
}

/// Opens the database in `dir`, reads its stats, checks a document against it and inserts one:
/// the first error, if any.
fn use_it(dir: &Path) -> Result<(), StoreError> {
    let db = try_open(dir)?;
    db.stats()?;
    db.check(&doc("x", &text(3)))?;
    db.get("d1")?;
    db.check_and_insert(&doc("y", &text(100_000)), InsertMode::IfUnique)?;
    Ok(())
}

/// What `use_it` did with `bytes` as the database file: `Err` for a panic.
fn outcome(dir: &Path, bytes: &[u8]) -> Result<Result<(), StoreError>, String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(FILE), bytes).unwrap();
    std::panic::catch_unwind(|| use_it(dir)).map_err(|panic| {
        panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
    })
}

#[test]
fn no_damage_to_the_file_panics_and_every_error_names_it() {
    let bytes = database(300);
    let work = tempfile::tempdir().unwrap();
    let dir: PathBuf = work.path().join("db");
    let mut damaged: Vec<(String, Vec<u8>)> = Vec::new();
    let len = bytes.len();
    for cut in [0, 1, 512, 4096, len / 4, len / 2, len - 4096, len - 1] {
        damaged.push((format!("cut at {cut}"), bytes[..cut].to_vec()));
    }
    for start in (0..len).step_by(len / 16) {
        let mut zeroed = bytes.clone();
        zeroed[start..(start + 4096).min(len)].fill(0);
        damaged.push((format!("4 KiB zeroed at {start}"), zeroed));
    }
    for (n, page) in (0..len).step_by(len / 64).enumerate() {
        let at = (page + n * 977) % len;
        let mut flipped = bytes.clone();
        flipped[at] ^= 0x5A;
        damaged.push((format!("byte {at} flipped"), flipped));
    }
    let mut panics = Vec::new();
    for (how, bytes) in damaged {
        match outcome(&dir, &bytes) {
            Err(panic) => panics.push(format!("{how}: {panic}")),
            Ok(Err(error)) => {
                let message = error.to_string();
                assert!(message.contains(FILE), "{how}: {message}");
            }
            Ok(Ok(())) => {}
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics of {len} bytes:\n{}",
        panics.len(),
        panics.join("\n")
    );
}

/// The error of opening `bytes` as the database file (panics if it opens).
fn open_error(dir: &Path, bytes: &[u8]) -> String {
    match outcome(dir, bytes) {
        Ok(Err(error)) => error.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn an_empty_file_is_refused_not_taken_for_a_new_database() {
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("db");
    let error = open_error(&dir, b"");
    let file = dir.join(FILE);
    assert!(error.contains(&file.display().to_string()), "{error}");
    assert!(error.contains("the file is empty"), "{error}");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0, "left as it was");
    // A missing file is a new database.
    std::fs::remove_file(&file).unwrap();
    assert_eq!(try_open(&dir).unwrap().stats().unwrap().documents, 0);
}

#[test]
fn a_changed_byte_in_a_stored_record_is_found_at_open_not_read_as_data() {
    let mut bytes = database(300);
    // Every copy: the live page, and old ones the file may still hold.
    let copies: Vec<usize> = (0..bytes.len() - 4)
        .filter(|&at| &bytes[at..at + 4] == b"d150")
        .collect();
    assert!(!copies.is_empty(), "a stored id");
    for at in copies {
        bytes[at] ^= 0x04; // "d150" becomes "`150"
    }
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().join("db");
    let error = open_error(&dir, &bytes);
    let file = dir.join(FILE).display().to_string();
    assert!(
        error.starts_with(&format!("corrupt database file {file}: ")),
        "{error}"
    );
}
