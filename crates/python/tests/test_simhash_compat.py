"""neardup.compat.Simhash and SimhashIndex against the PyPI package simhash 2.1.2."""

import random

import pytest
import simhash

from neardup import compat


def test_text_values_equal_the_package_bit_for_bit(texts):
    assert len(texts) > 600
    differ = [t[:40] for t in texts if compat.Simhash(t).value != simhash.Simhash(t).value]
    assert not differ, f"{len(differ)} of {len(texts)} differ: {differ[:5]}"


def test_128_bit_values_equal(texts):
    sample = texts[::5]
    assert all(compat.Simhash(t, f=128).value == simhash.Simhash(t, f=128).value for t in sample)


def test_batch_values_equal(texts):
    values = compat.python_simhash_many(texts)
    assert [int(v) for v in values] == [simhash.Simhash(t).value for t in texts]


@pytest.mark.parametrize(
    "features",
    [
        ["alpha", "beta", "gamma", "alpha"],
        [("alpha", 3), ("beta", 1), ("gamma", 7), ("délta", 2)],
        {"alpha": 3, "beta": 1, "gamma": 70, "中文": 2},
        [("alpha", 0.5), ("beta", 1.25), ("gamma", 3), "delta"],  # delta weighs 3, as in the package
        [],
    ],
)
def test_feature_values_equal(features):
    assert compat.Simhash(features).value == simhash.Simhash(features).value
    assert compat.Simhash(features, f=128).value == simhash.Simhash(features, f=128).value


def test_distance_int_and_copy(texts):
    a, b = texts[10], texts[11]
    assert compat.Simhash(a).distance(compat.Simhash(b)) == simhash.Simhash(a).distance(simhash.Simhash(b))
    assert compat.Simhash(12345).value == 12345
    assert compat.Simhash(compat.Simhash(a)).value == compat.Simhash(a).value


def test_unsupported_arguments_are_refused():
    with pytest.raises(ValueError):
        compat.Simhash("text", f=32)
    with pytest.raises(ValueError):
        compat.Simhash("text", reg=r"\w+")
    with pytest.raises(ValueError):
        compat.Simhash([("a", "not a weight")])


def _near(value, bits, rng):
    for _ in range(bits):
        value ^= 1 << rng.randrange(64)
    return value


@pytest.mark.parametrize("k", [0, 1, 2, 3, 5, 9])
def test_index_gives_the_same_ids(k):
    rng = random.Random(k)
    centres = [rng.getrandbits(64) for _ in range(40)]
    values = [_near(rng.choice(centres), rng.randrange(8), rng) for _ in range(600)]
    objs = [(f"doc{i}", v) for i, v in enumerate(values)]
    # Ids added twice (the same value, and another value), and int ids (stored as str).
    objs += [("doc3", values[3]), ("doc4", values[9]), (77, values[77])]
    ours = compat.SimhashIndex([(i, compat.Simhash(v)) for i, v in objs], k=k)
    theirs = simhash.SimhashIndex([(i, simhash.Simhash(v)) for i, v in objs], k=k)
    queries = values[:80] + [_near(c, 2, rng) for c in centres]
    for q in queries:
        assert set(ours.get_near_dups(compat.Simhash(q))) == set(theirs.get_near_dups(simhash.Simhash(q)))
        assert len(ours.get_near_dups(compat.Simhash(q))) == len(theirs.get_near_dups(simhash.Simhash(q)))
    # delete: one (id, value) entry; absent entries are ignored.
    for i, v in objs[:50] + [("nobody", 1)]:
        ours.delete(i, compat.Simhash(v))
        theirs.delete(i, simhash.Simhash(v))
    for q in queries:
        assert set(ours.get_near_dups(compat.Simhash(q))) == set(theirs.get_near_dups(simhash.Simhash(q)))
    ours.add("late", compat.Simhash(queries[0]))
    theirs.add("late", simhash.Simhash(queries[0]))
    assert set(ours.get_near_dups(compat.Simhash(queries[0]))) == set(theirs.get_near_dups(simhash.Simhash(queries[0])))


def test_index_on_text_fingerprints(texts):
    objs = [(str(i), t) for i, t in enumerate(texts[:300])]
    ours = compat.SimhashIndex([(i, compat.Simhash(t)) for i, t in objs], k=3)
    theirs = simhash.SimhashIndex([(i, simhash.Simhash(t)) for i, t in objs], k=3)
    for t in texts[250:400]:
        assert set(ours.get_near_dups(compat.Simhash(t))) == set(theirs.get_near_dups(simhash.Simhash(t)))
