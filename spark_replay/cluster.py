"""A Spark standalone cluster on 127.0.0.1: one master and one or more workers, from the installed pyspark.

For trying ``txconform replay --master`` and for the cluster test (tests/test_replay_cluster.py).
The pyspark wheel has ``bin/spark-class`` but not the ``sbin/start-master.sh`` family, so the
master and the worker are started with ``spark-class`` in the foreground, each in its own process
group, and stopped by their own process ids: SIGTERM to the group, a bounded wait, then SIGKILL.
The worker's group holds the executors it launched and their Python workers, so they go with it.

Ports are found by binding port 0 on 127.0.0.1; readiness is a bounded loop (a number of polls
and a deadline) on the master's port and on its JSON status page, which lists alive workers. The
processes write their output to ``logs/master.log`` and ``logs/worker.log`` (``worker-2.log``, ...
for more workers); the workers' work directory (one sub-directory per application and executor,
with the executor's stdout and stderr) is ``work/`` under a temporary directory. Nothing listens
beyond 127.0.0.1.

    python -m spark_replay.cluster [--logs DIR] [--workers N]   # start, print the master URL, stop on Ctrl-C
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"


class ClusterError(RuntimeError):
    """The cluster did not start: the message names the process and the end of its log."""


def spark_home() -> Path:
    """The installed pyspark's Spark home (it holds ``bin/spark-class`` and ``jars/``)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now (bind port 0, read it, close)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return "(no log)"
    return "\n".join(text[-lines:])


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 (http://127.0.0.1 only)
        return json.load(r)


def stop_process(proc: subprocess.Popen[bytes], grace: float = 15.0) -> None:
    """Stop ``proc`` (started with its own session, so its process group id is its pid): SIGTERM to
    the group, wait up to ``grace`` seconds, SIGKILL to the group if it is still there, reap it,
    then SIGKILL what is left of the group and wait (bounded) until it is gone."""
    pgid = proc.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, sig)
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        break
    # the leader is gone; what it left in its group (an executor, a Python worker) goes too
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    for _ in range(100):  # at most about 10 s for the kernel to finish them
        if not group_alive(pgid):
            return
        time.sleep(0.1)


def group_alive(pgid: int) -> bool:
    """Whether any process of process group ``pgid`` is still running."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@attrs.define
class LocalCluster:
    """A running master and worker (see the module's docstring); ``stop()`` ends both."""

    master_url: str
    master_ui: str
    worker_ui: str
    logs: Path
    work: Path
    master: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]]
    tmp: Path | None = None  # a folder of ours to remove at stop
    _stopped: bool = attrs.field(default=False, repr=False, init=False)

    @property
    def worker(self) -> subprocess.Popen[bytes]:
        """The first worker."""
        return self.workers[0]

    @property
    def pids(self) -> list[int]:
        return [self.master.pid, *(w.pid for w in self.workers)]

    def status(self) -> Any:
        """The master's JSON status page (workers, active and completed applications)."""
        return _json(f"{self.master_ui}/json/")

    def executor_dirs(self) -> list[Path]:
        """The worker's executor directories, ``work/APP_ID/EXECUTOR_ID`` (each has stdout, stderr)."""
        return sorted(p for app in self.work.glob("app-*") for p in app.iterdir() if p.is_dir())

    def stop(self) -> None:
        """Stop the workers (and their executors), then the master, each by its process id."""
        if self._stopped:
            return
        self._stopped = True
        for proc in (*self.workers, self.master):
            stop_process(proc)

    def cleanup(self) -> None:
        """Stop, then remove the temporary work directory (the logs stay)."""
        self.stop()
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _spawn(cls: str, args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    cmd = [str(spark_home() / "bin" / "spark-class"), cls, *args]
    with log.open("ab") as f:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def _wait(what: str, ready: Callable[[], bool], procs: list[tuple[str, subprocess.Popen[bytes], Path]], timeout: float, polls: int) -> None:
    """Poll ``ready`` at most ``polls`` times and for at most ``timeout`` seconds; fail at once if a
    process exits."""
    deadline = time.monotonic() + timeout
    pause = timeout / polls
    for _ in range(polls):
        for name, proc, log in procs:
            if proc.poll() is not None:
                raise ClusterError(f"the Spark {name} exited with status {proc.returncode}; the end of {log}:\n{_tail(log)}")
        try:
            if ready():
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() >= deadline:
            break
        time.sleep(pause)
    name, _, log = procs[-1]
    raise ClusterError(f"{what} not within {timeout:.0f} s; the end of {log}:\n{_tail(log)}")


def start_local_cluster(
    logs: Path | None = None,
    cores: int = 1,
    memory: str = "1g",
    timeout: float = 60.0,
    env: dict[str, str] | None = None,
    workers: int = 1,
) -> LocalCluster:
    """Start a master and ``workers`` workers (each of ``cores`` cores and ``memory``) on 127.0.0.1
    and wait until every worker is registered.

    ``logs`` keeps ``master.log`` and ``worker.log`` (default: a ``logs`` directory beside the work
    directory, under a new temporary directory). ``env`` replaces the processes' environment (the
    current one by default); ``SPARK_HOME`` and ``SPARK_LOCAL_IP`` are set in it either way. If
    anything fails, what was started is stopped before the error is raised."""
    if workers < 1:
        raise ValueError(f"workers: {workers}; a cluster has at least one")
    tmp = Path(tempfile.mkdtemp(prefix="txconform-cluster-"))
    logs = logs or tmp / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    work = tmp / "work"
    work.mkdir()
    penv = dict(os.environ if env is None else env)
    penv.update(SPARK_HOME=str(spark_home()), SPARK_LOCAL_IP=HOST, SPARK_WORKER_DIR=str(work))
    # no REST submission server: it would listen on a fixed port (6066)
    penv["SPARK_MASTER_OPTS"] = (penv.get("SPARK_MASTER_OPTS", "") + " -Dspark.master.rest.enabled=false").strip()
    port, ui = free_port(), free_port()
    master_log = logs / "master.log"
    url = f"spark://{HOST}:{port}"
    master_ui = f"http://{HOST}:{ui}"
    started: list[subprocess.Popen[bytes]] = []
    worker_uis: list[str] = []
    try:
        master = _spawn(MASTER_CLASS, ["--host", HOST, "--port", str(port), "--webui-port", str(ui)], master_log, penv)
        started.append(master)
        procs = [("master", master, master_log)]
        _wait(f"the Spark master on {url}", lambda: _json(f"{master_ui}/json/").get("status") == "ALIVE", procs, timeout, polls=int(timeout * 4))
        for n in range(1, workers + 1):
            worker_port, worker_ui = free_port(), free_port()
            worker_log = logs / ("worker.log" if n == 1 else f"worker-{n}.log")
            args = [url, "--host", HOST, "--port", str(worker_port), "--webui-port", str(worker_ui), "--cores", str(cores),
                    "--memory", memory, "--work-dir", str(work)]
            worker = _spawn(WORKER_CLASS, args, worker_log, penv)
            started.append(worker)
            procs.append((f"worker {n}", worker, worker_log))
            worker_uis.append(f"http://{HOST}:{worker_ui}")

        def registered() -> bool:
            alive: int = sum(w.get("state") == "ALIVE" for w in _json(f"{master_ui}/json/").get("workers", []))
            return alive >= workers

        _wait(f"{workers} worker(s) registered with {url}", registered, procs, timeout, polls=int(timeout * 4))
    except BaseException:
        for proc in reversed(started):
            stop_process(proc)
        raise
    return LocalCluster(url, master_ui, worker_uis[0], logs, work, master, started[1:], tmp=tmp)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_replay.cluster", description="Start a Spark master and workers on 127.0.0.1 until Ctrl-C.")
    parser.add_argument("--logs", type=Path, default=None, help="directory for master.log and worker.log")
    parser.add_argument("--cores", type=int, default=1)
    parser.add_argument("--memory", default="1g")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args(argv)
    stops = {signal.SIGINT, signal.SIGTERM}
    signal.pthread_sigmask(signal.SIG_BLOCK, stops)  # delivered to sigwait below, not as exceptions
    cluster = start_local_cluster(args.logs, cores=args.cores, memory=args.memory, workers=args.workers)
    try:
        print(f"master {cluster.master_url} (status {cluster.master_ui}); logs in {cluster.logs}; Ctrl-C stops it", flush=True)
        signal.sigwait(stops)
    finally:
        cluster.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
