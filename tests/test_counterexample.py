"""Readable counterexamples: per-field changes and step labels (their diagrams: test_diagrams.py)."""

from __future__ import annotations

from trace_check.models.counterexample import changes, label, render_steps
from trace_check.models.result import Counterexample, Step
from trace_check.values.tla import FnMap, Record


def act(name: str, actor: str = "", **args: int) -> Record:
    return Record({"name": name, "actor": actor, "args": Record(args) if args else ()})


def state(phase: str, committed: int, target: tuple, action: Record) -> dict:
    return {
        "action": action,
        "committed": (committed, 0),
        "target": target,
        "wk": Record({"w1": Record({"phase": phase, "hung": False}), "w2": Record({"phase": "idle", "hung": False})}),
    }


TRACE = Counterexample(
    steps=(
        Step(1, None, state("idle", 0, ((), ()), act("Init"))),
        Step(2, "Fetch", state("fetched", 0, ((), ()), act("Fetch", "w1", src=1, off=0))),
        Step(3, "CommitTxn", state("idle", 1, ((), (Record({"src": 1, "off": 0}),)), act("CommitTxn", "w1", src=1, off=0))),
    ),
    variables=("action", "committed", "target", "wk"),
)


def test_changes_descend_into_records_functions_and_sequences() -> None:
    found = changes(TRACE.steps[1].state, TRACE.steps[2].state)
    assert [c.describe() for c in found] == [
        "committed[1]: 0 -> 1",
        "target[2] appended [src |-> 1, off |-> 0]",
        'wk.w1.phase: "fetched" -> "idle"',
    ]


def test_changes_in_a_function_with_non_string_keys() -> None:
    old = {"f": FnMap({(1, 2): "a", (3, 4): "b"})}
    new = {"f": FnMap({(1, 2): "a", (3, 4): "c"})}
    assert [c.describe() for c in changes(old, new)] == ['f[<<3, 4>>]: "b" -> "c"']


def test_a_replaced_value_is_shown_whole() -> None:
    assert [c.describe() for c in changes({"s": (1, 2)}, {"s": (2,)})] == ["s: <<1, 2>> -> <<2>>"]


def test_label_uses_the_action_variable_when_there_is_one() -> None:
    assert str(label(TRACE.steps[1])) == "Fetch w1 src=1 off=0"
    plain = Step(2, "Inc", {"x": 1})
    assert str(label(plain)) == "Inc"
    assert str(label(Step(1, None, {"x": 0}))) == "Init"


def test_label_shows_what_a_shared_actor_served() -> None:
    action = Record({"name": "TcAppend", "actor": "coordinator", "txn_id": "t2", "args": Record({"epoch": 0}), "note": ""})
    assert str(label(Step(2, "TcAppend", {"action": action}))) == "TcAppend coordinator txn_id=t2 epoch=0"
    unset = Record({"name": "Failover", "actor": "coordinator", "txn_id": "", "args": Record({"cepoch": 1}), "note": ""})
    assert str(label(Step(2, "Failover", {"action": unset}))) == "Failover coordinator cepoch=1"


def test_render_steps_shows_the_initial_state_then_only_changes() -> None:
    lines = render_steps(TRACE)
    assert lines[0] == "  1. Init"
    assert "       committed = <<0, 0>>" in lines
    assert lines[lines.index("  2. Fetch w1 src=1 off=0") + 1] == '       wk.w1.phase: "idle" -> "fetched"'
    assert not any(line.strip().startswith("action") for line in lines), "the history variable is the label, not a change"


def test_a_set_that_changed_shows_what_came_and_went() -> None:
    old = {"net": frozenset({"a", "b"})}
    new = {"net": frozenset({"b", "c"})}
    assert [c.describe() for c in changes(old, new)] == ['net: + "c", - "a"']
    assert [c.describe() for c in changes({"s": frozenset()}, {"s": frozenset({1})})] == ["s: {} -> {1}"]


def test_hidden_variables_and_fields_are_left_out() -> None:
    old = {"cl": Record({"a": Record({"st": "x", "req": 1})}), "net": frozenset({1})}
    new = {"cl": Record({"a": Record({"st": "y", "req": 2})}), "net": frozenset({2})}
    assert [c.describe() for c in changes(old, new, ("net", "cl.req"))] == ['cl.a.st: "x" -> "y"']
    trace = Counterexample(steps=(Step(1, None, old), Step(2, "Go", new)), variables=("cl", "net"))
    lines = render_steps(trace, ("net", "cl.req"))
    assert lines[0] == "     (not shown: net, cl.req)"
    assert '       cl = [a |-> [st |-> "x"]]' in lines
    assert not any("net" in line for line in lines[1:])


def test_a_reading_shows_what_the_broken_property_reads_and_marks_the_last_state() -> None:
    """For readers (issue 51): the first state shows only the variables the property reads, a line
    names the others, and the last state is marked with the values the property reads there."""
    from trace_check.models.counterexample import Reading

    lines = render_steps(TRACE, reading=Reading("ExactlyOnce", frozenset({"target", "committed"}), width=160))
    init = lines[1 : lines.index("  2. Fetch w1 src=1 off=0")]
    assert init == ["       committed = <<0, 0>>", "       target = <<<<>>, <<>>>>", "       (and wk, which ExactlyOnce does not read)"]
    assert lines[-3:] == ["  => state 3 breaks ExactlyOnce; what it reads there:", "       committed = <<1, 0>>",
                          "       target = <<<<>>, <<[src |-> 1, off |-> 0]>>>>"]
    # the named part that is false (a model checks an invariant's parts one by one): what it reads
    part = render_steps(TRACE, reading=Reading("ExactlyOnce", frozenset({"target"}), width=160, part="NoDuplicates"))
    assert "       (and committed, wk, which NoDuplicates does not read)" in part
    assert part[-2:] == ["  => state 3 breaks ExactlyOnce: its part NoDuplicates is false; what that reads there:",
                         "       target = <<<<>>, <<[src |-> 1, off |-> 0]>>>>"]
    witness = render_steps(TRACE, reading=Reading("Reached", frozenset({"committed"}), witness=True))
    assert witness[-2] == "  => state 3 is the one the witness Reached asks for; what it reads there:"
    assert render_steps(TRACE)[1:4] == ["       committed = <<0, 0>>", "       target = <<<<>>, <<>>>>",
                                        '       wk = [w1 |-> [phase |-> "idle", hung |-> FALSE], w2 |-> [phase |-> "idle", hung |-> FALSE]]']


def test_a_value_too_wide_is_shown_part_by_part_and_nothing_is_cut() -> None:
    from trace_check.models.counterexample import state_lines

    entry = Record({"gtx": ("t1", 2, 1), "kind": "data", "zombie": True})
    log = ((entry, entry), (entry,))
    one = state_lines("plog", log, None)
    assert len(one) == 1 and one[0].startswith("       plog = <<<<[gtx")
    split = state_lines("plog", log, 80)  # split as far as needed: plog[1] is too wide, plog[2] fits
    text = '[gtx |-> <<"t1", 2, 1>>, kind |-> "data", zombie |-> TRUE]'
    # consecutive entries with the same value are one line, their arguments a range
    assert split == [f"       plog[1][1..2] = {text}", f"       plog[2] = <<{text}>>"]
    idle = Record({"st": "none", "w": "", "prepared": frozenset(), "depth": 0})
    busy = [Record({**idle, "st": s, "w": w}) for s, w in (("planned", "w1"), ("open", "w2"))]
    sessions = state_lines("kqp", (busy[0], idle, busy[1], idle, idle, idle, idle), 60)
    assert [x.split(" = ")[0].strip() for x in sessions] == ["kqp[1]", "kqp[2]", "kqp[3]", "kqp[4..7]"]
    assert sessions[-1] == '       kqp[4..7] = [st |-> "none", w |-> "", prepared |-> {}, depth |-> 0]'
    keyed = state_lines("pst", FnMap({0: idle, 1: idle, 3: idle}), 60)  # 1 and 3 are not consecutive
    assert [x.split(" = ")[0].strip() for x in keyed] == ["pst[0..1]", "pst[3]"]
    nested = state_lines("tc", Record({"a": entry, "b": entry}), 60)  # a record of records: a line per field
    assert [x.split(" = ")[0].strip() for x in nested] == ["tc.a", "tc.b"]
    tight = state_lines("e", entry, 30)  # a plain record over twice the width: its fields
    assert [x.strip() for x in tight] == ['e.gtx = <<"t1", 2, 1>>', 'e.kind = "data"', "e.zombie = TRUE"]
