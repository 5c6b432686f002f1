#!/usr/bin/env python3
"""neardup.spark_units.dedup_units against `neardup dedup --granularity ... --units-only` (the
CLI) on the same dumps, in sequence with a seen file each (issue 21, item 5): wall times side
by side, and the same answer (every kept text, every report of `--removed-spans`, the seen file
after each dump, byte for byte), else the run fails.

    python3 tools/bench/spark_units.py [--corpus /tmp/scale/1g.jsonl] [--mb 200] [--dumps 2]
        [--granularity sentences:3] [--cli target/release/neardup] [--master local[2]]
        [--data /tmp/spark-units]

The Python running it needs `neardup` (release build: `MATURIN_PEP517_ARGS=--release pip
install ./crates/python`), pyspark and Java 17. The first `--mb` MB of the corpus (JSON Lines
of `id` and `text`) are cut into `--dumps` dumps of consecutive records under `--data`; each
dump in turn goes through the CLI (`/usr/bin/time`: wall, CPU, peak RSS; `--seen cli.seen`)
and through the Spark door in one Spark application (`--master`; timed from reading the file to
the new seen file written; `seen=spark.seen`), then the answers are compared.
"""

import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spark_peers  # noqa: E402  (the Spark session of the benchmarks)


def cut(corpus, mb, dumps, data):
    """The first `mb` MB of `corpus` as `dumps` files of consecutive records."""
    lines, size = [], 0
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            if size >= mb << 20:
                break
            lines.append(line)
            size += len(line.encode("utf-8"))
    paths = []
    for n in range(dumps):
        path = os.path.join(data, f"dump{n}.jsonl")
        with open(path, "w", encoding="utf-8") as f:
            f.writelines(lines[n * len(lines) // dumps : (n + 1) * len(lines) // dumps])
        paths.append(path)
    return paths, size


def line(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def run_cli(cli, path, granularity, data, n):
    """One CLI run: its kept texts by id, its reports, and wall, CPU seconds, peak RSS."""
    kept, spans, timing = (os.path.join(data, f"cli-{name}{n}") for name in ("kept.jsonl", "spans.jsonl", "time"))
    command = [cli, "dedup", path, "--granularity", granularity, "--units-only", "--kept", kept,
               "--removed-spans", spans, "--seen", os.path.join(data, "cli.seen")]
    subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", timing, *command], check=True, capture_output=True)
    wall, user, system, peak = open(timing).read().split()[-4:]
    with open(kept, encoding="utf-8") as f:
        texts = {r["id"]: r["text"] for r in map(json.loads, f)}
    with open(spans, encoding="utf-8") as f:
        reports = f.read()
    return texts, reports, (float(wall), float(user) + float(system), int(peak) / 1024)


def run_spark(spark, path, granularity, data):
    """One run of the Spark door: its kept texts by id, its reports, and the seconds."""
    import neardup.spark_units

    started = time.perf_counter()
    df = spark.read.schema("id string, text string").json(path)
    result = neardup.spark_units.dedup_units(df, granularity=granularity, units_only=True,
                                             seen=os.path.join(data, "spark.seen"))
    seconds = time.perf_counter() - started
    rows = sorted(result.collect(), key=lambda r: r["row_id"])
    result.unpersist()
    texts = {r["id"]: r["text"] for r in rows if r["text"] is not None}
    reports = "".join(
        line({"id": r["id"], **{c: r[c] for c in neardup.spark_units.UNIT_COLUMNS}}) + "\n"
        for r in rows if r["units_removed"] or r["dropped"]
    )
    return texts, reports, seconds


def main():
    from neardup._neardup import UnitKeys

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", default="/tmp/scale/1g.jsonl")
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--dumps", type=int, default=2)
    parser.add_argument("--granularity", default="sentences:3")
    parser.add_argument("--cli", default="target/release/neardup")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--data", default="/tmp/spark-units")
    args = parser.parse_args()
    os.makedirs(args.data, exist_ok=True)
    for seen in ("cli.seen", "spark.seen"):
        if os.path.exists(os.path.join(args.data, seen)):
            os.remove(os.path.join(args.data, seen))
    paths, size = cut(args.corpus, args.mb, args.dumps, args.data)
    print(f"{size / 1e6:.1f} MB of {args.corpus} in {args.dumps} dumps, --granularity {args.granularity} "
          f"--units-only, load {open('/proc/loadavg').read().split()[:3]}")
    started = time.perf_counter()
    spark = spark_peers.spark_session(args.master, None, None, {"spark.driver.memory": "4g"})
    print(f"Spark ({args.master}) started in {time.perf_counter() - started:.1f} s")
    print("| dump | MB | CLI wall s | CLI CPU s | CLI peak MiB | Spark wall s | units removed | seen keys | same |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for n, path in enumerate(paths):
        cli_texts, cli_reports, (wall, cpu, peak) = run_cli(args.cli, path, args.granularity, args.data, n)
        texts, reports, seconds = run_spark(spark, path, args.granularity, args.data)
        cli_seen = open(os.path.join(args.data, "cli.seen"), "rb").read()
        same_seen = cli_seen == open(os.path.join(args.data, "spark.seen"), "rb").read()
        same = texts == cli_texts and reports == cli_reports and same_seen
        removed = sum(json.loads(r)["units_removed"] for r in cli_reports.splitlines())
        keys = UnitKeys(granularity=args.granularity).seen_count(os.path.join(args.data, "cli.seen"))
        mb = os.path.getsize(path) / 1e6
        print(f"| {n + 1} | {mb:.1f} | {wall:.2f} | {cpu:.2f} | {peak:.0f} | {seconds:.2f} | {removed:,} | "
              f"{keys:,} | {'yes' if same else 'NO'} |")
        if not same:
            raise SystemExit(f"dump {n + 1}: the Spark door's answer is not the CLI's "
                             f"(texts {texts == cli_texts}, reports {reports == cli_reports}, seen {same_seen})")
    spark.stop()


if __name__ == "__main__":
    main()
