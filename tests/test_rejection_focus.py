"""A rejected trace shows the state before the event the way a counterexample's first state is
shown (issue 51): first the variables the event's spec action and the spec's values of its logged
columns read, a wide value a line per element or field, then a line that counts the others;
``check --full`` prints the whole state, a variable a line."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest

from trace_check.cli.main import main
from trace_check.traces import handoff, plugins, spec_text
from trace_check.traces.reads import ReadsError, reads, reads_before
from trace_check.traces.verdicts import Status, Verdict, verdict_lines
from trace_check.values.tla import Record

ROOT = Path(__file__).resolve().parents[1]
YDB_ZOMBIE = ROOT / "docs" / "examples" / "ydb-zombie.jsonl"  # rejected at PqCalc (docs/ydb.md)
KAFKA_LSO = ROOT / "docs" / "examples" / "kafka-lso-inclusive.jsonl"  # rejected at Fetch (docs/guide.md)


# --- what an action reads in the state before its step ---


def test_an_action_reads_what_it_names_unprimed_not_what_it_sets_or_keeps() -> None:
    ydb, kafka = plugins.get("ydb"), plugins.get("kafka")
    # reads() counts every name, UNCHANGED and primed ones too: every variable of the spec
    assert reads(ydb, "PqWrite") == set(spec_text.spec_variables(ydb)) - {"l"}
    assert reads_before(ydb, "PqWrite") == {"net", "sup", "target", "wacked", "skipped", "sealed"}
    assert reads_before(kafka, "ClientSend") == {"net"}  # net' = net \cup {m}: a step from the old value reads it
    assert reads_before(kafka, "Fetch") == set()  # action' = ..., UNCHANGED <<...>>
    assert {"plog", "tlog"} <= reads_before(kafka, "PostVal")  # records and lso: FetchResult, LastStableOffset
    assert "action" not in reads_before(ydb, "PqCalc") and {"ptx", "kqp", "committed"} <= reads_before(ydb, "PqCalc")
    with pytest.raises(ReadsError, match="define no Nonexistent"):
        reads_before(ydb, "Nonexistent")


def test_every_event_action_of_every_protocol_names_a_spec_action() -> None:
    for name in ("kafka", "ydb", "cone"):
        protocol = plugins.get(name)
        assert protocol.column_values, name
        reads_before(protocol, protocol.column_values)
        for action in protocol.columns.enums["action"]:
            reads_before(protocol, protocol.spec_action(action))  # ReadsError if the spec has no such action
    ydb = plugins.get("ydb")
    assert ydb.spec_action("PartitionCommit") == ydb.spec_action("PartitionRollback") == "PartitionApply"
    assert ydb.spec_action("PqWriteRefused") == "PqWrite" and ydb.spec_action("PqCalc") == "PqCalc"


# --- how verdict_lines shows the state before ---


def rejected() -> Verdict:
    wide = tuple(Record({"st": "NONE", "dec": "none", "depth": k, "done": frozenset()}) for k in range(1, 7))
    state = {"ptx": Record({"A": wide, "B": wide}), "blog": True, "hangs": 0, "restarts": 1, "action": "x"}
    return Verdict(Status.REJECTED, events=50, engine="tlc", wall_time=1.0, at_event=41, event={"action": "PqCalc"},
                   reason="why", state_before=state, spec_action="PqCalc", action_reads=frozenset({"ptx", "blog"}),
                   read_by="PqCalc and the spec's values of the event's columns")


def test_a_rejection_shows_what_the_action_reads_split_and_counts_the_others() -> None:
    lines = verdict_lines(rejected(), Path("t.jsonl"), width=80)
    assert lines[0] == "rejected at event 41 (line 42): why" and lines[1].startswith("  event: ")
    assert lines[2] == "  the spec's state just before it, what PqCalc and the spec's values of the event's columns read:"
    assert "    blog = TRUE" in lines
    assert any(line.startswith("    ptx.A[1] = [") for line in lines) and any(line.startswith("    ptx.B[6] = [") for line in lines)
    assert not any(line.lstrip().startswith(("hangs", "restarts", "action")) for line in lines)
    assert lines[-1] == "    (and 3 other variables, which they do not read: --full prints the whole state)"
    assert max(len(line) for line in lines[2:]) <= 2 * 80


def test_full_shows_every_variable_on_one_line() -> None:
    lines = verdict_lines(rejected(), Path("t.jsonl"), width=80, full=True)
    assert lines[2] == "  the spec's state just before it:"
    assert [line.split(" = ")[0].strip() for line in lines[3:]] == ["action", "blog", "hangs", "ptx", "restarts"]
    unknown = verdict_lines(attrs.evolve(rejected(), action_reads=None), Path("t.jsonl"))
    assert unknown[2] == "  the spec's state just before it:" and len(unknown) == 3 + 5  # reads unknown: all of it


# --- txconform check on the docs' rejected traces (TLC) ---


@pytest.mark.tlc
def test_check_shows_what_ydbs_pqcalc_reads_and_full_shows_all(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(YDB_ZOMBIE)]) == 1
    out = capsys.readouterr().out
    assert "the spec's state just before it, what PqCalc and" in out
    assert "\n    ptx.A[2] = [" in out and "\n    committed = " in out  # PqCalc's guard and predicate
    assert "\n    hangs = " not in out and "\n    restarts = " not in out and "\n    action = " not in out
    assert "other variables, which they do not read: --full prints the whole state" in out
    assert main(["check", "--full", str(YDB_ZOMBIE)]) == 1
    full = capsys.readouterr().out
    for var in handoff.state_fields(plugins.get("ydb")):
        assert f"\n    {var} = " in full, var
    assert "--full prints" not in full


@pytest.mark.tlc
def test_check_shows_what_kafkas_fetch_reads(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(KAFKA_LSO)]) == 1
    out = capsys.readouterr().out
    assert "what Fetch and the spec's values of the event's columns read:" in out
    # both partitions' logs hold the same three entries: one line each for both (plog[1..2][k])
    assert "\n    plog[1..2][1] = [" in out and '\n    tlog.t1[7] = [' in out and 'st |-> "Ongoing"' in out
    assert "\n    cl = " not in out and "\n    pst = " not in out and "\n    gc = " not in out
    assert main(["check", "--json", str(KAFKA_LSO)]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["spec_action"] == "Fetch" and {"plog", "tlog"} <= set(verdict["action_reads"])
    assert "cl" in verdict["state_before"]  # the JSON keeps the whole state
