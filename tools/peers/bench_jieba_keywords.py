#!/usr/bin/env python3
"""Peer benchmark: jieba TF-IDF keyword extraction over a JSONL file.

    bench_jieba_keywords.py INPUT.jsonl [--text-field text] [--limit N] [--values OUT]

Runs `jieba.analyse.extract_tags(text, topK=20, withWeight=True)` for every
record and prints one JSON line on stdout:

    {"peer": "jieba extract_tags", "documents": n, "bytes": total_utf8_bytes,
     "seconds": s, "mb_per_s": ..., "init_seconds": ..., ...}

Loading jieba's dictionary and IDF table happens before the timed loop and is
reported as `init_seconds`. Reading and parsing the file is `read_seconds`.
With --values OUT, writes one JSON array of [word, weight] pairs per document
(in input order, as returned by jieba).
Run with the peers venv (tools/peers/setup-venv.sh).
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import sys
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _jsonl import read_texts, report  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description="Throughput of jieba.analyse.extract_tags")
    ap.add_argument("input", help="JSONL file, one object per line")
    ap.add_argument("--text-field", default="text", help="field holding the text (default: text)")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N documents")
    ap.add_argument("--top-k", type=int, default=20, help="keywords per document (default: 20)")
    ap.add_argument("--values", metavar="OUT", help="write one JSON keyword list per line to OUT")
    args = ap.parse_args()

    texts, read_seconds = read_texts(args.input, args.text_field, args.limit)

    t0 = time.perf_counter()
    import jieba
    import jieba.analyse

    jieba.setLogLevel(logging.WARNING)  # keep stdout/stderr quiet
    jieba.initialize()
    jieba.analyse.extract_tags("预热 warm up", topK=args.top_k, withWeight=True)
    init_seconds = time.perf_counter() - t0

    gc_was_enabled = gc.isenabled()
    gc.disable()
    t0 = time.perf_counter()
    results = [jieba.analyse.extract_tags(t, topK=args.top_k, withWeight=True) for t in texts]
    seconds = time.perf_counter() - t0
    if gc_was_enabled:
        gc.enable()

    if args.values:
        with open(args.values, "w", encoding="utf-8", newline="\n") as f:
            for kw in results:
                f.write(json.dumps([[w, s] for w, s in kw], ensure_ascii=False) + "\n")

    report("jieba extract_tags", texts, seconds, read_seconds,
           jieba=version("jieba"), top_k=args.top_k, init_seconds=round(init_seconds, 6))


if __name__ == "__main__":
    main()
