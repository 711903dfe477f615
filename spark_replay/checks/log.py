"""The checks of the logs (docs/replay.md gives each one's definition, the invariant and the real
bugs): P1 sequences (NoDuplicates), P2 producer epochs (ZombieFenced), P3 coordinator epochs on
markers (MarkerSafety), P4 markers follow the coordinator's decision (Atomicity), P5 hanging
transactions (NoHangingTransaction), P6 the aborted-transaction index (ReadCommitted), P7 the
coordinator's state machine (TxnStateMachine), and C1 read_committed fetches (ReadCommitted). Each
runs by the replay's plan: from the rows of the one partition pass (partition_pass.py), or with
its own windows and joins over ``Derived`` (``*_windows``, the pass's oracle in the tests)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ref_impl.kafka.states import OPEN_STATES, VALID_PREVIOUS
from spark_replay.partition_pass import C1_FETCHES, KEY, VIOLATION_COLUMNS, index_sweep, sweep_partition

from .base import Check, Derived, by_plan, counted, distinct_count, pass_entities, violations

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame


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
    return violations(bad, "P1", kind, detail)


# --- P2: epochs -----------------------------------------------------------------------------


def p2_epochs_windows(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    stale = d.ordered.where(~F.col("is_control") & (F.col("producer_epoch") < F.col("max_epoch_before")))
    a = violations(
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
    b = violations(
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
    return violations(
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


def _prepares_of_plan(d: Derived) -> DataFrame:
    """The Prepare windows: the coordinator pass's (pass plan) or a Spark window's (windows)."""
    from pyspark.sql import functions as F

    if d.plan == "pass":
        return d.coord("prepare").select(
            "trace_id", "producer_id", "txn_id", F.col("ts_ms").alias("prepare_ts"), "until", "expected", "partitions",
            F.col("event").alias("prepare_event"),
        )
    return _prepares(d)


def p4_atomicity(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    prepares = _prepares_of_plan(d)
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
    a = violations(
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
    b = violations(
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

    if d.plan == "pass":
        latest = d.coord("latest").select("trace_id", "producer_id", F.col("state").alias("latest_state"),
                                          F.col("partitions").alias("latest_partitions"))
    else:
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
    return violations(
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
    if d.plan == "pass":  # one row per producer id already (a semi or anti join's right side)
        return d.coord("latest").select("trace_id", "producer_id")
    return d.t.txn_log.select("trace_id", "producer_id").distinct()


def p5_entities(d: Derived) -> int:
    return _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_semi").count()


def p5_unseen(d: Derived) -> str:
    n = _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_anti").count()
    return f"{n} (partition, producer) with transactional data but no transaction-log record were not judged" if n else ""


# --- P7: the coordinator's state machine ----------------------------------------------------------


def p7_state_machine(d: Derived) -> DataFrame:
    if d.plan == "pass":
        return d.coord("violation").select(*VIOLATION_COLUMNS)
    return p7_state_machine_windows(d)


def p7_state_machine_windows(d: Derived) -> DataFrame:
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
    a = violations(
        illegal.withColumn("offset", F.col("log_offset")),
        "P7",
        "ILLEGAL_TRANSITION",
        F.format_string("%s -> %s is not a transition Kafka allows", F.col("prev_state"), F.col("state")),
    )
    first = log.where(F.col("prev_state").isNull() & (F.col("state") != "Empty") & (F.col("log_offset") == 0) & (F.col("source") == "trace"))
    b = violations(
        first.withColumn("offset", F.col("log_offset")),
        "P7",
        "FIRST_NOT_EMPTY",
        F.format_string("the first state is %s, not Empty", F.col("state")),
    )
    back = steps.where((F.col("epoch") < F.col("prev_epoch")) & (F.col("producer_id") == F.col("prev_pid")))
    c = violations(
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
    return violations(bad.withColumn("offset", F.col("last_offset")), "P6", kind, detail)


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
    return violations(out, "C1", F.col("kind"), F.col("detail"))


p1_sequences = by_plan("P1", p1_sequences_windows)
p2_epochs = by_plan("P2", p2_epochs_windows)
p3_coordinator_epochs = by_plan("P3", p3_coordinator_epochs_windows)
p6_aborted_index = by_plan("P6", p6_aborted_index_windows)
c1_read_committed = by_plan("C1", c1_read_committed_windows)


LOG_CHECKS: tuple[Check, ...] = (
    Check(
        "P1",
        "sequences",
        "NoDuplicates",
        "duplicate",
        ("entries",),
        "(partition, producer, epoch)",
        p1_sequences,
        pass_entities("n_epochs", "key", counted(lambda d: d.ordered.where("not is_control"), *KEY, "producer_epoch")),
    ),
    Check(
        "P2", "producer epochs", "ZombieFenced", "", ("entries",), "(partition, producer)", p2_epochs,
        pass_entities("1", "key", counted(lambda d: d.ordered, *KEY)),
    ),
    Check(
        "P3",
        "coordinator epochs",
        "MarkerSafety",
        "",
        ("entries",),
        "(partition, producer) with markers",
        p3_coordinator_epochs,
        pass_entities("cast(has_markers as int)", "key", counted(lambda d: d.ordered.where("is_control"), *KEY)),
    ),
    Check(
        "P4",
        "markers follow the decision",
        "Atomicity",
        "",
        ("entries", "txn_log"),
        "PrepareCommit/PrepareAbort records",
        p4_atomicity,
        lambda d: _prepares_of_plan(d).count(),
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
        counted(lambda d: d.t.aborted_index, "trace_id", "topic", "partition"),
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
        lambda d: d.coord("group").count() if d.plan == "pass" else distinct_count(d.t.txn_log, "trace_id", "txn_id"),
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
    counted(lambda d: d.t.reads.where(C1_FETCHES), "trace_id", "event"),
)
