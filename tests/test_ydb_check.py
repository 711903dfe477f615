"""``txconform`` on YDB traces: the correct engine's runs are behaviours of the spec (generated
runs, hypothesis), every bug of the zoo is rejected at the event where the engine deviates (with
the event and the spec's state before it), simulate / check / mutate work through the CLI, and bad
input gets one line and exit status 2."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from ref_impl.ydb.protocol import PROTOCOL
from ref_impl.ydb.replay import replay
from ref_impl.ydb.zoo import ZOO, ZooBug
from trace_check.cli.main import main
from trace_check.traces.format import write_trace
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import SimulateOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status


def simulate(path: Path, seed: int, workload: str, faults: str, bugs: str = "") -> Path:
    run = PROTOCOL.simulate(SimulateOptions(seed=seed, workload=workload, faults=faults, bugs=bugs))
    write_trace(path, run.header, run.events, PROTOCOL.columns.order)
    return path


# --- the correct engine: every run is accepted ---


@st.composite
def workloads(draw: Any) -> str:
    """Small bounds: each run is checked by TLC."""
    w = {"workers": draw(st.integers(1, 3)), "src": draw(st.integers(1, 2)), "dst": draw(st.integers(1, 3)),
         "msgs": draw(st.integers(1, 4)), "batch": draw(st.integers(1, 3)), "txns": draw(st.integers(1, 5)),
         "table": draw(st.sampled_from(["true", "false"])), "rollback": draw(st.sampled_from(["true", "false"])),
         "producers": draw(st.sampled_from(["none", "partition"])),
         "shapes": draw(st.sampled_from(["copy", "copy+read+write", "read+write"])), "nontx": draw(st.integers(0, 1)),
         "ranges": draw(st.integers(0, 1)), "reads": draw(st.integers(1, 2)), "others": draw(st.integers(0, 1)),
         "close": draw(st.sampled_from(["true", "false"])), "writers": draw(st.integers(1, 2)),
         "plain": draw(st.integers(0, 2)), "parts": draw(st.integers(1, 2)), "commits": draw(st.integers(0, 2)),
         "version": draw(st.sampled_from(["v25", "v26"]))}
    return "copy:" + ",".join(f"{k}={v}" for k, v in w.items())


@st.composite
def faults(draw: Any) -> str:
    return ",".join(f"{k}={draw(st.integers(0, 1))}" for k in ("hangs", "restarts", "loss", "locklosses", "deadlines",
                                                                             "reconnects", "splits"))


@pytest.mark.tlc
def test_generated_runs_of_the_correct_engine_are_accepted(tmp_path_factory: pytest.TempPathFactory) -> None:
    @settings(max_examples=5, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(w=workloads(), f=faults(), seed=st.integers(0, 10**6))
    def run(w: str, f: str, seed: int) -> None:
        path = simulate(tmp_path_factory.mktemp("run") / "t.jsonl", seed, w, f)
        note(f"txconform simulate --protocol ydb --seed {seed} --workload {w} --faults {f}")
        v = check_trace(read_trace(path), CheckOptions(engine="tlc"))
        assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason, v.invariant, v.message)

    run()


POST = ("result", "reason", "decision", "phase", "kqp_state", "tx_state", "committed_offset", "log_end")


@pytest.mark.tlc
def test_what_an_event_does_not_log_is_left_free(tmp_path: Path) -> None:
    """A trace that logs only the steps and their keys (no outcome, no post-state) is a behaviour
    of the spec; a wrong key in it is still caught."""
    path = simulate(tmp_path / "full.jsonl", 19, "copy:table=true", "all")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    partial = [lines[0]] + [{k: v for k, v in ev.items() if k not in POST} for ev in lines[1:]]
    (tmp_path / "partial.jsonl").write_text("".join(json.dumps(x) + "\n" for x in partial))
    assert check_trace(read_trace(tmp_path / "partial.jsonl"), CheckOptions(engine="tlc")).status is Status.ACCEPTED
    n = next(i for i, ev in enumerate(partial) if ev.get("action") == "TxWrite")
    partial[n]["offset"] += 1  # the writer sends the batch in order: this is not the next message
    (tmp_path / "wrong.jsonl").write_text("".join(json.dumps(x) + "\n" for x in partial))
    v = check_trace(read_trace(tmp_path / "wrong.jsonl"), CheckOptions(engine="tlc"))
    assert v.status is Status.REJECTED and v.at_event == n


# --- the bug zoo: each run is rejected where the engine deviates ---


def zoo_verdict(tmp: Path, bug: ZooBug) -> str:
    """"" when the checker rejects the bug's run at the event where the engine deviates, with the
    event and the spec's state before it; else what went wrong."""
    path = simulate(tmp / f"{bug.name}.jsonl", bug.seed, bug.workload, bug.faults, "+".join(bug.bugs))
    trace = read_trace(path)
    deviation = replay(trace.constants, [dict(e) for e in trace.events])  # the correct engine's opinion
    v = check_trace(trace, CheckOptions(engine="tlc"))
    if v.status is not Status.REJECTED:
        return f"{bug.name}: {v.status.value} {v.invariant or ''} {v.message}"
    if v.at_event != deviation or v.event is None or v.event["action"] != bug.rejected_at:
        return f"{bug.name}: rejected at event {v.at_event} ({v.event and v.event['action']}), not {deviation} ({bug.rejected_at})"
    if v.state_before is None or "ptx" not in v.state_before or not v.reason or "no behaviour of the spec reaches" in v.reason:
        return f"{bug.name}: rejected without the state before the event or a reason: {v.reason!r}"
    return ""


@pytest.mark.tlc
def test_each_zoo_bug_is_rejected_at_the_event_where_the_engine_deviates(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:  # two TLC runs at a time: most of each is the JVM starting
        failures = [f for f in pool.map(lambda b: zoo_verdict(tmp_path, b), ZOO) if f]
    assert failures == []


# --- the CLI ---


@pytest.mark.tlc
def test_simulate_check_and_mutate_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok, bad = tmp_path / "ok.jsonl", tmp_path / "bug.jsonl"
    assert main(["simulate", "--protocol", "ydb", "--seed", "2", "--workload", "copy:workers=1,msgs=2,txns=2",
                 "--faults", "none", "--out", str(ok)]) == 0
    assert "ydb v26, workload copy:workers=1,msgs=2,txns=2" in capsys.readouterr().out
    header = json.loads(ok.read_text().splitlines()[0])
    assert header["protocol"] == "ydb" and header["spec"] == "ydb/YdbTopics.tla"
    assert header["constants"]["MaxTxns"] == 2 and header["constants"]["Workers"] == ["w1"]
    assert main(["check", str(ok)]) == 0
    assert "accepted:" in capsys.readouterr().out
    assert main(["simulate", "--protocol", "ydb", "--seed", "0", "--workload", "copy:workers=1", "--bugs", "no_flush",
                 "--out", str(bad)]) == 0
    capsys.readouterr()
    assert main(["check", "--json", str(bad)]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "rejected" and verdict["event"]["action"] == "Flush"
    assert "Flush is not enabled" in verdict["reason"] and "cl" in verdict["state_before"]
    assert main(["mutate", "--mutants", "2", "--jobs", "2", str(ok)]) in (0, 1)
    assert "mutation score" in capsys.readouterr().out


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("txconform: error: ")
    return err[0]


@pytest.mark.parametrize("args,says", [
    (["--workload", "copy:workers=x"], "--workload: workers=x: workers needs a whole number"),
    (["--workload", "transfer"], "--workload: unknown workload 'transfer'; use copy"),
    (["--workload", "copy:version=v27"], "--workload: version=v27: use v25 or v26"),
    (["--workload", "copy:producers=worker"], "--workload: producers=worker: use none or partition"),
    (["--workload", "copy:rollback=maybe"], "--workload: rollback=maybe: use rollback=true or rollback=false"),
    (["--faults", "hangs=1,crashes=2"], "--faults: unknown fault 'crashes'"),
    (["--bugs", "no_offset_chek"], "--bugs: unknown bug 'no_offset_chek'"),
])
def test_bad_simulate_options_get_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                                      says: str) -> None:
    assert main(["simulate", "--protocol", "ydb", *args, "--out", str(tmp_path / "t.jsonl")]) == 2
    assert says in one_error_line(capsys)


@pytest.mark.parametrize("change,says", [
    (lambda h, evs: evs[0].update(tablet="DS"), ':2: ReadBatch: field "tablet" is not something ReadBatch logs'),
    (lambda h, evs: evs[2].update(tablet="DS"), ':4: PqWrite: field "tablet" = "DS" is not a tablet'),
    (lambda h, evs: evs[0].update(txn_id=99), ':2: ReadBatch: field "txn_id" = 99 is not a transaction'),
    (lambda h, evs: evs[1].update(color="red"), ':3: unknown field "color"'),
    (lambda h, evs: evs[0].update(action="ReadBatches"), ':2: field "action": unknown value "ReadBatches"'),
    (lambda h, evs: h["constants"].update(Version="v27"), ':1: header: constants: "Version" must be "v25" or "v26"'),
    (lambda h, evs: h["constants"].update(Bugs=["no_such_bug"]), ':1: header: constants: "Bugs": "no_such_bug" is not one'),
    (lambda h, evs: h["constants"].pop("MaxTxns"), ':1: header: constants: missing "MaxTxns" (give "MaxTxns": an integer)'),
    (lambda h, evs: h["constants"].update(MaxPartsRead=3), ':1: header: constants: "MaxPartsRead" must be 1 or 2'),
    (lambda h, evs: h["constants"].update(Others=0), ':1: header: constants: "Others" must be at least 1'),
    (lambda h, evs: h["constants"].update(TxWriters=0), ':1: header: constants: "TxWriters" must be at least 1'),
    (lambda h, evs: evs[2].update(producer=-7), ':4: PqWrite: field "producer" = -7 is not a producer'),
    (lambda h, evs: h["constants"].update(MaxPlainCommits=-1), ':1: header: constants: "MaxPlainCommits" must be >= 0, got -1'),
    (lambda h, evs: evs[0].update(action="CommitOffsetStale"), ':2: CommitOffsetStale: field "txn_id" is not something'),
])
def test_a_bad_trace_gets_one_line_naming_the_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any,
                                                              says: str) -> None:
    path = simulate(tmp_path / "t.jsonl", 1, "copy", "none")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    change(lines[0], lines[1:])
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["check", str(path)]) == 2
    assert says in one_error_line(capsys)
