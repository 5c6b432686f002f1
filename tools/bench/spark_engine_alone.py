#!/usr/bin/env python3
"""The Spark job's engine step alone (no Spark): `PartEngine` on the parts of the first N
documents of a JSON Lines file (found by `SearchKeys.parts`, as the job's driver finds them),
fed sorted by part in batches of 10,000, with the fingerprints made by `SearchKeys.fingerprint`
(the count's pass) taken (`carried`) or made again by the engine (`made`): wall and CPU (this
process's user + sys) of `feed` and `finish`, and the documents removed (BENCHMARKS.md, "Issue
23, step 14").

    python tools/bench/spark_engine_alone.py FILE N carried|made [THREADS]
"""
import json
import resource
import sys
import time

import numpy as np
import pyarrow as pa

import neardup
import neardup.spark

path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
threads = int(sys.argv[4]) if len(sys.argv) > 4 else None
texts = []
with open(path, encoding="utf-8") as f:
    for line in f:
        texts.append(json.loads(line)["text"])
        if len(texts) == n:
            break
col = pa.array(texts, pa.large_string())
keys = neardup.SearchKeys(None, len(texts))
made = keys.fingerprint(*neardup.spark._text_buffers(col, view=True))
w, dw = keys.simhash_width, made["digest_width"]
rows = np.arange(len(texts), dtype=np.int64)
node, root = keys.parts(rows, made["simhash"])
order = np.lexsort([node, root])
node, root = node[order], root[order]
simhash = np.frombuffer(made["simhash"], np.uint8).reshape(-1, w)[node]
digest = np.frombuffer(made["digest"], np.uint8).reshape(-1, dw)[node]
ordered = col.take(pa.array(node))
engine = neardup.PartEngine(None, "first", threads=threads)
t0, r0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
removed = 0
for at in range(0, len(node), 10_000):
    end = min(at + 10_000, len(node))
    extra = {}
    if mode == "carried":
        extra = {"simhash": simhash[at:end].reshape(-1), "digest": digest[at:end].reshape(-1)}
    out = engine.feed(root[at:end], node[at:end], *neardup.spark._text_buffers(ordered.slice(at, end - at), view=True), **extra)
    removed += int((out[2] >= 0).sum())
out = engine.finish()
removed += int((out[2] >= 0).sum())
t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(f"{mode} rows {len(node)} removed {removed} wall {t1 - t0:.2f} cpu {cpu:.2f}")
