#!/usr/bin/env python3
"""Peer benchmark: PyPI `simhash` (pure Python + numpy) over a JSONL file.

    bench_python_simhash.py INPUT.jsonl [--text-field text] [--limit N] [--values OUT]

Computes `Simhash(text).value` (defaults: 64 bits, md5, char 4-grams) for every
record and prints one JSON line on stdout:

    {"peer": "simhash 2.1.2", "documents": n, "bytes": total_utf8_bytes,
     "seconds": s, "mb_per_s": ..., "docs_per_s": ..., "read_seconds": ..., ...}

Only the hashing loop is timed (`seconds`); reading and parsing the file is
reported separately as `read_seconds`. MB = 10^6 bytes of UTF-8 text.
With --values OUT, writes one 16-digit lower-case hex value per document, in
input order, so that neardup's values can be compared line by line.
Run with the peers venv (tools/peers/setup-venv.sh).
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _jsonl import read_texts, report  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description="Throughput of PyPI simhash's Simhash(text).value")
    ap.add_argument("input", help="JSONL file, one object per line")
    ap.add_argument("--text-field", default="text", help="field holding the text (default: text)")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N documents")
    ap.add_argument("--values", metavar="OUT", help="write one hex value per line to OUT")
    args = ap.parse_args()

    from simhash import Simhash

    if not hasattr(Simhash, "_tokenize"):
        sys.exit("the imported `simhash` module is not PyPI simhash (simhash-pybind installed?)")

    texts, read_seconds = read_texts(args.input, args.text_field, args.limit)
    Simhash("warm up")  # import-time and first-call costs out of the timing

    gc_was_enabled = gc.isenabled()
    gc.disable()
    t0 = time.perf_counter()
    values = [Simhash(t).value for t in texts]
    seconds = time.perf_counter() - t0
    if gc_was_enabled:
        gc.enable()

    if args.values:
        with open(args.values, "w", encoding="ascii", newline="\n") as f:
            f.writelines(f"{v:016x}\n" for v in values)

    report(f"simhash {version('simhash')}", texts, seconds, read_seconds, numpy=version("numpy"))


if __name__ == "__main__":
    main()
