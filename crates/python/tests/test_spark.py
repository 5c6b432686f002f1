"""neardup.spark.dedup on a real local Spark (a `local-cluster` master: a master, two workers
and their executors, each a separate JVM with Python workers from this venv) against the CLI's
`neardup dedup` on the same JSON Lines file and policy, document by document."""

import json
import os
import random
import shutil
import subprocess
import sys

import pytest

import neardup
import neardup.spark

try:
    import pyspark
except ImportError as missing:  # fail, never skip: scripts/test installs it
    raise ImportError("the Spark tests need pyspark in this venv: pip install pyspark (scripts/test does)") from missing


def _words(rng, n):
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n)]


def _corpus():
    """About 700 documents: originals, exact copies, near copies and chains of edits (A ~ B ~ C
    with A and C apart: one component of pairs, two clusters), in a shuffled order."""
    rng = random.Random(11)
    vocabulary = _words(rng, 3000)
    docs = []
    for original in range(240):
        words = [rng.choice(vocabulary) for _ in range(rng.randint(40, 160))]
        docs.append(" ".join(words))
        kind = original % 6
        if kind == 0:
            docs.append(" ".join(words))
        elif kind in (1, 2):
            edited = list(words)
            for step in range(rng.randint(2, 4)):
                for _ in range(max(1, len(edited) // 40)):
                    edited[rng.randrange(len(edited))] = rng.choice(vocabulary)
                docs.append(" ".join(edited))
        elif kind == 3:
            docs.append(" ".join(words[: len(words) * 9 // 10]))
    rng.shuffle(docs)
    return [{"id": f"d{i}", "text": t} for i, t in enumerate(docs)]


def _news():
    from conftest import ROOT

    path = ROOT / "examples/news.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture(scope="module")
def spark():
    """A local-cluster Spark: two workers of one core and 1 GB each, executors in their own
    JVMs running this venv's Python (so the `neardup` package installed here)."""
    if shutil.which("java") is None:
        pytest.fail("Spark needs Java 17: apt-get install -y openjdk-17-jre-headless (scripts/test does)")
    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    session = (
        SparkSession.builder.master("local-cluster[2,1,1024]")
        .appName("neardup-tests")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Adaptive execution runs each shuffle as a job of its own: on these small inputs that
        # doubles the wall time and changes no answer (the benchmark keeps it on).
        .config("spark.sql.adaptive.enabled", "false")
        .config("spark.sql.files.maxPartitionBytes", str(64 * 1024))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _cli(neardup_bin, path, policy, keep, tmp_path):
    """`neardup dedup` on the file: per id, (duplicate_of or None, cluster representative)."""
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(policy.to_json(), encoding="utf-8")
    clusters_file = tmp_path / "clusters.jsonl"
    removed = subprocess.run(
        [neardup_bin, "dedup", str(path), "--policy-file", str(policy_file), "--keep", keep,
         "--removed", "-", "--clusters", str(clusters_file)],
        check=True, capture_output=True, text=True,
    ).stdout
    duplicate_of = {r["id"]: r["duplicate_of"] for r in map(json.loads, removed.splitlines())}
    cluster = {}
    for line in clusters_file.read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        for member in c["members"]:
            cluster[member] = c["representative"]
    return duplicate_of, cluster


def _write(tmp_path, docs):
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return path


# (policy options, keep, whether rows are named by an id column or by number, whether the
# components of the links are found by rounds on the cluster instead of on the driver); the
# corpus is the bundled examples and the generated one, in one file.
CASES = [
    ({}, "first", True, False),
    ({}, "longest", True, False),
    ({"method": "simhash", "k": 3}, "first", True, True),
    ({"method": "minhash", "threshold": 0.7}, "first", False, False),
]


@pytest.mark.parametrize("options,keep,named,rounds", CASES)
def test_spark_equals_cli_dedup(spark, neardup_bin, tmp_path, monkeypatch, options, keep, named, rounds):
    if rounds:
        monkeypatch.setattr(neardup.spark, "_LINKS_ON_DRIVER", 0)
    docs = _news() + _corpus()
    policy = neardup.Policy(**options)
    path = _write(tmp_path, docs)
    cli_duplicate_of, cli_cluster = _cli(neardup_bin, path, policy, keep, tmp_path)

    df = spark.read.json(str(path))
    assert df.rdd.getNumPartitions() > 1, "the test must cross partitions"
    if named:
        result = neardup.spark.dedup(df, text_col="text", id_col="id", policy=policy, keep=keep)
        rows = {r["id"]: r.asDict() for r in result.collect()}
    else:
        result = neardup.spark.dedup(df.drop("id"), policy=policy, keep=keep)
        numbered = sorted(result.collect(), key=lambda r: r["row_id"])
        # Row numbers follow the file's order: name them by the ids of the file's lines.
        name = {r["row_id"]: d["id"] for r, d in zip(numbered, docs)}
        rows = {
            name[r["row_id"]]: {
                "duplicate_of": None if r["duplicate_of"] is None else name[r["duplicate_of"]],
                "cluster": name[r["cluster"]],
                "is_duplicate": r["is_duplicate"],
                "text": r["text"],
            }
            for r in numbered
        }
    result.unpersist()
    # The job's own shuffle partitions are set for its run only.
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"

    assert set(rows) == {d["id"] for d in docs}
    assert all(rows[d["id"]]["text"] == d["text"] for d in docs)
    assert len(cli_duplicate_of) >= 100
    assert "council-budget-copy" in cli_duplicate_of or "council-budget" in cli_duplicate_of
    for doc_id, row in rows.items():
        assert row["duplicate_of"] == cli_duplicate_of.get(doc_id), doc_id
        assert row["is_duplicate"] == (doc_id in cli_duplicate_of), doc_id
        assert row["cluster"] == cli_cluster.get(doc_id, doc_id), doc_id


def _with_bad_records(tmp_path):
    """The corpus of the test above as JSON Lines, with among its lines every kind of record the
    CLI skips (not JSON, not an object, no text, a text or a url of the wrong type, invalid
    UTF-8), blank lines, records without an id (one a copy of an earlier record, one an original
    copied later), an id given as a number, and an HTML record with its copy. Returns the path
    and the line numbers (1-based) of the records without an id."""
    docs = _news() + _corpus()
    lines = [json.dumps(d).encode() for d in docs]
    page = "<p>" + " ".join(f"The council met on day {i} to discuss the budget." for i in range(40)) + "</p>"
    html = f"<html><head><title>Budget</title></head><body><article>{page}</article></body></html>"
    anonymous = " ".join(f"an original record without any id, sentence {i}." for i in range(30))
    extra = [
        b"not json at all",
        b"[1, 2, 3]",
        b'{"id": "no-text"}',
        b'{"id": "number-text", "text": 5}',
        b'{"id": "number-url", "text": "a record whose url is a number", "url": 7}',
        b'{"id": "bad-utf8", "text": "caf\xe9 au lait"}',
        b"",
        b"   ",
        json.dumps({"text": docs[3]["text"]}).encode(),
        json.dumps({"text": anonymous}).encode(),
        json.dumps({"id": 12345, "text": "a record whose id is a number, " * 10}).encode(),
        json.dumps({"id": "page", "html": html}).encode(),
        json.dumps({"id": "page-copy", "html": html}).encode(),
        json.dumps({"id": "anonymous-copy", "text": anonymous}).encode(),
    ]
    for i, line in enumerate(extra):
        lines.insert(10 + i * 60, line)
    path = tmp_path / "records.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    no_id = [n + 1 for n, line in enumerate(lines) if line.startswith(b'{"text"')]
    return path, no_id


@pytest.mark.parametrize(
    "options,pieces,on_driver",
    [
        ({}, True, True),
        ({}, True, False),
        ({"method": "minhash", "threshold": 0.7}, True, False),
        ({}, False, True),
    ],
)
def test_the_jsonl_reader_reads_the_records_the_cli_reads(
    spark, neardup_bin, tmp_path, monkeypatch, options, pieces, on_driver
):
    """`dedup_jsonl`: the CLI's reader in the executors, over lines split among tasks: the same
    records as the CLI (bad ones skipped, blank lines none, ids `FILE:LINE` where a record has
    none, HTML by its main text) and the same answer, document by document; under the default
    policy with its keys cut from the SimHash values of the count's pass, under MinHash with
    the texts read again for them. The lines read by the executors straight from the file in
    pieces (`pieces`), and as Spark's text source splits them (as for a compressed file). The
    parts found on the driver from the count's SimHash values (`on_driver`: no key shuffled),
    or by the executors' keys, links and components (a corpus beyond `_SEARCH_ON_DRIVER`)."""
    if not pieces:
        monkeypatch.setattr(neardup.spark, "_file_splits", lambda spark, path: None)
    if on_driver:

        def no_links(self, keyed):
            raise AssertionError("the parts were to be found on the driver")

        monkeypatch.setattr(neardup.spark._Stages, "links", no_links)
    else:
        monkeypatch.setattr(neardup.spark, "_SEARCH_ON_DRIVER", 0)

        def not_on_driver(*args):
            raise AssertionError("the corpus is beyond the driver's search")

        monkeypatch.setattr(neardup.spark._Stages, "found_on_driver", not_on_driver)
    decide, engine_threads, carried = neardup.spark._Stages.decide, [], []

    def decide_noting_threads(self, *args):
        engine_threads.append(args[6])  # `threads`, after members, keep, dated, memory, id_type, located
        carried.append(args[5] is not None and args[5].fingerprints)
        return decide(self, *args)

    monkeypatch.setattr(neardup.spark._Stages, "decide", decide_noting_threads)
    path, no_id = _with_bad_records(tmp_path)
    policy = neardup.Policy(**options)
    assert neardup.SearchKeys(policy, 0).cuts_from_simhash == (not options)
    cli_duplicate_of, cli_cluster = _cli(neardup_bin, path, policy, "first", tmp_path)
    kept_file = tmp_path / "kept.jsonl"
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(policy.to_json(), encoding="utf-8")
    subprocess.run(
        [neardup_bin, "dedup", str(path), "--policy-file", str(policy_file), "--kept", str(kept_file)],
        check=True,
        capture_output=True,
    )
    kept = len(kept_file.read_text(encoding="utf-8").splitlines())
    frame, lines = neardup.spark._input(spark, str(path))
    assert (lines.splits is not None) == pieces
    assert frame.rdd.getNumPartitions() > 1, "the test must cross blocks"

    result = neardup.spark.dedup_jsonl(spark, str(path), policy=policy)
    rows = {r["id"]: r.asDict() for r in result.collect()}
    result.unpersist()
    assert spark.conf.get("spark.sql.shuffle.partitions") == "2"

    assert engine_threads == [1], "the engine gets its executor's cores (local-cluster[2,1,1024]: 1)"
    # The engine takes the count's SimHash values and digests where it reads the records by
    # their places (pieces of local files) under the SimHash methods: the answers below are
    # decided by them.
    assert carried == [pieces and not options]
    assert len(rows) == kept + len(cli_duplicate_of), "the CLI's records, each once"
    for bad in ("no-text", "number-text", "number-url", "bad-utf8"):
        assert bad not in rows, bad
    assert "12345" in rows and "<" not in rows["page"]["text"] and "budget" in rows["page"]["text"]
    anonymous = [f"{path}:{line}" for line in no_id]
    assert all(name in rows for name in anonymous), anonymous
    assert cli_duplicate_of[anonymous[0]] is not None and cli_duplicate_of["anonymous-copy"] == anonymous[1]
    assert cli_duplicate_of["page-copy"] == "page"
    for doc_id, row in rows.items():
        assert row["duplicate_of"] == cli_duplicate_of.get(doc_id), doc_id
        assert row["is_duplicate"] == (doc_id in cli_duplicate_of), doc_id
        assert row["cluster"] == cli_cluster.get(doc_id, doc_id), doc_id

    # `rows="clustered"`: the answers of the records in clusters of two or more alone, from
    # the kept answers (the files are not read again), each once: the CLI's clusters.
    clustered = neardup.spark.dedup_jsonl(spark, str(path), policy=policy, rows="clustered")
    assert clustered.columns == ["id", "cluster", "duplicate_of", "is_duplicate"]
    listed = clustered.collect()
    assert len(listed) == len({r["id"] for r in listed}) == len(cli_cluster)
    for row in listed:
        assert row["cluster"] == cli_cluster[row["id"]], row["id"]
        assert row["duplicate_of"] == cli_duplicate_of.get(row["id"]), row["id"]
        assert row["is_duplicate"] == (row["id"] in cli_duplicate_of), row["id"]


def test_jsonl_lines_read_a_batch_as_the_cli_reads_its_lines():
    """`JsonlLines.read` on one batch: records and their lines, bad records counted and
    skipped, blank lines none, an id from the line when the record has none."""
    import pyarrow as pa

    lines = [b'{"id": "a", "text": "one", "url": "u"}', b"", b"{oops", b'{"text": "two", "title": 3}',
             b'{"text": "three"}']
    out = neardup.JsonlLines().read(*neardup.spark._text_buffers(pa.array(lines, pa.binary())[1:], view=True),
                                    "/data/x.jsonl", 8)
    assert list(out["line"]) == [3]
    assert out["bad"] == 2
    offsets, data, valid = out["id"]
    assert data == b"/data/x.jsonl:11" and list(offsets) == [0, len(data)] and list(valid) == [True]
    assert out["text"][1] == b"three" and list(out["url"][2]) == [False]


def test_read_range_splits_a_piece_of_a_file_into_lines():
    """`JsonlLines.read_range`: lines split at `\\n` (a `\\r` kept, blank lines counted), the
    lines that start before `owned` read, the last line without `\\n` whole only at the file's
    end, `consumed` where the next piece starts, `done` when no line of the piece is left."""
    reader = neardup.JsonlLines()
    data = b'{"id": "a", "text": "one"}\n\n{"id": "b", "text": "two"}\r\n{"id": "c", "text": "three"}'
    second = data.index(b'{"id": "b"')
    out = reader.read_range(data, len(data), False, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (3, data.rindex(b"\n") + 1, False)
    assert out["id"][1] == b"ab" and out["text"][1] == b"onetwo"
    out = reader.read_range(data, len(data), True, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (4, len(data), True)
    assert out["id"][1] == b"abc" and list(out["line"]) == [0, 2, 3]
    # only the lines starting before `owned`: the one starting at it is the next piece's
    out = reader.read_range(data, second, False, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (2, second, True)
    out = reader.read_range(data, second + 1, False, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (3, data.rindex(b"\n") + 1, True)
    assert out["id"][1] == b"ab"
    # a first line that does not end in the data: nothing read, a longer piece needed
    out = reader.read_range(data[:10], 5, False, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (0, 0, False)
    out = reader.read_range(b"", 5, True, "/f.jsonl", 1)
    assert (out["lines"], out["consumed"], out["done"]) == (0, 0, True)


@pytest.mark.parametrize("ending", [b"\n", b""])
def test_a_file_read_in_pieces_reads_each_line_once(tmp_path, monkeypatch, ending):
    """`_read_split` over the pieces of a file cut at every size (a cut inside a line, at a
    line's start, just after a `\\n`; pieces inside one long line; chunks shorter than a line):
    each line read once, by the piece it starts in, numbered as in the file: the records and
    their `FILE:LINE` ids of the whole file read at once."""
    import pyarrow as pa

    rng = random.Random(5)
    lines = []
    for i in range(40):
        kind = rng.randrange(5)
        if kind == 0:
            lines.append(b"")
        elif kind == 1:
            lines.append(json.dumps({"text": "no id " * rng.randint(1, 30)}).encode())
        elif kind == 2:
            lines.append(b"{broken")
        else:
            lines.append(json.dumps({"id": f"r{i}", "text": "x" * rng.randint(0, 90)}).encode() + b"\r" * (kind == 3))
    data = b"\n".join(lines) + ending
    path = tmp_path / "pieces.jsonl"
    path.write_bytes(data)
    reader = neardup.JsonlLines()
    whole = reader.read(*neardup.spark._text_buffers(pa.array(data.split(b"\n")[: len(lines)], pa.binary()),
                                                     view=True), str(path), 1)
    monkeypatch.setattr(neardup.spark, "_CHUNK_BYTES", 16)
    for size in list(range(1, 40)) + [97, 250, len(data) - 1, len(data), len(data) + 5]:
        bounds = list(range(0, len(data), size)) + [len(data)]
        ids, texts, read, bad = [], [], 0, 0
        for start, end in zip(bounds, bounds[1:]):
            for count, out in neardup.spark._read_split(reader, path.as_uri(), start, end, read):
                read += count
                bad += out["bad"]
                ids.append(out["id"][1])
                texts.append(out["text"][1])
        assert read == len(lines), size
        assert bad == whole["bad"], size
        assert b"".join(ids) == whole["id"][1] and b"".join(texts) == whole["text"][1], size


def test_records_are_read_again_by_their_place_in_the_file(tmp_path):
    """`JsonlLines.read_at`: the records of a file read again, in any order, by the places the
    pieces' reader gave them (`_Located`'s columns): the same ids (`FILE:LINE` for a record
    without one) and texts; a line that is no longer a record fails in one line."""
    import numpy as np

    lines = [json.dumps({"id": f"r{i}", "text": f"text {i} " * (i % 7)}).encode() for i in range(30)]
    lines[4], lines[9], lines[17] = b"", b"{broken", json.dumps({"text": "without an id"}).encode()
    path = tmp_path / "places.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    reader = neardup.JsonlLines()
    ids, texts, at, size, line, before = [], [], [], [], [], 0
    for start, end in ((0, 300), (300, path.stat().st_size)):
        for count, out in neardup.spark._read_split(reader, path.as_uri(), start, end, before):
            before += count
            records = np.asarray(out["line"])
            ids += _column(out["id"])
            texts += _column(out["text"])
            at += list(out["chunk_at"] + np.asarray(out["line_at"])[records])
            size += list(np.asarray(out["line_bytes"])[records])
            line += list(out["first_line"] + records)
    assert f"{path}:18" in ids and len(ids) == 28
    order = np.array(random.Random(3).sample(range(len(ids)), len(ids)), dtype=np.int64)
    again = reader.read_at(
        ["/no/such/file", str(path)], np.ones(len(order), np.int64), np.array(at)[order], np.array(size)[order],
        np.array(line)[order],
    )
    assert _column(again["id"]) == [ids[i] for i in order]
    assert _column(again["text"]) == [texts[i] for i in order]
    with pytest.raises(neardup.NeardupError, match="no such file|No such file"):
        reader.read_at(["/no/such/file"], np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1, np.int64),
                       np.ones(1, np.int64))
    changed = path.read_bytes().replace(lines[0], b"x" * len(lines[0]))
    path.write_bytes(changed)
    with pytest.raises(neardup.NeardupError, match="no longer a record"):
        reader.read_at([str(path)], np.zeros(1, np.int64), np.array(at[:1]), np.array(size[:1]), np.array(line[:1]))


def _column(column):
    """A `JsonlLines` column (offsets, bytes, valid) as a list of strings."""
    offsets, data, _ = column
    return [data[a:b].decode() for a, b in zip(offsets[:-1], offsets[1:])]


def test_the_files_are_cut_in_pieces_in_rounds_of_the_cores(spark, tmp_path, monkeypatch):
    """`_file_splits`: every byte of every file (a folder's, hidden files left out, in name
    order) in exactly one piece, no piece above `maxPartitionBytes`, the pieces a whole number
    of rounds of the cores when that allows; none (Spark's text source reads them) when a file
    is compressed."""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "b.jsonl").write_bytes(b"x" * 300_000)
    (folder / "a.jsonl").write_bytes(b"y" * 100_000)
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".a.jsonl.crc").write_bytes(b"z" * 10)
    splits = neardup.spark._file_splits(spark, str(folder))
    assert [uri.rsplit("/", 1)[1] for uri, _, _ in splits][:1] == ["a.jsonl"]
    for name, size in (("a.jsonl", 100_000), ("b.jsonl", 300_000)):
        pieces = [(start, end) for uri, start, end in splits if uri.endswith("/" + name)]
        assert pieces[0][0] == 0 and pieces[-1][1] == size
        assert all(a[1] == b[0] for a, b in zip(pieces, pieces[1:]))
    most = neardup.spark._size_conf(spark.conf.get("spark.sql.files.maxPartitionBytes"))
    assert all(end - start <= most for _, start, end in splits)
    # 400,000 bytes, at most 65,536 a piece and at least the open cost (4 MiB): each file in
    # pieces of 65,536 bytes at most, 2 + 5
    assert len(splits) == 7
    before = spark.conf.get("spark.sql.files.openCostInBytes")
    spark.conf.set("spark.sql.files.openCostInBytes", "1")
    try:
        rounds = neardup.spark._file_splits(spark, str(folder))
    finally:
        spark.conf.set("spark.sql.files.openCostInBytes", before)
    # 7 pieces at least make 4 rounds of the 2 cores: 8 of 50,000 bytes
    assert spark.sparkContext.defaultParallelism == 2
    assert [end - start for _, start, end in rounds] == [50_000] * 8
    (folder / "c.jsonl.gz").write_bytes(b"")
    assert neardup.spark._file_splits(spark, str(folder)) is None
    with pytest.raises(neardup.NeardupError, match="no file"):
        neardup.spark._file_splits(spark, str(tmp_path / "missing"))


def test_the_generated_corpus_has_chains():
    """Connected components of the accepted pairs would merge clusters here: the Spark job must
    not stop at components (it runs the engine's centring on each)."""
    texts = [d["text"] for d in _corpus()]
    result = neardup.dedup(texts)
    parent = list(range(len(texts)))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for p in result.pairs:
        parent[root(p["a"])] = root(p["b"])
    kept_per_component = {}
    for i, kept in enumerate(result.keep):
        if kept:
            kept_per_component[root(i)] = kept_per_component.get(root(i), 0) + 1
    assert max(kept_per_component.values()) >= 2


def test_bad_arguments_are_errors(spark):
    df = spark.createDataFrame([("a", "some text"), ("b", None)], "id string, text string")
    with pytest.raises(neardup.NeardupError, match="overlap"):
        neardup.spark.dedup(df, id_col="id", policy={"method": "overlap"})
    with pytest.raises(neardup.NeardupError, match="no column 'body'"):
        neardup.spark.dedup(df, text_col="body")
    with pytest.raises(neardup.NeardupError, match="fetched_at_col"):
        neardup.spark.dedup(df, keep="newest")
    with pytest.raises(neardup.NeardupError, match="nulls"):
        neardup.spark.dedup(df, id_col="id")
    clash = spark.createDataFrame([("x", 1)], "text string, cluster int")
    with pytest.raises(neardup.NeardupError, match="cluster"):
        neardup.spark.dedup(clash)
    with pytest.raises(neardup.NeardupError, match="invalid rows"):
        neardup.spark.dedup_jsonl(spark, "unread.jsonl", rows="some")


def test_the_job_entry_point_writes_the_kept_rows(spark, tmp_path):
    """`spark-submit neardup/spark.py INPUT OUTPUT` (main) on the examples: Parquet out, the
    kept rows with every input column."""
    from conftest import ROOT

    out = tmp_path / "kept"
    neardup.spark.main([str(ROOT / "examples/news.jsonl"), str(out), "--id-col", "id"])
    kept = spark.read.parquet(str(out))
    expected = [d["id"] for d, k in zip(_news(), neardup.dedup([d["text"] for d in _news()]).keep) if k]
    assert sorted(r["id"] for r in kept.collect()) == sorted(expected)
    assert set(kept.columns) == set(spark.read.json(str(ROOT / "examples/news.jsonl")).columns)


def test_the_job_entry_point_writes_the_clustered_answers(spark, neardup_bin, tmp_path, capsys):
    """`--rows clustered` (the values of `dedup_jsonl`'s `rows`): the job writes the answers of
    the records in clusters of two or more alone, each once, as the CLI's `--clusters` and
    `--removed` give them (the records the CLI skips, named `FILE:LINE` and HTML among them),
    under the `--keep` and `--policy-file` it is given; other inputs and `--all` are refused."""
    path, _ = _with_bad_records(tmp_path)
    policy = neardup.Policy(method="simhash", k=3)
    first = _cli(neardup_bin, path, policy, "first", tmp_path)
    cli_duplicate_of, cli_cluster = _cli(neardup_bin, path, policy, "longest", tmp_path)
    assert first != (cli_duplicate_of, cli_cluster), "the corpus must tell the keeps apart"
    out = tmp_path / "clustered"
    neardup.spark.main(
        [str(path), str(out), "--policy-file", str(tmp_path / "policy.json"), "--keep", "longest",
         "--rows", "clustered"]
    )
    written = spark.read.parquet(str(out))
    assert written.columns == ["id", "cluster", "duplicate_of", "is_duplicate"]
    listed = written.collect()
    assert len(listed) == len({r["id"] for r in listed}) == len(cli_cluster)
    assert cli_duplicate_of and set(cli_duplicate_of) <= set(cli_cluster)
    for row in listed:
        assert row["cluster"] == cli_cluster[row["id"]], row["id"]
        assert row["duplicate_of"] == cli_duplicate_of.get(row["id"]), row["id"]
        assert row["is_duplicate"] == (row["id"] in cli_duplicate_of), row["id"]

    refused = [
        ([str(path), str(out), "--rows", "some"], "argument --rows: invalid choice"),
        ([str(path), str(out), "--rows", "clustered", "--all"], "not both"),
        ([str(tmp_path / "corpus.parquet"), str(out), "--rows", "clustered"], "reads JSON Lines"),
        ([str(path), str(out), "--rows", "clustered", "--order-col", "id"], "no --order-col"),
    ]
    for argv, message in refused:
        with pytest.raises(SystemExit) as exited:
            neardup.spark.main(argv)
        assert exited.value.code == 2 and message in capsys.readouterr().err, argv


def test_the_exact_method_has_no_keys_and_still_dedups(spark):
    """Under `exact` there is no candidate search (no keys): exact groups alone."""
    news = _news()
    df = spark.createDataFrame([(d["id"], d["text"]) for d in news], "id string, text string")
    result = neardup.spark.dedup(df, id_col="id", policy={"method": "exact"})
    rows = {r["id"]: r["duplicate_of"] for r in result.collect()}
    result.unpersist()
    expected = neardup.dedup([d["text"] for d in news], policy={"method": "exact"})
    assert rows == {
        d["id"]: None if of is None else news[of]["id"] for d, of in zip(news, expected.duplicate_of)
    }
    assert sum(of is not None for of in rows.values()) == 1


def test_executors_without_the_package_fail_in_one_clear_line(tmp_path):
    """The job run as a user first runs it: executors on a Python without neardup (here the
    interpreter this venv was made from) fail before any stage with one line naming the fix."""
    base_python = getattr(sys, "_base_executable", None)
    probe = subprocess.run([base_python, "-c", "import neardup"], capture_output=True)
    assert probe.returncode != 0, f"{base_python} must not have neardup for this test"
    corpus = _write(tmp_path, [{"id": "a", "text": "one text"}, {"id": "b", "text": "another"}])
    env = dict(os.environ, PYSPARK_PYTHON=base_python, PYSPARK_DRIVER_PYTHON=sys.executable)
    env.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    run = subprocess.run(
        [sys.executable, "-m", "neardup.spark", str(corpus), str(tmp_path / "out")],
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 1, run.stderr[-3000:]
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("neardup.spark: the Spark executors cannot import neardup ("), last
    assert "PYSPARK_PYTHON" in last and "neardup[spark]" in last, last
    assert "Traceback" not in run.stderr, run.stderr[-3000:]


class _Session:
    """What `_executors_run_this_python` reads of a SparkSession: its master and the Python
    its executors run."""

    def __init__(self, master, python):
        self.sparkContext = type("Context", (), {"master": master, "pythonExec": python})()


def test_the_probe_is_skipped_only_where_the_executors_run_this_python():
    """The executors' import probe (a job of its own) is skipped only under a `local` master
    whose workers are this very interpreter (by its path, not resolved: a venv's `python`
    links to a base Python without the venv's packages); anywhere else it runs."""
    this = sys.executable
    base = getattr(sys, "_base_executable", None)
    run_here = neardup.spark._executors_run_this_python
    assert run_here(_Session("local[2]", this))
    assert run_here(_Session("local", this))
    assert run_here(_Session("local[*]", this))
    assert not run_here(_Session("local-cluster[2,1,1024]", this))
    assert not run_here(_Session("yarn", this))
    assert not run_here(_Session("spark://host:7077", this))
    assert not run_here(_Session("local[2]", "/nonexistent/python3"))
    if base and os.path.abspath(base) != os.path.abspath(this):
        assert not run_here(_Session("local[2]", base))


def _arrow_texts(texts, view=False):
    import pyarrow as pa

    return neardup.spark._text_buffers(pa.array(texts, pa.string()), view=view)


def test_search_keys_read_an_arrow_column_in_place():
    """The texts of a sliced Arrow column (offsets not from 0) read in place through a NumPy view
    of its buffer give what a copy of its bytes gives, and each text's own fingerprints."""
    import numpy as np
    import pyarrow as pa

    texts = [d["text"] for d in _corpus()][:50]
    column = pa.array(["a text before the slice"] + texts, pa.string()).slice(1)
    keys = neardup.SearchKeys(None, len(texts))
    offsets, view = neardup.spark._text_buffers(column, view=True)
    assert isinstance(view, np.ndarray) and offsets[0] > 0
    in_place, copied = keys.fingerprint(offsets, view), keys.fingerprint(*neardup.spark._text_buffers(column))
    for name in ("digest", "simhash", "keys"):
        assert in_place[name] == copied[name]
    assert in_place["key_offsets"].tolist() == copied["key_offsets"].tolist()
    width = keys.simhash_width
    alone = keys.fingerprint(*neardup.spark._text_buffers(pa.array(texts[7:8], pa.string()), view=True))
    assert in_place["simhash"][7 * width : 8 * width] == alone["simhash"]


def test_search_keys_cut_from_the_simhash_are_the_keys_of_the_texts():
    """`SearchKeys.cut` on the SimHash values `fingerprint` gives makes the keys `fingerprint`
    makes, at 64 and 128 bits; MinHash bands need more than the SimHash."""
    import pyarrow as pa

    texts = [d["text"] for d in _corpus()][:80]
    column = pa.array(texts, pa.string())
    for options in ({}, {"method": "simhash", "k": 3}, {"bits": 128}):
        keys = neardup.SearchKeys(neardup.Policy(**options), 5_000)
        assert keys.cuts_from_simhash
        made = keys.fingerprint(*neardup.spark._text_buffers(column, view=True))
        cut = keys.cut(made["simhash"])
        assert cut["keys"] == made["keys"] and len(cut["keys"]) > 0
        assert cut["key_offsets"].tolist() == made["key_offsets"].tolist()
        with pytest.raises(neardup.NeardupError):
            keys.cut(made["simhash"][:-1])
    minhash = neardup.SearchKeys(neardup.Policy(method="minhash", threshold=0.7), 5_000)
    assert not minhash.cuts_from_simhash
    with pytest.raises(neardup.NeardupError):
        minhash.cut(b"\0" * 8)


def test_the_ids_held_for_a_part_do_not_hold_their_batches(tmp_path):
    """`_Names` holds the ids of a part's rows until the part is answered; a column of a batch
    read from an Arrow stream (Spark's) is a slice of the batch's body, so the ids must be
    copied out, or every batch's texts stay allocated until then (the giant family: 200,000
    rows of 4.6 KB in a 1 GB worker)."""
    import gc

    import numpy as np
    import pyarrow as pa

    texts, ids = pa.array(["x" * 4600] * 1000), pa.array([f"id-{i}" for i in range(1000)])
    path = str(tmp_path / "batches.arrows")
    schema = pa.schema([("text", pa.string()), ("id", pa.string()), ("row", pa.int64())])
    with pa.OSFile(path, "wb") as f, pa.ipc.new_stream(f, schema) as writer:
        for i in range(5):
            rows = pa.array(np.arange(i * 1000, (i + 1) * 1000, dtype=np.int64))
            writer.write_batch(pa.record_batch([texts, ids, rows], schema=schema))
    del texts, ids
    gc.collect()
    before = pa.total_allocated_bytes()
    names = neardup.spark._Names()
    for i, batch in enumerate(pa.ipc.open_stream(pa.OSFile(path))):
        names.add(np.asarray(batch.column(2)), batch.column(1))  # as `decide` gives them
        del batch
    gc.collect()
    assert pa.total_allocated_bytes() - before < 1_000_000, "the batches' 23 MB of texts are held"
    assert names.take(np.arange(1500, dtype=np.int64)).to_pylist()[999:1001] == ["id-999", "id-0"]


def test_the_part_engine_is_the_engine_with_texts_on_disk():
    """One part of every document of the generated corpus (chains, exact and near copies), its
    texts held 4 KB at a time (the rest in a temporary file, read back for the shingle sets):
    the engine's own answer, as `neardup.dedup` gives it, under each keep order, and within the
    least budget (16 MiB: digests, search and shingle sets on disk)."""
    import numpy as np

    texts = [d["text"] for d in _corpus()]
    rows = np.arange(0, 3 * len(texts), 3, dtype=np.int64)  # row numbers need not be dense
    for keep, memory in (("first", None), ("longest", None), ("first", 16 << 20)):
        engine = neardup.PartEngine(None, keep, texts_in_memory=4096, memory=memory)
        half = len(texts) // 2
        # The first half as a NumPy view of the Arrow buffer (the job's way), the rest as bytes.
        got = [engine.feed(np.zeros(half, np.int64), rows[:half], *_arrow_texts(texts[:half], view=True))]
        got.append(engine.feed(np.zeros(len(texts) - half, np.int64), rows[half:], *_arrow_texts(texts[half:])))
        got.append(engine.finish())
        assert len(got[0][0]) == 0 and len(got[1][0]) == 0, "a part is decided only once whole"
        row, cluster, duplicate_of = (np.concatenate([g[i] for g in got]) for i in range(3))
        expected = neardup.dedup(texts, keep=keep)
        assert row.tolist() == rows.tolist()
        assert duplicate_of.tolist() == [-1 if d is None else int(rows[d]) for d in expected.duplicate_of]
        clusters = expected.cluster_ids()
        assert cluster.tolist() == [-1 if c is None else int(rows[c]) for c in clusters]
        assert sum(d is not None for d in expected.duplicate_of) >= 100


def test_the_part_engine_takes_the_fingerprints_the_count_made():
    """`PartEngine.feed` with each row's SimHash value and digest as `SearchKeys.fingerprint`
    made them (the count's pass of `dedup_jsonl`) gives the answer it gives fingerprinting the
    texts itself: at 64 and 128 bits, with a 16-byte digest, in one part and in many. The
    values are what it decides by: rows out of step with their fingerprints (all but the first
    row's shifted by one) change the answer, a first row's that are not its text's are an
    error, as are lengths that do not match and a profile with MinHash signatures."""
    import numpy as np

    texts = [d["text"] for d in _corpus()]
    rows = np.arange(5, 5 + len(texts), dtype=np.int64)
    parts = np.arange(len(texts), dtype=np.int64) // 200  # 4 parts of consecutive rows
    xxh3 = dict(neardup.Policy().to_dict()["profile"], digest="xxh3-128")
    for options in ({}, {"bits": 128}, {"method": "simhash", "k": 3, "profile": xxh3}):
        policy = neardup.Policy(**options)
        made = neardup.SearchKeys(policy, 0).fingerprint(*_arrow_texts(texts))
        simhash, digest = made["simhash"], made["digest"]
        width, digest_width = len(simhash) // len(texts), made["digest_width"]
        assert digest_width == (16 if "profile" in options else 32)

        def answers(part, given=None, halves=True):
            engine = neardup.PartEngine(policy, texts_in_memory=4096)
            assert engine.takes_fingerprints
            half = len(texts) // 2 if halves else len(texts)
            got = []
            for at, end in ((0, half), (half, len(texts))):
                carried = {}
                if given is not None:
                    carried = {
                        "simhash": np.frombuffer(given[0][at * width : end * width], np.uint8),
                        "digest": given[1][at * digest_width : end * digest_width],
                    }
                got.append(engine.feed(part[at:end], rows[at:end], *_arrow_texts(texts[at:end]), **carried))
            got.append(engine.finish())
            return [np.concatenate([g[i] for g in got]).tolist() for i in range(3)]

        for part, removed in ((np.zeros(len(texts), np.int64), 50), (parts, 10)):
            fingerprinted = answers(part)
            assert sum(d >= 0 for d in fingerprinted[2]) >= removed
            assert answers(part, (simhash, digest)) == fingerprinted, options

        def shifted(values, w):  # the first row's own, each other row's the next one's
            return values[:w] + values[2 * w :] + values[w : 2 * w]

        one = np.zeros(len(texts), np.int64)
        given = (shifted(simhash, width), shifted(digest, digest_width))
        assert answers(one, given, halves=False) != answers(one), "the answer is the fingerprints'"
        engine = neardup.PartEngine(policy)
        wrong = (simhash[width : 2 * width] + simhash[:width], digest[digest_width : 2 * digest_width] + digest[:digest_width])
        with pytest.raises(neardup.NeardupError, match="not their texts"):
            engine.feed(one[:2], rows[:2], *_arrow_texts(texts[:2]), simhash=wrong[0], digest=wrong[1])
        with pytest.raises(neardup.NeardupError, match="bytes of SimHash"):
            engine.feed(one[:2], rows[:2], *_arrow_texts(texts[:2]), simhash=simhash[:width], digest=digest[: 2 * digest_width])
        with pytest.raises(neardup.NeardupError, match="together"):
            engine.feed(one[:2], rows[:2], *_arrow_texts(texts[:2]), simhash=simhash[: 2 * width])
    minhash = neardup.PartEngine(neardup.Policy(method="minhash"))
    assert not minhash.takes_fingerprints
    with pytest.raises(neardup.NeardupError, match="MinHash"):
        minhash.feed(one[:1], rows[:1], *_arrow_texts(texts[:1]), simhash=simhash[:width], digest=digest[:digest_width])


def test_the_engine_budget_follows_the_python_worker_limit():
    """Three quarters of `spark.executor.pyspark.memory` (MiB without a unit), never under the
    engine's least; a budget under that least, or a limit that is not a size, is an error."""
    memory = neardup.spark._engine_memory
    assert memory(None) is None
    assert memory("1g") == 3 << 28
    assert memory("2048") == 3 << 29
    assert memory("512MB") == 3 << 27
    assert memory("1k") == 16 << 20
    with pytest.raises(neardup.NeardupError, match="not a size"):
        memory("lots")
    with pytest.raises(neardup.NeardupError, match="below the least"):
        neardup.PartEngine(memory=1 << 20)


def test_the_part_engine_gathers_small_parts_and_wants_sorted_rows():
    import numpy as np

    copied = "the same words in the same order, one text copied"
    engine = neardup.PartEngine()
    parts, rows = np.array([1, 1, 5, 5], np.int64), np.array([1, 2, 3, 4], np.int64)
    texts = ["a text of part one", "another text of part one", copied, copied]
    row, cluster, duplicate_of = engine.feed(parts, rows, *_arrow_texts(texts))
    assert len(row) == 0, "small parts are gathered for one run of the engine"
    row, cluster, duplicate_of = engine.finish()
    assert row.tolist() == [1, 2, 3, 4]
    assert duplicate_of.tolist() == [-1, -1, -1, 3] and cluster.tolist() == [-1, -1, 3, 3]
    with pytest.raises(neardup.NeardupError, match="sorted by part"):
        neardup.PartEngine().feed(np.array([2, 1], np.int64), np.array([1, 2], np.int64), *_arrow_texts(["a", "b"]))
    with pytest.raises(neardup.NeardupError, match="ascending row"):
        neardup.PartEngine().feed(np.array([1, 1], np.int64), np.array([2, 1], np.int64), *_arrow_texts(["a", "b"]))
    with pytest.raises(neardup.NeardupError, match="UTF-8"):
        neardup.PartEngine().feed(np.array([1], np.int64), np.array([1], np.int64), np.array([0, 2], np.int64), b"\xff\xfe")


def test_links_join_a_key_group_as_its_candidate_pairs_do():
    """A group of 300 members (searched as one run, recursively on the bits they do not share)
    and one of 3 (every pair compared): one link a member at most, the components of the pairs
    within k, never the pairs themselves."""
    import numpy as np

    rng = random.Random(5)
    base = rng.getrandbits(64)
    near = [base ^ (1 << rng.randrange(64)) for _ in range(299)]  # all within 2 bits of each other
    far = base ^ ((1 << 40) - 1)  # 40 bits away
    values = near + [far]
    keys = neardup.SearchKeys(neardup.Policy(method="simhash", k=3), 1000)
    for group in (values, [near[0], near[1], far]):
        rows = np.arange(10, 10 + len(group), dtype=np.int64)
        simhashes = b"".join(v.to_bytes(8, "big") for v in group)
        a, b = keys.links(rows, simhashes, np.array([0, len(group)], np.int64))
        assert sorted(b.tolist()) == rows[1:-1].tolist() and set(a.tolist()) == {10}


def test_the_parts_found_on_the_driver_are_those_of_the_executors_links():
    """`SearchKeys.parts` (every key of a whole corpus cut, sorted and linked, the links'
    components found, in one call) gives the parts the executors' way gives: `cut`, the keys
    grouped, `links` on each group, `link_components` on the links; at 64 and 128 bits, with
    exact copies and chains. Rows need not be dense nor start at 0."""
    import numpy as np
    import pyarrow as pa

    texts = [d["text"] for d in _corpus()]
    for options in ({}, {"method": "simhash", "k": 3}, {"bits": 128}):
        keys = neardup.SearchKeys(neardup.Policy(**options), len(texts))
        width = keys.simhash_width
        made = keys.fingerprint(*neardup.spark._text_buffers(pa.array(texts), view=True))
        simhash = made["simhash"]
        rows = np.arange(7, 7 + 2 * len(texts), 2, dtype=np.int64)
        node, root = keys.parts(rows, simhash)

        cut = keys.cut(simhash)
        owner = np.repeat(np.arange(len(texts)), np.diff(cut["key_offsets"]))
        key = np.frombuffer(cut["keys"], np.uint8).reshape(len(owner), keys.key_width)
        order = np.lexsort([owner] + [key[:, i] for i in reversed(range(keys.key_width))])
        key, owner = key[order], owner[order]
        starts = np.concatenate([[0], np.flatnonzero(np.any(key[1:] != key[:-1], axis=1)) + 1, [len(owner)]])
        values = np.frombuffer(simhash, np.uint8).reshape(len(texts), width)[owner]
        a, b = keys.links(rows[owner], values.tobytes(), starts.astype(np.int64))
        expected_node, expected_root = neardup.spark.link_components(a, b)
        assert node.tolist() == expected_node.tolist() and root.tolist() == expected_root.tolist()
        sizes = np.unique(root, return_counts=True)[1]
        assert len(sizes) >= 50 and sizes.max() >= 3, "parts of two and chains of three or more"
        with pytest.raises(neardup.NeardupError):
            keys.parts(rows, simhash[:-1])


def test_the_engine_of_a_task_uses_its_executors_cores():
    """`_task_threads`: `spark.executor.cores` when set, else the cores a local master gives
    its executor; `None` (one thread a processor) where neither says. The engine runs its
    parallel work on that many threads of its own, with the same answers whatever their
    number; the test's own session (`local-cluster[2,1,1024]`) gives each task 1."""
    import numpy as np

    threads = neardup.spark._task_threads
    assert threads("local[2]", None) == 2
    assert threads("local[3, 2]", None) == 3
    assert threads("local[*]", None) == os.cpu_count()
    assert threads("local", None) == 1
    assert threads("local-cluster[2,1,1024]", None) == 1
    assert threads("local-cluster[2, 4, 2048]", None) == 4
    assert threads("spark://host:7077", None) is None
    assert threads("yarn", "6") == 6 and threads("local[2]", "3") == 3
    with pytest.raises(neardup.NeardupError, match="not a number of cores"):
        threads("yarn", "0")

    texts = [d["text"] for d in _corpus()]
    rows = np.arange(len(texts), dtype=np.int64)
    answers = []
    for count in (1, 3):
        engine = neardup.PartEngine(texts_in_memory=4096, threads=count)
        assert engine.threads == count
        fed = engine.feed(np.zeros(len(texts), np.int64), rows, *_arrow_texts(texts))
        answers.append([np.concatenate([a, b]).tolist() for a, b in zip(fed, engine.finish())])
    assert answers[0] == answers[1] and sum(d >= 0 for d in answers[0][2]) >= 100
    assert neardup.PartEngine().threads >= 1
    with pytest.raises(neardup.NeardupError, match="at least 1"):
        neardup.PartEngine(threads=0)
