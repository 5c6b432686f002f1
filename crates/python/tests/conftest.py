"""Shared fixtures: texts of every kind, and the `neardup` CLI (the peer of the Python API)."""

import contextlib
import json
import os
import pathlib
import random
import socket
import subprocess
import time

import pytest

import neardup

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _fixture_texts():
    path = ROOT / "crates/core/tests/fixtures/python_simhash.jsonl"
    return [json.loads(line)["text"] for line in path.read_text(encoding="utf-8").splitlines()]


def _news():
    path = ROOT / "examples/news.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="session")
def texts():
    """617 texts of every kind (the python-simhash fixture: scripts, emoji, empty, long ones),
    the example news corpus, and near copies of some of them."""
    base = _fixture_texts() + [d["text"] for d in _news()]
    rng = random.Random(7)
    copies = []
    for text in rng.sample(base, 60):
        words = text.split()
        if len(words) > 12:
            i = rng.randrange(len(words))
            words[i] = words[i].upper() + "!"
        copies.append(" ".join(words))
    return base + copies


@pytest.fixture(scope="session")
def news():
    return _news()


@pytest.fixture(scope="session")
def neardup_bin():
    """The CLI: $NEARDUP_BIN, else target/debug/neardup (`cargo build -p neardup`)."""
    path = pathlib.Path(os.environ.get("NEARDUP_BIN", ROOT / "target/debug/neardup"))
    if not path.exists():
        pytest.fail(f"the neardup CLI is needed at {path}: run `cargo build -p neardup` or set NEARDUP_BIN")
    return str(path)


@contextlib.contextmanager
def serving(neardup_bin, db, token=None):
    """A real `neardup serve` over the database `db` on a free loopback port, ready: yields
    its URL, and stops it (SIGTERM) after."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    command = [neardup_bin, "serve", "--db", str(db), "--listen", f"127.0.0.1:{port}"]
    if token:
        command += ["--token", token]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    client = neardup.Client(url, token=token)
    deadline = time.time() + 60
    while not client.health():
        if process.poll() is not None or time.time() > deadline:
            process.kill()
            pytest.fail("neardup serve did not start: " + process.stderr.read().decode())
        time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
