"""C4, poll order: what each client process polled from each partition, in order (Jepsen's poll-skip and nonmonotonic-poll)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import Check, Derived, distinct_count, memo, violations
from .sends import history_committed_sends

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame


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
        sent = history_committed_sends(d).where(F.col("offset").isNotNull()).select("trace_id", "topic", "partition", F.lit("").alias("iso"), "offset")
        # one window over the reads and the sends together: a dense rank counts each offset once, so the
        # reads take the rank of their offset among the known ones with no distinct and no join back
        both = reads.withColumn("is_read", F.lit(True)).unionByName(sent.withColumn("is_read", F.lit(False)), allowMissingColumns=True)
        order = Window.partitionBy("trace_id", "topic", "partition", "iso").orderBy("offset")
        return both.withColumn("idx", F.dense_rank().over(order) - 1).where("is_read").drop("is_read")

    return memo(d, "c4_reads", make)


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
    a = violations(
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
    b = violations(
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


C4_CHECK = Check(
    "C4",
    "poll order",
    "ReadCommitted",
    "poll-skip, nonmonotonic-poll",
    ("reads",),
    "(process, partition) polled",
    c4_poll_order,
    lambda d: distinct_count(_c4_reads(d), "trace_id", "process", "topic", "partition"),
)
