"""Dedup below the document on Apache Spark: ``neardup.spark_units.dedup_units(df, ...)``.

The same answer as ``neardup dedup --granularity`` (the CLI) and :func:`neardup.dedup` with a
``granularity``, text by text. After the document-level job (:func:`neardup.spark.dedup`, unless
``units_only``) has decided which rows stay, the kept rows' units go through three steps, each
on the data in Rust over Arrow batches (``mapInArrow``; no Python per row):

1. Executors cut every kept text into units and hash its keys (``UnitKeys.keys``: the CLI's
   splitter and keys, exact or n-grams of words); one row a key: the key, the row, the key's
   index in its text, and the row's place in keep order.
2. The first occurrence of each key is the smallest ``(place, row, index)`` of its rows: one
   shuffle by key, sorted within it (a window); every other occurrence is a repeat. The
   repeats are gathered by row (their key indexes).
3. Executors rewrite each kept text from its repeated keys (``UnitKeys.rewrite``: the CLI's
   rule on a unit's keys, its removal and rewrite, and the minimum a text keeps).

A key is "seen before" a unit when its first occurrence is earlier, whether or not the unit
that had it was removed: that is what the CLI computes in one pass, and what an aggregation
computes in any order. Not here: a seen file of earlier runs (``--seen``), HTML extraction
(the texts are taken as plain text).
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, Optional, Union

from ._neardup import NeardupError, Policy, UnitKeys

__all__ = ["dedup_units", "UNIT_COLUMNS"]

#: Columns the result adds to the document-level result (the text column is rewritten).
UNIT_COLUMNS = ("units", "units_removed", "bytes_removed", "dropped")
_ROW = "__neardup_row"
_PLACE = "__neardup_place"
_TEXT = "__neardup_text"


def dedup_units(
    df: Any,
    granularity: str = "paragraph",
    text_col: str = "text",
    policy: Union[Policy, Dict[str, Any], str, None] = None,
    keep: str = "first",
    order_col: Optional[str] = None,
    fetched_at_col: Optional[str] = None,
    min_chars: Optional[int] = None,
    ngrams: Optional[int] = None,
    ngram_threshold: Optional[float] = None,
    units_only: bool = False,
) -> Any:
    """Deduplicate a PySpark DataFrame below the document, as ``neardup dedup --granularity``.

    ``granularity``, ``min_chars``, ``ngrams``, ``ngram_threshold``: the rule, as
    :func:`neardup.dedup` takes it. The other arguments are :func:`neardup.spark.dedup`'s: the
    documents are decided first by the policy and ``keep``, and the kept rows' units are taken
    in the order ``keep`` prefers them in (``first``: the DataFrame's order, or ``order_col``'s;
    ``longest``: the most UTF-8 bytes first; ``newest``: the largest ``fetched_at_col`` first,
    nulls last). ``units_only``: no document-level decision (every row kept whole; ``keep``
    must be ``first``).

    Returns the document-level result without an ``id_col`` (the input rows with ``row_id``,
    ``cluster``, ``duplicate_of``, ``is_duplicate``) with ``text_col`` rewritten (null for a
    removed or dropped row) and :data:`UNIT_COLUMNS` (null for a removed row). The result is
    persisted and counted; ``unpersist()`` it when done.
    """
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    rule = (granularity, min_chars, ngrams, ngram_threshold)
    policy_json = UnitKeys(_policy_arg(policy), *rule).policy_json
    place = _place(keep, text_col, fetched_at_col)
    if units_only:
        if keep != "first":
            raise NeardupError("keep: with units_only the first occurrence of a unit is kept")
        decided = _every_row_kept(df, order_col).persist(StorageLevel.MEMORY_AND_DISK)
    else:
        from .spark import dedup

        decided = dedup(df, text_col, None, policy_json, keep, order_col, fetched_at_col)
    kept = decided.where(~F.col("is_duplicate")).select(
        F.col("row_id").alias(_ROW), F.col(text_col).alias("text"), place
    )
    large = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    keyed = kept.mapInArrow(_keys_of(policy_json, rule), f"key long, {_ROW} long, idx int, {_PLACE} long")
    first = Window.partitionBy("key").orderBy(_PLACE, _ROW, "idx")
    repeats = (
        keyed.withColumn("n", F.row_number().over(first))
        .where(F.col("n") > 1)
        .groupBy(_ROW)
        .agg(F.collect_list("idx").alias("repeats"))
    )
    with_repeats = kept.select(_ROW, "text").join(repeats, _ROW, "left")
    schema = f"{_ROW} long, {_TEXT} string, units long, units_removed long, bytes_removed long, dropped boolean"
    rewritten = with_repeats.mapInArrow(_rewrite_of(policy_json, rule, large), schema)
    result = decided.join(rewritten.withColumnRenamed(_ROW, "row_id"), "row_id", "left").select(
        *[F.col(c) for c in decided.columns if c != text_col],
        F.when(~F.col("dropped"), F.col(_TEXT)).alias(text_col),
        *[F.col(c) for c in UNIT_COLUMNS],
    )
    result = result.select(*decided.columns, *UNIT_COLUMNS).persist(StorageLevel.MEMORY_AND_DISK)
    result.count()
    decided.unpersist()
    return result


def _policy_arg(policy: Union[Policy, Dict[str, Any], str, None]) -> Union[Policy, str, None]:
    """A policy as ``UnitKeys`` takes it: a dict as its JSON."""
    import json

    return json.dumps(policy) if isinstance(policy, dict) else policy


def _every_row_kept(df: Any, order_col: Optional[str]) -> Any:
    """The result of a document-level run that removed nothing: the input with ``row_id``
    (numbered as :func:`neardup.spark.dedup` numbers rows), ``cluster`` (itself),
    ``duplicate_of`` (null) and ``is_duplicate`` (false)."""
    from pyspark.sql import functions as F

    ordered = df.orderBy(order_col) if order_col else df
    rows = ordered.withColumn("row_id", F.monotonically_increasing_id())
    return rows.select(
        *[F.col(c) for c in df.columns],
        F.col("row_id"),
        F.col("row_id").alias("cluster"),
        F.lit(None).cast("long").alias("duplicate_of"),
        F.lit(False).alias("is_duplicate"),
    )


def _place(keep: str, text_col: str, fetched_at_col: Optional[str]) -> Any:
    """The first part of a row's place in keep order (the row number breaks ties)."""
    from pyspark.sql import functions as F

    if keep == "first":
        place = F.lit(0)
    elif keep == "longest":
        place = -F.octet_length(F.col(text_col))
    elif keep == "newest":
        if not fetched_at_col:
            raise NeardupError("keep='newest' needs fetched_at_col")
        place = -F.coalesce(F.col(fetched_at_col).cast("long"), F.lit(-(2**63) + 1))
    else:
        raise NeardupError(f"keep must be first, longest or newest, not {keep!r}")
    return place.cast("long").alias(_PLACE)


def _keys_of(policy_json: str, rule: Any) -> Any:
    """Step 1 in the executors: each text's keys, one row a key."""

    def keys(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        from neardup._neardup import UnitKeys
        from neardup.spark import _text_buffers

        unit_keys = UnitKeys(policy_json, *rule)
        for batch in batches:
            offsets, key = unit_keys.keys(*_text_buffers(batch.column(1)))
            counts = np.diff(offsets)
            owner = np.repeat(np.arange(batch.num_rows), counts)
            index = np.arange(len(key)) - np.repeat(offsets[:-1], counts)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(key, pa.int64()),
                    batch.column(0).take(pa.array(owner, pa.int64())),
                    pa.array(index.astype(np.int32), pa.int32()),
                    batch.column(2).take(pa.array(owner, pa.int64())),
                ],
                names=["key", _ROW, "idx", _PLACE],
            )

    return keys


def _rewrite_of(policy_json: str, rule: Any, large: bool) -> Any:
    """Step 3 in the executors: each kept text rewritten from its repeated keys."""

    def rewrite(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        from neardup._neardup import UnitKeys
        from neardup.spark import _text_buffers

        unit_keys = UnitKeys(policy_json, *rule)
        string = pa.large_string() if large else pa.string()
        for batch in batches:
            repeats = batch.column(2)
            lengths = np.asarray(repeats.value_lengths().fill_null(0), dtype=np.int64)
            bounds = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            flat = np.asarray(repeats.flatten(), dtype=np.int32)
            out = unit_keys.rewrite(*_text_buffers(batch.column(1)), bounds, flat)
            offsets = out["text_offsets"]
            if not large:
                offsets = offsets.astype(np.int32)
            text = pa.Array.from_buffers(
                string, batch.num_rows, [None, pa.py_buffer(offsets), pa.py_buffer(out["text"])]
            )
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), text]
                + [pa.array(out[name]) for name in UNIT_COLUMNS],
                names=[_ROW, _TEXT, *UNIT_COLUMNS],
            )

    return rewrite
