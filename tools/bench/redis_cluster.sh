#!/usr/bin/env bash
# One neardup database on a Redis Cluster (3 masters, a replica each) against one Redis node:
# inserts/s (`neardup index add` of DOCS generated texts of about 1.4 KB) and checks/s
# (`neardup index check` of an edited copy of each), then the memory each master gained per
# document: the ordering node (the `{bench}` keys: the log and the slot states) against the
# others (bodies, id claims). Every server without persistence, all on loopback.
#
# Usage: tools/bench/redis_cluster.sh [DOCS]   (default 5000)
#   NEARDUP=path/to/neardup uses that binary instead of building the release one.
# Needs redis-server, redis-cli and python3.
set -euo pipefail
[ -n "${TRACE:-}" ] && set -x
cd "$(dirname "$0")/../.."
N=${1:-5000}
if [ -z "${NEARDUP:-}" ]; then
    cargo build --release -p neardup
    NEARDUP=target/release/neardup
fi
WORK=$(mktemp -d)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true; rm -rf "$WORK"' EXIT
# A free port whose cluster bus port (10000 above it) is free too.
free_port() {
    python3 -c '
import socket
while True:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
    if port < 55536:
        b = socket.socket()
        try:
            b.bind(("127.0.0.1", port + 10000)); print(port); break
        except OSError:
            pass
'
}
used() { redis-cli -p "$1" info memory | awk -F: '/^used_memory:/ {print $2+0}'; }
now() { date +%s.%N; }
rate() { python3 -c "import sys; print(round($N / ($2 - $1)))"; }

start() { # start NAME PORT [ARGS...]
    local dir="$WORK/$1" port=$2
    shift 2
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" "$@" >/dev/null &
    PIDS+=($!)
    until [ "$(redis-cli -p "$port" ping 2>/dev/null)" = PONG ]; do sleep 0.1; done
}

python3 - "$N" "$WORK" <<'PY'
import json, random, sys
n, work = int(sys.argv[1]), sys.argv[2]
rng = random.Random(18)
words = [f"w{i}" for i in range(5000)]
with open(f"{work}/docs.jsonl", "w") as docs, open(f"{work}/probes.jsonl", "w") as probes:
    for i in range(n):
        text = [rng.choice(words) for _ in range(220)]
        docs.write(json.dumps({"id": f"d{i}", "text": " ".join(text)}) + "\n")
        text[110] = "edited"
        probes.write(json.dumps({"id": f"p{i}", "text": " ".join(text)}) + "\n")
PY

measure() { # measure DB LABEL
    local t0 t1 t2
    t0=$(now)
    "$NEARDUP" index add --db "$1" "$WORK/docs.jsonl" >/dev/null 2>"$WORK/add.err"
    t1=$(now)
    "$NEARDUP" index check --db "$1" "$WORK/probes.jsonl" >/dev/null 2>"$WORK/check.err"
    t2=$(now)
    echo "$2: $(rate "$t0" "$t1") inserts/s, $(rate "$t1" "$t2") checks/s ($N documents)"
}

SINGLE=$(free_port)
start single "$SINGLE"
measure "redis://127.0.0.1:$SINGLE?name=bench" "one node"

PORTS=()
for i in 0 1 2 3 4 5; do
    PORTS+=("$(free_port)")
    start "node-$i" "${PORTS[$i]}" --cluster-enabled yes --cluster-config-file nodes.conf
done
redis-cli --cluster create $(printf '127.0.0.1:%s ' "${PORTS[@]}") --cluster-replicas 1 --cluster-yes >/dev/null
for p in "${PORTS[@]}"; do
    until redis-cli -p "$p" cluster info | grep -q cluster_state:ok; do sleep 0.1; done
done
MASTERS=()
for p in "${PORTS[@]}"; do
    if redis-cli -p "$p" info replication | grep -q role:master; then MASTERS+=("$p"); fi
done
declare -A BEFORE
for p in "${MASTERS[@]}"; do BEFORE[$p]=$(used "$p"); done
HOSTS=$(printf '127.0.0.1:%s,' "${PORTS[@]}")
measure "redis+cluster://${HOSTS%,}?name=bench" "cluster (3 masters)"
SLOT=$(redis-cli -p "${PORTS[0]}" cluster keyslot 'neardup:{bench}:log')
for p in "${MASTERS[@]}"; do
    role=bodies
    [ "$(redis-cli -p "$p" cluster countkeysinslot "$SLOT")" -gt 0 ] && role="ordering node + bodies"
    gained=$(( $(used "$p") - BEFORE[$p] ))
    echo "master :$p ($role): $(redis-cli -p "$p" dbsize) keys, $(( gained / N )) bytes per document of the database"
done
ORDERING=0
PARTS=""
ORDER=
for p in "${MASTERS[@]}"; do
    if [ "$(redis-cli -p "$p" cluster countkeysinslot "$SLOT")" -gt 0 ]; then ORDER=$p; fi
done
for key in $(redis-cli -p "$ORDER" --scan --pattern 'neardup:{bench}:*'); do
    bytes=$(redis-cli -p "$ORDER" memory usage "$key" samples 0)
    ORDERING=$(( ORDERING + bytes ))
    if [ "$bytes" -ge "$N" ]; then PARTS="$PARTS ${key#neardup:\{bench\}:} $(( bytes / N ))"; fi
done
echo "ordering keys: $(( ORDERING / N )) bytes per document ($PARTS )"
