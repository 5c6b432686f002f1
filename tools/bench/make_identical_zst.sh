#!/usr/bin/env bash
# The tiny input of issue 17: one `.jsonl.zst` of 4 million identical tiny lines (about 6 KB
# compressed, 68 MB of JSONL), where every document is an exact duplicate of the first. The
# lines carry no id: the reader names each document by its place (`FILE:LINE`), so the ids
# of kept and removed documents stay distinct. (A line with an id, `{"id": 0, "text": "same"}`,
# makes the issue's 9 KB file, every document then named "0".)
#
# usage: tools/bench/make_identical_zst.sh OUT.jsonl.zst [LINES] [LINE]
#   LINES defaults to 4000000, LINE to {"text": "same"}.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  echo "usage: $0 OUT.jsonl.zst [LINES] [LINE]" >&2
  exit 2
fi
out=$1
lines=${2:-4000000}
line=${3:-'{"text": "same"}'}
command -v zstd > /dev/null || { echo "$0: zstd is missing (apt-get install -y zstd)" >&2; exit 1; }
# `yes` ends on the broken pipe when `head` has its lines: that is not a failure.
{ yes "$line" || true; } | head -n "$lines" | zstd -19 -q -f -o "$out"
echo "$out: $lines identical lines, $(stat -c %s "$out") bytes compressed"
