"""A vectorised generator of valid Kafka-shaped logs, written directly as the staged tables.

``generate(root, events, seed)`` writes ``root/entries``, ``root/txn_log`` and ``root/reads`` as
Parquet in the layout a replay stages (spark_replay.staging.Stager), so the checks read them as
they read any input (``spark_replay.staged.run_checks``). Everything is computed with numpy on
whole arrays (no loop over events), one trace at a time (``TRACE_EVENTS`` rows each, so memory
is bounded by a trace, not by the whole set); the same seed gives the same files.

What a trace holds (docs/benchmarks.md, "Replay at scale"):
- many transactional producers (one producer id each, epochs bumped now and then by a new
  InitProducerId, which logs an ``Empty`` record), each running transactions one after the other;
  the producers' events are interleaved at random;
- each transaction writes 1 to 3 partitions (of 4 topics of 16 partitions), 1 to 4 batches each,
  one record per batch, sequences per (partition, producer, epoch) from 0; it is committed (80%)
  or aborted, with a marker on every partition it wrote; ``__transaction_state`` has its
  ``Ongoing`` (with its partitions), ``PrepareCommit``/``PrepareAbort`` and
  ``CompleteCommit``/``CompleteAbort`` records; a few producers end with a transaction still open
  (its ``Ongoing`` record is the last one);
- markers carry the coordinator epoch of the producer's coordinator, which grows with failovers;
- a read_committed consumer per partition polls at random times from where it stopped, and gets
  every committed record below the last stable offset (LSO), which it is told.

With ``plants=True`` the first trace also holds one violation of each kind below, each on its own
producer, and ``generate`` returns where each is (``Plant``): the exact row the check must flag.

====== ======================== ==============================================================
check  kind                     planted as
====== ======================== ==============================================================
P1     DUPLICATE                the last batch of a (partition, producer, epoch) repeats the
                                sequence of the one before it
P2     STALE_EPOCH_DATA         a batch of a transaction carries the epoch before the one its
                                earlier batch on that partition carried
P3     COORDINATOR_EPOCH_BACK   a marker's coordinator epoch is one below the previous marker's
P4     MARKER_AGAINST_DECISION  a marker says the opposite of its transaction's Prepare record
P4     MARKER_MISSING           a completed transaction's marker on one partition is not written
P5     HANGING                  a late batch lands after the producer's last transaction completed
P7     ILLEGAL_TRANSITION       a committed transaction's Complete record says CompleteAbort
C1     DIRTY_READ               a fetch also returns the first record of an open transaction
====== ======================== ==============================================================

The logs stay consistent around a plant: sequences, offsets, fates and fetches are computed from
the log as planted (a flipped marker decides its batches in the log, a missing marker leaves them
to the producer's next marker on that partition), so each plant is one violation, and only that.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pyarrow as pa

from spark_replay.staging import Stager
from spark_replay.tables import PARTITION, TABLES

TOPICS = ("orders", "payments", "shipments", "audit")
PARTITIONS_PER_TOPIC = 16
LOG_PARTITIONS = 50  # __transaction_state partitions (Kafka's default)
TRACE_EVENTS = 4_000_000  # rows per trace: the unit of generation (and of memory)
ROWS_PER_FILE = 1_000_000
T0_MS = 1_700_000_000_000
PRODUCER_ID_BASE = 1 << 40  # producer ids above 2^31: int64 on every path

# Per transaction: chance of an epoch bump before it, of a commit; per producer: of ending open.
BUMP_P = 0.05
COMMIT_P = 0.8
OPEN_END_P = 0.05
TXNS_PER_PRODUCER = 40
FETCHES_PER_TXN = 0.5
ROWS_PER_TXN = 14.0  # measured mean over all tables, to size a trace

# The events of a producer, in its order.
EMPTY, ONGOING, DATA, PREPARE, MARKER, COMPLETE = range(6)
STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort")
COMMIT, ABORT = 1, 2  # a marker's control (0: a data batch)

# (trace_id, topic, partition, producer_id, offset, event): the columns of a violation that place it.
Key = tuple[str | None, str | None, int | None, int | None, int | None, int | None]


@attrs.frozen
class Plant:
    check: str
    kind: str
    key: Key
    what: str


@attrs.define
class Generated:
    root: Path
    rows: dict[str, int]
    plants: list[Plant]
    traces: int

    @property
    def events(self) -> int:
        return sum(self.rows.values())


def violation_key(v: dict[str, Any]) -> Key:
    """The key of a violation row (spark_replay.checks.VIOLATION_COLUMNS), comparable with Plant.key."""

    def opt(name: str) -> int | None:
        x = v.get(name)
        return None if x is None else int(x)

    return (v.get("trace_id"), v.get("topic"), opt("partition"), opt("producer_id"), opt("offset"), opt("event"))


def generate(root: Path, events: int, seed: int = 0, plants: bool = True, trace_events: int = TRACE_EVENTS) -> Generated:
    """Write about ``events`` rows (entries, txn_log and reads together) under ``root`` as staged
    tables, in traces of about ``trace_events`` rows; return what was written and planted."""
    n_traces = max(1, math.ceil(events / trace_events))
    stager = Stager(root)
    planted: list[Plant] = []
    for i in range(n_traces):
        rng = np.random.default_rng([seed, i])
        trace_id = f"generated-{seed}-{i:04d}"
        tables, p = _trace(rng, events // n_traces, trace_id, plants and i == 0)
        for name, table in tables.items():
            for start in range(0, table.num_rows, ROWS_PER_FILE):
                stager.write(name, table.slice(start, ROWS_PER_FILE))
        planted += p
    return Generated(root, {k: v for k, v in stager.rows.items() if v}, planted, n_traces)


# --- array helpers ------------------------------------------------------------------------------


def _starts(sorted_keys: np.ndarray) -> np.ndarray:
    """Whether each element of a sorted key array starts a new group."""
    first = np.ones(len(sorted_keys), dtype=bool)
    first[1:] = sorted_keys[1:] != sorted_keys[:-1]
    return first


def _cumcount(sorted_keys: np.ndarray) -> np.ndarray:
    """Each element's index within its group of a sorted key array."""
    idx = np.arange(len(sorted_keys))
    first = _starts(sorted_keys)
    return idx - np.maximum.accumulate(np.where(first, idx, 0))


def _group_cumsum(x: np.ndarray, sorted_groups: np.ndarray) -> np.ndarray:
    """Inclusive cumulative sum of ``x`` within each group (groups contiguous)."""
    cs = np.cumsum(x)
    idx = np.arange(len(x))
    first = np.maximum.accumulate(np.where(_starts(sorted_groups), idx, 0))
    sums: np.ndarray = cs - (cs[first] - x[first])
    return sums


def _strings(indices: np.ndarray, values: list[str], mask: np.ndarray | None = None) -> pa.Array:
    return pa.DictionaryArray.from_arrays(
        pa.array(indices.astype(np.int32), mask=mask), pa.array(values, pa.string())
    ).cast(pa.string())


def _const(n: int, value: str) -> pa.Array:
    return _strings(np.zeros(n, dtype=np.int32), [value])


def _table(name: str, cols: dict[str, Any], n: int) -> pa.Table:
    schema = TABLES[name]
    arrays = []
    for f in schema:
        v = cols.get(f.name)
        if v is None:
            arrays.append(pa.nulls(n, f.type))
        elif isinstance(v, pa.Array):
            arrays.append(v.cast(f.type) if v.type != f.type else v)
        else:
            arrays.append(pa.array(v, f.type))
    return pa.Table.from_arrays(arrays, schema=schema)


# --- one trace ----------------------------------------------------------------------------------


def _trace(rng: np.random.Generator, size: int, trace_id: str, plant: bool) -> tuple[dict[str, pa.Table], list[Plant]]:
    P = len(TOPICS) * PARTITIONS_PER_TOPIC
    n_txn_target = max(400, round(size / ROWS_PER_TXN))
    n_prod = max(10, n_txn_target // TXNS_PER_PRODUCER)
    T = max(3, n_txn_target // n_prod)
    n_txn = n_prod * T
    pids = PRODUCER_ID_BASE + np.arange(n_prod, dtype=np.int64) * 7
    txn_ids = [f"txn-{i}" for i in range(n_prod)]
    log_part = np.arange(n_prod) % LOG_PARTITIONS

    # -- transactions (producer-major: a producer's transactions are contiguous, in order)
    tprod = np.repeat(np.arange(n_prod), T)
    tj = np.tile(np.arange(T), n_prod)
    k = rng.integers(1, 4, n_txn)
    bump = (tj == 0) | (rng.random(n_txn) < BUMP_P)
    epoch = _group_cumsum(bump.astype(np.int64), tprod) - 1
    commit = rng.random(n_txn) < COMMIT_P
    is_open = (tj == T - 1) & (rng.random(n_txn) < OPEN_END_P)
    closed = ~is_open

    # -- the partitions each writes (k distinct ones), and its batches on each
    slot_txn = np.repeat(np.arange(n_txn), k)
    n_slots = len(slot_txn)
    slot_start = np.cumsum(k) - k
    slot_i = np.arange(n_slots) - slot_start[slot_txn]
    first_part = rng.integers(0, P, n_txn)
    stride = rng.integers(1, P // 3, n_txn)
    slot_part = (first_part[slot_txn] + slot_i * stride[slot_txn]) % P
    b = rng.integers(1, 5, n_slots)
    D = np.bincount(slot_txn, weights=b, minlength=n_txn).astype(np.int64)

    # -- each producer's events: [Empty] Ongoing data... [Prepare markers... Complete]
    c = bump + 1 + D + closed * (2 + k)
    ev_txn = np.repeat(np.arange(n_txn), c)
    pos = np.arange(len(ev_txn)) - np.repeat(np.cumsum(c) - c, c)
    bb, DD, kk = bump[ev_txn].astype(np.int64), D[ev_txn], k[ev_txn]
    kind = np.select(
        [pos < bb, pos == bb, pos < bb + 1 + DD, pos == bb + 1 + DD, pos < bb + 2 + DD + kk],
        [EMPTY, ONGOING, DATA, PREPARE, MARKER],
        COMPLETE,
    )
    ev_prod = tprod[ev_txn]
    # a producer's clock: exponential gaps from a random start; all producers interleave
    local = _group_cumsum(rng.exponential(1.0, len(ev_txn)), ev_prod) + rng.uniform(0, 5, n_prod)[ev_prod]

    # data rows, in event order = slot order within each transaction
    is_data = kind == DATA
    d_txn = ev_txn[is_data]
    d_slot = np.repeat(np.arange(n_slots), b)
    d_in_slot = np.arange(len(d_slot)) - np.repeat(np.cumsum(b) - b, b)
    d_time = local[is_data]
    d_part = slot_part[d_slot]
    d_prod = tprod[d_txn]
    d_epoch = epoch[d_txn]
    # marker rows: one per slot of a closed transaction
    m_slot = np.flatnonzero(closed[slot_txn])
    m_txn = slot_txn[m_slot]
    m_time = local[kind == MARKER]
    m_part = slot_part[m_slot]
    m_prod = tprod[m_txn]
    m_epoch = epoch[m_txn]
    m_control = np.where(commit[m_txn], COMMIT, ABORT)
    # transaction-log records
    is_rec = (kind == EMPTY) | (kind == ONGOING) | (kind == PREPARE) | (kind == COMPLETE)
    r_txn = ev_txn[is_rec]
    r_kind = kind[is_rec]
    r_time = local[is_rec]
    r_prod = tprod[r_txn]
    r_state = np.select(
        [r_kind == EMPTY, r_kind == ONGOING, r_kind == PREPARE, r_kind == COMPLETE],
        [0, 1, np.where(commit[r_txn], 2, 3), np.where(commit[r_txn], 4, 5)],
    )
    r_epoch = epoch[r_txn]

    used: set[int] = set()
    plants: list[tuple[str, str, str, int]] = []  # (check, kind, what, where) resolved to keys below

    def pick(candidates: np.ndarray, prod_of: np.ndarray) -> int:
        """A random candidate index whose producer no other plant uses."""
        ok = candidates[~np.isin(prod_of[candidates], list(used))] if used else candidates
        if len(ok) == 0:
            raise ValueError(f"{trace_id}: too small to plant every violation; generate more events")
        i = int(ok[rng.integers(len(ok))])
        used.add(int(prod_of[i]))
        return i

    # P5 HANGING: a late batch of a producer whose last transaction completed lands after it
    late = np.zeros(0, dtype=np.int64)
    if plant:
        last_txn = np.flatnonzero(tj == T - 1)
        h_txn = last_txn[pick(np.flatnonzero(closed[last_txn]), tprod[last_txn])]
        h_prod = int(tprod[h_txn])
        d_txn = np.append(d_txn, h_txn)
        d_slot = np.append(d_slot, slot_start[h_txn])
        d_in_slot = np.append(d_in_slot, 99)
        d_time = np.append(d_time, local[ev_prod == h_prod].max() + 0.5)
        d_part = np.append(d_part, slot_part[slot_start[h_txn]])
        d_prod = np.append(d_prod, h_prod)
        d_epoch = np.append(d_epoch, epoch[h_txn])
        late = np.array([len(d_txn) - 1])

    # fetches: a read_committed consumer per partition polls at random times
    n_fetch = max(P, round(FETCHES_PER_TXN * n_txn))
    f_time = rng.uniform(0, local.max() + 1, n_fetch)
    f_part = rng.integers(0, P, n_fetch)

    # one clock for the trace: every event gets its number (1, 2, ...)
    times = np.concatenate([d_time, m_time, r_time, f_time])
    event = np.empty(len(times), dtype=np.int64)
    event[np.argsort(times, kind="stable")] = np.arange(1, len(times) + 1)
    nd, nm, nr = len(d_time), len(m_time), len(r_time)
    d_event, m_event, r_event, f_event = np.split(event, [nd, nd + nm, nd + nm + nr])

    # __transaction_state offsets: per log partition, in event order
    r_lp = log_part[r_prod]
    order = np.lexsort((r_event, r_lp))
    r_log_offset = np.empty(nr, dtype=np.int64)
    r_log_offset[order] = _cumcount(r_lp[order])

    keep_marker = np.ones(nm, dtype=bool)
    if plant:
        # P4 MARKER_MISSING: a completed transaction's marker on a partition the producer writes
        # again later (so its next marker there closes the data: no hanging transaction)
        cs = np.lexsort((m_txn, m_part, m_prod))
        same_next = np.zeros(nm, dtype=bool)
        same_next[cs[:-1]] = (m_prod[cs[:-1]] == m_prod[cs[1:]]) & (m_part[cs[:-1]] == m_part[cs[1:]])
        i = pick(np.flatnonzero(same_next), m_prod)
        keep_marker[i] = False
        prep = np.flatnonzero((r_txn == m_txn[i]) & (r_kind == PREPARE))[0]
        plants.append(("P4", "MARKER_MISSING", f"prepare:{prep}:{m_part[i]}", 0))
        # P2 STALE_EPOCH_DATA: a batch after the first of its slot carries the epoch before
        i = pick(np.flatnonzero((d_in_slot >= 1) & (d_in_slot < 99) & (d_epoch >= 1)), d_prod)
        d_epoch[i] -= 1
        plants.append(("P2", "STALE_EPOCH_DATA", "data", i))
    m_txn, m_part, m_prod = m_txn[keep_marker], m_part[keep_marker], m_prod[keep_marker]
    m_epoch, m_control, m_event = m_epoch[keep_marker], m_control[keep_marker], m_event[keep_marker]
    nm = len(m_txn)

    # -- the partition logs: data and markers, offsets per partition in event order
    e_part = np.concatenate([d_part, m_part])
    e_prod = np.concatenate([d_prod, m_prod])
    e_epoch = np.concatenate([d_epoch, m_epoch])
    e_event = np.concatenate([d_event, m_event])
    e_control = np.concatenate([np.zeros(nd, dtype=np.int64), m_control])
    n = len(e_part)
    by_log = np.lexsort((e_event, e_part))
    e_offset = np.empty(n, dtype=np.int64)
    e_offset[by_log] = _cumcount(e_part[by_log])
    is_ctrl = e_control > 0

    # sequences per (partition, producer, epoch), in offset order
    e_seq = np.full(n, -1, dtype=np.int64)
    di = np.flatnonzero(~is_ctrl)
    so = di[np.lexsort((e_offset[di], e_epoch[di], e_prod[di], e_part[di]))]
    group = (e_part[so] * n_prod + e_prod[so]) * (int(e_epoch.max()) + 2) + e_epoch[so]
    e_seq[so] = _cumcount(group)
    # coordinator epochs: each coordinator (log partition) fails over about four times a trace
    lp = log_part[e_prod]
    period = max(1, int(event.max()) // 4)
    phase = rng.integers(0, period, LOG_PARTITIONS)
    e_coord = np.where(is_ctrl, 5 + (e_event + phase[lp]) // period, -1)

    if plant:
        # P1 DUPLICATE: the last batch of a (partition, producer, epoch) repeats the sequence before
        last_of_group = np.zeros(n, dtype=bool)
        gl = np.ones(len(so), dtype=bool)
        gl[:-1] = group[1:] != group[:-1]
        last_of_group[so[gl]] = True
        i = pick(np.flatnonzero(last_of_group & (e_seq >= 1)), e_prod)
        e_seq[i] -= 1
        plants.append(("P1", "DUPLICATE", "entry", i))
        # P3 COORDINATOR_EPOCH_BACK: a marker one coordinator epoch below the marker before it
        mi = np.flatnonzero(is_ctrl)
        ms = mi[np.lexsort((e_offset[mi], e_prod[mi], e_part[mi]))]
        has_prev = np.zeros(len(ms), dtype=bool)
        has_prev[1:] = (e_part[ms[1:]] == e_part[ms[:-1]]) & (e_prod[ms[1:]] == e_prod[ms[:-1]])
        prev_of = np.full(n, -1)
        prev_of[ms[1:]] = ms[:-1]
        i = pick(ms[has_prev], e_prod)
        e_coord[i] = e_coord[prev_of[i]] - 1
        plants.append(("P3", "COORDINATOR_EPOCH_BACK", "entry", i))
        # P4 MARKER_AGAINST_DECISION: the marker says the opposite (the log follows the marker)
        i = pick(mi, e_prod)
        e_control[i] = COMMIT + ABORT - e_control[i]
        plants.append(("P4", "MARKER_AGAINST_DECISION", "entry", i))
        if len(late):
            plants.append(("P5", "HANGING", "entry", int(late[0])))  # data rows come first in e_*

    # -- fates, as the checks derive them: a data batch is closed by its producer's next marker on
    # its partition; its run (the producer's data between two markers) is open until then
    so = np.lexsort((e_offset, e_prod, e_part))
    g = e_part[so] * n_prod + e_prod[so]
    ctrl_s = is_ctrl[so]
    idx = np.arange(n)
    nxt = np.minimum.accumulate(np.where(ctrl_s, idx, n)[::-1])[::-1]
    nxt_c = np.minimum(nxt, n - 1)
    closed_by = (nxt < n) & (g[nxt_c] == g)
    fate_s = np.where(closed_by, e_control[so][nxt_c], 0)
    close_s = np.where(closed_by, e_offset[so][nxt_c], -1)
    data_s = ~ctrl_s
    run_first = data_s & (_starts(g) | np.concatenate([[False], ctrl_s[:-1]]))
    BIG = int(e_offset.max()) + 2
    ru_part = e_part[so][run_first]
    ru_first = e_offset[so][run_first]
    ru_close = np.where(close_s[run_first] < 0, BIG - 1, close_s[run_first])
    ro = np.lexsort((ru_first, ru_part))
    ru_key = ru_part[ro] * BIG + ru_first[ro]
    ru_pm = np.maximum.accumulate(ru_part[ro] * BIG + ru_close[ro])
    ru_first_s = ru_first[ro]

    # -- fetches: the log end and LSO each saw, from where its consumer stopped before
    fo = np.lexsort((f_event, f_part))
    f_event, f_part = f_event[fo], f_part[fo]
    ekey = np.sort(e_part * (int(event.max()) + 1) + e_event)
    part_start = np.searchsorted(np.sort(e_part), np.arange(P))
    log_end = np.searchsorted(ekey, f_part * (int(event.max()) + 1) + f_event) - part_start[f_part]
    target = f_part * BIG + log_end
    hi = np.searchsorted(ru_key, target, "left")
    r_star = np.searchsorted(ru_pm, target, "left")
    lso = np.where(r_star < hi, ru_first_s[np.minimum(r_star, len(ru_first_s) - 1)], log_end)
    f_from = np.zeros(n_fetch, dtype=np.int64)
    f_from[1:] = np.where(f_part[1:] == f_part[:-1], lso[:-1], 0)
    # each committed record is returned by the first fetch of its partition whose LSO is above it
    committed = data_s & (fate_s == COMMIT)
    c_part = e_part[so][committed]
    c_off = e_offset[so][committed]
    reader = np.searchsorted(f_part * BIG + lso, c_part * BIG + c_off, "right")
    read = reader < n_fetch
    read[read] = f_part[reader[read]] == c_part[read]
    rd_fetch, rd_offset = reader[read], c_off[read]
    got = np.bincount(rd_fetch, minlength=n_fetch)
    empty = np.flatnonzero(got == 0)
    rd_fetch = np.concatenate([rd_fetch, empty])
    rd_offset_opt: np.ndarray = np.concatenate([rd_offset, np.full(len(empty), -1)])
    if plant:
        # C1 DIRTY_READ: a fetch also returns the record at its LSO, the first of an open transaction
        i = int(rng.choice(np.flatnonzero(lso < log_end)))
        rd_fetch = np.append(rd_fetch, i)
        rd_offset_opt = np.append(rd_offset_opt, lso[i])
        plants.append(("C1", "DIRTY_READ", "read", len(rd_fetch) - 1))
        # P7 ILLEGAL_TRANSITION: PrepareCommit -> CompleteAbort
        ri = pick(np.flatnonzero(r_state == 4), r_prod)
        r_state[ri] = 5
        plants.append(("P7", "ILLEGAL_TRANSITION", "record", ri))

    # -- the tables
    topic_of = np.arange(P) // PARTITIONS_PER_TOPIC
    part_in_topic = (np.arange(P) % PARTITIONS_PER_TOPIC).astype(np.int32)
    eo = np.lexsort((e_offset, e_part))  # a partition's log in offset order
    entries = _table(
        "entries",
        {
            "source": _const(n, "generated"),
            "trace_id": _const(n, trace_id),
            "topic": _strings(topic_of[e_part[eo]], list(TOPICS)),
            "partition": part_in_topic[e_part[eo]],
            "base_offset": e_offset[eo],
            "last_offset": e_offset[eo],
            "producer_id": pids[e_prod[eo]],
            "producer_epoch": e_epoch[eo].astype(np.int32),
            "base_seq": e_seq[eo].astype(np.int32),
            "last_seq": e_seq[eo].astype(np.int32),
            "is_txn": np.ones(n, dtype=bool),
            "is_control": is_ctrl[eo],
            "control": _strings(np.maximum(e_control[eo] - 1, 0), ["COMMIT", "ABORT"], mask=~is_ctrl[eo]),
            "coord_epoch": pa.array(e_coord[eo].astype(np.int32), mask=~is_ctrl[eo]),
            "ts_ms": T0_MS + e_event[eo],
            "event": e_event[eo],
            "txn_id": _strings(e_prod[eo], txn_ids),
        },
        n,
    )
    # txn_log: Ongoing and Prepare records name the transaction's partitions
    names = (r_kind == ONGOING) | (r_kind == PREPARE)
    r_count = np.where(names, k[r_txn], 0)
    offsets = np.concatenate([[0], np.cumsum(r_count)]).astype(np.int32)
    val_slot = np.repeat(slot_start[r_txn], r_count) + (np.arange(offsets[-1]) - np.repeat(offsets[:-1], r_count))
    tp = pa.StructArray.from_arrays(
        [_strings(topic_of[slot_part[val_slot]], list(TOPICS)), pa.array(part_in_topic[slot_part[val_slot]])],
        fields=list(PARTITION),
    )
    log_order = np.lexsort((r_log_offset, r_lp))
    partitions = pa.ListArray.from_arrays(pa.array(offsets), tp)
    txn_log = _table(
        "txn_log",
        {
            "source": _const(nr, "generated"),
            "trace_id": _const(nr, trace_id),
            "log_partition": r_lp.astype(np.int32),
            "log_offset": r_log_offset,
            "ts_ms": T0_MS + r_event,
            "txn_id": _strings(r_prod, txn_ids),
            "producer_id": pids[r_prod],
            "epoch": r_epoch.astype(np.int32),
            "state": _strings(r_state, list(STATES)),
            "partitions": partitions,
            "timeout_ms": np.full(nr, 60_000, dtype=np.int64),
            "tv": np.ones(nr, dtype=np.int32),
            "event": r_event,
        },
        nr,
    ).take(pa.array(log_order))
    nrd = len(rd_fetch)
    rdo = np.lexsort((rd_offset_opt, rd_fetch))
    rf = rd_fetch[rdo]
    reads = _table(
        "reads",
        {
            "source": _const(nrd, "generated"),
            "trace_id": _const(nrd, trace_id),
            "process": _strings(f_part[rf], [f"consumer-{p}" for p in range(P)]),
            "op_index": rf.astype(np.int64),
            "time": T0_MS + f_event[rf],
            "isolation": _const(nrd, "read_committed"),
            "topic": _strings(topic_of[f_part[rf]], list(TOPICS)),
            "partition": part_in_topic[f_part[rf]],
            "from_offset": f_from[rf],
            "offset": pa.array(rd_offset_opt[rdo], mask=rd_offset_opt[rdo] < 0),
            "lso": lso[rf],
            "event": f_event[rf],
            "read_index": _cumcount(rf).astype(np.int64),  # a fetch returns its records in offset order
        },
        nrd,
    )

    # -- where each plant is, as the check reports it
    out: list[Plant] = []
    for check, kind_, where, i in plants:
        key: Key
        if where == "entry" or where == "data":
            p = int(e_part[i])
            key = (trace_id, TOPICS[topic_of[p]], int(part_in_topic[p]), int(pids[e_prod[i]]), int(e_offset[i]), int(e_event[i]))
        elif where.startswith("prepare:"):
            _, prep_s, part_s = where.split(":")
            prep, p = int(prep_s), int(part_s)
            key = (trace_id, TOPICS[topic_of[p]], int(part_in_topic[p]), int(pids[r_prod[prep]]), None, int(r_event[prep]))
        elif where == "read":
            fi = int(rd_fetch[i])
            p = int(f_part[fi])
            key = (trace_id, TOPICS[topic_of[p]], int(part_in_topic[p]), None, int(rd_offset_opt[i]), int(f_event[fi]))
        else:  # a transaction-log record
            key = (trace_id, None, None, int(pids[r_prod[i]]), int(r_log_offset[i]), int(r_event[i]))
        out.append(Plant(check, kind_, key, _WHAT[kind_]))
    out.sort(key=lambda p: (p.check, p.kind))
    return {"entries": entries, "txn_log": txn_log, "reads": reads}, out


_WHAT = {
    "DUPLICATE": "a batch repeats the sequence of the one before it",
    "STALE_EPOCH_DATA": "a batch carries the epoch before its predecessor's on the partition",
    "COORDINATOR_EPOCH_BACK": "a marker's coordinator epoch is one below the previous marker's",
    "MARKER_AGAINST_DECISION": "a marker says the opposite of the transaction's Prepare",
    "MARKER_MISSING": "a completed transaction has no marker on one of its partitions",
    "HANGING": "a late batch lands after the producer's last transaction completed",
    "ILLEGAL_TRANSITION": "PrepareCommit followed by CompleteAbort",
    "DIRTY_READ": "a fetch returns the first record of an open transaction",
}
