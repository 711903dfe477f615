"""Every registered model, model-checked with TLC, must have the outcome the registry expects.

This is the CI gate for specs/: a safe model that starts failing and a buggy model whose
counterexample disappears both fail here, and so does a model whose distinct state count differs
from the one its registry pins (a reduction that silently stops reaching states). (`txconform
model-check` runs the same check by hand.) Models of the "full" tier take hours; `txconform
model-check --tier full` checks them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_runs import LONG_MODELS, SharedTlcRuns

from trace_check.models.counterexample import label
from trace_check.models.registry import load_registries, registry_files

REGISTRY = load_registries(registry_files(Path(__file__).resolve().parents[1] / "specs"))

pytestmark = pytest.mark.tlc


@pytest.mark.parametrize("model", [pytest.param(m, marks=pytest.mark.long) if m.name in LONG_MODELS else m for m in REGISTRY.select([], "ci")],
                         ids=lambda m: m.name)
def test_registered_model_has_its_expected_outcome(model, shared_tlc: SharedTlcRuns) -> None:
    result = shared_tlc.run(model.task)
    assert result.verdict == model.expect, f"{model.name}: {result.message} (log: {result.log_file})"
    assert model.pin_mismatch(result) is None, f"{model.name}: {model.pin_mismatch(result)}"
    if model.expect.startswith("violates"):
        cex = result.counterexample
        assert cex is not None and len(cex.steps) >= 2
        # the trace ends in the state that breaks the promise, and starts in an initial state
        assert cex.steps[0].action is None
        if model.task.module == "MCKafkaTxn":
            assert_kafka_steps_name_their_transactional_id(cex, model.task.constants["TxnIds"])


# Steps of the one coordinator (or leader, group coordinator, network) for all transactional.ids.
SHARED_ACTORS = {"coordinator", "leader", "group", "network"}
# Those that concern no single transactional.id: a coordinator failover, a leader restart, a
# follower that falls behind and its unclean election.
FOR_ALL = {"Failover", "LeaderRestart", "FollowerLag", "UncleanElection"}


def assert_kafka_steps_name_their_transactional_id(cex, txn_ids) -> None:
    """A shared actor's step says which transactional.id it served (models with two would be ambiguous)."""
    for step in cex.steps[1:]:
        lab = label(step)
        if lab.actor in SHARED_ACTORS and lab.name not in FOR_ALL:
            assert dict(lab.about).get("txn_id") in txn_ids, f"step {step.index} ({lab}) names no transactional.id"


def test_the_long_models_are_registered_models_of_tier_ci() -> None:
    assert LONG_MODELS.issubset(m.name for m in REGISTRY.select([], "ci"))
