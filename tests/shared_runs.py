"""TLC runs shared by the tests of one pytest session.

tests/test_models.py checks every registered model of the CI tier; tests/test_docs.py reruns the
commands of the docs, most of which model-check some of the same models; tests/test_reduced_view.py
compares violating models under the exact and the reduced views, the exact one being the registered
model itself. Each of them asks ``SharedTlcRuns.run``, which runs TLC once per model and hands every
later caller the same result: each test still checks what it checks, on one run.

The runs are shared within one process: under pytest-xdist (``make test`` runs two workers),
tests/conftest.py sends the tests of SHARING_TESTS to one worker.

A run is reused only for the same model: the same spec modules (by content), the same .cfg, the
same TLC options and the same time budget. Anything else runs TLC again, in a working directory of
its own.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import attrs

from trace_check.engines import tlc, tlc_workdir
from trace_check.models.result import CheckResult, CheckTask, ProgressCallback


def model_key(task: CheckTask) -> tuple:
    """What TLC's answer for ``task`` depends on: every module beside the spec (TLC reads the ones it
    extends from there), the configuration, and the options of the command line."""
    modules = tuple(
        (module.name, hashlib.sha256(module.read_bytes()).hexdigest())
        for module in sorted(task.spec_file.parent.glob("*.tla"))
    )
    options = (task.module, task.tlc.workers, task.tlc.check_deadlock, task.timeout)
    return modules, tlc_workdir.config_text(task), options


# The tests that share runs, by module or by test function (tests/conftest.py keeps them on one
# pytest-xdist worker; the other tests of test_reduced_view run no registered model, and are free
# to run on the other worker).
SHARING_TESTS = (
    "tests/test_models.py",
    "tests/test_docs.py",
    "tests/test_reduced_view.py::test_reduced_view_finds_the_same_violation",
    "tests/test_reduced_view.py::test_the_reduction_explores_fewer_states",
)


ROOT = Path(__file__).resolve().parents[1]
DOCS_TEST = "tests/test_docs.py::test_generated_blocks_match_a_fresh_run"


def shares_runs(nodeid: str) -> bool:
    """Whether the test of pytest node id ``nodeid`` is one of SHARING_TESTS. The docs test of a
    page without a model-check block runs no TLC model, so it is free to run on another worker."""
    module, _, rest = nodeid.partition("::")
    function, _, param = rest.partition("[")
    if f"{module}::{function}" == DOCS_TEST and param.endswith("]"):
        page = ROOT / param[:-1]
        if page.is_file() and "<!-- txconform: model-check" not in page.read_text(encoding="utf-8"):
            return False
    return module in SHARING_TESTS or f"{module}::{function}" in SHARING_TESTS


# The registered models whose TLC run takes a minute or more on a loaded 2-core machine (CI's log:
# kafka_tv2_safe_no_loss 164 s, resharding_txn_offset_check 208 s, kafka_tv1_safe_no_loss 67 s).
# Their tests, and the docs blocks that model-check them, carry the marker `long`: `make test-all`
# and `make models` check them, `make test` (CI) does not.
LONG_MODELS = frozenset({"kafka_tv2_safe_no_loss", "kafka_tv1_safe_no_loss", "resharding_txn_offset_check"})


# A registered model's ``timeout`` is its user's budget on a machine of its own. In the test session it
# is only a guard against a run that hangs: a model's verdict and pins are the claim, and on a loaded
# 2-core CI machine, where the other pytest worker shares the cores, a 40-second model ran past its
# 60-second budget (kafka_fence_failed_append, stop 58's CI run: 1,371 of its 16,284 states). The
# shared runs get at least this budget.
GUARD_SECONDS = 600.0


class SharedTlcRuns:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.results: dict[tuple, CheckResult] = {}
        self.lock = threading.Lock()  # ``txconform model-check`` in a docs test runs models on threads

    def run(self, task: CheckTask, on_progress: ProgressCallback | None = None) -> CheckResult:
        """TLC's result for ``task``: from the run of an earlier test of the same model, or from a new run."""
        key = model_key(task)
        with self.lock:  # one run at a time: the tests that share runs keep one worker's core
            if key not in self.results:
                guarded = attrs.evolve(task, timeout=max(task.timeout, GUARD_SECONDS))
                self.results[key] = tlc.run_tlc(guarded, self.root / f"{len(self.results) + 1}-{task.name}", on_progress)
            return self.results[key]

    @property
    def runs(self) -> int:
        """The number of TLC runs so far."""
        return len(self.results)
