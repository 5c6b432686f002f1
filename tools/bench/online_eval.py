#!/usr/bin/env python3
"""The online path against the batch decision on the CopyCat pairs (BENCHMARKS.md, "One policy").

    python3 tools/bench/online_eval.py DATA_DIR [NEARDUP_BINARY]

For every labelled pair (positives: label 3, or 3 and 2 for the lenient count; negatives: 0.5)
it takes the batch pairwise decision from `neardup compare --json` (the policy's decision for
the two texts) and the online one from a database: every text_a inserted with
`neardup index add --insert always`, then every text_b checked with `neardup index check`;
the pair is a duplicate online when text_a's id is among the check's verified matches. Prints
the agreement, and precision, recall and F1 of both, under the default policy. Stored bytes
per document come from `neardup index stats`. Skips, with a message, when the data is absent.
"""

import json
import os
import subprocess
import sys
import tempfile


def metrics(flags, labels, positives):
    tp = sum(1 for f, l in zip(flags, labels) if f and l in positives)
    fp = sum(1 for f, l in zip(flags, labels) if f and l == 0.5)
    fn = sum(1 for f, l in zip(flags, labels) if not f and l in positives)
    p = tp / (tp + fp) if tp + fp else 0.0
    r = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f1


def main():
    data = sys.argv[1] if len(sys.argv) > 1 else "../shared/data"
    binary = sys.argv[2] if len(sys.argv) > 2 else "target/release/neardup"
    path = os.path.join(data, "copycat-canonical-pairs.jsonl")
    if not os.path.exists(path):
        print(f"online_eval.py: no {path}; skipped", file=sys.stderr)
        return
    pairs = [json.loads(line) for line in open(path, encoding="utf-8")]
    pairs = [p for p in pairs if p["label"] in (3, 2, 0.5)]
    with tempfile.TemporaryDirectory() as tmp:
        # Batch: the policy's decision for each pair (`compare`), in parallel.
        procs = []
        for i, pair in enumerate(pairs):
            a, b = os.path.join(tmp, f"{i}.a"), os.path.join(tmp, f"{i}.b")
            with open(a, "w", encoding="utf-8") as f:
                f.write(pair["text_a"])
            with open(b, "w", encoding="utf-8") as f:
                f.write(pair["text_b"])
        batch = []
        for start in range(0, len(pairs), 8):
            procs = [
                subprocess.Popen(
                    [binary, "compare", f"{tmp}/{i}.a", f"{tmp}/{i}.b", "--json"],
                    stdout=subprocess.PIPE,
                )
                for i in range(start, min(start + 8, len(pairs)))
            ]
            for proc in procs:
                out, _ = proc.communicate()
                batch.append(json.loads(out)["decision"]["verdict"] == "duplicate")
        # Online: insert every text_a, check every text_b.
        db = os.path.join(tmp, "db")
        with open(os.path.join(tmp, "a.jsonl"), "w", encoding="utf-8") as f:
            for i, pair in enumerate(pairs):
                f.write(json.dumps({"id": f"a{i}", "text": pair["text_a"]}) + "\n")
        with open(os.path.join(tmp, "b.jsonl"), "w", encoding="utf-8") as f:
            for i, pair in enumerate(pairs):
                f.write(json.dumps({"id": f"b{i}", "text": pair["text_b"]}) + "\n")
        subprocess.run(
            [binary, "index", "add", "--db", db, "--insert", "always", f"{tmp}/a.jsonl"],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        checked = subprocess.run(
            [binary, "index", "check", "--db", db, f"{tmp}/b.jsonl"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        online = []
        for i, line in enumerate(checked.splitlines()):
            result = json.loads(line)
            online.append(any(m["id"] == f"a{i}" for m in result["matches"]))
        stats = json.loads(
            subprocess.run(
                [binary, "index", "stats", "--db", db], check=True, capture_output=True, text=True
            ).stdout
        )
        disk = sum(
            os.path.getsize(os.path.join(root, name))
            for root, _, names in os.walk(db)
            for name in names
        )
    labels = [p["label"] for p in pairs]
    agree = sum(1 for x, y in zip(batch, online) if x == y)
    text_bytes = sum(len(p["text_a"].encode()) for p in pairs)
    print(f"pairs {len(pairs)}; policy: {stats['policy']}")
    print(f"agreement online vs batch: {agree}/{len(pairs)} = {agree / len(pairs):.4f}")
    for name, positives in (("strict (3)", (3,)), ("lenient (3, 2)", (3, 2))):
        bp, br, bf = metrics(batch, labels, positives)
        op, orr, of = metrics(online, labels, positives)
        print(
            f"{name:15} batch P {bp:.3f} R {br:.3f} F1 {bf:.3f} | "
            f"online P {op:.3f} R {orr:.3f} F1 {of:.3f} | F1 gap {abs(bf - of):.4f}"
        )
    print(
        f"database: {stats['documents']} documents, {disk / stats['documents']:.0f} bytes on disk "
        f"per document (texts average {text_bytes / len(pairs):.0f} bytes)"
    )


if __name__ == "__main__":
    main()
