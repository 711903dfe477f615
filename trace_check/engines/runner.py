"""One entry point over both model checkers: pick an engine, run a task, get a CheckResult."""

from __future__ import annotations

import threading
from pathlib import Path

from trace_check.engines import apalache, tlc, tlc_tools
from trace_check.errors import EngineUnavailable
from trace_check.models.result import Checkpointing, CheckResult, CheckTask, ProgressCallback

ENGINE_CHOICES = ("auto", "tlc", "apalache")


def resolve_engine(choice: str) -> tuple[str, str]:
    """The engine to use for ``choice`` and a one-line reason, as printed to the user."""
    if choice == "tlc":
        return "tlc", "TLC (asked for)"
    found = apalache.find_apalache()
    if choice == "apalache":
        if found is None:
            raise EngineUnavailable(
                "apalache-mc not found: install an Apalache release and set APALACHE_HOME (or put apalache-mc on PATH), or use --engine tlc"
            )
        return "apalache", f"Apalache at {found} (asked for)"
    if choice != "auto":
        raise EngineUnavailable(f"unknown engine {choice!r}: use one of {', '.join(ENGINE_CHOICES)}")
    if found is not None:
        return "apalache", f"Apalache at {found} (auto: apalache-mc is installed)"
    return "tlc", "TLC (auto: apalache-mc is not installed)"


def check_engine_available(engine: str) -> None:
    """Fail early, with one line, when the engine cannot run at all."""
    if engine == "tlc":
        tlc_tools.find_java()
        tlc_tools.find_tla2tools()
    elif apalache.find_apalache() is None:
        raise EngineUnavailable("apalache-mc not found: set APALACHE_HOME or use --engine tlc")


def run_task(
    engine: str,
    task: CheckTask,
    workdir: Path,
    on_progress: ProgressCallback | None = None,
    checkpointing: Checkpointing = Checkpointing(),
    stop: threading.Event | None = None,
) -> CheckResult:
    """Run ``task``; checkpoints are TLC's alone (Apalache has none). ``stop`` (TLC only) kills
    the run when set, which then raises ``tlc.Cancelled``."""
    if engine == "tlc":
        return tlc.run_tlc(task, workdir, on_progress, checkpointing, stop)  # a violated part named (tlc_output.interpret)
    check_checkpointing(engine, checkpointing)
    return task.named(apalache.run_apalache(task, workdir, on_progress))


def check_checkpointing(engine: str, checkpointing: Checkpointing) -> None:
    """Fail with one line when checkpoints are asked of an engine that has none."""
    if engine != "tlc" and checkpointing != Checkpointing():
        raise EngineUnavailable("--resume and --checkpoint work with TLC only (Apalache has no checkpoints): add --engine tlc")
