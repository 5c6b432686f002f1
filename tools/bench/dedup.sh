#!/usr/bin/env bash
# End-to-end `neardup dedup` throughput on real HTML (the Rust documentation installed with the
# toolchain, ~550 MB) and on ~1 GB of plain text (real text plus planted near-duplicates), then
# neardup against the Python peers (datasketch MinHashLSH, PyPI simhash + SimhashIndex) on the
# same subset, in one run.
#
# usage: tools/bench/dedup.sh [SUBSET_DOCUMENTS]   (default 5000)
# Data goes to $NEARDUP_BENCH_DATA (default /tmp/neardup-bench); the peers' venv is
# $NEARDUP_PEERS_VENV (default /work/venv-peers, made by tools/peers/setup-venv.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${NEARDUP_BENCH_DATA:-/tmp/neardup-bench}
venv=${NEARDUP_PEERS_VENV:-/work/venv-peers}
subset_docs=${1:-5000}
mkdir -p "$data"
docs="$(rustc --print sysroot)/share/doc/rust/html"
[ -f "$data/rustdoc.jsonl" ] || python3 tools/bench/make_rustdoc_jsonl.py "$data/rustdoc.jsonl" >&2
[ -f "$data/text-1gb.jsonl" ] || python3 tools/bench/make_text_corpus.py "$data/rustdoc.jsonl" "$data/text-1gb.jsonl" --target-mb 1000 >&2
cargo build --release -q -p neardup
bin=target/release/neardup
summary() { python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:<48} {s['documents']:>9} {s['input_bytes']/1e6:>8.0f} {s['seconds']:>8.2f} {s['mb_per_second']:>8.1f} {s['documents_per_second']:>9.0f} {s['exact_duplicates']+s['near_duplicates']:>8}\")" "$@"; }
printf '%-48s %9s %8s %8s %8s %9s %8s\n' run documents MB seconds MB/s docs/s removed
cat "$docs"/index.html > /dev/null  # warm the page cache for the folder run below
find "$docs" -name '*.html' -exec cat {} + > /dev/null
for method in simhash cascade; do
  "$bin" dedup "$docs" --method "$method" --summary "$data/s.json" 2> /dev/null
  summary "$data/s.json" "rust docs HTML folder, --method $method"
done
for method in simhash cascade; do
  "$bin" dedup "$data/text-1gb.jsonl" --method "$method" --summary "$data/s.json" 2> /dev/null
  summary "$data/s.json" "1 GB plain text, --method $method"
done
if [ ! -x "$venv/bin/python" ]; then
  echo "no peers venv at $venv: skipping the peers" >&2
  exit 0
fi
head -n "$subset_docs" "$data/text-1gb.jsonl" > "$data/subset.jsonl"
"$bin" dedup "$data/subset.jsonl" --method simhash --summary "$data/s.json" 2> /dev/null
summary "$data/s.json" "subset: neardup --method simhash"
"$bin" dedup "$data/subset.jsonl" --method cascade --summary "$data/s.json" 2> /dev/null
summary "$data/s.json" "subset: neardup --method cascade"
"$venv/bin/python" tools/bench/dedup_peers.py "$data/subset.jsonl" | python3 -c "
import json, sys
for line in sys.stdin:
    p = json.loads(line)
    print(f\"{'subset: ' + p['peer']:<48} {p['documents']:>9} {p['bytes']/1e6:>8.0f} {p['seconds']:>8.2f} {p['mb_per_s']:>8.1f} {p['documents']/p['seconds']:>9.0f} {p['removed']:>8}\")"
