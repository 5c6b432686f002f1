#!/usr/bin/env bash
# Benchmarks `neardup serve` (BENCHMARKS.md, "Service"): with N documents indexed (default 1M
# synthetic records: random 64-bit SimHash fingerprints, see crates/store/examples/synth.rs),
# POST /v1/check with 2-5 KB texts (tools/bench/service.lua; NEARDUP_VOCAB=syllables for texts that
# are all candidates of each other, the verification's worst case) from 32 keep-alive connections for
# DURATION, then durable inserts (POST /v1/documents?insert=always), on the embedded store and
# then on Redis (a local redis-server, appendonly with fsync every second), which the insert
# phase fills (as many documents as it inserts in DURATION) before the check phase.
#
# Usage: tools/bench/serve.sh [N] [DURATION]     Needs wrk and redis-server (apt-get install).
set -euo pipefail
cd "$(dirname "$0")/../.."
N=${1:-1000000}
DURATION=${2:-20s}
WORK=${WORK:-/tmp/neardup-bench-serve}
PORT=${PORT:-7471}
cargo build --release -p neardup
cargo build --release -p neardup-store --example synth
BIN=target/release/neardup
mkdir -p "$WORK"

serve() { # DB: starts the server in the background, waits for it
    "$BIN" serve --db "$1" --listen "127.0.0.1:$PORT" 2>"$WORK/serve.log" &
    SERVER=$!
    until curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null; do
        kill -0 "$SERVER" 2>/dev/null || { cat "$WORK/serve.log"; exit 1; }
        sleep 0.2
    done
}
stop() { kill "$SERVER"; wait "$SERVER" || true; }
load() { # LABEL PATH SEED
    echo "== $1"
    NEARDUP_PATH=$2 NEARDUP_SEED=$3 wrk -t2 -c32 -d"$DURATION" --latency -s tools/bench/service.lua \
        "http://127.0.0.1:$PORT" | grep -E "Requests/sec|  50%|  99%|Non-2xx|Socket errors"
}

DB="$WORK/redb-$N"
if [ ! -d "$DB" ]; then
    target/release/examples/synth "$DB" "$N"
fi
/usr/bin/time -f "open: %e s, %M KB max RSS" "$BIN" index stats --db "$DB"
serve "$DB"
load "redb: POST /v1/check, $N documents" /v1/check 1
load "redb: POST /v1/documents?insert=always (durable)" "/v1/documents?insert=always" 2
curl -s "http://127.0.0.1:$PORT/v1/stats"; echo
stop

REDIS_PORT=$((PORT + 1))
rm -rf "$WORK/appendonlydir"
redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly yes \
    --appendfsync everysec --dir "$WORK" >/dev/null &
REDIS=$!
trap 'kill $REDIS 2>/dev/null || true' EXIT
until [ "$(redis-cli -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
redis-cli -p "$REDIS_PORT" flushall >/dev/null
serve "redis://127.0.0.1:$REDIS_PORT"
load "redis: POST /v1/documents?insert=always (loads the db)" "/v1/documents?insert=always" 3
curl -s "http://127.0.0.1:$PORT/v1/stats"; echo
load "redis: POST /v1/check" /v1/check 4
stop
