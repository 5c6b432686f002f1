//! One decision behind every door: `compare`, `dedup` and a database (`index add`) give the
//! same answer for the same texts under the same policy.

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::{assert_one_line_error, neardup};
use serde_json::Value;

/// The bundled example's documents: (id, text).
fn example() -> Vec<(String, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/news.jsonl");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().into(),
                v["text"].as_str().unwrap().into(),
            )
        })
        .collect()
}

fn example_path() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/news.jsonl")
        .to_str()
        .unwrap()
        .into()
}

/// Every pair `dedup --pairs` accepts (ids, in either order), under `policy` options.
fn dedup_pairs(policy: &[&str]) -> HashSet<(String, String)> {
    let path = example_path();
    let run = neardup(
        &[&["dedup", &path, "--pairs", "-"][..], policy].concat(),
        b"",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let (a, b) = (v["a"].as_str().unwrap(), v["b"].as_str().unwrap());
            (a.min(b).to_string(), a.max(b).to_string())
        })
        .collect()
}

#[test]
fn compare_agrees_with_dedup_on_every_pair() {
    let docs = example();
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = docs
        .iter()
        .map(|(id, text)| {
            let file = dir.path().join(format!("{id}.txt"));
            std::fs::write(&file, text).unwrap();
            file.to_str().unwrap().to_string()
        })
        .collect();
    for policy in [&[][..], &["--method", "simhash", "--k", "3"]] {
        let accepted = dedup_pairs(policy);
        // Texts with equal digests are listed once, with their first copy: none here.
        let mut duplicates = 0;
        for i in 0..docs.len() {
            for j in i + 1..docs.len() {
                let run = neardup(
                    &[&["compare", &files[i], &files[j], "--json"][..], policy].concat(),
                    b"",
                );
                assert_eq!(run.code, 0, "{}", run.stderr);
                let report: Value = serde_json::from_str(&run.stdout).unwrap();
                let verdict = report["decision"]["verdict"].as_str().unwrap();
                let (a, b) = (&docs[i].0, &docs[j].0);
                let pair = (a.min(b).clone(), a.max(b).clone());
                assert_eq!(
                    verdict == "duplicate",
                    accepted.contains(&pair),
                    "{policy:?}: {pair:?}: {}",
                    run.stdout
                );
                duplicates += usize::from(verdict == "duplicate");
            }
        }
        assert!(duplicates > 0, "{policy:?}: the example has duplicates");
    }
}

#[test]
fn a_database_removes_what_dedup_removes() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let path = example_path();
    let removed = dedup_removed();
    let (answers, stderr) = not_inserted(&["--db", db]);
    assert!(stderr.contains("creating a new database"), "{stderr}");
    assert_eq!(answers, removed);
    // The database recorded the policy: every door opens it with no options, and the batch
    // run against it agrees; another policy is refused, naming both.
    let again = neardup(&["dedup", &path, "--index", db, "--removed", "-"], b"");
    assert_eq!(again.code, 0, "{}", again.stderr);
    let policy = neardup(&["index", "policy", "--db", db], b"");
    let shown: Value = serde_json::from_str(&policy.stdout).unwrap();
    assert_eq!(shown["k"], 6);
    assert_eq!(shown["verify"], "jaccard");
    let refused = neardup(&["index", "check", "--db", db, "--k", "3", &path], b"");
    assert_one_line_error(&refused, 1, "it cannot be opened with");
}

#[test]
fn a_database_answering_from_the_index_in_redis_removes_what_dedup_removes() {
    let Some(redis) = neardup_testkit::Redis::temporary(
        "a_database_answering_from_the_index_in_redis_removes_what_dedup_removes",
    ) else {
        return;
    };
    let removed = dedup_removed();
    let db = format!("{}?name=onepolicy", redis.url());
    let (answers, _) = not_inserted(&["--db", &db, "--index-in", "store"]);
    assert_eq!(answers, removed);
    // `dedup --index` into a new database, checking against the index Redis holds.
    let fresh = format!("{}?name=onepolicy-dedup", redis.url());
    let incremental = removed_by(&[
        "dedup",
        &example_path(),
        "--index",
        &fresh,
        "--index-in",
        "store",
        "--removed",
        "-",
    ]);
    assert_eq!(incremental, removed);
}

/// The same with a redb database checking against the block keys its file holds: `index add`
/// (`--index-in store`) and `dedup --index --index-in store` remove what `dedup` removes.
#[test]
fn a_database_answering_from_the_index_a_redb_file_holds_removes_what_dedup_removes() {
    let dir = tempfile::tempdir().unwrap();
    let removed = dedup_removed();
    let db = dir.path().join("db");
    let (answers, _) = not_inserted(&["--db", db.to_str().unwrap(), "--index-in", "store"]);
    assert_eq!(answers, removed);
    let fresh = dir.path().join("fresh");
    let incremental = removed_by(&[
        "dedup",
        &example_path(),
        "--index",
        fresh.to_str().unwrap(),
        "--index-in",
        "store",
        "--removed",
        "-",
    ]);
    assert_eq!(incremental, removed);
}

/// The same over a real Redis Cluster (3 masters, a replica each), both ways: the index in
/// the process and the index the cluster holds (its block keys spread over the masters).
#[test]
fn a_database_spread_over_a_redis_cluster_removes_what_dedup_removes() {
    if !neardup_testkit::redis_available(
        "a_database_spread_over_a_redis_cluster_removes_what_dedup_removes",
    ) {
        return;
    }
    let removed = dedup_removed();
    let cluster = neardup_testkit::RedisCluster::start();
    for index_in in ["local", "store"] {
        let db = cluster.url(&format!("onepolicy-{index_in}"));
        let (answers, _) = not_inserted(&["--db", &db, "--index-in", index_in]);
        assert_eq!(answers, removed, "--index-in {index_in}");
    }
    let blocks: Vec<u64> = cluster.masters().iter().map(|m| m.block_keys()).collect();
    assert!(
        blocks.iter().all(|&b| b > 0),
        "the block keys spread over every master: {blocks:?}"
    );
}

/// `dedup --removed` of the bundled example: each removed record is the document's verdict, in
/// the vocabulary every door writes (some are removed).
fn dedup_removed() -> Vec<Value> {
    let removed = removed_by(&["dedup", &example_path(), "--removed", "-"]);
    assert!(!removed.is_empty());
    removed
}

/// The JSON lines a `neardup` run writes to standard output (it must succeed).
fn removed_by(args: &[&str]) -> Vec<Value> {
    let run = neardup(args, b"");
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `index add` of the bundled example into the database `db_args` open: the answers of the
/// documents not inserted, with what only a database says (whether it inserted, the matches)
/// taken out, so that they compare with `dedup --removed`'s records; and what it printed on
/// standard error.
fn not_inserted(db_args: &[&str]) -> (Vec<Value>, String) {
    let path = example_path();
    let mut args = vec!["index", "add"];
    args.extend_from_slice(db_args);
    args.push(&path);
    let online = neardup(&args, b"");
    assert_eq!(online.code, 0, "{}", online.stderr);
    let mut not_inserted: Vec<Value> = Vec::new();
    for line in online.stdout.lines() {
        let mut v: Value = serde_json::from_str(line).unwrap();
        if v["verdict"] != "unique" {
            assert!(v["measure"].is_string() && v["value"].is_number(), "{line}");
            let answer = v.as_object_mut().unwrap();
            assert_eq!(
                answer.remove("inserted"),
                Some(Value::Bool(false)),
                "{line}"
            );
            assert!(answer.remove("matches").is_some(), "{line}");
            not_inserted.push(v);
        }
    }
    (not_inserted, online.stderr)
}

#[test]
fn policies_round_trip_through_files() {
    let dir = tempfile::tempdir().unwrap();
    let shown = neardup(&["dedup", "--show-policy", "--k", "4", "-"], b"");
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let policy: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(policy["k"], 4);
    let file = dir.path().join("policy.json");
    std::fs::write(&file, &shown.stdout).unwrap();
    let file = file.to_str().unwrap();
    // The file gives the same policy to every door.
    for command in [
        &["compare", "a", "b"][..],
        &["eval", "x", "--positive", "1", "--negative", "0"],
    ] {
        let run = neardup(
            &[command, &["--policy-file", file, "--show-policy"]].concat(),
            b"",
        );
        assert_eq!(run.code, 0, "{command:?}: {}", run.stderr);
        assert_eq!(serde_json::from_str::<Value>(&run.stdout).unwrap(), policy);
    }
    let typo = dir.path().join("typo.json");
    std::fs::write(&typo, shown.stdout.replace("\"threshold\"", "\"treshold\"")).unwrap();
    let run = neardup(
        &["compare", "a", "b", "--policy-file", typo.to_str().unwrap()],
        b"",
    );
    assert_one_line_error(&run, 1, "invalid policy");
}

/// A news page: the story of `copy.txt`, with navigation, a share bar, related links and a
/// footer around it.
const STORY: &str = "The city council voted on Tuesday to extend the night bus service to the northern suburbs, after two years of complaints from shift workers who had no way home.\nThe new routes start in March and will run every twenty minutes between midnight and five in the morning, paid for by a small increase in parking fees downtown.";

fn news_page() -> String {
    let paragraphs: String = STORY.lines().map(|p| format!("<p>{p}</p>\n")).collect();
    format!(
        "<html><head><title>Night buses</title></head><body>\n\
         <nav><a href=\"/\">Home</a> <a href=\"/news\">News</a> <a href=\"/sport\">Sport</a> <a href=\"/weather\">Weather</a></nav>\n\
         <div class=\"share-bar\"><a href=\"#\">Share on social media</a> <a href=\"#\">Email this story</a></div>\n\
         <main><article><h1>Night buses reach the suburbs</h1>\n{paragraphs}</article></main>\n\
         <aside class=\"related\"><h2>Related stories</h2><ul><li><a href=\"/a\">Parking fees rise downtown next spring</a></li><li><a href=\"/b\">Shift workers ask for later trains</a></li></ul></aside>\n\
         <footer>Copyright 2026 The Daily Example. All rights reserved. Contact us. Privacy policy.</footer>\n\
         </body></html>"
    )
}

/// `compare` reads its two files as `dedup` reads its inputs: an HTML page by its main
/// content (`--html main`, the default of both), so a page and a text file of its story are an
/// exact duplicate for both; with `--html all` the page's furniture counts, for both.
#[test]
fn compare_reads_a_page_and_a_text_file_as_dedup_does() {
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("page.html");
    let copy = dir.path().join("copy.txt");
    std::fs::write(&page, news_page()).unwrap();
    std::fs::write(&copy, format!("Night buses reach the suburbs\n{STORY}\n")).unwrap();
    let (page, copy) = (page.to_str().unwrap(), copy.to_str().unwrap());
    for html in [&[][..], &["--html", "main"], &["--html", "all"]] {
        let dedup = neardup(
            &[&["dedup", page, copy, "--removed", "-"][..], html].concat(),
            b"",
        );
        assert_eq!(dedup.code, 0, "{}", dedup.stderr);
        let removed: Vec<Value> = common::json_lines(&dedup.stdout);
        let compare = neardup(
            &[&["compare", page, copy, "--json"][..], html].concat(),
            b"",
        );
        assert_eq!(compare.code, 0, "{}", compare.stderr);
        let report: Value = serde_json::from_str(&compare.stdout).unwrap();
        let decision = &report["decision"];
        if html == ["--html", "all"] {
            assert!(removed.is_empty(), "{removed:?}");
            assert_eq!(decision["verdict"], "unique", "{report}");
        } else {
            assert_eq!(removed.len(), 1, "{}", dedup.stdout);
            assert_eq!(
                (&removed[0]["id"], &removed[0]["kind"]),
                (&Value::from(copy), &Value::from("exact"))
            );
            assert_eq!(
                (&decision["verdict"], &decision["kind"]),
                (&Value::from("duplicate"), &Value::from("exact")),
                "{report}"
            );
        }
    }
}
