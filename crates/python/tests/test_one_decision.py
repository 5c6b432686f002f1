"""One decision at every door, on generated pairs in every input form.

For each generated pair (an original and a copy: exact, re-cased, lightly or heavily edited, or
another text) written as plain text files, HTML pages, JSON Lines and WARC, the verdict on the
copy and its evidence (kind, measure, value, threshold, SimHash distance) are the same from:
`neardup compare`, `neardup dedup --removed`, `neardup index add` then `index check`,
`neardup serve` (`POST /v1/check`), and Python's `neardup.compare` and `neardup.dedup`. Each
door reads the input form as it reads it for a user; the text it decides on is the one
`neardup extract` prints for that input.
"""

import json
import random
import subprocess

import pytest
from conftest import serving

import neardup

FORMS = ("text", "html", "jsonl", "warc")
#: The evidence every door gives for a duplicate (Python's `compare` leaves out the distance).
EVIDENCE = ("verdict", "kind", "measure", "value", "threshold", "distance")


def _pairs(count=24, seed=20261125):
    """(name, original, copy): every kind of copy, a few times each."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9))) for _ in range(4000)]
    pairs = []
    for i in range(count):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(40, 140))]
        original = " ".join(words).capitalize() + "."
        kind = i % 6
        if kind == 0:
            copy = original
        elif kind == 1:
            copy = original.upper()
        elif kind in (2, 3):
            edited = list(words)
            for _ in range(rng.randint(1, 3 if kind == 2 else 12)):
                edited[rng.randrange(len(edited))] = rng.choice(vocabulary)
            copy = " ".join(edited).capitalize() + "."
        elif kind == 4:
            copy = " ".join(words[: len(words) * 4 // 5]).capitalize() + "."
        else:
            copy = " ".join(rng.choice(vocabulary) for _ in range(len(words))).capitalize() + "."
        pairs.append((f"p{i}", original, copy))
    return pairs


def _html(title, text):
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body>"
        '<nav><a href="/">Home</a> <a href="/news">News</a> <a href="/about">About us</a></nav>'
        f"<article><h1>{title}</h1><p>{text}</p></article>"
        "<footer>Copyright the example site. All rights reserved.</footer></body></html>"
    )


def _warc_response(url, html):
    body = html.encode()
    http = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    head = (
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n"
        "WARC-Date: 2026-11-25T10:00:00Z\r\nWARC-Record-ID: <urn:uuid:{url}>\r\n"
        "Content-Type: application/http; msgtype=response\r\nContent-Length: {n}\r\n\r\n"
    ).format(url=url, n=len(http))
    return head.encode() + http + b"\r\n\r\n"


def _write(form, folder, ids, texts):
    """The pair in `form`: the input paths of the original and the copy (one path for both
    when the form holds many documents a file)."""
    folder.mkdir(parents=True, exist_ok=True)
    if form == "text":
        paths = [folder / f"{i}.txt" for i in ids]
        for path, text in zip(paths, texts):
            path.write_text(text, encoding="utf-8")
        return paths
    if form == "html":
        paths = [folder / f"{i}.html" for i in ids]
        for path, i, text in zip(paths, ids, texts):
            path.write_text(_html(i, text), encoding="utf-8")
        return paths
    if form == "jsonl":
        paths = [folder / f"{i}.jsonl" for i in ids]
        for path, i, text in zip(paths, ids, texts):
            path.write_text(json.dumps({"id": i, "text": text}) + "\n", encoding="utf-8")
        return paths
    paths = [folder / f"{i}.warc" for i in ids]
    for path, i, text in zip(paths, ids, texts):
        path.write_bytes(_warc_response(f"http://example.com/{i}", _html(i, text)))
    return paths


def _run(neardup_bin, *args):
    run = subprocess.run([neardup_bin, *args], capture_output=True, text=True)
    assert run.returncode == 0, (args, run.stderr)
    return run.stdout


def _lines(stdout):
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def _evidence(answer):
    """The verdict and its evidence, as every door spells them; nothing more for `unique`."""
    if answer is None or answer["verdict"] == "unique":
        return {"verdict": "unique"}
    return {key: answer[key] for key in EVIDENCE if key in answer}


@pytest.fixture()
def server(neardup_bin, tmp_path_factory):
    """A `neardup serve` of its own for each input form: the forms hold the same texts."""
    with serving(neardup_bin, tmp_path_factory.mktemp("served") / "db") as url:
        yield neardup.Client(url)


@pytest.mark.parametrize("form", FORMS)
def test_every_door_gives_the_same_verdict_and_evidence(form, neardup_bin, server, tmp_path):
    verdicts = {"duplicate": 0, "unique": 0}
    for name, original, copy in _pairs():
        ids = [f"{form}-{name}-a", f"{form}-{name}-b"]
        paths = [str(p) for p in _write(form, tmp_path / name, ids, [original, copy])]
        # The texts every door decides on: what `extract` prints for these inputs.
        extracted = _lines(_run(neardup_bin, "extract", *paths))
        texts = [e["text"] for e in extracted]
        if form in ("text", "jsonl"):
            assert texts == [original, copy]
        doc_ids = [e["id"] for e in extracted]

        # The library's decision on the pair (Python's `compare` is `Policy::decide`).
        decided = neardup.compare(texts[0], texts[1])
        compared = json.loads(_run(neardup_bin, "compare", "--json", *paths))
        assert compared["decision"] == decided, (form, name)
        answers = {}
        removed = {r["id"]: r for r in _lines(_run(neardup_bin, "dedup", *paths, "--removed", "-"))}
        answers["cli dedup"] = removed.get(doc_ids[1])
        db = str(tmp_path / name / "db")
        _run(neardup_bin, "index", "add", "--db", db, paths[0])
        answers["cli index check"] = _lines(_run(neardup_bin, "index", "check", "--db", db, paths[1]))[0]
        body = "html" if form in ("html", "warc") else "text"
        sent = [_html(i, t) for i, t in zip(ids, [original, copy])] if body == "html" else [original, copy]
        server.add(id=doc_ids[0], **{body: sent[0]})
        answers["serve"] = server.check(id=doc_ids[1], **{body: sent[1]})
        python = neardup.dedup(texts)
        answers["python dedup"] = python.removals[0] if python.removals else None

        expected = _evidence(decided)
        for door, answer in answers.items():
            got = _evidence(answer)
            assert {k: v for k, v in got.items() if k != "distance"} == expected, (form, name, door, got, expected)
            if got["verdict"] == "duplicate":
                assert answer["duplicate_of"] in (doc_ids[0], 0), (form, name, door, answer)
                assert got["distance"] == compared["distance"], (form, name, door, answer)
        verdicts[expected["verdict"]] += 1
    # The generator makes both answers, in every form.
    assert verdicts["duplicate"] >= 8 and verdicts["unique"] >= 4, verdicts
