"""txconform replay on a real Spark standalone cluster: a master and one worker on 127.0.0.1.

The cluster is started from the installed pyspark (spark_replay/cluster.py) once for the module
and stopped by its process ids in the fixture's teardown, even when a test fails; the teardown
then checks that no process of either is left. The master and worker run without PYTHONPATH, so
the executors can only import the replay's code from what the driver ships.

- ``txconform replay --master spark://... --checks P1,P4,C1`` in a subprocess reports what local
  mode reports on a reference-broker run with the zoo bug ``lso_inclusive`` (tests/test_replay.py):
  exit status 1, C1 DIRTY_READ at event 45, P1 and P4 pass; the worker ran the executor.
- ``spark-submit --master ... --conf ...`` of a script that runs the same CLI: spark-submit's
  master and conf win, the executors import the shipped zip and run the driver's Python.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from spark_replay.cluster import LocalCluster, group_alive, spark_home, start_local_cluster

pytestmark = [pytest.mark.spark, pytest.mark.spark_cluster]

ROOT = Path(__file__).resolve().parents[1]
APP = "txconform-replay"
# What local mode reports on this run (tests/test_replay.py, docs/replay.md), check by check.
LOCAL = {"P1": "pass", "P2": "pass", "P3": "pass", "P4": "pass", "P5": "pass", "P7": "pass", "C1": "violated"}
# On the cluster (one core, 1 GiB), a check of each kind of plan: the partition pass (P1, C1, with
# the code shipped to the executor for its pandas function) and a join with the coordinator's
# records (P4). Every check's local verdict on this trace is tested in tests/test_replay.py.
ON_CLUSTER = ("P1", "P4", "C1")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalCluster]:
    logs = tmp_path_factory.mktemp("spark-cluster-logs")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    c = start_local_cluster(logs, cores=1, memory="1g", timeout=120.0, env=env)
    try:
        yield c
    finally:
        c.cleanup()
        for pid in c.pids:
            assert not group_alive(pid), f"process group {pid} survived the stop"
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
        assert c.master.returncode is not None and c.worker.returncode is not None


@pytest.fixture(scope="module")
def lso_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    head, events = simulate(Workload.parse("transfer"), Faults.parse("none"), 0, bugs=("lso_inclusive",))
    path = tmp_path_factory.mktemp("traces") / "lso-inclusive.jsonl"
    write_trace(path, head, events)
    return path


def driver_env() -> dict[str, str]:
    """The driver runs this checkout's code, with this interpreter."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)
    env["PYSPARK_PYTHON"] = sys.executable
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def json_doc(stdout: str) -> Any:
    """The report that --json printed (under spark-submit the progress lines share stdout)."""
    lines = stdout.splitlines()
    start = lines.index("{")
    end = len(lines) - 1 - lines[::-1].index("}")
    return json.loads("\n".join(lines[start : end + 1]))


def assert_lso_report(doc: Any, checks: dict[str, str]) -> None:
    assert doc["verdict"] == "violated"
    statuses = {c["id"]: c["status"] for c in doc["checks"]}
    assert {k: v for k, v in statuses.items() if k in checks} == checks
    # a check added later (P6 needs .txnindex files, which traces lack) must not be violated either
    assert all(v != "violated" for k, v in statuses.items() if k not in checks), statuses
    c1 = next(c for c in doc["checks"] if c["id"] == "C1")
    assert c1["by_kind"] == {"DIRTY_READ": 1}
    first = c1["first"]
    assert (first["kind"], first["event"], first["topic"], first["partition"], first["offset"]) == ("DIRTY_READ", 45, "data", 1, 2)


def executors_of_new_apps(c: LocalCluster, before: set[str]) -> list[Path]:
    return [d for d in c.executor_dirs() if d.parent.name not in before]


def ran_tasks(executor: Path) -> bool:
    return "Running task" in (executor / "stderr").read_text(encoding="utf-8", errors="replace")


def test_replay_with_master_reports_what_local_mode_does(cluster: LocalCluster, lso_trace: Path, tmp_path: Path) -> None:
    before = {d.parent.name for d in cluster.executor_dirs()}
    t0 = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "trace_check.cli", "replay", "--master", cluster.master_url, "--checks", ",".join(ON_CLUSTER), "--json",
         "--out", "out", str(lso_trace)],
        cwd=tmp_path,  # a relative --out: the driver qualifies it, the executors write where it says
        env=driver_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    took = time.monotonic() - t0
    assert run.returncode == 1, f"{run.stderr[-3000:]}\n(spark log: {tmp_path / 'out' / 'spark.log'})"
    assert_lso_report(json.loads(run.stdout), {k: LOCAL[k] for k in ON_CLUSTER})
    assert (tmp_path / "out" / "violations" / "C1").is_dir()
    # the work ran on the worker: it launched an executor for the replay, which ran tasks
    worker_log = (cluster.logs / "worker.log").read_text(encoding="utf-8", errors="replace")
    executors = executors_of_new_apps(cluster, before)
    assert len(executors) == 1 and ran_tasks(executors[0]), f"no executor of the worker ran the replay ({cluster.work})"
    assert f"Asked to launch executor {executors[0].parent.name}/{executors[0].name} for {APP}" in worker_log
    # the session was stopped: the master counts the application as completed, not active
    app = executors[0].parent.name
    for _ in range(50):  # the master hears of the stop asynchronously: at most about 10 s
        status = cluster.status()
        if app in {a["id"] for a in status["completedapps"]} and not status["activeapps"]:
            break
        time.sleep(0.2)
    assert app in {a["id"] for a in status["completedapps"]} and not status["activeapps"], status
    print(f"replay --master: {took:.1f} s")


PROBE = """\
import json, sys
from spark_replay.session import spark_session

spark = spark_session()  # no master given: spark-submit's
sc = spark.sparkContext


def where(_):
    import sys

    import ref_impl.kafka.states
    import spark_replay.checks
    import trace_check.errors

    yield {"modules": [spark_replay.checks.__file__, ref_impl.kafka.states.__file__, trace_check.errors.__file__], "python": sys.executable}


executor = sc.parallelize([0], 1).mapPartitions(where).collect()[0]
probe = {"master": sc.master, "partitions": sc.getConf().get("spark.sql.shuffle.partitions"), "executor": executor}
print("PROBE " + json.dumps(probe), flush=True)
from trace_check.cli.main import main

conflict = main(["replay", "--master", "local[1]", *sys.argv[1:]])
print("CONFLICT", conflict, flush=True)
status = main(["replay", *sys.argv[1:]])
spark.stop()
sys.exit(status)
"""


@pytest.mark.long  # a second application on the cluster, 107 s in CI's log: outside CI's core (tests/tiers.py)
def test_spark_submit_master_and_conf_win_and_the_code_is_shipped(cluster: LocalCluster, lso_trace: Path, tmp_path: Path) -> None:
    entry = tmp_path / "entry.py"
    entry.write_text(PROBE, encoding="utf-8")
    before = {d.parent.name for d in cluster.executor_dirs()}
    submit = spark_home() / "bin" / "spark-submit"
    run = subprocess.run(
        [str(submit), "--master", cluster.master_url, "--conf", "spark.sql.shuffle.partitions=3", str(entry), "--checks", "C1", "--json", str(lso_trace)],
        cwd=tmp_path,
        env=driver_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 1, run.stdout[-3000:] + run.stderr[-3000:]
    probe = json.loads(next(line for line in run.stdout.splitlines() if line.startswith("PROBE "))[len("PROBE ") :])
    assert probe["master"] == cluster.master_url
    assert probe["partitions"] == "3"
    assert probe["executor"]["python"] == sys.executable
    for module in probe["executor"]["modules"]:
        assert "txconform_replay_code.zip/" in module, f"{module} was not imported from the shipped code"
    # a --master other than the running session's is refused in one line, exit status 2
    assert "CONFLICT 2" in run.stdout
    assert "--master local[1]: this process already runs a Spark session on spark://" in run.stdout
    assert_lso_report(json_doc(run.stdout), {"C1": "violated"})
    executors = executors_of_new_apps(cluster, before)
    assert len(executors) == 1 and ran_tasks(executors[0])


def test_a_cluster_of_two_workers_registers_both_and_stops_every_process(tmp_path: Path) -> None:
    """``start_local_cluster(workers=2)``, as ``scripts/bench_replay.py --cluster 2`` starts it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    c = start_local_cluster(tmp_path / "logs", cores=1, memory="512m", timeout=120.0, env=env, workers=2)
    try:
        alive = [w for w in c.status()["workers"] if w["state"] == "ALIVE"]
        assert len(alive) == 2 and {w["cores"] for w in alive} == {1}
        assert len(c.pids) == 3 and (tmp_path / "logs" / "worker-2.log").is_file()
    finally:
        c.cleanup()
    for pid in c.pids:
        assert not group_alive(pid), f"process group {pid} survived the stop"
    with pytest.raises(ValueError, match="at least one"):
        start_local_cluster(tmp_path / "none", workers=0)
