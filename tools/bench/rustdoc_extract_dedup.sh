#!/usr/bin/env bash
# What main-content extraction does to dedup on pages that share navigation: `neardup dedup` over
# the Rust documentation installed with the toolchain (tens of thousands of pages, each with the
# same sidebars, headers and footers), with `--html all` and with `--html main`, printing the
# pages removed as exact and as near duplicates. Give a second binary (an older build) to
# compare before and after a change of the extractor.
#
# usage: tools/bench/rustdoc_extract_dedup.sh [NEARDUP [NEARDUP_BEFORE]]
#   (default target/release/neardup; DOCS=dir overrides the documentation folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
after=${1:-target/release/neardup}
before=${2:-}
docs=${DOCS:-"$(rustc --print sysroot)/share/doc/rust/html"}
[ -d "$docs" ] || { echo "no documentation at $docs" >&2; exit 2; }
summary=$(mktemp)
trap 'rm -f "$summary"' EXIT
printf '%-10s %-6s %9s %8s %8s %8s\n' build html documents exact near seconds
for build in after before; do
  bin=${!build}
  [ -n "$bin" ] || continue
  for mode in all main; do
    "$bin" dedup "$docs" --html "$mode" --summary "$summary" 2> /dev/null
    python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(f\"{sys.argv[2]:<10} {sys.argv[3]:<6} {s['documents']:>9} {s['exact_duplicates']:>8} {s['near_duplicates']:>8} {s['seconds']:>8.1f}\")" "$summary" "$build" "$mode"
  done
done
