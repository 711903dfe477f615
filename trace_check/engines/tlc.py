"""Run TLC as a child process: its command line, the process (a time budget, a stop event, a clean
kill), and a task from its working directory to its CheckResult.

The rest is beside this module: the Java and the jar (``tlc_tools``), the working directory, its
``.cfg`` and TLC's checkpoints (``tlc_workdir``), a finished run kept for the next one that asks
(``tlc_cache``), and reading what TLC says (``tlc_output``).
"""

from __future__ import annotations

import io
import os
import subprocess
import threading
import time
from pathlib import Path

import attrs

from trace_check.engines.process import kill_process_group
from trace_check.engines.tlc_cache import RunCache
from trace_check.engines.tlc_output import OutputReader, interpret
from trace_check.engines.tlc_tools import find_java, find_tla2tools, heap_option, java_options
from trace_check.engines.tlc_workdir import Checkpoint, prepare_workdir, resumable_checkpoint
from trace_check.errors import EngineUnavailable
from trace_check.models.result import Checkpointing, CheckResult, CheckTask, Outcome, ProgressCallback

FP_INDEX = 7  # the fingerprint polynomial of every fresh run (TLC's -fp)


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
    reader = OutputReader(start, on_progress)
    cache = RunCache.from_env(task, workdir, cmd) if checkpoint is None and checkpointing.every_minutes is None else None
    if cache is None:
        return _run_process(task, cmd, workdir, log_file, reader, start, checkpoint, stop)[0]
    with cache.locked():  # another process running this model: wait for its result
        hit = cache.load()
        if hit is not None:
            returncode, wall, text = hit
            with open(log_file, "w", encoding="utf-8") as log:
                reader.consume(io.StringIO(text), log)
            return interpret(task, reader, returncode, False, wall, tuple(cmd), log_file)
        result, returncode, timed_out = _run_process(task, cmd, workdir, log_file, reader, start, checkpoint, stop)
        if not timed_out and result.outcome is not Outcome.ENGINE_CRASH:
            cache.store(returncode, result.wall_time, log_file)
        return result


def _run_process(task: CheckTask, cmd: list[str], workdir: Path, log_file: Path, reader: OutputReader, start: float,
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
    result = interpret(task, reader, returncode, timed_out, wall, tuple(cmd), log_file)
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
