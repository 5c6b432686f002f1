"""neardup: near-duplicate text detection, from Python.

Thin over the Rust library: fingerprints (SimHash, MinHash, digests), the one near-duplicate
decision (:class:`Policy`, the same as the ``neardup`` CLI's, the databases' and the HTTP
service's), batch dedup of lists, pandas DataFrames and Arrow tables, drop-ins for the PyPI
``simhash`` package and datasketch (:mod:`neardup.compat`), and a client for ``neardup serve``
(:class:`Client`).

>>> import neardup
>>> result = neardup.dedup(["The council approved the budget on Tuesday after a long debate.",
...                         "The council approved the budget on Tuesday after a long debate!",
...                         "Heavy rain is expected across the region on Monday."])
>>> result.keep
[True, False, True]
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from . import compat, spark
from ._neardup import (
    Fingerprint,
    FingerprintBatch,
    Fingerprinter,
    JsonlLines,
    MinHashLsh,
    NeardupError,
    PartEngine,
    Policy,
    SearchKeys,
    compare,
    minhash_candidate_pairs,
)
from ._neardup import dedup as _dedup
from .client import Client

try:
    from importlib.metadata import version as _version

    __version__ = _version("neardup")
except Exception:  # not installed as a distribution (e.g. on sys.path from a build tree)
    __version__ = "unknown"

__all__ = [
    "Client",
    "DedupResult",
    "Fingerprint",
    "FingerprintBatch",
    "Fingerprinter",
    "JsonlLines",
    "MinHashLsh",
    "NeardupError",
    "PartEngine",
    "Policy",
    "SearchKeys",
    "compare",
    "compat",
    "spark",
    "dedup",
    "minhash_candidate_pairs",
]


def _texts(data: Any, text_column: str = "text") -> Sequence[str]:
    """The texts of ``data`` as a sequence of ``str``.

    ``data`` is an iterable of ``str``, a NumPy array or pandas Series of strings, a pyarrow
    ``Array``/``ChunkedArray`` of strings, or a table (a pandas ``DataFrame`` or a pyarrow
    ``Table``/``RecordBatch``), whose ``text_column`` is taken.
    """
    if isinstance(data, str):
        raise NeardupError("expected an iterable of str, got one str (wrap it in a list)")
    module = type(data).__module__
    if module.startswith("pyarrow"):
        if hasattr(data, "column_names"):
            if text_column not in data.column_names:
                raise NeardupError(f"the table has no column {text_column!r}")
            data = data.column(text_column)
        return data.to_pylist()
    if module.startswith("pandas"):
        if hasattr(data, "columns"):
            if text_column not in data.columns:
                raise NeardupError(f"the DataFrame has no column {text_column!r}")
            data = data[text_column]
        return data.to_list()
    if module.startswith("numpy"):
        return data.tolist()
    if isinstance(data, (list, tuple)):
        return data
    return list(data)


@dataclass
class DedupResult:
    """What :func:`dedup` decided, one entry per input text where it says so.

    - ``keep``: whether each text is kept;
    - ``duplicate_of``: for a removed text, the index of the kept text it duplicates (the two
      were decided duplicates directly, by the policy); ``None`` for a kept one;
    - ``removals``: per removed text, the record ``neardup dedup --removed`` writes, texts
      named by index: ``id``, ``verdict`` ("duplicate"), ``duplicate_of``, ``kind`` (exact or
      near), ``distance`` (SimHash bits), and the evidence: ``measure``, ``value``,
      ``threshold``;
    - ``clusters``: groups of two or more, ``cluster`` (their number), ``members`` (ascending)
      and their ``representative`` (the kept one);
    - ``pairs``: every accepted pair (``a < b``) with its evidence.

    With a ``granularity`` (dedup below the document, after the documents are decided):

    - ``texts``: each kept text with its repeated units removed, ``None`` for a text removed
      as a duplicate or dropped (too little left): what ``neardup dedup --granularity
      --kept`` writes;
    - ``units``: per text the unit pass read, its report as ``--removed-spans`` writes it
      (``units``, ``units_removed``, ``bytes_removed``, ``removed_spans`` as UTF-8 byte
      offsets ``[start, end)``, ``dropped``), ``None`` for a removed text;
    - ``unit_figures``: the pass's totals (documents, units, units and bytes removed, ...).
    """

    keep: List[bool]
    duplicate_of: List[Optional[int]]
    removals: List[Dict[str, Any]] = field(default_factory=list)
    clusters: List[Dict[str, Any]] = field(default_factory=list)
    pairs: List[Dict[str, Any]] = field(default_factory=list)
    texts: Optional[List[Optional[str]]] = None
    units: Optional[List[Optional[Dict[str, Any]]]] = None
    unit_figures: Optional[Dict[str, Any]] = None

    def cluster_ids(self) -> List[Optional[int]]:
        """Per text, the index of its cluster's representative (``None`` when it is in none)."""
        ids: List[Optional[int]] = [None] * len(self.keep)
        for cluster in self.clusters:
            for member in cluster["members"]:
                ids[member] = cluster["representative"]
        return ids


def dedup(
    texts_or_table: Any,
    policy: Union[Policy, Dict[str, Any], str, None] = None,
    keep: str = "first",
    text_column: str = "text",
    fetched_at: Optional[Iterable[Optional[int]]] = None,
    granularity: Optional[str] = None,
    min_chars: Optional[int] = None,
    seen: Union[str, "os.PathLike[str]", None] = None,
    units_only: bool = False,
    ngrams: Optional[int] = None,
    ngram_threshold: Optional[float] = None,
) -> DedupResult:
    """Deduplicate texts by the policy, as ``neardup dedup`` does.

    ``texts_or_table``: an iterable of ``str``, a NumPy array, a pandas Series or DataFrame,
    or a pyarrow Array, ChunkedArray, Table or RecordBatch (tables: the ``text_column``).
    ``policy``: a :class:`Policy`, a dict or a JSON string (``None``: ``Policy.default()``).
    ``keep``: ``first``, ``longest`` or ``newest`` (with ``fetched_at``, Unix seconds or
    ``None`` per text). Fingerprints are computed in parallel with the GIL released; the
    decision is the Rust engine's.

    Below the document, as ``neardup dedup --granularity`` (the same answer): ``granularity``
    ``paragraph``, ``line`` or ``sentences:N``; after the documents are decided, the units that
    repeat across the kept texts are removed from every one but the first (in input order),
    and a text left with fewer than ``min_chars`` characters (default 1) is dropped.
    ``seen``: a file of the units of earlier runs (``--seen``), replaced by the union with
    this run's. ``units_only``: no document-level decision (``--units-only``).
    ``ngrams`` and ``ngram_threshold``: the fraction rule (dolma's, ``--ngrams``,
    ``--ngram-threshold``): a paragraph or line goes when at least the threshold (default 1.0)
    of its n-grams of words (default 13) were seen before it.
    """
    times = None if fetched_at is None else list(fetched_at)
    raw = _dedup(
        _texts(texts_or_table, text_column),
        policy,
        keep,
        times,
        granularity,
        min_chars,
        None if seen is None else os.fspath(seen),
        units_only,
        ngrams,
        ngram_threshold,
    )
    return DedupResult(**raw)
