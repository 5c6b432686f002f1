#!/usr/bin/env python3
"""Precision and recall of the bytes paragraph dedup removes, against the main-content
extractor's choice (issue 21, item 4).

For each page, ALL is its text as `neardup extract --html all` gives it and MAIN as
`neardup extract --html main` gives it; both have one block element a line. A line of ALL
(with its line break) is *content* when the same line occurs in MAIN (each line of MAIN
matches one line of ALL, as a multiset), else *boilerplate*: the bytes the extractor drops.
SPANS is the `--removed-spans` output of `neardup dedup --html all --granularity paragraph`
(byte offsets in ALL's text). Then, over the corpus:

    removed     = bytes of ALL inside a removed span
    precision   = boilerplate bytes removed / removed bytes
    recall      = boilerplate bytes removed / boilerplate bytes

Pages that paragraph dedup drops whole count with every byte removed. With REMOVED (the
`--removed` output of a combined run: documents decided first), the pages removed whole as
duplicate documents are left out of every figure (they are counted apart).

usage: paragraph_boilerplate.py ALL.jsonl MAIN.jsonl SPANS.jsonl [REMOVED.jsonl]
"""
import collections
import json
import sys


def lines_with_offsets(text):
    """(start, end, line) for each line, `end` past its line break."""
    out, start = [], 0
    for line in text.splitlines(keepends=True):
        out.append((start, start + len(line.encode()), line.rstrip("\r\n")))
        start += len(line.encode())
    return out


def main():
    all_path, main_path, spans_path = sys.argv[1:4]
    main_lines = {}
    with open(main_path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            main_lines[doc["id"]] = collections.Counter(
                l.strip() for l in doc["text"].splitlines() if l.strip()
            )
    spans = {}
    with open(spans_path, encoding="utf-8") as f:
        for line in f:
            report = json.loads(line)
            spans[report["id"]] = (report["removed_spans"], report["dropped"])
    gone = set()
    if len(sys.argv) > 4:
        with open(sys.argv[4], encoding="utf-8") as f:
            gone = {json.loads(line)["id"] for line in f}
    total = boiler = removed = removed_boiler = 0
    pages = 0
    with open(all_path, encoding="utf-8") as f:
        for line in f:
            doc = json.loads(line)
            if doc["id"] in gone:
                continue
            pages += 1
            left = main_lines.get(doc["id"], collections.Counter()).copy()
            removed_spans, dropped = spans.get(doc["id"], ([], False))
            at = 0  # the first removed span that may overlap the line (spans ascend)
            for start, end, text in lines_with_offsets(doc["text"]):
                size = end - start
                key = text.strip()
                is_content = bool(key) and left[key] > 0
                if is_content:
                    left[key] -= 1
                while at < len(removed_spans) and removed_spans[at][1] <= start:
                    at += 1
                inside, i = 0, at
                while i < len(removed_spans) and removed_spans[i][0] < end:
                    s, e = removed_spans[i]
                    inside += max(0, min(end, e) - max(start, s))
                    i += 1
                if dropped:
                    inside = size
                total += size
                removed += inside
                if not is_content:
                    boiler += size
                    removed_boiler += inside
    result = {
        "pages": pages,
        "pages_removed_whole": len(gone),
        "bytes": total,
        "boilerplate_bytes": boiler,
        "boilerplate_share": boiler / max(total, 1),
        "removed_bytes": removed,
        "removed_share": removed / max(total, 1),
        "boilerplate_removed_bytes": removed_boiler,
        "precision": removed_boiler / max(removed, 1),
        "recall": removed_boiler / max(boiler, 1),
    }
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
