#!/usr/bin/env bash
# Issue 17: a family of near copies inserted into a redb database whose checks read the block
# keys it holds (`--index-in store`): every copy shares most of its block keys with the others,
# so each insert appends to lists as long as the family so far. `neardup index add --insert
# always --index-in store` of N copies of one template, each with one word replaced at a
# position of its own (all within k of each other). Prints the seconds and peak RSS of the
# insert (/usr/bin/time -v), and the database's size. BIN: the binary to measure (default this
# checkout's release build). The timed command runs under `flock /tmp/bench.lock`.
#
# Usage: [BIN=PATH] [WORK=DIR] tools/bench/index_family.sh [N]   (default 50000)
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-50000}
BIN=${BIN:-$PWD/target/release/neardup}
WORK=${WORK:-/tmp/index_family}
mkdir -p "$WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
python3 - "$N" >"$WORK/family.jsonl" <<'PY'
import json, random, sys
n = int(sys.argv[1])
rng = random.Random(17)
words = [f"w{rng.randrange(100000)}" for _ in range(300)]
for i in range(n):
    copy = list(words)
    copy[i % len(copy)] = f"edit{i}"
    print(json.dumps({"id": f"c{i}", "text": " ".join(copy)}))
PY
rm -rf "$WORK/db"
# The first copy creates the database and records the block keys' plan.
head -n 1 "$WORK/family.jsonl" | "$BIN" index add --db "$WORK/db" --index-in store >/dev/null
tail -n +2 "$WORK/family.jsonl" >"$WORK/rest.jsonl"
flock /tmp/bench.lock /usr/bin/time -v -o "$WORK/add.time" \
    "$BIN" index add --db "$WORK/db" --index-in store --insert always "$WORK/rest.jsonl" >/dev/null
secs=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$WORK/add.time")
rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$WORK/add.time")
echo "$((N - 1)) near copies inserted: $secs s, peak $rss MB, database $(du -sm "$WORK/db" | cut -f1) MB"
"$BIN" index stats --db "$WORK/db" --index-in store | python3 -c 'import json,sys; s=json.load(sys.stdin); print("documents", s["documents"], "plan", s["store_index"])'
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
