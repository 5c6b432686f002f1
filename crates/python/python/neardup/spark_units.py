"""Dedup below the document on Apache Spark: ``neardup.spark_units.dedup_units(df, ...)``.

The same answer as ``neardup dedup --granularity`` (the CLI) and :func:`neardup.dedup` with a
``granularity``, text by text. After the document-level job (:func:`neardup.spark.dedup`, unless
``units_only``) has decided which rows stay, the kept rows' units go through three steps, each
on the data in Rust over Arrow batches (``mapInArrow``; no Python per row):

1. Executors cut every kept text into units and hash its keys (``UnitKeys.keys``: the CLI's
   splitter and keys, exact or n-grams of words); one row a key: the key, the row, the key's
   index in its text, and the row's place in keep order. With ``seen``, the keys of earlier
   runs join them, placed before every row (read by the executors in ranges of the file).
2. The first occurrence of each key is the smallest ``(place, row, index)`` of its rows: one
   shuffle by key, sorted within it (a window); every other occurrence is a repeat. The
   repeats are gathered by row (their key indexes).
3. Executors rewrite each kept text from its repeated keys (``UnitKeys.rewrite``: the CLI's
   rule on a unit's keys, its removal and rewrite, and the minimum a text keeps).

A key is "seen before" a unit when its first occurrence is earlier, whether or not the unit
that had it was removed: that is what the CLI computes in one pass, and what an aggregation
computes in any order.

**Seen keys across runs** (``seen``, the CLI's ``--seen``): one format, the CLI's seen file
(``neardup_dedup::units::SeenFile``: a header naming the unit, the normalisation and the key,
then the keys, distinct, ascending, 8 bytes each; exact, no false positive beyond the 64-bit
keys' collisions, n²/2⁶⁵ expected colliding pairs among n distinct units). A file written by
the CLI is read here and the other way round, byte for byte the same for the same runs. The
executors read it in ranges of 2²⁰ keys, so its path must be one the driver and every executor
see (a local path on one machine, a shared mount on a cluster); after the run the union of its
keys and this run's (every key of every kept text) is sorted on the cluster and streamed
through the driver (8 bytes a key, one sorted partition at a time) into a file beside it,
which then replaces it. A result recomputed after that (lost cached blocks) fails rather than
read the new file as the old one.

**Not here: HTML.** The texts are taken as plain text, as :func:`neardup.spark.dedup` takes
them: neither door extracts HTML (the extraction of ``neardup extract --html main|all`` lives
in the CLI's readers, not in the Python package, and a second extractor here would be a
second home for its rules). Extract first (``neardup extract --html all`` writes each page's
text as JSON Lines, a block element a line) and give this door that text with
``granularity="line"``: the CLI cuts the ``paragraph`` units of extracted HTML at its lines
(``UnitSplitter::segments``), so the units and keys are the same (a seen file names its unit:
one written by a ``paragraph`` run of the CLI is refused by a ``line`` run).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Iterator, Optional, Union

from ._neardup import NeardupError, Policy, UnitKeys

__all__ = ["dedup_units", "UNIT_COLUMNS"]

#: Columns the result adds to the document-level result (the text column is rewritten), in
#: the order of the CLI's ``--removed-spans`` records.
UNIT_COLUMNS = ("units", "units_removed", "bytes_removed", "removed_spans", "dropped")
_ROW = "__neardup_unit_row"
_PLACE = "__neardup_place"
_TEXT = "__neardup_text"
#: Keys of the seen file an executor's task reads.
_SEEN_RANGE = 1 << 20
#: The place of the seen file's keys: before every row's (the places are at least -2⁶³ + 1).
_BEFORE_EVERY_ROW = -(2**63)


def dedup_units(
    df: Any,
    granularity: str = "paragraph",
    text_col: str = "text",
    id_col: Optional[str] = None,
    policy: Union[Policy, Dict[str, Any], str, None] = None,
    keep: str = "first",
    order_col: Optional[str] = None,
    fetched_at_col: Optional[str] = None,
    min_chars: Optional[int] = None,
    ngrams: Optional[int] = None,
    ngram_threshold: Optional[float] = None,
    seen: Union[str, "os.PathLike[str]", None] = None,
    units_only: bool = False,
) -> Any:
    """Deduplicate a PySpark DataFrame below the document, as ``neardup dedup --granularity``.

    ``granularity``, ``min_chars``, ``ngrams``, ``ngram_threshold``: the rule, as
    :func:`neardup.dedup` takes it. ``seen``: the path of a seen file (the CLI's ``--seen``;
    the module's docstring says where it must be): its keys count as seen before every row,
    and it is replaced by the union of its keys and this run's (created when missing). The
    other arguments are :func:`neardup.spark.dedup`'s: the documents are decided first by the
    policy and ``keep``, and the kept rows' units are taken in the order ``keep`` prefers them
    in (``first``: the DataFrame's order, or ``order_col``'s; ``longest``: the most UTF-8 bytes
    first; ``newest``: the largest ``fetched_at_col`` first, nulls last); ``id_col`` names the
    rows in ``cluster`` and ``duplicate_of`` (else a ``row_id`` column is added and they name
    rows by it). ``units_only``: no document-level decision (every row kept whole; ``keep``
    must be ``first``).

    Returns :func:`neardup.spark.dedup`'s result (the input rows with ``cluster``,
    ``duplicate_of``, ``is_duplicate``, and ``row_id`` without an ``id_col``) with
    ``text_col`` rewritten (null for a removed or dropped row) and :data:`UNIT_COLUMNS` (null
    for a removed row; ``removed_spans``: the removed ``[start, end)`` byte ranges of the
    text, as the CLI's ``--removed-spans``). The result is persisted and counted;
    ``unpersist()`` it when done.
    """
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from .spark import _check_columns

    rule = (granularity, min_chars, ngrams, ngram_threshold)
    policy_json = UnitKeys(_policy_arg(policy), *rule).policy_json
    _check_columns(df, text_col, id_col, order_col, fetched_at_col, keep)
    place = _place(keep, text_col, fetched_at_col)
    # Rows numbered in the order the document-level job numbers them (it keeps the numbers).
    numbered = (df.orderBy(order_col) if order_col else df).withColumn(_ROW, F.monotonically_increasing_id())
    if units_only:
        if keep != "first":
            raise NeardupError("keep: with units_only the first occurrence of a unit is kept")
        decided = _every_row_kept(numbered, id_col).persist(StorageLevel.MEMORY_AND_DISK)
    else:
        from .spark import dedup

        decided = dedup(numbered, text_col, id_col, policy_json, keep, None, fetched_at_col)
    kept = decided.where(~F.col("is_duplicate")).select(_ROW, F.col(text_col).alias("text"), place)
    large = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    keyed = kept.mapInArrow(_keys_of(policy_json, rule), f"key long, {_ROW} long, idx int, {_PLACE} long")
    prior = None
    if seen is not None:
        seen = os.path.abspath(os.fspath(seen))  # the executors' working folder is another
        keyed = keyed.persist(StorageLevel.MEMORY_AND_DISK)
        prior = _prior_keys(df.sparkSession, policy_json, rule, seen)
    occurrences = keyed if prior is None else keyed.unionByName(prior)
    first = Window.partitionBy("key").orderBy(_PLACE, _ROW, "idx")
    repeats = (
        occurrences.withColumn("n", F.row_number().over(first))
        .where(F.col("n") > 1)
        .groupBy(_ROW)
        .agg(F.collect_list("idx").alias("repeats"))
    )
    with_repeats = kept.select(_ROW, "text").join(repeats, _ROW, "left")
    schema = (
        f"{_ROW} long, {_TEXT} string, units long, units_removed long, bytes_removed long, "
        "removed_spans array<array<long>>, dropped boolean"
    )
    rewritten = with_repeats.mapInArrow(_rewrite_of(policy_json, rule, large), schema)
    columns = [c for c in decided.columns if c != _ROW]
    result = decided.join(rewritten, _ROW, "left").select(
        *[F.col(c) for c in columns if c != text_col],
        F.when(~F.col("dropped"), F.col(_TEXT)).alias(text_col),
        *[F.col(c) for c in UNIT_COLUMNS],
    )
    result = result.select(*columns, *UNIT_COLUMNS).persist(StorageLevel.MEMORY_AND_DISK)
    result.count()
    if seen is not None:
        _save_seen(policy_json, rule, seen, occurrences, large)
        keyed.unpersist()
    decided.unpersist()
    return result


def _prior_keys(spark: Any, policy_json: str, rule: Any, path: str) -> Any:
    """The keys of the seen file at ``path`` (none when it does not exist yet) as rows of the
    keyed frame, placed before every row: read by the executors, :data:`_SEEN_RANGE` keys a
    task. A task that finds the file changed since (replaced by this run, then read again
    to recompute a lost block) fails."""
    from pyspark.sql import functions as F

    count = UnitKeys(policy_json, *rule).seen_count(path) if os.path.exists(path) else 0
    stat = os.stat(path) if count else None
    stamp = (stat.st_size, stat.st_mtime_ns) if stat else None
    tasks = -(-count // _SEEN_RANGE)

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        from neardup._neardup import NeardupError, UnitKeys

        unit_keys = UnitKeys(policy_json, *rule)
        for batch in batches:
            for task in batch.column(0).to_pylist():
                now = os.stat(path)
                if (now.st_size, now.st_mtime_ns) != stamp:
                    raise NeardupError(f"{path}: the seen file changed since the run began")
                keys = unit_keys.read_seen(path, task * _SEEN_RANGE, _SEEN_RANGE)
                yield pa.RecordBatch.from_arrays([pa.array(keys, pa.int64())], names=["key"])

    ranges = spark.range(0, tasks, 1, max(1, tasks)).mapInArrow(read, "key long")
    return ranges.select(
        "key",
        F.lit(-1).cast("long").alias(_ROW),
        F.lit(-1).cast("int").alias("idx"),
        F.lit(_BEFORE_EVERY_ROW).cast("long").alias(_PLACE),
    )


def _save_seen(policy_json: str, rule: Any, path: str, occurrences: Any, large: bool) -> None:
    """Replaces the seen file at ``path`` by the keys of ``occurrences`` (the seen file's and
    this run's): sorted as unsigned numbers on the cluster (the keys of equal sign bits sort
    as signed ones), each sorted batch sent to the driver once its repeats are dropped, and
    written there by the library in the seen file's format."""
    import numpy as np
    from pyspark.sql import functions as F

    def distinct(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        binary = pa.large_binary() if large else pa.binary()
        last = None
        for batch in batches:
            keys = batch.column(0).to_numpy()
            if len(keys) == 0:
                continue
            new = np.ones(len(keys), dtype=bool)
            new[1:] = keys[1:] != keys[:-1]
            new[0] = keys[0] != last
            last = keys[-1]
            chunk = keys[new].astype("<i8").tobytes()
            yield pa.RecordBatch.from_arrays([pa.array([chunk], binary)], names=["keys"])

    ordered = occurrences.select("key").orderBy(F.col("key") < 0, F.col("key"))
    chunks = ordered.mapInArrow(distinct, "keys binary")
    arrays = (np.frombuffer(row["keys"], dtype="<i8") for row in chunks.toLocalIterator())
    UnitKeys(policy_json, *rule).write_seen(path, arrays)


def _policy_arg(policy: Union[Policy, Dict[str, Any], str, None]) -> Union[Policy, str, None]:
    """A policy as ``UnitKeys`` takes it: a dict as its JSON."""
    import json

    return json.dumps(policy) if isinstance(policy, dict) else policy


def _every_row_kept(numbered: Any, id_col: Optional[str]) -> Any:
    """The result of a document-level run that removed nothing, from the input numbered in
    its order: ``row_id`` (without an ``id_col``), ``cluster`` (the row itself: its id or
    number), ``duplicate_of`` (null) and ``is_duplicate`` (false)."""
    from pyspark.sql import functions as F

    from .spark import ROW_ID

    number = [] if id_col else [F.col(_ROW).alias(ROW_ID)]
    return numbered.select(
        *[F.col(c) for c in numbered.columns],
        *number,
        F.col(id_col if id_col else _ROW).alias("cluster"),
        F.lit(None).cast(numbered.schema[id_col].dataType if id_col else "long").alias("duplicate_of"),
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
            spans = pa.ListArray.from_arrays(
                pa.array(np.arange(0, len(out["spans"]) + 1, 2, dtype=np.int32)), pa.array(out["spans"], pa.int64())
            )
            columns = {name: pa.array(out[name]) for name in UNIT_COLUMNS if name != "removed_spans"}
            columns["removed_spans"] = pa.ListArray.from_arrays(pa.array(out["span_offsets"].astype(np.int32)), spans)
            yield pa.RecordBatch.from_arrays(
                [batch.column(0), text] + [columns[name] for name in UNIT_COLUMNS],
                names=[_ROW, _TEXT, *UNIT_COLUMNS],
            )

    return rewrite
