"""The Spark session of a replay: local by default, a cluster when asked.

``local[*]`` unless a master is given (``--master``) or already configured (``spark-submit
--master ...`` sets ``spark.master`` before this code runs, and wins). On a cluster the replay
ships its own code to the executors (``addPyFile`` of a zip of ``spark_replay``), so the workers
need only pyspark and pyarrow.

Settings, after measuring on 2 cores (docs/benchmarks.md): shuffle partitions at twice the cores
(Spark's default of 200 costs more in task overhead than the data on small machines), adaptive
execution on, the UI off, the driver bound to 127.0.0.1 in local mode.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Optional

from pyspark import SparkConf
from pyspark.sql import SparkSession

PACKAGE = Path(__file__).resolve().parent


def _local_cores(master: str) -> int:
    inside = master[len("local[") : -1] if master.startswith("local[") else "1"
    return (os.cpu_count() or 2) if inside == "*" else int(inside)


def shipped_code(tmp: Path) -> Path:
    """A zip of the spark_replay package, for the executors of a cluster."""
    target = tmp / "spark_replay.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(PACKAGE.rglob("*.py")):
            zf.write(path, path.relative_to(PACKAGE.parent).as_posix())
    return target


def spark_session(master: Optional[str] = None, app: str = "txconform-replay", log: Optional[Path] = None) -> SparkSession:
    """A Spark session for a replay (see the module's docstring). With ``log``, what the JVM
    prints (its startup notices, Spark's warnings) goes to that file instead of stderr."""
    conf = SparkConf()
    chosen = master or conf.get("spark.master", None) or "local[*]"
    local = chosen.startswith("local")
    cores = _local_cores(chosen) if local else int(conf.get("spark.cores.max", "2"))
    builder = (
        SparkSession.builder.appName(app)
        .master(chosen)
        .config("spark.sql.shuffle.partitions", str(max(2, 2 * cores)))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
    )
    if local:
        # The executors' Python is the driver's (its venv has pyarrow and this package).
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if log is None:
        spark = builder.getOrCreate()
    else:
        # The JVM inherits file descriptor 2 when it starts: point it at the log meanwhile.
        log.parent.mkdir(parents=True, exist_ok=True)
        saved = os.dup(2)
        try:
            with log.open("ab") as f:
                os.dup2(f.fileno(), 2)
                spark = builder.getOrCreate()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
    spark.sparkContext.setLogLevel("ERROR")
    if not local:
        spark.sparkContext.addPyFile(str(shipped_code(Path(tempfile.mkdtemp(prefix="txconform-ship-")))))
    return spark
