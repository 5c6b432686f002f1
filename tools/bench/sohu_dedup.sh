#!/usr/bin/env bash
# The Sohu pairs end to end: `neardup dedup` on a corpus of every sentence of both sets, then,
# per label, how many labelled pairs end up in one cluster (BENCHMARKS.md, "sohu end to end").
#
#     tools/bench/sohu_dedup.sh DATA_DIR        # e.g. ../shared/data
#
# The sets are relabelled by tools/bench/sohu_pairs.py; the corpus ({"id": "dd-17-a", "text":
# ...}, 2,000 records) is written to a temporary directory, never into the repository. Skips,
# with a message, when DATA_DIR has no Sohu data.
set -euo pipefail

DATA=${1:?usage: sohu_dedup.sh DATA_DIR}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
SOHU=$DATA/sohu-text-matching-zh
if [[ ! -d $SOHU ]]; then
    echo "sohu_dedup.sh: no sohu-text-matching-zh/ in $DATA; skipped" >&2
    exit 0
fi
# shellcheck source=tools/bench/sohu_setup.sh
source "$ROOT/tools/bench/sohu_setup.sh"
sohu_setup "$ROOT" "$SOHU"
python3 - "$TMP" <<'PY'
import json, sys
tmp = sys.argv[1]
with open(f"{tmp}/corpus.jsonl", "w", encoding="utf-8") as out:
    for name in ("dd", "dc"):
        for i, line in enumerate(open(f"{tmp}/{name}.jsonl", encoding="utf-8")):
            row = json.loads(line)
            for side, field in (("a", "sentence1"), ("b", "sentence2")):
                out.write(json.dumps({"id": f"{name}-{i}-{side}", "text": row[field]}, ensure_ascii=False) + "\n")
PY

run() { # DESCRIPTION DEDUP-ARGS...
    local description=$1
    shift
    "$NEARDUP" dedup "$TMP/corpus.jsonl" --clusters "$TMP/clusters.jsonl" --summary "$TMP/summary.json" "$@" 2>/dev/null
    python3 - "$TMP" "$description" <<'PY'
import collections, json, sys
tmp, description = sys.argv[1], sys.argv[2]
cluster = {}
for line in open(f"{tmp}/clusters.jsonl"):
    c = json.loads(line)
    cluster.update((m, c["cluster"]) for m in c["members"])
summary = json.load(open(f"{tmp}/summary.json"))
cells = []
for name in ("dd", "dc"):
    pairs, found = collections.Counter(), collections.Counter()
    for i, line in enumerate(open(f"{tmp}/{name}.jsonl", encoding="utf-8")):
        label = json.loads(line)["label"]
        pairs[label] += 1
        a, b = cluster.get(f"{name}-{i}-a"), cluster.get(f"{name}-{i}-b")
        found[label] += a is not None and a == b
    cells.append(" ".join(f"L{l}:{found[l]}/{pairs[l]}" for l in sorted(pairs)))
print(f"| {description} | {summary['verified_candidates']} | {cells[0]} | {cells[1]} |")
PY
}

echo "| profile, method | verified candidates | dd pairs in one cluster | dc pairs in one cluster |"
echo "|---|---|---|---|"
run "zh-short, overlap, containment >= 0.95, ratio >= 0.2 (chosen)" --profile zh-short --method overlap --threshold 0.95 --min-length-ratio 0.2
run "zh-short, overlap, containment >= 0.90, ratio >= 0.2" --profile zh-short --method overlap --threshold 0.9 --min-length-ratio 0.2
run "zh-short, overlap, containment >= 0.95" --profile zh-short --method overlap --threshold 0.95
run "zh-short, cascade (default)" --profile zh-short
run "zh, cascade (default)" --profile zh
run "zh-short, cascade k 8, containment >= 0.95, ratio >= 0.2" --profile zh-short --k 8 --verify containment --threshold 0.95 --min-length-ratio 0.2
run "zh-short, minhash, containment >= 0.95, ratio >= 0.2" --profile zh-short --method minhash --verify containment --threshold 0.95 --min-length-ratio 0.2
