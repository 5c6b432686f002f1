#!/usr/bin/env bash
# Issue 17: `dedup --index` within the budget. A redb database of the first N news leads of
# LEADS (/tmp/leads/30m.jsonl.zst, tools/bench/make_news_leads.py), written by
# `neardup index add --insert always`; then `dedup --index` of the next Q leads against two
# copies of it: `--index-in local` (the whole index loaded into the process) and
# `--index-in store` (the block keys in the redb file, built by the first such open: timed
# apart, as `neardup index stats --index-in store`). For each: peak RSS (/usr/bin/time -v),
# seconds, checks/s, removals, and the md5 of --removed (the same in both modes).
# Every timed command runs under `flock /tmp/bench.lock` (benchmarks never overlap).
#
# Usage: [BUILD=0] [WORK=DIR] tools/bench/index_budget.sh [N] [Q] [MEMORY]
#   (default 1000000 100000 2GiB). WORK: where the inputs and databases go (default
#   /tmp/index_budget; removed at the end unless KEEP=1). BASE=DIR: a database of the first N
#   leads written already (e.g. by another build's `index add`): copied, not written again.
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
Q=${2:-100000}
MEMORY=${3:-2GiB}
LEADS=${LEADS:-/tmp/leads/30m.jsonl.zst}
WORK=${WORK:-/tmp/index_budget}
if [ "${BUILD:-1}" != 0 ]; then
    cargo build --release -p neardup
fi
BIN=$PWD/target/release/neardup
mkdir -p "$WORK"
[ "${KEEP:-0}" = 1 ] || trap 'rm -rf "$WORK"' EXIT
timed() { # timed NAME COMMAND...: runs it under the lock, keeps /usr/bin/time -v's report
    local name=$1
    shift
    flock /tmp/bench.lock /usr/bin/time -v -o "$WORK/$name.time" "$@"
}
rss() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$WORK/$1.time"; }
secs() { # wall-clock seconds of the report
    awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; print s}' "$WORK/$1.time"
}
if [ ! -s "$WORK/new.jsonl" ]; then
    # zstd ends on SIGPIPE when head has its lines: only head's status counts.
    (set +o pipefail; zstd -dc "$LEADS" | head -n "$((N + Q))") | split -l "$N" - "$WORK/part."
    mv "$WORK/part.aa" "$WORK/base.jsonl"
    mv "$WORK/part.ab" "$WORK/new.jsonl"
fi
echo "base: $(wc -l <"$WORK/base.jsonl") leads, new: $(wc -l <"$WORK/new.jsonl") leads"
rm -rf "$WORK/local" "$WORK/store"
if [ -z "${BASE:-}" ]; then
    BASE=$WORK/base
    rm -rf "$BASE"
    timed add "$BIN" index add --db "$BASE" --insert always "$WORK/base.jsonl" >/dev/null
    echo "index add of $N: $(secs add) s, peak $(rss add) MB"
fi
echo "database of $N leads: $(du -sm "$BASE" | cut -f1) MB"
cp -r "$BASE" "$WORK/local"
cp -r "$BASE" "$WORK/store"
timed keys "$BIN" index stats --db "$WORK/store" --index-in store --memory "$MEMORY" >"$WORK/keys.json"
echo "block keys built: $(secs keys) s, peak $(rss keys) MB, file $(du -sm "$WORK/store" | cut -f1) MB"
for mode in local store; do
    timed "$mode" "$BIN" dedup "$WORK/new.jsonl" --index "$WORK/$mode" --index-in "$mode" \
        --memory "$MEMORY" --removed "$WORK/$mode.removed" --summary "$WORK/$mode.summary.json"
done
printf '\n| %s | %s | %s | %s | %s | %s |\n' mode "peak RSS (MB)" seconds checks/s removals "md5 of --removed"
echo '|---|---:|---:|---:|---:|---|'
for mode in local store; do
    s=$(secs "$mode")
    printf '| %s | %s | %s | %.0f | %s | %s |\n' "$mode" "$(rss "$mode")" "$s" \
        "$(echo "$Q / $s" | bc -l)" "$(wc -l <"$WORK/$mode.removed")" \
        "$(md5sum <"$WORK/$mode.removed" | cut -c1-12)"
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
