#!/usr/bin/env bash
# A serving process with the index in its own memory (`--index-in local`) against one that
# reads the index the store holds (`--index-in store`, Redis block keys), side by side over the
# same Redis database of N synthetic records (crates/store/examples/synth.rs: random 64-bit
# SimHash fingerprints, short stored texts): the serving process's RSS after start and after
# the load, POST /v1/check and durable POST /v1/documents?insert=always from 32 keep-alive
# connections for DURATION each (tools/bench/service.lua texts, 2-5 KB), requests/s and p99,
# ending with one table of both modes side by side; Redis bytes a document, block keys apart.
# One local redis-server without persistence (the store's own speed is not what is compared).
#
# Usage: [BUILD=0] tools/bench/index_in.sh [N] [DURATION]    (default 1000000, 15s)
# Needs wrk, redis-server, redis-cli (apt-get install wrk redis-server).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
DURATION=${2:-15s}
WORK=$(mktemp -d)
PORT=${PORT:-7481}
REDIS_PORT=$((PORT + 1))
# BUILD=0 runs the binaries already built (e.g. after a change to comments only).
if [ "${BUILD:-1}" != 0 ]; then
    cargo build --release -p neardup
    cargo build --release -p neardup-store --example synth
fi
BIN=target/release/neardup
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >/dev/null &
PIDS+=($!)
until [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
DB="redis://127.0.0.1:$REDIS_PORT?name=bench"
used() { redis-cli -p "$REDIS_PORT" info memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}'; }
before=$(used)
# Writes the records, then opens once: the open builds the block keys.
target/release/examples/synth "$DB" "$N"
after=$(used)
echo "redis used_memory: $(( (after - before) / N )) bytes/document over $N documents (records + order + block keys)"
for kind in log slots ids; do
    echo "  $kind: $(redis-cli -p "$REDIS_PORT" memory usage "neardup:{bench}:$kind" samples 0) bytes"
done
blocks=$(redis-cli -p "$REDIS_PORT" eval "
local cursor, total = '0', 0
repeat
  local page = redis.call('SCAN', cursor, 'MATCH', ARGV[1], 'COUNT', 1000)
  cursor = page[1]
  for _, key in ipairs(page[2]) do total = total + redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0') end
until cursor == '0'
return total" 0 'neardup:{bench/b*')
echo "  block keys: $blocks bytes, $(( blocks / N )) bytes/document ($(redis-cli -p "$REDIS_PORT" get 'neardup:{bench}:blocks'))"

rss() { awk '/VmRSS/ {print int($2 / 1024) " MB"}' "/proc/$1/status"; }
# One wrk run: "requests/s p99" of PATH with texts of SEED.
load() {
    NEARDUP_PATH=$1 NEARDUP_SEED=$2 wrk -t2 -c32 -d"$DURATION" --latency -s tools/bench/service.lua \
        "http://127.0.0.1:$PORT" >"$WORK/wrk.out" || true
    grep -E "Non-2xx|Socket errors" "$WORK/wrk.out" >&2 || true
    echo "$(awk '/Requests\/sec/ {print int($2)}' "$WORK/wrk.out") $(awk '$1 == "99%" {print $2}' "$WORK/wrk.out")"
}
declare -A ROW
for mode in local store; do
    started=$(date +%s.%N)
    "$BIN" serve --db "$DB" --index-in "$mode" --listen "127.0.0.1:$PORT" 2>"$WORK/serve-$mode.log" &
    SERVER=$!
    PIDS+=("$SERVER")
    until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
        kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve-$mode.log"; exit 1; }
        sleep 0.1
    done
    ready=$(python3 -c "import time; print(round(time.time() - $started, 2))")
    start_rss=$(rss "$SERVER")
    read -r checks check_p99 <<<"$(load /v1/check 11)"
    read -r inserts insert_p99 <<<"$(load "/v1/documents?insert=always" 12)"
    ROW[$mode]="| $mode | $ready s | $start_rss | $(rss "$SERVER") | $checks | $check_p99 | $inserts | $insert_p99 |"
    kill "$SERVER"
    wait "$SERVER" || true
done
echo
echo "$N documents, $DURATION a load, 32 connections; RSS of the serving process; inserts are durable (acknowledged by Redis)"
echo "| --index-in | ready | RSS at start | RSS after the load | checks/s | check p99 | inserts/s | insert p99 |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
echo "${ROW[local]}"
echo "${ROW[store]}"
