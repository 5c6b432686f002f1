"""Drop-ins for the PyPI ``simhash`` package (2.1.2) and for datasketch's ``MinHash`` and
``MinHashLSH``: change the import, keep the code.

- :class:`Simhash`: ``Simhash(text).value`` equals the PyPI package's bit for bit (the
  ``python-simhash`` profile), for texts and for features (``str``, ``(str, weight)`` pairs or a
  dict), at ``f=64`` and ``f=128``.
- :class:`SimhashIndex`: the PyPI package's index; ``get_near_dups`` gives the same ids.
- :class:`MinHash`: datasketch's ``MinHash`` with its default hash (SHA-1) and permutations:
  the same ``hashvalues`` for the same ``update`` calls, hence the same ``jaccard``.
- :class:`MinHashLSH`: datasketch's banding (the same ``(b, r)`` for a threshold), hence the
  same candidates for the same signatures.

Where a mapping is not exact, the docstring says so.
"""

from __future__ import annotations

from typing import Any, Dict, Hashable, Iterable, List, Optional, Tuple, Union

import numpy as np

from ._neardup import MinHash, MinHashLsh, SimhashIndexCore
from ._neardup import python_simhash as _python_simhash
from ._neardup import python_simhash_features as _python_simhash_features
from ._neardup import python_simhash_many

__all__ = ["MinHash", "MinHashLSH", "Simhash", "SimhashIndex", "python_simhash_many"]

_DEFAULT_REG = r"[\w\u4e00-\u9fcc]+"


class Simhash:
    """The PyPI ``simhash`` package's ``Simhash``: ``Simhash(value, f=64)``.

    ``value`` is a text (lower-cased, ``\\w`` characters kept, character 4-grams, MD5), an
    iterable of features (``str`` of weight 1, or ``(str, weight)`` pairs), a dict of feature to
    weight, an int (the fingerprint itself) or another ``Simhash``. ``.value`` is the
    fingerprint as an int, equal to the package's.

    Not exact: ``f`` must be 64 or 128 (the package takes any multiple of 8); ``reg`` and
    ``hashfunc`` other than the package's defaults are refused (``NeardupError``) rather than
    honoured; ``log`` is ignored. Non-integer weights are summed in floating point, as the
    package does, but in another order: a bit whose sum is within rounding of the tie can
    differ.
    """

    __slots__ = ("f", "value")

    def __init__(
        self,
        value: Union[str, int, "Simhash", Iterable[Any], Dict[str, Any]],
        f: int = 64,
        reg: str = _DEFAULT_REG,
        hashfunc: Any = None,
        log: Any = None,
    ) -> None:
        if reg != _DEFAULT_REG or hashfunc is not None:
            from ._neardup import NeardupError

            raise NeardupError("neardup.compat.Simhash supports the default reg and hashfunc only")
        self.f = f
        if isinstance(value, str):
            self.value = _python_simhash(value, f)
        elif isinstance(value, Simhash):
            self.value = value.value
        elif isinstance(value, int):
            self.value = value
        elif isinstance(value, dict):
            self.value = _python_simhash_features(value.items(), f)
        else:
            self.value = _python_simhash_features(value, f)

    def distance(self, another: "Simhash") -> int:
        """The number of bits that differ between the two fingerprints."""
        assert self.f == another.f
        return bin((self.value ^ another.value) & ((1 << self.f) - 1)).count("1")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Simhash) and self.value == other.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"Simhash({self.value:#x}, f={self.f})"


class SimhashIndex:
    """The PyPI ``simhash`` package's ``SimhashIndex(objs, f=64, k=2)``.

    ``objs`` is a list of ``(obj_id, simhash)``. Entries are ``(simhash value, str(obj_id))``
    pairs: adding one twice stores it once, an id added with two values is stored twice, and
    ``delete`` removes the one pair named (silently nothing if absent), as in the package.
    ``get_near_dups(simhash)`` returns every id with an entry within ``k`` bits, each once, as
    ``str``: the same ids as the package's.

    Not exact: the package returns ``list(set)``, whose order changes with string hash
    randomisation from run to run; this one returns them nearest first (compare them as sets).
    The search is neardup's permuted tables (brute force for ``k > 8``) instead of the
    package's string-keyed buckets; ``bucket``, ``offsets``, ``get_keys`` and ``bucket_size``
    (its internals) are not provided. Values are taken modulo ``2**64``; ``f`` must be 64.
    """

    def __init__(self, objs: Iterable[Tuple[Any, Simhash]], f: int = 64, k: int = 2, log: Any = None) -> None:
        if f != 64:
            from ._neardup import NeardupError

            raise NeardupError("neardup.compat.SimhashIndex supports f=64 only")
        objs = list(objs)
        self.f = f
        self.k = k
        self._core = SimhashIndexCore(k, len(objs))
        for obj_id, simhash in objs:
            self.add(obj_id, simhash)

    def get_near_dups(self, simhash: Simhash) -> List[str]:
        """The ids (``str``) of the entries within ``k`` bits of ``simhash``, each once."""
        assert simhash.f == self.f
        return self._core.get_near_dups(simhash.value & 0xFFFFFFFFFFFFFFFF)

    def add(self, obj_id: Any, simhash: Simhash) -> None:
        """Adds the entry ``(simhash, str(obj_id))``."""
        assert simhash.f == self.f
        self._core.add("%s" % (obj_id,), simhash.value & 0xFFFFFFFFFFFFFFFF)

    def delete(self, obj_id: Any, simhash: Simhash) -> None:
        """Removes the entry ``(simhash, str(obj_id))`` if it is there."""
        assert simhash.f == self.f
        self._core.delete("%s" % (obj_id,), simhash.value & 0xFFFFFFFFFFFFFFFF)

    def __len__(self) -> int:
        return len(self._core)


def _signature(minhash: Any) -> Any:
    """The signature of a ``neardup.compat.MinHash`` or of anything with datasketch's
    ``hashvalues``."""
    if isinstance(minhash, MinHash):
        return minhash
    return np.asarray(minhash.hashvalues, dtype=np.uint64)


class MinHashLSH:
    """datasketch's ``MinHashLSH(threshold=0.9, num_perm=128, weights=(0.5, 0.5), params=None)``.

    ``insert(key, minhash)``, ``query(minhash)`` (the keys of stored signatures sharing a band),
    ``remove(key)``, ``key in lsh``, ``is_empty()``; ``b`` and ``r`` are the banding, chosen
    by datasketch's rule. Keys are any hashable values. Signatures come from
    :class:`MinHash` or from datasketch's own ``MinHash`` (its ``hashvalues``).

    Not exact: ``query`` returns keys in insertion order (datasketch: ``list(set)``, in no
    promised order); a key stored already is an error even with ``check_duplication=False``;
    signatures must be 32-bit (schemes ``affine32`` and ``legacy``, not ``affine64``);
    ``storage_config``, ``prepickle``, ``hashfunc`` and insertion sessions are not provided.
    """

    def __init__(
        self,
        threshold: float = 0.9,
        num_perm: int = 128,
        weights: Tuple[float, float] = (0.5, 0.5),
        params: Optional[Tuple[int, int]] = None,
    ) -> None:
        self.threshold = threshold
        self.h = num_perm
        self._lsh = MinHashLsh(threshold, num_perm, weights, params)
        self.b, self.r = self._lsh.params
        if self.b < 2:
            raise ValueError("The number of bands are too small (b < 2)")
        self._ids: Dict[Hashable, int] = {}
        self._keys: Dict[int, Hashable] = {}
        self._next = 0

    def insert(self, key: Hashable, minhash: Any, check_duplication: bool = True) -> None:
        """Stores ``minhash`` under ``key``; a key stored already is an error."""
        if len(minhash) != self.h:
            raise ValueError("Expecting minhash with length %d, got %d" % (self.h, len(minhash)))
        if key in self._ids:
            raise ValueError("The given key already exists")
        self._lsh.insert(self._next, _signature(minhash))
        self._ids[key] = self._next
        self._keys[self._next] = key
        self._next += 1

    def query(self, minhash: Any) -> List[Hashable]:
        """The keys of stored signatures sharing at least one band with ``minhash``."""
        if len(minhash) != self.h:
            raise ValueError("Expecting minhash with length %d, got %d" % (self.h, len(minhash)))
        return [self._keys[i] for i in self._lsh.query(_signature(minhash))]

    def remove(self, key: Hashable) -> None:
        """Removes ``key``; a key not stored is an error."""
        if key not in self._ids:
            raise ValueError("The given key does not exist")
        i = self._ids.pop(key)
        self._lsh.remove(i)
        del self._keys[i]

    def __contains__(self, key: Hashable) -> bool:
        return key in self._ids

    def is_empty(self) -> bool:
        """Whether nothing is stored."""
        return not self._ids
