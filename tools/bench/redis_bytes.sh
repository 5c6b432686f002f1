#!/usr/bin/env bash
# Bytes per document a neardup database takes in Redis (BENCHMARKS.md, "Redis: bytes per
# document"): starts a redis-server on a free loopback port (no persistence), `neardup index add`s
# CORPUS (JSON Lines with a `text` field), then prints used memory per document and, per key
# kind, MEMORY USAGE (bodies sampled: the first 1,000).
#
# Usage: tools/bench/redis_bytes.sh CORPUS.jsonl     Needs redis-server and redis-cli.
set -euo pipefail
cd "$(dirname "$0")/../.."
CORPUS=${1:?usage: redis_bytes.sh CORPUS.jsonl}
cargo build --release -p neardup
WORK=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" >/dev/null &
REDIS=$!
trap 'kill $REDIS 2>/dev/null || true; rm -rf "$WORK"' EXIT
until [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
cli() { redis-cli -p "$PORT" "$@"; }
before=$(cli info memory | awk -F: '/^used_memory:/ {print $2+0}')
target/release/neardup index add --db "redis://127.0.0.1:$PORT" "$CORPUS" >/dev/null
after=$(cli info memory | awk -F: '/^used_memory:/ {print $2+0}')
docs=$(cli --scan --pattern 'neardup:{neardup:*' | wc -l)
text=$(python3 -c 'import json,sys; t=[len(json.loads(l)["text"].encode()) for l in open(sys.argv[1])]; print(round(sum(t)/len(t)))' "$CORPUS")
log=$(cli memory usage 'neardup:{neardup}:log' samples 0)
slots=$(cli memory usage 'neardup:{neardup}:slots' samples 0)
ids=$(cli memory usage 'neardup:{neardup}:ids' samples 0)
cli --scan --pattern 'neardup:{neardup:*' >"$WORK/keys"
record=$(head -1000 "$WORK/keys" | while read -r key; do cli memory usage "$key"; done |
    awk '{s += $1; n++} END {printf "%d", s / n}')
echo "documents stored: $docs (mean text of the corpus: $text bytes)"
echo "used memory per document: $(( (after - before) / docs )) bytes"
echo "  body (mean of 1,000): $record bytes"
echo "  log entry: $(( log / docs )) bytes; slot map: $(( slots / docs )) bytes; id map: $(( ids / docs )) bytes"
