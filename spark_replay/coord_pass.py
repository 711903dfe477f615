"""The coordinator pass: every transactional id's records of ``__transaction_state`` (the staged
``txn_log``) checked in one shuffle and one sort, on Arrow record batches with NumPy on whole
columns (``mapInArrow``), for the three checks that read them in an order of their own:

- P7, the coordinator's state machine: each record against the one before it of the same
  transactional id, by log offset (``ILLEGAL_TRANSITION``, ``FIRST_NOT_EMPTY``, ``EPOCH_BACK``);
- P4, atomicity: each PrepareCommit/PrepareAbort with the time of its producer's next Prepare (the
  window its markers must fall in: ``prepare`` rows);
- P5, hanging transactions: each producer's last record, by time then log offset (``latest`` rows).

The rows are partitioned by (trace, transactional id) and sorted by log offset within it, so every
record of a transactional id is in one contiguous run of one partition; a run that straddles two
record batches is carried over to the next. P4's and P5's windows are per producer id: Kafka gives
a producer id to one transactional id (its coordinator allocates it, ``ProducerIdManager``), so
a producer's records are all in its transactional id's run, where they are ordered by (producer
id, time, log offset) with NumPy. One ``group`` row per transactional id gives P7's entity count.

The windows plan (``--plan windows``, spark_replay/checks/log.py: a Spark window per check) is the
oracle: tests/test_replay_plans.py compares the two row by row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ref_impl.kafka.states import VALID_PREVIOUS
from spark_replay.tables import TXN_LOG

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

INPUT_COLUMNS = ("source", "trace_id", "txn_id", "log_offset", "ts_ms", "producer_id", "epoch", "state", "partitions", "event")
PARTITIONS = TXN_LOG.field("partitions").type
OUTPUT_SCHEMA = pa.schema(
    [
        ("rec", pa.string()),  # violation (P7), prepare (P4), latest (P5), group (one per transactional id)
        ("check", pa.string()),
        ("kind", pa.string()),
        ("trace_id", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("producer_id", pa.int64()),
        ("offset", pa.int64()),
        ("event", pa.int64()),
        ("ts_ms", pa.int64()),
        ("txn_id", pa.string()),
        ("detail", pa.string()),
        ("until", pa.int64()),  # prepare: the time of the producer's next Prepare (null: none)
        ("expected", pa.string()),  # prepare: COMMIT or ABORT
        ("state", pa.string()),  # latest: the producer's last state (null for a tombstone)
        ("partitions", PARTITIONS),  # prepare, latest: the partitions the record names
    ]
)
PREPARES = {"PrepareCommit": "COMMIT", "PrepareAbort": "ABORT"}
# The states Kafka knows, numbered; an unknown one takes the last number, from which no step is legal.
STATES = sorted({s for new, olds in VALID_PREVIOUS.items() for s in (new, *olds)})
UNKNOWN = len(STATES)
LEGAL = np.zeros((UNKNOWN + 1, UNKNOWN + 1), dtype=bool)
for _new, _olds in VALID_PREVIOUS.items():
    for _old in _olds:
        LEGAL[STATES.index(_old), STATES.index(_new)] = True
_NULL_KEY = "\x00null"  # a null trace or transactional id, as one group (Spark's partitioning puts nulls together)


def run_coord_pass(t: Any) -> DataFrame:
    """The pass's rows (OUTPUT_SCHEMA) for the staged tables ``t``; not cached here."""
    from pyspark.sql.pandas.types import from_arrow_schema

    log = t.txn_log.select(*INPUT_COLUMNS)
    rows: DataFrame = log.repartition("trace_id", "txn_id").sortWithinPartitions("trace_id", "txn_id", "log_offset").mapInArrow(
        check_batches, from_arrow_schema(OUTPUT_SCHEMA)
    )
    return rows


def check_batches(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow's function: the rows of every transactional id whose run is complete, batch by
    batch; the last run of a batch waits for the next (it may go on there)."""
    carry: pa.Table | None = None
    for b in batches:
        t = pa.Table.from_batches([b]) if carry is None else pa.concat_tables([carry, pa.Table.from_batches([b])])
        if t.num_rows == 0:
            continue
        starts = _run_starts(t)
        last = int(starts[-1])
        carry = t.slice(last)
        if last:
            yield from check_runs(t.slice(0, last)).to_batches()
    if carry is not None and carry.num_rows:
        yield from check_runs(carry).to_batches()


def _keys(t: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    def key(name: str) -> np.ndarray:
        return np.asarray(pc.fill_null(t[name], _NULL_KEY).to_numpy(zero_copy_only=False), dtype=object)

    return key("trace_id"), key("txn_id")


def _run_starts(t: pa.Table) -> np.ndarray:
    """The first row of each transactional id's run (rows sorted by trace and transactional id)."""
    trace, txn = _keys(t)
    change = np.ones(t.num_rows, dtype=bool)
    change[1:] = (trace[1:] != trace[:-1]) | (txn[1:] != txn[:-1])
    return np.flatnonzero(change)


def _i64(col: Any) -> tuple[np.ndarray, np.ndarray]:
    """A column as int64 (null as 0) and its null mask."""
    arr = pc.cast(col, pa.int64())
    null = np.asarray(pc.is_null(arr).to_numpy(zero_copy_only=False), dtype=bool)
    return np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False), dtype=np.int64), null


def check_runs(t: pa.Table) -> pa.Table:
    """The rows of complete runs of transactional ids (sorted by trace, transactional id, log offset)."""
    n = t.num_rows
    starts = _run_starts(t)
    mark = np.zeros(n, dtype=np.int64)
    mark[starts] = 1
    group = np.cumsum(mark) - 1
    lo, lo_null = _i64(t["log_offset"])
    ts, ts_null = _i64(t["ts_ms"])
    pid, pid_null = _i64(t["producer_id"])
    epoch, epoch_null = _i64(t["epoch"])
    state_null = np.asarray(pc.is_null(t["state"]).to_numpy(zero_copy_only=False), dtype=bool)
    code = np.asarray(pc.fill_null(pc.index_in(t["state"], value_set=pa.array(STATES)), UNKNOWN).to_numpy(zero_copy_only=False), dtype=np.int64)
    parts: list[pa.Table] = [_rows(t, starts, "group", partitions=None)]  # one row per transactional id

    # P7: the records with a state, each against the one before it of its transactional id
    idx = np.flatnonzero(~state_null)
    if len(idx):
        g = group[idx]
        first = np.ones(len(idx), dtype=bool)
        first[1:] = g[1:] != g[:-1]
        prev = np.roll(idx, 1)
        step = ~first
        illegal = step & ~LEGAL[code[prev], code[idx]]
        same_pid = ~pid_null[idx] & ~pid_null[prev] & (pid[idx] == pid[prev])
        back = step & ~epoch_null[idx] & ~epoch_null[prev] & (epoch[idx] < epoch[prev]) & same_pid
        source = t["source"].take(pa.array(idx[first]))
        not_empty = first.copy()
        not_empty[first] = np.asarray(
            pc.fill_null(pc.and_(pc.not_equal(t["state"].take(pa.array(idx[first])), "Empty"), pc.equal(source, "trace")), False)
            .to_numpy(zero_copy_only=False),
            dtype=bool,
        )
        not_empty &= ~lo_null[idx] & (lo[idx] == 0)
        states = t["state"]

        def detail(kind: str, i: int, p: int) -> str:
            if kind == "ILLEGAL_TRANSITION":
                return f"{states[p].as_py()} -> {states[i].as_py()} is not a transition Kafka allows"
            if kind == "FIRST_NOT_EMPTY":
                return f"the first state is {states[i].as_py()}, not Empty"
            return f"epoch {epoch[i]} after {epoch[p]} with the same producer id"

        for kind, mask in (("ILLEGAL_TRANSITION", illegal), ("FIRST_NOT_EMPTY", not_empty), ("EPOCH_BACK", back)):
            rows, before = idx[mask], prev[mask]
            if len(rows):
                details = [detail(kind, int(i), int(p)) for i, p in zip(rows, before, strict=True)]
                parts.append(_rows(t, rows, "violation", check=pa.array(["P7"] * len(rows)), kind=pa.array([kind] * len(rows)),
                                   offset=t["log_offset"].take(pa.array(rows)), detail=pa.array(details, pa.string()),
                                   partitions=None))

    # P4 and P5: per producer id within the run, by (producer id, time, log offset), nulls first
    def same_producer(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Whether rows a and b are of one run and one producer id (null with null, as Spark groups them)."""
        return np.asarray((group[a] == group[b]) & (pid_null[a] == pid_null[b]) & (pid_null[a] | (pid[a] == pid[b])), dtype=bool)

    order = np.lexsort((lo, ~lo_null, ts, ~ts_null, pid, ~pid_null, group))
    same_next = np.zeros(n, dtype=bool)
    if n > 1:
        same_next[order[:-1]] = same_producer(order[:-1], order[1:])
    latest = order[~same_next[order]]  # the last row of each (run, producer id)
    parts.append(_rows(t, latest, "latest", state=t["state"].take(pa.array(latest))))

    prep_code = pc.fill_null(pc.is_in(t["state"], value_set=pa.array(list(PREPARES))), False)
    is_prep = np.asarray(prep_code.to_numpy(zero_copy_only=False), dtype=bool)
    prep = order[is_prep[order]]
    if len(prep):
        same = np.zeros(len(prep), dtype=bool)
        same[:-1] = same_producer(prep[:-1], prep[1:])
        nxt = np.roll(prep, -1)
        until = pa.array(np.where(same, ts[nxt], 0), mask=~same | ts_null[nxt], type=pa.int64())
        expected = pc.replace_substring_regex(t["state"].take(pa.array(prep)), "^Prepare(Commit|Abort)$", "\\1")
        expected = pc.utf8_upper(expected)
        parts.append(_rows(t, prep, "prepare", until=until, expected=expected))
    return pa.concat_tables(parts)


def _rows(t: pa.Table, rows: np.ndarray, rec: str, **extra: Any) -> pa.Table:
    """Rows ``rows`` of ``t`` as output rows of kind ``rec``: their identity columns, and ``extra``
    (a column given as None is left null)."""
    take = pa.array(rows, type=pa.int64())
    cols: dict[str, Any] = {
        "rec": pa.array([rec] * len(rows), pa.string()),
        "trace_id": t["trace_id"].take(take),
        "producer_id": t["producer_id"].take(take),
        "event": t["event"].take(take),
        "ts_ms": t["ts_ms"].take(take),
        "txn_id": t["txn_id"].take(take),
        "partitions": t["partitions"].take(take),
        **extra,
    }
    return _complete(cols, len(rows))


def _complete(cols: dict[str, Any], n: int) -> pa.Table:
    """A table of OUTPUT_SCHEMA: the columns given (cast to its types), the others null."""
    out = []
    for field in OUTPUT_SCHEMA:
        c = cols.get(field.name)
        out.append(pa.nulls(n, field.type) if c is None else pc.cast(c, field.type))
    return pa.Table.from_arrays(out, schema=OUTPUT_SCHEMA)
