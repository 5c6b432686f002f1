#!/usr/bin/env bash
# Issue 17's scale targets, an OLD and a NEW neardup side by side in one run: each target is run
# by OLD then NEW under `/usr/bin/time -v` and `timeout`, and one table is printed (a row as each
# run ends): documents, MB read, wall seconds, MB/s, user + system CPU, peak RSS (and the
# summary's own peak_rss_bytes and spilled_bytes when the binary writes them), exit status, and
# on NEW's row whether its decisions are OLD's: the removed documents (`--removed`, sorted) of
# `dedup`, the pairs (sorted, each as a <= b) of `pairs`.
#
# Targets, in this order (TARGETS picks some: "corpora leads identical pairs"):
#   corpora    `neardup dedup` on the text corpora of CORPORA (MB:SEED, default "1000:1 4000:7":
#              the issue's 1 GB corpus first, then its 4 GB corpus), make_text_corpus.py over
#              make_rustdoc_jsonl.py's 101 MB of real text
#   leads      `neardup dedup` on LEADS short news leads (default 30000000, about 10 GB),
#              make_news_leads.py
#   identical  `neardup dedup` on 4 million identical tiny lines in a .jsonl.zst,
#              make_identical_zst.sh
#   pairs      `neardup pairs --k 3` on FINGERPRINTS fingerprints (default 100000000) in each
#              form of FINGERPRINT_FORMATS (default "jsonl hex"): the JSON lines of `neardup
#              fingerprint` (15 GB), SimHash values in hex (1.7 GB), make_fingerprints.py
# An input that is missing is skipped with a line saying how to make it; with --make, missing
# inputs are made first (written as NAME.part, renamed when complete).
#
# usage: tools/bench/scale.sh [--make] [OLD [NEW]]
#   OLD, NEW    neardup binaries (or env OLD=..., NEW=...); OLD=none runs NEW alone
# env:
#   NEW_FLAGS   flags given to NEW only, after the subcommand's, on dedup and pairs runs (e.g.
#               "--memory 2G --tmp-dir /big")
#   OLD_FLAGS   the same for OLD (default: none)
#   DATA        inputs, and the runs' summaries, logs and time reports under DATA/runs
#               (default /tmp/neardup-scale; never the repository)
#   TIMEOUT     a run's time limit, for timeout(1) (default 3h)
#   MEMORY_CAP  a run's address-space limit (prlimit --as; e.g. 20G; default none): a run that
#               would need more fails (exit 134, allocation failure) instead of pushing the
#               machine out of memory. It counts mapped files, not only resident memory.
# The outputs compared are removed once compared; the data of the full run takes about 32 GB.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
}

make=0
positional=()
for arg in "$@"; do
  case $arg in
    --make) make=1 ;;
    -h | --help) usage ;;
    -*) echo "$0: unknown option $arg" >&2; usage ;;
    *) positional+=("$arg") ;;
  esac
done
[ ${#positional[@]} -le 2 ] || usage
old=${positional[0]:-${OLD:-}}
new=${positional[1]:-${NEW:-}}
if [ -z "$old" ] || [ -z "$new" ]; then usage; fi
data=${DATA:-/tmp/neardup-scale}
corpora=${CORPORA:-"1000:1 4000:7"}
leads=${LEADS:-30000000}
fingerprints=${FINGERPRINTS:-100000000}
fingerprint_formats=${FINGERPRINT_FORMATS:-"jsonl hex"}
targets=${TARGETS:-"corpora leads identical pairs"}
limit=${TIMEOUT:-3h}
read -r -a old_flags <<< "${OLD_FLAGS:-}"
read -r -a new_flags <<< "${NEW_FLAGS:-}"

for tool in /usr/bin/time timeout zstd prlimit numfmt; do
  command -v "$tool" > /dev/null || { echo "$0: $tool is missing (apt-get install -y time coreutils zstd util-linux)" >&2; exit 1; }
done
# The absolute path of a binary named by path or found on PATH ("none" stays "none").
absolute() {
  local found
  if [ "$1" = none ]; then
    echo none
  elif found=$(type -P "$1"); then
    realpath "$found"
  else
    echo "$0: no binary $1" >&2
    exit 1
  fi
}
old=$(absolute "$old")
new=$(absolute "$new")
[ "$new" != none ] || { echo "$0: NEW must be a binary" >&2; exit 1; }
mkdir -p "$data/runs"
data=$(realpath "$data")
runs=$data/runs

# `have LABEL FILE HOW...`: FILE exists, or is made by HOW (with --make: HOW gets FILE.part as
# its output and FILE is renamed from it when HOW succeeds), or LABEL is skipped with a line.
have() {
  local label=$1 file=$2
  shift 2
  [ -e "$file" ] && return 0
  if [ "$make" = 1 ]; then
    echo "making $file" >&2
    "$@" "$file.part" >&2 && mv "$file.part" "$file" && return 0
    echo "$0: could not make $file" >&2
    exit 1
  fi
  echo "skip $label: $file is missing (run with --make to make it)"
  return 1
}

rustdoc() { python3 "$here/make_rustdoc_jsonl.py" "$1"; }
# make_text_corpus.py's arguments in the order `have` gives them (the output last).
text_corpus() { python3 "$here/make_text_corpus.py" "$data/rustdoc.jsonl" "$3" --target-mb "$1" --seed "$2"; }
text_corpus_over_rustdoc() { have "rustdoc text" "$data/rustdoc.jsonl" rustdoc && text_corpus "$@"; }

# `measure RUN WHICH OUT BINARY ARGS...`: runs BINARY ARGS and WHICH's flags (old or new) with
# standard output to OUT, standard error to RUN.log, under time (report in RUN.time) and
# timeout; prints the exit status.
measure() {
  local run=$1 which=$2 out=$3 binary=$4
  shift 4
  local flags=("${old_flags[@]}")
  [ "$which" = new ] && flags=("${new_flags[@]}")
  # `dedup` and `pairs` take --memory and --tmp-dir; `pairs` writes a summary (peak RSS, bytes
  # spilled) when the binary has its --summary (main before issue 17's step 3 has not).
  case $1 in
    dedup) ;;
    pairs)
      if "$binary" pairs --help 2> /dev/null | grep -q -- --summary; then
        flags+=(--summary "$run.json")
      fi ;;
    *) flags=() ;;
  esac
  local status=0 cap=()
  [ -z "${MEMORY_CAP:-}" ] || cap=(prlimit --as="$(numfmt --from=iec "$MEMORY_CAP")")
  /usr/bin/time -v -o "$run.time" timeout "$limit" ${cap[@]+"${cap[@]}"} "$binary" "$@" \
    ${flags[@]+"${flags[@]}"} > "$out" 2> "$run.log" || status=$?
  echo "$status"
}

# `same KIND OLD_OUT NEW_OUT`: whether the outputs hold the same decisions: "identical" (sorted
# lines byte for byte), "same ids"/"same pairs" (KIND's normal form alike), else "DIFFER".
same() {
  local kind=$1 a=$2 b=$3
  local sort=(env LC_ALL=C sort -S 20% -T "$data")
  if [ ! -f "$a" ] || [ ! -f "$b" ]; then
    echo "no output to compare"
    return
  fi
  if cmp -s <("${sort[@]}" "$a") <("${sort[@]}" "$b"); then
    echo identical
  elif cmp -s <(python3 "$here/scale_report.py" "$kind" < "$a" | "${sort[@]}") \
      <(python3 "$here/scale_report.py" "$kind" < "$b" | "${sort[@]}"); then
    echo "same $kind"
  else
    echo "DIFFER ($(wc -l < "$a") vs $(wc -l < "$b") lines)"
  fi
}

# `target LABEL INPUT KIND ARGS...`: neardup ARGS run by OLD then NEW, one row each. In ARGS,
# @RUN@ stands for the run's files (DATA/runs/LABEL.old or .new, then .json for a summary). KIND
# says which output is compared and how: ids, the removed documents written to @RUN@.removed;
# pairs, standard output.
target() {
  local label=$1 input=$2 kind=$3
  shift 3
  local run=$runs/${label//[^A-Za-z0-9.]/_}
  local which binary
  local -A binaries=([old]=$old [new]=$new) status=()
  for which in old new; do
    binary=${binaries[$which]}
    [ "$binary" = none ] && continue
    rm -f "$run.$which.json"
    status[$which]=$(measure "$run.$which" "$which" "$run.$which.stdout" "$binary" "${@//@RUN@/$run.$which}")
  done
  local output=stdout verdict="-"
  [ "$kind" = ids ] && output=removed
  if [ "${status[old]:-}" = 0 ] && [ "${status[new]}" = 0 ]; then
    verdict=$(same "$kind" "$run.old.$output" "$run.new.$output")
  fi
  for which in old new; do
    [ -n "${status[$which]:-}" ] || continue
    local summary=$run.$which.json shown=-
    [ "$which" = new ] && shown=$verdict
    python3 "$here/scale_report.py" row "$label" "$which" "$input" "$run.$which" \
      "${status[$which]}" "$summary" "$shown"
    rm -f "$run.$which.stdout" "$run.$which.removed"
  done
}

dedup_target() { target "$1" "$2" ids dedup "$2" --removed @RUN@.removed --summary @RUN@.json; }

echo "$(date -u +%FT%TZ) on $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GB; data in $data"
version() { [ "$1" = none ] || "$1" --version 2> /dev/null | head -n 1; }
echo "old: $old $(version "$old") ${OLD_FLAGS:+(flags: $OLD_FLAGS)}"
echo "new: $new $(version "$new") ${NEW_FLAGS:+(flags: $NEW_FLAGS)}"
python3 "$here/scale_report.py" header
for t in $targets; do
  case $t in
    corpora)
      for spec in $corpora; do
        mb=${spec%%:*} seed=${spec##*:}
        file=$data/text-${mb}mb-seed$seed.jsonl
        have "text ${mb} MB" "$file" text_corpus_over_rustdoc "$mb" "$seed" \
          && dedup_target "text ${mb} MB (seed $seed)" "$file"
      done ;;
    leads)
      file=$data/leads-$leads.jsonl
      have "$leads leads" "$file" python3 "$here/make_news_leads.py" --documents "$leads" \
        && dedup_target "$leads news leads" "$file" ;;
    identical)
      file=$data/identical-4m.jsonl.zst
      have "identical lines" "$file" "$here/make_identical_zst.sh" \
        && dedup_target "4M identical, .jsonl.zst" "$file" ;;
    pairs)
      for format in $fingerprint_formats; do
        file=$data/fingerprints-$fingerprints.$format
        have "$fingerprints fingerprints ($format)" "$file" python3 "$here/make_fingerprints.py" \
          --count "$fingerprints" --format "$format" \
          && target "pairs k=3, $fingerprints $format" "$file" pairs pairs --k 3 "$file"
      done ;;
    *) echo "$0: unknown target $t (corpora, leads, identical, pairs)" >&2; exit 2 ;;
  esac
done
