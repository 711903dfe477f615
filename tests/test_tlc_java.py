"""txconform's Java for TLC (trace_check/engines/tlc_java.py): TLC reads a trace window's start
states from a file through TraceLoad's override, and must build exactly the values TLC would build
from the same text as a TLA+ literal."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from trace_check.engines import tlc_java, tlc_tools
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status
from trace_check.values.tla import FnMap, Record, format_value

pytestmark = pytest.mark.tlc


@pytest.fixture(scope="module")
def classes() -> Path:
    found = tlc_java.loader_classes(tlc_tools.find_tla2tools())
    if found is None:
        pytest.skip("no javac here: windows start from literals (the fallback the other tests cover)")
    return found


def _value(rng: random.Random, depth: int = 0) -> Any:
    """A value of the kinds TLC prints: sets and function domains of one kind, as TLC needs."""
    kind = rng.choice(["int", "str", "bool"] + (["tuple", "set", "record", "fn", "interval"] if depth < 3 else []))
    if kind == "int":
        return rng.choice([0, 1, -1, 7, 2**31 - 1, -(2**31 - 1)])  # (-2^31 has no TLA+ literal: TLC reads - 2147483648)
    if kind == "str":
        return rng.choice(["", "t1", 'a"b', "back\\slash", "line\nbreak", "tab\t", "data", "two words"])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "tuple":
        return tuple(_value(rng, depth + 1) for _ in range(rng.randint(0, 3)))
    if kind == "set":
        return frozenset(rng.randint(-3, 3) for _ in range(rng.randint(0, 4)))
    if kind == "record":
        return Record({name: _value(rng, depth + 1) for name in rng.sample(["pid", "epoch", "kind", "a", "zombie", "b1"], rng.randint(1, 4))})
    if kind == "interval":
        lo = rng.randint(-2, 3)
        return range(lo, lo + rng.randint(0, 3))
    return FnMap({k: _value(rng, depth + 1) for k in rng.sample([2, 5, 9, 11], rng.randint(1, 3))})


def _text(v: Any) -> str:
    """format_value's text, with intervals as TLC prints them (lo..hi) wherever they are."""
    if isinstance(v, range):
        return f"{v.start}..{v.stop - 1}"
    if isinstance(v, Record):
        return "[" + ", ".join(f"{k} |-> {_text(x)}" for k, x in v.items()) + "]"
    if isinstance(v, FnMap):
        return "(" + " @@ ".join(f"{k} :> {_text(x)}" for k, x in sorted(v.items())) + ")"
    if isinstance(v, tuple):
        return "<<" + ", ".join(_text(x) for x in v) + ">>"
    return format_value(v)


def _run(folder: Path, module: str, classpath: list[str], config: str = "", states: str = "states") -> str:
    """TLC's output for ``module`` (no deadlock check), its .cfg INIT Init, NEXT Next and ``config``."""
    (folder / f"{module}.cfg").write_text("INIT Init\nNEXT Next\n" + config, encoding="utf-8")
    cmd = [str(tlc_tools.find_java()), "-cp", ":".join([str(tlc_tools.find_tla2tools()), *classpath]), f"-Djava.io.tmpdir={folder}",
           "tlc2.TLC", "-deadlock", "-metadir", str(folder / states), f"{module}.tla"]
    return subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=300).stdout


def test_tlc_reads_each_value_as_it_evaluates_the_same_literal(tmp_path: Path, classes: Path) -> None:
    rng = random.Random(24)
    values = [_value(rng) for _ in range(150)] + [Record(a=1, b=frozenset({1, 2})), (), frozenset(), "x" * 10_000]
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    assumes = []
    for k, v in enumerate(values):
        (tmp_path / f"v{k}.txt").write_text(_text(v), encoding="utf-8")
        assumes.append(f'ASSUME TraceLoaded("v{k}.txt") = {_text(v)}')
    saves = [f'ASSUME TraceSave("s{k}.txt", {_text(v)})' for k, v in enumerate(values)]
    (tmp_path / "Loads.tla").write_text("\n".join([
        "---- MODULE Loads ----", f"EXTENDS TLC, Integers, Sequences, {tlc_java.MODULE}", "VARIABLE x",
        *assumes, *saves, "Init == x = 0", "Next == UNCHANGED x", "===="]) + "\n", encoding="utf-8")
    out = _run(tmp_path, "Loads", [str(classes)])
    assert "No error has been found" in out, out[-2000:]
    # what TraceSave wrote (TLC's print of each value, as a window saves its base's index) reads back the same
    (tmp_path / "Saved.tla").write_text("\n".join([
        "---- MODULE Saved ----", f"EXTENDS TLC, Integers, Sequences, {tlc_java.MODULE}", "VARIABLE x",
        *[f'ASSUME TraceLoaded("s{k}.txt") = {_text(v)}' for k, v in enumerate(values)],
        "Init == x = 0", "Next == UNCHANGED x", "===="]) + "\n", encoding="utf-8")
    out = _run(tmp_path, "Saved", [str(classes)], states="states-saved")
    assert "No error has been found" in out and not list(tmp_path.glob("*.part")), out[-2000:]
    # the same module fails when one loaded value differs from its literal
    (tmp_path / "v0.txt").write_text(_text((values[0], 1)), encoding="utf-8")
    assert "No error has been found" not in _run(tmp_path, "Loads", [str(classes)])


def test_tlc_joins_sequences_in_java_as_it_concatenates_them(tmp_path: Path, classes: Path) -> None:
    """TraceConcat, which joins a window's base and a log's entries (KafkaTxn: Joined) once for
    each pair of sequences, is s \\o t: with empty ones, on pairs met again (the joins it keeps)
    and on more pairs than it keeps (1,681 states of a run that appends to two sequences), with
    its Java and with the module's own definition."""
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    (tmp_path / "Joins.tla").write_text("\n".join([
        "---- MODULE Joins ----", f"EXTENDS TLC, Integers, Sequences, {tlc_java.MODULE}", "VARIABLES x, y",
        'Base == <<"a", [b |-> 1]>>',
        "Init == x = <<>> /\\ y = <<>>",
        "Next == \\/ Len(x) < 40 /\\ x' = Append(x, Len(x)) /\\ UNCHANGED y",
        "        \\/ Len(y) < 40 /\\ y' = Append(y, <<Len(y)>>) /\\ UNCHANGED x",
        "Same == /\\ TraceConcat(Base, x) = Base \\o x /\\ TraceConcat(x, y) = x \\o y /\\ TraceConcat(y, Base) = y \\o Base",
        "        /\\ TraceConcat(<<>>, x) = x /\\ TraceConcat(x, <<>>) = x /\\ Len(TraceConcat(Base, y)) = 2 + Len(y)",
        "        /\\ TraceConcat(Base, x) = TraceConcat(Base, x) /\\ (y # <<>> => TraceConcat(x, y)[Len(x) + 1] = y[1])",
        "===="]) + "\n", encoding="utf-8")
    for classpath in ([str(classes)], []):
        out = _run(tmp_path, "Joins", classpath, "INVARIANT Same\n", f"states{len(classpath)}")
        assert "No error has been found" in out and "1681 distinct states found" in out, out[-2000:]


def test_tlc_tells_states_apart_by_their_fingerprints_in_java_as_by_their_values(tmp_path: Path, classes: Path) -> None:
    """TraceFP, the fingerprint a window's VIEW takes of its state (each part once, by its
    identity), tells apart exactly the states TLC tells apart: the same number of distinct states
    with no view, with TraceFP's Java and with the module's own definition, on a run whose steps
    make equal values in different ways (an append undone by SubSeq, a set by union and as an
    interval, a function by EXCEPT and by a lambda, a record and a function of strings) and
    different values that share parts."""
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    (tmp_path / "Views.tla").write_text("\n".join([
        "---- MODULE Views ----", f"EXTENDS TLC, Integers, Sequences, FiniteSets, {tlc_java.MODULE}", "VARIABLES s, f, r, g",
        "Init == s = <<>> /\\ f = <<0, 0>> /\\ r = {} /\\ g = [a |-> 0]",
        "Next == \\/ Len(s) < 2 /\\ \\E k \\in 1..2 : s' = Append(s, [k |-> k, w |-> Len(s) % 2]) /\\ UNCHANGED <<f, r, g>>",
        "        \\/ s # <<>> /\\ s' = SubSeq(s, 1, Len(s) - 1) /\\ UNCHANGED <<f, r, g>>",
        "        \\/ s # <<>> /\\ s' = Tail(s) /\\ UNCHANGED <<f, r, g>>",
        "        \\/ \\E i \\in 1..2 : f' = [f EXCEPT ![i] = (@ + 1) % 3] /\\ UNCHANGED <<s, r, g>>",
        "        \\/ f' = [i \\in 1..2 |-> f[3 - i]] /\\ UNCHANGED <<s, r, g>>",
        "        \\/ \\E n \\in 0..2 : r' = r \\cup {n} /\\ UNCHANGED <<s, f, g>>",
        "        \\/ \\E n \\in r : r' = r \\ {n} /\\ UNCHANGED <<s, f, g>>",
        "        \\/ r # {} /\\ r' = 0..(Cardinality(r) - 1) /\\ UNCHANGED <<s, f, g>>",
        "        \\/ \\E v \\in 0..1 : g' = [a |-> v] /\\ UNCHANGED <<s, f, r>>",
        "        \\/ \\E v \\in 0..1 : g' = [k \\in {\"a\"} |-> 1 - v] /\\ UNCHANGED <<s, f, r>>",
        "        \\/ g' = [g EXCEPT !.a = s] /\\ UNCHANGED <<s, f, r>>",
        "View == <<TraceFP(<<s, f, r, g>>)>>",
        "===="]) + "\n", encoding="utf-8")
    counts = []
    for view, classpath in ((False, []), (True, [str(classes)]), (True, [])):
        out = _run(tmp_path, "Views", classpath, "VIEW View\n" if view else "", f"states{len(counts)}")
        found = re.findall(r"([0-9]+) distinct states found", out)  # the progress reports, then the total
        assert "No error has been found" in out and found, out[-2000:]
        counts.append(int(found[-1]))
    assert counts[0] > 10_000 and counts == [counts[0]] * 3, counts


def test_tlc_compares_values_in_java_as_it_does(tmp_path: Path, classes: Path) -> None:
    """TraceSame(a, b), which asks after every event which variables a step changed, is a = b: on
    each step of a run whose values share parts, come back equal after a change and are written
    in different ways (an interval and an enumeration, a record and a function of strings, a
    tuple and a function of 1..n), with its Java and with the module's own definition."""
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    (tmp_path / "Sames.tla").write_text("\n".join([
        "---- MODULE Sames ----", f"EXTENDS TLC, Integers, Sequences, FiniteSets, {tlc_java.MODULE}", "VARIABLES x, prev",
        "Init == x = [s |-> <<>>, r |-> {}, g |-> [a |-> 0]] /\\ prev = x",
        "Next == /\\ prev' = x",
        "        /\\ \\/ Len(x.s) < 2 /\\ \\E k \\in 1..2 : x' = [x EXCEPT !.s = Append(@, [k |-> k])]",
        "           \\/ x.s # <<>> /\\ x' = [x EXCEPT !.s = Tail(@)]",
        "           \\/ x' = [x EXCEPT !.s = [i \\in 1..Len(@) |-> @[i]]]",
        "           \\/ \\E n \\in 0..2 : x' = [x EXCEPT !.r = @ \\cup {n}]",
        "           \\/ x.r # {} /\\ x' = [x EXCEPT !.r = 0..(Cardinality(@) - 1)]",
        "           \\/ \\E v \\in 0..1 : x' = [x EXCEPT !.g = [k \\in {\"a\"} |-> v]]",
        "           \\/ \\E v \\in 0..1 : x' = [x EXCEPT !.g = [a |-> v]]",
        "           \\/ x' = x",
        "Same == /\\ TraceSame(x, prev) = (x = prev) /\\ TraceSame(prev, x) = (prev = x)",
        "        /\\ TraceSame(x.r, 0..1) = (x.r = 0..1) /\\ TraceSame(x.g, [k \\in {\"a\"} |-> 0]) = (x.g = [a |-> 0])",
        "        /\\ TraceSame(x.s, <<[k |-> 1]>>) = (x.s = <<[k |-> 1]>>) /\\ TraceSame(x, x)",
        "===="]) + "\n", encoding="utf-8")
    for classpath in ([str(classes)], []):
        out = _run(tmp_path, "Sames", classpath, "INVARIANT Same\n", f"states{len(classpath)}")
        found = re.findall(r"([0-9]+) distinct states found", out)
        assert "No error has been found" in out and found and int(found[-1]) > 100, out[-2000:]


def test_a_value_kept_under_its_key_is_read_back_through_it(tmp_path: Path, classes: Path) -> None:
    """TraceKeep gives a key, a state holds it in place of the value (a trace check's log index),
    and TraceKept reads the value back: equal to the value kept, in every state of a run whose
    values share parts and come back equal, with the same states as with the module's own
    definitions; a key nothing was kept under stops TLC with a message."""
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    (tmp_path / "Keeps.tla").write_text("\n".join([
        "---- MODULE Keeps ----", f"EXTENDS TLC, Integers, Sequences, {tlc_java.MODULE}", "VARIABLES x, key",
        "Init == x = [open |-> <<>>, seen |-> {}] /\\ key = TraceKeep(x)",
        "Next == \\E v \\in 1..3 : /\\ Len(x.open) < 4",
        "                          /\\ x' = [x EXCEPT !.open = IF v = 3 THEN <<>> ELSE Append(@, v), !.seen = @ \\cup {v}]",
        "                          /\\ key' = TraceKeep(x')",
        "Same == TraceKept(key) = x",
        "===="]) + "\n", encoding="utf-8")
    counts = []
    for classpath in ([str(classes)], []):
        out = _run(tmp_path, "Keeps", classpath, "INVARIANT Same\n", f"states{len(classpath)}")
        found = re.findall(r"([0-9]+) distinct states found", out)
        assert "No error has been found" in out and found, out[-2000:]
        counts.append(int(found[-1]))
    assert counts[0] > 50 and counts[0] == counts[1], counts
    (tmp_path / "Lost.tla").write_text("\n".join([
        "---- MODULE Lost ----", f"EXTENDS TLC, Integers, {tlc_java.MODULE}", "VARIABLE x",
        "Init == x = TraceKept(<<1, 2>>)", "Next == UNCHANGED x", "===="]) + "\n", encoding="utf-8")
    assert "TraceKept: no value is kept under <<1, 2>>" in _run(tmp_path, "Lost", [str(classes)])


def test_without_the_class_or_with_a_bad_file_tlc_stops_with_a_message(tmp_path: Path, classes: Path) -> None:
    (tmp_path / f"{tlc_java.MODULE}.tla").write_text(tlc_java.MODULE_TEXT, encoding="utf-8")
    (tmp_path / "v.txt").write_text("[a |-> <<1, 2]", encoding="utf-8")
    (tmp_path / "Bad.tla").write_text("\n".join([
        "---- MODULE Bad ----", f"EXTENDS TLC, {tlc_java.MODULE}", "VARIABLE x",
        'ASSUME TraceLoaded("v.txt") = 1', "Init == x = 0", "Next == UNCHANGED x", "===="]) + "\n", encoding="utf-8")
    assert "TraceLoaded needs txconform's Java class" in _run(tmp_path, "Bad", [])
    assert "v.txt: offset 13: expected '>>'" in _run(tmp_path, "Bad", [str(classes)])


def test_a_windowed_check_gives_the_same_verdicts_with_and_without_the_class(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            classes: Path) -> None:
    """Windows of 25 events over a faulty run and over the same run with one event altered: the
    events, the start states and the bases of their logs read by TLC from files, and the events
    and the whole start states written into the module."""
    from ref_impl.kafka.sim.faults import Faults
    from ref_impl.kafka.sim.run import simulate, write_trace
    from ref_impl.kafka.sim.workloads import Workload

    head, events = simulate(Workload.parse("transfer:ids=2,aborts=true,resilient=true,txns=3"), Faults.parse("all"), 3, max_events=400)
    write_trace(tmp_path / "ok.jsonl", head, events)
    bad = [dict(e) for e in events]
    k = next(i for i, e in enumerate(bad) if e["action"] == "Fetch" and i > 60)
    bad[k]["lso"] = bad[k]["lso"] + 1
    write_trace(tmp_path / "bad.jsonl", head, bad)
    verdicts = {}
    for loader in ("1", "0"):
        monkeypatch.setenv(tlc_java.LOADER_ENV, loader)
        for name in ("ok", "bad"):
            v = check_trace(read_trace(tmp_path / f"{name}.jsonl"), CheckOptions(window=25))
            verdicts[loader, name] = (v.status, v.at_event, v.reason, v.distinct_states, v.state_before)
    assert verdicts["1", "ok"][0] is Status.ACCEPTED and verdicts["1", "bad"][0] is Status.REJECTED
    assert verdicts["1", "ok"] == verdicts["0", "ok"] and verdicts["1", "bad"] == verdicts["0", "bad"]


def test_without_javac_its_sources_or_with_the_switch_off_windows_start_from_literals(monkeypatch: pytest.MonkeyPatch,
                                                                                      tmp_path: Path) -> None:
    from trace_check.traces.module_text import Window, loaded

    jar = tlc_tools.find_tla2tools()
    monkeypatch.setenv(tlc_java.LOADER_ENV, "0")
    assert tlc_java.loader_classes(jar) is None
    assert loaded(Window(start=("[x |-> 1]",))).classes is None
    monkeypatch.setenv(tlc_java.LOADER_ENV, "1")
    monkeypatch.setattr(tlc_java, "_javac", lambda: None)
    assert tlc_java.loader_classes(jar) is None
    monkeypatch.setattr(tlc_java, "_javac", lambda: Path("/usr/bin/javac"))
    monkeypatch.setattr(tlc_java, "SOURCES", (tmp_path / "Missing.java",))
    assert tlc_java.loader_classes(jar) is None
    assert loaded(Window()).classes is None
