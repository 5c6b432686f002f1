#!/usr/bin/env python3
"""datatrove's span dedup (its SentenceDedup: signatures, find, filter; C4's rule) on a JSONL
corpus, one task, in a venv that has datatrove (`pip install datatrove`): with `--lines` it
splits on line breaks (`split_sentences=False`: line dedup, the paragraph of `--html all`
text), else into sentences, in spans of `--n` (1 for lines). Its document minimums are turned
off (`min_doc_words=0`, `min_num_sentences=0`) so that it removes units only, as
`neardup dedup --granularity --units-only` does. Prints the bytes of text read and left.

usage: PEERS_PY datatrove_dedup.py CORPUS.jsonl WORKDIR [--lines] [--n N]
"""
import argparse
import json
import os
import time

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.dedup.sentence_dedup import (
    SentDedupConfig,
    SentenceDedupFilter,
    SentenceDedupSignature,
    SentenceFindDedups,
)
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus")
    ap.add_argument("work")
    ap.add_argument("--lines", action="store_true")
    ap.add_argument("--n", type=int, default=3)
    args = ap.parse_args()
    config = SentDedupConfig(
        n_sentences=1 if args.lines else args.n,
        split_sentences=not args.lines,
        min_doc_words=0,
        min_num_sentences=0,
        only_dedup_in_index=True,
    )
    folder, name = os.path.split(os.path.abspath(args.corpus))
    work = os.path.abspath(args.work)
    started = time.time()
    reader = lambda: JsonlReader(folder, glob_pattern=name, id_key="id", text_key="text")
    for stage, pipeline in enumerate((
        [reader(), SentenceDedupSignature(output_folder=f"{work}/sigs", config=config)],
        [SentenceFindDedups(data_folder=f"{work}/sigs", output_folder=f"{work}/dups", config=config)],
        [
            reader(),
            SentenceDedupFilter(data_folder=f"{work}/dups", config=config),
            JsonlWriter(f"{work}/out", compression=None),
        ],
    )):
        # A folder of logs a stage: the executor skips tasks its folder marks as done.
        logs = f"{work}/logs{stage}"
        LocalPipelineExecutor(pipeline=pipeline, tasks=1, workers=1, logging_dir=logs).run()
    seconds = time.time() - started
    read = left = documents = 0
    with open(args.corpus, encoding="utf-8") as f:
        for line in f:
            read += len(json.loads(line)["text"].encode())
    for out in sorted(os.listdir(f"{work}/out")):
        with open(f"{work}/out/{out}", encoding="utf-8") as f:
            for line in f:
                documents += 1
                left += len(json.loads(line)["text"].encode())
    print(
        f"datatrove: {read / 1e6:.1f} MB of text in {seconds:.1f} s, {documents} documents written, "
        f"{(read - left) / 1e6:.1f} MB removed ({100 * (read - left) / max(read, 1):.1f}%)"
    )


if __name__ == "__main__":
    main()
