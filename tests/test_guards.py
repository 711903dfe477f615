"""A rejected event whose spec action is not enabled is told which conjunct of the action's guard
is false (trace_check/traces/guards.py): the diagnosis checks each prefix of the guard, copied from
the spec with the dispatch that reaches the action."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from trace_check.cli.main import main
from trace_check.traces import plugins
from trace_check.traces.guards import GUARD, guard_conjuncts, guard_diagnosis


def test_the_guard_is_the_leading_conjuncts_that_read_no_primed_variable() -> None:
    body = '\n    /\\ x > 0\n    /\\ \\A y \\in S :\n           y # x\n    /\\ x\' = x - 1\n    /\\ z > 0\n    /\\ UNCHANGED y'
    assert guard_conjuncts(body) == ["    /\\ x > 0", "    /\\ \\A y \\in S :\n           y # x"]
    assert guard_conjuncts(" x > 0 /\\ x' = 1") == []  # not a list of conjuncts
    assert guard_conjuncts('\n    /\\ s = "it\'s"\n    /\\ x\' = 1') == ['    /\\ s = "it\'s"']  # a quote in a string is no prime


def test_each_prefix_of_a_guard_is_reached_through_the_trace_specs_dispatch() -> None:
    cone = guard_diagnosis(plugins.get("cone"), "CoActivate")
    assert cone is not None and list(cone.conjuncts) == [f"{GUARD}{k}" for k in range(1, len(cone.conjuncts) + 1)]
    assert any("Drained" in c for c in cone.conjuncts.values())
    text = "\n".join(cone.lines)
    assert "CoActivate__g1(" in text and "Bound__g1(ev) ==" in text and "DiagnoseEnabled__g1(stuck) ==" in text
    assert '"CoActivate"' in text  # the dispatch's strings are left as they are
    kafka = guard_diagnosis(plugins.get("kafka"), "TcAppend")  # through StepWith and Dispatch
    assert kafka is not None and "Dispatch__g1(" in "\n".join(kafka.lines)
    assert guard_diagnosis(plugins.get("kafka"), "NoSuchAction") is None


def no_drain_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, dict]:
    """The trace of C*One's failover_no_drain (docs/cone.md's example) and its verdict as JSON."""
    trace = tmp_path / "no-drain.jsonl"
    assert main(["simulate", "--protocol", "cone", "--seed", "11", "--workload", "album:adders=2,attempts=1", "--faults", "crash=1",
                 "--bugs", "failover_no_drain", "--out", str(trace)]) == 0
    capsys.readouterr()
    assert main(["check", "--json", str(trace)]) == 1
    return trace, json.loads(capsys.readouterr().out)


@pytest.mark.tlc
def test_a_new_master_that_serves_before_the_drain_is_told_the_drain_conjunct(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The C*One article's design as written (failover_no_drain): the checker rejects its trace at
    the CoActivate and names the guard's conjunct that the drain makes true."""
    trace, verdict = no_drain_verdict(tmp_path, capsys)
    assert verdict["status"] == "rejected" and verdict["event"]["action"] == "CoActivate"
    assert "CoActivate is not enabled here: conjunct" in verdict["reason"] and "Drained" in verdict["reason"], verdict["reason"]
    # the state before shows what that conjunct reads: the batchlog entry still there, not the coordinators
    assert main(["check", str(trace)]) == 1
    out = capsys.readouterr().out
    assert re.search(r"what conjunct \d of CoActivate's guard read:\n    batches\[1\] = .*blog \|-> TRUE", out), out
    assert "    dead = " not in out and "    co[" not in out, out


@pytest.mark.tlc
def test_a_guard_diagnosis_that_does_not_run_falls_back_to_the_action(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """The prefixes are TLA+ text copied from the spec: should a copy not parse or resolve, the
    event is still diagnosed, without them."""
    from trace_check.traces import module_text, one_window
    from trace_check.traces.guards import GuardDiagnosis

    broken = GuardDiagnosis(("Diag_guard_1 == NoSuchDefinition",), {"Diag_guard_1": "x"}, {"Diag_guard_1": frozenset()})
    monkeypatch.setattr(module_text, "guard_diagnosis", lambda protocol, action: broken)
    monkeypatch.setattr(one_window, "guard_diagnosis", lambda protocol, action: broken)
    _, verdict = no_drain_verdict(tmp_path, capsys)
    assert verdict["status"] == "rejected" and "CoActivate is not enabled here: its guard is false" in verdict["reason"], verdict
