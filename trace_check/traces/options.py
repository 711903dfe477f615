"""What is checked and how: a trace as the windows read it (``TraceSource``), and the options of
``txconform check`` in one record (``CheckOptions``) that the entry points (``validation.check_trace``,
``check_trace_file``) take and pass down to the windows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from trace_check.models.result import Progress
from trace_check.traces.reader import Trace

Prefix = Callable[[int], list[dict[str, Any]]]  # the trace's first n events (read again when asked)


@attrs.frozen
class TraceSource:
    """A trace to check: its head (header and first events), its windows, its length, its first n
    events on demand (a diagnosis replays them), and all of it (for Apalache's record encoding)."""

    head: Trace
    windows: Iterator[Trace]
    total: int
    prefix: Prefix
    whole: Callable[[], Trace]


@attrs.frozen
class CheckOptions:
    """``engine``: tlc, apalache or auto. ``every_step``: the invariants after every event (the
    default, at any length: docs/benchmarks.md, "Long traces"), or in the final state only.
    ``timeout``: seconds for each engine run. ``workdir``: where the runs' files go and stay (by
    default a temporary folder, removed once the verdict is known). ``window``: events per TLC run
    (None: ``window_sizes.WINDOW``, balanced over the trace). ``jobs``: windows run at once.
    ``on_progress``: told of each run's progress."""

    engine: str = "auto"
    every_step: bool = True
    timeout: float = 600.0
    workdir: Path | None = None
    window: int | None = None
    jobs: int = 1
    on_progress: Callable[[Progress], None] | None = None

    @property
    def keep(self) -> bool:
        """Are the runs' files kept (``workdir`` given)?"""
        return self.workdir is not None


DEFAULT = CheckOptions()  # every option at its default
