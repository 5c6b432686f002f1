#!/usr/bin/env python3
"""Write a JSONL crawl ({"url": ..., "text": ...}, one page a line) with planted mirrors, fast
and in constant memory, for `neardup mirrors` at scale (tools/bench/mirrors_scale.sh).

Sites: host h{n}.{tld} with a Zipf-like number of pages (1 to 2,000, mean about 100) under
paths one to three segments deep (`sec3/page17.html`, `sec3/sub1/page17.html`), each page a
short text of its own. Planted:
  - mirrors (--mirror-share of the sites, default 0.08): a copy of the site, each page copied
    with probability 0.9 and edited (another text) with probability 0.05, either on a host of
    its own (`m{n}.mirror.net`), or under a path on a shared mirror host
    (`mirrors{k}.example.org/pub/h{n}` or `.../a/h{n}`: prefixes at depths 1 and 2);
  - boilerplate: every site also serves `index.html` with one of a few shared texts (groups of
    thousands of pages with the same key and last segment, which cast no votes);
  - unrelated pages that share paths with other sites (the same `sec1/page1.html`, other text).
Pages are written site by site (a site, then its mirror copies), until --urls pages. The same
arguments make the same file. What was planted is printed at the end.

usage: make_crawl.py OUT.jsonl --urls N [--seed 1] [--mirror-share 0.08]
"""
import argparse
import random
import sys
import time


def site_pages(rng, site):
    """The relative paths of a site's pages."""
    count = min(2000, max(1, int(rng.paretovariate(1.2) * 20)))
    paths = []
    for n in range(count):
        depth = rng.choice((1, 2, 2, 3))
        if depth == 1:
            paths.append(f"page{n}.html")
        elif depth == 2:
            paths.append(f"sec{n % 7}/page{n}.html")
        else:
            paths.append(f"sec{n % 7}/sub{n % 3}/page{n}.html")
    return paths


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--urls", type=int, required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--mirror-share", type=float, default=0.08)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    tlds = ("org", "com", "net", "de")
    boiler = [f"welcome to our site, template {k} of the hosting company" for k in range(4)]
    planted = {"sites": 0, "pages": 0, "mirrors": 0, "mirror pages": 0, "edited": 0}
    start = time.time()
    written = 0
    site = 0
    with open(args.out, "w", buffering=1 << 20) as out:
        while written < args.urls:
            host = f"h{site}.{tlds[site % 4]}"
            paths = site_pages(rng, site)
            texts = [f"site {site} page {p} {rng.getrandbits(40):x}" for p in paths]
            lines = [f'{{"url":"http://{host}/index.html","text":"{boiler[site % 4]}"}}\n']
            lines += [
                f'{{"url":"http://{host}/{p}","text":"{t}"}}\n' for p, t in zip(paths, texts)
            ]
            planted["sites"] += 1
            if rng.random() < args.mirror_share:
                planted["mirrors"] += 1
                kind = rng.randrange(3)
                if kind == 0:
                    base = f"https://www.m{site}.mirror.net"
                elif kind == 1:
                    base = f"http://mirrors{site % 50}.example.org/pub/h{site}"
                else:
                    base = f"http://mirrors{site % 50}.example.org/a/h{site}"
                for p, t in zip(paths, texts):
                    if rng.random() < 0.9:
                        if rng.random() < 0.05:
                            t = f"edited {rng.getrandbits(40):x}"
                            planted["edited"] += 1
                        lines.append(f'{{"url":"{base}/{p}","text":"{t}"}}\n')
                        planted["mirror pages"] += 1
            lines = lines[: args.urls - written]
            out.writelines(lines)
            written += len(lines)
            site += 1
    planted["pages"] = written
    seconds = time.time() - start
    print(
        f"make_crawl.py: {args.out}: "
        + ", ".join(f"{v} {k}" for k, v in planted.items())
        + f" in {seconds:.1f} s",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
