"""The simulator's applications (ref_impl.kafka.sim.workloads): what they do after an error."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import pytest

from ref_impl.kafka.api import ProducerFencedError, TransactionAbortedError
from ref_impl.kafka.sim.workloads import Workload, transfer_app
from ref_impl.sim.settings import SettingsError


class _Failing:
    """A future whose result raises ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error


class _Producer:
    """Records the application's calls; its commit of transaction ``fail_at`` fails with ``error``."""

    def __init__(self, fail_at: int, error: Exception) -> None:
        self.calls: list[str] = []
        self.inst = ("t1", 1)
        self.fail_at, self.error, self.txn = fail_at, error, 0

    def init_transactions(self) -> Any:
        self.calls.append("init")
        return None

    def begin_transaction(self) -> None:
        self.txn += 1
        self.calls.append(f"begin {self.txn}")

    def send(self, partition: int, value: Any) -> None:
        pass

    def commit_transaction(self) -> Any:
        self.calls.append(f"commit {self.txn}")
        return _Failing(self.error) if self.txn == self.fail_at else None

    abort_transaction = commit_transaction


class _Cluster:
    plog: ClassVar[dict[int, list[Any]]] = {1: []}


def _drive(w: Workload, producer: _Producer) -> list[str]:
    """Run the application as the scheduler does: a failing future's error is thrown into it."""
    app = transfer_app(_Cluster(), producer, w, random.Random(1))  # type: ignore[arg-type]
    sent: Any = None
    try:
        while True:
            fut = app.send(sent) if not isinstance(sent, _Failing) else app.throw(sent.error)
            sent = fut
    except StopIteration:
        pass
    return producer.calls


def test_an_application_stops_at_a_transaction_its_client_aborted_unless_it_is_resilient() -> None:
    calls = ["init", "begin 1", "commit 1", "begin 2", "commit 2"]
    stopped = _drive(Workload.parse("transfer:txns=4"), _Producer(2, TransactionAbortedError("aborted")))
    assert stopped == calls
    went_on = _drive(Workload.parse("transfer:txns=4,resilient=true"), _Producer(2, TransactionAbortedError("aborted")))
    assert went_on == [*calls, "begin 3", "commit 3", "begin 4", "commit 4"]


def test_a_resilient_application_still_stops_when_it_is_fenced() -> None:
    fenced = _drive(Workload.parse("transfer:txns=4,resilient=true"), _Producer(2, ProducerFencedError("fenced")))
    assert fenced == ["init", "begin 1", "commit 1", "begin 2", "commit 2"]


def test_resilient_is_a_workload_setting() -> None:
    assert Workload.parse("transfer:resilient=true").resilient
    assert Workload.parse("transfer:resilient=true").describe() == "transfer:resilient=true"
    assert not Workload.parse("transfer").resilient
    with pytest.raises(SettingsError, match="resilient"):
        Workload.parse("transfer:resilent=true")


def test_a_resilient_run_goes_on_where_the_same_run_stopped() -> None:
    """Seed 1, all faults: the run whose applications stop at their first error ends after 82
    transactions; the resilient one begins 121: 40 for each of the 3 transactional.ids, and one
    that t2's first instance began before it hung (its second instance then began its own 40)."""
    from ref_impl.kafka.sim.faults import Faults
    from ref_impl.kafka.sim.run import simulate

    begun = []
    for extra in ("", ",resilient=true"):
        _, events = simulate(Workload.parse("transfer:ids=3,txns=40,aborts=true" + extra), Faults.parse("all"), 1, max_events=5000)
        begun.append(sum(e["action"] == "BeginTxn" for e in events))
    assert begun == [82, 121]
