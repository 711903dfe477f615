"""How a trace is checked: the options of ``txconform check``, in one record that the entry points
(``validation.check_trace``, ``check_trace_file``) take and pass down to the windows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import attrs

from trace_check.models.result import Progress


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
