"""The Kafka reference broker's simulated runs, pinned: the same seed, workload and faults give
the same events, byte for byte, as when these hashes were taken (before the broker kept its network
by transactional.id as well as in order, ClusterState._net_of; the hashes did not move). A
refactoring of the broker or of its scheduler must keep them. Only the events are hashed: the
header holds the spec's hash, which changes with the spec. The consume-transform-produce run (TV2)
was re-pinned when TV2's client stopped sending AddOffsetsToTxn and the group coordinator began to
verify TxnOffsetCommit (GcVerified), as Kafka 4.x does."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload

PINNED = [
    (1, "transfer:ids=30,txns=2000,aborts=true", "all", 4000, 4005,
     "59ff632d48b2ed049717b48ba15f78d92fd76d1324483cc331a2db4e478ef929"),
    (4, "transfer:version=TV1,aborts=true", "all", 3000, 106,
     "9f2a006573a79a89d2ec98af2cf7e494b5d72604fa413a7a9700c8542a72571a"),
    (3, "ctp:ids=2,aborts=true", "all", 3000, 163,
     "446a2c53431efa1eae66e23b919bf426a59a06b70fee93d80ec4e31eeaaa80cd"),
    (5, "transfer:ids=2,in_flight=3,batches=3,records=3", "all", 3000, 137,
     "97e5a81894b93468ab89124ad02e1c9595dc5cd7bb417e7a65a6cdd05e50c5bc"),
    (2, "transfer:ids=6,aborts=true,bumps=true,instances=1", "all", 3000, 276,
     "93f4aec19ff16c7b715c20c659623494b9c2a814b2142e7bc810e6c25da7e0a7"),
]


@pytest.mark.parametrize("seed,workload,faults,limit,events,sha", PINNED)
def test_runs_are_pinned(tmp_path: Path, seed: int, workload: str, faults: str, limit: int, events: int, sha: str) -> None:
    head, evs = simulate(Workload.parse(workload), Faults.parse(faults), seed, max_events=limit)
    path = tmp_path / "t.jsonl"
    write_trace(path, head, evs)
    body = path.read_bytes().split(b"\n", 1)[1]  # without the header line
    assert (len(evs), hashlib.sha256(body).hexdigest()) == (events, sha)


def test_the_network_by_transactional_id_holds_what_the_network_holds() -> None:
    """ClusterState._net_of, kept by send and take, is the network grouped by transactional.id, at
    every step of a faulty run (losses, retries, failovers, stale answers discarded)."""
    from ref_impl.kafka.state import ClusterState

    checked = [0]
    send, take = ClusterState.send, ClusterState.take

    def agree(c: ClusterState) -> None:
        grouped = sorted((m for ms in c._net_of.values() for m in ms), key=repr)
        assert grouped == sorted(c.net, key=repr)
        assert all(m.tid == t for t, ms in c._net_of.items() for m in ms)
        checked[0] += 1

    def checked_send(self: ClusterState, *msgs: object) -> None:
        send(self, *msgs)  # type: ignore[arg-type]
        agree(self)

    def checked_take(self: ClusterState, m: object) -> None:
        take(self, m)  # type: ignore[arg-type]
        agree(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ClusterState, "send", checked_send)
        mp.setattr(ClusterState, "take", checked_take)
        _, evs = simulate(Workload.parse("transfer:ids=3,aborts=true"), Faults.parse("all"), 2, max_events=600)
    actions = {e["action"] for e in evs}
    assert {"Drop", "Retry"} & actions and checked[0] > 100


@pytest.mark.parametrize("seed,workload,faults,limit", [(1, "transfer:ids=3,txns=40,aborts=true,resilient=true", "all", 3000),
                                                        (3, "ctp:ids=2,aborts=true", "all", 3000)])
def test_a_run_written_as_it_goes_is_the_run_written_at_its_end(tmp_path: Path, seed: int, workload: str, faults: str,
                                                                limit: int) -> None:
    """simulate_to writes each event when it happens (a million events are never held): the same
    bytes, header included, as simulate's events written at the end (an event the broker changed
    after emitting it would differ)."""
    from ref_impl.kafka.sim.run import simulate_to

    w, f = Workload.parse(workload), Faults.parse(faults)
    head, evs = simulate(w, f, seed, max_events=limit)
    write_trace(tmp_path / "at-end.jsonl", head, evs)
    assert simulate_to(tmp_path / "as-it-goes.jsonl", w, f, seed, max_events=limit) == len(evs)
    assert (tmp_path / "as-it-goes.jsonl").read_bytes() == (tmp_path / "at-end.jsonl").read_bytes()
    assert not list(tmp_path.glob("*.tmp"))
