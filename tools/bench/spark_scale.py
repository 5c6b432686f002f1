#!/usr/bin/env python3
"""neardup.spark.dedup against `neardup dedup` (the CLI) on the same data and machine, one run:
wall times side by side, the same answer document by document, and the Spark job's stages from
its event log (BENCHMARKS.md, "On Spark"). Issue 23 and issue 17 item 5.

    python3 tools/bench/spark_scale.py [--corpus /tmp/spark-data/text-1gb.jsonl]
        [--docs 10000,100000,all] [--giant 200000] [--master local[2]]
        [--cli target/release/neardup] [--data /tmp/spark-data] [--stages]

The Python running it needs `neardup` (release build: `MATURIN_PEP517_ARGS=--release pip
install ./crates/python`), pyspark and Java 17. For each size: the first N documents of the
corpus (`all`: every one) are written as JSON Lines under `--data`; `neardup dedup` runs on the
file (`--removed`, `--clusters`), then a fresh Spark application (a subprocess, `--master`,
adaptive execution on, shuffle partitions left to the job) runs the job on the file
(`neardup.spark.dedup_jsonl`: the CLI's reader in the executors; with a package from before
it, `dedup` over Spark's JSON reader with the schema given: `id string, text string`) and
writes the `duplicate_of` and `cluster` of every record in a cluster of two or more (what the CLI
writes with `--removed` and `--clusters`: `dedup_jsonl(rows="clustered")`, every other record
kept alone) or, with `--write all` or a package from before issue 23's step 14, of every record.
Timed: the CLI's whole run; the job from
reading the file to its answers written (the JVM's start apart, printed too). Every document's
`duplicate_of` and cluster must be the CLI's, else the run fails. (Before issue 23's step 6 the
timed part ended with the result counted, before its answers were written.)

`--giant N`: a corpus of N near copies of one template (a page of the corpus of 2 KB or more,
1 to 4 of its words replaced in each copy) behind 10,000 documents of the corpus, run the same
way with the executors' memory bounded (`spark.driver.memory` 2g: the local executor is the
driver's JVM; `spark.executor.pyspark.memory` 1g: each Python worker's address space); the
peak resident memory of the largest Python worker is sampled from /proc.
"""

import argparse
import inspect
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_peers  # noqa: E402  (one Spark session, corpus slicing and event-log reading for both)


def spark_session(master, events, bounded):
    """The application: shuffle partitions left to the job, its event log kept."""
    settings = {"spark.driver.memory": "2g" if bounded else "4g"}
    if bounded:
        settings["spark.executor.pyspark.memory"] = "1g"
    return spark_peers.spark_session(master, None, events, settings)


def child(args):
    """One timed run of the job in this process; writes the answers and the timings."""
    import logging

    import neardup.spark
    from pyspark.sql import functions as F

    logging.basicConfig(format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("neardup.spark").setLevel(logging.INFO)  # the job's steps, with --verbose
    events = tempfile.mkdtemp(prefix="spark-events-", dir=args.data)
    started = time.perf_counter()
    spark = spark_session(args.master, events, args.bounded)
    ready, began = time.perf_counter(), time.time()
    clustered = False
    if hasattr(neardup.spark, "dedup_jsonl"):  # the job's own entry: the CLI's reader in the executors
        clustered = args.write == "clustered" and "rows" in inspect.signature(neardup.spark.dedup_jsonl).parameters
        extra = {"rows": "clustered"} if clustered else {}
        result = neardup.spark.dedup_jsonl(spark, args.input, **extra)
    else:  # a package from before it: Spark's JSON reader
        df = spark.read.schema("id string, text string").json(args.input)
        result = neardup.spark.dedup(df, text_col="text", id_col="id")
    answers = os.path.join(args.data, "answers.parquet")
    result.select("id", "duplicate_of", "cluster").write.mode("overwrite").parquet(answers)
    seconds, ended = time.perf_counter() - ready, time.time()
    removed = result.where(F.col("is_duplicate")).count()
    result.unpersist()
    spark.stop()
    out = {"seconds": seconds, "jvm_start": ready - started, "removed": removed, "answers": answers,
           "began": began, "ended": ended, "clustered": clustered}
    out["stages"] = spark_peers.stages(events)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f)


class PeakWorker(threading.Thread):
    """Samples the resident memory of the Python workers under a process (pyspark's daemon
    and its forks) every 0.2 s; `peak` is the largest seen."""

    def __init__(self, root):
        super().__init__(daemon=True)
        self.root, self.peak, self.done = root, 0, False

    def run(self):
        while not self.done:
            for pid, cmdline, rss in _processes():
                if "pyspark" in cmdline and ("daemon" in cmdline or "worker" in cmdline):
                    self.peak = max(self.peak, rss)
            time.sleep(0.2)


def _processes():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace")
            with open(f"/proc/{pid}/statm") as f:
                rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except OSError:
            continue
        yield pid, cmdline, rss


def run_job(args, path, bounded):
    out = os.path.join(args.data, "job.json")
    command = [sys.executable, os.path.abspath(__file__), "--run", "--input", path, "--out", out,
               "--master", args.master, "--data", args.data, "--write", args.write]
    if bounded:
        command.append("--bounded")
    sampler = PeakWorker(os.getpid())
    sampler.start()
    subprocess.run(command, check=True, stderr=None if args.verbose else subprocess.DEVNULL)
    sampler.done = True
    with open(out, encoding="utf-8") as f:
        job = json.load(f)
    job["worker_peak"] = sampler.peak
    return job


def run_cli(args, path):
    removed_file, clusters_file = path + ".removed", path + ".clusters"
    start = time.perf_counter()
    subprocess.run([args.cli, "dedup", path, "--removed", removed_file, "--clusters", clusters_file],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    duplicate_of = {}
    with open(removed_file, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            duplicate_of[r["id"]] = r["duplicate_of"]
    cluster = {}
    with open(clusters_file, encoding="utf-8") as f:
        for line in f:
            c = json.loads(line)
            for m in c["members"]:
                cluster[m] = c["representative"]
    return seconds, duplicate_of, cluster


def compare(answers, duplicate_of, cluster, docs, clustered):
    """The documents answered and those whose answer differs from the CLI's. With `clustered`
    the answers list the records in clusters of two or more, each once, and every other
    document is kept alone: a document of a CLI cluster missing from them differs."""
    import pyarrow.parquet as pq

    table = pq.read_table(answers).to_pydict()
    differ = 0
    for doc, of, c in zip(table["id"], table["duplicate_of"], table["cluster"]):
        if of != duplicate_of.get(doc) or c != cluster.get(doc, doc):
            differ += 1
    if not clustered:
        return len(table["id"]), differ
    listed = set(table["id"])
    differ += len(table["id"]) - len(listed) + len(set(cluster) - listed)
    return docs, differ


def write_giant(corpus, path, copies):
    """10,000 documents of the corpus, then `copies` near copies of one of its pages of 2 KB or
    more (1 to 4 words replaced by words of the page)."""
    rng = random.Random(23)
    n, size = spark_peers.write_first(corpus, path, 10_000)
    with open(corpus, encoding="utf-8") as src:
        template = next(d["text"] for d in map(json.loads, src) if len(d["text"]) >= 2048)
    words = template.split(" ")
    with open(path, "a", encoding="utf-8") as dst:
        for i in range(copies):
            edited = list(words)
            for _ in range(rng.randint(1, 4)):
                edited[rng.randrange(len(edited))] = rng.choice(words)
            text = " ".join(edited)
            size += len(text.encode("utf-8"))
            dst.write(json.dumps({"id": f"giant-{i}", "text": text}) + "\n")
    return n + copies, size


def report(name, docs, size, cli_seconds, job, rows, differ):
    seconds = job["seconds"]
    shuffled = sum(s["written"] for s in job["stages"])
    name += " (clustered written)" if job.get("clustered") else ""
    print(f"| {name} | {docs:,} | {size / 1e6:,.0f} | {cli_seconds:.1f} | {seconds:.1f} | {seconds / cli_seconds:.1f}x "
          f"| {job['jvm_start']:.1f} | {len(job['stages'])} | {sum(s['tasks'] for s in job['stages']):,} "
          f"| {sum(s['ms'] for s in job['stages']) / 1e3:,.0f} | {shuffled / docs:,.0f} ({shuffled / size:.2f}x text) "
          f"| {job['worker_peak'] / 2**20:,.0f} | {'same' if differ == 0 and rows == docs else f'{differ} DIFFER'} |",
          flush=True)


def print_stages(job):
    """The job's stages: tasks, task-seconds, shuffle bytes, and on the wall clock when each ran
    (seconds after the timed part began) and for how long; then how much of the timed part no
    stage was running (the driver alone: planning, collecting, the union-find, Python)."""
    began, ended = job["began"] * 1e3, job["ended"] * 1e3
    print()
    print("| stage | what | tasks | task-seconds | starts at s | wall s | shuffle written MB | shuffle read MB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for s in job["stages"]:
        print(f"| {s['stage']} | {s.get('name', '?')}: {s.get('ops', '')} | {s['tasks']} | {s['ms'] / 1e3:.1f} "
              f"| {(s['submitted'] - began) / 1e3:.1f} | {(s['completed'] - s['submitted']) / 1e3:.1f} "
              f"| {s['written'] / 1e6:.1f} | {s['read'] / 1e6:.1f} |")
    spans = sorted((max(s["submitted"], began), min(s["completed"], ended)) for s in job["stages"])
    covered, reach = 0.0, began
    for start, end in spans:
        if end > reach:
            covered += end - max(start, reach)
            reach = end
    wall = ended - began
    print(f"\ntimed {wall / 1e3:.1f} s: some stage running {covered / 1e3:.1f} s, "
          f"no stage running (the driver alone) {(wall - covered) / 1e3:.1f} s\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default="/tmp/spark-data/text-1gb.jsonl")
    parser.add_argument("--docs", default="10000,100000,all")
    parser.add_argument("--giant", type=int, default=0)
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--cli", default="target/release/neardup")
    parser.add_argument("--data", default="/tmp/spark-data")
    parser.add_argument("--stages", action="store_true", help="print each run's stages")
    parser.add_argument("--write", choices=["clustered", "all"], default="clustered",
                        help="the answers written: of the records in clusters (when the package has it), or of all")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--bounded", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--input", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        return child(args)

    runs = []
    for docs in filter(None, args.docs.split(",")):
        count = None if docs == "all" else int(docs)
        path = os.path.join(args.data, f"first-{docs}.jsonl")
        runs.append((f"first {docs}", path, lambda p=path, c=count: spark_peers.write_first(args.corpus, p, c), False))
    if args.giant:
        path = os.path.join(args.data, f"giant-{args.giant}.jsonl")
        runs.append((f"giant family of {args.giant:,}", path,
                     lambda p=path: write_giant(args.corpus, p, args.giant), True))
    print(f"master {args.master}; CLI {args.cli}; corpus {args.corpus}")
    print("| corpus | documents | MB | `neardup dedup` s | Spark job s | job / CLI | JVM start s | stages | tasks "
          "| task-seconds | shuffle bytes/doc | largest Python worker MB | answer vs CLI |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    failed = False
    for name, path, make, bounded in runs:
        docs, size = make()
        cli_seconds, duplicate_of, cluster = run_cli(args, path)
        job = run_job(args, path, bounded)
        rows, differ = compare(job["answers"], duplicate_of, cluster, docs, job.get("clustered", False))
        report(name, docs, size, cli_seconds, job, rows, differ)
        failed |= differ > 0 or rows != docs
        if args.stages:
            print_stages(job)
    if failed:
        sys.exit("spark_scale.py: the job's answer differs from the CLI's")


if __name__ == "__main__":
    main()
