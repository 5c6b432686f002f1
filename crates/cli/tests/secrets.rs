//! Secrets (issue 19): a Redis password is never shown (responses, logs, errors), secrets can
//! be kept off the command line (`--token-file`, `NEARDUP_TOKEN`, `NEARDUP_DB`), and Redis over
//! TLS (`rediss://`, `--redis-ca-file`) with an ACL user works. Real `redis-server` processes
//! (one over TLS, its certificates made by `openssl`) under real `neardup` processes.

mod common;
mod service;

use common::{assert_one_line_error, neardup};
use neardup_testkit::{redis_available, text, Certificates, Redis};
use serde_json::json;
use service::{call, post, send, Server};

const TOKEN: &str = "tok-Very-Secret-4711";

/// Asserts no form of `secret` is in `text`.
fn assert_hidden(text: &str, secrets: &[&str], what: &str) {
    for secret in secrets {
        assert!(!text.contains(secret), "{what} shows {secret:?}: {text}");
    }
}

/// Runs `neardup ARGS` with environment variables added.
fn neardup_env(args: &[&str], env: &[(&str, &str)]) -> common::Run {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_neardup"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    common::Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8(output.stdout).unwrap(),
        stderr: String::from_utf8(output.stderr).unwrap(),
    }
}

#[test]
fn a_redis_password_is_shown_nowhere() {
    if !redis_available("a_redis_password_is_shown_nowhere") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut redis = Redis::start_with(dir.path(), &["--requirepass", "p@ss"]);
    let db = format!("redis://:p%40ss@127.0.0.1:{}", redis.port);
    let secrets = ["p@ss", "p%40ss", TOKEN];
    let server = Server::start(&db, &["--token", TOKEN, "--store-timeout", "1"]);
    let mut bodies = Vec::new();
    for (method, path) in [
        ("GET", "/v1/stats"),
        ("GET", "/healthz"),
        ("GET", "/v1/documents/none"),
        ("POST", "/v1/documents"),
    ] {
        let body = json!({ "id": "a", "text": text(1) }).to_string();
        let reply = send(method, &server.url(path), body.as_bytes(), Some(TOKEN)).unwrap();
        bodies.push(reply.body.to_string());
    }
    assert!(
        bodies[0].contains("redis://:***@127.0.0.1"),
        "{}",
        bodies[0]
    );
    redis.kill();
    for path in ["/v1/stats", "/healthz", "/v1/documents/a"] {
        let reply = send("GET", &server.url(path), b"", Some(TOKEN)).unwrap();
        assert_eq!(reply.status, 503, "{reply:?}");
        bodies.push(reply.body.to_string());
    }
    assert_hidden(&bodies.join("\n"), &secrets, "a response");
    assert_hidden(&server.stderr(), &secrets, "the server's stderr");

    // A wrong password, and an unreachable server: one line each, no password.
    redis.restart();
    let wrong = format!("redis://:wr0ng%40pw@127.0.0.1:{}", redis.port);
    let run = neardup(&["index", "stats", "--db", &wrong], b"");
    assert_one_line_error(&run, 1, "redis://:***@127.0.0.1");
    assert!(
        run.stderr.contains("authentication failed"),
        "{}",
        run.stderr
    );
    assert_hidden(&run.stderr, &["wr0ng"], "the open error");
    let gone = format!("redis://:p%40ss@127.0.0.1:{}", neardup_testkit::free_port());
    let run = neardup(&["index", "stats", "--db", &gone], b"");
    assert_one_line_error(&run, 1, "Connection refused");
    assert_hidden(&run.stderr, &secrets, "the open error");
}

#[test]
fn secrets_can_stay_off_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("db");
    let db = db.to_str().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).unwrap();
    let token_path = token_file.to_str().unwrap();
    let ways: [(&[&str], (&str, &str)); 2] = [
        (&["--token-file", token_path], ("NEARDUP_DB", db)),
        (&["--db", db], ("NEARDUP_TOKEN", TOKEN)),
    ];
    for (args, env) in ways {
        // One after the other: a redb database is open in one process at a time.
        let server = Server::try_start_with(args, &[env]).unwrap();
        let stats = server.url("/v1/stats");
        assert_eq!(call("GET", &stats, b"", None).0, 401);
        assert_eq!(call("GET", &stats, b"", Some("other")).0, 401);
        let (status, reply) = call("GET", &stats, b"", Some(TOKEN));
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["location"], json!(db));
        assert_hidden(&server.stderr(), &[TOKEN], "the server's stderr");
    }
    // An empty or missing token file: one line, exit 1.
    std::fs::write(&token_file, "\n").unwrap();
    let run = neardup(&["serve", "--db", db, "--token-file", token_path], b"");
    assert_one_line_error(&run, 1, "is empty");
    let missing = dir.path().join("missing");
    let run = neardup(
        &[
            "serve",
            "--db",
            db,
            "--token-file",
            missing.to_str().unwrap(),
        ],
        b"",
    );
    assert_one_line_error(&run, 1, "cannot read the token file");
    // --help names the variables, never their values.
    let env = [
        ("NEARDUP_TOKEN", TOKEN),
        ("NEARDUP_DB", "redis://:hush-hush@127.0.0.1:1"),
        ("NEARDUP_REDIS_CA_FILE", "/very/private/ca.pem"),
    ];
    for command in [&["serve", "--help"][..], &["index", "add", "--help"]] {
        let run = neardup_env(command, &env);
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(run.stdout.contains("NEARDUP_DB"), "{}", run.stdout);
        assert_hidden(&run.stdout, &[TOKEN, "hush-hush", "private"], "--help");
    }
    let run = neardup_env(&["serve", "--help"], &env);
    assert!(run.stdout.contains("NEARDUP_TOKEN"), "{}", run.stdout);
    assert!(run.stdout.contains("--token-file"), "{}", run.stdout);
}

#[test]
fn rediss_with_a_private_ca_and_an_acl_user() {
    if !redis_available("rediss_with_a_private_ca_and_an_acl_user") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let certs = Certificates::make(dir.path(), "neardup");
    let redis = Redis::start_tls(dir.path(), &certs);
    let acl = redis.cli(&[
        "ACL", "SETUSER", "alice", "on", ">s3cret", "~*", "&*", "+@all",
    ]);
    assert_eq!(acl.trim(), "OK");
    let db = format!("rediss://alice:s3cret@127.0.0.1:{}", redis.port);
    let ca = certs.ca.to_str().unwrap();
    let server = Server::start(&db, &["--redis-ca-file", ca]);
    let (status, reply) = post(
        &server.url("/v1/documents"),
        &json!({ "id": "a", "text": text(1) }),
    );
    assert_eq!(status, 201, "{reply}");
    let (_, reply) = post(&server.url("/v1/check"), &json!({ "text": text(1) }));
    assert_eq!(reply["verdict"], "duplicate", "{reply}");
    let (_, stats) = call("GET", &server.url("/v1/stats"), b"", None);
    assert_eq!(
        stats["location"],
        json!(format!(
            "rediss://alice:***@127.0.0.1:{} (name neardup)",
            redis.port
        ))
    );
    assert_eq!(stats["documents"], 1, "{stats}");
    assert!(redis.cli(&["KEYS", "*"]).contains("neardup:{neardup}:meta"));
    assert_hidden(&server.stderr(), &["s3cret"], "the server's stderr");

    // The CA file from the environment; a wrong CA, or none (the system's), is one line.
    let run = neardup_env(
        &["index", "get", "--db", &db, "a"],
        &[("NEARDUP_REDIS_CA_FILE", ca)],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let other = Certificates::make(dir.path(), "other");
    for extra in [&["--redis-ca-file", other.ca.to_str().unwrap()][..], &[]] {
        let args: Vec<&str> = ["index", "stats", "--db", &db]
            .iter()
            .chain(extra)
            .copied()
            .collect();
        let run = neardup(&args, b"");
        assert_one_line_error(&run, 1, "invalid peer certificate: UnknownIssuer");
        assert_hidden(&run.stderr, &["s3cret"], "the open error");
    }
    let run = neardup(
        &[
            "index",
            "stats",
            "--db",
            &db,
            "--redis-ca-file",
            "/no/such.pem",
        ],
        b"",
    );
    assert_one_line_error(&run, 1, "cannot read the Redis CA file /no/such.pem");
}
