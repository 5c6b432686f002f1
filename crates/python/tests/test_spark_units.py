"""neardup.spark_units.dedup_units on a real local Spark (the local-cluster session of
test_spark.py) against the CLI's `neardup dedup --granularity` on the same JSON Lines files,
two dumps in sequence with a seen file each (the CLI's and the Spark door's): the kept records
with their text rewritten, the reports of `--removed-spans` and the seen files, byte for
byte."""

import json
import random
import subprocess

import pytest

import neardup.spark_units
from neardup._neardup import UnitKeys
from test_spark import spark  # noqa: F401 (the Spark session fixture)
from test_units import SHARED, WORDS


def _dumps():
    """Two dumps of pages: shared paragraphs around stories; exact and near copies of some
    (the document level removes them); paragraphs of other pages repeated with a word changed
    (the fraction rule removes them, the exact rule does not). The second dump starts with a
    page of shared paragraphs and has copies of pages of the first (the seen file removes
    them: no document-level decision crosses dumps)."""
    rng = random.Random(21)
    stories = []
    for _ in range(120):
        story = []
        for i in range(rng.randrange(3, 8)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(6, 14)))
            story.append(f"The {words} met today, sentence {i} of the story.")
        stories.append(story)
    texts = []
    for story in stories:
        if texts and rng.random() < 0.4:
            other = rng.choice(stories)
            words = rng.choice(other).split()
            words[rng.randrange(len(words))] = rng.choice(WORDS)
            story = story + [" ".join(words)]
        paragraphs = rng.sample(SHARED, rng.randrange(0, 3)) + story + rng.sample(SHARED, rng.randrange(0, 2))
        texts.append("\n\n".join(paragraphs))
    first, second = texts[:60], ["\n\n".join(SHARED[:2])] + texts[60:]
    for dump, source in ((first, texts[:60]), (second, texts)):
        for text in rng.sample(source, 10):
            dump.append(text if rng.random() < 0.5 else text + "\n\nUpdated today.")
    start = len(first)
    return [
        [{"id": f"p{i}", "text": t} for i, t in enumerate(first)],
        [{"id": f"p{start + i}", "text": t} for i, t in enumerate(second)],
    ]


def _line(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# (granularity, CLI options, dedup_units arguments): the fraction rule after the documents,
# in keep order, rows named by their ids; the exact rule alone with a minimum, rows numbered.
CASES = [
    ("paragraph", ["--ngrams", "4", "--ngram-threshold", "0.6", "--keep", "longest"],
     {"ngrams": 4, "ngram_threshold": 0.6, "keep": "longest", "id_col": "id"}),
    ("line", ["--units-only", "--min-chars", "60"], {"units_only": True, "min_chars": 60}),
]


@pytest.mark.parametrize("granularity,options,arguments", CASES)
def test_spark_units_equal_the_cli_across_dumps(spark, neardup_bin, tmp_path, granularity, options, arguments):  # noqa: F811
    for n, docs in enumerate(_dumps()):
        path = tmp_path / f"dump{n}.jsonl"
        path.write_text("".join(_line(d) + "\n" for d in docs), encoding="utf-8")
        kept, spans, removed = (tmp_path / f"{name}{n}.jsonl" for name in ("kept", "spans", "removed"))
        subprocess.run(
            [neardup_bin, "dedup", str(path), "--granularity", granularity, *options, "--kept", str(kept),
             "--removed-spans", str(spans), "--seen", str(tmp_path / "cli.seen"),
             *([] if "--units-only" in options else ["--removed", str(removed)])],
            check=True, capture_output=True,
        )
        rows = spark.sparkContext.parallelize([(d["id"], d["text"]) for d in docs], 3)
        df = spark.createDataFrame(rows, "id string, text string")  # three partitions, in order
        result = neardup.spark_units.dedup_units(df, granularity=granularity, seen=tmp_path / "spark.seen",
                                                 **arguments)
        rows = sorted(result.collect(), key=lambda r: int(r["id"][1:]))
        result.unpersist()
        written = "".join(_line({"id": r["id"], "text": r["text"]}) + "\n" for r in rows if r["text"] is not None)
        assert written.encode("utf-8") == kept.read_bytes()
        reports = "".join(
            _line({"id": r["id"], **{c: r[c] for c in neardup.spark_units.UNIT_COLUMNS}}) + "\n"
            for r in rows if r["units_removed"] or r["dropped"]
        )
        assert reports.encode("utf-8") == spans.read_bytes()
        assert (tmp_path / "spark.seen").read_bytes() == (tmp_path / "cli.seen").read_bytes()
        if n == 1:
            assert rows[0]["dropped"], "the seen file of the first dump removes its shared paragraphs"
        if "--units-only" in options:
            continue
        cli_removed = sorted((d["id"], d["duplicate_of"]) for d in map(json.loads, removed.read_text().splitlines()))
        named = "id" if "id_col" in arguments else "row_id"
        by_number = {r[named]: r["id"] for r in rows}
        spark_removed = sorted((r["id"], by_number[r["duplicate_of"]]) for r in rows if r["is_duplicate"])
        assert spark_removed and spark_removed == cli_removed


def test_the_seen_file_is_read_in_ranges_and_written_from_sorted_chunks(tmp_path):
    import numpy as np

    keys = UnitKeys(granularity="line")
    path = tmp_path / "units.seen"
    chunks = [np.array([1, 5], np.int64), np.array([5, 9, -2], np.int64)]  # -2: 2⁶⁴ - 2, the largest
    assert keys.write_seen(path, iter(chunks)) == 4, "a repeat across chunks is written once"
    assert keys.seen_count(path) == 4
    assert keys.read_seen(path, 1, 2).tolist() == [5, 9] and keys.read_seen(path, 3, 9).tolist() == [-2]
    saved = path.read_bytes()
    with pytest.raises(neardup.NeardupError, match="ascending"):
        keys.write_seen(path, [np.array([9, 1], np.int64)])

    def failing():
        yield np.array([1], np.int64)
        raise RuntimeError("the job failed")

    with pytest.raises(RuntimeError, match="the job failed"):
        keys.write_seen(path, failing())
    assert path.read_bytes() == saved, "a failed write leaves the file as it was"
    with pytest.raises(neardup.NeardupError, match="another rule"):
        UnitKeys(granularity="paragraph").seen_count(path)
