"""Run Apalache (``apalache-mc check``) on a ``CheckTask`` and read what it reports.

What the code relies on, from Apalache's source (apalache-mc/apalache, 0.62):

* Options are ``--name=value`` (clist). ``--no-deadlock`` is an optional boolean: the bare flag
  and ``--no-deadlock=1``/``=true`` all work; we pass ``=true`` so the value is explicit.
* ``--out-dir=D`` puts each run in ``D/<spec file name>/<date>T<time>_<random>/``;
  ``--run-dir=R`` writes the same files straight into ``R`` as well. On an error the checker
  writes ``violation1.itf.json`` (this error) and ``violation.itf.json`` (the latest) there.
* The console log ends each line with `` I@12:00:00.000`` (level and time); errors have ``E@``.
* Exit codes (``ExitCodes.scala``): 0 no error, 12 counterexample *or deadlock*, 75 cannot
  evaluate the spec, 120 type error, 150 parse error of JSON/Quint input, 255 anything else,
  which includes SANY's parse and semantic errors on ``.tla`` input ("Parsing error: ...").
* Exit 0 also covers ``The outcome is: SmtTimeout`` (a verification condition timed out and was
  assumed to hold) and ``ExecutionsTooShort`` (no deadlock check, all runs end early).
* ``State N: state invariant K violated.``: K indexes the *verification conditions*, not the
  ``--inv`` operators. Apalache splits each invariant at top-level ``/\\`` (and ``\\A`` over
  ``/\\``) into conditions named ``VCNotInv$0``, ``$1``, ... per invariant, then orders all of
  them by name as strings (stable). ``invariant_for_condition`` undoes that from the log.
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

import attrs

from trace_check.engines.process import KILL_GRACE_SECONDS, copy_spec_modules, kill_process_group, one_line
from trace_check.errors import EngineUnavailable, ItfError
from trace_check.models.itf import read_itf
from trace_check.models.result import (
    CheckResult,
    CheckTask,
    Counterexample,
    Outcome,
    Progress,
    ProgressCallback,
)
from trace_check.values.tla import constant_to_tla

ENGINE = "apalache"
WRAPPER_MODULE = "MC_txconform_apalache"
CINIT_OPERATOR = "CInit_txconform"
LOG_NAME = "apalache.log"
OUT_DIR = "apalache-out"
RUN_DIR = "apalache-run"
INSTALL_HINT = (
    "apalache-mc not found: download a release archive from https://github.com/apalache-mc/apalache/releases, "
    "unpack it and set APALACHE_HOME to that directory (or put its bin/ on PATH); it needs Java 21+"
)

_LOG_SUFFIX = re.compile(r"\s+([A-Z])@\d\d:\d\d:\d\d\.\d+\s*$")
_PROGRESS = re.compile(r"^(Step|State) (\d+):")
_VIOLATED = re.compile(r"State (\d+): (state|action|trace) invariant (\d+)(?: \[[^\]]*\])? violated")
_VC_SOURCE = re.compile(r"> Producing verification conditions from the invariant (\S+)")
_VC_COUNT = re.compile(r"> VCGen produced (\d+) verification condition")
_OUTCOME = re.compile(r"The outcome is: (\w+)")


# ---------------------------------------------------------------------------------------------
# Finding Apalache and building the run


def find_apalache() -> Path | None:
    """``$APALACHE_HOME/bin/apalache-mc`` if that is executable, else ``apalache-mc`` on PATH."""
    home = os.environ.get("APALACHE_HOME")
    if home:
        candidate = Path(home) / "bin" / "apalache-mc"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("apalache-mc")
    return Path(found) if found else None


def wrapper_text(task: CheckTask) -> str:
    """The generated module Apalache checks: the spec plus an operator that fixes its constants."""
    lines = [f"---- MODULE {WRAPPER_MODULE} ----", f"EXTENDS {task.module}", ""]
    if task.constants or task.substitutions:
        lines.append(f"{CINIT_OPERATOR} ==")
        for name in sorted(task.constants):
            lines.append(f"    /\\ {name} = {constant_to_tla(task.constants[name])}")
        for name in sorted(task.substitutions):  # a constant bound to an operator of the module
            lines.append(f"    /\\ {name} = {task.substitutions[name]}")
        lines.append("")
    lines.append("====")
    return "\n".join(lines) + "\n"


def prepare_workdir(task: CheckTask, workdir: Path) -> Path:
    """Copy the spec's modules into ``workdir``, write the wrapper module; return its path."""
    copy_spec_modules(task.spec_file, workdir)
    wrapper = workdir / f"{WRAPPER_MODULE}.tla"
    wrapper.write_text(wrapper_text(task), encoding="utf-8")
    return wrapper


def build_command(task: CheckTask, workdir: Path, executable: Path) -> list[str]:
    """The ``apalache-mc check`` argv for ``task``, checking the wrapper module in ``workdir``."""
    cmd = [str(executable), "check", f"--init={task.init}", f"--next={task.next}"]
    if task.invariants:
        cmd.append(f"--inv={','.join(task.checked_invariants)}")
    if task.constants or task.substitutions:
        cmd.append(f"--cinit={CINIT_OPERATOR}")
    cmd.append(f"--length={task.apalache.length}")
    if not task.tlc.check_deadlock:
        # check_deadlock lives in TlcOptions but is the model's setting, for both engines
        cmd.append("--no-deadlock=true")
    cmd += [f"--out-dir={workdir / OUT_DIR}", f"--run-dir={workdir / RUN_DIR}"]
    cmd.append(str(workdir / f"{WRAPPER_MODULE}.tla"))
    return cmd


# ---------------------------------------------------------------------------------------------
# Running


def run_apalache(
    task: CheckTask,
    workdir: Path,
    on_progress: ProgressCallback | None = None,
    executable: Path | None = None,
) -> CheckResult:
    """Model-check ``task`` with Apalache in ``workdir``; raise ``EngineUnavailable`` without it."""
    executable = executable if executable is not None else find_apalache()
    if executable is None or not Path(executable).is_file():
        raise EngineUnavailable(INSTALL_HINT)
    if not task.spec_file.is_file():
        raise EngineUnavailable(f"{task.spec_file}: spec file not found")
    if task.specification or task.properties:
        return _result(
            Outcome.CONFIG_ERROR, 0.0, [], workdir / LOG_NAME,
            message=f"{task.name}: fairness and temporal properties are checked by TLC only here: run it with --engine tlc",
        )
    # absolute (not resolved: the apalache-mc script finds its jar from its own path), because
    # Apalache runs with workdir as its current directory
    executable, workdir = Path(os.path.abspath(executable)), Path(os.path.abspath(workdir))
    prepare_workdir(task, workdir)
    shutil.rmtree(workdir / RUN_DIR, ignore_errors=True)  # no stale violation files from a past run
    cmd = build_command(task, workdir, executable)
    log_file = workdir / LOG_NAME
    start = time.monotonic()
    started_at = time.time()
    progress = _ProgressReporter(start, task.apalache.length, on_progress)
    with open(log_file, "wb") as log:
        returncode, timed_out = _run(cmd, workdir, task.timeout, log, progress.line)
    wall = time.monotonic() - start
    log_text = log_file.read_text(encoding="utf-8", errors="replace")
    if timed_out:
        return _result(Outcome.TIMEOUT, wall, cmd, log_file, message=f"Apalache did not finish within {task.timeout:g} s")
    reading = interpret(task, returncode, log_text)
    cex, cex_problem = None, ""
    if reading.outcome in (Outcome.VIOLATED, Outcome.DEADLOCK):
        cex, cex_problem = _read_counterexample(workdir, started_at)
    message = "; ".join(m for m in (reading.message, cex_problem) if m)
    bound = f"length <= {task.apalache.length}" if reading.outcome is Outcome.HOLDS else None
    return _result(
        reading.outcome, wall, cmd, log_file,
        invariant=reading.invariant, message=message, counterexample=cex, bound=bound,
    )


def _result(outcome: Outcome, wall: float, cmd: Sequence[str], log_file: Path, **fields: Any) -> CheckResult:
    return CheckResult(engine=ENGINE, outcome=outcome, wall_time=wall, command=tuple(cmd), log_file=log_file, **fields)


def _run(
    cmd: Sequence[str], cwd: Path, timeout: float, log: IO[bytes], on_line: Callable[[str], None]
) -> tuple[int | None, bool]:
    """Run ``cmd``, copying its output to ``log`` and each line to ``on_line``; kill it at ``timeout``.

    Returns ``(returncode, timed_out)``. The child gets its own session, so the kill reaches the
    JVM that the ``apalache-mc`` script starts. cwd is ``workdir`` so that Apalache does not pick
    up an ``.apalache.json`` from wherever txconform was started.
    """
    proc = subprocess.Popen(
        list(cmd), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    lines = _LineSplitter(on_line)
    try:
        ended = _pump(proc, proc.stdout, deadline, log, lines)
    except BaseException:  # interrupted or terminated: never leave a JVM behind
        kill_process_group(proc)
        raise
    lines.flush()
    proc.stdout.close()
    if ended == "deadline":
        kill_process_group(proc)
        proc.wait()
        return None, True
    try:
        returncode = proc.wait(timeout=max(0.0, deadline - time.monotonic()) + KILL_GRACE_SECONDS)
    except subprocess.TimeoutExpired:  # closed its output but kept running
        kill_process_group(proc)
        proc.wait()
        return None, True
    if ended == "exited":
        kill_process_group(proc)  # what it left behind still holds our pipe
    return returncode, False


def _pump(proc: subprocess.Popen[bytes], stream: IO[bytes], deadline: float, log: IO[bytes], lines: _LineSplitter) -> str:
    """Copy output to ``log`` and ``lines``; say why it stopped: ``eof``, ``exited`` or ``deadline``."""
    fd = stream.fileno()
    with selectors.DefaultSelector() as selector:
        selector.register(fd, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return "deadline"
            if selector.select(timeout=min(remaining, 0.2)):
                chunk = os.read(fd, 65536)
                if not chunk:
                    return "eof"
                log.write(chunk)
                log.flush()
                lines.feed(chunk)
            elif proc.poll() is not None:
                return "exited"  # but something it started still holds the pipe open


class _LineSplitter:
    """Turns output chunks into decoded lines (the last, unterminated one on ``flush``)."""

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line = on_line
        self.pending = b""

    def feed(self, chunk: bytes) -> None:
        *complete, self.pending = (self.pending + chunk).split(b"\n")
        for raw in complete:
            self.on_line(raw.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        if self.pending:
            self.on_line(self.pending.decode("utf-8", errors="replace"))
            self.pending = b""


@attrs.define
class _ProgressReporter:
    """Reports a ``Progress`` each time Apalache logs a ``Step N:``/``State N:`` it had not yet."""

    start: float
    length: int
    on_progress: ProgressCallback | None
    seen: set[tuple[str, int]] = attrs.field(factory=set)

    def line(self, text: str) -> None:
        match = _PROGRESS.match(strip_log_suffix(text))
        if not match or self.on_progress is None:
            return
        key = (match.group(1), int(match.group(2)))
        if key in self.seen:
            return
        self.seen.add(key)
        phase = f"{key[0].lower()} {key[1]} of length {self.length}"
        self.on_progress(Progress(elapsed=time.monotonic() - self.start, phase=phase))


# ---------------------------------------------------------------------------------------------
# Reading the outcome


@attrs.frozen
class LogReading:
    """What Apalache's exit code and log say, before the counterexample is read."""

    outcome: Outcome
    invariant: str | None = None
    message: str = ""


def interpret(task: CheckTask, returncode: int | None, log_text: str) -> LogReading:
    """What Apalache's exit code and log say about ``task`` (the counterexample is read apart)."""
    lines = [strip_log_suffix(line) for line in log_text.splitlines()]
    outcome_line = _first_match(_OUTCOME, lines)
    reported = outcome_line.group(1) if outcome_line else None
    if returncode == 0:
        if reported == "SmtTimeout":
            return LogReading(Outcome.TIMEOUT, message="the SMT solver timed out on a verification condition "
                           "and Apalache assumed it holds, so the result is inconclusive")
        return LogReading(Outcome.HOLDS)
    if returncode == 12:
        return _counterexample_verdict(task, lines, reported, log_text)
    if returncode == 75:
        return LogReading(Outcome.EVAL_ERROR, message=error_line(log_text))
    if returncode == 120:
        return LogReading(Outcome.TYPE_ERROR, message=error_line(log_text))
    if returncode == 150:
        return LogReading(Outcome.PARSE_ERROR, message=error_line(log_text))
    return LogReading(_other_error(lines), message=error_line(log_text) or f"apalache-mc exited with code {returncode}")


def _counterexample_verdict(task: CheckTask, lines: list[str], reported: str | None, log_text: str) -> LogReading:
    for line in lines:
        violated = _VIOLATED.search(line)
        if violated:
            kind, index = violated.group(2), int(violated.group(3))
            invariant = invariant_for_condition(kind, index, task.checked_invariants, verification_conditions(lines))
            message = violated.group(0) + "."
            if invariant is None and task.invariants:
                message += f" (cannot tell which of {', '.join(task.checked_invariants)} it is)"
            return LogReading(Outcome.VIOLATED, invariant=invariant, message=message)
    if reported == "Deadlock" or any("Found a deadlock" in line for line in lines):
        return LogReading(Outcome.DEADLOCK, message="Found a deadlock.")
    return LogReading(Outcome.ENGINE_CRASH, message=error_line(log_text) or f"Apalache reported: {reported or 'an error'}")


def _other_error(lines: list[str]) -> Outcome:
    """Exit 255 covers SANY's errors on .tla input and missing operators; tell them apart."""
    for line in lines:
        if "Parsing error: Semantic errors" in line:
            return Outcome.SEMANTIC_ERROR
        if "Parsing error" in line:
            return Outcome.PARSE_ERROR
        if "Configuration error" in line:  # e.g. "Operator Foo not found (used as an invariant)"
            return Outcome.CONFIG_ERROR
        if "Input error" in line and "not found" in line:  # "Invariant candidate Foo not found"
            return Outcome.CONFIG_ERROR
    return Outcome.ENGINE_CRASH


def verification_conditions(lines: Sequence[str]) -> list[tuple[str, int]]:
    """``(invariant, number of state/action conditions)`` from the VCGen pass's log, in order.

    A trace invariant logs no count: it has no state conditions, so it counts 0.
    """
    counts: list[tuple[str, int]] = []
    for line in lines:
        source = _VC_SOURCE.search(line)
        if source:
            counts.append((source.group(1), 0))
            continue
        count = _VC_COUNT.search(line)
        if count and counts:
            counts[-1] = (counts[-1][0], int(count.group(1)))
    return counts


def invariant_for_condition(
    kind: str, index: int, invariants: Sequence[str], conditions: Sequence[tuple[str, int]]
) -> str | None:
    """The ``--inv`` operator behind Apalache's ``<kind> invariant <index>``, or None if unsure.

    With the per-invariant counts from the log, rebuild Apalache's order: condition ``i`` of each
    invariant is named ``VCNotInv$i`` and the list is sorted by name as a string, stably, so
    ``$0`` of every invariant comes first, then ``$1``, ..., with ``$10`` before ``$2``. This
    assumes all are state invariants: Apalache keeps action invariants in a second list and the
    log does not say which is which. Without counts, assume one condition per invariant.
    """
    if len(invariants) == 1:
        return invariants[0]
    if kind != "state":
        return None
    if [name for name, _ in conditions] == list(invariants):
        order = sorted(
            ((str(i), position) for position, (_, n) in enumerate(conditions) for i in range(n)),
            key=lambda named: named[0],
        )
        return invariants[order[index][1]] if index < len(order) else None
    return invariants[index] if index < len(invariants) else None


def error_line(log_text: str) -> str:
    """The most telling message of a failed run, as one line, for ``CheckResult.message``.

    The first message Apalache logged at error level (``E@``) if any, else the first line that
    reads like an error.
    """
    records = log_records(log_text)
    for text, level in records:
        if level == "E" and text.strip():
            return one_line(text)
    for text, _ in records:
        for line in text.splitlines():
            if _reads_like_error(line):
                return one_line(line)
    return ""


def log_records(log_text: str) -> list[tuple[str, str | None]]:
    """Apalache's console log as ``(message, level)``; a multi-line message is one record.

    Logback pads each message and appends `` E@12:00:00.000`` after its last line, so lines up
    to the next such suffix belong together. Text Apalache prints directly (``EXITCODE: ...``)
    has no suffix; trailing lines without one come out with level None.
    """
    records: list[tuple[str, str | None]] = []
    pending: list[str] = []
    for line in log_text.splitlines():
        suffix = _LOG_SUFFIX.search(line)
        if suffix is None:
            pending.append(line)
            continue
        pending.append(line[: suffix.start()])
        records.append(("\n".join(pending).strip("\n"), suffix.group(1)))
        pending = []
    records += [(line, None) for line in pending]
    return records


def _reads_like_error(line: str) -> bool:
    text = line.strip()
    if not text or text.startswith("EXITCODE"):
        return False
    return bool(re.search(r"\berror\b|unsupported|not found|exception", text, re.IGNORECASE))


def strip_log_suffix(line: str) -> str:
    """A console log line without Apalache's padding and ``I@12:00:00.000`` suffix."""
    return _LOG_SUFFIX.sub("", line).rstrip()


def _first_match(pattern: re.Pattern[str], lines: Sequence[str]) -> re.Match[str] | None:
    for line in lines:
        match = pattern.search(line)
        if match:
            return match
    return None


def _read_counterexample(workdir: Path, since: float) -> tuple[Counterexample | None, str]:
    """The newest trace this run wrote under ``workdir``, and a note if there is none or it is bad."""
    path = _newest_trace(workdir, since)
    if path is None:
        return None, "Apalache wrote no counterexample"
    try:
        return read_itf(path), ""
    except ItfError as err:
        return None, f"cannot read the counterexample: {err}"


def _newest_trace(workdir: Path, since: float) -> Path | None:
    for name in ("violation1.itf.json", "violation.itf.json"):
        # Apalache writes the same file into --out-dir's run folder and --run-dir; older ones
        # (from earlier runs in a reused workdir) do not count.
        candidates = [p for p in workdir.rglob(name) if p.stat().st_mtime >= since - 1]
        if candidates:
            return max(candidates, key=lambda p: p.stat().st_mtime)
    return None
