"""The Python API against the Rust engine behind the CLI: the same fingerprints, decisions and
dedup outcomes; errors as exceptions, never a crash."""

import json
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import neardup

POLICIES = [
    None,
    {"method": "simhash", "k": 3},
    {"method": "overlap", "threshold": 0.8, "min_length_ratio": 0.2},
    {"method": "minhash", "threshold": 0.5},
    {"profile": "zh-short", "method": "overlap", "threshold": 0.9},
    {"method": "cascade", "verify": "containment", "threshold": 0.7, "k": 12},
]

CLI_FLAGS = {
    "method": "--method",
    "k": "--k",
    "threshold": "--threshold",
    "verify": "--verify",
    "min_length_ratio": "--min-length-ratio",
    "profile": "--profile",
}


def _flags(options):
    flags = []
    for key, value in (options or {}).items():
        flags += [CLI_FLAGS[key], str(value)]
    return flags


def _policy(options):
    return None if options is None else neardup.Policy(**options)


def test_fingerprints_equal_the_cli(texts, neardup_bin, tmp_path):
    sample = texts[:200]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(sample)), encoding="utf-8")
    out = subprocess.run(
        [neardup_bin, "fingerprint", "--input-format", "jsonl", str(path)],
        check=True, capture_output=True, text=True,
    ).stdout
    cli = [json.loads(line) for line in out.splitlines()]
    fingerprinter = neardup.Fingerprinter("web")
    batch = fingerprinter.fingerprint_many(sample)
    assert [r["simhash"] for r in cli] == [f"{int(v):016x}" for v in batch.simhash]
    assert [r["digest"] for r in cli] == batch.digests
    assert [r["features"] for r in cli] == batch.features.tolist()
    one = fingerprinter.fingerprint(sample[3])
    assert one == batch[3] and one.simhash_hex == cli[3]["simhash"] and batch[-1] == batch[len(batch) - 1]


def test_batch_takes_lists_numpy_pandas_and_arrow(texts):
    sample = texts[:50]
    fingerprinter = neardup.Fingerprinter({"name": "mine", **neardup.Fingerprinter("web").profile, "minhash": {"num_perm": 16, "seed": 3}})
    expected = fingerprinter.fingerprint_many(sample).simhash
    assert expected.dtype == np.uint64 and expected.shape == (50,)
    for data in [tuple(sample), np.array(sample, dtype=object), np.array(sample), pd.Series(sample), pa.array(sample), pa.chunked_array([sample[:20], sample[20:]])]:
        assert np.array_equal(fingerprinter.fingerprint_many(data).simhash, expected)
    minhash = fingerprinter.fingerprint_many(sample).minhash
    assert minhash.shape == (50, 16) and minhash.dtype == np.uint32
    assert np.array_equal(fingerprinter.minhash_many(pa.array(sample)), minhash)
    with pytest.raises(ValueError, match="no MinHash"):
        neardup.Fingerprinter().minhash_many(sample)
    assert minhash[7].tolist() == fingerprinter.fingerprint(sample[7]).minhash
    wide = neardup.Fingerprinter(json.dumps({**fingerprinter.profile, "bits": "128"})).fingerprint_many(sample[:3])
    assert wide.simhash.shape == (3, 2)
    assert (int(wide.simhash[1][0]) << 64 | int(wide.simhash[1][1])) == wide[1].simhash


def test_bad_input_raises_never_crashes():
    with pytest.raises(neardup.NeardupError, match="unknown profile"):
        neardup.Fingerprinter("nope")
    with pytest.raises(ValueError, match="shingle width"):
        neardup.Fingerprinter({**neardup.Fingerprinter().profile, "features": {"kind": "char-shingles", "width": 0}})
    with pytest.raises(ValueError, match="text 1 is not a str"):
        neardup.Fingerprinter().fingerprint_many(["a", None])
    with pytest.raises(ValueError, match="one str"):
        neardup.dedup("just one text")
    with pytest.raises(ValueError, match="threshold"):
        neardup.Policy(threshold=1.5)
    with pytest.raises(ValueError, match='invalid method: "nope" is not one of cascade, simhash'):
        neardup.Policy(method="nope")
    with pytest.raises(ValueError, match="invalid policy"):
        neardup.Policy.from_json('{"treshold": 0.5}')
    with pytest.raises(ValueError, match='invalid keep: "oldest" is not one of first'):
        neardup.dedup(["a"], keep="oldest")
    with pytest.raises(ValueError, match="no column"):
        neardup.dedup(pd.DataFrame({"body": ["a"]}))
    with pytest.raises(TypeError):
        neardup.Fingerprinter().fingerprint(b"bytes")
    # Lone surrogates cannot be UTF-8: an exception, not a crash.
    with pytest.raises(Exception):
        neardup.Fingerprinter().fingerprint("\ud800")


def test_policy_round_trips_and_matches_the_cli(neardup_bin):
    for options in POLICIES:
        policy = _policy(options) or neardup.Policy.default()
        shown = subprocess.run([neardup_bin, "compare", "--show-policy", *_flags(options), "-", "-"], check=True, capture_output=True, text=True).stdout
        assert json.loads(policy.to_json()) == json.loads(shown), options
        assert neardup.Policy.from_json(policy.to_json()) == policy
        assert neardup.Policy.from_dict(policy.to_dict()) == policy
    assert neardup.Policy() == neardup.Policy.default()
    assert neardup.Policy(method="overlap").verify == "containment"
    assert neardup.Policy(method="simhash").verify is None


def _pairs(texts):
    near = [(texts[i], texts[-60 + j]) for j, i in enumerate(range(0, 60))][:8]
    return near + [(texts[5], texts[6]), (texts[620], texts[621]), (texts[100], texts[100]), ("", ""), ("short", "a much longer text that contains short")]


@pytest.mark.parametrize("options", POLICIES)
def test_compare_equals_cli_compare(texts, neardup_bin, tmp_path, options):
    for n, (a, b) in enumerate(_pairs(texts)):
        pa_, pb = tmp_path / f"a{n}.txt", tmp_path / f"b{n}.txt"
        pa_.write_text(a, encoding="utf-8")
        pb.write_text(b, encoding="utf-8")
        out = subprocess.run([neardup_bin, "compare", "--json", *_flags(options), str(pa_), str(pb)], check=True, capture_output=True, text=True).stdout
        assert neardup.compare(a, b, policy=_policy(options)) == json.loads(out)["decision"], (options, a[:30], b[:30])


def test_compare_evidence():
    a = "The city council approved the new budget on Tuesday after a long debate."
    decision = neardup.compare(a, a.replace(".", "!"))
    assert decision == {"verdict": "duplicate", "kind": "near", "measure": "jaccard", "value": decision["value"], "threshold": 0.9}
    assert neardup.compare(a, a)["measure"] == "digest"
    strict = neardup.Policy(threshold=0.99)
    assert strict.compare(a, a.replace(".", "!")) == neardup.compare(a, a.replace(".", "!"), strict)
    assert strict.compare(a, a.replace(".", "!"))["verdict"] == "unique"
    assert neardup.compare(a, "Something else entirely, about the weather.", policy={"method": "simhash", "k": 3})["verdict"] == "unique"


@pytest.mark.parametrize("options", POLICIES)
@pytest.mark.parametrize("keep", ["first", "longest"])
def test_dedup_equals_cli_dedup(texts, neardup_bin, tmp_path, options, keep):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    removed = subprocess.run(
        [neardup_bin, "dedup", str(path), "--keep", keep, "--removed", "-", *_flags(options)],
        check=True, capture_output=True, text=True,
    ).stdout
    cli = {int(r["id"]): r for r in map(json.loads, removed.splitlines())}
    result = neardup.dedup(texts, policy=_policy(options), keep=keep)
    assert len(result.keep) == len(texts)
    ours = {r["id"]: r for r in result.removals}
    assert ours.keys() == cli.keys()
    assert len(ours) > 0
    for i, r in ours.items():
        assert result.duplicate_of[i] == r["duplicate_of"] == int(cli[i]["duplicate_of"])
        assert not result.keep[i]
        # The same record as the CLI's, texts named by index instead of by id.
        assert r == dict(cli[i], id=i, duplicate_of=int(cli[i]["duplicate_of"])), i


def test_dedup_tables_and_clusters(news):
    frame = pd.DataFrame(news)
    from_frame = neardup.dedup(frame)
    assert from_frame.keep.count(False) == 3
    table = pa.Table.from_pandas(frame)
    assert neardup.dedup(table) == from_frame
    assert neardup.dedup(frame.rename(columns={"text": "body"}), text_column="body") == from_frame
    assert neardup.dedup(iter(frame["text"].tolist())) == from_frame
    ids = from_frame.cluster_ids()
    for cluster in from_frame.clusters:
        assert all(ids[m] == cluster["representative"] for m in cluster["members"])
        assert from_frame.keep[cluster["representative"]]
    assert all(p["a"] < p["b"] for p in from_frame.pairs)
    newest = neardup.dedup(["same text here", "same text here"], keep="newest", fetched_at=[1, 2])
    assert newest.keep == [False, True] and newest.duplicate_of == [1, None]


def test_minhash_lsh_and_candidate_pairs(texts):
    profile = {**neardup.Fingerprinter().profile, "minhash": {"num_perm": 128, "seed": 1}}
    sigs = neardup.Fingerprinter(profile).fingerprint_many(texts).minhash
    pairs = neardup.minhash_candidate_pairs(sigs, threshold=0.8)
    lsh = neardup.MinHashLsh(threshold=0.8, num_perm=128)
    lsh.insert_many(list(range(len(texts))), sigs)
    from_index = {(a, b) for b in range(len(texts)) for a in lsh.query(sigs[b]) if a < b}
    assert {tuple(p) for p in pairs.tolist()} == from_index
    assert len(from_index) > 10
    assert lsh.remove(0) and not lsh.remove(0) and len(lsh) == len(texts) - 1


def test_threads_share_one_fingerprinter(texts):
    from concurrent.futures import ThreadPoolExecutor

    fingerprinter = neardup.Fingerprinter()
    expected = fingerprinter.fingerprint_many(texts).simhash
    with ThreadPoolExecutor(4) as pool:
        batches = list(pool.map(lambda _: fingerprinter.fingerprint_many(texts).simhash, range(4)))
        outcomes = list(pool.map(lambda _: neardup.dedup(texts[:200]).keep, range(4)))
    assert all(np.array_equal(b, expected) for b in batches)
    assert all(o == outcomes[0] for o in outcomes)
