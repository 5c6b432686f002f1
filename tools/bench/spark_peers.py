#!/usr/bin/env python3
"""neardup.spark.dedup against text-dedup's Spark MinHash, on the same local Spark and data, one
run: time, and quality on the CopyCat pairs (BENCHMARKS.md, "On Spark").

    python3 tools/bench/spark_peers.py [--corpus /work/bench-data/text-1gb.jsonl] [--docs 20000]
        [--data ../shared/data] [--peer-python /work/venv-textdedup/bin/python]
        [--master local-cluster[2,1,2048]] [--partitions 8]

Every run is a fresh Spark application (a subprocess) on the same master with the same shuffle
partitions, reading the same JSON Lines file, timed from reading the file to the deduplicated
rows counted:

- neardup, default policy (cascade: SimHash k = 6, then Jaccard >= 0.9 of character 5-shingles)
  and a MinHash policy (LSH at 0.7, no verification, as text-dedup's threshold): the Python
  interpreter running this script must have `neardup` installed (release build:
  `pip install ./crates/python`) and pyspark;
- text-dedup 0.4.0 (`pip install text-dedup==0.4.0` into a separate venv, `--peer-python`):
  its `text_dedup.minhash_spark` pipeline as its `__main__` runs it (its own functions:
  `ngrams_length_check`, `generate_hash_values`, `optimal_param`, `generate_edges`; word
  5-grams, 250 permutations, threshold 0.7), with one change: its connected components come
  from GraphFrames, whose JAR is published on spark-packages only (not on PyPI), so they are
  computed here by the same alternating large-star/small-star rounds GraphFrames implements
  (`neardup.spark._components`; the peer venv needs `neardup` installed too). Its
  `repartition(4096)` calls and 8,192 shuffle partitions are replaced by `--partitions`.

Quality: every CopyCat pair labelled 3, 2 or 0.5 becomes two documents of one corpus; a pair
is flagged when both land in one cluster (neardup: the same `cluster`; text-dedup: the same
connected component). Positives: label 3 (strict), 3 and 2 (lenient); negatives: 0.5.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from online_eval import metrics  # noqa: E402  (precision, recall, F1 as the project scores CopyCat)


def spark_session(master, partitions, events=None, settings=None):
    """A Spark application on `master` running this interpreter's Python, its event log in
    `events` (when given); `partitions` (None: left to the job) and further `settings`."""
    import pyspark

    os.environ.setdefault("SPARK_HOME", os.path.dirname(pyspark.__file__))
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession

    builder = (
        SparkSession.builder.master(master)
        .appName("spark-peers")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.driver.memory", "2g")
        .config("spark.eventLog.enabled", "true" if events else "false")
        .config("spark.eventLog.dir", f"file://{events}" if events else "")
        .config("spark.eventLog.compress", "false")
        .config("spark.eventLog.rolling.enabled", "false")
    )
    if partitions:
        builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
        builder = builder.config("spark.default.parallelism", str(partitions))
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def run_neardup(spark, path, policy):
    import neardup
    import neardup.spark

    df = spark.read.json(path)
    result = neardup.spark.dedup(df, text_col="text", id_col="id", policy=neardup.Policy(**policy))
    return result.select("id", "cluster"), result


def run_text_dedup(spark, path, partitions):
    """text_dedup.minhash_spark's __main__ (0.4.0), GraphFrames' components aside."""
    import numpy as np
    import pyspark
    from pyspark.sql import functions as F
    from pyspark.sql.functions import udf
    from pyspark.sql.types import BooleanType
    from text_dedup import minhash_spark as td

    from neardup.spark import _components

    threshold, ngram_size, min_length, num_perm = 0.7, 5, 5, 250
    b, r = td.optimal_param(threshold, num_perm)
    ranges = [(i * r, (i + 1) * r) for i in range(b)]
    rng = np.random.RandomState(td.SEED)
    permutations = (
        rng.randint(1, td.MOD_PRIME, size=(num_perm,), dtype=td.DTYPE),
        rng.randint(0, td.MOD_PRIME, size=(num_perm,), dtype=td.DTYPE),
    )
    df = (
        spark.read.json(path)
        .filter(udf(td.ngrams_length_check, BooleanType())(F.col("text"), F.lit(ngram_size), F.lit(min_length)))
        .withColumn("__id__", F.monotonically_increasing_id())
        .persist(pyspark.StorageLevel.DISK_ONLY)
    )
    df.count()
    edges = (
        df.select("__id__", "text")
        .rdd.flatMap(
            lambda x: td.generate_hash_values(
                content=x[1], idx=x[0], num_perm=num_perm, ngram_size=ngram_size,
                min_length=min_length, hashranges=ranges, permutations=permutations,
            )
        )
        .groupBy(lambda x: (x[0], x[1]))
        .flatMap(lambda x: td.generate_edges([e[2] for e in x[1]]))
        .distinct()
        .persist(pyspark.StorageLevel.DISK_ONLY)
    )
    if edges.isEmpty():
        assignment = spark.createDataFrame([], "node long, root long")
    else:
        edges_df = spark.createDataFrame(edges, schema=["a", "b"]).repartition(partitions)
        assignment = _components(edges_df)
    out = df.join(
        assignment.select(F.col("node").alias("__id__"), F.col("root").alias("__component__")), "__id__", "left"
    ).persist(pyspark.StorageLevel.DISK_ONLY)
    # Rows named by the component's smallest __id__ (text-dedup keeps that one).
    return out.select("id", F.coalesce("__component__", "__id__").alias("cluster")), out


def child(args):
    """One timed run in this process: writes {"seconds", "rows", "kept", "cluster"?} to --out
    (text-dedup drops documents under 5 words: they are neither rows nor kept)."""
    events = tempfile.mkdtemp(prefix="spark-events-")
    spark = spark_session(args.master, args.partitions, events)
    start = time.perf_counter()
    if args.run == "text-dedup":
        clusters, held = run_text_dedup(spark, args.input, args.partitions)
    else:
        clusters, held = run_neardup(spark, args.input, json.loads(args.policy))
    rows = clusters.count()
    kept = clusters.where("cast(cluster as string) = cast(id as string)").count() if args.run != "text-dedup" else None
    if kept is None:
        kept = held.where("__component__ is null or __component__ = __id__").count()
    seconds = time.perf_counter() - start
    out = {"seconds": seconds, "rows": rows, "kept": kept}
    if args.collect:
        out["cluster"] = {r["id"]: str(r["cluster"]) for r in clusters.collect()}
    spark.stop()
    out.update(shuffled(events))
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f)


def shuffled(events):
    """Shuffle bytes written and stages completed, from the application's event log."""
    table = stages(events)
    return {"shuffle_bytes": sum(s["written"] for s in table), "stages": len(table)}


def stages(events):
    """Per stage of the application: name, SQL operators, tasks, task milliseconds (executor
    run time), shuffle bytes written and read, from the event log."""
    table = {}
    blank = lambda: {"tasks": 0, "ms": 0, "written": 0, "read": 0}  # noqa: E731
    logs = [os.path.join(top, name) for top, _, names in os.walk(events) for name in names]
    for log in logs:
        with open(log, encoding="utf-8") as f:
            for line in f:
                event = json.loads(line)
                kind = event.get("Event")
                if kind == "SparkListenerStageCompleted":
                    info = event["Stage Info"]
                    row = table.setdefault(info["Stage ID"], blank())
                    row["name"] = info["Stage Name"].split(" at ")[0]
                    row["ops"] = _operations(info.get("RDD Info", []))
                elif kind == "SparkListenerTaskEnd":
                    metrics = event.get("Task Metrics") or {}
                    row = table.setdefault(event["Stage ID"], blank())
                    row["tasks"] += 1
                    row["ms"] += metrics.get("Executor Run Time", 0)
                    row["written"] += (metrics.get("Shuffle Write Metrics") or {}).get("Shuffle Bytes Written", 0)
                    read = metrics.get("Shuffle Read Metrics") or {}
                    row["read"] += read.get("Remote Bytes Read", 0) + read.get("Local Bytes Read", 0)
    return [dict(stage=k, **v) for k, v in sorted(table.items()) if "name" in v]


def _operations(rdds):
    """The SQL operators a stage runs (its RDDs' scopes), in order, each once."""
    names = []
    for rdd in sorted(rdds, key=lambda r: r["RDD ID"]):
        try:
            name = json.loads(rdd.get("Scope", "{}")).get("name", "")
        except ValueError:
            name = ""
        name = name.split(" (")[0]
        if name and name not in names and not name.startswith(("WholeStageCodegen", "mapPartitions")):
            names.append(name)
    return ", ".join(names)


def launch(python, tool, path, args, tmp, collect, policy="{}"):
    out = os.path.join(tmp, f"{tool}-{os.path.basename(path)}.json")
    command = [
        python, os.path.abspath(__file__), "--run", tool, "--input", path, "--out", out,
        "--master", args.master, "--partitions", str(args.partitions), "--policy", policy,
    ]
    if collect:
        command.append("--collect")
    subprocess.run(command, check=True, stderr=subprocess.DEVNULL if not args.verbose else None)
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/work/bench-data/text-1gb.jsonl")
    parser.add_argument("--docs", type=int, default=20000)
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--peer-python", default="/work/venv-textdedup/bin/python")
    parser.add_argument("--master", default="local-cluster[2,1,2048]")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--verbose", action="store_true")
    # One run in a child process.
    parser.add_argument("--run", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--policy", default="{}", help=argparse.SUPPRESS)
    parser.add_argument("--collect", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        return child(args)

    copycat = os.path.join(args.data, "copycat-canonical-pairs.jsonl")
    for needed in (args.corpus, copycat, args.peer_python):
        if not os.path.exists(needed):
            sys.exit(f"spark_peers.py: {needed} is missing (see the usage above)")
    tools = [
        ("neardup (cascade, default)", sys.executable, "neardup", "{}"),
        ("neardup (minhash 0.7)", sys.executable, "neardup", json.dumps({"method": "minhash", "threshold": 0.7})),
        ("text-dedup 0.4.0 MinHash (0.7)", args.peer_python, "text-dedup", "{}"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "corpus.jsonl")
        size, docs = 0, 0
        with open(args.corpus, encoding="utf-8") as src, open(corpus, "w", encoding="utf-8") as dst:
            for i, line in enumerate(src):
                if i >= args.docs:
                    break
                doc = json.loads(line)
                size += len(doc["text"].encode("utf-8"))
                dst.write(json.dumps({"id": doc["id"], "text": doc["text"]}) + "\n")
                docs += 1
        pairs = [json.loads(line) for line in open(copycat, encoding="utf-8")]
        pairs = [p for p in pairs if p["label"] in (3, 2, 0.5)]
        labelled = os.path.join(tmp, "copycat.jsonl")
        with open(labelled, "w", encoding="utf-8") as f:
            for i, p in enumerate(pairs):
                f.write(json.dumps({"id": f"a{i}", "text": p["text_a"]}) + "\n")
                f.write(json.dumps({"id": f"b{i}", "text": p["text_b"]}) + "\n")
        labels = [p["label"] for p in pairs]

        print(f"corpus: the first {docs} documents of {args.corpus} ({size / 1e6:.1f} MB of text); "
              f"master {args.master}, {args.partitions} shuffle partitions; CopyCat: {len(pairs)} pairs")
        results = []
        for name, python, tool, policy in tools:
            timed = launch(python, tool, corpus, args, tmp, False, policy)
            quality = launch(python, tool, labelled, args, tmp, True, policy)
            cluster = quality["cluster"]
            flags = [cluster.get(f"a{i}", f"a{i}") == cluster.get(f"b{i}", f"b{i}") for i in range(len(pairs))]
            results.append((name, timed, metrics(flags, labels, (3,)), metrics(flags, labels, (3, 2))))
            print(f"  {name}: {timed['seconds']:.1f} s", flush=True)

        peer = results[-1][1]["seconds"]
        print()
        print("| tool | seconds | docs/s | MB/s | removed | time vs text-dedup | shuffled bytes/doc | stages | CopyCat strict P / R / F1 | lenient P / R / F1 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for name, timed, strict, lenient in results:
            s = timed["seconds"]
            print(
                f"| {name} | {s:.1f} | {docs / s:,.0f} | {size / 1e6 / s:.2f} | {docs - timed['kept']:,} "
                f"| {peer / s:.2f}x faster | {timed['shuffle_bytes'] / docs:,.0f} | {timed['stages']} | {strict[0]:.3f} / {strict[1]:.3f} / {strict[2]:.3f} "
                f"| {lenient[0]:.3f} / {lenient[1]:.3f} / {lenient[2]:.3f} |"
            )


if __name__ == "__main__":
    main()
