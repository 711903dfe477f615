"""trace_check/engines/parallel.py: runs side by side within a budget of cores, results in input order."""

from __future__ import annotations

import threading
import time

import pytest

from trace_check.engines.parallel import run_within_cores


def test_runs_never_take_more_cores_than_the_budget_and_report_in_input_order() -> None:
    cores = {"a": 1, "b": 2, "c": 1, "d": 1, "e": 3}  # e asks more than the budget: it gets all of it
    cost = {"a": 5, "b": 1, "c": 9, "d": 2, "e": 4}
    busy = [0]
    most = [0]
    started: list[str] = []
    reported: list[tuple[int, str]] = []
    lock = threading.Lock()

    def run(item: str, stop: threading.Event) -> str:
        with lock:
            started.append(item)
            busy[0] += min(cores[item], 2)
            most[0] = max(most[0], busy[0])
        time.sleep(0.05 if item != "c" else 0.2)  # c, started first, ends last
        with lock:
            busy[0] -= min(cores[item], 2)
        return item.upper()

    got = run_within_cores(list(cores), run, jobs=2, cores=cores.__getitem__, cost=cost.__getitem__,
                           done=lambda i, r: reported.append((i, r)))
    assert got == ["A", "B", "C", "D", "E"]
    assert reported == [(0, "A"), (1, "B"), (2, "C"), (3, "D"), (4, "E")]
    assert started[0] == "c"  # the costliest first
    assert most[0] == 2  # two at once, never more than the budget
    assert sorted(started) == sorted(cores)


def test_one_failing_run_stops_the_others_and_is_raised() -> None:
    stopped: list[str] = []

    def run(item: str, stop: threading.Event) -> str:
        if item == "bad":
            time.sleep(0.05)
            raise RuntimeError("TLC crashed")
        if stop.wait(5):
            stopped.append(item)
        return item

    with pytest.raises(RuntimeError, match="TLC crashed"):
        run_within_cores(["slow", "bad"], run, jobs=2, cores=lambda _: 1, cost=lambda _: 1)
    assert stopped == ["slow"]


def test_one_job_runs_in_turn() -> None:
    order: list[int] = []
    run_within_cores([3, 1, 2], lambda i, stop: order.append(i), jobs=1, cores=lambda _: 1, cost=float)
    assert order == [3, 1, 2]
