"""Rewritten invariants mean what they meant: a faster form of an invariant must equal its first
form in every state of a model that reaches states where the invariant fails."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from trace_check.engines.runner import run_task
from trace_check.models.registry import load_registry
from trace_check.models.result import Outcome

REGISTRY = load_registry(Path(__file__).resolve().parents[1] / "specs" / "kafka" / "models.toml")

pytestmark = pytest.mark.tlc


def test_atomicity_through_fates_equals_atomicity_through_pairs(tmp_path: Path) -> None:
    torn = next(m for m in REGISTRY.models if m.name == "kafka_tv1_late_endtxn_torn")
    assert torn.expect == "violates Atomicity"  # its states include ones where Atomicity fails
    agree = attrs.evolve(torn.task, invariants=("AtomicityFormsAgree",))
    r = run_task("tlc", agree, tmp_path)
    assert r.outcome is Outcome.HOLDS, f"{r.message} (log: {r.log_file})"
    # every state, past the first violation the registered model stops at
    assert r.distinct_states is not None and torn.distinct_states is not None and r.distinct_states > torn.distinct_states
