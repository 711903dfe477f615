"""C2, acknowledged sends: the writes a client was answered, against the log (Jepsen's lost write and G1a)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spark_replay.partition_pass import KEY

from .base import Check, Derived, memo, violations

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame


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


def history_committed_sends(d: Derived) -> DataFrame:
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

    return memo(d, "committed_sends", make)


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
        committed = history_committed_sends(d)
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

    return memo(d, "c2", make)


def c2_acknowledged_sends(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    bad = _c2_judged(d).where(F.col("kind").isin("LOST_WRITE", "G1A", "MARKER_MISSING"))
    return violations(bad, "C2", F.col("kind"), F.col("detail"))


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
