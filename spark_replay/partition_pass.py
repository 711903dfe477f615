"""The partition pass: one shuffle, then each partition's log checked in one pass over Arrow.

Most replay checks look at one partition's log in offset order: P1 (sequences), P2 (producer
epochs), P3 (coordinator epochs), P5's open runs, P6 (the aborted-transaction index) and C1
(read_committed fetches, which merge the partition's log with the fetches of it). Done as Spark
windows and joins (``--plan windows``, spark_replay/checks/log.py), each check pays its own shuffle
and sort, and a sort of every entry costs far more than the data's scan. Here the entries, the
read_committed reads and the .txnindex rows of each (trace, topic, partition) go through one
shuffle together (``groupBy(...).applyInArrow``), and one function (spark_replay/arrow_pass.py)
computes everything those checks need from each partition's rows with NumPy on whole columns:

- ``violation`` rows: the violations of P1, P2, P3, P6 and C1, in the columns of
  ``checks.VIOLATION_COLUMNS``, each with the same kind and detail as the windows plan;
- ``marker`` rows: every control batch of an idempotent producer (P4 joins them with the
  coordinator's PrepareCommit / PrepareAbort records);
- ``open`` rows: per (partition, producer), where its data with no closing marker begins (P5 joins
  them with the producer's last transaction-log record);
- ``key`` rows: per (partition, producer), what the entity counts need (its data epochs, whether it
  has data, transactional data, markers);
- ``part`` rows: per partition, whether it has ABORT markers and whether its .txnindex was read.

The output is a few rows per (partition, producer), cached once per replay; the checks read it
instead of the entries. The cost is memory: a partition's rows are one Arrow table in one
executor's Python worker. ``--plan windows`` has no such limit (Spark's windows spill to disk) and is the
differential oracle of this plan in the tests.

The semantics are those of checks.Derived (the spec's ``CloserOf`` / ``Fate``,
specs/kafka/KafkaLog.tla): entries of producer id -1 (not idempotent) are left out of the
producer checks; per (partition, producer) in offset order, a batch's run is the number of markers
before it, and the marker that ends its run is its fate.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # pragma: no cover
    import numpy as np
    import pandas as pd
    from pyspark.sql import DataFrame

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

# --- the per-partition sweeps both plans share ------------------------------------------------------


def index_sweep(pdf: pd.DataFrame) -> pd.DataFrame:
    """One partition's log in offset order: the AbortedTxn entry Kafka must write for each ABORT
    marker (ProducerStateManager.lastStableOffset(CompletedTxn): the first offset of the earliest
    transaction of another producer still open, else the marker's offset + 1)."""
    import pandas as pd

    rows = []
    first: dict[int, int] = {}  # producer -> first offset of its open transaction
    for r in pdf.sort_values("base_offset", kind="stable").itertuples(index=False):
        pid = int(r.producer_id)
        if r.is_control:
            start = first.pop(pid, None)
            if r.control == "ABORT" and start is not None:
                lso = min(first.values(), default=int(r.last_offset) + 1)
                rows.append((r.trace_id, r.topic, int(r.partition), pid, start, int(r.last_offset), lso))
        elif r.is_txn and pid not in first:
            first[pid] = int(r.base_offset)
    return pd.DataFrame(rows, columns=["trace_id", "topic", "partition", "producer_id", "first_offset", "last_offset", "lso"])


_SWEEP_COLUMNS = ["trace_id", "topic", "partition", "event", "offset", "kind", "detail"]


def _sweep_vectorised(pdf: pd.DataFrame) -> pd.DataFrame | None:
    """sweep_partition on whole arrays (sweep_arrays), or None when the loop must decide."""
    import numpy as np
    import pandas as pd

    pdf = pdf.sort_values(["event", "kind_order"], kind="stable")
    is_entry = (pdf["row"] == "entry").to_numpy()
    ent, rd = pdf[is_entry], pdf[~is_entry]
    if ent["offset"].isna().any() or ent["producer_id"].isna().any() or ent["event"].isna().any():
        return None
    last = rd[rd["kind_order"] == 2]
    f_ev = last["event"].to_numpy(dtype=np.int64)
    got = rd[rd["offset"].notna() & rd["event"].isin(f_ev)]
    control = ent["control"].to_numpy(dtype=object)
    ctrl = ent["is_control"].eq(True).to_numpy()
    if not bool(np.isin(control[ctrl], ["COMMIT", "ABORT"]).all()):
        return None
    found = sweep_arrays(
        Log(
            event=ent["event"].to_numpy(dtype=np.int64),
            offset=ent["offset"].to_numpy(dtype=np.int64),
            producer=ent["producer_id"].to_numpy(dtype=np.int64),
            control=ctrl,
            txn=ent["is_txn"].eq(True).to_numpy(),
            commit=ctrl & (control == "COMMIT"),
        ),
        Fetches(
            event=f_ev,
            start=last["from_offset"].to_numpy(dtype=np.float64),
            end=last["to_offset"].to_numpy(dtype=np.float64),
            lso=last["lso"].to_numpy(dtype=np.float64),
            got_event=got["event"].to_numpy(dtype=np.int64),
            got_offset=got["offset"].to_numpy(dtype=np.int64),
        ),
    )
    if found is None:
        return None
    meta = last[["trace_id", "topic", "partition"]].to_numpy(dtype=object)
    where = {"trace_id": meta[0][0], "topic": meta[0][1], "partition": int(meta[0][2])} if len(meta) else {}
    return pd.DataFrame([{**where, **r} for r in found], columns=_SWEEP_COLUMNS)


@attrs.frozen
class Log:
    """One partition's log, one row per offset (a batch of several records gives one row each, all
    of its event), in event order: the event of its append, its offset, its producer, whether it is
    a marker, transactional data, a COMMIT marker."""

    event: np.ndarray
    offset: np.ndarray
    producer: np.ndarray
    control: np.ndarray
    txn: np.ndarray
    commit: np.ndarray


@attrs.frozen
class Fetches:
    """One partition's read_committed fetches, one row per fetch in event order (events unique):
    where it started, where a partial answer ended and the LSO it reported (float, NaN: not said),
    and each record it returned (``got_*``: one row per (event, offset), duplicates allowed)."""

    event: np.ndarray
    start: np.ndarray
    end: np.ndarray
    lso: np.ndarray
    got_event: np.ndarray
    got_offset: np.ndarray


def sweep_arrays(log: Log, fetches: Fetches) -> list[dict[str, Any]] | None:
    """C1 on whole arrays, for a log whose offsets grow with its events (each offset once, every
    entry with its producer): the violations (event, offset, kind, detail), or None when the loop
    (sweep_partition) must decide. The same rows as the loop: a fetch sees the entries of its event
    and before; a batch is open from its append until its producer's next marker, which gives its
    fate; the LSO is the smallest open offset, else the log end."""
    import numpy as np

    e_off, e_ev, ctrl, commit_marker = log.offset, log.event, log.control, log.commit
    n = len(e_off)
    if n == 0:
        return None
    if n > 1 and not bool((np.diff(e_off) > 0).all()):
        return None
    txn = log.txn & ~ctrl
    # each transactional batch's closer: its producer's next marker in event order
    pid = log.producer
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

    f_ev = fetches.event
    if len(f_ev) == 0:
        return []
    # the log end and the LSO each fetch saw
    k_all = np.searchsorted(e_ev, f_ev, "right")
    log_end = np.where(k_all > 0, e_off[np.maximum(k_all - 1, 0)] + 1, 0)
    data = np.flatnonzero(~ctrl)
    d_ev, d_off = e_ev[data], e_off[data]
    pm = np.maximum.accumulate(close_ev[data]) if len(data) else np.zeros(0, dtype=np.int64)
    k_data = np.searchsorted(d_ev, f_ev, "right")
    first_open = np.searchsorted(pm, f_ev, "right")
    lso = np.where(first_open < k_data, d_off[np.minimum(first_open, max(len(data) - 1, 0))] if len(data) else 0, log_end)
    frm = np.where(np.isnan(fetches.start), 0, fetches.start).astype(np.int64)
    # the end of what each fetch answered: the LSO, or where a partial answer ended
    to = fetches.end
    upto = np.where(np.isnan(to), lso, np.minimum(lso, np.where(np.isnan(to), 0, to).astype(np.int64)))
    reported = fetches.lso

    # what each fetch returned (a set per fetch), judged in the log as it was
    g = np.unique(np.stack([fetches.got_event, fetches.got_offset], axis=1).reshape(-1, 2), axis=0)
    g_ev, g_off = g[:, 0], g[:, 1]
    idx = np.minimum(np.searchsorted(e_off, g_off), n - 1)
    present = (e_off[idx] == g_off) & ~ctrl[idx] & (e_ev[idx] <= g_ev)
    decided = present & (close_ev[idx] <= g_ev)
    ok = decided & committed[idx]
    # committed offsets below the LSO not returned
    c_off = e_off[committed]
    fi = np.searchsorted(f_ev, g_ev)  # f_ev is sorted and unique: the fetch of each returned offset
    in_range = ok & (g_off >= frm[fi]) & (g_off < upto[fi])
    returned = np.bincount(fi[in_range], minlength=len(f_ev))
    should = np.maximum(np.searchsorted(c_off, upto, "left") - np.searchsorted(c_off, frm, "left"), 0)
    skipped = should - returned

    rows: list[dict[str, Any]] = []
    bad_reads = np.flatnonzero(~ok)
    bad_by_fetch: dict[int, list[int]] = {}
    for b in bad_reads.tolist():
        bad_by_fetch.setdefault(int(fi[b]), []).append(b)
    wrong = np.flatnonzero(~np.isnan(reported) & (reported != lso))
    for i in sorted(set(wrong.tolist()) | set(bad_by_fetch) | set(np.flatnonzero(skipped > 0).tolist())):
        base = {"event": int(f_ev[i])}
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
            lo, hi = np.searchsorted(c_off, [frm[i], int(upto[i])])
            o = next(int(x) for x in c_off[lo:hi] if int(x) not in mine)
            rows.append(
                {
                    **base,
                    "offset": o,
                    "kind": "SKIPPED_READ",
                    "detail": f"committed offset {o} below the LSO {lso_i} was not returned ({int(skipped[i])} such)",
                }
            )
    return rows


def sweep_partition(pdf: pd.DataFrame) -> pd.DataFrame:
    """One partition of one trace, entries and fetches merged in event order: replay the log and
    compare each read_committed fetch with what it must have returned."""
    import pandas as pd

    fast = _sweep_vectorised(pdf)
    if fast is not None:
        return fast
    rows: list[dict[str, Any]] = []
    pdf = pdf.sort_values(["event", "kind_order"], kind="stable")
    fate: dict[int, str] = {}  # offset -> COMMIT / ABORT / "" (open)
    open_runs: dict[int, list[int]] = {}  # producer -> offsets of its open run
    log_end = 0
    fetches: dict[int, dict[str, Any]] = {}
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
                upto = lso if r.to_offset != r.to_offset or r.to_offset is None else min(lso, int(r.to_offset))
                missing = [o for o in range(frm, upto) if fate.get(o) == "COMMIT" and o not in got]
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



# The rows of every kind, one schema (applyInPandas returns one frame).
OUTPUT_COLUMNS = (
    "rec",  # violation, marker, open, key, part
    *VIOLATION_COLUMNS,
    "epoch",  # marker: the marker's producer epoch
    "n_epochs",  # key: distinct epochs of its data batches
    "has_data",
    "has_txn",
    "has_markers",
    "has_abort",  # part
    "has_index",  # part
)
OUTPUT_SCHEMA = (
    "rec string, check string, kind string, trace_id string, topic string, partition int, producer_id long, offset long, "
    "event long, ts_ms long, txn_id string, detail string, epoch int, n_epochs long, has_data boolean, has_txn boolean, "
    "has_markers boolean, has_abort boolean, has_index boolean"
)
# The pass's input: one frame of these columns and types, whatever table a row comes from.
_INPUT = (
    ("row", "string"),  # entry, read, index
    ("trace_id", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("producer_id", "long"),
    ("base_offset", "long"),  # read: the offset returned; index: the entry's first offset
    ("last_offset", "long"),
    ("producer_epoch", "int"),
    ("base_seq", "int"),
    ("last_seq", "int"),
    ("is_txn", "boolean"),
    ("is_control", "boolean"),
    ("control", "string"),
    ("coord_epoch", "int"),
    ("ts_ms", "long"),
    ("event", "long"),
    ("txn_id", "string"),
    ("from_offset", "long"),  # read
    ("to_offset", "long"),  # read: where its answer ended (null: at the LSO)
    ("lso", "long"),  # read: the LSO the fetch reported; index: the entry's LSO
)
SEQ_MOD = 2**31

# The reads C1 replays: read_committed fetches that say where they started and when (traces,
# generated logs, the probe's raw Fetch requests). A client's polls (Jepsen, the probe's consumers)
# say neither; C2 and C4 judge those.
C1_FETCHES = "isolation = 'read_committed' AND from_offset IS NOT NULL AND event IS NOT NULL"


def _as_input(frame: DataFrame, row: str, renamed: dict[str, str]) -> DataFrame:
    """``frame`` as _INPUT rows of kind ``row``: the columns it shares with _INPUT by name (or
    under ``renamed``: input column -> frame column), the others null."""
    from pyspark.sql import functions as F

    have = set(frame.columns)
    cols = [F.lit(row).alias("row")]
    for name, kind in _INPUT[1:]:
        source = renamed.get(name, name)
        cols.append(F.col(source).cast(kind).alias(name) if source in have else F.lit(None).cast(kind).alias(name))
    return frame.select(*cols)


def pass_input(t: Any, with_reads: bool, with_index: bool) -> DataFrame:
    """The entries (and read_committed reads, and .txnindex rows) as one frame of _INPUT."""

    frame = _as_input(t.entries, "entry", {})
    if with_reads:
        reads = t.reads.where(C1_FETCHES).select("trace_id", "topic", "partition", "offset", "event", "from_offset", "to_offset", "lso")
        frame = frame.unionByName(_as_input(reads, "read", {"base_offset": "offset"}))
    if with_index:
        index = t.aborted_index.select("trace_id", "topic", "partition", "producer_id", "first_offset", "last_offset", "lso")
        frame = frame.unionByName(_as_input(index, "index", {"base_offset": "first_offset"}))
    return frame


# --- one partition -------------------------------------------------------------------------------


def _int(v: Any) -> Any:
    return None if v is None or v != v else int(v)


def index_violations(idem: pd.DataFrame, index: pd.DataFrame, where: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """P6: the .txnindex entries Kafka must have written for this partition's ABORT markers, against
    those it did."""
    swept = index_sweep(idem).itertuples(index=False) if len(idem) else iter(())
    expected = {(int(r.producer_id), int(r.last_offset)): (int(r.first_offset), int(r.lso)) for r in swept}
    got = {(int(r.producer_id), int(r.last_offset)): (int(r.base_offset), _int(r.lso)) for r in index.itertuples(index=False)}

    def s(v: Any) -> str:
        return "none" if v is None else str(v)

    for key in sorted(set(expected) | set(got)):
        first, lso = expected.get(key, (None, None))
        got_first, got_lso = got.get(key, (None, None))
        if got_first is None:
            kind = "MISSING_INDEX_ENTRY"
        elif first is None:
            kind = "INDEX_WITHOUT_ABORT"
        elif got_first != first:
            kind = "WRONG_FIRST_OFFSET"
        elif got_lso is not None and got_lso != lso:
            kind = "WRONG_INDEX_LSO"
        else:
            continue
        pid, last = key
        rows.append(
            {"rec": "violation", "check": "P6", **where, "producer_id": pid, "offset": last, "kind": kind,
             "detail": f"ABORT at {last}: the log gives first offset {s(first)} and LSO {s(lso)}, the index {s(got_first)} and {s(got_lso)}"}
        )


def c1_frame(entries: pd.DataFrame, reads: pd.DataFrame) -> pd.DataFrame:
    """The partition's log and its read_committed fetches, as checks.sweep_partition reads them:
    one entry row per offset (a data batch of several records gives one row per record, all of its
    event), each fetch's rows in offset order (an empty fetch's row first), its last row of kind 2."""
    import numpy as np
    import pandas as pd

    ent = entries[entries["event"].notna()].reset_index(drop=True)
    span = (ent["last_offset"].fillna(ent["base_offset"]) - ent["base_offset"] + 1).clip(lower=1)
    span = np.where(ent["is_control"].eq(True), 1, span.fillna(1)).astype(np.int64)
    if bool((span > 1).any()):
        ent = ent.loc[ent.index.repeat(span)]
        ent = ent.assign(base_offset=ent["base_offset"] + ent.groupby(level=0).cumcount()).reset_index(drop=True)
    e = pd.DataFrame(
        {
            "row": "entry",
            "trace_id": ent["trace_id"],
            "topic": ent["topic"],
            "partition": ent["partition"],
            "event": ent["event"],
            "kind_order": 0,
            "offset": ent["base_offset"],
            "producer_id": ent["producer_id"],
            "is_txn": ent["is_txn"],
            "is_control": ent["is_control"],
            "control": ent["control"],
            "from_offset": None,
            "to_offset": None,
            "lso": None,
        }
    )
    r = reads.assign(_null=reads["base_offset"].isna()).sort_values(["event", "_null", "base_offset"], ascending=[True, False, True], kind="stable")
    last = ~r["event"].duplicated(keep="last")
    rd = pd.DataFrame(
        {
            "row": "read",
            "trace_id": r["trace_id"],
            "topic": r["topic"],
            "partition": r["partition"],
            "event": r["event"],
            "kind_order": last.map({True: 2, False: 1}).astype("int64"),
            "offset": r["base_offset"],
            "producer_id": None,
            "is_txn": None,
            "is_control": None,
            "control": None,
            "from_offset": r["from_offset"],
            "to_offset": r["to_offset"],
            "lso": r["lso"],
        }
    )
    with warnings.catch_warnings():  # the entries' read columns and the reads' entry columns are all null, by design
        warnings.simplefilter("ignore", FutureWarning)
        return pd.concat([e, rd], ignore_index=True)


__all__ = [
    "KEY",
    "OUTPUT_COLUMNS",
    "OUTPUT_SCHEMA",
    "Fetches",
    "Log",
    "c1_frame",
    "index_violations",
    "pass_input",
    "sweep_arrays",
    "sweep_partition",
]
