#!/usr/bin/env python3
"""CCNet's paragraph rule in plain Python (cc_net/dedup.py, read, not copied): each line of a
document's text is normalised as cc_net's normalize_for_dedup does (strip, lower case, digits
to 0, punctuation and non-printing characters removed), hashed (the first 8 bytes of SHA-1),
and dropped when its hash was seen before (in an earlier document or earlier in the same
one); a document left empty is dropped. Reads JSONL on stdin (or a file), writes the
rewritten records to stdout, and prints its figures to stderr."""
import hashlib
import json
import re
import sys
import time
import unicodedata

DIGIT_RE = re.compile(r"\d")
# cc_net's PUNCT_OR_NON_PRINTING_CHARS_RE: Unicode punctuation and control characters.
PUNCT = "".join(
    chr(c) for c in range(0x110000)
    if unicodedata.category(chr(c)).startswith("P") or unicodedata.category(chr(c)) == "Cc"
)
PUNCT_RE = re.compile("[" + re.escape(PUNCT) + "]")


def normalize_for_dedup(line):
    line = line.strip()
    if not line:
        return line
    line = line.lower()
    line = DIGIT_RE.sub("0", line)
    return PUNCT_RE.sub("", line)


def main():
    source = open(sys.argv[1], encoding="utf-8") if len(sys.argv) > 1 else sys.stdin
    out = sys.stdout
    seen = set()
    docs = kept_docs = lines = removed = 0
    text_bytes = 0
    started = time.time()
    for raw in source:
        doc = json.loads(raw)
        text = doc.get("text") or ""
        docs += 1
        text_bytes += len(text.encode("utf-8"))
        kept = []
        for line in text.split("\n"):
            h = hashlib.sha1(normalize_for_dedup(line).encode("utf-8")).digest()[:8]
            lines += 1
            if h in seen:
                removed += 1
                continue
            seen.add(h)
            kept.append(line)
        if not kept:
            continue
        doc["text"] = "\n".join(kept)
        kept_docs += 1
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    seconds = time.time() - started
    print(
        f"ccnet-python: {docs} documents, {text_bytes / 1e6:.1f} MB of text in {seconds:.2f} s "
        f"({text_bytes / 1e6 / seconds:.1f} MB/s): {removed} of {lines} lines removed, "
        f"{kept_docs} documents kept",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
