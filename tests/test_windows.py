"""Checking a trace in windows (issue 24): each window a TLC run of its own, starting from exactly the
spec states the last one ended in (trace_check/traces/handoff.py). The claim is that the verdict is
the whole trace's: accepted, an invariant violated after event N, or rejected at event N with the
same reason and the same state before it; and that the windows together explore exactly the states
one run explores. Each test checks a trace whole and in windows and compares the verdicts, with
window boundaries placed inside a transaction, after a failover and after a retried request, on
traces logged in part (several states handed on), on mutants, on hypothesis-generated runs, and for
every protocol the tool knows."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from trace_check.traces import handoff, plugins, spec_text
from trace_check.traces.mutation import apply, mutations
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import SimulateOptions
from trace_check.traces.reader import Trace, TraceError, read_trace, read_windows
from trace_check.traces.validation import check_trace, check_trace_file
from trace_check.traces.verdicts import Status, Verdict
from trace_check.values.tla import FnMap, Record, format_value
from trace_check.values.tlc_print import parse_value

pytestmark = pytest.mark.tlc


def same(whole: Verdict, windowed: Verdict) -> None:
    """The two verdicts agree on everything the user is told (the time aside)."""
    assert windowed.windows > 1, "the test meant to split the trace"
    for field in ("status", "events", "at_event", "invariant", "event", "reason", "state_before", "message", "distinct_states"):
        assert getattr(windowed, field) == getattr(whole, field), field


def write(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in [header, *events]))
    return path


def run(tmp: Path, workload: str, faults: str, seed: int, name: str = "t.jsonl", **kw: Any) -> Path:
    head, events = simulate(Workload.parse(workload), Faults.parse(faults), seed, **kw)
    write_trace(tmp / name, head, events)
    return tmp / name


def first(events: tuple[dict[str, Any], ...], pred: Callable[[dict[str, Any]], bool]) -> int:
    """The number (1-based) of the first event that satisfies pred."""
    return next(n for n, ev in enumerate(events, 1) if pred(ev))


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Trace:
    """A faulty TV1 run with a failover and a retried request, checked whole once."""
    tmp = tmp_path_factory.mktemp("faulty")
    for seed in range(1, 40):
        trace = read_trace(run(tmp, "transfer:version=TV1,aborts=true", "all", seed))
        actions = {ev["action"] for ev in trace.events}
        if {"Failover", "Retry", "TcEndTxn"} <= actions:
            return trace
    raise AssertionError("no seed gave a run with a failover and a retry")


@pytest.fixture(scope="module")
def faulty_whole(faulty: Trace) -> Verdict:
    v = check_trace(faulty)
    assert v.status is Status.ACCEPTED and v.windows == 1, v.reason or v.message
    return v


@pytest.mark.parametrize("where", ["inside a transaction", "after a failover", "after a retried request"])
def test_a_boundary_anywhere_gives_the_whole_trace_verdict(faulty: Trace, faulty_whole: Verdict, where: str) -> None:
    evs = faulty.events
    if where == "inside a transaction":
        begin = first(evs, lambda ev: ev["action"] == "BeginTxn")
        boundary = begin + 3  # the transaction's requests are in flight on both sides of the boundary
        assert any(ev["action"] == "TcEndTxn" for ev in evs[boundary:])
    elif where == "after a failover":
        boundary = first(evs, lambda ev: ev["action"] == "Failover")
    else:
        boundary = first(evs, lambda ev: ev["action"] == "Retry")
    same(faulty_whole, check_trace(faulty, CheckOptions(), ends=[boundary]))


def test_a_window_from_one_state_starts_from_bases_of_its_logs(faulty: Trace, faulty_whole: Verdict, tmp_path: Path) -> None:
    """A window that starts from one state gives TLC its logs' entries as the spec's bases, in files
    it reads once (handoff.Base), and the state keeps only the entries after them, with the same
    verdict and the same states explored as one run."""
    from trace_check.engines import tlc_java, tlc_tools

    if tlc_java.loader_classes(tlc_tools.find_tla2tools()) is None:
        pytest.skip("no javac here: windows start from whole states (tests/test_tlc_java.py covers that way)")
    work = tmp_path / "work"
    boundary = first(faulty.events, lambda ev: ev["action"] == "Failover")
    same(faulty_whole, check_trace(faulty, CheckOptions(workdir=work), ends=[boundary]))
    folder = work / "window2" / "accept"
    cfg = (folder / "TraceRun.cfg").read_text()
    assert "PlogBase <- TraceBase_plog" in cfg and "TlogBase <- TraceBase_tlog" in cfg and "Joined <- TraceConcat" in cfg
    (start,) = parse_value((folder / handoff.START_FILE).read_text())
    base = {log: parse_value((folder / f"TraceBase_{log}.txt").read_text()) for log in ("plog", "tlog")}
    in_base = sum(len(entries) for entries in base["plog"]) + sum(len(entries) for entries in base["tlog"].values())
    in_state = sum(len(entries) for entries in start["plog"]) + sum(len(entries) for entries in start["tlog"].values())
    # the logs' entries before the boundary: each event that appended one logged where it went
    appended = sum(1 for ev in faulty.events[:boundary] if ev.get("append_offset", -1) >= 0 or ev["action"] == "TcAppend")
    assert in_base > 0 and in_base + in_state == appended, (in_base, in_state, appended)
    assert in_state < in_base


def test_a_window_computes_its_bases_index_from_the_one_a_window_before_saved(faulty: Trace, faulty_whole: Verdict, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Each window with a base saves the index of it (TraceSave), and a later window computes its
    own base's index from the saved one and the entries after (IndexOf_LSince, handoff.prior_of),
    not from the whole base: the same verdicts, the same states explored, and every saved index
    the same value as the one computed from scratch, with a boundary after a failover; a mutant is
    rejected at the same event for the same reason."""
    from trace_check.engines import tlc_java, tlc_tools

    if tlc_java.loader_classes(tlc_tools.find_tla2tools()) is None:
        pytest.skip("no javac here: windows start from whole states (tests/test_tlc_java.py covers that way)")
    failover = first(faulty.events, lambda ev: ev["action"] == "Failover")
    n = len(faulty.events)
    ends = sorted({n // 5, failover, 2 * n // 5, 3 * n // 5, 4 * n // 5} - {0, n})
    same(faulty_whole, check_trace(faulty, CheckOptions(workdir=tmp_path / "prior"), ends=ends))
    modules = [(tmp_path / "prior" / f"window{k}" / "accept" / "TraceRun.tla").read_text() for k in range(3, len(ends) + 2)]
    assert all("IndexOf_plogSince(PlogBase, " in m and "IndexOf_tlogSince(TlogBase, " in m and "/indexes/run" in m for m in modules)
    with monkeypatch.context() as m:
        m.setattr(handoff, "prior_of", lambda saved, base: None)
        same(faulty_whole, check_trace(faulty, CheckOptions(workdir=tmp_path / "scratch"), ends=ends))
    saved = sorted((tmp_path / "prior" / "indexes").glob("run*.txt"))
    assert len(saved) == 2 * len(ends)
    for f in saved:
        assert parse_value(f.read_text()) == parse_value((tmp_path / "scratch" / "indexes" / f.name).read_text()), f.name
    # a rejection in a window whose base index came from a prior one
    events = [dict(e) for e in faulty.events]
    k = first(faulty.events[ends[1]:], lambda ev: ev["action"] == "TcAddPartitionsToTxn" and ev.get("result") == "NONE") + ends[1]
    events[k - 1]["result"] = "INVALID_TXN_STATE"
    bad = read_trace(write(tmp_path / "bad.jsonl", faulty.header, events))
    whole = check_trace(bad)
    assert whole.status is Status.REJECTED and whole.at_event == k
    same(whole, check_trace(bad, CheckOptions(), ends=ends))


def test_a_violation_in_a_later_window_is_the_whole_trace_violation(tmp_path: Path) -> None:
    # KAFKA-17754 under TV1 (tests/test_trace_validation.py): a late EndTxn breaks an invariant.
    schedule = Schedule((Fault(0, "delay", 0, 40, "EndTxn"), Fault(0, "retry", 0, 0, "EndTxn")))
    for seed in range(40):
        head, events = simulate(Workload.parse("transfer:version=TV1,txns=3"), Faults(), seed, schedule=schedule)
        write_trace(tmp_path / f"late-{seed}.jsonl", head, events)
        trace = read_trace(tmp_path / f"late-{seed}.jsonl")
        whole = check_trace(trace)
        if whole.status is Status.VIOLATES:
            assert whole.at_event is not None and whole.at_event > 10
            same(whole, check_trace(trace, CheckOptions(), ends=[whole.at_event // 2]))
            # a window that ends right before the violating event: the next one starts from states
            # the window before checked, and checks them no more, but checks its first step
            same(whole, check_trace(trace, CheckOptions(), ends=[whole.at_event - 1]))
            return
    raise AssertionError("no run with a late EndTxn broke an invariant")


def test_mutants_are_rejected_at_the_same_event_for_the_same_reason(faulty: Trace, tmp_path: Path) -> None:
    """The boundary falls before the mutated event, so the rejection, its diagnosis and the state
    shown come from a window that started from handed-on states."""
    compared = {"rejected": 0, "accepted": 0}
    for k, m in enumerate(mutations(faulty, 20, seed=24)):
        if m.index < 12:
            continue
        events = apply([dict(e) for e in faulty.events], m)
        mutant = read_trace(write(tmp_path / f"m{k}.jsonl", faulty.header, events))
        whole = check_trace(mutant)
        if whole.status is Status.REJECTED:
            assert whole.at_event is not None
            if whole.at_event < 6:
                continue
            same(whole, check_trace(mutant, CheckOptions(), ends=[whole.at_event - 3]))
        elif compared["accepted"] == 0:
            same(whole, check_trace(mutant, CheckOptions(), ends=[m.index - 3]))
        else:
            continue
        compared[whole.status.value] = compared.get(whole.status.value, 0) + 1
        if compared["rejected"] >= 1 and compared["accepted"] >= 1:
            return
    raise AssertionError(f"too few mutants compared: {compared}")


KEYS = {"action", "event", "actor", "txn_id", "instance", "partition", "isolation", "from", "group", "committed_offset"}


def test_a_window_that_starts_at_the_rejected_event_explains_it_the_same_way(faulty: Trace, tmp_path: Path) -> None:
    """The diagnosis then fails in the window's initial state, which TLC prints inside its message
    (no numbered state): the state before the event and the reason are still the whole trace's."""
    events = [dict(e) for e in faulty.events]
    n = first(faulty.events[20:], lambda ev: ev["action"] == "TcAddPartitionsToTxn" and ev.get("result") == "NONE") + 20
    events[n - 1]["result"] = "INVALID_TXN_STATE"
    bad = read_trace(write(tmp_path / "bad.jsonl", faulty.header, events))
    whole = check_trace(bad)
    assert whole.status is Status.REJECTED and whole.at_event == n and whole.state_before
    assert whole.reason.startswith("the step is possible, but it does not answer INVALID_TXN_STATE")
    same(whole, check_trace(bad, CheckOptions(), ends=[n - 1]))


def test_a_trace_logged_in_part_hands_on_several_states(faulty: Trace, tmp_path: Path) -> None:
    partial = [{c: v for c, v in ev.items() if c in KEYS} for ev in faulty.events]
    trace = read_trace(write(tmp_path / "partial.jsonl", faulty.header, partial))
    whole = check_trace(trace)
    assert whole.status is Status.ACCEPTED
    assert whole.distinct_states is not None and whole.distinct_states > len(partial) + 1  # several states at some level
    windowed = check_trace(trace, CheckOptions(), ends=[len(partial) // 3, 2 * len(partial) // 3])
    same(whole, windowed)
    assert windowed.handed_on > 1
    # Rejected after a boundary: an event no state of the level explains.
    n = first(trace.events[len(partial) // 3 + 2 :], lambda ev: ev["action"] == "TcEndTxn") + len(partial) // 3 + 2
    wrong = [dict(ev) for ev in partial]
    wrong[n - 1]["txn_id"] = "t9"
    header = json.loads(json.dumps(faulty.header))
    header["constants"]["TxnIds"] = sorted({*header["constants"]["TxnIds"], "t9"})
    bad = read_trace(write(tmp_path / "partial-wrong.jsonl", header, wrong))
    whole = check_trace(bad)
    assert whole.status is Status.REJECTED and whole.at_event == n
    windowed = check_trace(bad, CheckOptions(), ends=[len(partial) // 3])
    assert (windowed.status, windowed.at_event, windowed.event) == (whole.status, whole.at_event, whole.event)
    assert windowed.distinct_states == whole.distinct_states


def test_at_the_end_only_the_last_window_checks_the_invariants(faulty: Trace) -> None:
    whole = check_trace(faulty, CheckOptions(every_step=False))
    same(whole, check_trace(faulty, CheckOptions(every_step=False), ends=[len(faulty.events) // 2]))


@settings(max_examples=2, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
# (seed 3099 of ctp with lost requests: the reference broker's run is rejected at event 23, before the cut)
@example(seed=3099, workload="ctp:aborts=true", faults="loss=1,late=EndTxn+Produce,retries=2", cut=0.5)
@given(
    seed=st.integers(0, 10_000),
    workload=st.sampled_from(["transfer:version=TV1,aborts=true", "transfer:aborts=true,txns=2", "ctp:aborts=true", "transfer:version=TV1V"]),
    faults=st.sampled_from(["all", "loss=1,late=EndTxn+Produce,retries=2", "hangs=1,failovers=1,restarts=1"]),
    cut=st.floats(0.1, 0.9),
)
def test_hypothesis_runs_get_the_same_verdict_in_windows(tmp_path: Path, seed: int, workload: str, faults: str, cut: float) -> None:
    trace = read_trace(run(tmp_path, workload, faults, seed, name=f"h{seed}.jsonl"))
    end = min(max(1, int(len(trace.events) * cut)), len(trace.events) - 1)
    whole = check_trace(trace)
    if whole.at_event is not None:  # rejected or violated at event n: the windows split before it
        assume(whole.at_event > 2)
        end = min(end, whole.at_event - 1)
    same(whole, check_trace(trace, CheckOptions(), ends=[end]))


@pytest.mark.parametrize("name,workload,faults", [("ydb", "copy:workers=2,txns=3", "all"), ("cone", "album:adders=2,retaggers=1", "all")])
def test_every_protocol_checks_in_windows(tmp_path: Path, name: str, workload: str, faults: str) -> None:
    protocol = plugins.get(name)
    sim = protocol.simulate(SimulateOptions(seed=3, workload=workload, faults=faults))
    trace = read_trace(write(tmp_path / f"{name}.jsonl", sim.header, list(sim.events)))
    whole = check_trace(trace, CheckOptions(engine="tlc"))
    assert whole.status is Status.ACCEPTED, whole.reason or whole.message
    same(whole, check_trace(trace, CheckOptions(engine="tlc", window=len(trace.events) // 2 + 1)))


def test_the_variables_handed_on_are_the_state_tlc_prints(faulty: Trace, tmp_path: Path) -> None:
    events = [dict(e) for e in faulty.events]
    n = first(faulty.events, lambda ev: ev["action"] == "TcAddPartitionsToTxn" and ev.get("result") == "NONE")
    events[n - 1]["result"] = "INVALID_TXN_STATE"
    v = check_trace(read_trace(write(tmp_path / "bad.jsonl", faulty.header, events)))
    assert v.status is Status.REJECTED and v.state_before is not None
    assert set(handoff.state_fields(faulty.protocol)) == set(v.state_before)


def test_a_file_is_read_window_by_window_and_checked_whole_first(faulty: Trace, tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", faulty.header, list(faulty.events))
    sizes = [(w.first, len(w.events)) for w in read_windows(path, 40)]
    n = len(faulty.events)
    assert sizes == [(k + 1, min(40, n - k)) for k in range(0, n, 40)]
    assert check_trace_file(path, CheckOptions(window=40)).distinct_states == check_trace(faulty).distinct_states
    # A bad last line is reported before any engine runs.
    with open(path, "a") as f:
        f.write('{"action": "NoSuchAction"}\n')
    work = tmp_path / "work"
    with pytest.raises(TraceError, match=rf":{n + 2}:"):
        check_trace_file(path, CheckOptions(window=40, workdir=work))
    assert not work.exists()


TEXTS = st.text(alphabet=st.sampled_from(list('ab ,"\\[]<>|->')), max_size=12)
VALUES = st.recursive(
    st.one_of(st.integers(-5, 5), st.booleans(), TEXTS),
    lambda inner: st.one_of(st.lists(inner, max_size=6).map(tuple), st.frozensets(st.integers(0, 9), max_size=6)),
    max_leaves=40,
)


@given(VALUES)
def test_broken_lines_are_the_same_value(value: Any) -> None:
    text = format_value(value)
    assert parse_value(handoff._broken(text)) == value


RECORD_VALUES = st.recursive(
    st.one_of(st.integers(-5, 5), st.booleans(), TEXTS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(tuple),
        st.frozensets(st.integers(0, 9), max_size=4),
        st.dictionaries(st.sampled_from(["a", "b", "kind", "pid"]), inner, min_size=1, max_size=3).map(Record),
        st.dictionaries(st.integers(0, 3), inner, min_size=1, max_size=3).map(FnMap),
    ),
    max_leaves=20,
)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(values=st.lists(RECORD_VALUES, min_size=30, max_size=30))
def test_records_written_as_calls_are_the_same_values_to_tlc(values: list[Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    """The hand-off writes each record as a call of an operator per set of field names (SANY keeps
    less of it); TLC finds each value equal to the record it stands for."""
    import subprocess

    from trace_check.engines.tlc_tools import find_java, find_tla2tools

    records = handoff._Records()
    texts = [format_value(v) for v in values]
    compact = [handoff._broken(records.compact(t)) for t in texts]
    assert all("|->" not in spec_text.STRING_RE.sub('""', c) for c in compact)  # every record became a call
    work = tmp_path_factory.mktemp("records")
    assumes = "\n".join(f"ASSUME ({t}) = ({c})" for t, c in zip(texts, compact, strict=True))
    (work / "Records.tla").write_text("---- MODULE Records ----\nEXTENDS Integers, TLC\n" + "\n".join(records.definitions())
                                      + f"\n{assumes}\nVARIABLE x\nInit == x = 0\nNext == UNCHANGED x\n====\n")
    (work / "Records.cfg").write_text("INIT Init\nNEXT Next\n")
    out = subprocess.run([str(find_java()), f"-Djava.io.tmpdir={work}", "-cp", str(find_tla2tools()), "tlc2.TLC",
                          "-metadir", str(work / "states"), "Records.tla"], cwd=work, capture_output=True, text=True,
                         timeout=300).stdout
    assert "Model checking completed. No error has been found." in out, out[-3000:]


# --- The view: a window that starts from one state fingerprints only what lies beyond its logs ---


def test_the_logs_change_only_at_their_end_or_by_a_cut_to_a_prefix() -> None:
    """The plug-in's claim (Protocol.logs) that makes the view exact, checked on the spec's text:
    every assignment to a log appends at the end of one log or cuts it back to a prefix."""
    protocol = plugins.get("kafka")
    spec = (protocol.spec_dir / "KafkaTxn.tla").read_text()
    for log in protocol.logs:
        updates = [line.strip() for line in spec.splitlines() if f"{log}' =" in line]
        assert updates, log
        for u in updates:
            rhs = u.split(f"{log}' =", 1)[1].strip()
            assert (rhs.startswith(f"[{log} EXCEPT ![") and ("Append(@," in rhs or rhs.startswith(f"[{log} EXCEPT ![p] = SubSeq(@, 1, "))) \
                or rhs.startswith("IF verdict = \"append\""), u
    # the one cut: to a prefix, the base (which ends at lag[p] or before) and the entries after it
    assert "plog' = [plog EXCEPT ![p] = SubSeq(@, 1, lag[p] - Len(PlogBase[p]))]" in spec


@pytest.mark.parametrize("java", [True, False])
def test_a_log_cut_below_the_window_start_is_checked_again_without_the_view(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            java: bool) -> None:
    """An unclean election cuts the log back to where the follower fell behind. With the window
    boundary between the two, the cut goes below the window's starting log. Without txconform's
    Java for TLC, the view leaves out the start state's log entries: TraceLogsKept fails, the
    window runs again without the view, and the verdict is still the whole trace's. With it, the
    view is the state's fingerprint (TraceFP), which tells every two logs apart, cut or not: one
    run, the same verdict."""
    from trace_check.engines import tlc_java, tlc_tools

    if java and tlc_java.loader_classes(tlc_tools.find_tla2tools()) is None:
        pytest.skip("no javac here")
    if not java:
        monkeypatch.setenv(tlc_java.LOADER_ENV, "0")
    for seed in range(1, 20):
        trace = read_trace(run(tmp_path, "transfer:version=TV1,partitions=1", "unclean", seed, name=f"u{seed}.jsonl"))
        lag = first(trace.events, lambda ev: ev["action"] == "FollowerLag")
        cut = first(trace.events, lambda ev: ev["action"] == "UncleanElection")
        appended = [n for n in range(lag + 1, cut) if trace.events[n - 1]["action"] in ("LeaderProduce", "LeaderMarker")]
        if appended:
            break
    else:
        raise AssertionError("no run appended between a follower falling behind and its unclean election")
    whole = check_trace(trace)
    work = tmp_path / "work"
    windowed = check_trace(trace, CheckOptions(workdir=work), ends=[appended[-1]])
    same(whole, windowed)
    assert (work / "window2" / "accept-without-view").is_dir() is not java
    assert "VIEW TraceView" in (work / "window2" / "accept" / "TraceRun.cfg").read_text()
    assert ("TraceFP(" in (work / "window2" / "accept" / "TraceRun.tla").read_text()) is java


# --- After every event: each invariant where a variable it reads changed (trace_check/traces/reads.py) ---


def test_what_an_invariant_reads_is_found_through_the_definitions_it_names() -> None:
    from trace_check.traces.invariants import invariants_of
    from trace_check.traces.reads import ReadsError, reads

    kafka = plugins.get("kafka")
    assert reads(kafka, "MarkerSafety") == {"plog"}
    assert {"net", "plog"} <= reads(kafka, "Atomicity")  # net through Quiescent
    assert "l" not in reads(kafka, "ReadCommitted")  # \E is a quantifier, not the trace spec's E (which reads l)
    for name in ("kafka", "ydb", "cone"):
        protocol = plugins.get(name)
        variables = set(spec_text.spec_variables(protocol))
        for inv in invariants_of(protocol):
            assert reads(protocol, inv) <= variables - {"l"}, (name, inv)
    with pytest.raises(ReadsError, match="define no Nonexistent"):
        reads(kafka, "Nonexistent")


def test_an_invariant_made_of_named_parts_is_checked_part_by_part() -> None:
    from trace_check.traces.invariants import changed_definitions
    from trace_check.traces.reads import ReadsError, conjuncts, reads

    kafka = plugins.get("kafka")
    assert conjuncts(kafka, "Atomicity") == ("AtomicityNow", "AtomicityWhenQuiescent")
    assert reads(kafka, "AtomicityNow") == {"plog"}  # checked only after a step that changed a log
    assert "net" in reads(kafka, "AtomicityWhenQuiescent")
    assert conjuncts(plugins.get("ydb"), "ExactlyOnce") == ("NoDuplicates", "NoLoss")
    assert conjuncts(kafka, "TypeOK")[:3] == ("NetTypeOK", "ClTypeOK", "TcTypeOK")  # one part per variable
    assert reads(kafka, "TcTypeOK") == {"tc"} and reads(kafka, "CepochTypeOK") == {"cepoch", "failovers"}
    for name in ("MarkerSafety", "Quiescent", "AtomicityWith"):  # not a conjunction of names alone
        assert conjuncts(kafka, name) == (name,)
    with pytest.raises(ReadsError, match="define no Nonexistent"):
        conjuncts(kafka, "Nonexistent")
    lines = changed_definitions(kafka, "TraceInit")
    # each named part is an invariant of its own, so that TLC names the part that fails
    assert not any(x.startswith("TraceInv_Atomicity ==") for x in lines)
    atomicity = " ".join(x for x in lines if x.startswith("TraceInv_Atomicity__"))
    assert [x.split(" ==")[0] for x in lines if x.startswith("TraceInv_Atomicity__")] == [
        "TraceInv_Atomicity__AtomicityNow", "TraceInv_Atomicity__AtomicityWhenQuiescent"]
    # the part that reads the network is checked through the logs' index the checker keeps
    assert atomicity.count("=>") == 2 and ("=> AtomicityWhenQuiescentSinceIndexed(net, tracePrev_net, tc, tracePrev_tc, "
                                           "Plogs, traceFrom_plog, traceIndexBefore_plog, traceIndex_plog))") in atomicity
    assert "ReadCommittedSinceIndexed(Plogs, traceFrom_plog, traceIndexBefore_plog, traceIndex_plog)" in next(
        x for x in lines if x.startswith("TraceInv_ReadCommitted =="))
    # kept from the state before's, updated from the new entries alone; in an initial state, from
    # the index of the base (once: a constant) and the entries after it. The forms read each log
    # whole, base and entries (Protocol.log_bases); the lengths before count the base's entries.
    assert "traceIndex_plog' = IndexOf_plogSince(Plogs', traceFrom_plog', traceIndex_plog)" in next(
        x for x in lines if x.startswith("TraceChangedNext =="))
    assert "TraceBaseIndex_plog == IndexOf_plog(PlogBase)" in lines
    assert ("traceIndex_plog = IndexOf_plogSince(Plogs, [logKey \\in DOMAIN plog |-> Len(PlogBase[logKey])], TraceBaseIndex_plog)"
            in next(x for x in lines if x.startswith("TraceChangedInit ==")))
    assert ("traceFrom_plog' = [logKey \\in DOMAIN plog' |-> IF logKey \\in DOMAIN plog /\\ Len(plog'[logKey]) >= Len(plog[logKey]) "
            "THEN Len(PlogBase[logKey]) + Len(plog[logKey]) ELSE 0]") in next(x for x in lines if x.startswith("TraceChangedNext =="))
    # tlog's index is kept for LatestInstance alone (Protocol.from_index): no invariant's form reads it
    assert "traceIndex_tlog' = IndexOf_tlogSince(Tlogs', traceFrom_tlog', traceIndex_tlog)" in next(
        x for x in lines if x.startswith("TraceChangedNext =="))
    assert not any("traceIndex_tlog" in x or "traceIndexBefore_tlog" in x for x in lines if x.startswith("TraceInv_"))
    # the part that reads only the logs is checked from the state before's log lengths and the index
    assert "=> AtomicityNowSinceIndexed(Plogs, traceFrom_plog, traceIndexBefore_plog, traceIndex_plog))" in atomicity
    hanging = next(x for x in lines if x.startswith("TraceInv_NoHangingTransaction =="))
    assert "NoHangingTransactionSince(Tlogs, traceFrom_tlog, Plogs, traceFrom_plog)" in hanging  # logs in Protocol.logs order
    # a variable that is no log is given with its value in the state before, after the index of
    # the log declared before it
    assert ("ProducerStateInLogSinceIndexed(Plogs, traceFrom_plog, traceIndexBefore_plog, traceIndex_plog, pst, "
            "tracePrev_pst)") in next(x for x in lines if x.startswith("TraceInv_ProducerStateInLog =="))
    # each part of TypeOK reads one variable (CepochTypeOK two) and has no form: it is checked
    # after a step that changed what it reads
    type_ok = " ".join(x for x in lines if x.startswith("TraceInv_TypeOK__"))
    assert "=> TcTypeOK)" in type_ok and "=> PlogTypeOK)" in type_ok


def test_a_form_checked_from_the_state_before_that_reads_a_variable_is_refused(tmp_path: Path) -> None:
    """XSince is given every variable X reads and what is known of it; one that reads a variable
    itself would read the state after, not what it was given: an error that names it."""
    import shutil

    import attrs

    from trace_check.traces.reads import ReadsError, since_form

    kafka = plugins.get("kafka")
    assert since_form(kafka, "MarkerSafety") == ("MarkerSafetySince", ("plog",), ())
    assert since_form(kafka, "NoHangingTransaction") == ("NoHangingTransactionSince", ("tlog", "plog"), ())  # declaration order
    assert since_form(kafka, "TypeOK") is None
    assert since_form(kafka, "ReadCommitted") == ("ReadCommittedSinceIndexed", ("plog",), ("plog",))
    specs = tmp_path / "kafka"
    shutil.copytree(kafka.spec_dir, specs)
    props = specs / "KafkaTxnProperties.tla"
    text = props.read_text(encoding="utf-8").replace("\n====", "\nTypeOKSince(n, before) == net = {}\n\n====", 1)
    props.write_text(text, encoding="utf-8")
    with pytest.raises(ReadsError, match="TypeOKSince reads net: it must read only its arguments"):
        since_form(attrs.evolve(kafka, spec_dir=specs), "TypeOK")
    # an index kept from the state before must not read the state after either, and needs both halves
    for k, (right, wrong, error) in enumerate((
        ("IndexOf_plogSince(pl, from, before) ==\n", "IndexOf_plogSince(pl, from, before) == net = {} /\\\n",
         "IndexOf_plogSince reads net: it must read only its arguments"),
        ("IndexOf_plogSince(pl, from, before) ==", "Unused(pl, from, before) ==", "IndexOf_plog is defined but IndexOf_plogSince is not"),
    )):
        variant = tmp_path / f"variant{k}"
        shutil.copytree(kafka.spec_dir, variant)
        original = (variant / "KafkaTxnSince.tla").read_text(encoding="utf-8")
        assert original.count(right) == 1
        (variant / "KafkaTxnSince.tla").write_text(original.replace(right, wrong), encoding="utf-8")
        with pytest.raises(ReadsError, match=error):
            since_form(attrs.evolve(kafka, spec_dir=variant), "ReadCommitted")


def test_a_record_field_named_like_a_variable_is_not_read_but_a_set_or_bound_that_is_one_is(tmp_path: Path) -> None:
    import attrs

    from trace_check.traces.reads import reads

    (tmp_path / "Toy.tla").write_text("""---- MODULE Toy ----
EXTENDS Integers
VARIABLES x, y, z, w
Fields == [x |-> 1, y |-> 2].x + [w EXCEPT !.y = 3].z
Domain == [k \\in x |-> k]
Interval == 0..y
Record == [a |-> 1,
           z |-> 2]
====
""", encoding="utf-8")
    toy = attrs.evolve(plugins.get("kafka"), spec_dir=tmp_path, trace_module="Toy")
    assert reads(toy, "Fields") == {"w"}  # x, y: fields of a record; .x, !.y, .z: field names
    assert reads(toy, "Domain") == {"x"}  # the domain of a function, before |->
    assert reads(toy, "Interval") == {"y"}  # 0..y is an interval, not a field
    assert reads(toy, "Record") == set()
    kafka = plugins.get("kafka")
    assert reads(kafka, "ProducerStateInLog") == {"plog", "pst"}  # its records' cepoch field is not the variable


def test_after_every_event_the_lso_comes_from_the_index(faulty: Trace, tmp_path: Path) -> None:
    """Protocol.from_index: after every event the run computes PartitionLSO and LatestInstance from
    the indexes of the logs it keeps (MCKafkaTxnForms' IndexMeans checks that each pair agrees); at
    the end, it has no index and reads the logs. The verdicts are the whole trace's either way (the
    tests above)."""
    from trace_check.engines import tlc_java, tlc_tools

    for every_step, folder in ((True, "every"), (False, "end")):
        work = tmp_path / folder
        v = check_trace(faulty, CheckOptions(every_step=every_step, workdir=work))
        assert v.status is Status.ACCEPTED
        cfg = (work / "accept" / "TraceRun.cfg").read_text()
        module = (work / "accept" / "TraceRun.tla").read_text()
        assert ("PartitionLSO <- TraceFromIndex_PartitionLSO" in cfg) is every_step
        assert ("TraceFromIndex_PartitionLSO(trArg1) == PartitionLSOFromIndex(trArg1, traceIndex_plog)" in module) is every_step
        # the same for the instance that holds a transactional.id's newest epoch, from __transaction_state's index
        assert ("LatestInstance <- TraceFromIndex_LatestInstance" in cfg) is every_step
        assert ("IndexOf_tlogSince(Tlogs', traceFrom_tlog', traceIndex_tlog)" in module) is every_step
        # with txconform's Java for TLC, the state holds a key of the index (TraceKeep), and reads it through TraceKept
        kept = every_step and tlc_java.loader_classes(tlc_tools.find_tla2tools()) is not None
        # (and keeps the key of a log the step left as it was)
        assert ("traceIndexKey_tlog' = (IF TraceSame(tlog', tlog) THEN traceIndexKey_tlog ELSE TraceKeep(IndexOf_tlogSince(" in module) is kept
        assert ("traceIndex_tlog == TraceKept(traceIndexKey_tlog)" in module) is kept


def test_each_operator_computed_from_an_index_has_its_form_and_its_index() -> None:
    """Protocol.from_index, on the spec's text: for each protocol, each operator named has a
    ``FromIndex`` form, and its log an index (IndexOf_L and IndexOf_LSince)."""
    from trace_check.traces.reads import _spec, indexed_log

    for name in plugins.names():
        protocol = plugins.get(name)
        bodies = _spec(protocol.spec_dir, protocol.trace_module).bodies
        for op, log, _ in protocol.from_index:
            assert op in bodies and op + "FromIndex" in bodies, (name, op)
            assert indexed_log(protocol, log), (name, log)


def test_the_forms_of_the_invariants_are_read_once_and_again_after_the_spec_changes(tmp_path: Path) -> None:
    """A window's module asks for the invariants' parts and forms four times (invariants.invariant_forms):
    they are kept, by the protocol and its spec files as they are; a spec edited meanwhile is read again."""
    import shutil

    import attrs

    from trace_check.traces.invariants import invariant_forms

    kafka = plugins.get("kafka")
    specs = tmp_path / "kafka"
    shutil.copytree(kafka.spec_dir, specs)
    copy = attrs.evolve(kafka, spec_dir=specs)
    first = invariant_forms(copy)
    assert invariant_forms(copy) is first
    assert first[3]["MarkerSafety"] == ("MarkerSafetySince", ("plog",), ())
    forms = specs / "KafkaTxnSince.tla"
    forms.write_text(forms.read_text(encoding="utf-8").replace("MarkerSafetySince", "MarkerSafetyNewer"), encoding="utf-8")
    again = invariant_forms(copy)
    assert again is not first and "MarkerSafety" not in again[3]


def test_the_variables_and_what_a_definition_reads_are_kept_until_the_spec_changes(tmp_path: Path) -> None:
    """Every window of a long trace asks for the spec's variables and what each invariant part
    reads, dozens of times; both were read from the spec files at each question (about 0.1 s of
    Python for each window of the million-event run). They are kept by the spec files as they are."""
    import attrs

    from trace_check.traces.reads import reads

    module = tmp_path / "Toy.tla"
    module.write_text("---- MODULE Toy ----\nVARIABLES x, y\nInv == x > 0\n====\n", encoding="utf-8")
    toy = attrs.evolve(plugins.get("kafka"), spec_dir=tmp_path, trace_module="Toy")
    assert spec_text.spec_variables(toy) == ("x", "y") and reads(toy, "Inv") == {"x"}
    assert spec_text.spec_variables(toy) is spec_text.spec_variables(toy) and reads(toy, "Inv") is reads(toy, "Inv")
    module.write_text("---- MODULE Toy ----\nVARIABLES x, y, z\nInv == y > z\n====\n", encoding="utf-8")
    assert spec_text.spec_variables(toy) == ("x", "y", "z") and reads(toy, "Inv") == {"y", "z"}
