"""Shared helpers for the peer benchmark scripts (JSONL reading, report)."""

from __future__ import annotations

import json
import sys
import time


def read_texts(path: str, field: str, limit: int | None) -> tuple[list[str], float]:
    """Returns the texts of `field` from a JSONL file and the seconds spent.

    Lines are split on '\\n' only (newline='\\n'), so texts holding raw U+2028,
    U+0085 etc. stay intact. Blank lines are skipped; a record without a string
    in `field` is an error (exit 2) naming the line.
    """
    def fail(msg: str) -> None:
        print(msg, file=sys.stderr)
        sys.exit(2)

    t0 = time.perf_counter()
    texts: list[str] = []
    with open(path, encoding="utf-8", newline="\n") as f:
        for lineno, line in enumerate(f, 1):
            if limit is not None and len(texts) >= limit:
                break
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                fail(f"{path}:{lineno}: invalid JSON: {e}")
            text = obj.get(field) if isinstance(obj, dict) else None
            if not isinstance(text, str):
                fail(f"{path}:{lineno}: no string field {field!r}")
            texts.append(text)
    return texts, time.perf_counter() - t0


def utf8_bytes(texts: list[str]) -> int:
    # surrogatepass: JSON may carry lone surrogates (\\ud800); count them as
    # 3 bytes rather than failing.
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


def report(peer: str, texts: list[str], seconds: float, read_seconds: float, **extra) -> None:
    nbytes = utf8_bytes(texts)
    out = {
        "peer": peer,
        "documents": len(texts),
        "bytes": nbytes,
        "seconds": round(seconds, 6),
        "mb_per_s": round(nbytes / 1e6 / seconds, 4) if seconds > 0 else None,
        "docs_per_s": round(len(texts) / seconds, 2) if seconds > 0 else None,
        "read_seconds": round(read_seconds, 6),
        "python": sys.version.split()[0],
    }
    out.update(extra)
    print(json.dumps(out, ensure_ascii=False), flush=True)
