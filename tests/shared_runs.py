"""TLC runs shared by the tests of one pytest session.

tests/test_models.py checks every registered model of the CI tier; tests/test_docs.py reruns the
commands of the docs, most of which model-check some of the same models; tests/test_reduced_view.py
compares violating models under the exact and the reduced views, the exact one being the registered
model itself. Each of them asks ``SharedTlcRuns.run``, which runs TLC once per model and hands every
later caller the same result: each test still checks what it checks, on one run.

Within a process the runs are shared here; between the pytest-xdist workers (``make test`` runs
two) through TLC's run cache (trace_check/engines/tlc_cache.py, ``TXCONFORM_TLC_CACHE``, which
tests/conftest.py sets): a run one worker has under way is waited for and read by the other.

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


# The registered models whose TLC run takes 25 s or more alone on 2 cores (`txconform model-check`
# of all 117, this session: kafka_tv2_safe_no_loss 98 s, resharding_txn_offset_check 94 s,
# kafka_no_group_fencing 52 s, ydb_seqno_stops_zombie 42 s, the others 27 to 34 s; together half
# of the 1,114 s all models took). Their tests, and the docs blocks that model-check them, carry
# the marker `long`: `make test-all` and `make models` check them every time, `make test` (CI) in
# its turn (tests/tiers.py).
LONG_MODELS = frozenset({
    "kafka_tv2_safe_no_loss", "resharding_txn_offset_check", "kafka_no_group_fencing", "ydb_seqno_stops_zombie",
    "kafka_fence_failed_append", "kafka_fence_bump_on_failed_append", "ydb_no_producer_block", "ydb_offset_overlap_check",
    "ydb_resharding_txn", "ydb_no_offset_check", "kafka_tv1_safe_no_loss", "ydb_no_consumer_block", "ydb_no_seqno_check",
})


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
