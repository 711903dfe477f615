import os
import shutil
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import tiers
from shared_runs import SharedTlcRuns

from trace_check.engines.tlc_cache import CACHE_ENV

# the txconform_broker fixture (txconform serve) and the real Kafka brokers (probe/testing.py), as users enable them
pytest_plugins = ["trace_check.testing", "probe.testing"]

# One TLC run per model for the whole test session, whichever process asks: the tests' own runs,
# the xdist workers (they inherit this environment) and the CLI the docs tests start
# (trace_check/engines/tlc_cache.py, RunCache). Set here, in the process that starts the workers.
_CACHE_OWNED = CACHE_ENV not in os.environ
if _CACHE_OWNED:
    os.environ[CACHE_ENV] = str(Path(tempfile.gettempdir()) / f"txconform-tlc-runs-{uuid.uuid4().hex[:12]}")


def pytest_sessionfinish(session: pytest.Session) -> None:
    if _CACHE_OWNED and not hasattr(session.config, "workerinput"):  # the controller, once the workers are done
        shutil.rmtree(os.environ[CACHE_ENV], ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tier",
        choices=("all", "ci"),
        default="all",
        help="ci: the core and one shard of the other tests, what make test (CI) runs (tests/tiers.py); all: every test (make test-all)",
    )
    parser.addoption(
        "--runs",
        type=int,
        default=None,
        help="hypothesis examples per generated-run test (CI default: a fixed small number)",
    )


@pytest.fixture(scope="session")
def hypothesis_runs(request: pytest.FixtureRequest) -> int:
    return request.config.getoption("--runs") or 10


# Tests that take a minute or more (tests/ durations in CI's log), started first so that two
# workers end together instead of one waiting on the other's last long test. Order only.
LONG_FIRST = (
    "tests/test_tlc.py::test_a_resumed_run_finds_exactly_the_states_of_an_uninterrupted_one",
    "tests/test_docs.py::",
    "tests/test_replay_cluster.py::",
)


def _shard(config: pytest.Config) -> int | None:
    return tiers.this_shard() if config.getoption("--tier") == "ci" else None


def pytest_report_header(config: pytest.Config) -> str | None:
    if config.getoption("--tier") != "ci":
        return None
    shard = _shard(config)
    return (f"tier ci: the core and shard {shard} of {tiers.SHARDS} of the other tests (tests/tiers.py); make test-all runs them all"
            if shard is not None else "tier ci: every shard (TXCONFORM_SHARD=all)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept, left = tiers.select(items, _shard(config))
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept
    items.sort(key=lambda item: 0 if item.nodeid.startswith(LONG_FIRST) else 1)  # stable: the rest keep their order


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any | None:
    """Under ``pytest -n N`` (``--dist load``, the default): distribute the tests one by one, except
    those that share the local Spark session (LOCAL_SPARK_MODULES), which go to one worker, since
    the session is the process's. (The tests that share TLC runs go to either worker: a run one
    worker has under way or has done is read by the other from the run cache, tlc_cache.RunCache.) (xdist's ``--dist loadgroup`` would do it with markers, but
    under pytest 9 its groups are ignored: it renames the tests by an attribute pytest 9 dropped.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.partition("::")[0] in LOCAL_SPARK_MODULES:
                return "local Spark session"
            if nodeid.partition("::")[0] in CASSANDRA_MODULES:
                return "Cassandra cluster"
            if nodeid.partition("::")[0] in DOCS_SITE_MODULES:
                return "docs site"
            return nodeid

    return GroupScheduling(config, log)


# The modules whose tests share the session's real Cassandra (probe/testing.py
# txconform_cassandra_cluster): one worker, so that one cluster is up, not one per worker.
CASSANDRA_MODULES = {"tests/test_cassandra_target.py"}

# The modules whose tests share one build of the docs site and one Chromium run (module fixtures).
DOCS_SITE_MODULES = {"tests/test_docs_site.py"}

# The modules whose tests use the session's local Spark (``local_spark``): one JVM for all of them.
LOCAL_SPARK_MODULES = {
    "tests/test_replay.py",
    "tests/test_replay_generate.py",
    "tests/test_replay_jepsen.py",
    "tests/test_replay_plans.py",
    "tests/test_replay_cycles.py",
    "tests/test_probe_checks.py",
    "tests/test_probe_kafka.py",
    "tests/test_replay_real_kafka.py",
    "tests/test_java_client.py",  # not Spark: the real Kafka broker they share with test_probe_kafka.py (probe.testing)
    "tests/test_serve_java.py",
    "tests/test_serve_java_ctp.py",
}


@pytest.fixture(scope="session")
def local_spark() -> Iterator[Any]:
    """One local[2] Spark session for every replay test of the process (a session costs 10 s or
    more, and a JVM of its own); stopped when the session ends."""
    pytest.importorskip("pyspark")
    from spark_replay.session import spark_session

    session = spark_session("local[2]")
    yield session
    session.stop()


@pytest.fixture(scope="session")
def shared_tlc(tmp_path_factory: pytest.TempPathFactory) -> SharedTlcRuns:
    """One TLC run per model for the whole session (tests/shared_runs.py)."""
    return SharedTlcRuns(tmp_path_factory.mktemp("shared-tlc"))


@pytest.fixture
def leave_checkpoint() -> Callable[[Path], None]:
    """Make a working directory look as a TLC run that completed a checkpoint leaves it: the state
    files (empty: nothing reads them before TLC does) and the log lines that name the run's -fp and
    the checkpoint's time, 2026-11-23 05:40:41."""

    def leave(work: Path) -> None:
        states = work / "states" / "26-11-23-03-40-21"
        states.mkdir(parents=True)
        for name in ("queue.chkpt", "vars.chkpt"):
            (states / name).write_bytes(b"")
        (work / "tlc.log").write_text(
            "Running breadth-first search Model-Checking with fp 68 and seed -881 with 2 workers\n"
            "Checkpointing completed at (2026-11-23 05:40:41)\n"
        )

    return leave
