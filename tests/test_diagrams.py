"""Sequence diagrams with the processes as lifelines (trace_check/traces/diagrams.py and each
protocol's ``diagram`` module): the layout, the labels in the protocol's words, and for each
protocol a stored counterexample (tests/fixtures/diagrams/, the ITF that ``model-check --out``
wrote, cut to the variables its diagram reads) drawn with the expected processes and messages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from trace_check.models.itf import read_itf
from trace_check.models.registry import default_registry_files, load_registries
from trace_check.models.result import Counterexample, Step
from trace_check.traces import diagrams
from trace_check.traces.protocol import Arrow, Diagram, Note
from trace_check.values.tla import Record

FIXTURES = Path(__file__).parent / "fixtures" / "diagrams"


def mermaid_problems(text: str) -> list[str]:
    """What is wrong with a sequence diagram's text: an undeclared participant, an unbalanced
    ``rect``, a raw TLA+ record or an unescaped character in a label."""
    lines = text.splitlines()
    problems = [] if lines[0] == "sequenceDiagram" else ["no sequenceDiagram header"]
    declared = {m.group(1) for line in lines if (m := re.match(r"\s*participant (\w+) as ", line))}
    depth = 0
    for line in lines[1:]:
        body = line.strip()
        if body.startswith("rect "):
            depth += 1
        elif body == "end":
            depth -= 1
        elif m := re.match(r"(\w+)(-->>|->>|--x|-x)(\w+): (.*)$", body):
            problems += [f"undeclared {p}: {line}" for p in (m.group(1), m.group(3)) if p not in declared]
        elif m := re.match(r"Note over ([\w,]+): (.*)$", body):
            problems += [f"undeclared {p}: {line}" for p in m.group(1).split(",") if p not in declared]
        elif not body.startswith("participant "):
            problems.append(f"unparsed: {line}")
        label = body.split(": ", 1)[1] if ": " in body else ""
        bare = re.sub(r"#\w+;", "", label.replace("<br/>", ""))
        if "|->" in label or "|-#gt;" in label or re.search(r"[;\"<>#]", bare):
            problems.append(f"raw label: {line}")
    return problems + (["unbalanced rect"] if depth else [])


def arrows(cex: Counterexample, diagram: Diagram) -> list[tuple[int, str, str, str]]:
    """Each arrow a step drew: (step, sender, receiver, label)."""
    return [(i, a.sender, a.receiver, a.text) for i, items in diagrams.steps(cex, diagram) for a in items if isinstance(a, Arrow)]


def notes(cex: Counterexample, diagram: Diagram) -> list[tuple[int, tuple[str, ...], str, bool]]:
    return [(i, n.over, n.text, n.fault) for i, items in diagrams.steps(cex, diagram) for n in items if isinstance(n, Note)]


def participants(text: str) -> list[str]:
    return [m.group(1) for line in text.splitlines() if (m := re.match(r"\s*participant \w+ as (.*)$", line))]


# --- the layout ---------------------------------------------------------------------------------


def _toy() -> tuple[Counterexample, Diagram]:
    def draw(before: dict, after: dict) -> tuple[Arrow | Note, ...]:
        return {
            "Ask": (Arrow("client", "server", 'Get("k"; v<2>)'),),
            "Drop": (Arrow("server", "client", "→ ok", answer=True, lost=True),),
            "Crash": (Note(("server",), "crash", fault=True),),
            "Log": (Note(("server",), "log: v2"), Arrow("server", "client", "→ ok", answer=True)),
            "Tick": (),
        }[after["action"]["name"]]

    cex = Counterexample(
        steps=tuple(Step(i + 1, None, {"action": Record({"name": n, "actor": "client", "args": ()})})
                    for i, n in enumerate(["Init", "Ask", "Tick", "Drop", "Crash", "Log"])),
        variables=("action",),
    )
    return cex, Diagram(lifelines=lambda first: ("client", "server", "unused"), draw=draw)


def test_the_diagram_draws_arrows_answers_losses_faults_and_marks_the_breaking_step() -> None:
    cex, diagram = _toy()
    text = diagrams.to_mermaid(cex, diagram, "breaks Safe")
    assert text.splitlines() == [
        "sequenceDiagram",
        "    participant p_client as client",
        "    participant p_server as server",
        "    p_client->>p_server: 2. Get(#quot;k#quot;#59; v#lt;2#gt;)",
        "    p_server--xp_client: 4. → ok ✗ lost",
        "    Note over p_server: 5. ✗ crash",
        "    rect rgb(255, 228, 225)",
        "        Note over p_server: 6. log: v2",
        "        p_server-->>p_client: → ok",
        "        Note over p_client,p_server: breaks Safe",
        "    end",
    ]
    assert mermaid_problems(text) == []


def test_only_the_processes_a_run_draws_on_are_lifelines_in_the_declared_order() -> None:
    cex, diagram = _toy()
    backwards = Diagram(lifelines=lambda first: ("server", "client"), draw=diagram.draw)
    assert participants(diagrams.to_mermaid(cex, backwards)) == ["server", "client"]
    undeclared = Diagram(lifelines=lambda first: (), draw=diagram.draw)
    assert participants(diagrams.to_mermaid(cex, undeclared)) == ["client", "server"]  # as they appear


def test_a_breaking_step_that_draws_nothing_is_still_marked() -> None:
    cex, diagram = _toy()
    quiet = Counterexample(steps=cex.steps[:3], variables=cex.variables)  # ends with Tick, which draws nothing
    assert diagrams.to_mermaid(quiet, diagram, "breaks Safe").splitlines()[-3:] == [
        "    rect rgb(255, 228, 225)", "        Note over p_client: 3. breaks Safe", "    end"]


def test_a_run_that_loops_says_where_it_loops_back_to() -> None:
    cex, diagram = _toy()
    lasso = Counterexample(steps=cex.steps, variables=cex.variables, loop=3)
    text = diagrams.to_mermaid(lasso, diagram, "breaks Live")
    assert text.splitlines()[-1] == "    Note over p_client,p_server: ↻ back to state 3: the run loops from there for ever"
    assert mermaid_problems(text) == []


def test_without_a_diagram_each_step_is_a_note_over_its_actor() -> None:
    cex, _ = _toy()
    text = diagrams.to_mermaid(cex, None)
    assert "    Note over p_client: 2. Ask client" in text.splitlines()
    assert mermaid_problems(text) == []


def test_a_line_break_in_a_label_is_one_in_the_diagram_and_a_name_is_escaped() -> None:
    assert diagrams._text("a\nb<c>") == "a<br/>b#lt;c#gt;"
    assert diagrams._pid("t1#2") == "p_t1_2"


def test_the_checker_of_the_diagram_text_finds_what_is_wrong() -> None:
    bad = "sequenceDiagram\n    participant p_a as a\n    p_a->>p_b: [x |-> 1]\n    rect rgb(1, 2, 3)\n"
    assert len(mermaid_problems(bad)) == 3  # p_b undeclared, a raw record, rect not closed


def test_every_registry_names_a_diagram_that_loads() -> None:
    files = default_registry_files()
    assert {f.parent.name for f in files} == {"kafka", "ydb", "cone", "resharding"}
    for f in files:
        found = re.search(r'^diagram = "([\w.]+)"', f.read_text(encoding="utf-8"), re.MULTILINE)  # in [base], the first table
        assert found, f
        module = found.group(1)
        assert module == f"ref_impl.{f.parent.name}.diagram"
        assert isinstance(diagrams.load(module), Diagram)
    (model, *_) = load_registries([f for f in files if f.parent.name == "resharding"]).models
    assert model.diagram == "ref_impl.resharding.diagram"
    with pytest.raises(diagrams.DiagramError, match="defines no DIAGRAM"):
        diagrams.load("ref_impl.kafka.constants")


# --- each protocol ------------------------------------------------------------------------------


def fixture(name: str) -> Counterexample:
    return read_itf(FIXTURES / f"{name}.itf.json")


def test_resharding_the_zombie_commits_what_its_successor_moves_again() -> None:
    from ref_impl.resharding.diagram import DIAGRAM

    cex = fixture("resharding_txn_no_check")
    text = diagrams.to_mermaid(cex, DIAGRAM, "breaks ExactlyOnce")
    assert participants(text) == ["topic A", "w1", "w2", "topic B", "group"]
    found = arrows(cex, DIAGRAM)
    assert (2, "w1", "topic A", "Fetch(A1, offset 0)") in found
    assert (3, "w1", "topic B", "Produce(B2, A1:0) in the transaction") in found
    assert (5, "group", "w2", "Assign(A1) from hung w1") in found
    assert (8, "w1", "topic B", "CommitTxn(A1:0 visible, offset 1)") in found
    assert (10, "w2", "topic B", "CommitTxn(A1:0 visible, offset 1)") in found
    assert (4, ("w1",), "hang", True) in notes(cex, DIAGRAM)
    assert text.splitlines()[-3:] == ["        p_topic_B-->>p_w2: committed", "        Note over p_w2,p_topic_B: breaks ExactlyOnce", "    end"]
    assert mermaid_problems(text) == []


def test_kafka_a_retried_endtxn_lands_late_on_the_next_transaction() -> None:
    from ref_impl.kafka.diagram import DIAGRAM

    cex = fixture("kafka_tv1_late_endtxn")
    text = diagrams.to_mermaid(cex, DIAGRAM, "breaks MarkerSafety")
    assert participants(text) == ["t1#35;1", "coordinator", "p1", "p2"]
    found = arrows(cex, DIAGRAM)
    assert (2, "t1#1", "coordinator", "InitProducerId") in found
    assert (11, "t1#1", "p1", "Produce(p1, seq 0, epoch 0)") in found
    assert (12, "p1", "t1#1", "Produce → NONE") in found
    assert (17, "t1#1", "coordinator", "EndTxn(commit, epoch 0)") in found
    assert (18, "t1#1", "coordinator", "EndTxn(commit, epoch 0) again (retry)") in found
    assert (20, "coordinator", "p1", "WriteTxnMarkers(COMMIT t1, epoch 0)") in found
    assert (24, "p1", "coordinator", "WriteTxnMarkers → NONE") in found
    found_notes = notes(cex, DIAGRAM)
    assert (20, ("coordinator",), "log t1: PrepareCommit, epoch 0", False) in found_notes
    assert (34, ("coordinator",), "takes EndTxn of txn 1: to be logged", False) in found_notes  # the late copy, in txn 2
    assert (37, ("p1",), "log: COMMIT marker t1", False) in found_notes
    assert "Note over p_coordinator,p_p1: breaks MarkerSafety" in text
    assert mermaid_problems(text) == []


def test_kafka_the_replacement_starts_while_the_first_instance_hangs() -> None:
    from ref_impl.kafka.diagram import DIAGRAM

    cex = fixture("kafka_no_fencing")
    assert participants(diagrams.to_mermaid(cex, DIAGRAM))[:2] == ["t1#35;1", "t1#35;2"]
    assert (3, ("t1#1",), "hang", True) in notes(cex, DIAGRAM)
    found = arrows(cex, DIAGRAM)
    assert (6, "coordinator", "t1#2", "InitProducerId → NONE, epoch 0") in found
    assert (11, "coordinator", "t1#1", "InitProducerId → NONE, epoch 0") in found  # no bump: the same epoch


def test_kafka_labels_in_kafkas_words() -> None:
    from ref_impl.kafka.diagram import ends, text

    base = {"tid": "t1", "inst": 2, "epoch": 3, "part": 1, "seq": 4, "commit": True, "err": "NONE", "val": 7, "gen": 1}
    assert text({**base, "type": "EndTxn"}) == "EndTxn(commit, epoch 3)"
    assert text({**base, "type": "EndTxn", "commit": False}) == "EndTxn(abort, epoch 3)"
    assert text({**base, "type": "EndTxnResp"}) == "EndTxn → NONE, epoch 3"
    assert text({**base, "type": "ProduceResp", "err": "INVALID_PRODUCER_EPOCH"}) == "Produce → INVALID_PRODUCER_EPOCH"
    assert text({**base, "type": "WriteTxnMarkers", "commit": False}) == "WriteTxnMarkers(ABORT t1, epoch 3)"
    assert text({**base, "type": "InitProducerId", "epoch": -1}) == "InitProducerId"
    assert text({**base, "type": "TxnOffsetCommit"}) == "TxnOffsetCommit(offset 7, generation 1)"
    assert ends({**base, "type": "Produce"}) == ("t1#2", "p1")
    assert ends({**base, "type": "ProduceResp"}) == ("p1", "t1#2")
    assert ends({**base, "type": "Verify", "part": 0}) == ("group coordinator", "coordinator")
    assert ends({**base, "type": "WriteTxnMarkersResp", "part": 2}) == ("p2", "coordinator")
    assert ends({**base, "type": "OffsetFetch"}) == ("t1#2", "group coordinator")


def test_ydb_without_read_sets_each_tablet_decides_alone() -> None:
    from ref_impl.ydb.diagram import DIAGRAM

    cex = fixture("ydb_independent_decision")
    text = diagrams.to_mermaid(cex, DIAGRAM, "breaks Atomicity")
    assert participants(text) == ["group", "w1", "w2", "KQP session", "coordinator", "PQ tablet A", "PQ tablet B"]
    found = arrows(cex, DIAGRAM)
    assert (2, "w1", "PQ tablet A", "Read(A1, [0, 1)) in tx 1") in found
    assert (3, "w1", "PQ tablet B", "Write(B1, A1:0) in tx 1") in found
    assert (6, "w1", "KQP session", "CommitTx(tx 1)") in found
    assert (8, "group", "w2", "Assign(A1)") in found
    assert (14, "KQP session", "PQ tablet A", "Propose(tx 1)") in found
    assert (14, "PQ tablet A", "KQP session", "→ PREPARED") in found
    assert (18, "coordinator", "PQ tablet A", "PlanStep(1: tx 1)") in found
    assert (21, "PQ tablet A", "KQP session", "tx 1 EXECUTED (commit)") in found
    found_notes = notes(cex, DIAGRAM)
    assert (7, ("w1",), "hang", True) in found_notes
    assert (27, ("PQ tablet A",), "tx 2: predicate abort", False) in found_notes
    assert (31, ("PQ tablet B",), "tx 2: B1 commits", False) in found_notes  # while A rolled tx 2 back
    assert mermaid_problems(text) == []


def test_ydb_a_restarted_tablet_takes_a_read_set_again() -> None:
    from ref_impl.ydb.diagram import DIAGRAM

    cex = fixture("ydb_reapply_after_restart")
    found = arrows(cex, DIAGRAM)
    assert (13, "PQ tablet A", "PQ tablet B", "ReadSet(tx 1: commit)") in found
    assert (20, "PQ tablet A", "PQ tablet B", "ReadSet(tx 1: commit) again") in found
    found_notes = notes(cex, DIAGRAM)
    assert (18, ("PQ tablet B",), "tx 1: B1 commits", False) in found_notes
    assert (19, ("PQ tablet B",), "restart: volatile state lost", True) in found_notes
    assert (24, ("PQ tablet B",), "tx 1: B1 commits", False) in found_notes
    assert mermaid_problems(diagrams.to_mermaid(cex, DIAGRAM, "breaks ExactlyOnce")) == []


def test_cone_a_paused_master_and_its_successor_both_serve_one_begin() -> None:
    from ref_impl.cone.diagram import DIAGRAM

    cex = fixture("cone_zombie_commit")
    text = diagrams.to_mermaid(cex, DIAGRAM, "breaks ExclusiveLocks")
    assert participants(text) == ["c1", "x1", "x2", "x3"]
    found = arrows(cex, DIAGRAM)
    assert [a for a in found if a[0] == 2] == [(2, "c1", f"x{x}", "Begin(attempt 1)") for x in (1, 2, 3)]
    assert (3, "x1", "c1", "Begin → open, album absent") in found
    assert (8, "x2", "c1", "Begin → open, album absent (client gone: an orphan)") in found
    found_notes = notes(cex, DIAGRAM)
    assert (4, ("x1",), "GC pause", True) in found_notes
    assert (6, ("x1",), "resumes, still acting as master", False) in found_notes  # the zombie
    assert (7, ("x2",), "becomes master", False) in found_notes
    assert mermaid_problems(text) == []


def test_cone_an_unlogged_batch_loses_mutations_on_the_way_to_the_replicas() -> None:
    from ref_impl.cone.diagram import DIAGRAM

    cex = fixture("cone_unlogged_batch")
    text = diagrams.to_mermaid(cex, DIAGRAM, "breaks Atomicity")
    assert participants(text) == ["c1", "x1", "x2", "x3", "r1", "r2", "r3"]
    found = arrows(cex, DIAGRAM)
    assert (4, "c1", "x1", "Read(album)") in found
    assert (7, "c1", "x1", "Commit") in found
    assert (9, "x1", "r1", "Mutation(batch 1, ts 1)") in found
    assert (8, ("x1",), "unlogged batch 1, ts 1: to every replica", False) in notes(cex, DIAGRAM)
    assert "    p_x1-xp_r2: 10. Mutation(batch 1, ts 1) ✗ lost" in text.splitlines()
    assert mermaid_problems(text) == []


def test_every_sequence_diagram_in_the_docs_is_well_formed() -> None:
    docs = sorted((Path(__file__).parents[1] / "docs").glob("*.md"))
    blocks = [(d.name, b) for d in docs for b in re.findall(r"```mermaid\n(sequenceDiagram\n.*?)```", d.read_text(encoding="utf-8"), re.DOTALL)]
    assert len(blocks) >= 20
    assert {name: mermaid_problems(b) for name, b in blocks if mermaid_problems(b)} == {}


@pytest.mark.tlc
def test_a_rejected_trace_is_drawn_to_the_event_nothing_explains(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`txconform check --diagram FILE`: the spec's run to the state before the rejected event, as
    steps numbered by the trace's events and a sequence diagram of the protocol's processes, its
    last step marked with the event that cannot follow; an accepted trace gets no file."""
    from test_guards import no_drain_verdict

    from trace_check.cli.main import main

    trace, _ = no_drain_verdict(tmp_path, capsys)
    drawn = tmp_path / "no-drain.md"
    assert main(["check", str(trace), "--diagram", str(drawn)]) == 1
    assert f"the spec's run to event 18 written to {drawn}" in capsys.readouterr().err
    text = drawn.read_text()
    assert text.startswith("# no-drain.jsonl: rejected at event 18 (line 19): the spec's CoActivate is not enabled here")
    assert "  0. Init\n" in text and "\n  1. ClientBegin c2" in text  # numbered by the events
    mermaid = text.split("```mermaid\n")[1].split("```")[0]
    assert mermaid_problems(mermaid) == []
    assert "participant p_x1 as x1" in mermaid and "17. timeout: outcome unknown" in mermaid
    assert mermaid.rstrip().endswith("Note over p_c2: event 18 (CoActivate) cannot be taken next: rejected\n    end")
    ok = tmp_path / "ok.jsonl"
    assert main(["simulate", "--protocol", "cone", "--seed", "4", "--workload", "album:adders=2,attempts=2", "--out", str(ok)]) == 0
    capsys.readouterr()
    assert main(["check", str(ok), "--diagram", str(tmp_path / "ok.md")]) == 0
    assert "no diagram written" in capsys.readouterr().err and not (tmp_path / "ok.md").exists()
