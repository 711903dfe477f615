"""What every replay check shares: the staged tables, the derivation computed once per replay
(``Derived``), a check's description (``Check``), and the helpers that turn frames into violation
rows and counts."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from spark_replay.partition_pass import KEY, VIOLATION_COLUMNS

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession


@attrs.define
class Tables:
    """The staged tables of one replay, as DataFrames."""

    spark: SparkSession
    entries: DataFrame
    txn_log: DataFrame
    offset_commits: DataFrame
    aborted_index: DataFrame
    writes: DataFrame
    reads: DataFrame
    counts: dict[str, int]


PLANS = ("pass", "windows")


class Derived:
    """What several checks share, computed once (and cached) per replay.

    ``plan`` says how the checks of one partition's log (P1, P2, P3, P5, P6, C1; P4's markers) and
    of the coordinator's records (P4's Prepare windows, P5's last record per producer, P7) run:
    ``pass`` (the default) reads the rows of one partition pass (spark_replay/partition_pass.py:
    one shuffle, each partition's log checked on Arrow) and of one coordinator pass
    (spark_replay/coord_pass.py: one shuffle, each transactional id's records on Arrow record
    batches), ``windows`` computes each check with its
    own Spark windows and joins from ``ordered`` and ``fates`` (no per-partition memory limit; the
    tests' oracle of the pass). ``ordered`` and ``fates`` serve the client-history checks (C2, C3)
    under both plans; nothing is computed until a check asks."""

    def __init__(self, t: Tables, plan: str = "pass") -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        if plan not in PLANS:
            raise ValueError(f"plan {plan!r}: use one of {', '.join(PLANS)}")
        self.t = t
        self.plan = plan
        self._pass: DataFrame | None = None
        self._coord: DataFrame | None = None
        w = Window.partitionBy(*KEY).orderBy("base_offset")
        before = w.rowsBetween(Window.unboundedPreceding, -1)
        ordered = (
            t.entries.where(F.col("producer_id") >= 0)
            .withColumn("run", F.coalesce(F.sum(F.col("is_control").cast("int")).over(before), F.lit(0)))
            .withColumn("max_epoch_before", F.max("producer_epoch").over(before))
            .withColumn("prev_coord_epoch", F.last("coord_epoch", ignorenulls=True).over(before))
        )
        self.ordered = ordered.cache()
        markers = self.ordered.where("is_control").select(
            *KEY,
            F.col("run"),
            F.col("control").alias("fate"),
            F.col("base_offset").alias("marker_offset"),
            F.col("producer_epoch").alias("marker_epoch"),
            F.col("event").alias("marker_event"),
            F.col("ts_ms").alias("marker_ts"),
        )
        data = self.ordered.where(~F.col("is_control"))
        # Each data batch with the marker that closes its run (null: still open at the log's end).
        self.fates = data.join(markers, on=[*KEY, "run"], how="left").cache()

    @property
    def pass_rows(self) -> DataFrame:
        """The partition pass's rows (partition_pass.OUTPUT_SCHEMA), computed once and cached."""
        if self._pass is None:
            from spark_replay.arrow_pass import run_pass

            t = self.t
            self._pass = run_pass(t, with_reads=t.counts.get("reads", 0) > 0, with_index=t.counts.get("aborted_index", 0) > 0).cache()
        return self._pass

    def passed(self, rec: str, check: str | None = None) -> DataFrame:
        from pyspark.sql import functions as F

        rows = self.pass_rows.where(F.col("rec") == rec)
        return rows if check is None else rows.where(F.col("check") == check)

    @property
    def coord_rows(self) -> DataFrame:
        """The coordinator pass's rows (coord_pass.OUTPUT_SCHEMA), computed once and cached."""
        if self._coord is None:
            from spark_replay.coord_pass import run_coord_pass

            self._coord = run_coord_pass(self.t).cache()
        return self._coord

    def coord(self, rec: str) -> DataFrame:
        from pyspark.sql import functions as F

        return self.coord_rows.where(F.col("rec") == rec)

    def pass_violations(self, check: str) -> DataFrame:
        return self.passed("violation", check).select(*VIOLATION_COLUMNS)

    def pass_sum(self, rec: str, expr: str) -> int:
        """``sum(expr)`` over the pass's rows of kind ``rec`` (0 if none)."""
        from pyspark.sql import functions as F

        row = self.passed(rec).agg(F.coalesce(F.sum(F.expr(expr)), F.lit(0)).alias("n")).first()
        return int(row["n"]) if row is not None else 0


@attrs.frozen
class Check:
    id: str
    name: str
    invariant: str
    anomaly: str  # the Jepsen anomaly it catches, or ""
    needs: tuple[str, ...]  # tables that must have rows for the check to apply
    entities: str  # what it counts as the entities checked
    run: Callable[[Derived], DataFrame]
    count_entities: Callable[[Derived], int]
    # What the check could not see in this input, said in the report (empty: nothing).
    unseen: Callable[[Derived], str] = lambda d: ""
    # Why the check does not apply to this input although its tables have rows (empty: it applies).
    inapplicable: Callable[[Derived], str] = lambda d: ""
    # Whether a replay that names no checks runs it (False: only with --checks naming it).
    default: bool = True


def violations(frame: DataFrame, check: str, kind: Any, detail: Any) -> DataFrame:
    from pyspark.sql import functions as F

    def col(name: str, kind: str) -> Column:
        return (F.col(name) if name in frame.columns else F.lit(None)).cast(kind).alias(name)

    return frame.select(
        F.lit(check).alias("check"),
        (kind if not isinstance(kind, str) else F.lit(kind)).alias("kind"),
        col("trace_id", "string"),
        col("topic", "string"),
        col("partition", "int"),
        col("producer_id", "long"),
        col("base_offset", "long").alias("offset") if "base_offset" in frame.columns else col("offset", "long"),
        col("event", "long"),
        col("ts_ms", "long"),
        col("txn_id", "string"),
        detail.alias("detail"),
    )


def distinct_count(frame: DataFrame, *cols: str) -> int:
    return frame.select(*cols).distinct().count()



def by_plan(check: str, windows: Callable[[Derived], DataFrame]) -> Callable[[Derived], DataFrame]:
    def run(d: Derived) -> DataFrame:
        return d.pass_violations(check) if d.plan == "pass" else windows(d)

    run.__name__ = windows.__name__.removesuffix("_windows")
    return run




def pass_entities(pass_expr: str, rec: str, windows: Callable[[Derived], int]) -> Callable[[Derived], int]:
    return lambda d: d.pass_sum(rec, pass_expr) if d.plan == "pass" else windows(d)


# --- the suite --------------------------------------------------------------------------------------


def counted(frame_of: Callable[[Derived], DataFrame], *cols: str) -> Callable[[Derived], int]:
    return lambda d: distinct_count(frame_of(d), *cols)


def memo(d: Derived, name: str, make: Callable[[], DataFrame]) -> DataFrame:
    """A frame several callables of one check share, computed once per replay (and cached)."""
    cache: dict[str, DataFrame] = d.__dict__.setdefault("_client_checks", {})
    if name not in cache:
        cache[name] = make().cache()
    return cache[name]
