"""Several model-checker runs at once, within a budget of cores.

A TLC run with one worker keeps about one core busy, so ``txconform model-check`` runs as many
models side by side as the machine has cores: the costliest first (by the states the registry pins),
each taking as many cores as it has TLC workers. Results come back in the order of the input, so
what is printed does not depend on which run ended first.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_jobs() -> int:
    """How many cores runs may use at once: the cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no sched_getaffinity (macOS)
        return max(1, os.cpu_count() or 1)


def run_within_cores(
    items: Sequence[T],
    run: Callable[[T, threading.Event], R],
    *,
    jobs: int,
    cores: Callable[[T], int],
    cost: Callable[[T], float],
    done: Callable[[int, R], None] | None = None,
) -> list[R]:
    """``run(item, stop)`` for every item, ``jobs`` cores at a time, an item taking ``cores(item)``
    of them (at most ``jobs``). Items start costliest first; ``done(i, result)`` is called in input
    order, as soon as item ``i`` and every item before it have ended. An exception in one run (or
    KeyboardInterrupt in the caller) sets every ``stop`` event, waits for the running items to end
    and is raised."""
    if jobs <= 1 or len(items) <= 1:
        in_turn = []
        for i, item in enumerate(items):
            in_turn.append(run(item, threading.Event()))
            if done is not None:
                done(i, in_turn[-1])
        return in_turn

    order = sorted(range(len(items)), key=lambda i: -cost(items[i]))
    need = [max(1, min(cores(item), jobs)) for item in items]
    results: dict[int, R] = {}
    failure: list[BaseException] = []
    stops = [threading.Event() for _ in items]
    lock = threading.Condition()
    free = [jobs]
    reported = [0]

    def report() -> None:  # under the lock: every finished item whose predecessors have been reported
        while reported[0] in results:
            if done is not None and not failure:
                done(reported[0], results[reported[0]])
            reported[0] += 1

    def work(i: int) -> None:
        try:
            result = run(items[i], stops[i])
        except BaseException as e:  # noqa: BLE001 (handed to the caller's thread)
            with lock:
                failure.append(e)
                for s in stops:
                    s.set()
                free[0] += need[i]
                lock.notify_all()
            return
        with lock:
            results[i] = result
            free[0] += need[i]
            try:
                report()
            except BaseException as e:  # noqa: BLE001 (a failing callback ends the whole run)
                failure.append(e)
                for s in stops:
                    s.set()
            lock.notify_all()

    threads: list[threading.Thread] = []
    try:
        for i in order:
            with lock:
                while free[0] < need[i] and not failure:
                    lock.wait(0.5)  # timed: KeyboardInterrupt reaches this thread
                if failure:
                    break
                free[0] -= need[i]
            t = threading.Thread(target=work, args=(i,), name=f"run-{i}", daemon=True)
            threads.append(t)
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # a timed join leaves KeyboardInterrupt to this thread
    except BaseException:  # KeyboardInterrupt: stop every run, let each end, then go
        for s in stops:
            s.set()
        for t in threads:
            t.join()
        raise
    if failure:
        raise failure[0]
    return [results[i] for i in range(len(items))]
