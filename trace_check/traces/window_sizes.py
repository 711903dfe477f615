"""How a trace is cut into windows and how many TLC runs go at once: the events per window
(``WINDOW``, ``balanced_size``, ``window_size``) and the runs at a time (``jobs_default``,
``jobs_count``, ``parallel_jobs``)."""

from __future__ import annotations

import os

from trace_check.errors import TxconformError
from trace_check.traces.protocol import Protocol

WINDOW = 5_000  # events per TLC run (docs/benchmarks.md: "Long traces")


def jobs_default() -> int:
    """TLC runs at once when not told: one per core, at most 4 (each is a JVM with a 1 GB heap)."""
    return max(1, min(4, os.cpu_count() or 1))


def jobs_count(jobs: int | None) -> int:
    """``jobs``, or ``jobs_default()`` when it is None; a one-line error below 1."""
    if jobs is None:
        return jobs_default()
    if jobs < 1:
        raise TxconformError(f"--jobs {jobs}: at least one TLC run must go at a time; give a number such as 2")
    return jobs


def parallel_jobs(protocol: Protocol, jobs: int | None) -> int:
    """The TLC runs at once for a trace of ``protocol``: one unless its plug-in replays states."""
    jobs = jobs_count(jobs)
    return jobs if protocol.spec_states is not None else 1


def balanced_size(window: int | None, total: int, jobs: int) -> int:
    """The events per window: ``window`` when given; else, for a trace longer than WINDOW and
    ``jobs`` TLC runs at once, a number of windows near ``total / WINDOW`` that ``jobs`` divides,
    all of one size; otherwise WINDOW. Measured on 2 cores, after every event: 10,004 events in two
    windows of 5,002 at once took 17.4 s, in windows of 5,000, 5,000 and 4 20.2 s, in four of
    2,501 22.9 s; 2,004 events in two windows of 1,002 at once 10.4 s, in one run 7.3 s (two JVMs
    starting at once share the cores that one JVM's start keeps busy)."""
    if window is not None or jobs < 2 or total <= WINDOW:
        return window_size(window)
    count = max(jobs, round(total / WINDOW))
    count = -(-count // jobs) * jobs
    return -(-total // count)


def window_size(window: int | None) -> int:
    """The events per window: ``window``, or WINDOW when it is None; a one-line error below 1."""
    if window is None:
        return WINDOW
    if window < 1:
        raise TxconformError(f"--window {window}: a window holds at least 1 event; give a number such as {WINDOW}")
    return window
