#!/usr/bin/env python3
"""Make a JSONL corpus of real English text from the Rust documentation installed with the
toolchain: every HTML page, tags, scripts and styles stripped, entities decoded, one object
{"id": relative path, "text": ...} per line. Used by the fingerprint throughput benchmark.

usage: make_rustdoc_jsonl.py OUT.jsonl [--max-mb N] [--docs DIR]
"""
import argparse
import html.parser
import json
import os
import subprocess


class Stripper(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self.skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self.skip:
            self.skip -= 1

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--max-mb", type=float, default=300)
    ap.add_argument("--docs")
    args = ap.parse_args()
    docs = args.docs or os.path.join(
        subprocess.check_output(["rustc", "--print", "sysroot"], text=True).strip(),
        "share/doc/rust/html")
    limit, total, count = args.max_mb * 1e6, 0, 0
    with open(args.out, "w", encoding="utf-8") as out:
        for root, dirs, files in os.walk(docs):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".html"):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    parser = Stripper()
                    parser.feed(f.read())
                text = " ".join(" ".join(parser.parts).split())
                if len(text) < 200:
                    continue
                line = json.dumps({"id": os.path.relpath(path, docs), "text": text}, ensure_ascii=False)
                out.write(line + "\n")
                total += len(line.encode()) + 1
                count += 1
                if total >= limit:
                    print(f"{count} documents, {total / 1e6:.1f} MB")
                    return
    print(f"{count} documents, {total / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
