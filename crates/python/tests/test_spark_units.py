"""neardup.spark_units.dedup_units on a real local Spark (the local-cluster session of
test_spark.py) against the CLI's `neardup dedup --granularity` on the same JSON Lines file:
the kept records with their text rewritten, byte for byte."""

import json
import random
import subprocess

import pytest

import neardup.spark_units
from test_spark import spark  # noqa: F401 (the Spark session fixture)
from test_units import SHARED, WORDS


def _pages():
    """Pages of shared paragraphs around stories; exact and near copies of some (the document
    level removes them); paragraphs of other pages repeated with a word changed (the fraction
    rule removes them, the exact rule does not)."""
    rng = random.Random(21)
    stories = []
    for _ in range(200):
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
    for text in rng.sample(texts, 30):
        texts.append(text if rng.random() < 0.5 else text + "\n\nUpdated today.")
    texts.append("\n\n".join(SHARED))
    return [{"id": f"p{i}", "text": t} for i, t in enumerate(texts)]


def _line(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# (granularity, CLI options, dedup_units arguments)
CASES = [
    ("paragraph", [], {}),
    ("paragraph", ["--ngrams", "4", "--ngram-threshold", "0.6", "--keep", "longest"],
     {"ngrams": 4, "ngram_threshold": 0.6, "keep": "longest"}),
    ("line", ["--units-only", "--min-chars", "60"], {"units_only": True, "min_chars": 60}),
]


@pytest.mark.parametrize("granularity,options,arguments", CASES)
def test_spark_units_equal_the_cli(spark, neardup_bin, tmp_path, granularity, options, arguments):  # noqa: F811
    docs = _pages()
    path = tmp_path / "pages.jsonl"
    path.write_text("".join(_line(d) + "\n" for d in docs), encoding="utf-8")
    kept = tmp_path / "kept.jsonl"
    subprocess.run(
        [neardup_bin, "dedup", str(path), "--granularity", granularity, *options, "--kept", str(kept)],
        check=True, capture_output=True,
    )
    df = spark.read.json(str(path))
    assert df.rdd.getNumPartitions() > 1, "the test must cross partitions"
    result = neardup.spark_units.dedup_units(df, granularity=granularity, **arguments)
    rows = sorted(result.collect(), key=lambda r: r["row_id"])
    result.unpersist()
    written = "".join(_line({"id": r["id"], "text": r["text"]}) + "\n" for r in rows if r["text"] is not None)
    assert written.encode("utf-8") == kept.read_bytes()
    assert sum(r["units_removed"] or 0 for r in rows) > 0, "the pages repeat units"
    if "--units-only" not in options:
        assert any(r["is_duplicate"] for r in rows), "the document level removes copies"
