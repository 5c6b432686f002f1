#!/usr/bin/env python3
"""Main-content extraction: neardup beside trafilatura and rs-trafilatura, in one run.

usage: tools/bench/extract_eval.py [DATA] [--neardup BIN] [--rustdoc-step N] [--no-peers]

DATA is trafilatura's evaluation set as JSON lines (url, html, with, without), zstd-compressed or
not; default ../shared/data/extraction-trafilatura-eval.jsonl.zst from the repository root. The
data is not part of the repository: without it the script says so and exits 2.

Quality is scored as trafilatura scores itself: a `with` snippet found in the extracted text is a
true positive, missing a false negative; a `without` snippet found is a false positive, absent a
true negative. Precision, recall, accuracy and F1 = 2PR/(P+R) over all snippets of all pages, then
over the even- and odd-numbered pages apart (neardup's heuristics were tuned looking at the even
pages: the odd ones are its held-out check).

Speed is MB of HTML per CPU-second on one core (CPU time, not wall time, so that other work on a
shared machine does not count):
  neardup          `neardup extract --html main DATA` pinned to one CPU (taskset -c 0), end to
                   end: zstd decompression, JSON parsing, extraction and JSON output
  neardup rustdoc  the same on every N-th page (default 50) of the Rust documentation installed
                   with the toolchain, --html main and --html all, given as HTML files and as
                   one JSONL file of the same pages (no file system call per page)
  peers            the time spent in their extract call, one page after another (one thread)
Peers: trafilatura (Python; extract(html, url=url, include_comments=False)) and rs-trafilatura
(Rust, its Python wheel; extract(html, url=url).main_content), from a venv such as
    python3 -m venv /work/venv-extract && /work/venv-extract/bin/pip install trafilatura \\
        lxml_html_clean rs-trafilatura
Run the script with that venv's python; without the peers their rows say so.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load(path):
    if path.endswith(".zst"):
        raw = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    else:
        with open(path, "rb") as f:
            raw = f.read()
    return [json.loads(line) for line in raw.decode("utf-8").split("\n") if line.strip()]


def score(pages, texts, parity=None):
    tp = fn = fp = tn = 0
    for i, (page, text) in enumerate(zip(pages, texts)):
        if parity is not None and i % 2 != parity:
            continue
        text = text or ""
        for s in page["with"]:
            if s in text:
                tp += 1
            else:
                fn += 1
        for s in page["without"]:
            if s in text:
                fp += 1
            else:
                tn += 1
    p = tp / max(tp + fp, 1)
    r = tp / max(tp + fn, 1)
    acc = (tp + tn) / max(tp + tn + fp + fn, 1)
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, acc, f1


def cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_core(cmd):
    """Runs cmd pinned to one CPU; returns (stdout, CPU seconds it used)."""
    if shutil.which("taskset"):
        cmd = ["taskset", "-c", "0"] + cmd
    start = cpu_seconds()
    out = subprocess.run(cmd, check=True, capture_output=True).stdout
    return out, cpu_seconds() - start


def neardup_texts(binary, data):
    best = None
    for _ in range(3):
        out, seconds = one_core([binary, "extract", "--html", "main", data])
        best = seconds if best is None else min(best, seconds)
    return [json.loads(line)["text"] for line in out.decode("utf-8").split("\n") if line], best


def peers():
    found = []
    try:
        import trafilatura

        found.append(("trafilatura " + trafilatura.__version__,
                      lambda html, url: trafilatura.extract(html, url=url, include_comments=False)))
    except ImportError:
        print("trafilatura is not installed here: no trafilatura row", file=sys.stderr)
    try:
        import rs_trafilatura

        found.append(("rs-trafilatura " + rs_trafilatura.__version__,
                      lambda html, url: rs_trafilatura.extract(html, url=url).main_content))
    except ImportError:
        print("rs_trafilatura is not installed here: no rs-trafilatura row", file=sys.stderr)
    return found


def rustdoc_speed(binary, step):
    docs = os.path.join(subprocess.check_output(["rustc", "--print", "sysroot"], text=True).strip(),
                        "share/doc/rust/html")
    if not os.path.isdir(docs):
        return None
    paths = []
    for root, dirs, files in os.walk(docs):
        dirs.sort()
        paths.extend(os.path.join(root, f) for f in sorted(files) if f.endswith(".html"))
    sample = paths[::step]
    size = sum(os.path.getsize(p) for p in sample)
    # The same pages as one JSONL file: the extraction without a file system call per page.
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", encoding="utf-8") as jsonl:
        for p in sample:
            with open(p, encoding="utf-8", errors="replace") as f:
                jsonl.write(json.dumps({"id": p, "html": f.read()}) + "\n")
        jsonl.flush()
        speeds = {}
        for name, inputs in (("files", sample), ("jsonl", [jsonl.name])):
            for mode in ("main", "all"):
                cmd = [binary, "extract", "--html", mode] + inputs
                best = min(one_core(cmd)[1] for _ in range(3))
                speeds[name, mode] = size / best / 1e6
    return len(sample), size, speeds


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", nargs="?",
                    default=os.path.join(ROOT, "..", "shared", "data",
                                         "extraction-trafilatura-eval.jsonl.zst"))
    ap.add_argument("--neardup", default=os.path.join(ROOT, "target", "release", "neardup"))
    ap.add_argument("--rustdoc-step", type=int, default=50)
    ap.add_argument("--no-peers", action="store_true")
    args = ap.parse_args()
    if not os.path.exists(args.data):
        print(f"no evaluation data at {args.data}: nothing to measure (the data is not part of "
              "the repository; see ../shared/data/README.md)", file=sys.stderr)
        sys.exit(2)
    if not os.access(args.neardup, os.X_OK):
        print(f"no neardup binary at {args.neardup}: cargo build --release -p neardup",
              file=sys.stderr)
        sys.exit(2)
    pages = load(args.data)
    mb = sum(len(p["html"].encode("utf-8")) for p in pages) / 1e6
    rows = []
    texts, seconds = neardup_texts(args.neardup, args.data)
    rows.append(("neardup --html main", texts, mb / seconds))
    for name, extract in ([] if args.no_peers else peers()):
        out, spent = [], 0.0
        for page in pages:
            start = time.process_time()
            try:
                text = extract(page["html"], page["url"])
            except Exception:  # a peer failing on a page extracts nothing from it
                text = None
            spent += time.process_time() - start
            out.append(text)
        rows.append((name, out, mb / spent))

    print(f"{len(pages)} pages, {mb:.1f} MB of HTML ({args.data})")
    print(f"{'tool':<24} {'P':>6} {'R':>6} {'acc':>6} {'F1':>6} {'MB/s':>8}"
          f"   {'F1 even':>7} {'F1 odd':>7}")
    for name, texts, speed in rows:
        p, r, acc, f1 = score(pages, texts)
        even, odd = score(pages, texts, 0)[3], score(pages, texts, 1)[3]
        print(f"{name:<24} {p:6.3f} {r:6.3f} {acc:6.3f} {f1:6.3f} {speed:8.1f}"
              f"   {even:7.3f} {odd:7.3f}")
    rustdoc = rustdoc_speed(args.neardup, args.rustdoc_step)
    if rustdoc is None:
        print("no Rust documentation installed with the toolchain: no rustdoc speed")
    else:
        count, size, speeds = rustdoc
        print(f"rust docs, every {args.rustdoc_step}th page ({count} pages, {size / 1e6:.1f} MB), "
              "neardup extract on one core:")
        for name in ("files", "jsonl"):
            print(f"  as {name:<5}  --html main {speeds[name, 'main']:6.0f} MB/s   "
                  f"--html all {speeds[name, 'all']:6.0f} MB/s")


if __name__ == "__main__":
    main()
