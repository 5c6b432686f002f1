#!/usr/bin/env bash
# End-to-end fingerprint throughput on real English text, and the python-simhash profile
# against the PyPI `simhash` package on the same input, in one run.
#
# usage: tools/bench/fingerprint.sh [CORPUS.jsonl] [PYTHON_SUBSET_MB]
#   CORPUS defaults to $NEARDUP_BENCH_DATA/rustdoc.jsonl (made from the Rust documentation
#   installed with the toolchain by tools/bench/make_rustdoc_jsonl.py when missing).
#   The Python peer is slow, so it runs on the first PYTHON_SUBSET_MB (default 10) MB only,
#   and neardup is timed on that same subset for the ratio.
# Needs the peers' virtual environment (tools/peers/setup-venv.sh) for the comparison.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${NEARDUP_BENCH_DATA:-/tmp/neardup-bench}
corpus=${1:-$data/rustdoc.jsonl}
subset_mb=${2:-10}
venv=${NEARDUP_PEERS_VENV:-/work/venv-peers}
mkdir -p "$data"
if [ ! -f "$corpus" ]; then
  python3 tools/bench/make_rustdoc_jsonl.py "$corpus" >&2
fi
cargo build --release -q -p neardup
bin=target/release/neardup
now() { date +%s.%N; }
rate() { python3 -c "import sys; b, s = float(sys.argv[1]), float(sys.argv[2]); print(f'{b / s / 1e6:.1f}')" "$@"; }
bytes=$(stat -c %s "$corpus")
docs=$(wc -l < "$corpus")

echo "corpus: $corpus ($docs documents, $((bytes / 1000000)) MB), $(nproc) cores"
printf '%-44s %10s %10s\n' "run" "seconds" "MB/s"
for profile in web python-simhash; do
  for run in 1 2 3; do
    start=$(now); "$bin" fingerprint --profile "$profile" --format jsonl "$corpus" > /dev/null; end=$(now)
    secs=$(python3 -c "print(f'{$end - $start:.3f}')")
    printf '%-44s %10s %10s\n' "neardup fingerprint --profile $profile #$run" "$secs" "$(rate "$bytes" "$secs")"
  done
done

if [ ! -x "$venv/bin/python" ]; then
  echo "no peers venv at $venv: skipping the comparison with the PyPI package" >&2
  exit 0
fi
subset="$data/subset-${subset_mb}mb.jsonl"
head -c "$((subset_mb * 1000000))" "$corpus" | head -n -1 > "$subset"
sub_bytes=$(stat -c %s "$subset")
start=$(now); "$bin" fingerprint --profile python-simhash --format jsonl "$subset" > "$data/neardup.out"; end=$(now)
ours=$(python3 -c "print($end - $start)")
"$venv/bin/python" tools/peers/bench_python_simhash.py "$subset" --values "$data/python.values" > "$data/python.json"
theirs=$(python3 -c "import json; print(json.load(open('$data/python.json'))['seconds'])")
python3 - "$data/neardup.out" "$data/python.values" <<'PY'
import json, sys
ours = [json.loads(l)["simhash"] for l in open(sys.argv[1])]
theirs = [l.strip() for l in open(sys.argv[2])]
same = sum(a == b for a, b in zip(ours, theirs))
print(f"values: {same} of {len(theirs)} identical" + ("" if same == len(theirs) == len(ours) else "  MISMATCH"))
PY
printf '%-44s %10.3f %10s\n' "neardup --profile python-simhash (subset)" "$ours" "$(rate "$sub_bytes" "$ours")"
printf '%-44s %10.3f %10s\n' "PyPI simhash 2.1.2 (subset, hashing only)" "$theirs" "$(rate "$sub_bytes" "$theirs")"
python3 -c "print(f'ratio: neardup is {$theirs / $ours:.1f}x the PyPI package')"
