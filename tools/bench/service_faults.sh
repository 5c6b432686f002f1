#!/usr/bin/env bash
# What a client of `neardup serve` sees under store faults, timed (BENCHMARKS.md, "Service under
# faults"): a local redis-server stalled (SIGSTOP/SIGCONT), killed and restarted; then, as root,
# redb on a small tmpfs filled up and freed. Prints one line per request: status, time, request.
# The times are set by the store timeout (default 2 s), not by the build: a debug build will do.
#
# Usage: tools/bench/service_faults.sh [STORE_TIMEOUT_SECONDS]
#        (needs redis-server, curl; the disk-full part needs root and mount)
set -euo pipefail
cd "$(dirname "$0")/../.."
TIMEOUT=${1:-2}
BIN=${BIN:-target/debug/neardup}
[ -x "$BIN" ] || cargo build -p neardup
WORK=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
HTTP=$(free_port)
REDIS_PORT=$(free_port)
REDIS=""; SERVER=""; MOUNTED=""
cleanup() {
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
    [ -n "$REDIS" ] && { kill -CONT "$REDIS" 2>/dev/null; kill "$REDIS" 2>/dev/null; } || true
    wait 2>/dev/null || true
    [ -n "$MOUNTED" ] && umount "$MOUNTED" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

t() { # PATH METHOD [JSON]: one timed request
    curl -s -o /dev/null -w "%{http_code} %{time_total}s $2 $1\n" -X "$2" \
        -H 'content-type: application/json' ${3:+-d "$3"} "http://127.0.0.1:$HTTP$1"
}
doc() { echo "{\"id\":\"$1\",\"text\":\"$1 $(head -c 30000 /dev/urandom | base64 -w0 | tr '+/' ' .')\"}"; }
ready_after() { # seconds until /healthz answers 200
    local start; start=$(date +%s.%N)
    until [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP/healthz")" = 200 ]; do
        sleep 0.05
    done
    echo "healthz 200 after $(echo "$(date +%s.%N) - $start" | bc) s"
}
start_redis() {
    redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" \
        >/dev/null 2>&1 &
    REDIS=$!
    until redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; do sleep 0.05; done
}
serve() { # DB
    "$BIN" serve --db "$1" --listen "127.0.0.1:$HTTP" --store-timeout "$TIMEOUT" 2>"$WORK/serve.log" &
    SERVER=$!
    until curl -sf "http://127.0.0.1:$HTTP/healthz" >/dev/null; do sleep 0.1; done
}
terminate() { # SIGTERM, timed
    local start; start=$(date +%s.%N)
    kill -TERM "$SERVER"; wait "$SERVER"
    echo "exited $? $(echo "$(date +%s.%N) - $start" | bc) s after SIGTERM"
    SERVER=""
}

echo "== Redis, store timeout $TIMEOUT s"
start_redis
serve "redis://127.0.0.1:$REDIS_PORT"
t /v1/documents POST "$(doc a)"
echo "-- redis stalled (SIGSTOP)"
kill -STOP "$REDIS"
t /v1/documents POST "$(doc b)"
t /v1/check POST "$(doc b)"
t /healthz GET
sleep 1.1
t /healthz GET
t /v1/stats GET
echo "-- SIGCONT"
kill -CONT "$REDIS"
ready_after
t /v1/documents POST "$(doc b)"
echo "-- redis killed"
kill -KILL "$REDIS"; wait "$REDIS" 2>/dev/null || true
t /v1/documents POST "$(doc c)"
t /healthz GET
echo "-- restarted empty"
start_redis
ready_after
t /v1/documents POST "$(doc c)"
echo "-- stalled, a request in flight, SIGTERM"
kill -STOP "$REDIS"
t /v1/documents POST "$(doc d)" &
IN_FLIGHT=$!
sleep 0.3
terminate
wait "$IN_FLIGHT"
kill -CONT "$REDIS"; kill "$REDIS"; wait "$REDIS" 2>/dev/null || true
REDIS=""

if [ "$(id -u)" -eq 0 ]; then
    echo "== redb on a 6 MB tmpfs"
    mkdir -p "$WORK/small"
    mount -t tmpfs -o size=6m tmpfs "$WORK/small"
    MOUNTED="$WORK/small"
    serve "$WORK/small/db"
    t /v1/documents POST "$(doc e)"
    dd if=/dev/zero of="$WORK/small/filler" bs=64k 2>/dev/null || true
    echo "-- disk full"
    for n in $(seq 300); do
        status=$(curl -s -o /dev/null -w '%{http_code}' -H 'content-type: application/json' \
            -d "$(doc "full$n")" "http://127.0.0.1:$HTTP/v1/documents")
        [ "$status" = 201 ] || break
    done
    echo "insert $n: $status"
    t /healthz GET
    t /v1/documents POST "$(doc f)"
    echo "-- space freed"
    rm "$WORK/small/filler"
    ready_after
    t /v1/documents POST "$(doc f)"
    terminate
fi
