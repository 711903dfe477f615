"""The simulator's runs, pinned: the same seed, workload and faults give the same events, byte for
byte, as when these hashes were taken. A refactoring of the reference broker or of its scheduler
must keep them (the order in which enabled steps are listed, their weights, and the use of the
seeded random generator all show up here). Only the events are hashed: the header holds the spec's
hash, which changes with the spec."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Optional

import pytest

from ref_impl.sim.faults import Fault, Faults, Schedule
from ref_impl.sim.run import simulate, write_trace
from ref_impl.sim.workloads import Workload

SCHEDULE = Schedule((Fault(5, "hang"), Fault(9, "retry", type="Produce"), Fault(14, "delay", 1, 10), Fault(20, "drop", 1),
                     Fault(25, "failover"), Fault(30, "restart", 1), Fault(33, "resume")))

PINNED = [
    ("transfer:version=TV1,aborts=true", "all", 0, None,
     "36f2337e7067b996a72b5a69c55ce00261ab4153a462f7bb261c5195c50b6cbb"),
    ("transfer:version=TV1,aborts=true", "all", 1, None,
     "dd9c11315f77e6b898d2047169a094bdf9d0e337e8e0e8312fdac5bbafc30b45"),
    ("transfer:version=TV1,aborts=true", "all", 2, None,
     "519a2e9811e3e2226bedec0eb061ede59a21abec34095dd6f2832f3850692360"),
    ("ctp:ids=2,input=3,aborts=true", "all", 0, None,
     "6a13f1103ce4b9d6be9929a4010828c111dee92bc68223089dd0904656a3d48f"),
    ("ctp:ids=2,input=3,aborts=true", "all", 1, None,
     "5d2735259b7940c61021f7874d33b9c521fd50dfc860a1d7d51271745135f702"),
    ("ctp:ids=2,input=3,aborts=true", "all", 2, None,
     "178a0d6c6a31001b51994deec79a978baf0fe5990d52f22714178423217f8445"),
    ("transfer", "none", 7, SCHEDULE,
     "9056f67e83c885c90bb3d0876d4dccbde27fc4cce32dfbb5ff373214361e856c"),
    ("ctp:ids=2,input=3,aborts=true", "none", 7, SCHEDULE,
     "233f6a0db2c9d86047fd33a8c9e14a133e29907dbd99de0c0e693e0e2cdb08cc"),
]


def events_sha256(tmp: Path, workload: str, faults: str, seed: int, schedule: Optional[Schedule]) -> str:
    head, events = simulate(Workload.parse(workload), Faults.parse(faults), seed, schedule=schedule)
    path = tmp / "run.jsonl"
    write_trace(path, head, events)
    body = path.read_bytes().split(b"\n", 1)[1]  # without the header line
    return hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize("workload,faults,seed,schedule,sha", PINNED)
def test_runs_are_pinned(tmp_path: Path, workload: str, faults: str, seed: int, schedule: Optional[Schedule],
                         sha: str) -> None:
    assert events_sha256(tmp_path, workload, faults, seed, schedule) == sha
