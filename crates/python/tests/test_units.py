"""Dedup below the document in Python (`neardup.dedup(..., granularity=...)`): the same answer
as `neardup dedup --granularity`, byte for byte (the rewritten records, the removed spans and
the saved seen file), on a corpus with repeated paragraphs, near and exact copies."""

import json
import random
import subprocess

import pytest

import neardup

SHARED = [
    "Home | News | Sport | Weather",
    "Accept cookies? We use cookies to improve your experience.",
    "Copyright 2026 The Daily Example. All rights reserved.",
    "Subscribe to our newsletter — “the latest stories”, every morning.",
]
WORDS = "council budget river school market train storm harvest museum bridge library festival election hospital factory garden airport concert village harbour mayor teacher farmer doctor pilot singer".split()


def _corpus():
    rng = random.Random(21)
    texts = []
    for _ in range(60):
        story = []
        for i in range(rng.randrange(4, 14)):
            words = " ".join(rng.choice(WORDS) for _ in range(rng.randrange(3, 8)))
            story.append(f"The {words} met today. Sentence {i} of the story, ünïcödé 東京.")
        paragraphs = rng.sample(SHARED, rng.randrange(0, 3)) + story + rng.sample(SHARED, rng.randrange(0, 2))
        texts.append("\n\n".join(paragraphs) + rng.choice(["", "\n", "\n\n"]))
    for text in rng.sample(texts, 12):
        change = rng.randrange(3)
        texts.append(text if change == 0 else text.upper() if change == 1 else text + "\n\nUpdated today.")
    texts.append("")
    texts.append("\n\n".join(SHARED))
    return texts


def _line(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@pytest.mark.parametrize(
    "granularity, extra",
    [
        ("paragraph", []),
        ("sentences:3", []),
        ("line", ["--min-chars", "40"]),
        ("paragraph", ["--units-only"]),
        ("paragraph", ["--ngrams", "4", "--ngram-threshold", "0.5"]),
        ("line", ["--ngrams", "3", "--units-only"]),
        ("paragraph", ["--keep", "longest"]),
    ],
)
def test_python_equals_the_cli_byte_for_byte(neardup_bin, tmp_path, granularity, extra):
    texts = _corpus()
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(_line({"id": str(i), "text": t}) + "\n" for i, t in enumerate(texts)), encoding="utf-8")
    subprocess.run(
        [neardup_bin, "dedup", str(corpus), "--granularity", granularity, *extra,
         "--kept", str(tmp_path / "kept.jsonl"), "--removed-spans", str(tmp_path / "spans.jsonl"),
         "--seen", str(tmp_path / "cli.seen")],
        check=True, capture_output=True,
    )
    def option(name, kind):
        return kind(extra[extra.index(name) + 1]) if name in extra else None

    result = neardup.dedup(texts, granularity=granularity, min_chars=option("--min-chars", int),
                           seen=tmp_path / "py.seen", units_only="--units-only" in extra,
                           ngrams=option("--ngrams", int), ngram_threshold=option("--ngram-threshold", float),
                           keep=option("--keep", str) or "first")
    kept = "".join(_line({"id": str(i), "text": t}) + "\n" for i, t in enumerate(result.texts) if t is not None)
    # The fields in the order of `--removed-spans`' records.
    fields = ["units", "units_removed", "bytes_removed", "removed_spans", "dropped"]
    spans = "".join(
        _line({"id": str(i), **{f: report[f] for f in fields}}) + "\n"
        for i, report in enumerate(result.units)
        if report is not None and (report["units_removed"] > 0 or report["dropped"])
    )
    assert kept.encode() == (tmp_path / "kept.jsonl").read_bytes()
    assert spans.encode() == (tmp_path / "spans.jsonl").read_bytes()
    assert (tmp_path / "py.seen").read_bytes() == (tmp_path / "cli.seen").read_bytes()
    assert result.unit_figures["units_removed"] > 0, "the corpus repeats units"
    if "--units-only" in extra:
        assert all(result.keep) and not result.removals
    else:
        assert result.removals, "the corpus has copies the documents' decision removes"
        assert all(result.texts[r["id"]] is None for r in result.removals)


def test_without_granularity_nothing_changes_and_bad_arguments_are_errors():
    texts = ["One.\n\nTwo.", "One.\n\nThree."]
    assert neardup.dedup(texts).texts is None
    with pytest.raises(neardup.NeardupError):
        neardup.dedup(texts, granularity="sentences:0")
    with pytest.raises(neardup.NeardupError):
        neardup.dedup(texts, min_chars=3)
    result = neardup.dedup(texts, granularity="paragraph")
    assert result.texts == ["One.\n\nTwo.", "Three."]
    assert result.units[1]["removed_spans"] == [[0, 6]]


def test_keep_longest_takes_the_shared_paragraph_from_the_longest_text():
    texts = ["Menu\n\nShort.", "Menu\n\nA much longer story about the council."]
    assert neardup.dedup(texts, granularity="paragraph").texts[1] == "A much longer story about the council."
    result = neardup.dedup(texts, granularity="paragraph", keep="longest")
    assert result.texts == ["Short.", texts[1]]
    with pytest.raises(neardup.NeardupError):
        neardup.dedup(texts, granularity="paragraph", keep="longest", units_only=True)
    with pytest.raises(neardup.NeardupError):
        neardup.dedup(texts, ngrams=3)
