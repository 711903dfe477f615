"""The TLC runs tests share (tests/shared_runs.py) are shared only by the same model: a test that
changes the spec, the configuration or TLC's options gets a run of its own."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest
from shared_runs import SharedTlcRuns

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
