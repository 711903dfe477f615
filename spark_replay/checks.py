"""The replay checks: each approximates a spec invariant on what a deployment exposes.

Every check reads the staged tables and returns its violations as a DataFrame with the columns of
``VIOLATION`` (check, kind, trace_id, topic, partition, producer_id, offset, event, ts_ms, txn_id,
detail). The shared derivation (``Derived``) is computed once per replay: one window over
(trace_id, topic, partition, producer_id) ordered by offset gives every check its predecessor
columns and each batch its run (the number of markers before it), and one join gives each data
batch its fate (the marker that closes its run). That is the spec's ``CloserOf``/``Fate``
(specs/kafka/KafkaLog.tla).

The checks (docs/replay.md gives each one's definition, the invariant and the real bugs):
P1 sequences (NoDuplicates), P2 producer epochs and zombie commits (ZombieFenced), P3
coordinator epochs on markers, P4 markers follow the coordinator's decision (Atomicity,
MarkerSafety), P5 hanging transactions (NoHangingTransaction), P7 the coordinator's state machine
(TxnStateMachine), C1 read_committed fetches (ReadCommitted).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from ref_impl.kafka.states import OPEN_STATES, VALID_PREVIOUS

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession

VIOLATION_COLUMNS = (
    "check",
    "kind",
    "trace_id",
    "topic",
    "partition",
    "producer_id",
    "offset",
    "event",
    "ts_ms",
    "txn_id",
    "detail",
)

KEY = ("trace_id", "topic", "partition", "producer_id")


@dataclass
class Tables:
    """The staged tables of one replay, as DataFrames."""

    spark: "SparkSession"
    entries: "DataFrame"
    txn_log: "DataFrame"
    offset_commits: "DataFrame"
    aborted_index: "DataFrame"
    writes: "DataFrame"
    reads: "DataFrame"
    counts: dict[str, int]


class Derived:
    """What several checks share, computed once (and cached) per replay."""

    def __init__(self, t: Tables) -> None:
        from pyspark.sql import Window
        from pyspark.sql import functions as F

        self.t = t
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


@dataclass(frozen=True)
class Check:
    id: str
    name: str
    invariant: str
    anomaly: str  # the Jepsen anomaly it catches, or ""
    needs: tuple[str, ...]  # tables that must have rows for the check to apply
    entities: str  # what it counts as the entities checked
    run: Callable[[Derived], "DataFrame"]
    count_entities: Callable[[Derived], int]
    # What the check could not see in this input, said in the report (empty: nothing).
    unseen: Callable[[Derived], str] = lambda d: ""


def _violations(frame: "DataFrame", check: str, kind: Any, detail: Any) -> "DataFrame":
    from pyspark.sql import functions as F

    def col(name: str, kind: str) -> "F.Column":
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


def _groups(frame: "DataFrame", *cols: str) -> int:
    return frame.select(*cols).distinct().count()


# --- P1: sequences ---------------------------------------------------------------------------


def p1_sequences(d: Derived) -> "DataFrame":
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    data = d.ordered.where(~F.col("is_control") & (F.col("base_seq") >= 0))
    w = Window.partitionBy(*KEY, "producer_epoch").orderBy("base_offset")
    prev = data.withColumn("prev_last_seq", F.lag("last_seq").over(w)).where(F.col("prev_last_seq").isNotNull())
    expected = (F.col("prev_last_seq") + 1) % F.lit(2**31)
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


def p2_epochs(d: Derived) -> "DataFrame":
    from pyspark.sql import functions as F

    stale = d.ordered.where(~F.col("is_control") & (F.col("producer_epoch") < F.col("max_epoch_before")))
    a = _violations(
        stale,
        "P2",
        "STALE_EPOCH_DATA",
        F.format_string("data of epoch %d appended after epoch %d was seen", F.col("producer_epoch"), F.col("max_epoch_before")),
    )
    low_marker = d.fates.where(F.col("marker_epoch").isNotNull() & (F.col("marker_epoch") < F.col("producer_epoch")))
    b = _violations(
        low_marker.withColumn("base_offset", F.col("marker_offset")).withColumn("event", F.col("marker_event")),
        "P2",
        "MARKER_EPOCH_BELOW_DATA",
        F.format_string("%s marker of epoch %d closes data of epoch %d", F.col("fate"), F.col("marker_epoch"), F.col("producer_epoch")),
    ).dropDuplicates(["trace_id", "topic", "partition", "producer_id", "offset"])
    # Traces only (logs do not say which instance wrote a batch, and under the no_epoch_bump bug a
    # zombie's batches look normal): data of an instance that committed although a later instance of
    # its transactional id had already written (so had already fenced it with InitProducerId).
    data = d.fates.where(F.col("instance").isNotNull() & F.col("txn_id").isNotNull())
    firsts = data.groupBy("trace_id", "txn_id", "instance").agg(F.min("event").alias("first_event"))
    zombie = (
        data.where(F.col("fate") == "COMMIT")
        .alias("z")
        .join(
            firsts.alias("f"),
            (F.col("z.trace_id") == F.col("f.trace_id"))
            & (F.col("z.txn_id") == F.col("f.txn_id"))
            & (F.col("f.instance") > F.col("z.instance"))
            & (F.col("f.first_event") < F.col("z.event")),
            how="inner",
        )
        .select("z.*", F.col("f.instance").alias("successor"), F.col("f.first_event").alias("successor_event"))
    )
    zombie = zombie.dropDuplicates(["trace_id", "topic", "partition", "base_offset"])
    c = _violations(
        zombie,
        "P2",
        "ZOMBIE_COMMITTED",
        F.format_string(
            "instance %d's batch was appended after instance %d wrote (event %d), and it committed",
            F.col("instance"),
            F.col("successor"),
            F.col("successor_event"),
        ),
    )
    return a.unionByName(b).unionByName(c)


# --- P3: coordinator epochs -----------------------------------------------------------------------


def p3_coordinator_epochs(d: Derived) -> "DataFrame":
    from pyspark.sql import functions as F

    bad = d.ordered.where(F.col("is_control") & (F.col("coord_epoch") < F.col("prev_coord_epoch")))
    return _violations(
        bad,
        "P3",
        "COORDINATOR_EPOCH_BACK",
        F.format_string("marker of coordinator epoch %d after one of %d", F.col("coord_epoch"), F.col("prev_coord_epoch")),
    )


# --- P4: atomicity --------------------------------------------------------------------------------


def _prepares(d: Derived) -> "DataFrame":
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


def p4_atomicity(d: Derived) -> "DataFrame":
    from pyspark.sql import functions as F

    prepares = _prepares(d)
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
    has_data = d.ordered.where(~F.col("is_control")).select("trace_id", "topic", "partition", "producer_id").distinct()
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
        F.format_string("the transaction completed without a %s marker on %s-%d", F.col("expected"), F.col("topic"), F.col("partition")),
    )
    return a.unionByName(b)


# --- P5: hanging transactions -------------------------------------------------------------------


def p5_hanging(d: Derived) -> "DataFrame":
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    open_runs = (
        d.fates.where(F.col("fate").isNull() & F.col("is_txn"))
        .groupBy(*KEY)
        .agg(
            F.min("base_offset").alias("base_offset"),
            F.min("event").alias("event"),
            F.min("ts_ms").alias("ts_ms"),
            F.first("txn_id", ignorenulls=True).alias("txn_id"),
        )
    )
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


def _txn_data(d: Derived) -> "DataFrame":
    return d.ordered.where("not is_control and is_txn").select(*KEY).distinct()


def _logged(d: Derived) -> "DataFrame":
    return d.t.txn_log.select("trace_id", "producer_id").distinct()


def p5_entities(d: Derived) -> int:
    return _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_semi").count()


def p5_unseen(d: Derived) -> str:
    n = _txn_data(d).join(_logged(d), on=["trace_id", "producer_id"], how="left_anti").count()
    return f"{n} (partition, producer) with transactional data but no transaction-log record were not judged" if n else ""


# --- P7: the coordinator's state machine ----------------------------------------------------------


def p7_state_machine(d: Derived) -> "DataFrame":
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
    legal = log.alias("l").join(
        F.broadcast(pairs).alias("p"), (F.col("l.prev_state") == F.col("p.old")) & (F.col("l.state") == F.col("p.new")), how="left_semi"
    )
    steps = log.where(F.col("prev_state").isNotNull())
    illegal = steps.join(legal.select("trace_id", "txn_id", "log_offset"), on=["trace_id", "txn_id", "log_offset"], how="left_anti")
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


# --- C1: read_committed fetches -------------------------------------------------------------------


_SWEEP_COLUMNS = ["trace_id", "topic", "partition", "event", "offset", "kind", "detail"]


def _sweep_vectorised(pdf: "pd.DataFrame") -> Optional["pd.DataFrame"]:
    """_sweep_partition on whole arrays, for a log whose offsets grow with its events (each
    offset once, every marker COMMIT or ABORT, every entry with its producer): None otherwise, and
    the loop decides. The same rows as the loop: a fetch sees the entries of its event and before;
    a batch is open from its append until its producer's next marker, which gives its fate; the
    LSO is the smallest open offset, else the log end."""
    import numpy as np
    import pandas as pd

    pdf = pdf.sort_values(["event", "kind_order"], kind="stable")
    is_entry = (pdf["row"] == "entry").to_numpy()
    ent, rd = pdf[is_entry], pdf[~is_entry]
    if ent["offset"].isna().any() or ent["producer_id"].isna().any() or ent["event"].isna().any():
        return None
    e_off = ent["offset"].to_numpy(dtype=np.int64)
    e_ev = ent["event"].to_numpy(dtype=np.int64)
    n = len(e_off)
    if n == 0:
        return None
    if n > 1 and not bool((np.diff(e_off) > 0).all()):
        return None
    ctrl = ent["is_control"].eq(True).to_numpy()
    txn = ent["is_txn"].eq(True).to_numpy() & ~ctrl
    control = ent["control"].to_numpy(dtype=object)
    if not bool(np.isin(control[ctrl], ["COMMIT", "ABORT"]).all()):
        return None
    commit_marker = ctrl & (control == "COMMIT")
    # each transactional batch's closer: its producer's next marker in event order
    pid = ent["producer_id"].to_numpy(dtype=np.int64)
    by_pid = np.lexsort((np.arange(n), pid))
    pos = np.arange(n)
    nxt = np.minimum.accumulate(np.where(ctrl[by_pid], pos, n)[::-1])[::-1]
    nxt_c = np.minimum(nxt, n - 1)
    has = (nxt < n) & (pid[by_pid][nxt_c] == pid[by_pid])
    closer = np.full(n, -1)
    closer[by_pid] = np.where(has, by_pid[nxt_c], -1)
    never = np.iinfo(np.int64).max
    close_ev = np.where(txn, np.where(closer >= 0, e_ev[np.maximum(closer, 0)], never), e_ev)
    committed = ~ctrl & (~txn | ((closer >= 0) & commit_marker[np.maximum(closer, 0)]))
    aborted = txn & (closer >= 0) & ~commit_marker[np.maximum(closer, 0)]

    last = rd[rd["kind_order"] == 2]
    if last.empty:
        return pd.DataFrame([], columns=_SWEEP_COLUMNS)
    f_ev = last["event"].to_numpy(dtype=np.int64)
    # the log end and the LSO each fetch saw
    k_all = np.searchsorted(e_ev, f_ev, "right")
    log_end = np.where(k_all > 0, e_off[np.maximum(k_all - 1, 0)] + 1, 0)
    data = np.flatnonzero(~ctrl)
    d_ev, d_off = e_ev[data], e_off[data]
    pm = np.maximum.accumulate(close_ev[data]) if len(data) else np.zeros(0, dtype=np.int64)
    k_data = np.searchsorted(d_ev, f_ev, "right")
    first_open = np.searchsorted(pm, f_ev, "right")
    lso = np.where(first_open < k_data, d_off[np.minimum(first_open, max(len(data) - 1, 0))] if len(data) else 0, log_end)
    frm = last["from_offset"].to_numpy(dtype=np.float64)
    frm = np.where(np.isnan(frm), 0, frm).astype(np.int64)
    reported = last["lso"].to_numpy(dtype=np.float64)

    # what each fetch returned (a set per fetch), judged in the log as it was
    got = rd[rd["offset"].notna() & rd["event"].isin(f_ev)]
    g = np.unique(np.stack([got["event"].to_numpy(dtype=np.int64), got["offset"].to_numpy(dtype=np.int64)], axis=1).reshape(-1, 2), axis=0)
    g_ev, g_off = g[:, 0], g[:, 1]
    idx = np.minimum(np.searchsorted(e_off, g_off), n - 1)
    present = (e_off[idx] == g_off) & ~ctrl[idx] & (e_ev[idx] <= g_ev)
    decided = present & (close_ev[idx] <= g_ev)
    ok = decided & committed[idx]
    # committed offsets below the LSO not returned
    c_off = e_off[committed]
    fi = np.searchsorted(f_ev, g_ev)  # f_ev is sorted and unique: the fetch of each returned offset
    in_range = ok & (g_off >= frm[fi]) & (g_off < lso[fi])
    returned = np.bincount(fi[in_range], minlength=len(f_ev))
    should = np.maximum(np.searchsorted(c_off, lso, "left") - np.searchsorted(c_off, frm, "left"), 0)
    skipped = should - returned

    rows: list[dict] = []
    meta = last[["trace_id", "topic", "partition"]].to_numpy(dtype=object)
    bad_reads = np.flatnonzero(~ok)
    bad_by_fetch: dict[int, list[int]] = {}
    for b in bad_reads.tolist():
        bad_by_fetch.setdefault(int(fi[b]), []).append(b)
    wrong = np.flatnonzero(~np.isnan(reported) & (reported != lso))
    for i in sorted(set(wrong.tolist()) | set(bad_by_fetch) | set(np.flatnonzero(skipped > 0).tolist())):
        base = {"trace_id": meta[i][0], "topic": meta[i][1], "partition": int(meta[i][2]), "event": int(f_ev[i])}
        lso_i = int(lso[i])
        if not np.isnan(reported[i]) and int(reported[i]) != lso_i:
            rows.append({**base, "offset": None, "kind": "WRONG_LSO", "detail": f"the fetch reported LSO {int(reported[i])}; the log's was {lso_i}"})
        for j in bad_by_fetch.get(i, []):
            o = int(g_off[j])
            what = "aborted" if decided[j] and aborted[idx[j]] else ("not yet committed" if present[j] else "not in the log")
            rows.append(
                {**base, "offset": o, "kind": "ABORTED_READ" if what == "aborted" else "DIRTY_READ", "detail": f"read_committed returned offset {o}, {what}"}
            )
        if skipped[i] > 0:
            mine = set(g_off[fi == i].tolist())
            lo, hi = np.searchsorted(c_off, [frm[i], lso_i])
            o = next(int(x) for x in c_off[lo:hi] if int(x) not in mine)
            rows.append(
                {
                    **base,
                    "offset": o,
                    "kind": "SKIPPED_READ",
                    "detail": f"committed offset {o} below the LSO {lso_i} was not returned ({int(skipped[i])} such)",
                }
            )
    return pd.DataFrame(rows, columns=_SWEEP_COLUMNS)


def _sweep_partition(pdf: "pd.DataFrame") -> "pd.DataFrame":
    """One partition of one trace, entries and fetches merged in event order: replay the log and
    compare each read_committed fetch with what it must have returned."""
    import pandas as pd

    fast = _sweep_vectorised(pdf)
    if fast is not None:
        return fast
    rows: list[dict] = []
    pdf = pdf.sort_values(["event", "kind_order"], kind="stable")
    fate: dict[int, str] = {}  # offset -> COMMIT / ABORT / "" (open)
    open_runs: dict[int, list[int]] = {}  # producer -> offsets of its open run
    log_end = 0
    fetches: dict[int, dict] = {}
    for r in pdf.itertuples(index=False):
        if r.row == "entry":
            off = int(r.offset)
            log_end = max(log_end, off + 1)
            pid = int(r.producer_id)
            if r.is_control:
                for o in open_runs.pop(pid, []):
                    fate[o] = str(r.control)
            else:
                fate[off] = ""
                if r.is_txn:
                    open_runs.setdefault(pid, []).append(off)
                else:
                    fate[off] = "COMMIT"
        else:
            f = fetches.setdefault(int(r.event), {"got": [], "row": r})
            if r.offset == r.offset and r.offset is not None:  # not NaN
                f["got"].append(int(r.offset))
            if r.kind_order == 2:  # the fetch's last row: judge it now, in the log as it was
                lso = min((min(v) for v in open_runs.values() if v), default=log_end)
                got = sorted(set(f["got"]))
                frm = int(r.from_offset) if r.from_offset == r.from_offset else 0
                base = {"trace_id": r.trace_id, "topic": r.topic, "partition": int(r.partition), "event": int(r.event)}
                if r.lso == r.lso and r.lso is not None and int(r.lso) != lso:
                    rows.append({**base, "offset": None, "kind": "WRONG_LSO", "detail": f"the fetch reported LSO {int(r.lso)}; the log's was {lso}"})
                for o in got:
                    if fate.get(o) != "COMMIT":
                        what = {"ABORT": "aborted", "": "not yet committed", None: "not in the log"}[fate.get(o)]
                        rows.append(
                            {
                                **base,
                                "offset": o,
                                "kind": "ABORTED_READ" if what == "aborted" else "DIRTY_READ",
                                "detail": f"read_committed returned offset {o}, {what}",
                            }
                        )
                missing = [o for o in range(frm, lso) if fate.get(o) == "COMMIT" and o not in got]
                for o in missing[:1]:
                    rows.append(
                        {
                            **base,
                            "offset": o,
                            "kind": "SKIPPED_READ",
                            "detail": f"committed offset {o} below the LSO {lso} was not returned ({len(missing)} such)",
                        }
                    )
                del fetches[int(r.event)]
    return pd.DataFrame(rows, columns=["trace_id", "topic", "partition", "event", "offset", "kind", "detail"])


def c1_read_committed(d: Derived) -> "DataFrame":
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    entries = d.t.entries.where(F.col("event").isNotNull()).select(
        F.lit("entry").alias("row"),
        "trace_id",
        "topic",
        "partition",
        "event",
        F.lit(0).alias("kind_order"),
        F.col("base_offset").alias("offset"),
        "producer_id",
        "is_txn",
        "is_control",
        "control",
        F.lit(None).cast("long").alias("from_offset"),
        F.lit(None).cast("long").alias("lso"),
    )
    w = Window.partitionBy("trace_id", "event").orderBy(F.col("offset").asc_nulls_first())
    reads = (
        d.t.reads.where(F.col("isolation") == "read_committed")
        .withColumn("n", F.row_number().over(w))
        .withColumn("last", F.count("*").over(Window.partitionBy("trace_id", "event")))
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
        "lso",
    )
    merged = entries.unionByName(reads)
    out = merged.groupBy("trace_id", "topic", "partition").applyInPandas(
        _sweep_partition,
        "trace_id string, topic string, partition int, event long, offset long, kind string, detail string",
    )
    return _violations(out, "C1", F.col("kind"), F.col("detail"))


# --- the suite --------------------------------------------------------------------------------------


def _count(frame_of: Callable[[Derived], "DataFrame"], *cols: str) -> Callable[[Derived], int]:
    return lambda d: _groups(frame_of(d), *cols)


CHECKS: tuple[Check, ...] = (
    Check(
        "P1",
        "sequences",
        "NoDuplicates",
        "duplicate",
        ("entries",),
        "(partition, producer, epoch)",
        p1_sequences,
        _count(lambda d: d.ordered.where("not is_control"), *KEY, "producer_epoch"),
    ),
    Check("P2", "producer epochs", "ZombieFenced", "", ("entries",), "(partition, producer)", p2_epochs, _count(lambda d: d.ordered, *KEY)),
    Check(
        "P3",
        "coordinator epochs",
        "MarkerSafety",
        "",
        ("entries",),
        "(partition, producer) with markers",
        p3_coordinator_epochs,
        _count(lambda d: d.ordered.where("is_control"), *KEY),
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
        "P7",
        "coordinator state machine",
        "TxnStateMachine",
        "",
        ("txn_log",),
        "transactional ids",
        p7_state_machine,
        _count(lambda d: d.t.txn_log, "trace_id", "txn_id"),
    ),
    Check(
        "C1",
        "read_committed fetches",
        "ReadCommitted",
        "G1a (aborted read), dirty read, poll skip",
        ("entries", "reads"),
        "read_committed fetches",
        c1_read_committed,
        _count(lambda d: d.t.reads.where("isolation = 'read_committed'"), "trace_id", "event"),
    ),
)


def by_id() -> Iterator[tuple[str, Check]]:
    for c in CHECKS:
        yield c.id, c
