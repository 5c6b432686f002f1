#!/usr/bin/env bash
# Dedup below the document (issue 21): `neardup dedup --granularity` on a JSONL corpus,
# throughput and peak RSS, beside a plain Python implementation of CCNet's rule
# (tools/bench/ccnet_line_dedup.py) on the same data in the same run.
#
#   tools/bench/paragraph_dedup.sh [CORPUS.jsonl] [MEMORY]
#
# Needs a release build (cargo build --release -p neardup) and /usr/bin/time (GNU). On a
# loaded machine the wall time is the machine's: CPU seconds (user + sys) are the figure to
# compare. The last neardup run holds the keys in 16 MiB (they spill to sorted runs, and the
# inputs are read twice) and its output is compared with the in-memory run's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
corpus=${1:-/tmp/scale/1g.jsonl}
memory=${2:-2GiB}
bin=${NEARDUP:-$here/../../target/release/neardup}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
size=$(stat -c %s "$corpus")
echo "corpus: $corpus ($size bytes), budget $memory, $(nproc) cores"

measure() { # label, command...
    local label=$1
    shift
    /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$@" >"$out/stdout" 2>"$out/stderr" || {
        cat "$out/stderr"
        exit 1
    }
    read -r seconds rss_kb user sys <"$out/time"
    grep -E "^(neardup|ccnet-python):" "$out/stderr" || true
    awk -v l="$label" -v s="$seconds" -v r="$rss_kb" -v b="$size" -v c="$user" -v k="$sys" \
        'BEGIN { printf "%-28s %8.2f s wall %8.1f MB/s | %7.2f s CPU (user+sys) %8.1f MB per CPU s | %7.1f MB peak RSS\n", l, s, b / 1e6 / s, c + k, b / 1e6 / (c + k), r / 1024 }'
}

for unit in line paragraph sentences:3; do
    measure "neardup $unit" "$bin" dedup "$corpus" --granularity "$unit" --memory "$memory" \
        --kept "$out/kept-$unit.jsonl" --removed-spans "$out/spans.jsonl" --tmp-dir "$out"
done
measure "neardup sentences:3, 16 MiB" "$bin" dedup "$corpus" --granularity sentences:3 \
    --memory 16MiB --kept "$out/kept-spilled.jsonl" --tmp-dir "$out"
cmp "$out/kept-sentences:3.jsonl" "$out/kept-spilled.jsonl" && echo "spilled output identical"
measure "ccnet rule, python" python3 "$here/ccnet_line_dedup.py" "$corpus"
