"""The spec state a reference engine is in after a trace's first events, window by window: what
lets the windows of a long trace run in parallel (``Protocol.spec_states``; the windows are
trace_check/traces/windows.py's ``check_windows``).

The loop is every protocol's: replay the window's events one by one as the protocol's
``replay.replay`` takes them, then give the spec state after them; once the engine cannot take an
event, give None, then and from then on. A window runs from the state given at once, and its
verdict stands only if the window before hands on exactly that state, so a mistake here costs a
run, never a verdict. Each protocol says how one event is taken (``take``) and how the engine's
state reads as the spec's variables (``state``); ``ref_impl/<protocol>/replay_state.py``.
"""

from __future__ import annotations

from typing import Any

from trace_check.values.tla import Record


class ReplayStates:
    """Subclasses give ``take`` and ``state``; ``failures`` are the exceptions that mean the engine
    cannot take an event (any other is a bug of the engine and is raised)."""

    failures: tuple[type[Exception], ...] = (Exception,)
    broken: bool = False

    def take(self, ev: dict[str, Any]) -> bool:
        """Take the trace's next event as ``replay.replay`` does: whether the engine could."""
        raise NotImplementedError

    def state(self) -> Record:
        """The spec's variables but ``action``, in the engine's state now."""
        raise NotImplementedError

    def advance(self, events: list[dict[str, Any]]) -> Record | None:
        """Replay ``events`` (the trace's next ones) and give the spec state after them; None once
        the engine cannot take an event, and from then on."""
        if self.broken:
            return None
        for ev in events:
            try:
                ok = self.take(ev)
            except self.failures:
                ok = False
            if not ok:
                self.broken = True
                return None
        return self.state()
