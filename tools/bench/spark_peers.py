#!/usr/bin/env python3
"""neardup.spark.dedup against text-dedup's Spark MinHash, on the same local Spark and data, one
run: time, and quality on the CopyCat pairs (BENCHMARKS.md, "On Spark").

    python3 tools/bench/spark_peers.py [--corpus /tmp/spark-data/text-1gb.jsonl] [--docs 10000,100000]
        [--data ../shared/data] [--peer-venv /tmp/neardup-peers/textdedup] [--neardup ./crates/python]
        [--graphframes-jar JAR] [--master local-cluster[2,1,2048]] [--partitions 8]
        [--driver-memory 4g] [--no-copycat]

Every run is a fresh Spark application (a subprocess) on the same master with the same shuffle
partitions, reading the same JSON Lines file, timed from reading the file to the deduplicated
rows counted:

- neardup, default policy (cascade: SimHash k = 6, then Jaccard >= 0.9 of character 5-shingles)
  and a MinHash policy (LSH at 0.7, no verification, as text-dedup's threshold): the Python
  interpreter running this script must have `neardup` installed (release build:
  `pip install ./crates/python`) and pyspark;
- text-dedup 0.4.0, in a venv of its own (`--peer-venv`), which this script makes on first
  use: `pip install text-dedup==0.4.0 graphframes-py typing_extensions pyspark==<this
  pyspark> <--neardup>`. Its `text_dedup.minhash_spark` pipeline as its `__main__` runs it
  (its own functions: `ngrams_length_check`, `generate_hash_values`, `optimal_param`,
  `generate_edges`; word 5-grams, 250 permutations, threshold 0.7). Its connected components
  are GraphFrames' `connectedComponents` when `--graphframes-jar` names a GraphFrames JAR for
  this Spark (Scala 2.13: `graphframes-spark4_2.13`, on Maven Central only; PyPI's
  `graphframes-py` is the Python half, and the JARs some PyPI packages bundle are for Scala
  2.11/2.12, which Spark 4 cannot load: `NoClassDefFoundError: scala/Serializable`). Without
  one they are computed by the same alternating large-star/small-star rounds GraphFrames
  implements (`neardup.spark._components`: why the peer venv gets `neardup` too). Its
  `repartition(4096)` calls and 8,192 shuffle partitions are replaced by `--partitions`.

It runs from a fresh venv (`python3 -m venv v && v/bin/pip install pyspark 'pyarrow<21'
./crates/python`, then `v/bin/python tools/bench/spark_peers.py`): what it needs beyond that
(the peer's venv) it installs from PyPI, and it exits non-zero with one line when something
cannot be had (Java, a package, a run that fails).

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


def run_text_dedup(spark, path, partitions, graphframes):
    """text_dedup.minhash_spark's __main__ (0.4.0); its components by GraphFrames when
    `graphframes` (its JAR is on the classpath), else by `neardup.spark._components`."""
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
        if graphframes:
            from graphframes import GraphFrame

            spark.sparkContext.setCheckpointDir(tempfile.mkdtemp(prefix="graphframes-"))
            edges_df = edges_df.select(F.col("a").alias("src"), F.col("b").alias("dst"))
            vertices = edges_df.select(F.col("src").alias("id")).union(edges_df.select("dst")).distinct()
            found = GraphFrame(vertices, edges_df).connectedComponents()
            assignment = found.select(F.col("id").alias("node"), F.col("component").alias("root"))
        else:
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
    settings = {"spark.driver.memory": args.driver_memory}
    if args.graphframes_jar:
        settings["spark.jars"] = args.graphframes_jar
    spark = spark_session(args.master, args.partitions, events, settings)
    start = time.perf_counter()
    if args.run == "text-dedup":
        clusters, held = run_text_dedup(spark, args.input, args.partitions, bool(args.graphframes_jar))
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
    run time), shuffle bytes written and read, and when it was submitted and completed (Unix
    milliseconds), from the event log."""
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
                    row["submitted"] = info.get("Submission Time", 0)
                    row["completed"] = info.get("Completion Time", 0)
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
        "--driver-memory", args.driver_memory,
    ]
    if args.graphframes_jar:
        command += ["--graphframes-jar", args.graphframes_jar]
    if collect:
        command.append("--collect")
    done = subprocess.run(command, stderr=subprocess.DEVNULL if not args.verbose else None)
    if done.returncode:
        sys.exit(f"spark_peers.py: the {tool} run on {path} failed (exit {done.returncode}; --verbose shows its log)")
    with open(out, encoding="utf-8") as f:
        return json.load(f)


def peer_python(venv, neardup_source):
    """The peer's interpreter: `venv`, made and filled on first use (text-dedup 0.4.0, the
    Python half of GraphFrames that its module imports, this pyspark, and neardup for the
    components); a venv whose install did not finish is made again. Exits with one line when
    something cannot be had."""
    import pyspark

    python = os.path.join(venv, "bin", "python")
    ready = os.path.join(venv, "spark-peers-ready")
    if os.path.exists(ready):
        return python
    packages = ["text-dedup==0.4.0", "graphframes-py", "typing_extensions", f"pyspark=={pyspark.__version__}"]
    for step in ([sys.executable, "-m", "venv", "--clear", venv],
                 [python, "-m", "pip", "install", "-q", *packages, neardup_source]):
        done = subprocess.run(step, capture_output=True, text=True)
        if done.returncode:
            said = (done.stderr.strip().splitlines() or ["no message"])[-1]
            sys.exit(f"spark_peers.py: cannot make the peer's venv {venv}: {' '.join(step[:4])} ...: {said}")
    open(ready, "w").close()
    return python


def check_this_python():
    """Exits with one line unless this interpreter can run the neardup side: Java for Spark,
    and pyspark, pyarrow and neardup installed."""
    import shutil

    if shutil.which("java") is None:
        sys.exit("spark_peers.py: Spark needs Java 17 (apt-get install -y openjdk-17-jre-headless)")
    for module in ("pyspark", "pyarrow", "neardup"):
        try:
            __import__(module)
        except ImportError as error:
            sys.exit(f"spark_peers.py: {sys.executable} cannot import {module} ({error}): "
                     "pip install pyspark 'pyarrow<21' ./crates/python")


def write_first(corpus, path, docs):
    """The first `docs` documents of `corpus` (`id`, `text`) into `path`; (documents, bytes).
    Written beside `path` and renamed onto it: a symbolic link at `path` is replaced, never
    written through (the file it points to, e.g. the corpus itself, is left as it is)."""
    size, n = 0, 0
    partial = f"{path}.partial"
    with open(corpus, encoding="utf-8") as src, open(partial, "w", encoding="utf-8") as dst:
        for line in src:
            if docs is not None and n >= docs:
                break
            doc = json.loads(line)
            size += len(doc["text"].encode("utf-8"))
            dst.write(json.dumps({"id": doc["id"], "text": doc["text"]}) + "\n")
            n += 1
    os.replace(partial, path)
    return n, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/tmp/spark-data/text-1gb.jsonl")
    parser.add_argument("--docs", default="10000,100000", help="sizes, comma-separated (all: the whole corpus)")
    parser.add_argument("--data", default="../shared/data")
    parser.add_argument("--peer-venv", default="/tmp/neardup-peers/textdedup")
    parser.add_argument("--neardup", default="./crates/python", help="what pip installs neardup from")
    parser.add_argument("--graphframes-jar", help="a GraphFrames JAR for this Spark (Scala 2.13)")
    parser.add_argument("--master", default="local-cluster[2,1,2048]")
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--driver-memory", default="4g", help="spark.driver.memory of every run (local: the executor)")
    parser.add_argument("--no-copycat", action="store_true", help="time only, no CopyCat runs")
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

    check_this_python()
    copycat = os.path.join(args.data, "copycat-canonical-pairs.jsonl")
    for needed in (args.corpus, copycat):
        if not os.path.exists(needed):
            sys.exit(f"spark_peers.py: {needed} is missing (see the usage above)")
    tools = [  # the peer first: the longer run
        ("text-dedup 0.4.0 MinHash (0.7)", peer_python(args.peer_venv, args.neardup), "text-dedup", "{}"),
        ("neardup (cascade, default)", sys.executable, "neardup", "{}"),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        pairs = [json.loads(line) for line in open(copycat, encoding="utf-8")]
        pairs = [p for p in pairs if p["label"] in (3, 2, 0.5)]
        labelled = os.path.join(tmp, "copycat.jsonl")
        with open(labelled, "w", encoding="utf-8") as f:
            for i, p in enumerate(pairs):
                f.write(json.dumps({"id": f"a{i}", "text": p["text_a"]}) + "\n")
                f.write(json.dumps({"id": f"b{i}", "text": p["text_b"]}) + "\n")
        labels = [p["label"] for p in pairs]
        print(f"master {args.master}, {args.partitions} shuffle partitions, driver memory {args.driver_memory}; "
              f"CopyCat: {len(pairs)} pairs")
        print()
        print("| tool | CopyCat strict P / R / F1 | lenient P / R / F1 |")
        print("|---|---|---|")
        for name, python, tool, policy in [] if args.no_copycat else tools:
            cluster = launch(python, tool, labelled, args, tmp, True, policy)["cluster"]
            flags = [cluster.get(f"a{i}", f"a{i}") == cluster.get(f"b{i}", f"b{i}") for i in range(len(pairs))]
            strict, lenient = metrics(flags, labels, (3,)), metrics(flags, labels, (3, 2))
            print(f"| {name} | {' / '.join(f'{x:.3f}' for x in strict)} | {' / '.join(f'{x:.3f}' for x in lenient)} |",
                  flush=True)

        print()
        print("| documents | MB | tool | seconds | docs/s | removed | time vs text-dedup | shuffled bytes/doc | stages |")
        print("|---:|---:|---|---:|---:|---:|---|---:|---:|")
        for size_name in filter(None, args.docs.split(",")):
            corpus = os.path.join(tmp, f"first-{size_name}.jsonl")
            docs, size = write_first(args.corpus, corpus, None if size_name == "all" else int(size_name))
            timed = [(name, launch(python, tool, corpus, args, tmp, False, policy)) for name, python, tool, policy in tools]
            peer = timed[0][1]["seconds"]
            for name, t in timed:
                s = t["seconds"]
                print(f"| {docs:,} | {size / 1e6:,.0f} | {name} | {s:.1f} | {docs / s:,.0f} | {docs - t['kept']:,} "
                      f"| {peer / s:.2f}x faster | {t['shuffle_bytes'] / docs:,.0f} | {t['stages']} |", flush=True)
            os.remove(corpus)


if __name__ == "__main__":
    main()
