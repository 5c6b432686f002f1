#!/usr/bin/env bash
# The unit pass below the document (issue 21, step 4): two builds of neardup side by side,
# alternating (old, new, old, new, ...) on one JSONL corpus at the default budget; for each
# run the wall seconds, MB/s of the input by wall time, CPU seconds (user + sys), peak RSS,
# and the unit pass's own seconds and MB/s of text (from --summary); then the medians, and the
# two builds' outputs (--kept, --removed-spans) compared by their MD5 digests.
#
#   tools/bench/unit_pass.sh OLD_NEARDUP NEW_NEARDUP [CORPUS.jsonl] [RUNS]
#   MODES="paragraph combined" OUT=/tmp/somewhere tools/bench/unit_pass.sh ...
#
# Modes (MODES, default "paragraph sentences:3 ngrams combined"):
#   paragraph, line, sentences:3   --granularity ... --units-only (the exact rule)
#   ngrams                         --granularity paragraph --ngrams 13 --ngram-threshold 0.5
#                                  --units-only (the fraction rule, dolma's)
#   combined                       documents first, then paragraph units of the kept ones
#   combined-longest               the same with --keep longest (keep order: two reads)
# RUNS (default 2) runs of each build per mode. Every run writes --kept (JSON Lines) and
# --removed-spans into OUT (default: a temporary folder, removed at the end), about the
# corpus' size, deleted once its digest is taken (the last run of each build is compared). Needs GNU
# /usr/bin/time. On a shared machine the wall time is the machine's: run it when it is quiet,
# and read the CPU seconds beside it.
set -euo pipefail
old=${1:?usage: unit_pass.sh OLD_NEARDUP NEW_NEARDUP [CORPUS.jsonl] [RUNS]}
new=${2:?usage: unit_pass.sh OLD_NEARDUP NEW_NEARDUP [CORPUS.jsonl] [RUNS]}
corpus=${3:-/tmp/scale/1g.jsonl}
runs=${4:-2}
modes=${MODES:-paragraph sentences:3 ngrams combined}
if [[ -n "${OUT:-}" ]]; then
    out=$OUT
    mkdir -p "$out"
else
    out=$(mktemp -d)
    trap 'rm -rf "$out"' EXIT
fi
size=$(stat -c %s "$corpus")
echo "corpus: $corpus ($size bytes), $(nproc) cores, load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "old: $old"
echo "new: $new"

# The arguments of a mode.
mode_args() {
    case $1 in
    paragraph | line | sentences:*) echo "--granularity $1 --units-only" ;;
    ngrams) echo "--granularity paragraph --ngrams 13 --ngram-threshold 0.5 --units-only" ;;
    combined) echo "--granularity paragraph" ;;
    combined-longest) echo "--granularity paragraph --keep longest" ;;
    *)
        echo "unknown mode $1" >&2
        exit 2
        ;;
    esac
}

# One run: mode, build label, binary, run number; appends a row to $out/rows.
run_one() {
    local mode=$1 label=$2 bin=$3 n=$4
    local dir="$out/$label"
    mkdir -p "$dir"
    # shellcheck disable=SC2046
    /usr/bin/time -f "%e %M %U %S" -o "$dir/time" "$bin" dedup "$corpus" $(mode_args "$mode") \
        --kept "$dir/kept.jsonl" --removed-spans "$dir/spans.jsonl" --summary "$dir/summary.json" \
        --tmp-dir "$dir" >"$dir/stdout" 2>"$dir/stderr" || {
        cat "$dir/stderr"
        exit 1
    }
    read -r seconds rss_kb user sys <"$dir/time"
    read -r unit_s unit_mb < <(python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
u = s["units"] if isinstance(s.get("units"), dict) else s
seconds, text = u["seconds"], u["text_bytes"]
print(f"{seconds:.2f} {text / 1e6 / seconds:.1f}")' "$dir/summary.json")
    awk -v m="$mode" -v l="$label" -v n="$n" -v s="$seconds" -v r="$rss_kb" -v b="$size" \
        -v c="$user" -v k="$sys" -v us="$unit_s" -v um="$unit_mb" \
        'BEGIN { printf "%-17s %-4s %2d %9.2f %9.1f %9.2f %9.1f %9.2f %9.1f\n", m, l, n, s, b / 1e6 / s, c + k, r / 1024, us, um }' |
        tee -a "$out/rows"
    # Only the digests are kept: a 4 GB corpus' outputs would take its size twice.
    for file in kept.jsonl spans.jsonl; do
        echo "$(md5sum <"$dir/$file" | cut -d' ' -f1) $(stat -c %s "$dir/$file")" >"$dir/$file.md5"
        rm -f "$dir/$file"
    done
}

printf "%-17s %-4s %2s %9s %9s %9s %9s %9s %9s\n" mode build run "wall s" "MB/s" "CPU s" "RSS MiB" "unit s" "unit MB/s"
: >"$out/rows"
for mode in $modes; do
    for n in $(seq 1 "$runs"); do
        run_one "$mode" old "$old" "$n"
        run_one "$mode" new "$new" "$n"
    done
    for file in kept.jsonl spans.jsonl; do
        read -r digest bytes <"$out/new/$file.md5"
        if cmp -s "$out/old/$file.md5" "$out/new/$file.md5"; then
            echo "$mode: $file identical ($bytes bytes, md5 ${digest:0:8})"
        else
            echo "$mode: $file DIFFERS (old: $(cat "$out/old/$file.md5"), new: $digest $bytes)"
        fi
    done
done

echo "medians (wall s, MB/s by wall, CPU s, peak RSS MiB, unit pass s, unit pass MB/s of text):"
python3 - "$out/rows" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, label, _, *figures = line.split()
    rows.setdefault((mode, label), []).append([float(f) for f in figures])
for (mode, label), values in rows.items():
    med = [statistics.median(column) for column in zip(*values)]
    print(f"{mode:<17} {label:<4} " + " ".join(f"{m:9.2f}" for m in med))
for mode in dict.fromkeys(m for m, _ in rows):
    old, new = rows.get((mode, "old")), rows.get((mode, "new"))
    if old and new:
        ratio = statistics.median(n[0] / o[0] for o, n in zip(old, new))
        print(f"{mode}: new/old wall, median of pairs: {ratio:.3f}")
PY
