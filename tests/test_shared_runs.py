"""The TLC runs tests share (tests/shared_runs.py) are shared only by the same model: a test that
changes the spec, the configuration or TLC's options gets a run of its own."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import attrs
import pytest
from shared_runs import SharedTlcRuns, shares_runs

from trace_check.models.result import CheckTask, Outcome, TlcOptions

FIXTURES = Path(__file__).parent / "fixtures" / "tlc"

pytestmark = pytest.mark.tlc


def counter(spec_dir: Path) -> CheckTask:
    return CheckTask(name="counter", spec_file=spec_dir / "Counter.tla", constants={"Limit": 4, "Names": ["a", "b"]},
                     invariants=("Small",), timeout=120)


def test_one_run_per_model_and_another_for_anything_that_changes_it(tmp_path: Path) -> None:
    spec = tmp_path / "spec"
    shutil.copytree(FIXTURES, spec)
    shared = SharedTlcRuns(tmp_path / "runs")
    task = counter(spec)

    first = shared.run(task)
    assert first.outcome is Outcome.HOLDS, first.message
    assert shared.run(counter(spec)) is first and shared.runs == 1  # an equal task, built anew

    for changed in (
        attrs.evolve(task, constants={"Limit": 3, "Names": ["a", "b"]}),
        attrs.evolve(task, invariants=("Small", "NotBool")),
        attrs.evolve(task, tlc=TlcOptions(workers=2)),
        attrs.evolve(task, timeout=60),
    ):
        assert shared.run(changed) is not first
    assert shared.runs == 5

    # a module beside the spec changed (by a test, or by an edit during the session)
    (spec / "Counter.tla").write_text((FIXTURES / "Counter.tla").read_text() + "\\* edited\n")
    assert shared.run(task) is not first and shared.runs == 6
    assert len({r.log_file for r in shared.results.values()}) == 6, "every run has a working directory of its own"


def test_every_test_that_shares_runs_is_kept_on_one_xdist_worker() -> None:
    """Under pytest-xdist the runs are shared only within a worker: a test that asks for the
    shared_tlc fixture but is not in SHARING_TESTS would run TLC again on another worker. (A
    fixture that asks for it, as test_docs's does, needs its whole module listed.)"""
    for path in sorted(Path(__file__).parent.glob("test_*.py")):
        if path.name == Path(__file__).name:
            continue
        for name, params in re.findall(r"^def (\w+)\(([^)]*)\)", path.read_text(), flags=re.M):
            if "shared_tlc" in params:
                nodeid = f"tests/{path.name}::{name}" if name.startswith("test_") else f"tests/{path.name}::<any test>"
                assert shares_runs(nodeid), f"{nodeid} uses shared_tlc: add it to shared_runs.SHARING_TESTS"
    assert not shares_runs("tests/test_reduced_view.py::test_reduced_next_reaches_every_visible_state[ctp]")
    assert shares_runs("tests/test_reduced_view.py::test_reduced_view_finds_the_same_violation[kafka_tv1_hanging]")
    # a docs page with model-check blocks shares the runs; one without runs elsewhere
    assert shares_runs("tests/test_docs.py::test_generated_blocks_match_a_fresh_run[docs/kafka.md]")
    assert not shares_runs("tests/test_docs.py::test_generated_blocks_match_a_fresh_run[docs/probe.md]")
