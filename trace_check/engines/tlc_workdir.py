"""A TLC run's working directory: the spec's modules, the model's ``.cfg``, and TLC's checkpoints there.

Each run gets a fresh working directory holding a copy of the spec's modules, a generated
``.cfg`` and TLC's ``-metadir``: two runs never share state, and TLC writes nothing into ``specs/``.
The one exception is a resumed run: it continues, in the same directory, from the checkpoint that
TLC wrote there (every 30 minutes by default), provided the model is byte for byte the same.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from trace_check.engines.process import copy_spec_modules
from trace_check.errors import ResumeError
from trace_check.models.result import CheckTask
from trace_check.values.tla import constant_to_tla

# "... Model-Checking with fp 68 and seed ...": the fingerprint polynomial, random per run unless -fp is given
_FP_INDEX = re.compile(r"\bwith fp (\d+) and seed\b")
_CHECKPOINT_AT = re.compile(r"Checkpointing completed at \((.*?)\)")
DEFAULT_CHECKPOINT_MINUTES = 30  # TLC's own default


def config_text(task: CheckTask) -> str:
    """The TLC configuration for a task."""
    lines = []
    if task.constants or task.substitutions:
        lines.append("CONSTANTS")
        lines += [f"    {name} = {constant_to_tla(value)}" for name, value in sorted(task.constants.items())]
        lines += [f"    {name} <- {op}" for name, op in sorted(task.substitutions.items())]
    lines += [f"SPECIFICATION {task.specification}"] if task.specification else [f"INIT {task.init}", f"NEXT {task.next}"]
    lines += [f"INVARIANT {inv}" for inv in task.checked_invariants]
    lines += [f"PROPERTY {prop}" for prop in task.properties]
    lines += [f"CONSTRAINT {c}" for c in task.tlc.constraints]
    lines += [f"ACTION_CONSTRAINT {c}" for c in task.tlc.action_constraints]
    if task.tlc.symmetry:
        lines.append(f"SYMMETRY {task.tlc.symmetry}")
    if task.tlc.view:
        lines.append(f"VIEW {task.tlc.view}")
    return "\n".join(lines) + "\n"


@attrs.frozen
class Checkpoint:
    """A checkpoint TLC completed in a run's working directory, and what resuming it needs."""

    directory: Path  # the run's folder under states/, holding queue.chkpt and the trace files
    fp_index: int  # the fingerprint polynomial of the run: a resumed run must use the same one
    taken_at: str  # TLC's timestamp, e.g. "2026-11-23 05:40:41"


def find_checkpoint(workdir: Path) -> Checkpoint | None:
    """The newest checkpoint TLC completed in ``workdir``, or None."""
    log = workdir / "tlc.log"
    if not log.is_file():
        return None
    text = log.read_text(encoding="utf-8", errors="replace")
    fps, times = _FP_INDEX.findall(text), _CHECKPOINT_AT.findall(text)
    runs = sorted(
        (d for d in (workdir / "states").glob("*") if (d / "queue.chkpt").is_file() and (d / "vars.chkpt").is_file()),
        key=lambda d: (d / "queue.chkpt").stat().st_mtime,
    )
    if not fps or not times or not runs:
        return None
    return Checkpoint(directory=runs[-1], fp_index=int(fps[-1]), taken_at=times[-1])


def resumable_checkpoint(task: CheckTask, workdir: Path) -> Checkpoint:
    """The checkpoint to resume ``task`` from; a one-line ResumeError if there is none or the model changed.

    TLC's checkpoint holds fingerprints and queued states of one model: resuming it with another
    spec or configuration would mix two state spaces and give a verdict about neither.
    """
    checkpoint = find_checkpoint(workdir)
    if checkpoint is None:
        raise ResumeError(
            f"{workdir}: no completed TLC checkpoint to resume (TLC writes one after every "
            f"{DEFAULT_CHECKPOINT_MINUTES} minutes of checking, or --checkpoint MINUTES); run without --resume"
        )
    changed = [
        module.name
        for module in sorted(task.spec_file.parent.glob("*.tla"))
        if not (workdir / module.name).is_file() or (workdir / module.name).read_bytes() != module.read_bytes()
    ]
    cfg = workdir / f"{task.module}.cfg"
    if not cfg.is_file() or cfg.read_text(encoding="utf-8") != config_text(task):
        changed.append(f"the model's configuration ({cfg.name})")
    if changed:
        raise ResumeError(
            f"{workdir}: {', '.join(changed)} changed since TLC's checkpoint of {checkpoint.taken_at}; "
            "a checkpoint resumes only the model it was taken of: run without --resume"
        )
    return checkpoint


def prepare_workdir(task: CheckTask, workdir: Path) -> Path:
    """Copy the spec's modules into ``workdir`` and write the model's .cfg; returns the .cfg path."""
    copy_spec_modules(task.spec_file, workdir)
    cfg = workdir / f"{task.module}.cfg"
    cfg.write_text(config_text(task))
    return cfg
