"""The two plans of the partition and coordinator checks agree: the partition pass (one shuffle, each
partition's log on Arrow: spark_replay/partition_pass.py) and the coordinator pass (one shuffle, each
transactional id's records: spark_replay/coord_pass.py) against Spark windows and joins per check
(``--plan windows``, spark_replay/checks/), on random staged tables that break every rule those
checks know in many ways at once: sequence gaps, duplicates and wrap-around, stale epochs, markers
of a lower epoch than their data, coordinator epochs going back, producers without idempotence,
partitions without events, open transactions, wrong .txnindex entries, read_committed fetches of
aborted, open and missing offsets with right and wrong LSOs, empty fetches.

Same statuses, counts, entity counts and notes per check, and the same violation rows, column by
column. Uses the session's local Spark (conftest.py, ``local_spark``).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

import pyarrow.parquet as pq

from spark_replay.checks import PLANS, VIOLATION_COLUMNS
from spark_replay.partition_pass import index_sweep
from spark_replay.staged import run_checks
from spark_replay.tables import rows_to_table

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.filterwarnings("ignore::FutureWarning")]

# the partition pass's checks and the coordinator pass's (P4's windows, P5's last records, P7)
PARTITION_CHECKS = ("P1", "P2", "P3", "P4", "P5", "P6", "P7", "C1")
STATES = ("Empty", "Ongoing", "PrepareCommit", "PrepareAbort", "CompleteCommit", "CompleteAbort")


def random_logs(root: Path, seed: int, partitions: int = 60) -> dict[str, int]:
    """Write random staged tables under ``root``; returns their row counts."""
    import pandas as pd

    rng = random.Random(seed)
    trace = f"random-{seed}"
    entries: list[dict[str, Any]] = []
    reads: list[dict[str, Any]] = []
    index: list[dict[str, Any]] = []
    txn_log: list[dict[str, Any]] = []
    clock = 0
    pids = [-1, 1, 2, 3, 2**40 + 7]
    for k in range(partitions):
        topic, partition = f"t{k // 3}", k % 3
        with_events = rng.random() > 0.15
        producers = rng.sample(pids, rng.randint(1, 3))
        state = {p: {"epoch": rng.randint(0, 2), "seq": rng.choice([0, 0, 0, 2**31 - 3]), "coord": rng.randint(0, 3)} for p in producers}
        offset = 0
        mine: list[dict[str, Any]] = []
        for _ in range(rng.randint(5, 40)):
            clock += 1
            pid = rng.choice(producers)
            st = state[pid]
            row: dict[str, Any] = {
                "source": "segment",
                "trace_id": trace,
                "topic": topic,
                "partition": partition,
                "producer_id": pid,
                "base_offset": offset,
                "ts_ms": 1000 + clock,
                "event": clock if with_events else None,
                "txn_id": rng.choice([f"tx{pid}", None]) if pid >= 0 else None,
            }
            if rng.random() < 0.1:
                st["epoch"] += 1
                st["seq"] = 0
            if pid >= 0 and rng.random() < 0.25:
                coord: int | None = st["coord"] + rng.choice([0, 0, 1, -1])
                coord = None if rng.random() < 0.1 else coord
                if coord is not None:
                    st["coord"] = max(st["coord"], coord)
                epoch = st["epoch"] - (1 if rng.random() < 0.15 else 0)
                row |= {"last_offset": offset, "producer_epoch": epoch, "base_seq": -1, "last_seq": -1, "is_txn": True, "is_control": True,
                        "control": rng.choice(["COMMIT", "ABORT"]), "coord_epoch": coord}
                offset += 1
            else:
                n = rng.randint(1, 3)
                seq = st["seq"] + rng.choice([0] * 8 + [-n, 2])
                seq = -1 if pid < 0 or rng.random() < 0.05 else seq % 2**31
                epoch = st["epoch"] - (1 if rng.random() < 0.05 else 0)
                row |= {"last_offset": offset + n - 1, "producer_epoch": epoch if pid >= 0 else -1, "base_seq": seq,
                        "last_seq": -1 if seq < 0 else (seq + n - 1) % 2**31, "is_txn": pid >= 0 and rng.random() < 0.85, "is_control": False}
                if seq >= 0:
                    st["seq"] = (seq + n) % 2**31
                offset += n
            mine.append(row)
            if with_events and rng.random() < 0.2:  # a fetch of the partition as it is now
                clock += 1
                isolation = rng.choice(["read_committed"] * 4 + ["read_uncommitted"])
                got = sorted(rng.sample(range(offset + 2), rng.randint(0, min(4, offset + 2))))
                lso = rng.choice([None, rng.randint(0, offset + 1)])
                start = rng.choice([None, rng.randint(0, offset)])
                upto = rng.choice([None, None, rng.randint(0, offset + 1)])  # a partial answer ends there
                for i, o in enumerate(got or [None]):
                    reads.append({"source": "trace", "trace_id": trace, "process": "c1", "op_index": clock, "time": clock, "isolation": isolation,
                                  "topic": topic, "partition": partition, "from_offset": start, "to_offset": upto, "offset": o, "lso": lso,
                                  "event": clock, "read_index": i})
        entries += mine
        if rng.random() < 0.4:  # a .txnindex: the right entries, some changed, dropped or made up
            idem = pd.DataFrame([r for r in mine if r["producer_id"] >= 0])
            right = index_sweep(idem).to_dict("records") if len(idem) else []
            for e in right:
                roll = rng.random()
                if roll < 0.15:
                    continue
                if roll < 0.3:
                    e["lso"] += 1
                elif roll < 0.4:
                    e["first_offset"] = max(0, e["first_offset"] - 1)
                index.append({"source": "segment", **e})
            if rng.random() < 0.3:
                index.append({"source": "segment", "trace_id": trace, "topic": topic, "partition": partition, "producer_id": 1, "first_offset": 0,
                              "last_offset": offset + 5, "lso": offset + 6})
    for pid in pids[1:]:  # the coordinator's records, in time with the markers
        t = 1000
        source = rng.choice(["segment", "trace"])  # a trace's first record at offset 0 must be Empty (P7)
        for n in range(rng.randint(0, 8)):
            t += rng.randint(1, 200)
            named = [{"topic": f"t{rng.randrange(partitions // 3)}", "partition": rng.randrange(3)} for _ in range(rng.randint(0, 3))]
            epoch = n // 3 - (1 if rng.random() < 0.15 else 0)  # now and then an epoch back (P7)
            state = None if rng.random() < 0.05 else rng.choice(STATES)  # a tombstone now and then
            txn_log.append({"source": source, "trace_id": trace, "log_partition": 0, "log_offset": n, "ts_ms": t,
                            "txn_id": f"tx{pid}", "producer_id": pid, "epoch": epoch, "state": state,
                            "partitions": named if state is not None else None})
    tables = {"entries": entries, "reads": reads, "aborted_index": index, "txn_log": txn_log}
    for name, rows in tables.items():
        (root / name).mkdir(parents=True)
        pq.write_table(rows_to_table(name, rows), root / name / "part-0.parquet")
    return {name: len(rows) for name, rows in tables.items()}


def _key(v: Any) -> tuple[int, Any]:
    return (0, "") if v is None else (1, v)


def _violations(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    found: dict[str, list[tuple[Any, ...]]] = {}
    root = out / "violations"
    for d in sorted(root.iterdir()) if root.is_dir() else []:
        rows = [tuple(r[c] for c in VIOLATION_COLUMNS) for r in pq.read_table(d).to_pylist()]
        found[d.name] = sorted(rows, key=lambda row: tuple(_key(v) for v in row))
    return found


@pytest.fixture(scope="module")
def spark(local_spark: Any) -> Any:
    return local_spark


def test_the_partition_pass_and_the_windows_find_the_same(spark: Any, tmp_path: Path) -> None:
    rows = random_logs(tmp_path / "staged", seed=20261124)
    assert all(rows.values()), rows
    reports = {plan: run_checks(tmp_path / "staged", spark, out=tmp_path / plan, plan=plan) for plan in PLANS}
    outcomes = {plan: {o.id: (o.status, o.violations, o.by_kind, o.entities, o.note) for o in r.outcomes} for plan, r in reports.items()}
    assert outcomes["pass"] == outcomes["windows"]
    found = {plan: _violations(tmp_path / plan) for plan in PLANS}
    for check in PARTITION_CHECKS:
        assert found["pass"].get(check) == found["windows"].get(check), check
    # the input broke every rule of those checks, so that the comparison compares something
    kinds = {(c, k) for c, by in ((o.id, o.by_kind) for o in reports["pass"].outcomes) for k in by}
    want = {
        ("P1", "DUPLICATE"), ("P1", "GAP"), ("P2", "STALE_EPOCH_DATA"), ("P2", "MARKER_EPOCH_BELOW_DATA"), ("P3", "COORDINATOR_EPOCH_BACK"),
        ("P5", "HANGING"), ("P6", "MISSING_INDEX_ENTRY"), ("P6", "WRONG_INDEX_LSO"), ("P6", "WRONG_FIRST_OFFSET"), ("P6", "INDEX_WITHOUT_ABORT"),
        ("C1", "DIRTY_READ"), ("C1", "ABORTED_READ"), ("C1", "WRONG_LSO"), ("C1", "SKIPPED_READ"), ("P4", "MARKER_AGAINST_DECISION"),
        ("P7", "ILLEGAL_TRANSITION"), ("P7", "FIRST_NOT_EMPTY"), ("P7", "EPOCH_BACK"),
    }  # fmt: skip
    assert want <= kinds, want - kinds
