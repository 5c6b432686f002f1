#!/usr/bin/env bash
# Paragraph dedup against the main-content extractor (issue 21, item 4): the Rust documentation
# installed with the toolchain (every page shares sidebars, headers and footers), read with
# `--html all` (every visible block), deduplicated by paragraph (`--units-only`: the pages
# stay, their repeated paragraphs go); the bytes it removes are scored against what
# `--html main` drops (tools/bench/paragraph_boilerplate.py defines precision and recall).
# Then the same with datatrove's paragraph or line dedup if PEERS names a Python that has it.
#
# usage: tools/bench/paragraph_boilerplate.sh [NEARDUP]
#   (default target/release/neardup; DOCS=dir overrides the documentation folder; OUT=dir
#   keeps the extracted texts and spans there)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../../target/release/neardup}
docs=${DOCS:-"$(rustc --print sysroot)/share/doc/rust/html"}
[ -d "$docs" ] || { echo "no documentation at $docs" >&2; exit 2; }
out=${OUT:-$(mktemp -d)}
[ -n "${OUT:-}" ] || trap 'rm -rf "$out"' EXIT
mkdir -p "$out"
echo "documentation: $docs ($(du -sb "$docs" | cut -f1) bytes), $(nproc) cores"
"$bin" extract "$docs" --html all > "$out/all.jsonl"
"$bin" extract "$docs" --html main > "$out/main.jsonl"
# The rules: the exact one by paragraph and by spans of 3 sentences, and the fraction rule
# (dolma's) by paragraph at its default threshold (1.0) and at 0.5 (RULES overrides, one rule
# a line).
rules=${RULES:-"paragraph
sentences:3
paragraph --ngrams 13
paragraph --ngrams 13 --ngram-threshold 0.5"}
while read -r unit rule; do
    # shellcheck disable=SC2086 # the rule's options, split on purpose
    /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$bin" dedup "$docs" --html all \
        --granularity "$unit" $rule --units-only --removed-spans "$out/spans.jsonl" \
        --summary "$out/summary.json" 2> "$out/stderr" < /dev/null || { cat "$out/stderr"; exit 1; }
    read -r seconds rss_kb user sys < "$out/time"
    echo "neardup $unit $rule (--html all, --units-only): $seconds s wall, $(echo "$user + $sys" | bc) s CPU, $((rss_kb / 1024)) MB peak RSS"
    grep "^neardup: below" "$out/stderr" || true
    python3 "$here/paragraph_boilerplate.py" "$out/all.jsonl" "$out/main.jsonl" "$out/spans.jsonl"
done <<< "$rules"
# One run does both: duplicate pages removed whole first (by the default policy), then the
# paragraphs of the pages kept, in keep order (--keep first, then longest: a paragraph two
# pages share stays in the longer); the score is over the pages kept.
for keep in first longest; do
    /usr/bin/time -f "%e %M %U %S" -o "$out/time" "$bin" dedup "$docs" --html all --keep "$keep" \
        --granularity paragraph --removed "$out/removed.jsonl" --removed-spans "$out/spans.jsonl" \
        --summary "$out/summary.json" 2> "$out/stderr" || { cat "$out/stderr"; exit 1; }
    read -r seconds rss_kb user sys < "$out/time"
    echo "neardup documents + paragraph --keep $keep (--html all): $seconds s wall, $(echo "$user + $sys" | bc) s CPU, $((rss_kb / 1024)) MB peak RSS"
    grep -E "^neardup: ([0-9]+ exact|below)" "$out/stderr" || true
    python3 "$here/paragraph_boilerplate.py" "$out/all.jsonl" "$out/main.jsonl" "$out/spans.jsonl" \
        "$out/removed.jsonl"
done
