"""What both engine runners need: a fresh working copy of the spec, and a clean kill on timeout."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

KILL_GRACE_SECONDS = 2.0


def copy_spec_modules(spec_file: Path, workdir: Path) -> None:
    """Copy every module beside ``spec_file`` into ``workdir``, so an engine reads and writes only there."""
    workdir.mkdir(parents=True, exist_ok=True)
    for module in sorted(spec_file.parent.glob("*.tla")):
        target = workdir / module.name
        if target.exists() and target.samefile(module):
            continue
        shutil.copy2(module, target)


def kill_process_group(proc: subprocess.Popen[Any]) -> None:
    """SIGTERM the child's process group (it was started in a new session), then SIGKILL what is left."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except (ProcessLookupError, PermissionError):
        return
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=KILL_GRACE_SECONDS)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # members that outlived the leader or ignored SIGTERM


def one_line(text: str, limit: int = 300) -> str:
    """Collapse whitespace so that a message fits on one line, cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
