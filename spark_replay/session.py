"""The Spark session of a replay: local by default, a cluster when asked.

``local[*]`` unless a master is given (``--master``) or already configured: ``spark-submit
--master ... --conf ...`` starts the driver's JVM before this code runs and sets its properties
there, so the JVM is started (or, under spark-submit, joined) first and its ``SparkConf`` read.
What spark-submit set wins over every default below; a ``--master`` that contradicts its master
is refused.

On a cluster the replay ships its own code: a zip of the first-party packages (``spark_replay``,
``ref_impl`` for the coordinator's state table the checks use, ``trace_check`` for the errors and
the trace header check), added with ``addPyFile`` so that the executors import it ahead of any
installed copy. The executors' Python is the driver's interpreter (``spark.pyspark.python``, or
``PYSPARK_PYTHON``, when set, instead), which must have pyarrow and pandas. The staged Parquet
must be on a path the driver and every executor see: the same machine, or a shared filesystem
with ``--out`` (docs/replay.md, "On a cluster").

Settings, after measuring on 2 cores (docs/benchmarks.md): shuffle partitions at twice the cores
(Spark's default of 200 costs more in task overhead than the data on small machines), adaptive
execution on, the UI off, the driver bound to 127.0.0.1 in local mode and with a master on
127.0.0.1, and the driver's heap at a quarter of the memory (1 to 8 GiB; Spark's 1 GiB fails at
10M rows), unless ``PYSPARK_SUBMIT_ARGS`` or spark-submit says otherwise.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

from trace_check.errors import TxconformError

PACKAGE = Path(__file__).resolve().parent
# The packages the executors import: spark_replay.checks imports ref_impl.kafka.states, and
# spark_replay.staging imports trace_check.errors.
SHIPPED = ("spark_replay", "ref_impl", "trace_check")
LOOPBACK = ("127.0.0.1", "localhost")


def driver_memory_mib() -> int:
    """A quarter of the machine's memory, at least 1 GiB and at most 8 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        return 1024
    return max(1024, min(8192, total // 4))


def _local_cores(master: str) -> int:
    inside = master[len("local[") : -1] if master.startswith("local[") else "1"
    return (os.cpu_count() or 2) if inside == "*" else int(inside)


def shipped_code(tmp: Path) -> Path:
    """A zip of the packages the executors of a cluster import (``SHIPPED``, their .py files)."""
    target = tmp / "txconform_replay_code.zip"
    root = PACKAGE.parent
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in SHIPPED:
            for path in sorted((root / name).rglob("*.py")):
                zf.write(path, path.relative_to(root).as_posix())
    return target


def on_loopback(master: str) -> bool:
    """Whether ``master`` is a cluster manager on this machine's loopback (spark://127.0.0.1:7077)."""
    try:
        return urlsplit(master).hostname in LOOPBACK
    except ValueError:
        return False


@contextmanager
def _stderr_to(log: Path | None) -> Iterator[None]:
    """Point file descriptor 2 at ``log`` meanwhile: a JVM started inside inherits it."""
    if log is None:
        yield
        return
    log.parent.mkdir(parents=True, exist_ok=True)
    saved = os.dup(2)
    try:
        with log.open("ab") as f:
            os.dup2(f.fileno(), 2)
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def submitted() -> bool:
    """Whether spark-submit started this Python (its JVM, with spark-submit's settings, is running)."""
    return "PYSPARK_GATEWAY_PORT" in os.environ


def spark_session(master: str | None = None, app: str = "txconform-replay", log: Path | None = None) -> SparkSession:
    """A Spark session for a replay (see the module's docstring). With ``log``, what the JVM
    prints (its startup notices, Spark's warnings) goes to that file instead of stderr. An active
    session is reused as it is."""
    active = SparkContext._active_spark_context
    if active is not None:
        if master and master != active.master:
            raise TxconformError(f"--master {master}: this process already runs a Spark session on {active.master}")
        return SparkSession.builder.getOrCreate()
    under_submit = submitted()
    if not under_submit and (master is None or master.startswith("local") or on_loopback(master)):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # read when the JVM starts, just below
    if not under_submit and "PYSPARK_SUBMIT_ARGS" not in os.environ:
        # The driver's heap is fixed when its JVM starts, here. Spark's default of 1 GiB is too
        # small from about 10M rows (a join's broadcast, the collected examples); in local mode the
        # driver is also the executor. A quarter of the memory, between 1 and 8 GiB.
        os.environ["PYSPARK_SUBMIT_ARGS"] = f"--driver-memory {driver_memory_mib()}m pyspark-shell"
    with _stderr_to(log):
        SparkContext._ensure_initialized()  # starts the JVM, or joins spark-submit's
    conf = SparkConf()  # the JVM's: what spark-submit set, if it ran
    preset = conf.get("spark.master", None) if under_submit else None
    if master and preset and master != preset:
        raise TxconformError(f"--master {master}: spark-submit already set the master to {preset}; give it in one place")
    chosen = master or preset or "local[*]"
    local = chosen.startswith("local")
    cores = _local_cores(chosen) if local else int(conf.get("spark.cores.max", "2"))
    defaults = {
        "spark.sql.shuffle.partitions": str(max(2, 2 * cores)),
        "spark.sql.adaptive.enabled": "true",
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
    }
    if local or on_loopback(chosen):
        defaults.update({"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"})
    # The executors' Python: spark-submit's choice, else the driver's own (its venv has pyarrow,
    # pandas and pyspark). pyspark takes it from PYSPARK_PYTHON when the context starts.
    python = conf.get("spark.pyspark.python", None) or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    if not local:
        defaults["spark.pyspark.python"] = python
    builder = SparkSession.builder.appName(app).master(chosen)
    for key, value in defaults.items():
        if not conf.contains(key):
            builder = builder.config(key, value)
    with _stderr_to(log):
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    # The staged tables are local files (pyarrow writes some on the driver): a path Spark would
    # resolve on another default filesystem (HDFS: relative to the user's home there) is not them.
    default_fs = str(spark.sparkContext._jsc.hadoopConfiguration().get("fs.defaultFS") or "file:///")
    if not default_fs.startswith("file:"):
        spark.stop()
        raise TxconformError(
            f"the cluster's default filesystem is {default_fs}; replay stages its tables as local files: "
            "run it with --conf spark.hadoop.fs.defaultFS=file:/// and --out on a filesystem every executor mounts"
        )
    if not local:
        ship = Path(tempfile.mkdtemp(prefix="txconform-ship-"))
        atexit.register(shutil.rmtree, ship, True)
        spark.sparkContext.addPyFile(str(shipped_code(ship)))
    return spark


@contextmanager
def replay_spark(master: str | None = None, log: Path | None = None) -> Iterator[Callable[[], SparkSession]]:
    """A session factory for one replay (``run_replay(spark_factory=...)``): the session is made
    at the first call, and stopped on exit if it was made here (not when one was already active,
    as in a test module's shared session or a script that made its own)."""
    made: list[SparkSession] = []
    existed = SparkContext._active_spark_context is not None

    def factory() -> SparkSession:
        if not made:
            made.append(spark_session(master, log=log))
        return made[0]

    try:
        yield factory
    finally:
        if made and not existed:
            with _stderr_to(log):
                made[0].stop()
