#!/usr/bin/env python3
"""Derives relabelled copies of the Sohu text-matching test sets for `neardup eval`.

    sohu_pairs.py SOHU_DIR OUT_DIR

Reads SOHU_DIR/dd-test.jsonl and SOHU_DIR/dc-test.jsonl and writes OUT_DIR/dd.jsonl and
OUT_DIR/dc.jsonl (OUT_DIR must be outside the repository: the texts are third-party data) with
the same fields and `label` rewritten:

    0  unrelated (as given)            3  same topic (as given)
    5  same event, low overlap         6  same event, high character overlap (re-posted or
                                          re-headlined: the larger of the two containments
                                          of the character-bigram sets, white space removed,
                                          is at least 0.8)
    7  byte-identical texts, whatever their label (dd: 30 labelled 5 and 9 labelled 3: an
       exact duplicate must be flagged whatever the topic judges said)

Then `neardup eval OUT_DIR/dd.jsonl --text-a-field sentence1 --text-b-field sentence2
--positive 6,7 --negative 0` scores the duplicates against the unrelated pairs, and its
"flagged" line counts label 3 (must stay unflagged) and label 7 (must all be found).
Prints the number of pairs per new label.
"""

from __future__ import annotations

import collections
import json
import sys
from pathlib import Path

HIGH_OVERLAP = 0.8


def bigrams(text: str) -> set[str]:
    chars = "".join(text.split())
    return {chars[i : i + 2] for i in range(len(chars) - 1)} or {chars}


def relabel(row: dict) -> int:
    label, a, b = row["label"], row["sentence1"], row["sentence2"]
    if a == b:
        return 7
    if label != 5:
        return label
    sa, sb = bigrams(a), bigrams(b)
    shared = len(sa & sb)
    return 6 if max(shared / len(sa), shared / len(sb)) >= HIGH_OVERLAP else 5


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    source, out = Path(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    for name in ("dd", "dc"):
        counts: collections.Counter = collections.Counter()
        with open(source / f"{name}-test.jsonl", encoding="utf-8") as f, open(
            out / f"{name}.jsonl", "w", encoding="utf-8"
        ) as w:
            for line in f:
                if not line.strip():
                    continue
                row = json.loads(line)
                row["label"] = relabel(row)
                counts[row["label"]] += 1
                w.write(json.dumps(row, ensure_ascii=False) + "\n")
        print(name, dict(sorted(counts.items())))


if __name__ == "__main__":
    main()
