#!/usr/bin/env python3
"""Helpers of tools/bench/scale.sh: the rows of its table and the normal forms of the outputs it
compares.

usage: scale_report.py header
       scale_report.py row TARGET BINARY INPUT RUN EXIT_STATUS SUMMARY|- [SAME]
           (RUN.time: the run's `/usr/bin/time -v` report, RUN.log: its standard error)
       scale_report.py ids < REMOVED.jsonl     (the ids of removed documents, one a line)
       scale_report.py pairs < PAIRS.jsonl     ("a<TAB>b<TAB>distance", a <= b, one a line)

A row: documents and MB from the run's --summary when there is one (`documents`, `input_bytes`:
bytes as read, decompressed), else lines and size of the input; seconds (wall), user + system
CPU and peak RSS from `/usr/bin/time -v`; MB/s over the wall time (of a run that succeeded);
the summary's own `peak_rss_bytes` and `spilled_bytes` when it has them ("-" when not).
"""
import json
import os
import subprocess
import sys

COLUMNS = [("target", "<24"), ("documents", ">11"), ("MB", ">7"), ("binary", "<6"),
           ("seconds", ">8"), ("MB/s", ">6"), ("CPU s", ">8"), ("peak RSS", ">9"),
           ("RSS (sum.)", ">10"), ("spilled", ">8"), ("exit", ">5"), ("same as old", "<22")]


def line(values):
    return " ".join(f"{v:{fmt}}" for v, (_, fmt) in zip(values, COLUMNS)).rstrip()


def gigabytes(n):
    return "-" if n is None else f"{n / 1e9:.2f} GB"


def time_figures(path):
    """Wall seconds, CPU seconds and peak RSS bytes from a `/usr/bin/time -v` report."""
    fields = {}
    with open(path, encoding="utf-8") as f:
        for text in f:
            key, _, value = text.strip().rpartition(": ")
            fields[key] = value
    wall = 0.0
    for part in fields["Elapsed (wall clock) time (h:mm:ss or m:ss)"].split(":"):
        wall = wall * 60 + float(part)
    cpu = float(fields["User time (seconds)"]) + float(fields["System time (seconds)"])
    return wall, cpu, int(fields["Maximum resident set size (kbytes)"]) * 1024


def input_figures(path):
    """Lines and bytes of an input file, decompressed if it is .zst (the documents of `pairs`,
    or of a failed run)."""
    lines = size = 0
    reader = subprocess.Popen(["zstd", "-dcq", path], stdout=subprocess.PIPE) \
        if path.endswith(".zst") else None
    with reader.stdout if reader else open(path, "rb") as f:
        while block := f.read(1 << 24):
            lines += block.count(b"\n")
            size += len(block)
    if reader and reader.wait() != 0:
        sys.exit(f"scale_report.py: cannot decompress {path}")
    return lines, size


def failure(log_path):
    """The line of a failed run's standard error that says why: the first error, panic or
    allocation failure, else the last line."""
    with open(log_path, encoding="utf-8", errors="replace") as f:
        lines = [text.strip() for text in f if text.strip()]
    telling = [t for t in lines if any(w in t for w in ("error", "panicked", "memory allocation"))]
    return (telling or lines or ["(no output)"])[0 if telling else -1]


def row(target, binary, input_path, run, status, summary_path, same="-"):
    """Prints the row of one run (its files: RUN.time, RUN.log), and for a failed run the line
    of its log that says why."""
    wall, cpu, rss = time_figures(f"{run}.time")
    wall = max(wall, 0.01)  # the report's resolution
    summary = {}
    if summary_path != "-" and os.path.exists(summary_path):
        with open(summary_path, encoding="utf-8") as f:
            summary = json.load(f)
    if "documents" in summary:
        documents, size = summary["documents"], summary["input_bytes"]
    else:
        documents, size = input_figures(input_path)
    rate = f"{size / 1e6 / wall:.1f}" if status == "0" else "-"
    print(line([target, f"{documents:,}", f"{size / 1e6:.0f}", binary, f"{wall:.1f}", rate,
                f"{cpu:.1f}", gigabytes(rss), gigabytes(summary.get("peak_rss_bytes")),
                gigabytes(summary.get("spilled_bytes")), status, same]), flush=True)
    if status != "0":
        print(f"    {binary} failed: {failure(f'{run}.log')[:150]}", flush=True)


def ids():
    for text in sys.stdin:
        print(json.loads(text)["id"])


def pairs():
    for text in sys.stdin:
        pair = json.loads(text)
        a, b = sorted((str(pair["a"]), str(pair["b"])))
        print(f"{a}\t{b}\t{pair['distance']}")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "header":
        print(line([name for name, _ in COLUMNS]))
    elif command == "row":
        row(*args)
    elif command == "ids":
        ids()
    elif command == "pairs":
        pairs()
    else:
        sys.exit(f"scale_report.py: unknown command {command!r}")


if __name__ == "__main__":
    main()
