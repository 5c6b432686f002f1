#!/usr/bin/env bash
# What main-content extraction does to dedup on pages that share navigation: `neardup dedup` over
# the Rust documentation installed with the toolchain (tens of thousands of pages, each with the
# same sidebars, headers and footers), with `--html all` and with `--html main`, printing the
# pages removed as exact and as near duplicates and the duplicate pairs found (exact pairs: the
# same text; near pairs: distinct texts judged near duplicates). Give a second binary (an older
# build) to compare before and after a change of the extractor.
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
pairs=$(mktemp)
trap 'rm -f "$summary" "$pairs"' EXIT
printf '%-10s %-16s %-6s %9s %13s %12s %11s %10s %8s\n' build method html documents \
  removed-exact removed-near pairs-exact pairs-near seconds
for method in cascade "simhash --k 3"; do
for build in after before; do
  bin=${!build}
  [ -n "$bin" ] || continue
  for mode in all main; do
    # shellcheck disable=SC2086 # the method is two words on purpose
    "$bin" dedup "$docs" --method $method --html "$mode" --summary "$summary" --pairs "$pairs" 2> /dev/null
    python3 -c "
import collections, json, sys
s = json.load(open(sys.argv[1]))
kinds = collections.Counter(json.loads(line)['kind'] for line in open(sys.argv[2]))
print(f\"{sys.argv[3]:<10} {sys.argv[5]:<16} {sys.argv[4]:<6} {s['documents']:>9} {s['exact_duplicates']:>13} {s['near_duplicates']:>12} {kinds['exact']:>11} {kinds['near']:>10} {s['seconds']:>8.1f}\")" \
      "$summary" "$pairs" "$build" "$mode" "$method"
  done
done
done
