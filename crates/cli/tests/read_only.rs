//! The commands that only read (or delete) never create a database: on a directory or a Redis
//! that holds none they exit 1 with one line, "no neardup database at …", and leave nothing
//! behind (no directory, no file, no Redis key).

mod common;
mod service;

use common::{assert_one_line_error, neardup, Run};
use neardup_testkit::Redis;

const DOCUMENT: &[u8] = b"{\"id\": \"a\", \"text\": \"one small document\"}\n";

/// Runs each read-only command on the database `db`.
fn each_read_only_command(db: &str) -> Vec<(&'static str, Run)> {
    let commands: [(&str, &[&str]); 7] = [
        ("get", &["index", "get", "--db", db, "a"]),
        ("stats", &["index", "stats", "--db", db]),
        ("policy", &["index", "policy", "--db", db]),
        ("delete", &["index", "delete", "--db", db, "a"]),
        ("check", &["index", "check", "--db", db, "-"]),
        (
            "add --insert never",
            &["index", "add", "--insert", "never", "--db", db, "-"],
        ),
        ("migrate", &["index", "migrate", "--db", db]),
    ];
    commands
        .into_iter()
        .map(|(name, args)| (name, neardup(args, DOCUMENT)))
        .collect()
}

#[test]
fn read_only_commands_on_a_missing_directory_fail_and_create_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let typo = dir.path().join("typo");
    let db = typo.to_str().unwrap();
    for (name, run) in each_read_only_command(db) {
        let needle = format!("no neardup database at {db}");
        assert_one_line_error(&run, 1, &needle);
        assert_eq!(run.stdout, "", "index {name}");
        assert!(!typo.exists(), "index {name} created {db}");
    }
    std::fs::create_dir(&typo).unwrap();
    for (name, run) in each_read_only_command(db) {
        assert_one_line_error(&run, 1, "no neardup database at");
        let left: Vec<_> = std::fs::read_dir(&typo).unwrap().collect();
        assert!(left.is_empty(), "index {name} wrote in {db}: {left:?}");
    }
    let add = neardup(&["index", "add", "--db", db, "-"], DOCUMENT);
    assert_eq!(add.code, 0, "{}", add.stderr);
    let get = neardup(&["index", "get", "--db", db, "a"], b"");
    assert_eq!(get.code, 0, "the database exists now: {}", get.stderr);
}

#[test]
fn read_only_commands_on_a_redis_without_the_database_fail_and_write_no_key() {
    let Some(redis) = Redis::temporary("read_only_commands_on_a_redis_without_the_database") else {
        return;
    };
    let url = format!("{}?name=absent", redis.url());
    for (name, run) in each_read_only_command(&url) {
        assert_one_line_error(&run, 1, "no neardup database at redis://127.0.0.1");
        assert_eq!(
            redis.cli(&["DBSIZE"]).trim(),
            "0",
            "index {name} wrote keys"
        );
    }
    let add = neardup(&["index", "add", "--db", &url, "-"], DOCUMENT);
    assert_eq!(add.code, 0, "{}", add.stderr);
    let stats = neardup(&["index", "stats", "--db", &url], b"");
    assert_eq!(stats.code, 0, "the database exists now: {}", stats.stderr);
}
