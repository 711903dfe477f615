"""The replay checks: each approximates a spec invariant on what a deployment exposes.

Every check reads the staged tables and returns its violations as a DataFrame with the columns of
``VIOLATION`` (check, kind, trace_id, topic, partition, producer_id, offset, event, ts_ms, txn_id,
detail). The shared derivation (``Derived``) is computed once per replay: one window over
(trace_id, topic, partition, producer_id) ordered by offset gives every check its predecessor
columns and each batch its run (the number of markers before it), and one join gives each data
batch its fate (the marker that closes its run). That is the spec's ``CloserOf``/``Fate``
(specs/kafka/KafkaLog.tla).

The checks (docs/replay.md gives each one's definition, the invariant and the real bugs):
P1 sequences (NoDuplicates), P2 producer epochs (ZombieFenced), P3
coordinator epochs on markers, P4 markers follow the coordinator's decision (Atomicity,
MarkerSafety), P5 hanging transactions (NoHangingTransaction), P7 the coordinator's state machine
(TxnStateMachine), P6 the aborted-transaction index (ReadCommitted), C1 read_committed fetches
(ReadCommitted).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ref_impl.kafka.states import OPEN_STATES, VALID_PREVIOUS
from spark_replay.partition_pass import C1_FETCHES, KEY, VIOLATION_COLUMNS, index_sweep, sweep_partition

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession



@dataclass
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

    ``plan`` says how the checks of one partition's log (P1, P2, P3, P5, P6, C1; P4's markers) run:
    ``pass`` (the default) reads the rows of one partition pass (spark_replay/partition_pass.py:
    one shuffle, each partition's log checked in pandas), ``windows`` computes each check with its
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
            from spark_replay.partition_pass import run_pass

            t = self.t
            self._pass = run_pass(t, with_reads=t.counts.get("reads", 0) > 0, with_index=t.counts.get("aborted_index", 0) > 0).cache()
        return self._pass

    def passed(self, rec: str, check: str | None = None) -> DataFrame:
        from pyspark.sql import functions as F

        rows = self.pass_rows.where(F.col("rec") == rec)
        return rows if check is None else rows.where(F.col("check") == check)

    def pass_violations(self, check: str) -> DataFrame:
        return self.passed("violation", check).select(*VIOLATION_COLUMNS)

    def pass_sum(self, rec: str, expr: str) -> int:
        """``sum(expr)`` over the pass's rows of kind ``rec`` (0 if none)."""
        from pyspark.sql import functions as F

        row = self.passed(rec).agg(F.coalesce(F.sum(F.expr(expr)), F.lit(0)).alias("n")).first()
        return int(row["n"]) if row is not None else 0


@dataclass(frozen=True)
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


def _violations(frame: DataFrame, check: str, kind: Any, detail: Any) -> DataFrame:
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


def _groups(frame: DataFrame, *cols: str) -> int:
    return frame.select(*cols).distinct().count()


# --- P1: sequences ---------------------------------------------------------------------------


def p1_sequences_windows(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    data = d.ordered.where(~F.col("is_control") & (F.col("base_seq") >= 0))
    w = Window.partitionBy(*KEY, "producer_epoch").orderBy("base_offset")
    prev = data.withColumn("prev_last_seq", F.lag("last_seq").over(w)).where(F.col("prev_last_seq").isNotNull())
    expected = (F.col("prev_last_seq").cast("long") + 1) % F.lit(2**31)  # last_seq is int32: 2**31 - 1 + 1 overflows
    bad = prev.where(F.col("base_seq") != expected)
    kind = F.when(F.col("base_seq") <= F.col("prev_last_seq"), F.lit("DUPLICATE")).otherwise(F.lit("GAP"))
    detail = F.format_string(
        "epoch %d: sequence %d follows %d (expected %d)",
        F.col("producer_epoch"),
        F.col("base_seq"),
        F.col("prev_last_seq"),
        expected,
    )
    return _violations(bad, "P1", kind, detail)


# --- P2: epochs -----------------------------------------------------------------------------


def p2_epochs_windows(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    stale = d.ordered.where(~F.col("is_control") & (F.col("producer_epoch") < F.col("max_epoch_before")))
    a = _violations(
        stale,
        "P2",
        "STALE_EPOCH_DATA",
        F.format_string("data of epoch %d appended after epoch %d was seen", F.col("producer_epoch"), F.col("max_epoch_before")),
    )
    # one violation per marker, naming the highest epoch of the data it closes
    low_marker = (
        d.fates.where(F.col("marker_epoch").isNotNull() & (F.col("marker_epoch") < F.col("producer_epoch")))
        .groupBy(*KEY, "marker_offset", "marker_event", "marker_ts", "marker_epoch", "fate")
        .agg(F.max("producer_epoch").alias("producer_epoch"), F.max("txn_id").alias("txn_id"))
    )
    b = _violations(
        low_marker.withColumn("base_offset", F.col("marker_offset")).withColumn("event", F.col("marker_event")).withColumn("ts_ms", F.col("marker_ts")),
        "P2",
        "MARKER_EPOCH_BELOW_DATA",
        F.format_string("%s marker of epoch %d closes data of epoch %d", F.col("fate"), F.col("marker_epoch"), F.col("producer_epoch")),
    )
    return a.unionByName(b)


# --- P3: coordinator epochs -----------------------------------------------------------------------


def p3_coordinator_epochs_windows(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    bad = d.ordered.where(F.col("is_control") & (F.col("coord_epoch") < F.col("prev_coord_epoch")))
    return _violations(
        bad,
        "P3",
        "COORDINATOR_EPOCH_BACK",
        F.format_string("marker of coordinator epoch %d after one of %d", F.col("coord_epoch"), F.col("prev_coord_epoch")),
    )


# --- P4: atomicity --------------------------------------------------------------------------------


def _prepares(d: Derived) -> DataFrame:
    """Each PrepareCommit/PrepareAbort with the time of the producer's next Prepare (its window)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    log = d.t.txn_log.where(F.col("state").isin("PrepareCommit", "PrepareAbort"))
    w = Window.partitionBy("trace_id", "producer_id").orderBy("ts_ms", "log_offset")
    return log.withColumn("until", F.lead("ts_ms").over(w)).select(
        "trace_id",
        "producer_id",
        "txn_id",
        F.col("ts_ms").alias("prepare_ts"),
        "until",
        F.when(F.col("state") == "PrepareCommit", F.lit("COMMIT")).otherwise(F.lit("ABORT")).alias("expected"),
        "partitions",
        F.col("event").alias("prepare_event"),
    )


def p4_atomicity(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    prepares = _prepares(d)
    if d.plan == "pass":
        markers = d.passed("marker").select(
            *KEY, F.col("offset").alias("base_offset"), F.col("kind").alias("control"), "ts_ms", "event", F.col("epoch").alias("marker_epoch")
        )
    else:
        markers = d.ordered.where("is_control").select(*KEY, "base_offset", "control", "ts_ms", "event", F.col("producer_epoch").alias("marker_epoch"))
    in_window = (F.col("m.ts_ms") > F.col("p.prepare_ts")) & (F.col("p.until").isNull() | (F.col("m.ts_ms") < F.col("p.until")))
    joined = markers.alias("m").join(
        prepares.alias("p"), (F.col("m.trace_id") == F.col("p.trace_id")) & (F.col("m.producer_id") == F.col("p.producer_id")) & in_window
    )
    wrong = joined.where(F.col("m.control") != F.col("p.expected")).select(
        "m.trace_id",
        "m.topic",
        "m.partition",
        "m.producer_id",
        "m.base_offset",
        "m.event",
        "m.ts_ms",
        "p.txn_id",
        F.col("m.control").alias("control"),
        F.col("p.expected").alias("expected"),
        F.col("p.prepare_event").alias("prepare_event"),
    )
    a = _violations(
        wrong,
        "P4",
        "MARKER_AGAINST_DECISION",
        F.format_string("%s marker while the coordinator's decision (event %d) was %s", F.col("control"), F.col("prepare_event"), F.col("expected")),
    )
    # Every partition the Prepare names that holds the producer's data gets a marker in the window.
    named = (
        prepares.where(F.col("partitions").isNotNull())
        .select("*", F.explode("partitions").alias("tp"))
        .select(
            "trace_id",
            "producer_id",
            "txn_id",
            "prepare_ts",
            "until",
            "expected",
            "prepare_event",
            F.col("tp.topic").alias("topic"),
            F.col("tp.partition").alias("partition"),
        )
    )
    has_data = (
        d.passed("key").where("has_data").select(*KEY) if d.plan == "pass" else d.ordered.where(~F.col("is_control")).select(*KEY).distinct()
    )
    named = named.join(has_data, on=["trace_id", "topic", "partition", "producer_id"], how="inner")
    got = named.alias("n").join(
        markers.alias("m"),
        (F.col("m.trace_id") == F.col("n.trace_id"))
        & (F.col("m.producer_id") == F.col("n.producer_id"))
        & (F.col("m.topic") == F.col("n.topic"))
        & (F.col("m.partition") == F.col("n.partition"))
        & (F.col("m.ts_ms") > F.col("n.prepare_ts"))
        & (F.col("n.until").isNull() | (F.col("m.ts_ms") < F.col("n.until"))),
        how="left_anti",
    )
    # A transaction still in its marker phase when the log ends is not torn: only Prepares that a
    # Complete* record followed (or a later Prepare) must have all their markers.
    completes = d.t.txn_log.where(F.col("state").isin("CompleteCommit", "CompleteAbort")).select("trace_id", "producer_id", F.col("ts_ms").alias("complete_ts"))
    finished = got.alias("g").join(
        completes.alias("c"),
        (F.col("g.trace_id") == F.col("c.trace_id"))
        & (F.col("g.producer_id") == F.col("c.producer_id"))
        & (F.col("c.complete_ts") > F.col("g.prepare_ts"))
        & (F.col("g.until").isNull() | (F.col("c.complete_ts") < F.col("g.until"))),
        how="left_semi",
    )
    b = _violations(
        finished.withColumn("event", F.col("prepare_event")).withColumn("ts_ms", F.col("prepare_ts")),
        "P4",
        "MARKER_MISSING",
        F.format_string("the transaction completed without its %s marker on %s-%d", F.col("expected"), F.col("topic"), F.col("partition")),
    )
    return a.unionByName(b)


# --- P5: hanging transactions -------------------------------------------------------------------


def p5_hanging(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    open_runs = d.passed("open").select(*KEY, F.col("offset").alias("base_offset"), "event", "ts_ms", "txn_id") if d.plan == "pass" else _open_runs_windows(d)
    return _hanging(d, open_runs)


def _open_runs_windows(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    return (
        d.fates.where(F.col("fate").isNull() & F.col("is_txn"))
        .groupBy(*KEY)
        .agg(
            F.min("base_offset").alias("base_offset"),
            F.min("event").alias("event"),
            F.min("ts_ms").alias("ts_ms"),
            F.first("txn_id", ignorenulls=True).alias("txn_id"),
        )
    )


def _hanging(d: Derived, open_runs: DataFrame) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    w = Window.partitionBy("trace_id", "producer_id").orderBy(F.col("ts_ms").desc(), F.col("log_offset").desc())
    latest = (
        d.t.txn_log.withColumn("r", F.row_number().over(w))
        .where("r = 1")
        .select("trace_id", "producer_id", F.col("state").alias("latest_state"), F.col("partitions").alias("latest_partitions"))
    )
    # A producer the transaction log says nothing about (a log without its __transaction_state,
    # or a compacted one) cannot be judged: it is left out, not flagged.
    joined = open_runs.join(latest, on=["trace_id", "producer_id"], how="inner")
    covered = F.exists(
        F.coalesce(F.col("latest_partitions"), F.array()),
        lambda tp: (tp["topic"] == F.col("topic")) & (tp["partition"] == F.col("partition")),
    )
    is_open = F.col("latest_state").isin(*sorted(OPEN_STATES))
    ok = is_open & (F.col("latest_partitions").isNull() | covered)
    bad = joined.where(~F.coalesce(ok, F.lit(False)))
    return _violations(
        bad,
        "P5",
        "HANGING",
        F.format_string(
            "data from offset %d is still open at the end of the log, but the transaction log says %s",
            F.col("base_offset"),
            F.col("latest_state"),
        ),
    )


def _txn_data(d: Derived) -> DataFrame:
    if d.plan == "pass":
        return d.passed("key").where("has_txn").select(*KEY)
    return d.ordered.where("not is_control and is_txn").select(*KEY).distinct()


def _logged(d: Derived) -> DataFrame:
    return d.t.txn_log.select("trace_id", "producer_id").distinct()


def p5_entities(d: Derived) -> int:
    return _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_semi").count()


def p5_unseen(d: Derived) -> str:
    n = _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_anti").count()
    return f"{n} (partition, producer) with transactional data but no transaction-log record were not judged" if n else ""


# --- P7: the coordinator's state machine ----------------------------------------------------------


def p7_state_machine(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    pairs = d.t.spark.createDataFrame([(old, new) for new, olds in VALID_PREVIOUS.items() for old in olds], "old string, new string")
    w = Window.partitionBy("trace_id", "txn_id").orderBy("log_offset")
    log = (
        d.t.txn_log.where(F.col("state").isNotNull())
        .withColumn("prev_state", F.lag("state").over(w))
        .withColumn("prev_epoch", F.lag("epoch").over(w))
        .withColumn("prev_pid", F.lag("producer_id").over(w))
    )
    steps = log.where(F.col("prev_state").isNotNull())
    # one pass: only the small table of legal pairs is broadcast (a self-join of the log against its
    # legal steps made Spark broadcast a side of the log itself, which fails from about 10M rows)
    illegal = steps.join(
        F.broadcast(pairs.withColumn("legal", F.lit(True))), (F.col("prev_state") == F.col("old")) & (F.col("state") == F.col("new")), how="left"
    ).where(F.col("legal").isNull())
    a = _violations(
        illegal.withColumn("offset", F.col("log_offset")),
        "P7",
        "ILLEGAL_TRANSITION",
        F.format_string("%s -> %s is not a transition Kafka allows", F.col("prev_state"), F.col("state")),
    )
    first = log.where(F.col("prev_state").isNull() & (F.col("state") != "Empty") & (F.col("log_offset") == 0) & (F.col("source") == "trace"))
    b = _violations(
        first.withColumn("offset", F.col("log_offset")),
        "P7",
        "FIRST_NOT_EMPTY",
        F.format_string("the first state is %s, not Empty", F.col("state")),
    )
    back = steps.where((F.col("epoch") < F.col("prev_epoch")) & (F.col("producer_id") == F.col("prev_pid")))
    c = _violations(
        back.withColumn("offset", F.col("log_offset")),
        "P7",
        "EPOCH_BACK",
        F.format_string("epoch %d after %d with the same producer id", F.col("epoch"), F.col("prev_epoch")),
    )
    return a.unionByName(b).unionByName(c)


# --- P6: the aborted-transaction index ---------------------------------------------------------------


def p6_aborted_index_windows(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    indexed = d.t.aborted_index.select("trace_id", "topic", "partition").distinct()
    log = d.ordered.join(indexed, on=["trace_id", "topic", "partition"], how="left_semi").select(
        "trace_id", "topic", "partition", "producer_id", "base_offset", "last_offset", "is_txn", "is_control", "control"
    )
    expected = log.groupBy("trace_id", "topic", "partition").applyInPandas(
        index_sweep,
        "trace_id string, topic string, partition int, producer_id long, first_offset long, last_offset long, lso long",
    )
    key = ["trace_id", "topic", "partition", "producer_id", "last_offset"]
    got = d.t.aborted_index.select(*key, F.col("first_offset").alias("got_first"), F.col("lso").alias("got_lso"))
    both = expected.join(got, on=key, how="full_outer")
    kind = (
        F.when(F.col("got_first").isNull(), F.lit("MISSING_INDEX_ENTRY"))
        .when(F.col("first_offset").isNull(), F.lit("INDEX_WITHOUT_ABORT"))
        .when(F.col("got_first") != F.col("first_offset"), F.lit("WRONG_FIRST_OFFSET"))
        .otherwise(F.lit("WRONG_INDEX_LSO"))
    )
    bad = both.where(
        F.col("got_first").isNull() | F.col("first_offset").isNull() | (F.col("got_first") != F.col("first_offset")) | (F.col("got_lso") != F.col("lso"))
    )
    detail = F.format_string(
        "ABORT at %d: the log gives first offset %s and LSO %s, the index %s and %s",
        F.col("last_offset"),
        F.coalesce(F.col("first_offset").cast("string"), F.lit("none")),
        F.coalesce(F.col("lso").cast("string"), F.lit("none")),
        F.coalesce(F.col("got_first").cast("string"), F.lit("none")),
        F.coalesce(F.col("got_lso").cast("string"), F.lit("none")),
    )
    return _violations(bad.withColumn("offset", F.col("last_offset")), "P6", kind, detail)


def p6_unseen(d: Derived) -> str:
    from pyspark.sql import functions as F

    if d.plan == "pass":
        n = d.passed("part").where("has_abort and not has_index").count()
        return f"{n} partition(s) with ABORT markers but no .txnindex read were not judged" if n else ""
    with_aborts = d.ordered.where(F.col("control") == "ABORT").select("trace_id", "topic", "partition").distinct()
    n = with_aborts.join(d.t.aborted_index.select("trace_id", "topic", "partition").distinct(), on=["trace_id", "topic", "partition"], how="left_anti").count()
    return f"{n} partition(s) with ABORT markers but no .txnindex read were not judged" if n else ""


# --- C1: read_committed fetches -------------------------------------------------------------------


def c1_read_committed_windows(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    entries = d.t.entries.where(F.col("event").isNotNull()).select(
        F.lit("entry").alias("row"),
        "trace_id",
        "topic",
        "partition",
        "event",
        F.lit(0).alias("kind_order"),
        # one row per offset: a data batch of several records holds each of them
        F.explode(
            F.sequence(F.col("base_offset"), F.when(F.col("is_control"), F.col("base_offset")).otherwise(F.coalesce("last_offset", "base_offset")))
        ).alias("offset"),
        "producer_id",
        "is_txn",
        "is_control",
        "control",
        F.lit(None).cast("long").alias("from_offset"),
        F.lit(None).cast("long").alias("to_offset"),
        F.lit(None).cast("long").alias("lso"),
    )
    # each fetch judged per partition it read (its last row there has kind 2)
    fetch = ("trace_id", "topic", "partition", "event")
    w = Window.partitionBy(*fetch).orderBy(F.col("offset").asc_nulls_first())
    reads = (
        d.t.reads.where(C1_FETCHES)
        .withColumn("n", F.row_number().over(w))
        .withColumn("last", F.count("*").over(Window.partitionBy(*fetch)))
    )
    reads = reads.select(
        F.lit("read").alias("row"),
        "trace_id",
        "topic",
        "partition",
        "event",
        F.when(F.col("n") == F.col("last"), F.lit(2)).otherwise(F.lit(1)).alias("kind_order"),
        "offset",
        F.lit(None).cast("long").alias("producer_id"),
        F.lit(None).cast("boolean").alias("is_txn"),
        F.lit(None).cast("boolean").alias("is_control"),
        F.lit(None).cast("string").alias("control"),
        "from_offset",
        "to_offset",
        "lso",
    )
    merged = entries.unionByName(reads)
    out = merged.groupBy("trace_id", "topic", "partition").applyInPandas(
        sweep_partition,
        "trace_id string, topic string, partition int, event long, offset long, kind string, detail string",
    )
    return _violations(out, "C1", F.col("kind"), F.col("detail"))


# --- the checks of one partition's log, by plan -------------------------------------------------------


def _by_plan(check: str, windows: Callable[[Derived], DataFrame]) -> Callable[[Derived], DataFrame]:
    def run(d: Derived) -> DataFrame:
        return d.pass_violations(check) if d.plan == "pass" else windows(d)

    run.__name__ = windows.__name__.removesuffix("_windows")
    return run


p1_sequences = _by_plan("P1", p1_sequences_windows)
p2_epochs = _by_plan("P2", p2_epochs_windows)
p3_coordinator_epochs = _by_plan("P3", p3_coordinator_epochs_windows)
p6_aborted_index = _by_plan("P6", p6_aborted_index_windows)
c1_read_committed = _by_plan("C1", c1_read_committed_windows)


def _entities(pass_expr: str, rec: str, windows: Callable[[Derived], int]) -> Callable[[Derived], int]:
    return lambda d: d.pass_sum(rec, pass_expr) if d.plan == "pass" else windows(d)


# --- the suite --------------------------------------------------------------------------------------


def _count(frame_of: Callable[[Derived], DataFrame], *cols: str) -> Callable[[Derived], int]:
    return lambda d: _groups(frame_of(d), *cols)


LOG_CHECKS: tuple[Check, ...] = (
    Check(
        "P1",
        "sequences",
        "NoDuplicates",
        "duplicate",
        ("entries",),
        "(partition, producer, epoch)",
        p1_sequences,
        _entities("n_epochs", "key", _count(lambda d: d.ordered.where("not is_control"), *KEY, "producer_epoch")),
    ),
    Check(
        "P2", "producer epochs", "ZombieFenced", "", ("entries",), "(partition, producer)", p2_epochs, _entities("1", "key", _count(lambda d: d.ordered, *KEY))
    ),
    Check(
        "P3",
        "coordinator epochs",
        "MarkerSafety",
        "",
        ("entries",),
        "(partition, producer) with markers",
        p3_coordinator_epochs,
        _entities("cast(has_markers as int)", "key", _count(lambda d: d.ordered.where("is_control"), *KEY)),
    ),
    Check(
        "P4",
        "markers follow the decision",
        "Atomicity",
        "",
        ("entries", "txn_log"),
        "PrepareCommit/PrepareAbort records",
        p4_atomicity,
        lambda d: _prepares(d).count(),
    ),
    Check(
        "P5",
        "hanging transactions",
        "NoHangingTransaction",
        "",
        ("entries", "txn_log"),
        "(partition, producer)",
        p5_hanging,
        p5_entities,
        p5_unseen,
    ),
    Check(
        "P6",
        "aborted-transaction index",
        "ReadCommitted",
        "",
        ("entries", "aborted_index"),
        "partitions with a .txnindex",
        p6_aborted_index,
        _count(lambda d: d.t.aborted_index, "trace_id", "topic", "partition"),
        p6_unseen,
    ),
    Check(
        "P7",
        "coordinator state machine",
        "TxnStateMachine",
        "",
        ("txn_log",),
        "transactional ids",
        p7_state_machine,
        _count(lambda d: d.t.txn_log, "trace_id", "txn_id"),
    ),
)

C1_CHECK = Check(
    "C1",
    "read_committed fetches",
    "ReadCommitted",
    "G1a (aborted read), dirty read, poll skip",
    ("entries", "reads"),
    "read_committed fetches",
    c1_read_committed,
    _count(lambda d: d.t.reads.where(C1_FETCHES), "trace_id", "event"),
)


# --- C2: acknowledged sends (client histories) -----------------------------------------------------
#
# Jepsen's lost write and G1a (jepsen-io/jepsen, tests/kafka.clj: lost-write-cases, g1a-cases), on
# the writes a client was answered. Three ways, by what the input holds:
# - a txconform trace: each produce answer is matched with its batch in the log by (trace, client
#   transaction, partition, sequence); the client's EndTxn answer says whether it must be committed;
# - a Jepsen history with the partition's log (segments or dump-log text, same topic names): each
#   acknowledged send is looked up in the log at its offset;
# - a Jepsen history alone: the polls are the log. An acknowledged send below an offset some poll
#   returned, whose value no poll returned, is lost; a failed send whose value a poll returned is G1a.

C2_UNJUDGED = "UNJUDGED"


def _memo(d: Derived, name: str, make: Callable[[], DataFrame]) -> DataFrame:
    """A frame several callables of one check share, computed once per replay (and cached)."""
    cache: dict[str, DataFrame] = d.__dict__.setdefault("_client_checks", {})
    if name not in cache:
        cache[name] = make().cache()
    return cache[name]


def _history_ok_reads(d: Derived) -> DataFrame:
    """Records that ok polls of client histories returned (Jepsen's reads-by-type :ok), except those of
    read_uncommitted consumers (the probe's), which may return what was never committed."""
    from pyspark.sql import functions as F

    return d.t.reads.where(
        (F.col("source") != "trace")
        & (F.col("op_type") == "ok")
        & F.col("op_f").isin("poll", "txn")
        & F.col("offset").isNotNull()
        & ~F.coalesce(F.col("isolation") == "read_uncommitted", F.lit(False))
    )


def _history_committed_sends(d: Derived) -> DataFrame:
    """Sends of client histories that must have taken effect (Jepsen's must-have-committed?): those of
    an ok op, and those of an info op that some ok poll proves visible (it returned one of its values)."""
    from pyspark.sql import functions as F

    def make() -> DataFrame:
        sends = d.t.writes.where(F.col("source") != "trace")
        polled = _history_ok_reads(d).select("trace_id", "topic", "partition", "value")
        seen = sends.join(polled, on=["trace_id", "topic", "partition", "value"], how="left_semi")
        proven = sends.where(F.col("outcome") == "info").join(
            seen.select("trace_id", "process", "op_index").distinct(), on=["trace_id", "process", "op_index"], how="left_semi"
        )
        return sends.where(F.col("outcome") == "ok").unionByName(proven)

    return _memo(d, "committed_sends", make)


def _c2_traces(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    answers = d.t.writes.where((F.col("source") == "trace") & F.col("outcome").isin("ok", "fail"))
    batch = ["trace_id", "txn", "topic", "partition", "value"]
    sends = answers.groupBy(*batch).agg(
        F.max(F.col("outcome") == "ok").alias("acked"),
        F.first("committed", ignorenulls=True).alias("committed"),
        F.min(F.when(F.col("outcome") == "ok", F.col("event"))).alias("ack_event"),
        F.min("event").alias("event"),
    )
    logged = (
        d.fates.where((F.col("source") == "trace") & F.col("txn_id").isNotNull() & F.col("client_txn").isNotNull())
        .select(
            "trace_id",
            F.concat_ws("/", F.col("txn_id"), F.col("instance").cast("string"), F.col("client_txn").cast("string")).alias("txn"),
            "topic",
            "partition",
            F.col("base_seq").cast("string").alias("value"),
            "base_offset",
            "producer_id",
            "txn_id",
            "fate",
        )
        .groupBy(*batch)
        .agg(
            F.min("base_offset").alias("offset"),
            F.first("producer_id").alias("producer_id"),
            F.first("txn_id").alias("txn_id"),
            F.max(F.col("fate") == "COMMIT").alias("any_commit"),
            F.max(F.col("fate") == "ABORT").alias("any_abort"),
        )
    )
    j = sends.join(logged, on=batch, how="left")
    present = F.col("offset").isNotNull()
    lost_absent = F.col("acked") & ~present
    lost_aborted = present & (F.col("committed") == F.lit(True)) & F.col("acked") & F.col("any_abort") & ~F.col("any_commit")
    g1a = present & (F.col("committed") == F.lit(False)) & F.col("any_commit")
    kind = F.when(lost_absent | lost_aborted, F.lit("LOST_WRITE")).when(g1a, F.lit("G1A"))
    txn, seq, offset, partition = F.col("txn"), F.col("value"), F.col("offset"), F.col("partition")
    detail = (
        F.when(lost_absent, F.format_string("%s: the produce of sequence %s to partition %d was acknowledged; it is not in the log", txn, seq, partition))
        .when(lost_aborted, F.format_string("%s: the client committed, but its batch of sequence %s at offset %d was aborted", txn, seq, offset))
        .when(g1a, F.format_string("%s: the client aborted, but its batch of sequence %s at offset %d was committed", txn, seq, offset))
    )
    return j.select(
        "trace_id",
        "topic",
        "partition",
        "producer_id",
        "offset",
        F.coalesce(F.col("ack_event"), F.col("event")).alias("event"),
        F.coalesce(F.col("txn_id"), F.split("txn", "/").getItem(0)).alias("txn_id"),
        kind.alias("kind"),
        detail.alias("detail"),
    )


def _c2_rows(frame: DataFrame, kind: Any, detail: Any, producer_id: Any = None, offset: Any = None) -> DataFrame:
    """A send C2 looked at, in the columns every way of C2 gives: its place, kind and detail."""
    from pyspark.sql import functions as F

    return frame.select(
        "trace_id",
        "topic",
        "partition",
        (F.lit(None).cast("long") if producer_id is None else producer_id).alias("producer_id"),
        F.col("offset") if offset is None else offset.alias("offset"),
        "event",
        F.lit(None).cast("string").alias("txn_id"),
        kind.alias("kind"),
        detail.alias("detail"),
    )


def _c2_history_logs(d: Derived, sends: DataFrame, committed: bool = True) -> DataFrame:
    """Sends of histories looked up in the logs of their partitions, by offset: an as-of join (a
    window over the partition) finds the batch at or below each send's offset. ``committed``: the
    sends of transactions the client was told committed (lost if absent or aborted, unfinished if
    their batch has no marker); else those of failed ones that say where they landed (G1A if their
    batch committed)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    data = d.t.entries.where((F.col("source") != "trace") & ~F.col("is_control"))
    fates = d.fates.select(*KEY, "base_offset", "fate")
    batches = (
        data.join(fates, on=[*KEY, "base_offset"], how="left")
        # an open batch (no marker yet: a null fate) is neither committed nor aborted, not unknown
        .withColumn("committed_copy", F.coalesce(~F.col("is_txn") | (F.col("fate") == "COMMIT"), F.lit(False)))
        .groupBy("topic", "partition", "base_offset")
        .agg(
            F.max("last_offset").alias("last_offset"),
            F.max("committed_copy").alias("any_commit"),
            F.max(F.coalesce(F.col("fate") == "ABORT", F.lit(False))).alias("any_abort"),
            F.max(F.col("is_txn") & F.col("fate").isNull()).alias("any_open"),
            F.first("producer_id").alias("producer_id"),
        )
    )
    rows = batches.select(
        "topic",
        "partition",
        F.col("base_offset").alias("pos"),
        F.lit(0).alias("row"),
        F.struct("base_offset", "last_offset", "any_commit", "any_abort", "any_open", "producer_id").alias("batch"),
        *[F.lit(None).cast(t).alias(c) for c, t in (("trace_id", "string"), ("offset", "long"), ("event", "long"), ("process", "string"), ("value", "string"))],
    ).unionByName(
        sends.select(
            "topic",
            "partition",
            F.col("offset").alias("pos"),
            F.lit(1).alias("row"),
            F.lit(None).cast("struct<base_offset:long,last_offset:long,any_commit:boolean,any_abort:boolean,any_open:boolean,producer_id:long>").alias("batch"),
            "trace_id",
            "offset",
            "event",
            "process",
            "value",
        )
    )
    tp = Window.partitionBy("topic", "partition")
    upto = tp.orderBy("pos", "row").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    rows = (
        rows.withColumn("at", F.last("batch", ignorenulls=True).over(upto))
        .withColumn("log_start", F.min(F.when(F.col("row") == 0, F.col("pos"))).over(tp))
        .withColumn("log_end", F.max(F.col("batch.last_offset")).over(tp))
        .where(F.col("row") == 1)
    )
    inside = (F.col("offset") >= F.col("log_start")) & (F.col("offset") <= F.col("log_end"))
    found = F.col("at").isNotNull() & (F.col("at.last_offset") >= F.col("offset"))
    process, value, offset = F.col("process"), F.col("value"), F.col("offset")
    if not committed:
        g1a = inside & found & F.col("at.any_commit") & ~F.col("at.any_abort")
        detail = F.format_string("process %s's send of %s failed, but its batch at offset %d was committed", process, value, offset)
        return _c2_rows(rows, F.when(g1a, F.lit("G1A")), F.when(g1a, detail), producer_id=F.when(found, F.col("at.producer_id")))
    lost_absent = inside & ~found
    lost_aborted = inside & found & F.col("at.any_abort") & ~F.col("at.any_commit")
    # the log was read after the client was told: a committed transaction's batch must be closed by then
    unclosed = inside & found & F.col("at.any_open") & ~F.col("at.any_commit") & ~F.col("at.any_abort")
    kind = F.when(~inside, F.lit(C2_UNJUDGED)).when(lost_absent | lost_aborted, F.lit("LOST_WRITE")).when(unclosed, F.lit("MARKER_MISSING"))
    detail = (
        F.when(lost_absent, F.format_string("process %s's send of %s was acknowledged at offset %d, which no batch of the log holds", process, value, offset))
        .when(lost_aborted, F.format_string("process %s's send of %s was acknowledged at offset %d, whose batch was aborted", process, value, offset))
        .when(unclosed, F.format_string("process %s's send of %s at offset %d committed, but no marker follows its batch", process, value, offset))
    )
    return _c2_rows(rows, kind, detail, producer_id=F.when(found, F.col("at.producer_id")))


def _c2_history_reads(d: Derived, sends: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    reads = _history_ok_reads(d)
    reach = reads.groupBy("trace_id", "topic", "partition").agg(
        F.max("offset").alias("max_read"), F.max_by("op_index", "offset").alias("max_reader")
    )
    values = reads.select("trace_id", "topic", "partition", "value", F.col("op_index").alias("reader")).groupBy("trace_id", "topic", "partition", "value").agg(
        F.min("reader").alias("reader")
    )
    j = sends.join(reach, on=["trace_id", "topic", "partition"], how="left").join(values, on=["trace_id", "topic", "partition", "value"], how="left")
    seen = F.col("reader").isNotNull()
    judged = seen | (F.col("max_read").isNotNull() & (F.col("offset") < F.col("max_read")))
    lost = judged & ~seen
    return _c2_rows(
        j,
        F.when(~judged, F.lit(C2_UNJUDGED)).when(lost, F.lit("LOST_WRITE")),
        F.when(
            lost,
            F.format_string(
                "process %s's send of %s at offset %d was acknowledged, but no poll returned it, though op %d read up to offset %d",
                F.col("process"),
                F.col("value"),
                F.col("offset"),
                F.col("max_reader"),
                F.col("max_read"),
            ),
        ),
    )


def _c2_judged(d: Derived) -> DataFrame:
    """Every send C2 looked at, with its kind: null (fine), LOST_WRITE, G1A or UNJUDGED."""
    import functools

    from pyspark.sql import functions as F

    def make() -> DataFrame:
        committed = _history_committed_sends(d)
        with_offset = committed.where(F.col("offset").isNotNull())
        unknown = _c2_rows(committed.where(F.col("offset").isNull()), F.lit(C2_UNJUDGED), F.lit(None).cast("string"))
        # Only the ways the input needs are planned (each costs Spark stages even on no rows).
        sources = {r["source"] for r in d.t.writes.select("source").distinct().collect()}
        has_entries = d.t.counts.get("entries", 0) > 0
        logged_tps = d.t.entries.where(F.col("source") != "trace").select("topic", "partition").distinct()
        # with the log at hand, a send is judged by what the client was told (ok), not by a poll
        # that saw it: an indeterminate send the log aborted was not lost, whatever a poll returned
        in_logs = with_offset.where(F.col("outcome") == "ok").join(logged_tps, on=["topic", "partition"], how="left_semi")
        no_logs = with_offset.join(logged_tps, on=["topic", "partition"], how="left_anti") if has_entries else with_offset
        failed = d.t.writes.where((F.col("source") != "trace") & (F.col("outcome") == "fail"))
        failed_in_logs = failed.where(F.col("offset").isNotNull()).join(logged_tps, on=["topic", "partition"], how="left_semi")
        seen = failed.alias("w").join(
            _history_ok_reads(d).alias("r"),
            (F.col("w.trace_id") == F.col("r.trace_id"))
            & (F.col("w.topic") == F.col("r.topic"))
            & (F.col("w.partition") == F.col("r.partition"))
            & (F.col("w.value") == F.col("r.value")),
            how="left",
        )
        g1a = seen.groupBy("w.trace_id", "w.topic", "w.partition", "w.process", "w.op_index", "w.event", "w.value").agg(
            F.min("r.op_index").alias("reader"),
            F.min("r.offset").alias("read_offset"),
            F.min(F.struct("r.op_index", "r.process")).getField("process").alias("reader_process"),
        )
        g1a = _c2_rows(
            g1a,
            F.when(F.col("reader").isNotNull(), F.lit("G1A")),
            F.when(
                F.col("reader").isNotNull(),
                F.format_string(
                    "process %s's send of %s failed (op %d), but process %s's op %d polled it at offset %d",
                    *(F.col(c) for c in ("process", "value", "op_index", "reader_process", "reader", "read_offset")),
                ),
            ),
            offset=F.col("read_offset"),
        )
        parts = []
        if "trace" in sources and has_entries:
            parts.append(_c2_traces(d))
        if sources - {"trace"}:
            if has_entries:
                parts.append(_c2_history_logs(d, in_logs))
                parts.append(_c2_history_logs(d, failed_in_logs, committed=False))
            parts += [_c2_history_reads(d, no_logs), unknown, g1a]
        return functools.reduce(lambda a, b: a.unionByName(b), parts) if parts else unknown.limit(0)

    return _memo(d, "c2", make)


def c2_acknowledged_sends(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    bad = _c2_judged(d).where(F.col("kind").isin("LOST_WRITE", "G1A", "MARKER_MISSING"))
    return _violations(bad, "C2", F.col("kind"), F.col("detail"))


def _c2_counts(d: Derived) -> dict[str, int]:
    """Sends by C2's kind ("" for those found fine), counted once for the entities and the note."""
    counts: dict[str, int] = d.__dict__.setdefault("_c2_counts", {})
    if not counts:
        counts.update({r["kind"] or "": r["count"] for r in _c2_judged(d).groupBy("kind").count().collect()})
        counts.setdefault("", 0)
    return counts


def c2_entities(d: Derived) -> int:
    return sum(n for kind, n in _c2_counts(d).items() if kind != C2_UNJUDGED)


def c2_unseen(d: Derived) -> str:
    n = _c2_counts(d).get(C2_UNJUDGED, 0)
    return f"{n} acknowledged send(s) were not judged: offset unknown, outside the log given, or no poll read past them" if n else ""


# --- C4: poll order per (process, partition) --------------------------------------------------------
#
# Jepsen's poll-skip and nonmonotonic-poll (tests/kafka.clj: poll-skip+nonmonotonic-cases), and their
# internal forms within one op. The order of a partition is that of the offsets known to exist (the
# offsets polled, and those of sends that took effect), numbered densely, as Jepsen's version order
# numbers them: offsets that hold markers or aborted records are never polled and take no number.
# Each op's first record of a partition is compared with the last one of the process's previous ok
# op that polled it, unless an assign or subscribe in between dropped the partition; a fetch that
# names where it starts (a trace's Fetch) is not compared with the one before.


def _c4_reads(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def make() -> DataFrame:
        reads = d.t.reads.where(F.col("offset").isNotNull() & (F.col("op_f").isNull() | F.col("op_f").isin("poll", "txn"))).withColumn(
            "iso", F.coalesce(F.col("isolation"), F.lit(""))
        )
        sent = _history_committed_sends(d).where(F.col("offset").isNotNull()).select("trace_id", "topic", "partition", F.lit("").alias("iso"), "offset")
        known = reads.select("trace_id", "topic", "partition", "iso", "offset").unionByName(sent).distinct()
        order = Window.partitionBy("trace_id", "topic", "partition", "iso").orderBy("offset")
        known = known.withColumn("idx", F.dense_rank().over(order) - 1)
        return reads.join(known, on=["trace_id", "topic", "partition", "iso", "offset"], how="inner")

    return _memo(d, "c4_reads", make)


def c4_poll_order(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    reads = _c4_reads(d)
    # within one op: each record against the one before it
    # (an input that does not say in which order an op returned its records gives them in log order)
    in_op = Window.partitionBy("trace_id", "process", "topic", "partition", "op_index").orderBy("read_index", "offset")
    pairs = reads.withColumn("prev_idx", F.lag("idx").over(in_op)).withColumn("prev_offset", F.lag("offset").over(in_op))
    delta = F.col("idx") - F.col("prev_idx")
    internal = pairs.where(F.col("prev_idx").isNotNull() & ~F.coalesce(F.col("rebalanced"), F.lit(False)) & (delta != 1))
    kind = F.when(delta == 0, F.lit("DUPLICATE_IN_POLL")).when(delta < 0, F.lit("INT_NONMONOTONIC_POLL")).otherwise(F.lit("INT_POLL_SKIP"))
    a = _violations(
        internal.withColumn("kind", kind),
        "C4",
        F.col("kind"),
        F.format_string(
            "process %s's op %d returned offset %d after offset %d (%d known offset(s) apart)",
            F.col("process"),
            F.col("op_index"),
            F.col("offset"),
            F.col("prev_offset"),
            delta,
        ),
    )
    # across ops: the op's first record against the last of the previous ok op of the process, with
    # the assigns and subscribes in between (one row per key named; a row of null topic if none)
    assigns = d.t.reads.where(F.col("op_f").isin("assign", "subscribe"))
    by_op = Window.partitionBy("trace_id", "process", "op_index").orderBy(F.col("topic").asc_nulls_first(), "partition")
    union = reads.select(
        "trace_id",
        "process",
        "op_index",
        "read_index",
        "topic",
        "partition",
        "idx",
        "offset",
        "op_type",
        "from_offset",
        "event",
        F.lit(1).alias("is_read"),
        F.lit(0).alias("new_assign"),
        F.lit(0).alias("names_tp"),
    ).unionByName(
        assigns.select(
            "trace_id",
            "process",
            "op_index",
            F.lit(None).cast("long").alias("read_index"),
            "topic",
            "partition",
            F.lit(None).cast("int").alias("idx"),
            F.lit(None).cast("long").alias("offset"),
            "op_type",
            F.lit(None).cast("long").alias("from_offset"),
            "event",
            F.lit(0).alias("is_read"),
            (F.row_number().over(by_op) == 1).cast("int").alias("new_assign"),
            F.col("topic").isNotNull().cast("int").alias("names_tp"),
        )
    )
    per_process = Window.partitionBy("trace_id", "process").orderBy("op_index").rangeBetween(Window.unboundedPreceding, -1)
    per_tp = Window.partitionBy("trace_id", "process", "topic", "partition").orderBy("op_index").rangeBetween(Window.unboundedPreceding, -1)
    counted = (
        union.withColumn("assigns", F.coalesce(F.sum("new_assign").over(per_process), F.lit(0)))
        .withColumn("kept", F.coalesce(F.sum("names_tp").over(per_tp), F.lit(0)))
        .where(F.col("is_read") == 1)
    )
    ok = F.col("op_type").isNull() | (F.col("op_type") == "ok")
    last = F.struct("op_index", "read_index", "idx", "offset", "assigns", "kept")
    first_of_op = Window.partitionBy("trace_id", "process", "topic", "partition", "op_index")
    steps = (
        counted.withColumn("prev", F.max(F.when(ok, last)).over(per_tp))
        .withColumn("first", F.min("read_index").over(first_of_op))
        .where(
            (F.col("read_index") == F.col("first"))
            & F.col("prev").isNotNull()
            & F.col("from_offset").isNull()
            # every assign in between named the partition
            & ((F.col("assigns") - F.col("prev.assigns")) == (F.col("kept") - F.col("prev.kept")))
        )
    )
    gap = F.col("idx") - F.col("prev.idx")
    cross = steps.where(gap != 1).withColumn("kind", F.when(gap < 1, F.lit("NONMONOTONIC_POLL")).otherwise(F.lit("POLL_SKIP")))
    b = _violations(
        cross,
        "C4",
        F.col("kind"),
        F.format_string(
            "process %s's op %d began at offset %d, after its op %d ended at offset %d (%d known offset(s) apart)",
            F.col("process"),
            F.col("op_index"),
            F.col("offset"),
            F.col("prev.op_index"),
            F.col("prev.offset"),
            gap,
        ),
    )
    return a.unionByName(b)


C2_CHECK = Check(
    "C2",
    "acknowledged sends",
    "Atomicity",
    "lost write, G1a",
    ("writes",),
    "sends",
    c2_acknowledged_sends,
    c2_entities,
    c2_unseen,
)

C4_CHECK = Check(
    "C4",
    "poll order",
    "ReadCommitted",
    "poll-skip, nonmonotonic-poll",
    ("reads",),
    "(process, partition) polled",
    c4_poll_order,
    lambda d: _groups(_c4_reads(d), "trace_id", "process", "topic", "partition"),
)


# --- C3: consume-transform-produce provenance ----------------------------------------------------
#
# KafkaTxnProperties.tla, ExactlyOnceCTP: no input record has its output committed twice in any
# output partition (CommittedCopies(p, o) <= 1), and once nothing is in flight the committed output
# is exactly that of the input below the group's committed offset (Quiescent => (CommittedCopies(p,
# o) = 1 <=> o < gc.committed)). It needs each output batch's provenance (``src``: the input offset
# it was made from), which only txconform traces of consume-transform-produce carry; a real log does
# not say which input a record came from.
#
# What stands in for the spec's state:
# - CommittedCopies: the data batches with that ``src`` whose fate (their marker) is COMMIT;
# - gc.committed: the offset of the transactional offset commit that the last COMMIT marker of the
#   offsets partition applied (a commit is a batch there; the marker that closes its producer's run
#   decides it, as group.py gc_marker does; the run's last commit wins); 0 without one;
# - Quiescent: at the end of the trace no transactional id's last record is PrepareCommit or
#   PrepareAbort (its markers may still be in flight). A trace that ends otherwise gets only the
#   first half, and the report says how many did.
# - the output partitions (the spec's Parts): every data partition the trace's entries or its
#   coordinator's records name.

_PREPARED = ("PrepareCommit", "PrepareAbort")


def _c3_traces(d: Derived) -> DataFrame:
    """The traces whose outputs carry provenance, with whether each ends quiescent."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def make() -> DataFrame:
        ctp = d.t.entries.where(F.col("src").isNotNull()).select("trace_id").distinct()
        last = Window.partitionBy("trace_id", "txn_id").orderBy(F.col("event").desc_nulls_last(), F.col("log_offset").desc_nulls_last())
        busy = (
            d.t.txn_log.withColumn("n", F.row_number().over(last))
            .where((F.col("n") == 1) & F.col("state").isin(*_PREPARED))
            .select("trace_id")
            .distinct()
            .withColumn("busy", F.lit(True))
        )
        return ctp.join(busy, "trace_id", "left").select("trace_id", F.col("busy").isNull().alias("quiescent"))

    return _memo(d, "c3_traces", make)


def _c3_group_offset(d: Derived) -> DataFrame:
    """Per provenance trace: the group's committed offset at the end (``committed``, 0 without a
    committed offset commit) and the event of the marker that applied it."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def make() -> DataFrame:
        commits = d.t.offset_commits.where((F.col("producer_id") >= 0) & F.col("committed_offset").isNotNull()).select(
            "trace_id", "committed_offset", "event"
        )
        # each commit is a batch of the offsets partition; the marker that closes its run decides it
        batches = d.fates.where(F.col("topic") == "__consumer_offsets").select("trace_id", "event", "fate", "marker_event")
        applied = commits.join(batches, ["trace_id", "event"]).where(F.col("fate") == "COMMIT")
        # the last marker applies the run's last commit (group.py: gc.pending[tid] is overwritten)
        latest = Window.partitionBy("trace_id").orderBy(F.col("marker_event").desc(), F.col("event").desc())
        last = applied.withColumn("n", F.row_number().over(latest)).where("n = 1")
        return (
            _c3_traces(d)
            .join(last.select("trace_id", "committed_offset", F.col("marker_event").alias("commit_event")), "trace_id", "left")
            .select("trace_id", "quiescent", F.coalesce("committed_offset", F.lit(0)).alias("committed"), "commit_event")
        )

    return _memo(d, "c3_group_offset", make)


def _c3_outputs(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    return _memo(d, "c3_outputs", lambda: d.fates.where(F.col("src").isNotNull() & (F.col("fate") == "COMMIT")))


def c3_exactly_once(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    out = _c3_outputs(d)
    # 1. at most one committed copy of an input record per output partition; the violation is the
    # copy committed later, at the event of the marker that committed it (where the invariant breaks)
    copy = Window.partitionBy("trace_id", "topic", "partition", "src").orderBy("marker_event", "base_offset")
    dup = out.withColumn("n", F.row_number().over(copy)).where("n > 1")
    a = _violations(
        dup.withColumn("event", F.col("marker_event")),
        "C3",
        "DUPLICATE_OUTPUT",
        F.format_string(
            "the output of input offset %d (batch at offset %d) is committed again (copy %d) by this marker on the partition",
            F.col("src"),
            F.col("base_offset"),
            F.col("n"),
        ),
    )
    # 2. quiescent at the end: the committed output is that of the input below the group's offset
    g = _c3_group_offset(d).where("quiescent")
    parts = (
        d.t.entries.where(F.col("topic") != "__consumer_offsets")
        .select("trace_id", "topic", "partition")
        .unionByName(
            d.t.txn_log.select("trace_id", F.explode("partitions").alias("p"))
            .where(F.col("p.topic") != "__consumer_offsets")
            .select("trace_id", F.col("p.topic").alias("topic"), F.col("p.partition").alias("partition"))
        )
        .distinct()
    )
    expected = g.where("committed > 0").join(parts, "trace_id").select(
        "trace_id", "topic", "partition", "committed", "commit_event", F.explode(F.sequence(F.lit(0), F.col("committed") - 1).cast("array<long>")).alias("src")
    )
    lost = expected.join(out.select("trace_id", "topic", "partition", "src"), ["trace_id", "topic", "partition", "src"], "left_anti")
    b = _violations(
        lost.withColumnRenamed("commit_event", "event"),
        "C3",
        "LOST_OUTPUT",
        F.format_string(
            "input offset %d is below the group's committed offset %d, yet no output of it is committed on the partition", F.col("src"), F.col("committed")
        ),
    )
    beyond = out.join(g, "trace_id").where(F.col("src") >= F.col("committed"))
    c = _violations(
        beyond,
        "C3",
        "OUTPUT_BEYOND_OFFSET",
        F.format_string(
            "the output of input offset %d is committed, but the group's committed offset is %d: the input will be read again",
            F.col("src"),
            F.col("committed"),
        ),
    )
    return a.unionByName(b).unionByName(c)


def c3_inapplicable(d: Derived) -> str:
    from pyspark.sql import functions as F

    if d.t.entries.where(F.col("src").isNotNull()).limit(1).count() == 0:
        return "no output batch says which input record it was made from (src): only txconform consume-transform-produce traces do"
    return ""


def c3_entities(d: Derived) -> int:
    return _groups(_c3_outputs(d), "trace_id", "src")


def c3_unseen(d: Derived) -> str:
    busy = _c3_group_offset(d).where("not quiescent").count()
    if busy:
        return f"{busy} trace(s) end with a transaction prepared but not complete: only duplicates are checked in them, not lost output"
    return ""


C3_CHECK = Check(
    "C3",
    "consume-transform-produce",
    "ExactlyOnceCTP",
    "duplicate, lost write",
    ("entries",),
    "input records with committed output",
    c3_exactly_once,
    c3_entities,
    c3_unseen,
    c3_inapplicable,
)


# The suite, in the report's order: the log checks P1..P7, then the client checks C1..C4.
CHECKS: tuple[Check, ...] = (*LOG_CHECKS, C1_CHECK, C2_CHECK, C3_CHECK, C4_CHECK)


def by_id() -> Iterator[tuple[str, Check]]:
    for c in CHECKS:
        yield c.id, c
