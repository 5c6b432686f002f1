"""neardup on Apache Spark: ``neardup.spark.dedup(df, text_col=..., id_col=..., policy=...)``.

The same answer as ``neardup dedup`` (the CLI) and :func:`neardup.dedup`, document by
document, on a corpus spread over a cluster. Nothing here decides: every fingerprint, search
key, pair decision and cluster comes from the Rust library, run in the executors.

The job, stage by stage (BENCHMARKS.md, "On Spark", says what each shuffles):

1. Each row gets a number in the DataFrame's order (``monotonically_increasing_id``, after
   sorting by ``order_col`` when one is given): ``keep="first"`` keeps the earliest.
2. Executors fingerprint every text and cut its search keys (``mapInArrow``): the permuted
   tables of the SimHash search, or the MinHash LSH bands, that the engine itself uses.
3. Exact groups: rows with the same digest; the first of each group stands for it.
4. Candidates: the keys are exploded and shuffled; within each key's group every pair passing
   the SimHash test (``k``) is a candidate; pairs are made distinct.
5. Each candidate pair is decided with both texts by ``Policy.decide`` (verification
   included), as ``neardup.compare`` decides it.
6. Connected components of the accepted pairs (alternating large-star and small-star rounds,
   Kiveris et al. 2014, checkpointed each round): nothing is collected on the driver.
7. Each component of two or more rows (exact copies included) is deduplicated by the Rust
   engine itself (``neardup.dedup``, ``groupBy().applyInPandas``), its rows in global order:
   the engine's clusters are representative-centred, and no accepted pair crosses a component,
   so its answer on a component is its answer on the whole corpus.

The ``overlap`` method is not available: its exact search holds every shingle set in one place.

As a job (``spark-submit .../neardup/spark.py INPUT OUTPUT``, or ``python -m neardup.spark``):
reads Parquet or JSON Lines, writes Parquet; ``--help`` lists the options.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Union

from ._neardup import NeardupError, Policy, SearchKeys

__all__ = ["dedup", "main"]

#: Columns the result adds to the input DataFrame.
RESULT_COLUMNS = ("cluster", "duplicate_of", "is_duplicate")
#: The row number column of the result when no ``id_col`` is given.
ROW_ID = "row_id"
_ROW = "__neardup_row"
#: Most candidate pairs one call of the pair step makes before handing them on.
_PAIR_BUDGET = 1 << 18


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
    _check_executors(df.sparkSession)

    ordered = df.orderBy(order_col) if order_col else df
    base = ordered.withColumn(_ROW, F.monotonically_increasing_id()).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    rows, texts = base.agg(F.count(F.lit(1)), F.count(text_col)).first()
    if texts != rows:
        base.unpersist()
        raise NeardupError(f"column {text_col!r} has nulls: drop or fill them first")
    large = df.sparkSession.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    stages = _Stages(policy_json, rows, large)

    fingerprints = stages.fingerprints(base.select(_ROW, text_col)).persist(
        StorageLevel.MEMORY_AND_DISK
    )
    edges = stages.accepted(stages.candidates(fingerprints), base.select(_ROW, text_col))
    parts = _parts(fingerprints, _components(edges))

    id_expr = F.col(id_col) if id_col else F.col(_ROW)
    members = parts.join(
        base.select(
            _ROW,
            F.col(text_col).alias("text"),
            id_expr.alias("id"),
            (F.col(fetched_at_col).cast("long") if fetched_at_col else F.lit(None).cast("long")).alias(
                "fetched_at"
            ),
        ),
        _ROW,
    )
    id_type = base.select(id_expr).schema.fields[0].dataType.simpleString()
    decided = members.groupBy("part").applyInPandas(
        _engine(policy_json, keep, fetched_at_col is not None),
        schema=f"{_ROW} long, cluster {id_type}, duplicate_of {id_type}",
    )

    joined = base.join(decided, _ROW, "left")
    outputs = [F.col(c) for c in df.columns]
    if not id_col:
        outputs.append(F.col(_ROW).alias(ROW_ID))
    result = joined.select(
        *outputs,
        F.coalesce(F.col("cluster"), id_expr).alias("cluster"),
        F.col("duplicate_of"),
        F.col("duplicate_of").isNotNull().alias("is_duplicate"),
    ).persist(StorageLevel.MEMORY_AND_DISK)
    result.count()
    fingerprints.unpersist()
    base.unpersist()
    return result


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


class _Stages:
    """Stages 2 to 5: the functions the executors run, with what they need (the policy as
    JSON, the corpus size that chooses the table design, Arrow's string and binary types)."""

    def __init__(self, policy_json: str, rows: int, large_types: bool) -> None:
        self.policy_json = policy_json
        self.rows = rows
        self.large_types = large_types
        self.key_width = SearchKeys(policy_json, rows).key_width

    def _schema(self, ddl: str) -> Any:
        from pyspark.sql.pandas.types import to_arrow_schema
        from pyspark.sql.types import StructType

        return to_arrow_schema(StructType.fromDDL(ddl), prefers_large_types=self.large_types)

    def fingerprints(self, texts: Any) -> Any:
        """Per row: ``unit`` (the first row of its exact group), ``simhash`` and ``keys``."""
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        ddl = f"{_ROW} long, digest binary, simhash binary, keys array<binary>"
        schema, policy_json, rows = self._schema(ddl), self.policy_json, self.rows

        def fingerprint(batches: Iterator[Any]) -> Iterator[Any]:
            import pyarrow as pa

            keys = SearchKeys(policy_json, rows)
            for batch in batches:
                texts = batch.column(1)
                out = keys.fingerprint(texts.to_pylist())
                n = len(texts)
                offsets = out["key_offsets"]
                flat = _fixed(out["keys"], keys.key_width, int(offsets[-1]))
                columns = [
                    batch.column(0),
                    _fixed(out["digest"], out["digest_width"], n),
                    _fixed(out["simhash"], keys.simhash_width, n),
                    pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), flat),
                ]
                yield _batch(columns, schema)

        fingerprinted = texts.mapInArrow(fingerprint, ddl)
        first = F.min(_ROW).over(Window.partitionBy("digest"))
        return fingerprinted.withColumn("unit", first).drop("digest")

    def candidates(self, fingerprints: Any) -> Any:
        """Candidate pairs ``(a, b)``, ``a < b``, among the first rows of exact groups."""
        from pyspark.sql import functions as F

        if self.key_width == 0:
            return fingerprints.sparkSession.createDataFrame([], "a long, b long")
        schema, policy_json, rows = self._schema("a long, b long"), self.policy_json, self.rows
        groups = (
            fingerprints.where(F.col(_ROW) == F.col("unit"))
            .select(_ROW, "simhash", F.explode("keys").alias("key"))
            .groupBy("key")
            .agg(F.collect_list(F.struct(_ROW, "simhash")).alias("members"))
            .where(F.size("members") > 1)
            .select("members")
        )

        def pairs(batches: Iterator[Any]) -> Iterator[Any]:
            import numpy as np
            import pyarrow as pa

            keys = SearchKeys(policy_json, rows)
            for batch in batches:
                members = batch.column(0)
                if len(members) == 0:
                    continue
                offsets = np.asarray(members.offsets, dtype=np.int64)
                values = members.values
                ids = np.asarray(values.field(0), dtype=np.int64)
                simhashes = b"".join(values.field(1).to_pylist())
                cursor: Optional[tuple] = (0, 0)
                while cursor is not None:
                    a, b, cursor = keys.pairs(ids, simhashes, offsets, cursor, _PAIR_BUDGET)
                    if len(a):
                        yield _batch([pa.array(a), pa.array(b)], schema)

        return groups.mapInArrow(pairs, "a long, b long").distinct()

    def accepted(self, candidates: Any, texts: Any) -> Any:
        """The candidate pairs the policy decides are duplicates, ``(a, b)``."""
        from pyspark.sql import functions as F

        schema, policy_json, rows = self._schema("a long, b long"), self.policy_json, self.rows
        text_col = texts.columns[1]
        involved = (
            candidates.select(F.col("a").alias(_ROW))
            .union(candidates.select(F.col("b").alias(_ROW)))
            .distinct()
        )
        needed = texts.join(involved, _ROW, "left_semi")
        side = lambda name: needed.select(  # noqa: E731
            F.col(_ROW).alias(name), F.col(text_col).alias(f"text_{name}")
        )
        pairs = candidates.join(side("a"), "a").join(side("b"), "b").select("a", "b", "text_a", "text_b")

        def decide(batches: Iterator[Any]) -> Iterator[Any]:
            keys = SearchKeys(policy_json, rows)
            for batch in batches:
                if batch.num_rows == 0:
                    continue
                duplicate = keys.decide(batch.column(2).to_pylist(), batch.column(3).to_pylist())
                kept = batch.filter(duplicate)
                yield _batch([kept.column(0), kept.column(1)], schema)

        return pairs.mapInArrow(decide, "a long, b long")


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

    Alternating large-star and small-star rounds (Kiveris, Lattanzi, Mirrokni, Rastogi and
    Vassilvitskii, "Connected Components in MapReduce and Beyond", SoCC 2014): edges are kept
    as ``(u, v)`` with ``u > v``; the rounds end when every component is a star around its
    smallest node (no parent is a child, no child has two parents). O(log² n) rounds; each is
    checkpointed, so the plan does not grow.
    """
    from pyspark.sql import functions as F

    e = _checkpoint(
        edges.select(F.greatest("a", "b").alias("u"), F.least("a", "b").alias("v"))
        .where(F.col("u") != F.col("v"))
        .distinct()
    )
    while not e.isEmpty():
        e = _checkpoint(_small_star(_large_star(e)))
        parent_is_child = e.select(F.col("v").alias("u")).join(e, "u", "left_semi")
        two_parents = e.groupBy("u").count().where(F.col("count") > 1).select("u")
        if parent_is_child.union(two_parents).isEmpty():
            break
    return e.select(F.col("u").alias("node"), F.col("v").alias("root"))


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


def _parts(fingerprints: Any, components: Any) -> Any:
    """``(row, part)`` for every row in a part of two or more rows: its exact group's first row,
    or the root of that row's component of accepted pairs."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    labels = components.select(F.col("node").alias("unit"), F.col("root"))
    parts = fingerprints.select(_ROW, "unit").join(labels, "unit", "left")
    parts = parts.select(_ROW, F.coalesce(F.col("root"), F.col("unit")).alias("part"))
    size = F.count(F.lit(1)).over(Window.partitionBy("part"))
    return parts.withColumn("size", size).where(F.col("size") > 1).drop("size")


def _engine(policy_json: str, keep: str, dated: bool) -> Any:
    """The function each part's rows go through: the Rust engine (``neardup.dedup``) on the
    part's texts in row order, its answer as ids."""

    def run(frame: Any) -> Any:
        import pandas as pd

        from . import dedup as engine_dedup

        frame = frame.sort_values(_ROW, kind="stable")
        ids = frame["id"].tolist()
        fetched_at = (
            [None if pd.isna(t) else int(t) for t in frame["fetched_at"]] if dated else None
        )
        result = engine_dedup(frame["text"].tolist(), policy_json, keep, fetched_at=fetched_at)
        clusters = result.cluster_ids()
        return pd.DataFrame(
            {
                _ROW: frame[_ROW].to_numpy(),
                "cluster": pd.Series(
                    [ids[c if c is not None else i] for i, c in enumerate(clusters)], dtype=object
                ),
                "duplicate_of": pd.Series(
                    [ids[d] if d is not None else None for d in result.duplicate_of], dtype=object
                ),
            }
        )

    return run


def main(argv: Optional[List[str]] = None) -> None:
    """The job's entry point: ``INPUT`` (Parquet, or JSON Lines by a ``.json``/``.jsonl``
    name, files or folders) deduplicated into ``OUTPUT`` (Parquet): the kept rows unchanged,
    or with ``--all`` every row with ``cluster``, ``duplicate_of`` and ``is_duplicate``."""
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
    args = parser.parse_args(argv)

    spark = SparkSession.builder.appName("neardup-dedup").getOrCreate()
    json_input = args.input.rstrip("/").endswith((".json", ".jsonl"))
    df = spark.read.json(args.input) if json_input else spark.read.parquet(args.input)
    policy = None
    if args.policy_file:
        with open(args.policy_file, encoding="utf-8") as f:
            policy = f.read()
    try:
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
    out = result if args.all else result.where(~result["is_duplicate"]).select(*df.columns)
    out.write.mode("overwrite").parquet(args.output)
    result.unpersist()


if __name__ == "__main__":
    main()
