from pathlib import Path
from typing import Any, Callable, Optional

import pytest
from shared_runs import SharedTlcRuns, shares_runs


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runs",
        type=int,
        default=None,
        help="hypothesis examples per generated-run test (CI default: a fixed small number)",
    )


@pytest.fixture(scope="session")
def hypothesis_runs(request: pytest.FixtureRequest) -> int:
    return request.config.getoption("--runs") or 10


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Optional[Any]:
    """Under ``pytest -n N`` (``--dist load``, the default): distribute the tests one by one, except
    those that share TLC runs (shared_runs.SHARING_TESTS), which all go to one worker, since the
    runs are shared within a process. (xdist's ``--dist loadgroup`` would do it with markers, but
    under pytest 9 its groups are ignored: it renames the tests by an attribute pytest 9 dropped.)"""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SharedTlcScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "shared TLC runs" if shares_runs(nodeid) else nodeid

    return SharedTlcScheduling(config, log)


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
