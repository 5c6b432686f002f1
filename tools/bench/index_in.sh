#!/usr/bin/env bash
# A serving process with the index in its own memory (`--index-in local`) against one that
# reads the index the store holds (`--index-in store`, Redis block keys), side by side over the
# same Redis database of N synthetic records (crates/store/examples/synth.rs: random 64-bit
# SimHash fingerprints, short stored texts): the serving process's RSS after start and after
# the load, POST /v1/check and durable POST /v1/documents?insert=always from 32 keep-alive
# connections for DURATION each (tools/bench/service.lua texts, 2-5 KB), requests/s and p99,
# ending with one table of both modes side by side; Redis bytes a document, by kind of key.
# Redis without persistence (the store's own speed is not what is compared): one local
# redis-server, or with CLUSTER=1 a real cluster of 3 masters with a replica each on loopback,
# where the bytes of the ordering master (every key of the `{NAME}` tag) are printed apart.
#
# Usage: [BUILD=0] [CLUSTER=1] [BINS="DIR ..."] [MOVE=1] tools/bench/index_in.sh [N] [DURATION]
#   (default 1000000, 15s). BINS: directories each holding a `neardup` and a `synth` binary
#   (e.g. a copy of main's): each gets a database of its own (`bench1`, `bench2`, ...) on the
#   same Redis, measured in turn, one table at the end; default: this tree's release build.
#   MOVE=1: only the first directory writes a database (and needs `synth`); each later one
#   opens that same database with `neardup index migrate` (timed: a version of another Redis
#   layout moves it at open), then is measured on it.
#   INPUT=FILE.jsonl: a database is made by `neardup index add --insert always` of FILE's
#   documents (N is then ignored) instead of `synth` (a directory then needs no `synth`).
#   ARGS<i>: more arguments for the serving processes of the i-th directory (e.g.
#   ARGS2="--log-window 5": its writers trim the log to 5 s). The ordering master's bytes are
#   read again after each mode's loads (the last column): a trimmed log shows there.
#   UNTIL=HH:MM (UTC): synth stops writing at that time, short of N if it must: the documents
#   are then those counted (printed), the largest N the time allowed.
# Needs wrk, redis-server, redis-cli, python3 (apt-get install wrk redis-server).
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
if [ -z "${BINS:-}" ]; then
    mkdir -p "$WORK/tree"
    ln -s "$PWD/target/release/neardup" "$WORK/tree/neardup"
    ln -s "$PWD/target/release/examples/synth" "$WORK/tree/synth"
    BINS="$WORK/tree"
fi
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
start_redis() { # start_redis PORT [ARGS...]
    local port=$1
    shift
    mkdir -p "$WORK/redis-$port"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$WORK/redis-$port" "$@" >/dev/null &
    PIDS+=($!)
    until [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
}
MASTERS=()
if [ "${CLUSTER:-0}" = 1 ]; then
    PORTS=()
    for i in 0 1 2 3 4 5; do
        PORTS+=($((REDIS_PORT + i)))
        start_redis "${PORTS[$i]}" --cluster-enabled yes --cluster-config-file nodes.conf
    done
    redis-cli --cluster create $(printf '127.0.0.1:%s ' "${PORTS[@]}") --cluster-replicas 1 \
        --cluster-yes >/dev/null
    for p in "${PORTS[@]}"; do
        until redis-cli -p "$p" cluster info | grep -q cluster_state:ok; do sleep 0.2; done
    done
    for p in "${PORTS[@]}"; do
        if redis-cli -p "$p" info replication | grep -q role:master; then MASTERS+=("$p"); fi
    done
    HOSTS=$(printf '127.0.0.1:%s,' "${PORTS[@]}")
    url() { echo "redis+cluster://${HOSTS%,}?name=$1"; }
    # The master holding the `{NAME}` tag's keys (after they are written).
    ordering() {
        local slot p
        slot=$(redis-cli -p "${PORTS[0]}" cluster keyslot "neardup:{$1}:log")
        for p in "${MASTERS[@]}"; do
            if [ "$(redis-cli -p "$p" cluster countkeysinslot "$slot")" -gt 0 ]; then echo "$p"; return; fi
        done
    }
else
    start_redis "$REDIS_PORT"
    MASTERS=("$REDIS_PORT")
    url() { echo "redis://127.0.0.1:$REDIS_PORT?name=$1"; }
    ordering() { echo "$REDIS_PORT"; }
fi
used() { # the sum of used_memory over the masters
    local total=0 p
    for p in "${MASTERS[@]}"; do
        total=$((total + $(redis-cli -p "$p" info memory | tr -d '\r' | awk -F: '/^used_memory:/ {print $2}')))
    done
    echo "$total"
}
# Bytes (MEMORY USAGE) of the keys matching PATTERN on every master, as "total count".
bytes_of() {
    local p total=0 count=0 line
    for p in "${MASTERS[@]}"; do
        line=$(redis-cli -p "$p" --scan --pattern "$1" |
            awk '{print "MEMORY USAGE \"" $0 "\" SAMPLES 0"}' | redis-cli -p "$p" |
            awk '{t += $1; c++} END {print t + 0, c + 0}')
        total=$((total + ${line%% *}))
        count=$((count + ${line##* }))
    done
    echo "$total $count"
}

# The ordering master's bytes (MEMORY USAGE of every key of the `{$name}` tag on :$ORDER), over
# the documents stored now ($D set to them): printed, and left in $order_total.
order_bytes() {
    local key b
    D=$(redis-cli -p "$ORDER" get "neardup:{$name}:count")
    order_total=0
    for key in $(redis-cli -p "$ORDER" --scan --pattern "neardup:{$name}:*"); do
        b=$(redis-cli -p "$ORDER" memory usage "$key" samples 0)
        order_total=$((order_total + b))
        if [ "$b" -gt 10000 ]; then echo "  ordering key ${key#neardup:\{$name\}:}: $b bytes, $(python3 -c "print(round($b / $D, 1))") bytes/document"; fi
    done
    echo "  ordering master :$ORDER, every {$name} key: $order_total bytes, $(python3 -c "print(round($order_total / $D, 1))") bytes/document over $D documents"
}
rss() { awk '/VmRSS/ {print int($2 / 1024) " MB"}' "/proc/$1/status"; }
# One wrk run: "requests/s p99" of PATH with texts of SEED.
load() {
    NEARDUP_PATH=$1 NEARDUP_SEED=$2 wrk -t2 -c32 -d"$DURATION" --latency -s tools/bench/service.lua \
        "http://127.0.0.1:$PORT" >"$WORK/wrk.out" || true
    grep -E "Non-2xx|Socket errors" "$WORK/wrk.out" >&2 || true
    echo "$(awk '/Requests\/sec/ {print int($2)}' "$WORK/wrk.out") $(awk '$1 == "99%" {print $2}' "$WORK/wrk.out")"
}
ROWS=()
run=0
for bins in $BINS; do
    run=$((run + 1))
    if [ "${MOVE:-0}" = 1 ] && [ "$run" -gt 1 ]; then
        name=bench1
        DB=$(url "$name")
        echo "== $bins: database $name, opened by neardup index migrate"
        moving=$(date +%s.%N)
        "$bins/neardup" index migrate --db "$DB"
        echo "opened (and moved, if of another layout) in $(python3 -c "import time; print(round(time.time() - $moving, 1))") s"
    else
        name=bench$run
        DB=$(url "$name")
        echo "== $bins: database $name"
        before=$(used)
        if [ -n "${INPUT:-}" ]; then
            "$bins/neardup" index add --db "$DB" --insert always "$INPUT" >/dev/null
        else
            # Writes the records, then opens once: the open builds the block keys. UNTIL: stops
            # writing at that time (HH:MM UTC) if N are not written by then.
            budget=""
            if [ -n "${UNTIL:-}" ]; then budget=$(( $(date -u -d "$UNTIL" +%s) - $(date +%s) )); fi
            # shellcheck disable=SC2086 # $budget: empty or one word
            "$bins/synth" "$DB" "$N" $budget
        fi
    fi
    after=$(used)
    ORDER=$(ordering "$name")
    # The documents in the database (with MOVE=1 it also holds the inserts of the loads
    # measured before).
    D=$(redis-cli -p "$ORDER" get "neardup:{$name}:count")
    echo "redis used_memory: $(( (after - before) / D )) bytes/document over $D documents (all masters: records + order + block keys)"
    order_bytes
    echo "  log: $(redis-cli -p "$ORDER" xlen "neardup:{$name}:log") entries"
    read -r blocks nblocks <<<"$(bytes_of "neardup:{$name/b*")"
    echo "  block keys: $blocks bytes in $nblocks keys, $(( blocks / D )) bytes/document ($(redis-cli -c -p "$ORDER" get "neardup:{$name}:blocks"))"
    read -r rows nrows <<<"$(bytes_of "neardup:{$name/r*")"
    echo "  rows: $rows bytes in $nrows keys, $(python3 -c "print(round($rows / $D, 1))") bytes/document"
    eval "extra=\${ARGS$run:-}"
    for mode in local store; do
        started=$(date +%s.%N)
        # shellcheck disable=SC2086 # $extra: words on purpose
        "$bins/neardup" serve --db "$DB" --index-in "$mode" --listen "127.0.0.1:$PORT" $extra 2>"$WORK/serve-$mode.log" &
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
        echo "  after the $mode loads ($extra):"
        order_bytes
        echo "  log: $(redis-cli -p "$ORDER" xlen "neardup:{$name}:log") entries"
        ROWS+=("| $name | $mode | $ready s | $start_rss | $(rss "$SERVER") | $checks | $check_p99 | $inserts | $insert_p99 | $(python3 -c "print(round($order_total / $D, 1))") |")
        kill "$SERVER"
        wait "$SERVER" || true
    done
done
echo
echo "$N documents asked ($D in the last database after its loads), $DURATION a load, 32 connections; RSS of the serving process; inserts are durable (acknowledged by Redis)"
echo "| database | --index-in | ready | RSS at start | RSS after the load | checks/s | check p99 | inserts/s | insert p99 | ordering master, bytes/document |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
printf '%s\n' "${ROWS[@]}"
