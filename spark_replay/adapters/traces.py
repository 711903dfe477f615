"""txconform JSONL traces (Kafka) into the canonical tables, read by Spark with an explicit schema.

Many files at once: ``trace_id`` is the file's path, since ``event`` restarts in each file. Each
file's header (its first line) is checked on the driver with the trace reader's own header check
(protocol, format, version), so a file that is not a Kafka trace is refused with the usual
one-line error before Spark reads anything.

What a trace gives each table (docs/replay.md):
- entries: an append is a LeaderProduce / LeaderVerified (a data batch) or LeaderMarker (a control
  batch) event whose ``log_end`` grew on its partition; its offset is ``log_end - 1`` (version 2
  traces also log ``append_offset``). A refused or duplicate batch leaves ``log_end`` as it was.
  GcTxnOffsetCommit and GcVerified (accepted: written) and GcMarker (accepted) are the batches and
  markers of the __consumer_offsets partition (spec: OffsetsPart = 0), numbered in event order. A
  GcTxnOffsetCommit held for verification (TV1V, TV2) logs no result and writes nothing yet: its
  GcVerified writes it.
- txn_log: every TcAppend (an append to __transaction_state), with ``txn_partitions`` when the
  trace logs it (version 2).
- offset_commits: GcTxnOffsetCommit and GcVerified (accepted) and OffsetCommit (standalone consumers).
- reads: one row per record a Fetch returned (and one row with a null offset for an empty fetch),
  with the fetch's isolation, start and LSO.
- writes: one row per produce answer the client got (ClientReceive of a ProduceResp): ``ok``
  for NONE or DUPLICATE_SEQUENCE_NUMBER, ``fail`` otherwise; a ProduceTimeout is ``info``.
  ``committed`` is what the client's EndTxn of that transaction was answered (NONE with commit
  true or false), null if it got no such answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from spark_replay.staging import InputFormat, ReplayInputError, Stager

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame
    from pyspark.sql.types import StructType

DATA_TOPIC = "data"
OFFSETS_TOPIC = "__consumer_offsets"


def event_schema() -> StructType:  # pyspark is imported lazily
    from pyspark.sql import types as T

    fields = [
        ("event", T.LongType()),
        ("action", T.StringType()),
        ("actor", T.StringType()),
        ("txn_id", T.StringType()),
        ("producer_id", T.LongType()),
        ("producer_epoch", T.IntegerType()),
        ("instance", T.IntegerType()),
        ("partition", T.IntegerType()),
        ("type", T.StringType()),
        ("txn", T.IntegerType()),
        ("seq", T.IntegerType()),
        ("att", T.IntegerType()),
        ("commit", T.BooleanType()),
        ("coordinator_epoch", T.IntegerType()),
        ("error", T.StringType()),
        ("offset", T.LongType()),
        ("generation", T.IntegerType()),
        ("result", T.StringType()),
        ("log_end", T.LongType()),
        ("append_offset", T.LongType()),
        ("txn_state", T.StringType()),
        ("txn_epoch", T.IntegerType()),
        ("txn_partitions", T.ArrayType(T.IntegerType())),
        ("isolation", T.StringType()),
        ("from", T.LongType()),
        ("records", T.ArrayType(T.LongType())),
        ("lso", T.LongType()),
        ("group", T.StringType()),
        ("committed_offset", T.LongType()),
        ("client_txn", T.IntegerType()),
    ]
    return T.StructType([T.StructField(name, kind, True) for name, kind in fields])


def sniff(path: Path) -> bool:
    if path.is_dir() or path.suffix not in (".jsonl", ".json", ""):
        return False
    try:
        with path.open("rb") as f:
            first = f.readline(64 * 1024)
        return b'"txconform-trace"' in first
    except OSError:
        return False


def check_headers(paths: list[Path]) -> None:
    """Each file is a Kafka trace with a valid header (the trace reader's checks), or a one-line error."""
    from trace_check.traces.reader import TraceError, check_header

    for path in paths:
        try:
            with path.open("r", encoding="utf-8") as f:
                first = f.readline()
        except (OSError, UnicodeDecodeError) as e:
            raise ReplayInputError(f"{path}: cannot read it ({e}); give a txconform trace (.jsonl)") from None
        try:
            head = json.loads(first)
        except json.JSONDecodeError as e:
            raise ReplayInputError(f"{path}:1: the header is not JSON ({e.msg}); a trace starts with its header line") from None
        try:
            check_header(path, head)
        except TraceError as e:
            raise ReplayInputError(str(e)) from None
        if head.get("protocol") != "kafka":
            raise ReplayInputError(
                f"{path}:1: protocol {head.get('protocol')!r}: replay checks Kafka traces; check other protocols' traces with `txconform check`"
            )


def events_frame(paths: list[Path], stager: Stager) -> DataFrame:
    """Every event of every trace, with ``trace_id`` (the file) and ``position`` (its line)."""
    from pyspark.sql import functions as F

    spark = stager.spark
    frame = spark.read.schema(event_schema()).option("mode", "PERMISSIVE").json([str(p) for p in paths])
    return frame.where(F.col("event").isNotNull()).withColumn("trace_id", F.input_file_name())


def stage(paths: list[Path], stager: Stager) -> None:
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    check_headers(paths)
    ev = events_frame(paths, stager).cache()
    lit_null = F.lit(None)

    # entries: appends to the data partitions
    leader = ev.where(F.col("action").isin("LeaderProduce", "LeaderVerified", "LeaderMarker") & F.col("log_end").isNotNull())
    by_partition = Window.partitionBy("trace_id", "partition").orderBy("event")
    appended = leader.withColumn("prev_end", F.coalesce(F.lag("log_end").over(by_partition), F.lit(0))).where(F.col("log_end") > F.col("prev_end"))
    offset = F.coalesce(F.col("append_offset"), F.col("log_end") - 1)
    is_marker = F.col("action") == "LeaderMarker"
    data_entries = appended.select(
        F.lit("trace").alias("source"),
        "trace_id",
        F.lit(DATA_TOPIC).alias("topic"),
        F.col("partition").cast("int").alias("partition"),
        lit_null.cast("string").alias("replica"),
        lit_null.cast("int").alias("leader_epoch"),
        offset.alias("base_offset"),
        offset.alias("last_offset"),
        "producer_id",
        "producer_epoch",
        F.when(is_marker, F.lit(-1)).otherwise(F.col("seq")).alias("base_seq"),
        F.when(is_marker, F.lit(-1)).otherwise(F.col("seq")).alias("last_seq"),
        F.lit(True).alias("is_txn"),
        is_marker.alias("is_control"),
        F.when(is_marker, F.when(F.col("commit"), F.lit("COMMIT")).otherwise(F.lit("ABORT"))).alias("control"),
        F.when(is_marker, F.col("coordinator_epoch")).alias("coord_epoch"),
        F.col("event").alias("ts_ms"),
        lit_null.cast("long").alias("crc"),
        "event",
        "txn_id",
        F.when(is_marker, lit_null).otherwise(F.col("instance")).cast("int").alias("instance"),
        F.when(is_marker, lit_null).otherwise(F.col("txn")).cast("int").alias("client_txn"),
        # provenance: a consume-transform-produce batch carries the input offset it was made from in
        # the request's value (ref_impl/kafka/client.py, Produce val=c.pos; KafkaTxn.tla: src |-> m.val);
        # a plain producer sends -1
        F.when(~is_marker & (F.col("offset") >= 0), F.col("offset")).alias("src"),
        F.col("trace_id").alias("file"),
        F.col("event").alias("position"),
    )
    stager.write_frame("entries", data_entries)

    # entries: the __consumer_offsets partition (OffsetsPart = 0)
    # a GcTxnOffsetCommit or GcVerified that wrote the offsets answered NONE (a held one has no result)
    gc_wrote = F.col("action").isin("GcTxnOffsetCommit", "GcVerified") & (F.col("result") == "NONE")
    offsets_part = ev.where(gc_wrote | ((F.col("action") == "GcMarker") & (F.coalesce(F.col("result"), F.col("error")) == "NONE")))
    by_trace = Window.partitionBy("trace_id").orderBy("event")
    offsets_part = offsets_part.withColumn("o", F.row_number().over(by_trace) - 1)
    gc_marker = F.col("action") == "GcMarker"
    stager.write_frame(
        "entries",
        offsets_part.select(
            F.lit("trace").alias("source"),
            "trace_id",
            F.lit(OFFSETS_TOPIC).alias("topic"),
            F.lit(0).alias("partition"),
            lit_null.cast("string").alias("replica"),
            lit_null.cast("int").alias("leader_epoch"),
            F.col("o").cast("long").alias("base_offset"),
            F.col("o").cast("long").alias("last_offset"),
            "producer_id",
            "producer_epoch",
            F.lit(-1).alias("base_seq"),
            F.lit(-1).alias("last_seq"),
            F.lit(True).alias("is_txn"),
            gc_marker.alias("is_control"),
            F.when(gc_marker, F.when(F.col("commit"), F.lit("COMMIT")).otherwise(F.lit("ABORT"))).alias("control"),
            F.when(gc_marker, F.col("coordinator_epoch")).alias("coord_epoch"),
            F.col("event").alias("ts_ms"),
            lit_null.cast("long").alias("crc"),
            "event",
            "txn_id",
            F.when(gc_marker, lit_null).otherwise(F.col("instance")).cast("int").alias("instance"),
            F.when(gc_marker, lit_null).otherwise(F.col("txn")).cast("int").alias("client_txn"),
            lit_null.cast("long").alias("src"),
            F.col("trace_id").alias("file"),
            F.col("event").alias("position"),
        ),
    )

    # txn_log
    appends = ev.where(F.col("action") == "TcAppend")
    by_txn = Window.partitionBy("trace_id", "txn_id").orderBy("event")
    stager.write_frame(
        "txn_log",
        appends.select(
            F.lit("trace").alias("source"),
            "trace_id",
            lit_null.cast("int").alias("log_partition"),
            (F.row_number().over(by_txn) - 1).cast("long").alias("log_offset"),
            F.col("event").alias("ts_ms"),
            lit_null.cast("long").alias("start_ms"),
            lit_null.cast("long").alias("update_ms"),
            "txn_id",
            "producer_id",
            lit_null.cast("long").alias("prev_producer_id"),
            lit_null.cast("long").alias("next_producer_id"),
            F.col("txn_epoch").alias("epoch"),
            F.col("txn_state").alias("state"),
            F.when(
                F.col("txn_partitions").isNotNull(),
                F.transform(
                    "txn_partitions",
                    lambda p: F.struct(F.when(p == 0, F.lit(OFFSETS_TOPIC)).otherwise(F.lit(DATA_TOPIC)).alias("topic"), p.alias("partition")),
                ),
            ).alias("partitions"),
            lit_null.cast("long").alias("timeout_ms"),
            lit_null.cast("int").alias("tv"),
            "event",
            F.col("trace_id").alias("file"),
            F.col("event").alias("position"),
        ),
    )

    # offset_commits
    commits = ev.where(gc_wrote | (F.col("action") == "OffsetCommit"))
    txnal = F.col("action").isin("GcTxnOffsetCommit", "GcVerified")
    stager.write_frame(
        "offset_commits",
        commits.select(
            F.lit("trace").alias("source"),
            "trace_id",
            F.lit(0).alias("log_partition"),
            lit_null.cast("long").alias("log_offset"),
            F.col("event").alias("ts_ms"),
            F.when(txnal, F.lit("app")).otherwise(F.col("group")).alias("group_id"),
            F.when(txnal, F.lit("input")).otherwise(F.lit(DATA_TOPIC)).alias("topic"),
            F.when(txnal, F.lit(0)).otherwise(F.col("partition")).cast("int").alias("partition"),
            F.when(txnal, F.col("offset")).otherwise(F.col("committed_offset")).alias("committed_offset"),
            F.when(txnal, F.col("producer_id")).otherwise(F.lit(-1)).cast("long").alias("producer_id"),
            F.when(txnal, F.col("producer_epoch")).cast("int").alias("producer_epoch"),
            "event",
            F.col("trace_id").alias("file"),
            F.col("event").alias("position"),
        ),
    )

    # reads
    fetches = ev.where(F.col("action") == "Fetch")
    exploded = fetches.select("*", F.posexplode_outer("records").alias("read_index", "record"))
    stager.write_frame(
        "reads",
        exploded.select(
            F.lit("trace").alias("source"),
            "trace_id",
            F.col("actor").alias("process"),
            F.col("event").alias("op_index"),
            F.col("event").alias("time"),
            "isolation",
            F.lit(DATA_TOPIC).alias("topic"),
            "partition",
            F.col("from").alias("from_offset"),
            lit_null.cast("long").alias("to_offset"),  # the reference broker answers up to the LSO
            F.col("record").alias("offset"),
            lit_null.cast("string").alias("key"),
            lit_null.cast("string").alias("value"),
            "lso",
            "event",
            lit_null.cast("string").alias("op_type"),
            lit_null.cast("string").alias("op_f"),
            F.col("read_index").cast("long").alias("read_index"),
            lit_null.cast("boolean").alias("rebalanced"),
        ),
    )

    # writes
    answers = ev.where(((F.col("action") == "ClientReceive") & (F.col("type") == "ProduceResp")) | (F.col("action") == "ProduceTimeout"))
    ok = F.coalesce(F.col("error"), F.col("result")).isin("NONE", "DUPLICATE_SEQUENCE_NUMBER")
    # what the client was told about each transaction: its EndTxn answered NONE, commit or abort
    ends = (
        ev.where((F.col("action") == "ClientReceive") & (F.col("type") == "EndTxnResp") & (F.coalesce(F.col("error"), F.col("result")) == "NONE"))
        .groupBy("trace_id", "txn_id", "instance", "txn")
        .agg(F.first("commit", ignorenulls=True).alias("committed"))
    )
    answers = answers.join(ends, on=["trace_id", "txn_id", "instance", "txn"], how="left")
    stager.write_frame(
        "writes",
        answers.select(
            F.lit("trace").alias("source"),
            "trace_id",
            F.concat_ws("/", F.col("txn_id"), F.col("instance").cast("string")).alias("process"),
            F.col("event").alias("op_index"),
            F.col("event").alias("time"),
            F.concat_ws("/", F.col("txn_id"), F.col("instance").cast("string"), F.col("txn").cast("string")).alias("txn"),
            F.lit(DATA_TOPIC).alias("topic"),
            "partition",
            lit_null.cast("string").alias("key"),
            F.col("seq").cast("string").alias("value"),
            lit_null.cast("long").alias("offset"),
            F.when(F.col("action") == "ProduceTimeout", F.lit("info")).when(ok, F.lit("ok")).otherwise(F.lit("fail")).alias("outcome"),
            "event",
            "committed",
        ),
    )
    ev.unpersist()


TRACE = InputFormat("trace", "txconform JSONL traces of the Kafka protocol (many files at once)", sniff, stage, needs_spark=True)
