"""The hand-written parts of the docs keep up with the specs.

`docs/kafka.md` maps every spec action to the Kafka request it stands for, and
`specs/README.md` gives every invariant a model checks its meaning in one
sentence. A new action or invariant without its line there fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
KAFKA_SPEC = ROOT / "specs" / "kafka" / "KafkaTxn.tla"


def operator_body(spec: str, name: str) -> str:
    """The text of a top-level definition ``name ==`` up to the next blank line."""
    match = re.search(rf"^{name}(\([^)]*\))? ==\n(.*?)\n\n", spec, re.S | re.M)
    assert match, f"{name} is not defined in {KAFKA_SPEC.name}"
    return match.group(2)


def next_state_actions(spec: str) -> set[str]:
    """The operators that Next and NextWithConsumers take as disjuncts."""
    names: set[str] = set()
    for op in ("Next", "NextWithConsumers"):
        body = operator_body(spec, op)
        names |= set(re.findall(r"\\/\s*(?:\\E [^:]+:\s*)*([A-Z][A-Za-z]+)\b", body))
    return names - {"Next"}


def table_rows(markdown: str, heading: str) -> list[str]:
    """The first cell of each row of the table under ``heading``."""
    section = markdown.split(heading, 1)[1].split("\n## ", 1)[0]
    return [line.split("|")[1] for line in section.splitlines() if line.startswith("| `")]


def test_the_action_parser_sees_the_steps_it_should() -> None:
    actions = next_state_actions(KAFKA_SPEC.read_text())
    # One of each kind of disjunct: per instance, per message, per transactional.id,
    # per partition, unquantified, and the consumers' steps.
    assert {"BeginTxn", "ClientReceive", "TcAppend", "TcResendMarker", "LeaderRestart", "Failover", "Fetch"} <= actions
    assert "Init" not in actions and "Request" not in actions


def test_every_kafka_action_is_in_the_mapping_table() -> None:
    actions = next_state_actions(KAFKA_SPEC.read_text())
    rows = table_rows((ROOT / "docs" / "kafka.md").read_text(), "## Spec actions and what they stand for in Kafka")
    documented = {name for row in rows for name in re.findall(r"`([A-Za-z]+)`", row)}
    assert actions - documented == set(), "add these actions to the table in docs/kafka.md"
    assert documented - actions == set(), "these table rows name no action of Next"


@pytest.mark.parametrize("spec_dir", ["kafka", "resharding", "cone"])
def test_every_checked_invariant_has_its_one_sentence(spec_dir: str) -> None:
    registry = tomllib.loads((ROOT / "specs" / spec_dir / "models.toml").read_text())
    checked = set(registry.get("base", {}).get("invariants", []))
    checked |= {inv for model in registry["models"].values() for inv in model.get("invariants", [])}
    assert checked, f"no model checks a spec in specs/{spec_dir}"
    readme = (ROOT / "specs" / "README.md").read_text()
    explained = set(re.findall(r"^\| `([A-Za-z]+)` \| [^|]+\. \|$", readme, re.M))
    missing = checked - explained - {"TypeOK"}
    assert missing == set(), "explain these invariants in specs/README.md"
    properties = {q for model in registry["models"].values() for q in model.get("properties", [])}
    assert properties - explained == set(), "explain these temporal properties in specs/README.md"
