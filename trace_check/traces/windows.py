"""A trace checked window after window (``check_windows``), each window starting from the states
the one before handed on; with the reference engine's replay, several windows at once, each
started from the state the engine says the window ahead will hand on."""

from __future__ import annotations

import collections
import contextlib
import os
import shutil
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from trace_check.engines import tlc_java, tlc_tools
from trace_check.traces import handoff
from trace_check.traces.invariants import indexed_logs
from trace_check.traces.module_text import Window
from trace_check.traces.one_window import check_window
from trace_check.traces.options import CheckOptions, TraceSource
from trace_check.traces.protocol import Protocol, StateReplay
from trace_check.traces.reader import Trace
from trace_check.traces.verdicts import Status, Verdict
from trace_check.values.tla import Record, format_log, format_value
from trace_check.values.tlc_print import TlcValueError, parse_value


def _marked_last(windows: Iterator[Trace]) -> Iterator[tuple[Trace, bool]]:
    """Each window, and whether it is the last (one window is read ahead)."""
    current = next(windows, None)
    while current is not None:
        following = next(windows, None)
        yield current, following is None
        current = following


@attrs.define
class _Ahead:
    """A window read ahead of the one being decided, and its run (if one was started)."""

    k: int
    win: Trace
    last: bool
    guess: Mapping[str, Any] | None  # the reference engine's state at the window's start
    run: Future[tuple[Verdict, tuple[str, ...] | None]] | None = None
    base: handoff.Base | None = None  # the base of the run's start (its hand-off's logs follow it)
    stop: threading.Event = attrs.field(factory=threading.Event)

    def cancel(self) -> None:
        """Kill the run, if any, and wait until it is gone; whatever it ended with is not wanted."""
        if self.run is not None and self.run.cancel():  # still waiting for a worker: never started
            self.run = None
        if self.run is not None:
            self.stop.set()
            with contextlib.suppress(Exception):
                self.run.result()
            self.run = None


# What a replayed start state has for a history variable (Protocol.history): no step reads it.
HISTORY_PLACEHOLDER = "txconform: replayed by the reference engine"


def as_start(guess: Mapping[str, Any], history: tuple[str, ...]) -> tuple[str, ...]:
    """A replayed state as a window's start: one state, in TLA+."""
    return (format_value(Record({**guess, **{h: HISTORY_PLACEHOLDER for h in history}})),)


class StartWriter:
    """``as_start`` for the states of one replay, window after window: a log entry's text is
    written once and kept while the entry stays in its log (the replay gives the same entry
    objects in each state, ``Protocol.spec_states``), so each start costs its new entries and
    the rest of the state, not its whole logs again (at 100,004 events a start is 4.4 MB).
    With ``bases`` (``Protocol.log_bases``), the logs' entries go to the start's base as far as
    they can (``handoff.rebase``), and the state holds the rest; the texts of the entries the last
    start's base had are that base's (``rebase``'s ``known``), not looked up entry by entry."""

    def __init__(self, protocol: Protocol, history: tuple[str, ...], bases: bool = False) -> None:
        self.protocol, self.logs, self.history, self.bases = protocol, frozenset(protocol.logs), history, bases
        self._kept: dict[int, tuple[Any, str]] = {}  # id(entry): the entry (kept alive, so its id is its own) and its text
        self._base: handoff.Base | None = None  # the last start's base: its entries' texts, by the entries

    def __call__(self, guess: Mapping[str, Any]) -> tuple[handoff.Base | None, tuple[str, ...]]:
        before, kept = self._kept, {}

        def entry(e: Any) -> str:
            hit = before.get(id(e))
            text = hit[1] if hit is not None and hit[0] is e else format_value(e)
            kept[id(e)] = (e, text)
            return text

        state: Mapping[str, Any] = {**guess, **{h: HISTORY_PLACEHOLDER for h in self.history}}
        base = None
        if self.bases:
            base, state = handoff.rebase(self.protocol, state, None, entry, replayed=True, known=self._base)
            self._base = base
        text = "[" + ", ".join(f"{k} |-> {format_log(v, entry) if k in self.logs else format_value(v)}"
                               for k, v in state.items()) + "]"
        self._kept = kept  # entries cut from their log are forgotten
        return base, (text,)


def _is_state(start: tuple[str, ...] | None, guess: Mapping[str, Any] | None, history: tuple[str, ...],
              base: handoff.Base | None = None) -> bool:
    """Is the hand-off ``start`` (its logs the entries after ``base``) exactly the one state
    ``guess``, history variables aside?"""
    if start is None or guess is None or len(start) != 1:
        return False
    try:
        state = parse_value(start[0])
    except TlcValueError:
        return False
    if not isinstance(state, Record):
        return False
    return handoff.matches(base, state, guess, history)


def _rebased(protocol: Protocol, handed: tuple[str, ...], base: handoff.Base | None,
             bases: bool) -> tuple[handoff.Base | None, tuple[str, ...]]:
    """A window's hand-off (its logs the entries after ``base``; None: whole logs) as the next
    window's start. With ``bases``, one state gives the entries its logs gained to the base, as
    far as they can go (handoff.rebase); several share ``base`` and keep it."""
    if not bases or len(handed) != 1:
        return base, handed
    try:
        state = parse_value(handed[0])
    except TlcValueError as e:
        raise handoff.HandOffError(f"a hand-off state is not a TLA+ value: {e}") from None
    if not isinstance(state, Record):
        raise handoff.HandOffError("a hand-off state is not a record")
    grown, rest = handoff.rebase(protocol, state, base, format_value, replayed=False)
    return grown, (format_value(Record(rest)),)


def uses_bases(protocol: Protocol) -> bool:
    """Do windows start from bases (``Protocol.log_bases``)? TLC reads them from files: only with
    txconform's Java for TLC (``tlc_java.loader_classes``)."""
    return bool(protocol.log_bases) and tlc_java.loader_classes(tlc_tools.find_tla2tools()) is not None


def check_windows(source: TraceSource, options: CheckOptions, base: Path, replay: StateReplay | None = None,
                  history: tuple[str, ...] = ()) -> Verdict:
    """The verdicts of the windows of ``source``, each a TLC run in a folder under ``base``,
    joined: the first that is not an acceptance, or the last's. ``options.workdir`` given, each
    window's folder stays; otherwise a window's files go once it is done.

    With a ``replay`` (``Protocol.spec_states``), up to ``jobs`` windows run at once. A window
    cannot know the states it starts from before the window ahead of it ends. The reference
    engine, replaying the trace, says which state that will be, and the window runs from it at
    once. When the window ahead ends, its hand-off decides: if it is exactly that one state
    (``Protocol.history`` aside, which no step reads), the run's verdict is the one a run from the
    hand-off would give; otherwise the run is killed and the window runs again from the hand-off.
    Only an acceptance is taken from such a run: a rejection or a violation is found again from
    the hand-off, so that its diagnosis and the state shown are TLC's own. The engine can only
    cost time, never change a verdict. On 10,004 events after every event, 2 cores: two windows
    of 5,002 at once 11.5 s, windows of 5,000 one after the other 20.6 s (docs/benchmarks.md)."""
    windows, total = source.windows, source.total
    keep, jobs = options.keep, options.jobs
    began = time.monotonic()
    spent = 0.0  # TLC's time, window after window (one job: the verdict's time)
    marked = enumerate(_marked_last(windows), 1)
    ahead: collections.deque[_Ahead] = collections.deque()
    pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="txconform-window")
    state: Mapping[str, Any] | None = None  # the engine's state after the windows read so far
    alive = True
    # Runs at once that leave no core to spare: each keeps about 1.4 cores busy, its JIT
    # compiler beside its worker. They compile with the first tier alone (TlcOptions.quick_jit):
    # on 2 cores, two windows at once took 11.5 s instead of 14.4 s early in a trace and 24.5 s
    # instead of 26.8 s at 90,000 events; one window alone took 7% longer that way.
    beside = jobs > 1 and 2 * jobs > (os.cpu_count() or 1)
    distinct = most = run_ahead = run_again = 0
    starts: StartWriter | None = None  # the replayed states as windows' starts
    bases = False  # windows start from bases (uses_bases), decided with the first window that hands on

    # The bases of the last runs and the files each saves its index in, for the windows after them
    # (a base holds a tuple of each log's entries: the last 4); the files of the latest 16 (a run
    # reads its prior's files as it starts, long before 16 more runs have begun)
    saved: collections.deque[tuple[handoff.Base, dict[str, Path]]] = collections.deque(maxlen=4)
    written: collections.deque[Path] = collections.deque()
    index_dir = base / "indexes"
    runs = 0

    def submit(a: _Ahead, start: tuple[str, ...] | None, base: handoff.Base | None, folder: Path) -> None:
        nonlocal runs
        a.stop = threading.Event()
        a.base = base
        # (a trace of one window, or one the engine cannot replay, runs one window at a time)
        near = beside and alive and replay is not None and not (a.k == 1 and a.last)
        prior = save = None
        if base is not None:
            runs += 1
            prior = handoff.prior_of(saved, base)
            index_dir.mkdir(parents=True, exist_ok=True)
            files = {v: index_dir / f"run{runs}_{v}.txt" for v in indexed_logs(a.win.protocol) if v in base.texts}
            saved.append((base, files))
            written.extend(files.values())
            while len(written) > 16 * len(files):
                written.popleft().unlink(missing_ok=True)
            save = {v: str(f) for v, f in files.items()}
        a.run = pool.submit(check_window, a.win, Window(start=start, last=a.last, beside=near, base=base, prior=prior, save=save),
                            source, options, folder, a.stop)

    # With the engine's replay, one window more than runs at once is read, replayed and written
    # ahead, its run waiting in the pool for a worker: it starts the moment a run ends, instead of
    # after the Python work of deciding the runs that ended and preparing the next. Without it,
    # the cores idled between runs for that work, which grows with the logs: on the million-event
    # run, 1.3 s between two runs at a time at the start and 3.6 s at the end, against 4.9 s and
    # 6.6 s of TLC (docs/benchmarks.md).
    depth = jobs + 1 if replay is not None and jobs > 1 else jobs

    def read_ahead() -> None:
        nonlocal state, alive, starts, bases
        while len(ahead) < depth:
            nxt = next(marked, None)
            if nxt is None:
                return
            k, (win, last) = nxt
            a = _Ahead(k, win, last, state if k > 1 else None)
            if k == 1:
                bases = not last and uses_bases(win.protocol)
                submit(a, None, None, base if last else base / "window1")
            elif a.guess is not None:
                starts = starts or StartWriter(win.protocol, history, bases)
                replayed_base, replayed = starts(a.guess)
                submit(a, replayed, replayed_base, base / f"window{k}-replayed")
            ahead.append(a)
            if replay is not None and alive and not last:
                try:
                    state = replay.advance([dict(e) for e in win.events])
                except Exception:  # noqa: BLE001 - a replay that fails only costs the runs ahead, never a verdict
                    state = None
                alive = state is not None

    def joined(v: Verdict, k: int, **changes: Any) -> Verdict:
        wall = time.monotonic() - began if jobs > 1 else spent
        return attrs.evolve(v, wall_time=wall, distinct_states=distinct, events=total, windows=k,
                            handed_on=most, jobs=min(jobs, k), run_ahead=run_ahead, run_again=run_again, **changes)

    start: tuple[str, ...] | None = None  # the hand-off of the window last decided
    start_base: handoff.Base | None = None  # the base its logs follow
    try:
        read_ahead()
        while ahead:
            a = ahead.popleft()
            result = None
            if a.run is not None and (a.k == 1 or _is_state(start, a.guess, history, start_base)):
                result = a.run.result()
                if a.k > 1 and result[0].status is not Status.ACCEPTED:
                    result = None  # found again from the hand-off, for TLC's own diagnosis
                elif a.k > 1:
                    run_ahead += 1
            elif a.run is not None:
                a.cancel()
                run_again += 1
            if result is None:
                submit(a, start, start_base, base / f"window{a.k}")
                assert a.run is not None
                result = a.run.result()
            v, handed = result
            spent += v.wall_time
            if v.distinct_states is not None:
                distinct += v.distinct_states - (len(start) if start else 0)
            if handed is None or v.status is not Status.ACCEPTED:
                return joined(v, a.k)
            if not handed:
                message = (f"window {a.k} ended in no state to hand on, though TLC explained all its events "
                           f"(a bug; see {base / f'window{a.k}'})")
                return joined(v, a.k, status=Status.ERROR, message=message)
            most = max(most, len(handed))
            start_base, start = _rebased(a.win.protocol, handed, a.base, bases)
            if not keep:
                for folder in (base / f"window{a.k}", base / f"window{a.k}-replayed"):
                    shutil.rmtree(folder, ignore_errors=True)
            read_ahead()
        raise AssertionError("unreachable: the last window returns")  # pragma: no cover
    finally:
        for a in ahead:
            a.cancel()
        pool.shutdown(wait=True)
