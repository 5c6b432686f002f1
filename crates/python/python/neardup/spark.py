"""neardup on Apache Spark: ``neardup.spark.dedup(df, text_col=..., id_col=..., policy=...)``.

The same answer as ``neardup dedup`` (the CLI) and :func:`neardup.dedup`, document by
document, on a corpus spread over a cluster. Nothing here decides: every fingerprint, search
key, pair decision and cluster comes from the Rust library, run in the executors.

The job, stage by stage (BENCHMARKS.md, "On Spark", says what each shuffles); every step on
the data is Rust over Arrow batches (``mapInArrow``: the Python around it only hands buffers
over), and what is read twice is persisted once:

1. Each row gets a number in the DataFrame's order (``monotonically_increasing_id``, after
   sorting by ``order_col`` when one is given): ``keep="first"`` keeps the earliest. The rows
   are persisted and counted, with their text's bytes: the shuffles' partitions are sized from
   them (:func:`_partitions`), not from Spark's default.
2. Executors fingerprint every text and cut its search keys (``SearchKeys.fingerprint``): the
   permuted tables of the SimHash search, or the MinHash LSH bands, that the engine itself
   uses; one row a key (key, row number, SimHash), shuffled by key and sorted. Exact copies
   share every key; under the ``exact`` method (no search keys) the digest is the one key.
3. Links: each run of one key (a group) is linked as every candidate pair of the group would
   link it (``SearchKeys.links``: within ``k`` under a SimHash method, by the engine's own
   search), at most one link a member, so a family of m near copies makes m − 1 links, not
   m²/2 pairs.
4. Parts: connected components of the links. Up to a few million links the driver collects
   them and runs union-find in Rust; beyond, alternating large-star and small-star rounds on
   the cluster (Kiveris et al. 2014, checkpointed each round). A document can only be a
   duplicate of a document of its part, so the engine's answer on a part is its answer on
   the whole corpus.
5. The rows of parts of two or more, with their texts (the one shuffle of the text column),
   sorted by part and row, go through the Rust engine itself (``PartEngine``: the linear
   decision of ``neardup dedup``, representative-centred clusters in keep order), one part
   at a time in bounded memory: a part's texts beyond 64 MB wait in a temporary file. With an
   ``id_col``, the rows' ids travel with their texts and the answers are named by them in the
   same task (every row a part names is there), not by a second pass over the input.
6. The input joined to the per-row answers (broadcast when few enough) and persisted
   (:func:`dedup_jsonl` with ``rows="clustered"``: the answers of the clustered records alone,
   the input not read again).

The ``overlap`` method is not available: its exact search holds every shingle set in one place.

Under the SimHash methods :func:`dedup_jsonl` finds the parts of a corpus of at most
:data:`_SEARCH_ON_DRIVER` records on the driver instead (steps 2 to 4 in one Rust call over
the SimHash values its count kept, :meth:`_Stages.parts_on_driver`: the same parts, without
the shuffle and sort of every key), and step 5 reads the records' places in their files from
what the count kept, with each record's SimHash value and digest made by the count's pass: the
engine does not fingerprint them again (``PartEngine.feed``; it reads the texts for their
shingle sets). The engine of a task runs on its executor's cores (:func:`_task_threads`).

JSON Lines files can be read by :func:`dedup_jsonl`: step 1 is then the CLI's own reader
(``ingest::parse_record``, with its rules for bad records) in the executors, over pieces of the
files each task reads straight from its file (uncompressed local files: no line goes through
the JVM on its way in) or else over the lines Spark's text source splits among them; the records are counted per block of lines and, under
the SimHash methods, fingerprinted in the same pass (the SimHash values kept, 8 or 16 bytes a
record, and the keys cut from them once the count has chosen the tables: step 2 reads no
text); numbered in file order, and read again by the steps that need their texts or ids (5
and 6) instead of being parsed by Spark's JSON reader and cached.

As a job (``spark-submit .../neardup/spark.py INPUT OUTPUT``, or ``python -m neardup.spark``):
reads Parquet or JSON Lines (by :func:`dedup_jsonl`), writes Parquet; ``--help`` lists the
options.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any, Dict, Iterator, List, Optional, Union

from ._neardup import JsonlLines, NeardupError, PartEngine, Policy, SearchKeys, link_components

__all__ = ["dedup", "dedup_jsonl", "main"]

#: Columns the result adds to the input DataFrame.
RESULT_COLUMNS = ("cluster", "duplicate_of", "is_duplicate")
#: The rows :func:`dedup_jsonl` returns (its ``rows``, the job's ``--rows``), the default first:
#: every record with its fields, or the answers of the records in clusters of two or more.
ROWS = ("all", "clustered")
_log = logging.getLogger(__name__)
#: The row number column of the result when no ``id_col`` is given.
ROW_ID = "row_id"
_ROW = "__neardup_row"
#: The id of each row the parts' engine answers, in its answers (named in the same task).
_ID = "__neardup_id"
#: Bytes of text a shuffle partition gets (:func:`_partitions`).
_PARTITION_BYTES = 128 << 20
#: Most rows for which the per-row tables (16 to 24 bytes a row) are broadcast to the joins
#: with the input, which then does not move; beyond, the joins shuffle it.
_BROADCAST_ROWS = 1 << 22
#: Most links whose components are found on the driver (16 bytes each: 64 MB); beyond, by
#: rounds over the cluster (:func:`_components`).
_LINKS_ON_DRIVER = 1 << 22
#: Most records whose parts :func:`dedup_jsonl` finds on the driver from the SimHash
#: fingerprints of its count (:meth:`_Stages.parts_on_driver`); beyond, the executors cut the
#: keys, shuffle and sort them by key and link them, and the links' components are found
#: (:func:`_parts`). The driver holds each record's row number and SimHash and, one table at a
#: time, its key and set: 103 MB for a million records in the Rust call (BENCHMARKS.md,
#: "Issue 23, step 13"), about 40 bytes a record more in Python.
_SEARCH_ON_DRIVER = 1 << 22


def dedup(
    df: Any,
    text_col: str = "text",
    id_col: Optional[str] = None,
    policy: Union[Policy, Dict[str, Any], str, None] = None,
    keep: str = "first",
    order_col: Optional[str] = None,
    fetched_at_col: Optional[str] = None,
) -> Any:
    """Deduplicate a PySpark DataFrame by the policy, as ``neardup dedup`` does.

    ``df``: a ``pyspark.sql.DataFrame`` with a string column ``text_col`` (no nulls).
    ``id_col``: the column naming each row in the result (``cluster``, ``duplicate_of``);
    without one, the result gets a ``row_id`` column (the row numbers) and they name rows by it.
    ``policy``: a :class:`neardup.Policy`, a dict of its arguments, or its JSON (``None``: the
    default); every method but ``overlap``. ``keep``: ``first`` (in the DataFrame's order, or
    by ``order_col`` when given), ``longest`` (UTF-8 bytes of the text) or ``newest`` (largest
    ``fetched_at_col``, Unix seconds; nulls oldest).

    Returns the input DataFrame with ``cluster`` (the id of the kept row of the row's cluster:
    its own for a kept row), ``duplicate_of`` (the id of the kept row it duplicates, decided
    directly by the policy; null when kept) and ``is_duplicate``. The result is cached
    (``persist``) and counted before it is returned; ``unpersist()`` it when done.

    Raises :class:`neardup.NeardupError` for an unknown column, a bad ``keep`` or policy, the
    ``overlap`` method, or a null text.
    """
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    policy_json = _policy_json(policy)
    SearchKeys(policy_json, 0)  # the policy is valid and has search keys (not overlap)
    _check_columns(df, text_col, id_col, order_col, fetched_at_col, keep)
    spark = df.sparkSession
    probe = _Probe(spark)

    started = time.perf_counter()
    ordered = df.orderBy(order_col) if order_col else df
    base = ordered.withColumn(_ROW, F.monotonically_increasing_id()).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    try:
        rows, texts, text_bytes = base.agg(
            F.count(F.lit(1)), F.count(text_col), F.sum(F.octet_length(text_col))
        ).first()
        probe.check()
    except BaseException:
        base.unpersist()
        raise
    if texts != rows:
        base.unpersist()
        raise NeardupError(f"column {text_col!r} has nulls: drop or fill them first")
    _log.info("%d rows, %d bytes of text, read in %.1f s", rows, text_bytes or 0, time.perf_counter() - started)
    try:
        return _answer(
            spark,
            policy_json,
            rows,
            text_bytes or 0,
            keep,
            base,
            lambda stages: _parts(stages.links(stages.keys(base.select(_ROW, text_col)))),
            df.columns,
            text_col,
            id_col,
            fetched_at_col,
        )
    finally:
        base.unpersist()


def dedup_jsonl(
    spark: Any,
    path: Union[str, List[str]],
    policy: Union[Policy, Dict[str, Any], str, None] = None,
    keep: str = "first",
    id_field: str = "id",
    text_field: str = "text",
    rows: str = ROWS[0],
) -> Any:
    """Deduplicate JSON Lines files as ``neardup dedup`` reads them, on a cluster.

    ``path``: a file, a folder or a glob (any file system Spark reads; a list of them too):
    its lines are split among the tasks (uncompressed local files in pieces of bytes that each
    task reads straight from the file, others by Spark's text source) and read by the CLI's own
    JSON Lines reader (:class:`neardup.JsonlLines`) in the executors, so that every record
    the CLI reads is read and every one it skips (not JSON, no text, a field of the wrong
    type, invalid UTF-8, over 64 MiB) is skipped, a blank line is no record, and an HTML
    record is compared by its main text. Rows are in file order (files by name), which
    ``keep="first"`` follows; ``keep="longest"`` keeps the longest text (``newest`` is for
    :func:`dedup` with a column of Unix seconds). ``policy``: as :func:`dedup`.

    Returns a DataFrame of the records: ``id_field`` (the record's id, ``FILE:LINE`` when it
    has none, ``FILE`` the path of the file's URI), ``text_field`` (the text compared),
    ``url``, ``title`` and ``fetched_at`` (strings, null when absent), then ``cluster``,
    ``duplicate_of`` (named by the ids) and ``is_duplicate``. The answers are decided and
    kept (checkpointed) before it is returned; the records are not cached: each action on the
    result reads the files again (through Rust, about as fast as a cache) and joins the
    answers to them; ``persist()`` it to use it many times.

    ``rows="clustered"``: only the records in a cluster of two or more (what ``neardup dedup``
    writes with ``--clusters``, its removed records among them), as ``id_field``, ``cluster``,
    ``duplicate_of`` and ``is_duplicate``, straight from the kept answers: no action on it
    reads the files again. Every record not in it is kept, its own cluster. The whole answer
    in about the CLI's output, for a write of the answers alone (BENCHMARKS.md, "Issue 23,
    step 14").

    The records are never parsed by Spark's JSON reader nor cached; the first pass counts
    them and (under the SimHash methods) fingerprints them, the keys are cut from the SimHash
    values it keeps, and the steps that need the texts or ids (the parts' engine, the result)
    read the lines again through Rust (BENCHMARKS.md, "Issue 23, step 6", "step 9" and "step
    11"). Raises :class:`neardup.NeardupError` as :func:`dedup` does, and with one
    line when the executors cannot import neardup.
    """
    from pyspark.sql.pandas.types import to_arrow_schema

    policy_json = _policy_json(policy)
    SearchKeys(policy_json, 0)  # the policy is valid and has search keys (not overlap)
    if keep not in ("first", "longest"):
        raise NeardupError(f"invalid keep {keep!r} for JSON Lines (expected first or longest)")
    if rows not in ROWS:
        raise NeardupError(f"invalid rows {rows!r} (expected {' or '.join(ROWS)})")
    probe = _Probe(spark)
    started = time.perf_counter()
    frame, lines = _input(spark, path)
    # Under the SimHash methods the count also fingerprints each text, and the keys are cut
    # from those fingerprints (kept, a few bytes a record): the texts are not read again for them.
    counted, fingerprinted = _count_records(frame, lines, id_field, text_field, probe, policy_json)
    shared: List[Any] = []  # broadcast variables, destroyed once the answers are checkpointed
    try:
        starts, records, text_bytes = _starts(counted)
        bad = sum(row["bad"] for row in counted)
        _log.info(
            "%d records, %d bad ones skipped, %d bytes of text, counted in %.1f s",
            records, bad, text_bytes, time.perf_counter() - started,
        )
        columns = _record_columns(id_field, text_field)
        large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"

        def reader(named: List[str]) -> Any:
            """The function reading the records' ``named`` columns (after the row number) from
            the input's batches, and their Spark schema."""
            schema = _record_schema(named)
            arrow = to_arrow_schema(schema, prefers_large_types=large)
            return _record_reader(lines, starts, id_field, text_field, arrow), schema

        base = frame.mapInArrow(*reader(columns))
        # What the keys (under MinHash) and the parts' engine read: row numbers, texts and ids.
        read_texts, texts_schema = reader([id_field, text_field])
        if lines.splits is not None:
            # The parts' engine reads its rows' records straight from the files, by where they
            # are: their places are shuffled, not their texts.
            located: Optional[_Located] = _Located(lines, id_field, text_field)
            if fingerprinted is not None and fingerprinted.places is not None:
                # Kept by the count's pass, with each record's fingerprints (SimHash, digest)
                # when the engine takes them: it does not make them again.
                located.fingerprints = fingerprinted.fingerprints
                texts = located.cached(fingerprinted.places, starts)
            else:
                texts = frame.mapInArrow(located.reader(starts), located.ddl)
        else:
            located, texts = None, frame.mapInArrow(read_texts, texts_schema)
        members: Any = None
        on_driver = fingerprinted is not None and records <= _SEARCH_ON_DRIVER
        if on_driver and located is not None and fingerprinted.places is not None:
            # Few enough fingerprints for one process: the driver finds the parts from them,
            # and the places the count kept are given their parts as they are read (the parts
            # broadcast, 16 bytes a row in a part): no DataFrame of parts, no join.
            def members_in_parts(stages: "_Stages") -> Any:
                node, root = stages.found_on_driver(fingerprinted, starts)
                shared.append(spark.sparkContext.broadcast((node, root)))
                return located.cached(fingerprinted.places, starts, shared[-1])

            found: Any = None
            members = members_in_parts
        elif on_driver:
            found = lambda stages: stages.parts_on_driver(spark, fingerprinted, starts)  # noqa: E731
        elif fingerprinted is not None:
            found = lambda stages: _parts(stages.links(stages.cut(fingerprinted, starts)))  # noqa: E731
        else:
            found = lambda stages: _parts(stages.links(stages.keys(frame, source=read_texts)))  # noqa: E731
        return _answer(
            spark, policy_json, records, text_bytes, keep, base, found, columns, text_field, id_field, None,
            lazy=True, texts=texts, located=located, members_of=members, clustered=rows == ROWS[1],
        )
    finally:
        if fingerprinted is not None:
            fingerprinted.unpersist()
        for broadcast in shared:
            broadcast.destroy()


def _answer(
    spark: Any,
    policy_json: str,
    rows: int,
    text_bytes: int,
    keep: str,
    base: Any,
    found: Any,
    columns: List[str],
    text_col: str,
    id_col: Optional[str],
    fetched_at_col: Optional[str],
    lazy: bool = False,
    texts: Any = None,
    located: Optional["_Located"] = None,
    members_of: Any = None,
    clustered: bool = False,
) -> Any:
    """Steps 2 to 6 of the job on ``rows`` rows numbered (in :data:`_ROW`) in ``base``, with
    ``text_bytes`` of text: the parts (``found`` makes their DataFrame, ``(row, part)``, from
    the :class:`_Stages`: by the keys, their links and components, :func:`_parts`, or on the
    driver), the engine on each part, the answers joined to
    the rows (``columns``: the result's columns of the input), persisted and counted; or with
    ``lazy``, the answers alone materialised (checkpointed) and joined to ``base`` by each
    action on the result. ``texts``: where the parts' engine reads the rows' texts (and ids)
    when not from ``base`` (rows of :data:`_ROW`, ``text_col`` and ``id_col`` alone), or with
    ``located`` where it reads them from (``texts`` then the rows' places in the files).
    ``members_of``: with ``located``, instead of ``found`` and ``texts``, makes the engine's
    rows (``part`` and the places, :meth:`_Located.cached`) from the :class:`_Stages`.
    ``clustered`` (with ``lazy`` and an ``id_col``): the answers of the rows in clusters of two
    or more alone, named by ``id_col``, not joined to ``base`` (:func:`dedup_jsonl`)."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    stages = _Stages(policy_json, rows, large)
    shuffle = "spark.sql.shuffle.partitions"
    before = spark.conf.get(shuffle)
    spark.conf.set(shuffle, str(_partitions(text_bytes, spark.sparkContext.defaultParallelism)))
    try:
        fetched_at = F.col(fetched_at_col).cast("long") if fetched_at_col else F.lit(None).cast("long")
        small = F.broadcast if rows <= _BROADCAST_ROWS else (lambda frame: frame)
        named = [F.col(id_col).alias("id")] if id_col else []
        if members_of is not None:
            members = members_of(stages)
        elif located is not None:
            members = small(found(stages)).join(texts, _ROW)
        else:
            members = small(found(stages)).join(
                (base if texts is None else texts).select(
                    _ROW, F.col(text_col).alias("text"), fetched_at.alias("fetched_at"), *named
                ),
                _ROW,
            )
        conf = spark.sparkContext.getConf()
        memory = _engine_memory(conf.get("spark.executor.pyspark.memory", None))
        threads = _task_threads(spark.sparkContext.master, conf.get("spark.executor.cores", None))
        id_type = base.schema[id_col].dataType if id_col else None
        decided = stages.decide(members, keep, fetched_at_col is not None, memory, id_type, located, threads)
        started = time.perf_counter()
        if lazy and clustered and id_col:
            answers = _checkpoint(decided).where(F.col("cluster").isNotNull())
            result = answers.select(
                F.col(_ID).alias(id_col),
                F.col("cluster"),
                F.col("duplicate_of"),
                F.col("duplicate_of").isNotNull().alias("is_duplicate"),
            )
        elif lazy:
            result = _result(base, _checkpoint(decided), columns, id_col, small)
        else:
            result = _result(base, decided, columns, id_col, small).persist(StorageLevel.MEMORY_AND_DISK)
            result.count()
        _log.info("the parts decided and the result made in %.1f s", time.perf_counter() - started)
    finally:
        spark.conf.set(shuffle, before)
    return result


def _partitions(text_bytes: int, cores: int) -> int:
    """Shuffle partitions for a corpus of ``text_bytes``: about :data:`_PARTITION_BYTES` of
    text each (the text shuffle is the largest), a whole number of rounds of the cluster's
    cores, one round at least."""
    wanted = max(1, -(-text_bytes // _PARTITION_BYTES))
    cores = max(1, cores)
    return -(-wanted // cores) * cores


def _result(base: Any, decided: Any, columns: List[str], id_col: Optional[str], small: Any) -> Any:
    """The input rows with ``cluster``, ``duplicate_of`` and ``is_duplicate``: ``decided``
    names rows by their ``id_col`` (null: none) when one is given, else by number (-1: none).
    ``small``: how the per-row answers are joined to the input (broadcast when few enough: the
    input then does not move)."""
    from pyspark.sql import functions as F

    if not id_col:
        named = lambda c: F.when(F.col(c) >= 0, F.col(c)).alias(c)  # noqa: E731
        decided = decided.select(_ROW, named("cluster"), named("duplicate_of"))
    else:
        decided = decided.select(_ROW, "cluster", "duplicate_of")
    id_expr = F.col(id_col) if id_col else F.col(_ROW)
    outputs = [F.col(c) for c in columns]
    if not id_col:
        outputs.append(F.col(_ROW).alias(ROW_ID))
    return base.join(small(decided), _ROW, "left").select(
        *outputs,
        F.coalesce(F.col("cluster"), id_expr).alias("cluster"),
        F.col("duplicate_of"),
        F.col("duplicate_of").isNotNull().alias("is_duplicate"),
    )


#: Run in the executors by :func:`_check_executors`. Compiled from source outside any module,
#: so Spark pickles the function itself, not a reference to ``neardup`` that an executor
#: without the package could not even unpickle.
_EXECUTOR_PROBE = """
def probe(_):
    import sys
    try:
        import neardup._neardup
    except ImportError as error:
        return f"{sys.executable}: {error}"
    return None
"""


def _check_executors(spark: Any) -> None:
    """Fails with one clear line when the executors' Python cannot import neardup: a tiny job
    of one task per default partition, before any real work. Without it the first stage that
    needs the package fails with a hundred lines of ``ModuleNotFoundError`` from a worker."""
    namespace: Dict[str, Any] = {"__name__": "__neardup_executor_probe__"}
    exec(compile(_EXECUTOR_PROBE, "<neardup executor probe>", "exec"), namespace)
    tasks = max(1, spark.sparkContext.defaultParallelism)
    answers = spark.sparkContext.parallelize(range(tasks), tasks).map(namespace["probe"]).collect()
    failed = [answer for answer in answers if answer is not None]
    if failed:
        raise NeardupError(
            f"the Spark executors cannot import neardup ({failed[0]}): start Spark with "
            "PYSPARK_PYTHON set to a Python that has it (pip install 'neardup[spark]')"
        )


#: The columns of a record besides its id and text (:func:`dedup_jsonl`).
_RECORD_FIELDS = ("url", "title", "fetched_at")


def _input(spark: Any, path: Union[str, List[str]]) -> Any:
    """``(frame, lines)``: where the executors read the lines of the files at ``path``. When
    every file is an uncompressed local one (a ``file:`` URI: on a local master, or a file
    system mounted on every node), the pieces of the files of :func:`_file_splits`, each read
    straight from its file by the task of one row of ``frame`` (``spark.range``: one row, one
    partition a piece), the lines split in Rust: no line goes through the JVM and Arrow on its
    way in. Otherwise Spark's text source (:func:`_text_lines`, any file system and
    compression Spark reads), ``frame`` its lines. ``lines`` (a :class:`_Lines`) reads either in
    the executors' tasks."""
    splits = _file_splits(spark, path)
    if splits is None:
        return _text_lines(spark, path), _Lines(None)
    return spark.range(0, len(splits), 1, max(1, len(splits))), _Lines(splits)


def _text_lines(spark: Any, path: Union[str, List[str]]) -> Any:
    """The lines of the files at ``path`` as Spark's text source splits them among tasks (at
    ``\\n`` only, as the CLI does): the file's URI, the start of the task's block of it, and the
    line's bytes (``binary``: checked as UTF-8 by the reader, as the CLI checks it)."""
    from pyspark.sql import functions as F

    return (
        spark.read.option("lineSep", "\n")
        .text(path)
        .select(
            F.input_file_name().alias("file"),
            F.input_file_block_start().alias("block"),
            F.col("value").cast("binary").alias("line"),
        )
    )


#: Names of files Spark's text source decompresses (by their codec's extension): they are not
#: split into pieces, and are read by Spark (:func:`_input`).
_COMPRESSED = (".gz", ".bz2", ".deflate", ".lz4", ".snappy", ".zst", ".zstd", ".xz", ".br", ".lzo", ".z")
#: Bytes of a piece of a file read at a time by an executor (:func:`_read_split`).
_CHUNK_BYTES = 16 << 20


def _list_files(spark: Any, path: Union[str, List[str]]) -> List[Any]:
    """The files at ``path`` (files, folders, globs, or a list of them) as Spark's text source
    lists them, by the cluster's Hadoop file systems: ``(uri, bytes)``, folders listed to their
    leaves without hidden files (names starting with ``_`` or ``.``). Fails on a path that
    matches nothing."""
    context = spark.sparkContext
    jvm, conf = context._jvm, context._jsc.hadoopConfiguration()
    files = []
    for given in [path] if isinstance(path, str) else list(path):
        hadoop_path = jvm.org.apache.hadoop.fs.Path(given)
        fs = hadoop_path.getFileSystem(conf)
        matched = fs.globStatus(hadoop_path)
        if not matched:
            raise NeardupError(f"no file at {given!r}")
        pending = list(matched)
        while pending:
            status = pending.pop()
            if status.isDirectory():
                pending.extend(
                    s for s in fs.listStatus(status.getPath()) if not s.getPath().getName().startswith(("_", "."))
                )
            else:
                files.append((status.getPath().toUri().toString(), int(status.getLen())))
    return sorted(set(files))


def _size_conf(value: str) -> int:
    """A Spark size in bytes (``134217728b``, ``128m``, ``4MB``: bytes without a unit)."""
    match = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)b?\s*", value.lower())
    if match is None:
        raise NeardupError(f"{value!r} is not a size")
    return int(match.group(1)) * (_SPARK_UNITS[match.group(2)] if match.group(2) else 1)


def _file_splits(spark: Any, path: Union[str, List[str]]) -> Optional[List[Any]]:
    """The pieces ``(uri, start, end)`` the executors read the files at ``path`` in (byte
    ranges; a piece reads the lines that start in it, :func:`_read_split`), files in name
    order; ``None`` when a file is not an uncompressed local file (then Spark reads them).
    As Spark sizes its blocks (``spark.sql.files.maxPartitionBytes`` at most, the
    ``openCostInBytes`` at least), but in whole rounds of the cores where that allows: the 302
    MiB of 100,000 documents on 2 cores are 4 pieces of 75 MiB, not Spark's blocks of 128, 128
    and 46 MiB, the last of which ran with a core idle. Each file is cut on its own."""
    files = _list_files(spark, path)
    if any(not uri.startswith("file:") or uri.lower().endswith(_COMPRESSED) for uri, _ in files):
        return None
    conf = spark.conf
    most = max(1, _size_conf(conf.get("spark.sql.files.maxPartitionBytes", "128m")))
    least = _size_conf(conf.get("spark.sql.files.openCostInBytes", "4m"))
    cores = max(1, spark.sparkContext.defaultParallelism)
    total = sum(size for _, size in files)
    pieces = -(-max(1, -(-total // most)) // cores) * cores
    size = max(1, min(most, max(least, -(-total // pieces))))
    splits = []
    for uri, length in files:
        count = -(-length // size)
        bounds = [length * i // count for i in range(count + 1)]
        splits.extend((uri, start, end) for start, end in zip(bounds, bounds[1:]))
    return splits


class _Lines:
    """How a task reads the lines of its part of the input (:func:`_input`): the pieces
    ``splits`` of the files (``None``: the batches of Spark's text source)."""

    def __init__(self, splits: Optional[List[Any]]) -> None:
        self.splits = splits

    def read(self, batches: Iterator[Any], reader: Any, first_line: Any) -> Iterator[Any]:
        """``(file, block, lines, out)`` for each run of lines of one block (a piece, or a
        block of Spark's text source) in the task's ``batches``, in the block's order: their
        records read by ``reader`` (a :class:`JsonlLines`: ``out`` is its dict), ``lines`` how
        many lines they were; ``first_line(file, block)`` the lines of the file before the
        block (they name the records without an id)."""
        import numpy as np

        if self.splits is None:
            done: Dict[Any, int] = {}
            for batch in batches:
                for file, block, lines in _line_runs(batch):
                    before = first_line(file, block) + done.get((file, block), 0)
                    out = reader.read(*_text_buffers(lines, view=True), _source(file), before + 1)
                    done[(file, block)] = done.get((file, block), 0) + len(lines)
                    yield file, block, len(lines), out
            return
        for batch in batches:
            for index in np.asarray(batch.column(0), dtype=np.int64).tolist():
                file, start, end = self.splits[index]
                for lines, out in _read_split(reader, file, start, end, first_line(file, start)):
                    yield file, start, lines, out


def _read_split(reader: Any, uri: str, start: int, end: int, first_line: int) -> Iterator[Any]:
    """``(lines, out)`` for each chunk of the lines of the local file ``uri`` that start in bytes
    ``start`` to ``end`` (the last may end beyond it; a piece starting inside a line begins at
    the next one: every line is read by the piece it starts in), read straight from the file
    :data:`_CHUNK_BYTES` at a time and split and read in Rust (``JsonlLines.read_range``);
    ``first_line``: the lines of the file before the piece. ``out`` is ``read_range``'s dict
    with ``chunk_at`` (the file's byte where the chunk starts: ``line_at`` is from there) and
    ``first_line`` (the chunk's first line's number, 1-based)."""
    import os

    path = _source(uri)
    fd = os.open(path, os.O_RDONLY)
    try:
        at = _line_start(fd, start)
        line = first_line + 1
        want = _CHUNK_BYTES
        while True:
            data = os.pread(fd, want, at)
            out = reader.read_range(data, max(0, end - at), len(data) < want, path, line)
            if out["lines"] == 0 and not out["done"]:
                want *= 2  # a line longer than the chunk: read it whole
                continue
            out["chunk_at"], out["first_line"] = at, line  # where its lines are in the file
            yield out["lines"], out
            if out["done"]:
                return
            at += out["consumed"]
            line += out["lines"]
            want = _CHUNK_BYTES
    finally:
        os.close(fd)


def _line_start(fd: int, start: int) -> int:
    """Where the first line starting at byte ``start`` or after starts in the open file ``fd``
    (the file's end when none does): ``start`` when it is 0 or follows a ``\\n``."""
    import os

    if start == 0:
        return 0
    at, step = start - 1, 1 << 16
    while True:
        data = os.pread(fd, step, at)
        found = data.find(b"\n")
        if found >= 0:
            return at + found + 1
        at += len(data)
        if len(data) < step:
            return at


class _Located:
    """Where the records of the pieces of local files (:class:`_Lines` with ``splits``) are:
    their rows (``ddl``: the row number, the index of its file in ``paths``, the byte ``at``
    which its line starts, its ``bytes``, its ``line``, 1-based), 40 bytes a record, which the
    parts' engine reads the records by (``JsonlLines.read_at``) instead of their texts
    travelling through the shuffle (BENCHMARKS.md, "Issue 23, step 11"). With
    ``fingerprints`` (set when the count's pass kept them, :func:`_count_records`), the rows
    of :meth:`cached` also carry each record's SimHash value and digest (:data:`_FINGERPRINTS`,
    8 or 16 and 16 or 32 bytes), which the engine takes instead of fingerprinting the texts it
    reads again (``PartEngine.feed``; BENCHMARKS.md, "Issue 23, step 14")."""

    ddl = f"{_ROW} long, file long, at long, bytes long, line long"

    def __init__(self, lines: "_Lines", id_field: str, text_field: str) -> None:
        assert lines.splits is not None
        self.lines = lines
        uris = sorted({uri for uri, _, _ in lines.splits})
        self.files = {uri: index for index, uri in enumerate(uris)}
        self.paths = [_source(uri) for uri in uris]
        self.id_field = id_field
        self.text_field = text_field
        self.fingerprints = False

    def cached(self, places: Any, starts: Dict[Any, Any], parts: Any = None) -> Any:
        """The places of the records (rows of :attr:`ddl`) from those the count's pass kept
        (``places``: rows of ``file``, ``block``, ``first`` and ``places``, and with
        :attr:`fingerprints` ``simhash`` and ``digest``, :func:`_count_records`), numbered from
        ``starts`` as :func:`_record_reader` numbers them: the records are not read again for
        them. With ``parts`` (a broadcast variable of ``(node, root)``, the rows in parts
        ascending and their parts, as ``SearchKeys.parts`` gives them), only the rows in a
        part, each with its ``part`` first. With :attr:`fingerprints`, each row ends with its
        record's SimHash value and digest (:data:`_FINGERPRINTS`)."""
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        ddl = self.ddl if parts is None else f"part long, {self.ddl}"
        if self.fingerprints:
            ddl = f"{ddl}, {_FINGERPRINTS}"
        schema = to_arrow_schema(StructType.fromDDL(ddl))
        files, fingerprints = self.files, self.fingerprints

        def read(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            node, root = parts.value if parts is not None else (None, None)
            for batch in batches:
                runs = zip(*(batch.column(i).to_pylist() for i in range(6 if fingerprints else 4)))
                for file, block, first, run, *made in runs:
                    place = np.frombuffer(run, dtype=np.int64).reshape(-1, 3)
                    count = len(place)
                    lines_before, rows_before = starts[(file, block)]
                    row = rows_before + first + np.arange(count, dtype=np.int64)
                    index = np.full(count, files[file], dtype=np.int64)
                    columns = [row, index, place[:, 0], place[:, 1], lines_before + place[:, 2]]
                    # The SimHash values and digests, one row of bytes a record.
                    columns += [np.frombuffer(values, dtype=np.uint8).reshape(count, -1) for values in made]
                    if node is not None:
                        at = np.minimum(np.searchsorted(node, row), max(len(node) - 1, 0))
                        inside = node[at] == row if len(node) else np.zeros(count, np.bool_)
                        columns = [root[at][inside]] + [c[inside] for c in columns]
                    arrays = [
                        _fixed(c.tobytes(), c.shape[1], len(c)) if c.ndim == 2 else pa.array(c) for c in columns
                    ]
                    yield pa.RecordBatch.from_arrays(arrays, schema=schema)

        return places.mapInArrow(read, ddl)

    def reader(self, starts: Dict[Any, Any]) -> Any:
        """The function (over the batches of the input's frame) that reads the places of the
        records, numbered as :func:`_record_reader` numbers them (``starts``)."""
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        schema = to_arrow_schema(StructType.fromDDL(self.ddl))
        lines, files, id_field, text_field = self.lines, self.files, self.id_field, self.text_field

        def read(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            reader = JsonlLines(id_field, text_field)
            done: Dict[Any, int] = {}
            for file, block, _, out in lines.read(batches, reader, lambda file, block: starts[(file, block)][0]):
                rows_done = done.get((file, block), 0)
                line = np.asarray(out["line"], dtype=np.int64)
                done[(file, block)] = rows_done + len(line)
                if len(line):
                    row = starts[(file, block)][1] + rows_done + np.arange(len(line), dtype=np.int64)
                    at = out["chunk_at"] + np.asarray(out["line_at"], dtype=np.int64)[line]
                    size = np.asarray(out["line_bytes"], dtype=np.int64)[line]
                    index = np.full(len(line), files[file], dtype=np.int64)
                    columns = [row, index, at, size, out["first_line"] + line]
                    yield pa.RecordBatch.from_arrays([pa.array(c) for c in columns], schema=schema)

        return read


_COUNT_DDL = (
    "file string, block long, lines long, records long, text_bytes long, bad long, first long, simhash binary, "
    "places binary, digest binary"
)
#: The columns of each record's fingerprints that the count's pass makes and the engine takes
#: (``PartEngine.feed``): its SimHash value (big-endian) and its digest.
_FINGERPRINTS = "simhash binary, digest binary"


def _count_records(
    frame: Any, lines: "_Lines", id_field: str, text_field: str, probe: "_Probe", policy_json: str
) -> Any:
    """``(counted, fingerprinted)``, the input read by ``lines`` over ``frame``
    (:func:`_input`). ``counted``: per block of lines (``file``, ``block``), its
    ``lines``, the ``records`` the CLI reads of them, their ``text_bytes`` and the ``bad``
    records skipped; once the ``probe`` has passed (it runs while this stage is planned).
    ``fingerprinted``: when the policy's keys are cut from the SimHash alone
    (``SearchKeys.cuts_from_simhash``), the SimHash fingerprints of the records made in the
    same pass, persisted (``unpersist`` it when the parts are decided): a :class:`_Persisted`
    whose ``frame`` has rows of ``file``, ``block``, ``first`` (the block's records before
    them) and ``simhash`` (a run of the block's records' values end to end), and, when
    ``lines`` reads pieces of local files, whose ``places`` has rows of ``file``, ``block``,
    ``first`` and ``places`` (where the same records are in their file, :meth:`_Located.cached`)
    and, when the parts' engine takes the fingerprints made here (``PartEngine.takes_fingerprints``:
    ``fingerprints`` true), ``simhash`` and ``digest`` (the runs' digests end to end); else
    ``None``."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    from pyspark.sql.pandas.types import to_arrow_schema
    from pyspark.sql.types import StructType

    schema = StructType.fromDDL(_COUNT_DDL)
    arrow_schema = to_arrow_schema(schema)
    fingerprint = policy_json if SearchKeys(policy_json, 0).cuts_from_simhash else None
    # The digests are kept only where the engine reads the records by their places and takes them.
    carry = fingerprint is not None and lines.splits is not None and PartEngine(policy_json).takes_fingerprints
    counting = frame.mapInArrow(
        lambda batches: _count_lines(batches, lines, id_field, text_field, arrow_schema, fingerprint, carry), schema
    )
    if fingerprint is not None:
        counting = counting.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        probe.check()
        counted = counting.where(F.col("simhash").isNull()).collect()
    except BaseException:
        counting.unpersist()
        raise
    if fingerprint is None:
        return counted, None
    fingerprinted = counting.where(F.col("simhash").isNotNull())
    kept = ["file", "block", "first", "places"] + (["simhash", "digest"] if carry else [])
    places = fingerprinted.select(*kept) if lines.splits is not None else None
    return counted, _Persisted(fingerprinted.select("file", "block", "first", "simhash"), counting, places, carry)


class _Persisted:
    """DataFrames (``frame``, and ``places`` or ``None``) over a persisted one
    (``persisted``): :meth:`unpersist` drops the cache. ``fingerprints``: whether ``places``
    carries the records' fingerprints (:data:`_FINGERPRINTS`)."""

    def __init__(self, frame: Any, persisted: Any, places: Any = None, fingerprints: bool = False) -> None:
        self.frame = frame
        self.persisted = persisted
        self.places = places
        self.fingerprints = fingerprints

    def unpersist(self) -> None:
        """Drops the persisted DataFrame's cache."""
        self.persisted.unpersist()


def _count_lines(
    batches: Iterator[Any],
    lines: "_Lines",
    id_field: str,
    text_field: str,
    schema: Any,
    policy_json: Optional[str],
    digests: bool = False,
) -> Iterator[Any]:
    """The rows of :func:`_count_records` in one task: the counts, and with a ``policy_json``
    the records' SimHash fingerprints (one row a run of a block's lines), with, when ``lines``
    reads pieces of local files, where each record is: per record its line's first byte in the
    file, its bytes and its line in the block (1-based), int64 end to end (24 bytes); with
    ``digests``, their digests too (made by the same call)."""
    import numpy as np
    import pyarrow as pa

    reader = JsonlLines(id_field, text_field)
    keys = SearchKeys(policy_json, 0) if policy_json is not None else None
    counts: Dict[Any, List[int]] = {}
    fingerprinted: List[Dict[str, Any]] = []
    for file, block, read, out in lines.read(batches, reader, lambda file, block: 0):
        count = counts.setdefault((file, block), [0, 0, 0, 0])
        records = len(out["line"])
        if keys is not None and records:
            offsets, data = out["text"][0], out["text"][1]
            made = keys.fingerprint(offsets, data)
            run = {"file": file, "block": block, "first": count[1], "simhash": made["simhash"]}
            if digests:
                run["digest"] = made["digest"]
            if "chunk_at" in out:  # read from a piece of a local file: where each record is
                line = np.asarray(out["line"], dtype=np.int64)
                at = out["chunk_at"] + np.asarray(out["line_at"], dtype=np.int64)[line]
                size = np.asarray(out["line_bytes"], dtype=np.int64)[line]
                run["places"] = np.stack([at, size, out["first_line"] + line], axis=1).tobytes()
            fingerprinted.append(run)
        count[0] += read
        count[1] += records
        count[2] += int(out["text"][0][-1])
        count[3] += out["bad"]
    rows = [
        {"file": file, "block": block, "lines": c[0], "records": c[1], "text_bytes": c[2], "bad": c[3]}
        for (file, block), c in counts.items()
    ]
    yield pa.RecordBatch.from_pylist(rows + fingerprinted, schema=schema)


def _starts(counted: List[Any]) -> Any:
    """``(starts, records, text_bytes)``: per block of lines ``(file, block)``, the number of
    lines of its file before it and of records before it (files in name order, blocks in file
    order), and the totals."""
    starts: Dict[Any, Any] = {}
    rows, text_bytes, lines, file = 0, 0, 0, None
    for c in sorted(counted, key=lambda c: (c["file"], c["block"])):
        if c["file"] != file:
            file, lines = c["file"], 0
        starts[(c["file"], c["block"])] = (lines, rows)
        lines += c["lines"]
        rows += c["records"]
        text_bytes += c["text_bytes"]
    return starts, rows, text_bytes


def _record_columns(id_field: str, text_field: str) -> List[str]:
    """The columns of :func:`dedup_jsonl`'s records."""
    named = [id_field, text_field]
    return named + [f for f in _RECORD_FIELDS if f not in named]


def _record_schema(columns: List[str]) -> Any:
    """The rows of :func:`dedup_jsonl`: the row number, the text (``columns[1]``: where the
    keys' step reads it), then the other ``columns`` (strings)."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    ordered = [columns[1], columns[0]] + columns[2:]
    return StructType(
        [StructField(_ROW, LongType(), False)] + [StructField(c, StringType(), True) for c in ordered]
    )


def _record_reader(lines: "_Lines", starts: Dict[Any, Any], id_field: str, text_field: str, schema: Any) -> Any:
    """The function (over the batches of the input's frame, :func:`_input`) that reads their
    records by ``lines`` as rows of ``schema`` (:func:`_record_schema`), numbered in file order
    from ``starts`` (:func:`_starts`), ids of records without one named by their line."""

    read_as = {field: field for field in _RECORD_FIELDS}  # column -> what the reader names it
    read_as.update({id_field: "id", text_field: "text"})

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        import numpy as np
        import pyarrow as pa

        reader = JsonlLines(id_field, text_field)
        done: Dict[Any, int] = {}
        for file, block, _, out in lines.read(batches, reader, lambda file, block: starts[(file, block)][0]):
            rows_done = done.get((file, block), 0)
            count = len(out["line"])
            done[(file, block)] = rows_done + count
            if count:
                row = pa.array(starts[(file, block)][1] + rows_done + np.arange(count, dtype=np.int64))
                values = [_strings(*out[read_as[f.name]]) for f in list(schema)[1:]]
                yield _batch([row] + values, schema)

    return read


def _line_runs(batch: Any) -> Iterator[Any]:
    """The runs of rows of one block in a batch of :func:`_text_lines`: ``(file, block, lines)``."""
    import numpy as np

    if batch.num_rows == 0:
        return
    files = batch.column(0).to_numpy(zero_copy_only=False)
    blocks = np.asarray(batch.column(1), dtype=np.int64)
    change = np.flatnonzero((files[1:] != files[:-1]) | (blocks[1:] != blocks[:-1])) + 1
    bounds = [0, *change.tolist(), batch.num_rows]
    for start, end in zip(bounds, bounds[1:]):
        yield files[start], int(blocks[start]), batch.column(2).slice(start, end - start)


def _source(uri: str) -> str:
    """The name of a file in ``FILE:LINE`` ids: the path of a ``file:`` URI, else the URI."""
    from urllib.parse import unquote, urlparse

    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def _strings(offsets: Any, data: bytes, valid: Any) -> Any:
    """An Arrow string array of ``offsets`` (int64) into ``data``, null where not ``valid``."""
    import numpy as np
    import pyarrow as pa

    count = len(valid)
    nulls = None if valid.all() else pa.array(valid, pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(
        pa.large_string(), count, [nulls, pa.py_buffer(np.ascontiguousarray(offsets)), pa.py_buffer(data)]
    )


def _executors_run_this_python(spark: Any) -> bool:
    """Whether the executors' Python workers are this very interpreter on this machine, with
    neardup where it imports it from: a ``local`` master (the executor is the driver's JVM,
    its workers get this process's environment), ``PYSPARK_PYTHON`` this interpreter's path
    (not resolved through links: a venv's ``python`` links to a base Python without the
    venv's packages), and neardup's extension loaded from this interpreter's own
    site-packages (not from a ``PYTHONPATH`` or working folder). Then they import what this
    process imported, and the probe's job would only say so, at the cost of a Python daemon of
    its own (RDD workers are not the Arrow stages' workers) that the first stage waits for:
    5 to 16 task-seconds on 2 busy cores (BENCHMARKS.md, "Issue 23, step 10")."""
    import os
    import shutil
    import site
    import sys

    from . import _neardup

    context = spark.sparkContext
    if not (context.master == "local" or context.master.startswith("local[")):
        return False
    workers = shutil.which(context.pythonExec)
    if workers is None or os.path.abspath(workers) != os.path.abspath(sys.executable):
        return False
    package = os.path.dirname(os.path.dirname(os.path.abspath(_neardup.__file__)))
    return package in {os.path.abspath(p) for p in site.getsitepackages()}


class _Probe:
    """:func:`_check_executors` in a thread of its own, started at once, so that its tiny job
    runs while the driver plans (and the executors start) the job's first stage: :meth:`check`
    waits for it and raises what it found, before that stage runs. No job at all when the
    executors run this very Python (:func:`_executors_run_this_python`)."""

    def __init__(self, spark: Any) -> None:
        import threading

        self.error: Optional[BaseException] = None
        self.thread: Optional[threading.Thread] = None
        if _executors_run_this_python(spark):
            return  # they import what this process imported: nothing to find out
        self.thread = threading.Thread(target=self._run, args=(spark,), name="neardup-probe", daemon=True)
        self.thread.start()

    def _run(self, spark: Any) -> None:
        try:
            _check_executors(spark)
        except BaseException as error:  # handed to the caller's thread by check()
            self.error = error

    def check(self) -> None:
        """Waits for the probe; raises its error (the executors cannot import neardup)."""
        if self.thread is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error


def _policy_json(policy: Union[Policy, Dict[str, Any], str, None]) -> str:
    """The policy as JSON (what travels to the executors)."""
    if policy is None:
        return Policy.default().to_json()
    if isinstance(policy, Policy):
        return policy.to_json()
    if isinstance(policy, dict):
        return Policy(**policy).to_json()
    return Policy.from_json(policy).to_json()


def _check_columns(
    df: Any,
    text_col: str,
    id_col: Optional[str],
    order_col: Optional[str],
    fetched_at_col: Optional[str],
    keep: str,
) -> None:
    """Fails with a readable message on a missing column, a clash or a bad ``keep``."""
    if keep not in ("first", "longest", "newest"):
        raise NeardupError(f"invalid keep {keep!r} (expected first, longest or newest)")
    if keep == "newest" and fetched_at_col is None:
        raise NeardupError('keep="newest" needs fetched_at_col (Unix seconds per row)')
    for role, name in (
        ("text_col", text_col),
        ("id_col", id_col),
        ("order_col", order_col),
        ("fetched_at_col", fetched_at_col),
    ):
        if name is not None and name not in df.columns:
            raise NeardupError(f"the DataFrame has no column {name!r} ({role})")
    added = RESULT_COLUMNS + (() if id_col else (ROW_ID,))
    clash = [c for c in added if c in df.columns]
    if clash or _ROW in df.columns:
        raise NeardupError(f"the DataFrame already has column(s) {clash or [_ROW]}: rename them first")
    if dict(df.dtypes)[text_col] != "string":
        raise NeardupError(f"column {text_col!r} is {dict(df.dtypes)[text_col]}, not string")


_SPARK_UNITS = {"": 1 << 20, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40, "p": 1 << 50}


def _task_threads(master: str, executor_cores: Optional[str]) -> Optional[int]:
    """The threads the engine may use in a task (``PartEngine(threads=...)``): its executor's
    cores, ``spark.executor.cores`` when set, else what the ``master`` gives each executor
    (``local[N]``: N, ``local[*]``: the machine's processors, ``local``: 1,
    ``local-cluster[W,C,M]``: C); ``None`` otherwise (a cluster manager's default executor:
    rayon's default, one thread a processor of the machine). Every task may use all of them,
    not only its ``spark.task.cpus``: the engine's step has tasks of very unequal size (one
    part may hold most of a corpus, BENCHMARKS.md "Issue 23, step 12"), and a task that runs
    on alone has its executor's cores to itself; while tasks run side by side the system shares
    the cores among their threads. The answers are the same whatever the number (BENCHMARKS.md,
    "Issue 23, step 13")."""
    import os

    if executor_cores is not None:
        cores = int(executor_cores)
        if cores < 1:
            raise NeardupError(f"spark.executor.cores {executor_cores!r} is not a number of cores")
        return cores
    if master == "local":
        return 1
    local = re.fullmatch(r"local\[(\*|\d+)(?:,\s*\d+)?\]", master)
    if local:
        return (os.cpu_count() or 1) if local.group(1) == "*" else max(1, int(local.group(1)))
    cluster = re.fullmatch(r"local-cluster\[\s*\d+\s*,\s*(\d+)\s*,\s*\d+\s*\]", master)
    if cluster:
        return max(1, int(cluster.group(1)))
    return None


def _engine_memory(pyspark_memory: Optional[str]) -> Optional[int]:
    """The budget of the engine in a Python worker: three quarters of
    ``spark.executor.pyspark.memory`` (Spark's size: MiB without a unit; ``k``, ``m``, ``g``,
    ``t``, ``p``, optionally followed by ``b``), the rest left to the worker's Arrow batches and
    Python, as a bound on the whole worker (``PartEngine(whole_process=True)``); at least the
    engine's least (16 MiB). ``None`` when the limit is not set: then each run of the engine
    gets its default budget on top of what the worker holds."""
    if pyspark_memory is None:
        return None
    match = re.fullmatch(r"\s*(\d+)\s*([kmgtp]?)b?\s*", pyspark_memory.lower())
    if match is None:
        raise NeardupError(f"spark.executor.pyspark.memory {pyspark_memory!r} is not a size")
    limit = int(match.group(1)) * _SPARK_UNITS[match.group(2)]
    return max(limit * 3 // 4, 16 << 20)


class _Stages:
    """Stages 2, 3 and 5: the functions the executors run, with what they need (the policy as
    JSON, the corpus size that chooses the table design, Arrow's string and binary types)."""

    def __init__(self, policy_json: str, rows: int, large_types: bool) -> None:
        self.policy_json = policy_json
        self.rows = rows
        self.large_types = large_types
        self.key_width = SearchKeys(policy_json, rows).key_width

    def _schema(self, schema: Any) -> Any:
        """The Arrow schema of a Spark schema (a ``StructType`` or its DDL)."""
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        struct = StructType.fromDDL(schema) if isinstance(schema, str) else schema
        return to_arrow_schema(struct, prefers_large_types=self.large_types)

    def keys(self, texts: Any, source: Any = None) -> Any:
        """One row per search key of every text: ``key``, the row and its ``simhash``. Under
        the ``exact`` method (no search keys) the text's digest is its one key, so that exact
        copies meet; under the others exact copies share every key. ``texts``: rows of the
        row number and the text, or batches that ``source`` (a function over batches, in the
        same task: no second Python worker) turns into such rows."""
        ddl = f"key binary, {_ROW} long, simhash binary"
        schema, policy_json, rows = self._schema(ddl), self.policy_json, self.rows

        def fingerprint(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            keys = SearchKeys(policy_json, rows)
            for batch in source(batches) if source else batches:
                n = batch.num_rows
                out = keys.fingerprint(*_text_buffers(batch.column(1), view=True))
                if keys.key_width:
                    offsets = out["key_offsets"]
                    key = _fixed(out["keys"], keys.key_width, int(offsets[-1]))
                    owner = pa.array(np.repeat(np.arange(n), np.diff(offsets)))
                else:
                    key = _fixed(out["digest"], out["digest_width"], n)
                    owner = pa.array(np.arange(n))
                simhash = _fixed(out["simhash"], keys.simhash_width, n)
                yield _batch([key, batch.column(0).take(owner), simhash.take(owner)], schema)

        return texts.mapInArrow(fingerprint, ddl)

    def cut(self, fingerprinted: Any, starts: Dict[Any, Any]) -> Any:
        """The rows of :meth:`keys` (``key``, row, ``simhash``) cut from the SimHash
        fingerprints made while the records were counted (``fingerprinted``: rows of
        :func:`_count_records`), numbered from ``starts`` (:func:`_starts`) as the reader
        numbers the records: no text is read again. The SimHash methods only."""
        ddl = f"key binary, {_ROW} long, simhash binary"
        schema, policy_json, rows = self._schema(ddl), self.policy_json, self.rows

        def cut(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            keys = SearchKeys(policy_json, rows)
            width = keys.simhash_width
            for batch in batches:
                runs = zip(*(batch.column(i).to_pylist() for i in range(4)))
                for file, block, first, simhash in runs:
                    n = len(simhash) // width
                    out = keys.cut(simhash)
                    offsets = out["key_offsets"]
                    owner = np.repeat(np.arange(n), np.diff(offsets))
                    key = _fixed(out["keys"], keys.key_width, int(offsets[-1]))
                    row = pa.array(starts[(file, block)][1] + first + owner.astype(np.int64))
                    values = _fixed(simhash, width, n).take(pa.array(owner))
                    yield _batch([key, row, values], schema)

        return fingerprinted.frame.mapInArrow(cut, ddl)

    def parts_on_driver(self, spark: Any, fingerprinted: Any, starts: Dict[Any, Any]) -> Any:
        """The parts (``(row, part)`` as :func:`_parts` gives them) found on the driver from the
        SimHash fingerprints made while the records were counted (``fingerprinted``: rows of
        :func:`_count_records`, numbered from ``starts`` as in :meth:`cut`): collected (8 or
        16 bytes a record), every key cut, sorted and linked, and the links' components found,
        in Rust (``SearchKeys.parts``): the parts the executors' keys, links and components
        give, without their two stages, their shuffle of every key and the JVM's sort. For a
        corpus of at most :data:`_SEARCH_ON_DRIVER` records."""
        import pyarrow as pa
        from pyspark.sql import functions as F

        node, root = self.found_on_driver(fingerprinted, starts)
        found = pa.table({"node": pa.array(node, pa.int64()), "root": pa.array(root, pa.int64())})
        return spark.createDataFrame(found).select(F.col("node").alias(_ROW), F.col("root").alias("part"))

    def found_on_driver(self, fingerprinted: Any, starts: Dict[Any, Any]) -> Any:
        """``(node, root)``: the rows in parts of two or more (ascending) and their parts, found
        on the driver as :meth:`parts_on_driver` finds them."""
        import numpy as np

        started = time.perf_counter()
        keys = SearchKeys(self.policy_json, self.rows)
        width = keys.simhash_width
        table = fingerprinted.frame.toArrow()
        rows, values = [], []
        runs = zip(*(table.column(name).to_pylist() for name in ("file", "block", "first", "simhash")))
        for file, block, first, simhash in runs:
            count = len(simhash) // width
            rows.append(starts[(file, block)][1] + first + np.arange(count, dtype=np.int64))
            values.append(np.frombuffer(simhash, dtype=np.uint8).reshape(count, width))
        row = np.concatenate(rows) if rows else np.zeros(0, np.int64)
        value = np.concatenate(values) if values else np.zeros((0, width), np.uint8)
        order = np.argsort(row, kind="stable")
        node, root = keys.parts(row[order], value[order].tobytes())
        _log.info(
            "%d rows in parts, found on the driver from %d fingerprints in %.1f s",
            len(node), len(row), time.perf_counter() - started,
        )
        return node, root

    def links(self, keyed: Any) -> Any:
        """Links ``(a, b)``, ``a < b``, that join the rows sharing a key as every candidate
        pair of the engine's search would: ``keyed`` shuffled by key and sorted, each run of
        one key (a group, which may span batches) linked in Rust (``SearchKeys.links``)."""
        schema, policy_json, rows = self._schema("a long, b long"), self.policy_json, self.rows

        def links(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            keys = SearchKeys(policy_json, rows)
            held = None  # the last group of the batch before, which may go on
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                key, ids, simhash = _sorted_keys(batch, keys.simhash_width)
                if held is not None:
                    key, ids, simhash = (np.concatenate(p) for p in zip(held, (key, ids, simhash)))
                starts = np.flatnonzero(np.any(key[1:] != key[:-1], axis=1)) + 1
                last = int(starts[-1]) if len(starts) else 0
                if last:
                    bounds = np.concatenate([[0], starts]).astype(np.int64)
                    a, b = keys.links(ids[:last], simhash[:last].tobytes(), bounds)
                    if len(a):
                        yield _batch([pa.array(a), pa.array(b)], schema)
                held = (key[last:], ids[last:], simhash[last:])
            if held is not None and len(held[1]) > 1:
                bounds = np.array([0, len(held[1])], np.int64)
                a, b = keys.links(held[1], held[2].tobytes(), bounds)
                if len(a):
                    yield _batch([pa.array(a), pa.array(b)], schema)

        return keyed.repartition("key").sortWithinPartitions("key").mapInArrow(links, "a long, b long")

    def decide(
        self,
        members: Any,
        keep: str,
        dated: bool,
        memory: Optional[int],
        id_type: Any = None,
        located: Optional["_Located"] = None,
        threads: Optional[int] = None,
    ) -> Any:
        """The engine on each part: ``members`` (``part``, row, ``text``, ``fetched_at`` and,
        with an ``id_type``, ``id``) in, per row ``cluster`` and ``duplicate_of`` out: as row
        numbers (-1: none), or with an ``id_type`` as the rows' ids (null: none), named in the
        task that decides them (a part's rows are all there), with the row's own id
        (:data:`_ID`): no second pass over the input for the ids. Each part decided within ``memory`` bytes (``None``: the engine's default).
        With ``located``, ``members`` carry where each row's record is in its file instead of
        its text and id (``part``, row, ``file``, ``at``, ``bytes``, ``line``: a
        :class:`_Located`'s rows) and the task reads them from there (``JsonlLines.read_at``):
        the texts are not shuffled. The engine runs on ``threads`` threads of its own
        (:func:`_task_threads`; ``None``: one a processor)."""
        from pyspark.sql.types import LongType, StructField, StructType

        answer = id_type or LongType()
        fields = ((_ROW, LongType()), ("cluster", answer), ("duplicate_of", answer))
        if id_type:
            fields += ((_ID, id_type),)
        out = StructType([StructField(name, kind) for name, kind in fields])
        schema, policy_json = self._schema(out), self.policy_json
        carried = located is not None and located.fingerprints
        if located is not None:
            columns = ["part", _ROW, "file", "at", "bytes", "line"] + (["simhash", "digest"] if carried else [])
        else:
            columns = ["part", _ROW, "text", "fetched_at"] + (["id"] if id_type else [])

        def decide(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np

            # A budget from the worker's limit bounds the whole worker; else each run of the
            # engine gets the default on top of what the worker holds.
            engine = PartEngine(
                policy_json, keep, memory=memory, whole_process=memory is not None, threads=threads
            )
            names = _Names() if id_type else None
            reader = JsonlLines(located.id_field, located.text_field) if located is not None else None
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                times: Dict[str, Any] = {}
                if dated:
                    fetched = batch.column(3)
                    times["fetched_at"] = np.asarray(fetched.fill_null(0), dtype=np.int64)
                    times["dated"] = np.asarray(fetched.is_valid(), dtype=np.bool_)
                rows = np.asarray(batch.column(1), dtype=np.int64)
                if reader is not None:
                    places = (np.asarray(batch.column(i), dtype=np.int64) for i in range(2, 6))
                    read = reader.read_at(located.paths, *places)
                    texts, ids = read["text"][:2], _strings(*read["id"])
                else:
                    texts, ids = _text_buffers(batch.column(2), view=True), batch.column(4) if id_type else None
                if names is not None:
                    names.add(rows, ids)
                made: Dict[str, Any] = {}
                if carried:  # the count's fingerprints: the engine does not make them again
                    made = {"simhash": _fixed_view(batch.column(6)), "digest": _fixed_view(batch.column(7))}
                answers = engine.feed(np.asarray(batch.column(0), dtype=np.int64), rows, *texts, **times, **made)
                if len(answers[0]):
                    yield _answers(answers, names, schema)
            answers = engine.finish()
            if len(answers[0]):
                yield _answers(answers, names, schema)

        if located is not None:
            # The places are 40 bytes a row: adaptive execution would coalesce their shuffle into
            # one task, which would then read and decide every text alone. A number of partitions
            # (sized from the texts' bytes, :func:`_partitions`) is not coalesced.
            partitions = int(members.sparkSession.conf.get("spark.sql.shuffle.partitions"))
            shuffled = members.select(*columns).repartition(partitions, "part")
        else:
            shuffled = members.select(*columns).repartition("part")
        return shuffled.sortWithinPartitions("part", _ROW).mapInArrow(decide, out)


class _Names:
    """The row numbers and ids of the rows fed to a :class:`PartEngine` and not answered yet,
    in feed order: the engine answers whole parts in the order their rows came."""

    def __init__(self) -> None:
        self.rows: List[Any] = []
        self.ids: List[Any] = []

    def add(self, rows: Any, ids: Any) -> None:
        """Holds ``rows`` and their ``ids`` (an Arrow column of a batch, and the NumPy view of
        another) until answered. Both are copied out of the batch: a column of a batch read from
        Spark's Arrow stream is a slice of the batch's one body buffer, so holding it (or a
        NumPy view of it) would hold every batch's texts until its part is answered (a part of
        200,000 rows: all of them)."""
        import numpy as np

        self.rows.append(np.array(rows, dtype=np.int64, copy=True))
        self.ids.append(ids.take(np.arange(len(ids))))

    def take(self, rows: Any) -> Any:
        """The ids of ``rows``, the next rows answered (checked)."""
        import numpy as np
        import pyarrow as pa

        held_rows, held = np.concatenate(self.rows), pa.concat_arrays(self.ids)
        count = len(rows)
        if not np.array_equal(held_rows[:count], rows):
            raise NeardupError("the engine answered rows out of their order")
        self.rows, self.ids = [held_rows[count:]], [held.slice(count)]
        return held.slice(0, count)


def _answers(answers: Any, names: Optional[_Names], schema: Any) -> Any:
    """The engine's ``answers`` (rows, and the rows of their cluster's kept row and of the kept
    row they duplicate, -1 for none) as a batch of ``schema``: by row number, or with ``names``
    the rows' ids (null for none), each row's own id last."""
    import numpy as np
    import pyarrow as pa

    rows, cluster, duplicate_of = answers
    if names is None:
        return _batch([pa.array(a) for a in answers], schema)
    ids = names.take(rows)
    order = np.argsort(rows, kind="stable")

    def named(of: Any) -> Any:
        at = order[np.minimum(np.searchsorted(rows, of, sorter=order), len(rows) - 1)]
        found = (of >= 0) & (rows[at] == of)
        if np.any((of >= 0) & ~found):
            raise NeardupError("the engine named a row outside its parts")
        return ids.take(pa.array(at, mask=~found))

    return _batch([pa.array(rows), named(cluster), named(duplicate_of), ids], schema)


def _text_buffers(texts: Any, view: bool = False) -> Any:
    """An Arrow string (or binary) column as ``(offsets, data)``: its offsets (NumPy int64,
    ``len + 1``) into its bytes, what the Rust side reads without a Python object a text. ``data``:
    the bytes copied into ``bytes``, or with ``view`` a NumPy ``uint8`` array over the column's
    own data buffer (no copy: what ``SearchKeys.fingerprint`` and ``PartEngine.feed`` take)."""
    import numpy as np

    if texts.null_count:
        raise NeardupError("a null text")
    buffers = texts.buffers()
    large = str(texts.type) in ("large_string", "large_utf8", "large_binary")
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)
    offsets = offsets[texts.offset : texts.offset + len(texts) + 1]
    if buffers[2] is None:
        data = np.zeros(0, np.uint8) if view else b""
    else:
        data = np.frombuffer(buffers[2], dtype=np.uint8) if view else buffers[2].to_pybytes()
    return offsets.astype(np.int64), data


def _fixed_view(values: Any) -> Any:
    """The values of an Arrow binary column (all of one width) end to end: a NumPy ``uint8``
    view of its data buffer, not a copy."""
    offsets, data = _text_buffers(values, view=True)
    return data[int(offsets[0]) : int(offsets[-1])] if len(offsets) > 1 else data[:0]


def _sorted_keys(batch: Any, simhash_width: int) -> Any:
    """A batch of ``key``, row, ``simhash`` as NumPy arrays: the keys (all of one width) as
    rows of bytes, the row numbers, the SimHash values as rows of ``simhash_width`` bytes."""
    import numpy as np

    ids = np.asarray(batch.column(1), dtype=np.int64)
    key = np.frombuffer(_binary_bytes(batch.column(0)), dtype=np.uint8).reshape(len(ids), -1)
    simhash = np.frombuffer(_binary_bytes(batch.column(2)), dtype=np.uint8)
    return key, ids, simhash.reshape(len(ids), simhash_width)


def _binary_bytes(values: Any) -> bytes:
    """The values of an Arrow binary column end to end."""
    import numpy as np

    buffers = values.buffers()
    offsets_type = np.int64 if str(values.type) == "large_binary" else np.int32
    offsets = np.frombuffer(buffers[1], dtype=offsets_type)[values.offset : values.offset + len(values) + 1]
    if len(offsets) == 0 or buffers[2] is None:
        return b""
    return buffers[2].to_pybytes()[int(offsets[0]) : int(offsets[-1])]


def _fixed(data: bytes, width: int, count: int) -> Any:
    """``count`` values of ``width`` bytes each, end to end in ``data``, as an Arrow binary array."""
    import numpy as np
    import pyarrow as pa

    offsets = np.arange(count + 1, dtype=np.int32) * width
    return pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def _batch(columns: List[Any], schema: Any) -> Any:
    """A record batch of ``columns`` cast to ``schema``'s types (Spark's binary may be large)."""
    import pyarrow as pa

    cast = [c.cast(f.type) if c.type != f.type else c for c, f in zip(columns, schema)]
    return pa.RecordBatch.from_arrays(cast, schema=schema)


def _checkpoint(df: Any) -> Any:
    """``df`` materialised with its lineage cut: a reliable checkpoint when the context has a
    checkpoint directory, else a local one (on the executors)."""
    if df.sparkSession.sparkContext.getCheckpointDir():
        return df.checkpoint(eager=True)
    return df.localCheckpoint(eager=True)


def _components(edges: Any) -> Any:
    """Connected components of the undirected ``edges`` (``a``, ``b``): ``(node, root)`` for
    every node of an edge, ``root`` the smallest node of its component.

    Up to :data:`_LINKS_ON_DRIVER` edges (repeats counted: an edge found in several key groups
    is not made distinct, which would cost a shuffle), in one process: the driver collects them
    (Arrow) and finds the components by union-find in Rust (``link_components``), one job
    instead of a dozen rounds of several stages each. Beyond, on the cluster: alternating
    large-star and small-star rounds (Kiveris, Lattanzi, Mirrokni, Rastogi and Vassilvitskii,
    "Connected Components in MapReduce and Beyond", SoCC 2014): edges are kept as ``(u, v)``
    with ``u > v``; the rounds end when every component is a star around its smallest node (no
    parent is a child, no child has two parents). O(log² n) rounds; each is checkpointed, so
    the plan does not grow. Both give the same components.
    """
    from pyspark.sql import functions as F

    started = time.perf_counter()
    e = _checkpoint(
        edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v")).where(
            F.col("u") != F.col("v")
        )
    )
    links = e.count()
    _log.info("%d links found in %.1f s", links, time.perf_counter() - started)
    if links <= _LINKS_ON_DRIVER:
        import numpy as np
        import pyarrow as pa

        started = time.perf_counter()
        table = e.toArrow()
        node, root = link_components(
            np.asarray(table.column("u"), dtype=np.int64), np.asarray(table.column("v"), dtype=np.int64)
        )
        found = pa.table({"node": pa.array(node, pa.int64()), "root": pa.array(root, pa.int64())})
        parts = e.sparkSession.createDataFrame(found)
        _log.info("%d rows in parts, found on the driver in %.1f s", len(node), time.perf_counter() - started)
        return parts
    while not e.isEmpty():
        e = _checkpoint(_small_star(_large_star(e)))
        parent_is_child = e.select(F.col("v").alias("u")).join(e, "u", "left_semi")
        two_parents = e.groupBy("u").count().where(F.col("count") > 1).select("u")
        if parent_is_child.union(two_parents).isEmpty():
            break
    # A star's centre (its smallest node) is no edge's `u`: it is its own root.
    roots = e.select(F.col("v").alias("node"), F.col("v").alias("root")).distinct()
    return e.select(F.col("u").alias("node"), F.col("v").alias("root")).union(roots)


def _large_star(e: Any) -> Any:
    """Every node links its larger neighbours to the smallest of its neighbourhood."""
    from pyspark.sql import functions as F

    both = e.union(e.select(F.col("v").alias("u"), F.col("u").alias("v")))
    smallest = both.groupBy("u").agg(F.least(F.min("v"), F.col("u")).alias("m"))
    return (
        both.where(F.col("v") > F.col("u"))
        .join(smallest, "u")
        .select(F.col("v").alias("u"), F.col("m").alias("v"))
        .distinct()
    )


def _small_star(e: Any) -> Any:
    """Every node links itself and its smaller neighbours to the smallest of them."""
    from pyspark.sql import functions as F

    smallest = e.groupBy("u").agg(F.min("v").alias("m"))
    linked = e.join(smallest, "u").select(F.col("v").alias("x"), "m")
    linked = linked.union(smallest.select(F.col("u").alias("x"), "m"))
    return linked.where(F.col("x") != F.col("m")).select(
        F.col("x").alias("u"), F.col("m").alias("v")
    ).distinct()


def _parts(links: Any) -> Any:
    """``(row, part)`` for every row in a part of two or more rows (a component of the links),
    ``part`` its smallest row (:func:`_components`)."""
    from pyspark.sql import functions as F

    return _components(links).select(F.col("node").alias(_ROW), F.col("root").alias("part"))


def _json_input(path: str) -> bool:
    """Whether the job reads ``path`` as JSON Lines (a ``.json`` or ``.jsonl`` name, a file or
    a folder), else as Parquet."""
    return path.rstrip("/").endswith((".json", ".jsonl"))


def main(argv: Optional[List[str]] = None) -> None:
    """The job's entry point: ``INPUT`` (Parquet, or JSON Lines by a ``.json``/``.jsonl``
    name, files or folders) deduplicated into ``OUTPUT`` (Parquet): the kept rows, or with
    ``--all`` every row with ``cluster``, ``duplicate_of`` and ``is_duplicate``. Rows keep
    every column (JSON Lines by Spark's JSON reader, every field a column); with
    ``--cli-reader``, JSON Lines are read as the CLI reads them (:func:`dedup_jsonl`: faster,
    the same records as ``neardup dedup``, but only their ``id``, ``text``, ``url``,
    ``title`` and ``fetched_at``). With ``--rows clustered`` (JSON Lines, by the CLI's
    reader), only the answers of the records in clusters of two or more: ``id``, ``cluster``,
    ``duplicate_of`` and ``is_duplicate`` (:func:`dedup_jsonl`'s ``rows``: what ``neardup
    dedup`` writes with ``--clusters`` and ``--removed``), the files not read again."""
    import argparse

    from pyspark.sql import SparkSession

    parser = argparse.ArgumentParser(prog="neardup.spark", description=main.__doc__)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--text-col", default="text")
    parser.add_argument("--id-col")
    parser.add_argument("--policy-file", help="a policy as JSON (neardup ... --show-policy)")
    parser.add_argument("--keep", default="first", choices=["first", "longest", "newest"])
    parser.add_argument("--order-col")
    parser.add_argument("--fetched-at-col")
    parser.add_argument("--all", action="store_true", help="write every row, with the result columns")
    parser.add_argument(
        "--cli-reader",
        action="store_true",
        help="read JSON Lines with the CLI's reader (faster; keeps only id, text, url, title, fetched_at)",
    )
    parser.add_argument(
        "--rows",
        default=ROWS[0],
        choices=ROWS,
        help=f"{ROWS[1]}: write only the answers of the records in clusters of two or more (id, cluster, "
        "duplicate_of, is_duplicate: the CLI's --clusters and --removed; every other record is kept), "
        f"without reading the files again; JSON Lines only, read by the CLI's reader. {ROWS[0]} (the "
        "default): the records, the kept ones or with --all every one",
    )
    args = parser.parse_args(argv)
    clustered = args.rows == ROWS[1]
    if clustered and args.all:
        parser.error(f"--rows {ROWS[1]} writes the answers of the clustered records, --all every record: not both")
    if clustered and not _json_input(args.input):
        parser.error(f"--rows {ROWS[1]} reads JSON Lines (a .json or .jsonl INPUT) by the CLI's reader")
    if clustered and (args.order_col or args.fetched_at_col):
        parser.error(f"--rows {ROWS[1]} reads by the CLI's reader, in file order: no --order-col or --fetched-at-col")

    spark = SparkSession.builder.appName("neardup-dedup").getOrCreate()
    json_input = _json_input(args.input)
    policy = None
    if args.policy_file:
        with open(args.policy_file, encoding="utf-8") as f:
            policy = f.read()
    try:
        if (args.cli_reader or clustered) and json_input and not (args.order_col or args.fetched_at_col):
            # The CLI's own reader (faster than Spark's JSON reader, and the same records).
            text_col, id_col = args.text_col, args.id_col or "id"
            result = dedup_jsonl(
                spark, args.input, policy, args.keep, id_field=id_col, text_field=text_col, rows=args.rows
            )
            columns = _record_columns(id_col, text_col)
        else:
            df = spark.read.json(args.input) if json_input else spark.read.parquet(args.input)
            columns = df.columns
            result = dedup(
                df,
                text_col=args.text_col,
                id_col=args.id_col,
                policy=policy,
                keep=args.keep,
                order_col=args.order_col,
                fetched_at_col=args.fetched_at_col,
            )
    except NeardupError as error:
        spark.stop()
        raise SystemExit(f"neardup.spark: {error}") from None
    out = result if args.all or clustered else result.where(~result["is_duplicate"]).select(*columns)
    out.write.mode("overwrite").parquet(args.output)
    result.unpersist()


if __name__ == "__main__":
    main()
