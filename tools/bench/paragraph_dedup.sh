#!/usr/bin/env bash
# Dedup below the document (issue 21): `neardup dedup --granularity` on a JSONL corpus,
# throughput and peak RSS, beside a plain Python implementation of CCNet's rule
# (tools/bench/ccnet_line_dedup.py) on the same data in the same run.
#
#   tools/bench/paragraph_dedup.sh [CORPUS.jsonl] [MEMORY]
#   RUNS="combined" tools/bench/paragraph_dedup.sh ...   # some of: units combined ccnet ngrams
#
# `units`: the unit pass alone (--units-only) for line, paragraph and sentences:3, then
# sentences:3 spilled; `combined`: one run of document dedup and then paragraph (and
# sentences:3) dedup of the kept documents, the unit pass's own time and MB/s from --summary;
# `ccnet`: CCNet's rule in plain Python; `ngrams` (not run by default): the fraction rule
# (dolma's) by paragraph, 13-grams at thresholds 1.0 and 0.5, then 0.5 with the keys in 16 MiB
# (spilled; output compared).
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

runs=${RUNS:-units combined ccnet}

if [[ " $runs " == *" units "* ]]; then
    for unit in line paragraph sentences:3; do
        measure "neardup $unit" "$bin" dedup "$corpus" --granularity "$unit" --units-only \
            --memory "$memory" --kept "$out/kept-$unit.jsonl" --removed-spans "$out/spans.jsonl" \
            --tmp-dir "$out"
    done
    measure "neardup sentences:3, 16 MiB" "$bin" dedup "$corpus" --granularity sentences:3 \
        --units-only --memory 16MiB --kept "$out/kept-spilled.jsonl" --tmp-dir "$out"
    cmp "$out/kept-sentences:3.jsonl" "$out/kept-spilled.jsonl" && echo "spilled output identical"
fi

if [[ " $runs " == *" combined "* ]]; then
    for unit in paragraph sentences:3; do
        measure "neardup documents + $unit" "$bin" dedup "$corpus" --granularity "$unit" \
            --memory "$memory" --kept "$out/kept-both.jsonl.zst" --removed "$out/removed.jsonl" \
            --removed-spans "$out/spans.jsonl" --summary "$out/summary.json" --tmp-dir "$out"
        python3 - "$out/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
u = s["units"]
phases = ", ".join(f"{p['name']} {p['seconds']:.1f} s" for p in s["phases"])
print(f"  documents: {s['exact_duplicates']} exact + {s['near_duplicates']} near removed, {s['kept']} kept; {phases}")
print(f"  unit pass: {u['documents']} documents, {u['text_bytes'] / 1e6:.1f} MB of text in {u['seconds']:.2f} s "
      f"({u['mb_per_second']:.1f} MB/s), {u['units_removed']} of {u['units']} units "
      f"({u['bytes_removed'] / 1e6:.1f} MB), {u['documents_dropped']} dropped; peak RSS {s['peak_rss_bytes'] / 1e6:.1f} MB")
PY
    done
fi

if [[ " $runs " == *" ngrams "* ]]; then
    for threshold in 1.0 0.5; do
        measure "neardup paragraph 13-grams $threshold" "$bin" dedup "$corpus" --granularity paragraph \
            --ngrams 13 --ngram-threshold "$threshold" --units-only --memory "$memory" \
            --kept "$out/kept-ngrams-$threshold.jsonl" --tmp-dir "$out"
    done
    measure "neardup 13-grams 0.5, 16 MiB" "$bin" dedup "$corpus" --granularity paragraph \
        --ngrams 13 --ngram-threshold 0.5 --units-only --memory 16MiB \
        --kept "$out/kept-ngrams-spilled.jsonl" --tmp-dir "$out"
    cmp "$out/kept-ngrams-0.5.jsonl" "$out/kept-ngrams-spilled.jsonl" && echo "spilled output identical"
fi

if [[ " $runs " == *" ccnet "* ]]; then
    measure "ccnet rule, python" python3 "$here/ccnet_line_dedup.py" "$corpus"
fi
