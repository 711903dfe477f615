"""The simulator's runs, pinned: the same seed, workload and faults give the same events, byte for
byte, as when these hashes were taken. A refactoring of the reference broker or of its scheduler
must keep them (the order in which enabled steps are listed, their weights, and the use of the
seeded random generator all show up here). Only the events are hashed: the header holds the spec's
hash, which changes with the spec.

Re-pinned once for trace format version 2, which added columns (txn_partitions, append_offset)
and made producer ids 64-bit: with those columns taken out and the ids mapped back to 1000, 1001,
..., every run hashed as before, so the runs themselves did not change.

Re-pinned once more when a leader's held batches became a set, as in the spec (a batch sent again
the same way while its first copy waits merges with it): the last run below held one batch twice
and answered the copy with LeaderVerifyLost at event 41, which the spec rejects; it is accepted
now. The other runs did not change.

Re-pinned for the consume-transform-produce runs (whose workload is TV2 by default) when TV2's
client stopped sending AddOffsetsToTxn and the group coordinator began to verify TxnOffsetCommit
with the coordinator, adding the offsets partition (GcVerified), as Kafka 4.x does: those four
runs changed (each still passes the trace check); the transfer runs did not."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload

SCHEDULE = Schedule((Fault(5, "hang"), Fault(9, "retry", type="Produce"), Fault(14, "delay", 1, 10), Fault(20, "drop", 1),
                     Fault(25, "failover"), Fault(30, "restart", 1), Fault(33, "resume")))

PINNED = [
    ("transfer:version=TV1,aborts=true", "all", 0, None,
     "632b7bf69a7bba00148d45d973d26691d0750ec8fb21f74754cc492eb516c99a"),
    ("transfer:version=TV1,aborts=true", "all", 1, None,
     "9513a8f838e6111f421d01efeb149a6c363878e215292bb3b0b7ff42b9dd5435"),
    ("transfer:version=TV1,aborts=true", "all", 2, None,
     "0f4bdbdcf8649ce16e6a7f486dbafdc4b7cb6f9b8c8030ce28a3cc0d287709b8"),
    ("ctp:ids=2,input=3,aborts=true", "all", 0, None,
     "c848eb88c2b7cea39454ca39c0f016f25d11a3638f6a0809e320ad50b2f57cf8"),
    ("ctp:ids=2,input=3,aborts=true", "all", 1, None,
     "d9ee103be54b0381d01e395c39dd3b5c881d0eba824310185e0d65aa8060fd0f"),
    ("ctp:ids=2,input=3,aborts=true", "all", 2, None,
     "97c71e6294f86cb4a554cca930d6488a98252eea4e4e39b91654a04261479517"),
    ("transfer", "none", 7, SCHEDULE,
     "e3e544f5a0b690a879e22be66784252b5a5d6eb4eb096aad5cc29a466d4c3393"),
    ("ctp:ids=2,input=3,aborts=true", "none", 7, SCHEDULE,
     "aa049dd739c7f7bad9fe9e2c32d90b2f12ed58ee4b7f1632492610903404149f"),
]


def events_sha256(tmp: Path, workload: str, faults: str, seed: int, schedule: Schedule | None) -> str:
    head, events = simulate(Workload.parse(workload), Faults.parse(faults), seed, schedule=schedule)
    path = tmp / "run.jsonl"
    write_trace(path, head, events)
    body = path.read_bytes().split(b"\n", 1)[1]  # without the header line
    return hashlib.sha256(body).hexdigest()


@pytest.mark.parametrize("workload,faults,seed,schedule,sha", PINNED)
def test_runs_are_pinned(tmp_path: Path, workload: str, faults: str, seed: int, schedule: Schedule | None,
                         sha: str) -> None:
    assert events_sha256(tmp_path, workload, faults, seed, schedule) == sha
