"""neardup.compat.MinHash and MinHashLSH against datasketch."""

import datasketch
import numpy as np
import pytest

from neardup import compat


def _shingles(text, width=5):
    text = " ".join(text.lower().split())
    return {text[i : i + width].encode("utf-8") for i in range(max(len(text) - width + 1, 1))}


@pytest.mark.parametrize("scheme", ["affine32", "legacy", "affine64"])
@pytest.mark.parametrize("num_perm,seed", [(128, 1), (64, 42), (256, 2**32 - 1), (1, 0)])
def test_hashvalues_equal(texts, scheme, num_perm, seed):
    for text in texts[::40]:
        ours = compat.MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
        theirs = datasketch.MinHash(num_perm=num_perm, seed=seed, scheme=scheme)
        values = sorted(_shingles(text))
        ours.update_batch(values)
        for v in values:
            theirs.update(v)
        assert ours.digest().dtype == theirs.digest().dtype
        assert np.array_equal(ours.digest(), theirs.digest())
        assert ours.count() == pytest.approx(theirs.count())


def test_jaccard_merge_and_defaults_equal(texts):
    a, b = texts[600], texts[-1]
    ours = [compat.MinHash(), compat.MinHash()]
    theirs = [datasketch.MinHash(), datasketch.MinHash()]
    for o, t, text in zip(ours, theirs, [a, b]):
        for s in _shingles(text):
            o.update(s)
            t.update(s)
    assert ours[0].scheme == theirs[0].scheme == "affine32"
    assert ours[0].jaccard(ours[1]) == theirs[0].jaccard(theirs[1])
    ours[0].merge(ours[1])
    theirs[0].merge(theirs[1])
    assert np.array_equal(ours[0].digest(), theirs[0].digest())
    assert compat.MinHash().is_empty() and not ours[0].is_empty()
    with pytest.raises(ValueError):
        ours[0].jaccard(compat.MinHash(seed=2))
    with pytest.raises(ValueError):
        ours[0].jaccard(compat.MinHash(scheme="legacy"))
    with pytest.raises(TypeError):
        ours[0].update("not bytes")


@pytest.mark.parametrize("num_perm", [32, 128, 256])
def test_lsh_banding_equals_datasketch(num_perm):
    checked = 0
    for threshold in [0.1, 0.3, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 0.99]:
        try:
            theirs = datasketch.MinHashLSH(threshold=threshold, num_perm=num_perm)
        except ValueError:  # too few bands, for datasketch and for us
            with pytest.raises(ValueError):
                compat.MinHashLSH(threshold=threshold, num_perm=num_perm)
            continue
        ours = compat.MinHashLSH(threshold=threshold, num_perm=num_perm)
        assert (ours.b, ours.r) == (theirs.b, theirs.r), threshold
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_lsh_candidates_equal(texts, threshold):
    docs = texts[:400]
    ours_lsh = compat.MinHashLSH(threshold=threshold, num_perm=128)
    theirs_lsh = datasketch.MinHashLSH(threshold=threshold, num_perm=128)
    ours, theirs = [], []
    for i, text in enumerate(docs):
        o, t = compat.MinHash(), datasketch.MinHash()
        values = list(_shingles(text))
        o.update_batch(values)
        t.update_batch(values)
        ours.append(o)
        theirs.append(t)
        ours_lsh.insert(f"k{i}", o)
        theirs_lsh.insert(f"k{i}", t)
    found = 0
    for o, t in zip(ours, theirs):
        got = ours_lsh.query(o)
        assert sorted(got) == sorted(theirs_lsh.query(t))
        found += len(got) > 1
    assert found > 10, "the corpus has near copies"
    # datasketch's own MinHash objects are accepted too.
    assert sorted(ours_lsh.query(theirs[5])) == sorted(theirs_lsh.query(theirs[5]))
    for i in range(0, 400, 3):
        ours_lsh.remove(f"k{i}")
        theirs_lsh.remove(f"k{i}")
    for o, t in zip(ours, theirs):
        assert sorted(ours_lsh.query(o)) == sorted(theirs_lsh.query(t))
    with pytest.raises(ValueError):
        ours_lsh.insert("k1", ours[1])
    with pytest.raises(ValueError):
        ours_lsh.remove("k0")
    assert "k1" in ours_lsh and "k0" not in ours_lsh
