#!/usr/bin/env bash
# `neardup mirrors` on a generated crawl of URLS pages with planted mirrors (make_crawl.py), an
# OLD and a NEW binary side by side in one run: OLD at its default, NEW at the default budget and
# at each budget of BUDGETS. Each run under `/usr/bin/time -v`; one table: binary, --memory, wall
# seconds, user + system CPU, peak RSS, the bytes spilled (NEW's last line of standard error),
# the mirror pairs found, and whether the output is OLD's byte for byte (`cmp`).
#
# usage: tools/bench/mirrors_scale.sh [OLD [NEW]]
#   OLD, NEW    neardup binaries (or env OLD=..., NEW=...; default NEW: target/release/neardup);
#               OLD=none runs NEW alone
# env:
#   URLS        pages in the crawl (default 3000000)
#   BUDGETS     NEW's budgets besides the default (default "64M")
#   DATA        the crawl and the runs' outputs (default /tmp/neardup-mirrors; never the
#               repository); the crawl is made once and kept, outputs are removed when compared
#   TMP_DIR     NEW's --tmp-dir (default: $TMPDIR)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OLD=${1:-${OLD:-none}}
NEW=${2:-${NEW:-$root/target/release/neardup}}
URLS=${URLS:-3000000}
BUDGETS=${BUDGETS:-64M}
DATA=${DATA:-/tmp/neardup-mirrors}
mkdir -p "$DATA/runs"
crawl=$DATA/crawl-$URLS.jsonl
if [[ ! -f $crawl ]]; then
  python3 "$here/make_crawl.py" "$crawl.part" --urls "$URLS"
  mv "$crawl.part" "$crawl"
fi
mb=$(($(stat -c %s "$crawl") >> 20))
echo "crawl: $crawl, $URLS pages, $mb MiB"
printf '%-6s %-8s %8s %8s %9s %14s %6s  %s\n' binary memory wall_s cpu_s peak_MiB spilled_bytes pairs output

# run NAME BINARY [FLAGS...]: one run; its output in $DATA/runs/NAME.out.
run() {
  local name=$1 binary=$2
  shift 2
  local out=$DATA/runs/$name.out err=$DATA/runs/$name.err times=$DATA/runs/$name.time
  /usr/bin/time -v -o "$times" "$binary" mirrors "$crawl" "$@" >"$out" 2>"$err"
  local wall cpu peak spilled pairs same
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0;
    for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.1f", s}' "$times")
  cpu=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {printf "%.1f", u + s}' "$times")
  peak=$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2 / 1024}' "$times")
  spilled=$(tail -1 "$err" | sed -n 's/.*; \([0-9]*\) bytes spilled.*/\1/p')
  pairs=$(wc -l <"$out")
  if [[ $name == old ]]; then
    same=reference
  elif [[ -f $DATA/runs/old.out ]]; then
    same=$(cmp -s "$DATA/runs/old.out" "$out" && echo identical || echo DIFFERS)
  else
    same=$(cmp -s "$DATA/runs/new-default.out" "$out" && echo "identical to NEW's default" || echo DIFFERS)
  fi
  local memory=default
  [[ $# -ge 2 && $1 == --memory ]] && memory=$2
  printf '%-6s %-8s %8s %8s %9s %14s %6s  %s\n' "${name%%-*}" "$memory" "$wall" "$cpu" "$peak" \
    "${spilled:--}" "$pairs" "$same"
}

rm -f "$DATA"/runs/*.out
[[ $OLD != none ]] && run old "$OLD"
run new-default "$NEW"
for budget in $BUDGETS; do
  run "new-$budget" "$NEW" --memory "$budget" ${TMP_DIR:+--tmp-dir "$TMP_DIR"}
done
rm -f "$DATA"/runs/*.out
