"""C3, consume-transform-produce: each input record's output committed exactly once (ExactlyOnceCTP)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Check, Derived, distinct_count, memo, violations

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame


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

    return memo(d, "c3_traces", make)


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

    return memo(d, "c3_group_offset", make)


def _c3_outputs(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    return memo(d, "c3_outputs", lambda: d.fates.where(F.col("src").isNotNull() & (F.col("fate") == "COMMIT")))


def c3_exactly_once(d: Derived) -> DataFrame:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    out = _c3_outputs(d)
    # 1. at most one committed copy of an input record per output partition; the violation is the
    # copy committed later, at the event of the marker that committed it (where the invariant breaks)
    copy = Window.partitionBy("trace_id", "topic", "partition", "src").orderBy("marker_event", "base_offset")
    dup = out.withColumn("n", F.row_number().over(copy)).where("n > 1")
    a = violations(
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
    b = violations(
        lost.withColumnRenamed("commit_event", "event"),
        "C3",
        "LOST_OUTPUT",
        F.format_string(
            "input offset %d is below the group's committed offset %d, yet no output of it is committed on the partition", F.col("src"), F.col("committed")
        ),
    )
    beyond = out.join(g, "trace_id").where(F.col("src") >= F.col("committed"))
    c = violations(
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
    return distinct_count(_c3_outputs(d), "trace_id", "src")


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
