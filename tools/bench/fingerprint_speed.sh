#!/usr/bin/env bash
# `neardup fingerprint` throughput, an older build (default: main) against this checkout, side
# by side in one run: both builds are timed in turn (old, new, old, new, ...) so that drift of
# the machine's speed hits both alike, and their outputs are compared byte for byte first.
#
# usage: tools/bench/fingerprint_speed.sh [CORPUS.jsonl] [BASE_REF] [RUNS] [THREADS...]
#   CORPUS   defaults to $NEARDUP_BENCH_DATA/corpus-1000.jsonl, made when missing from the Rust
#            documentation (make_rustdoc_jsonl.py) grown to 1000 MB (make_text_corpus.py).
#   BASE_REF the old build's commit or branch (default: main); built in a temporary worktree
#            that is removed at the end.
#   RUNS     timed runs per build and thread count (default 5; the median is reported).
#   THREADS  worker thread counts to measure (default: "1 2"); the old build is given the
#            count through RAYON_NUM_THREADS, since it may predate `--threads`.
# NEARDUP_OLD_BIN=PATH uses that binary as the old build instead of building BASE_REF (which
# then only names it); a release build from scratch takes many minutes on a small machine.
# Reported per thread count: the median wall time, the median CPU time (user + system) and
# the rates from both, MB of input per wall second and per CPU second.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${NEARDUP_BENCH_DATA:-/tmp/neardup-bench}
corpus=${1:-$data/corpus-1000.jsonl}
base_ref=${2:-main}
runs=${3:-5}
shift $(($# < 3 ? $# : 3))
if [ $# -gt 0 ]; then threads=("$@"); else threads=(1 2); fi
mkdir -p "$data"
if [ ! -f "$corpus" ]; then
  [ -f "$data/rustdoc.jsonl" ] || python3 tools/bench/make_rustdoc_jsonl.py "$data/rustdoc.jsonl" >&2
  python3 tools/bench/make_text_corpus.py --target-mb 1000 "$data/rustdoc.jsonl" "$corpus" >&2
fi

if [ -n "${NEARDUP_OLD_BIN:-}" ]; then
  old=$NEARDUP_OLD_BIN
else
  base_tree=$(mktemp -d "${TMPDIR:-/tmp}/neardup-base.XXXXXX")
  cleanup() { git worktree remove --force "$base_tree" 2>/dev/null || rm -rf "$base_tree"; }
  trap cleanup EXIT
  git worktree add --detach -q "$base_tree" "$base_ref"
  (cd "$base_tree" && cargo build --release -q -p neardup)
  old="$base_tree/target/release/neardup"
fi
cargo build --release -q -p neardup
new=${CARGO_TARGET_DIR:-target}/release/neardup

bytes=$(stat -c %s "$corpus")
echo "corpus: $corpus ($(wc -l < "$corpus") documents, $((bytes / 1000000)) MB), $(nproc) cores"
if [ -n "${NEARDUP_OLD_BIN:-}" ]; then old_name=$NEARDUP_OLD_BIN; else
  old_name="$base_ref ($(git rev-parse --short "$base_ref"))"; fi
echo "old: $old_name, new: $(git rev-parse --short HEAD)$(git diff --quiet || echo ' + changes')"

"$old" fingerprint --format jsonl "$corpus" > "$data/old.out"
"$new" fingerprint --format jsonl "$corpus" > "$data/new.out"
if cmp -s "$data/old.out" "$data/new.out"; then
  echo "outputs: identical ($(wc -l < "$data/new.out") records)"
else
  echo "outputs: DIFFER (see $data/old.out and $data/new.out)"
  exit 1
fi
rm -f "$data/old.out" "$data/new.out"

# "WALL CPU" seconds of one run (CPU = user + system), its output thrown away.
seconds() {
  local times
  times=$(mktemp)
  /usr/bin/time -f "%e %U %S" -o "$times" "$@" > /dev/null
  awk '{ print $1, $2 + $3 }' "$times"
  rm -f "$times"
}
median() { python3 -c "import statistics, sys; print(statistics.median(map(float, sys.argv[1:])))" "$@"; }
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]) / 1e6:.0f}')" "$@"; }

printf '%-8s %8s %8s %8s %8s %10s %10s %10s %10s %7s\n' threads "old s" "new s" "old cpu" \
  "new cpu" "old MB/s" "new MB/s" "old MB/cs" "new MB/cs" ratio
for n in "${threads[@]}"; do
  old_s=() new_s=() old_c=() new_c=()
  for _ in $(seq "$runs"); do
    read -r w c < <(RAYON_NUM_THREADS=$n seconds "$old" fingerprint "$corpus")
    old_s+=("$w") old_c+=("$c")
    read -r w c < <(seconds "$new" --threads "$n" fingerprint "$corpus")
    new_s+=("$w") new_c+=("$c")
  done
  o=$(median "${old_s[@]}") w=$(median "${new_s[@]}")
  oc=$(median "${old_c[@]}") wc=$(median "${new_c[@]}")
  printf '%-8s %8.2f %8.2f %8.2f %8.2f %10s %10s %10s %10s %7.2f\n' "$n" "$o" "$w" "$oc" "$wc" \
    "$(rate "$bytes" "$o")" "$(rate "$bytes" "$w")" "$(rate "$bytes" "$oc")" \
    "$(rate "$bytes" "$wc")" "$(python3 -c "print($o / $w)")"
done
