"""One partition's log checked on Arrow: the function the partition pass runs on each (trace, topic,
partition) group (``groupBy(...).applyInArrow``, spark_replay/partition_pass.py).

It takes the group as one ``pyarrow.Table`` of the pass's input columns (entries, read_committed
reads and .txnindex rows together) and returns one ``pyarrow.Table`` of ``partition_pass.OUTPUT_SCHEMA``.
Everything is computed with NumPy on whole columns, in one order: the idempotent entries sorted
once by (producer, offset), where P1, P2, P3, the closing marker of every batch (the spec's
``CloserOf``), the open runs (P5) and the entity counts are segmented scans and shifts; and C1's
replay of the fetches (``partition_pass.sweep_arrays``) over the log expanded to one row per offset
in event order. No per-row Python, no pandas: string columns are never turned into Python objects
except for the few rows emitted. Two rare inputs still go through pandas: a .txnindex to recompute
(P6, the loop of ``partition_pass.index_sweep``) and a log that the vectorised C1 cannot replay
(offsets not growing with events, an entry without producer or offset, an unknown marker), which
``partition_pass.sweep_partition``'s loop decides.

The windows plan (``--plan windows``, spark_replay/checks/log.py) computes the same rows with Spark
windows and joins; tests/test_replay_plans.py and tests/test_replay_generate.py compare the two row
by row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from spark_replay.partition_pass import (
    OUTPUT_COLUMNS,
    OUTPUT_SCHEMA,
    SEQ_MOD,
    Fetches,
    Log,
    c1_frame,
    index_violations,
    pass_input,
    sweep_arrays,
    sweep_partition,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

_TYPES = {
    "partition": pa.int32(),
    "epoch": pa.int32(),
    "producer_id": pa.int64(),
    "offset": pa.int64(),
    "event": pa.int64(),
    "ts_ms": pa.int64(),
    "n_epochs": pa.int64(),
    **{c: pa.bool_() for c in ("has_data", "has_txn", "has_markers", "has_abort", "has_index")},
}
SCHEMA = pa.schema([(c, _TYPES.get(c, pa.string())) for c in OUTPUT_COLUMNS])
# epochs and groups packed in one int64 for segmented running maxima: group * _SPAN + value
_SPAN = 2**34


def run_pass(t: Any, with_reads: bool, with_index: bool) -> DataFrame:
    """The pass's output rows (partition_pass.OUTPUT_SCHEMA) for the tables ``t``; not cached here."""
    return pass_input(t, with_reads, with_index).groupBy("trace_id", "topic", "partition").applyInArrow(check_partition, OUTPUT_SCHEMA)


def _f64(col: Any) -> np.ndarray:
    """A numeric column as float64, null as NaN (comparisons with it are false, as Spark's with null)."""
    return np.asarray(pc.cast(col, pa.float64()).to_numpy(zero_copy_only=False), dtype=np.float64)


def _i64(col: Any, fill: int) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.cast(col, pa.int64()), fill).to_numpy(zero_copy_only=False), dtype=np.int64)


def _flag(col: Any) -> np.ndarray:
    return np.asarray(pc.fill_null(col, False).to_numpy(zero_copy_only=False), dtype=bool)


def _d(v: float) -> str:
    """A number as Spark's format_string('%d') prints it (null for a missing one)."""
    return "null" if v != v else str(int(v))


def _table(n: int, cols: dict[str, Any]) -> pa.Table:
    """``n`` output rows: each column of ``cols`` an array, a list or one value for all; the others null."""
    arrays = []
    for field in SCHEMA:
        v = cols.get(field.name)
        if v is None:
            arrays.append(pa.nulls(n, field.type))
        elif isinstance(v, pa.ChunkedArray | pa.Array):
            arrays.append(pc.cast(v, field.type))
        elif isinstance(v, np.ndarray | list):
            arrays.append(pa.array(v, type=field.type))
        else:
            arrays.append(pa.repeat(pa.scalar(v, field.type), n))
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def check_partition(table: pa.Table) -> pa.Table:
    """Everything the pass emits for one (trace, topic, partition): partition_pass's docstring."""
    where = {"trace_id": table.column("trace_id")[0].as_py(), "topic": table.column("topic")[0].as_py(), "partition": table.column("partition")[0].as_py()}
    kind = table.column("row")
    entries = table.filter(pc.equal(kind, "entry"))
    reads = table.filter(pc.equal(kind, "read"))
    index = table.filter(pc.equal(kind, "index"))
    idem = entries.filter(pc.fill_null(pc.greater_equal(entries.column("producer_id"), 0), False))
    parts: list[pa.Table] = []
    if idem.num_rows:
        parts += _producers(idem, where)
    if index.num_rows:
        rows: list[dict[str, Any]] = []
        index_violations(idem.to_pandas(), index.to_pandas(), where, rows)
        parts.append(pa.Table.from_pylist(rows, schema=SCHEMA))
    if reads.num_rows:
        parts.append(_c1(entries, reads, where))
    is_abort = pc.and_(_flag_col(idem, "is_control"), pc.fill_null(pc.equal(idem.column("control"), "ABORT"), False))
    has_abort = bool(pc.any(is_abort).as_py()) if idem.num_rows else False
    parts.append(_table(1, {"rec": "part", **where, "has_abort": has_abort, "has_index": bool(index.num_rows)}))
    return pa.concat_tables(parts)


def _flag_col(t: pa.Table, name: str) -> Any:
    return pc.fill_null(t.column(name), False)


def _producers(idem: pa.Table, where: dict[str, Any]) -> list[pa.Table]:
    """P1, P2, P3, the markers, the open runs and the key rows of one partition's idempotent entries,
    sorted once by (producer, offset)."""
    pid0 = _i64(idem.column("producer_id"), -1)
    off0 = _i64(idem.column("base_offset"), np.iinfo(np.int64).min)
    order = np.lexsort((off0, pid0))  # stable: entries of one offset keep the order they came in
    n = idem.num_rows
    pid, off = pid0[order], off0[order]
    ctrl = _flag(idem.column("is_control"))[order]
    txn = _flag(idem.column("is_txn"))[order]
    epoch = _f64(idem.column("producer_epoch"))[order]
    coord = _f64(idem.column("coord_epoch"))[order]

    def take(name: str, rows: np.ndarray) -> Any:
        """Column ``name`` at sorted positions ``rows`` (string columns are only ever taken for these)."""
        return idem.column(name).take(pa.array(order[rows]))
    pos = np.arange(n)
    start = np.ones(n, dtype=bool)
    start[1:] = pid[1:] != pid[:-1]
    gid = np.cumsum(start) - 1
    gfirst = np.flatnonzero(start)[gid]  # the position of each row's producer's first row
    out: list[pa.Table] = []
    violations: list[dict[str, Any]] = []

    def at(i: int, check: str, kind: str, detail: str, **fields: Any) -> None:
        row = idem.slice(int(order[i]), 1).to_pylist()[0]
        violations.append(
            {"rec": "violation", "check": check, "kind": kind, **where, "producer_id": int(pid[i]), "offset": int(off[i]), "event": row["event"],
             "ts_ms": row["ts_ms"], "txn_id": row["txn_id"], "detail": detail} | fields
        )

    # P2: data of an epoch below the highest one seen before it (incl. markers) on (partition, producer)
    packed = gid * _SPAN + np.where(np.isnan(epoch), 0, epoch + 2).astype(np.int64)
    running = np.maximum.accumulate(packed)
    before = np.empty(n, dtype=np.int64)
    before[0] = -1
    before[1:] = running[:-1]
    before = np.where(start, -1, before - gid * _SPAN)
    max_before = np.where(before > 0, before - 2, np.nan)
    for i in np.flatnonzero(~ctrl & (epoch < max_before)).tolist():
        at(i, "P2", "STALE_EPOCH_DATA", f"data of epoch {_d(epoch[i])} appended after epoch {_d(max_before[i])} was seen")
    # P3: a marker whose coordinator epoch is below the last one before it
    seen = np.maximum.accumulate(np.where(np.isnan(coord), -1, pos))
    prev_seen = np.empty(n, dtype=np.int64)
    prev_seen[0] = -1
    prev_seen[1:] = seen[:-1]
    prev_coord = np.where(prev_seen >= gfirst, coord[np.maximum(prev_seen, 0)], np.nan)
    for i in np.flatnonzero(ctrl & (coord < prev_coord)).tolist():
        at(i, "P3", "COORDINATOR_EPOCH_BACK", f"marker of coordinator epoch {_d(coord[i])} after one of {_d(prev_coord[i])}")
    # P1: per (partition, producer, epoch), each data batch's first sequence follows the last one's
    base_seq = _i64(idem.column("base_seq"), -1)[order]
    last_seq = _f64(idem.column("last_seq"))[order]
    sp = np.flatnonzero(~ctrl & (base_seq >= 0))
    if len(sp):
        ek = np.where(np.isnan(epoch), -(2**40), epoch).astype(np.int64)
        s = sp[np.lexsort((sp, ek[sp], pid[sp]))]
        same = np.zeros(len(s), dtype=bool)
        same[1:] = (pid[s][1:] == pid[s][:-1]) & (ek[s][1:] == ek[s][:-1])
        prev_last = np.full(len(s), np.nan)
        prev_last[1:] = last_seq[s][:-1]
        prev_last = np.where(same, prev_last, np.nan)
        expected = np.where(np.isnan(prev_last), 0, prev_last + 1).astype(np.int64) % SEQ_MOD
        base = base_seq[s]
        for j in np.flatnonzero(~np.isnan(prev_last) & (base != expected)).tolist():
            i = int(s[j])
            at(i, "P1", "DUPLICATE" if base[j] <= prev_last[j] else "GAP",
               f"epoch {_d(epoch[i])}: sequence {int(base[j])} follows {int(prev_last[j])} (expected {int(expected[j])})")  # fmt: skip
    # each data batch's closer: the next marker of its producer (the end of its run), or none (-1)
    nxt = np.minimum.accumulate(np.where(ctrl, pos, n)[::-1])[::-1]
    safe = np.minimum(nxt, n - 1)
    closer = np.where((nxt < n) & (pid[safe] == pid), nxt, -1)
    # P2: a marker of an epoch below the data it closes, one violation per marker naming the
    # highest epoch of that data
    low = np.flatnonzero(~ctrl & (closer >= 0))
    low = low[epoch[closer[low]] < epoch[low]]
    if len(low):
        names = take("txn_id", low).to_pylist()
        above: dict[int, list[int]] = {}
        for k, i in enumerate(low.tolist()):
            above.setdefault(int(closer[i]), []).append(k)
        for m, ks in sorted(above.items()):
            got = [names[k] for k in ks if names[k] is not None]
            top = max(epoch[low[ks]])
            at(m, "P2", "MARKER_EPOCH_BELOW_DATA", f"{take('control', np.array([m]))[0].as_py()} marker of epoch {_d(epoch[m])} closes data of epoch {_d(top)}",
               txn_id=max(got) if got else None)  # fmt: skip
    if violations:
        out.append(pa.Table.from_pylist(violations, schema=SCHEMA))
    # the markers: a partition has as many as transactions, taken as whole columns
    mk = np.flatnonzero(ctrl)
    if len(mk):
        out.append(_table(len(mk), {"rec": "marker", **where, "producer_id": pid[mk], "offset": off[mk], "event": take("event", mk), "ts_ms": take("ts_ms", mk),
                                    "txn_id": take("txn_id", mk), "kind": take("control", mk), "epoch": take("producer_epoch", mk)}))  # fmt: skip
    # per producer, where its data with no closing marker begins (P5)
    open_ = np.flatnonzero(~ctrl & txn & (closer < 0))
    if len(open_):
        first = (
            idem.select(["producer_id", "base_offset", "event", "ts_ms", "txn_id"])
            .take(pa.array(order[open_]))
            .group_by("producer_id", use_threads=False)
            .aggregate([("base_offset", "min"), ("event", "min"), ("ts_ms", "min"), ("txn_id", "first")])
        )
        cols = {"producer_id": "producer_id", "offset": "base_offset_min", "event": "event_min", "ts_ms": "ts_ms_min", "txn_id": "txn_id_first"}
        out.append(_table(first.num_rows, {"rec": "open", **where, **{k: first.column(v) for k, v in cols.items()}}))
    # per producer, what the entity counts need
    starts = np.flatnonzero(start)
    data = ~ctrl
    with_epoch = data & ~np.isnan(epoch)
    distinct = np.unique(gid[with_epoch] * _SPAN + epoch[with_epoch].astype(np.int64) + 2)
    n_epochs = np.bincount(distinct // _SPAN, minlength=len(starts))
    out.append(_table(len(starts), {"rec": "key", **where, "producer_id": pid[starts], "n_epochs": n_epochs,
                                    "has_data": np.add.reduceat(data.astype(np.int64), starts) > 0,
                                    "has_txn": np.add.reduceat((data & txn).astype(np.int64), starts) > 0,
                                    "has_markers": np.add.reduceat(ctrl.astype(np.int64), starts) > 0}))  # fmt: skip
    return out


def _c1(entries: pa.Table, reads: pa.Table, where: dict[str, Any]) -> pa.Table:
    """C1: the partition's read_committed fetches replayed against its log (partition_pass.sweep_arrays),
    or by the loop when the log is not one the arrays can replay."""
    ent = entries.filter(pc.is_valid(entries.column("event")))
    found = None
    if pc.all(pc.is_valid(ent.column("base_offset"))).as_py() is not False and pc.all(pc.is_valid(ent.column("producer_id"))).as_py() is not False:
        found = _c1_arrays(ent, reads)
    if found is None:
        frame = sweep_partition(c1_frame(entries.to_pandas(), reads.to_pandas()))
        found = frame[["event", "offset", "kind", "detail"]].to_dict("records")
        for r in found:
            r["offset"] = None if r["offset"] != r["offset"] or r["offset"] is None else int(r["offset"])
    return _table(len(found), {"rec": "violation", "check": "C1", **where, "event": [r["event"] for r in found],
                               "offset": [r["offset"] for r in found], "kind": [r["kind"] for r in found], "detail": [r["detail"] for r in found]})  # fmt: skip


def _c1_arrays(ent: pa.Table, reads: pa.Table) -> list[dict[str, Any]] | None:
    ctrl = _flag(ent.column("is_control"))
    control = ent.column("control")
    is_commit = _flag(pc.equal(control, "COMMIT"))
    if not bool((is_commit | _flag(pc.equal(control, "ABORT")))[ctrl].all()):
        return None
    base = _i64(ent.column("base_offset"), 0)
    last = _i64(pc.coalesce(ent.column("last_offset"), ent.column("base_offset")), 0)
    span = np.where(ctrl, 1, np.maximum(last - base + 1, 1))
    rows = np.repeat(np.arange(len(base)), span)
    within = np.arange(len(rows)) - np.repeat(np.cumsum(span) - span, span)
    ev = _i64(ent.column("event"), 0)[rows]
    off = base[rows] + within
    order = np.lexsort((off, ev))
    rows = rows[order]
    log = Log(
        event=ev[order],
        offset=off[order],
        producer=_i64(ent.column("producer_id"), -1)[rows],
        control=ctrl[rows],
        txn=_flag(ent.column("is_txn"))[rows],
        commit=(ctrl & is_commit)[rows],
    )
    r_ev = _i64(reads.column("event"), 0)
    r_has = _flag(pc.is_valid(reads.column("base_offset")))
    r_off = _i64(reads.column("base_offset"), 0)
    # each fetch's last row (nulls first, then by offset) says where it started and what it reported
    by = np.lexsort((r_off, r_has, r_ev))
    last_of = by[np.r_[r_ev[by][1:] != r_ev[by][:-1], True]]
    return sweep_arrays(
        log,
        Fetches(
            event=r_ev[last_of],
            start=_f64(reads.column("from_offset"))[last_of],
            end=_f64(reads.column("to_offset"))[last_of],
            lso=_f64(reads.column("lso"))[last_of],
            got_event=r_ev[r_has],
            got_offset=r_off[r_has],
        ),
    )


__all__ = ["SCHEMA", "check_partition", "run_pass"]
