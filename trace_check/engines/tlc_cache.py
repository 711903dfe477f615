"""The run cache: a finished TLC run kept by everything it read, when ``$TXCONFORM_TLC_CACHE`` names a directory."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import attrs

from trace_check.models.result import CheckTask

CACHE_ENV = "TXCONFORM_TLC_CACHE"


@attrs.frozen
class RunCache:
    """Where a finished TLC run is kept, when ``TXCONFORM_TLC_CACHE`` names a directory: one run per
    model for a whole test session, shared by the tests' own runs and the CLI's that the docs tests
    start (tests/conftest.py sets it; users never need it). The key is everything TLC reads: each
    file of the working directory (the spec's modules and the .cfg), the command with the working
    directory's path taken out, and the time budget. What is kept is TLC's exit status, its wall
    time and its whole output, which is read again exactly as a live run's; timeouts, crashes,
    checkpointed and resumed runs are never kept."""

    path: Path

    @staticmethod
    def from_env(task: CheckTask, workdir: Path, cmd: list[str]) -> RunCache | None:
        root = os.environ.get(CACHE_ENV)
        if not root:
            return None
        h = hashlib.sha256()
        for part in cmd:
            h.update(part.replace(str(workdir), "<work>").encode() + b"\0")
        h.update(f"timeout={task.timeout}".encode() + b"\0")
        for f in sorted(workdir.rglob("*")):
            rel = f.relative_to(workdir)
            if f.is_file() and rel.parts[0] not in ("tmp", "states") and f.name != "tlc.log":
                h.update(str(rel).encode() + b"\0" + f.read_bytes() + b"\0")
        return RunCache(Path(root) / f"{h.hexdigest()}.json")

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Held while one process looks the run up and, missing it, runs and stores it: another
        process that asks for the same run (the other pytest-xdist worker) waits, then finds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # flock: two opens conflict even within one process
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def load(self) -> tuple[int, float, str] | None:
        try:
            kept = json.loads(self.path.read_text(encoding="utf-8"))
            return int(kept["returncode"]), float(kept["wall"]), str(kept["output"])
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def store(self, returncode: int, wall: float, log_file: Path) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            text = log_file.read_text(encoding="utf-8")
            tmp = self.path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"returncode": returncode, "wall": wall, "output": text}), encoding="utf-8")
            os.replace(tmp, self.path)  # atomic: two processes may store the same run
        except OSError:
            pass  # a cache that cannot be written costs only the next run's time
