#!/usr/bin/env python3
"""What the Spark job's count spends making search keys it throws away (no Spark): the first N
texts of a JSON Lines file in Arrow batches of B, `SearchKeys.fingerprint` on each (the count's
call: the default policy, `expected_len` 0; fingerprints and keys), then `SearchKeys.cut` on the
SimHash values it made (the same keys, `write_simhash` per record, copied into bytes: the keys'
share of the call), alternating, R rounds; CPU (this process's user + sys) and wall of each,
the keys checked equal (BENCHMARKS.md, "Issue 23, step 15").

    python tools/bench/spark_count_keys.py FILE N B R
"""
import json
import resource
import sys
import time

import numpy as np
import pyarrow as pa

from neardup import SearchKeys


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


path, n, batch, rounds = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
texts = []
with open(path, encoding="utf-8") as f:
    for line in f:
        texts.append(json.loads(line)["text"])
        if len(texts) == n:
            break
batches = []
for i in range(0, len(texts), batch):
    arr = pa.array(texts[i : i + batch], pa.large_string())
    _, off, data = arr.buffers()
    batches.append((np.frombuffer(off, dtype=np.int64)[: len(arr) + 1].copy(), np.frombuffer(data, dtype=np.uint8)))
keys = SearchKeys(None, 0)
print(f"{len(texts)} texts, {sum(len(t) for t in texts) / 1e6:.0f} M chars, batches of {batch}, key_width {keys.key_width}")
for r in range(rounds):
    c0, w0 = cpu(), time.perf_counter()
    made = [keys.fingerprint(o, d) for o, d in batches]
    c1, w1 = cpu(), time.perf_counter()
    cut = [keys.cut(m["simhash"]) for m in made]
    c2, w2 = cpu(), time.perf_counter()
    assert all(m["keys"] == c["keys"] for m, c in zip(made, cut))
    count = sum(len(m["keys"]) for m in made) // keys.key_width
    print(
        f"round {r + 1}: fingerprint {c1 - c0:.2f} CPU s ({w1 - w0:.2f} wall), cut {c2 - c1:.3f} CPU s "
        f"({w2 - w1:.3f} wall): {100 * (c2 - c1) / (c1 - c0):.1f}%; {count} keys"
    )
