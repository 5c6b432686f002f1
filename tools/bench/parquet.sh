#!/usr/bin/env bash
# Parquet against JSON Lines, same corpus, one run (BENCHMARKS.md, "Parquet"): converts
# CORPUS.jsonl (fields `id`, `text`) to Parquet (zstd, row groups of 20,000 rows) with pyarrow,
# then times `neardup fingerprint` on both (reading and fingerprinting every text) and
# `neardup dedup --kept OUT` on both, with peak memory.
#
# Usage: tools/bench/parquet.sh CORPUS.jsonl [PYTHON]    PYTHON must have pyarrow (default python3).
set -euo pipefail
cd "$(dirname "$0")/../.."
CORPUS=${1:?usage: parquet.sh CORPUS.jsonl [PYTHON]}
PYTHON=${2:-python3}
cargo build --release -p neardup
BIN=target/release/neardup
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$PYTHON" - "$CORPUS" "$WORK/corpus.parquet" <<'PY'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
schema = pa.schema([("id", pa.string()), ("text", pa.string())])
writer = pq.ParquetWriter(sys.argv[2], schema, compression="zstd")
rows = {"id": [], "text": []}
def flush():
    if rows["id"]:
        writer.write_table(pa.table(rows, schema=schema), row_group_size=20000)
    rows["id"].clear(); rows["text"].clear()
with open(sys.argv[1]) as f:
    for line in f:
        record = json.loads(line)
        rows["id"].append(str(record["id"])); rows["text"].append(record["text"])
        if len(rows["id"]) >= 20000:
            flush()
flush(); writer.close()
PY
ls -l "$CORPUS" "$WORK/corpus.parquet"
for input in "$CORPUS" "$WORK/corpus.parquet"; do
    /usr/bin/time -f "fingerprint $(basename "$input"): %e s, %M KB max RSS" \
        "$BIN" fingerprint "$input" >/dev/null
done
for input in "$CORPUS" "$WORK/corpus.parquet"; do
    out="$WORK/kept.${input##*.}"
    /usr/bin/time -f "dedup --kept $(basename "$out"): %e s, %M KB max RSS" \
        "$BIN" dedup "$input" --kept "$out"
    ls -l "$out"
done
