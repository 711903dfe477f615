"""C*One through the protocol plug-in: the engine is the spec's Next step for step, its runs are
behaviours of the spec (hypothesis), every bug of the zoo is rejected at the event where the engine
deviates, the same seed gives the same bytes, and bad input gets one line and exit status 2."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import tomllib
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from ref_impl.cone import trace as cone_trace
from ref_impl.cone.actions import ACTIONS, EVENTS
from ref_impl.cone.constants import BUGS
from ref_impl.cone.protocol import PROTOCOL
from ref_impl.cone.replay import replay
from ref_impl.cone.zoo import ZOO, ZooBug
from trace_check.cli.main import main
from trace_check.traces.format import write_trace
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import SimulateOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import Status

ROOT = Path(__file__).resolve().parents[1]
SPEC = (ROOT / "specs" / "cone" / "Cone.tla").read_text()


def simulate(path: Path, seed: int, workload: str, faults: str, bugs: str = "") -> Path:
    run = PROTOCOL.simulate(SimulateOptions(seed=seed, workload=workload, faults=faults, bugs=bugs))
    write_trace(path, run.header, run.events, PROTOCOL.columns.order)
    return path


# --- the engine mirrors the spec ---


def test_the_table_names_exactly_the_actions_of_the_specs_next() -> None:
    body = SPEC.split("\nNext ==\n", 1)[1].split("\n\n", 1)[0]
    spec_actions = set(re.findall(r"\b([A-Z][A-Za-z]+)\((?!.*==)", body)) - {"Next1"}
    assert spec_actions == set(EVENTS)


def test_each_action_is_a_guard_and_an_effect_of_the_same_name() -> None:
    for a in ACTIONS:
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", a.name).lower()
        assert a.guard.__name__ == f"{snake}_enabled", a.name
        assert a.effect.__name__ in (snake, f"{snake}_link"), a.name


def test_the_zoo_is_the_specs_bugs_each_with_its_registry_model() -> None:
    spec_bugs = re.findall(r'^\s+"([a-z_]+)",?\s+\\\*', SPEC.split("BugNames == {", 1)[1].split("}", 1)[0], re.M)
    assert list(BUGS) == spec_bugs
    assert {b.name for b in ZOO} == set(BUGS)
    models = tomllib.loads((ROOT / "specs" / "cone" / "models.toml").read_text())["models"]
    for b in ZOO:
        assert b.model in models and b.name in models[b.model]["constants"]["Bugs"], b.name
        assert models[b.model]["expect"].startswith("violates "), b.name


@given(
    seed=st.integers(0, 10**6),
    adders=st.integers(0, 2),
    retaggers=st.integers(0, 1),
    attempts=st.integers(1, 2),
    faults=st.sampled_from(["none", "all", "crash=1", "pause=1,cut=1", "drop=2", "crash=1,pause=1,cut=2,drop=1", "dc=1,drop=1"]),
)
@settings(max_examples=60, deadline=None, derandomize=True, database=None)
def test_every_event_is_one_the_plugin_reads_and_the_engine_replays_its_own_runs(seed: int, adders: int, retaggers: int, attempts: int, faults: str) -> None:
    if adders + retaggers == 0:
        adders = 1
    run = PROTOCOL.simulate(SimulateOptions(seed=seed, workload=f"album:adders={adders},retaggers={retaggers},attempts={attempts}", faults=faults))
    k = run.header["constants"]
    cone_trace.check_constants(k)
    for ev in run.events:
        cone_trace.check_event(ev, k)
        for col, v in ev.items():
            assert v in cone_trace.COLUMNS.enums.get(col, {v}), (col, v)
    assert replay(k, [dict(e) for e in run.events]) is None


def test_the_same_seed_gives_the_same_bytes(tmp_path: Path) -> None:
    a = simulate(tmp_path / "a.jsonl", 7, "album:adders=2,retaggers=1", "all").read_bytes()
    b = simulate(tmp_path / "b.jsonl", 7, "album:adders=2,retaggers=1", "all").read_bytes()
    c = simulate(tmp_path / "c.jsonl", 8, "album:adders=2,retaggers=1", "all").read_bytes()
    assert a == b and a != c


# --- the spec's verdict ---


@pytest.mark.tlc
def test_generated_runs_of_the_correct_engine_are_accepted(tmp_path_factory: pytest.TempPathFactory) -> None:
    @settings(max_examples=5, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck))
    @given(
        seed=st.integers(0, 10**6),
        retaggers=st.integers(0, 1),
        attempts=st.integers(1, 2),
        faults=st.sampled_from(["all", "crash=1,drop=1", "pause=1,cut=1", "dc=1,drop=1"]),
    )
    def run(seed: int, retaggers: int, attempts: int, faults: str) -> None:
        w = f"album:adders=2,retaggers={retaggers},attempts={attempts}"
        path = simulate(tmp_path_factory.mktemp("run") / "t.jsonl", seed, w, faults)
        note(f"txconform simulate --protocol cone --seed {seed} --workload {w} --faults {faults}")
        v = check_trace(read_trace(path), CheckOptions(engine="tlc"))
        assert v.status is Status.ACCEPTED, (v.status, v.at_event, v.reason, v.invariant, v.message)

    run()


def zoo_verdict(tmp: Path, bug: ZooBug) -> str:
    """Empty when the checker rejects the bug's run at the event where the correct engine deviates,
    with the event and the spec's state before it; else what went wrong."""
    path = simulate(tmp / f"{bug.name}.jsonl", bug.seed, bug.workload, bug.faults, bug.name)
    trace = read_trace(path)
    deviation = replay(trace.constants, [dict(e) for e in trace.events])
    v = check_trace(trace, CheckOptions(engine="tlc"))
    if v.status is not Status.REJECTED:
        return f"{bug.name}: {v.status.value} {v.invariant or ''} {v.message}"
    if v.at_event != deviation or v.event is None or v.event["action"] != bug.rejected_at:
        return f"{bug.name}: rejected at event {v.at_event} ({v.event and v.event['action']}), not {deviation} ({bug.rejected_at})"
    if v.state_before is None or "batches" not in v.state_before or not v.reason:
        return f"{bug.name}: rejected without the state before the event or a reason: {v.reason!r}"
    return ""


@pytest.mark.tlc
def test_each_zoo_bug_is_rejected_at_the_event_where_the_engine_deviates(tmp_path: Path) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:
        failures = [f for f in pool.map(lambda b: zoo_verdict(tmp_path, b), ZOO) if f]
    assert failures == []


@pytest.mark.tlc
def test_a_trace_that_logs_only_its_keys_is_accepted_and_a_wrong_key_is_caught(tmp_path: Path) -> None:
    path = simulate(tmp_path / "full.jsonl", 3, "album:adders=2,retaggers=1", "crash=1,pause=1,cut=1,drop=1")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    keys = {"event", "action", *cone_trace.PARAMS, "replica"}
    partial = [lines[0]] + [{k: v for k, v in ev.items() if k in keys} for ev in lines[1:]]
    (tmp_path / "partial.jsonl").write_text("".join(json.dumps(x) + "\n" for x in partial))
    assert check_trace(read_trace(tmp_path / "partial.jsonl"), CheckOptions(engine="tlc")).status is Status.ACCEPTED
    n = next(i for i, ev in enumerate(partial) if ev.get("action") == "ApplyMutation")
    partial[n]["replica"] = 3  # a batch's mutations reach r1 first
    (tmp_path / "wrong.jsonl").write_text("".join(json.dumps(x) + "\n" for x in partial))
    v = check_trace(read_trace(tmp_path / "wrong.jsonl"), CheckOptions(engine="tlc"))
    assert v.status is Status.REJECTED and v.at_event == n


# --- the CLI ---


@pytest.mark.tlc
def test_simulate_check_and_mutate_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ok, bad = tmp_path / "ok.jsonl", tmp_path / "bug.jsonl"
    assert main(["simulate", "--protocol", "cone", "--seed", "2", "--workload", "album:adders=2,attempts=1", "--faults", "crash=1", "--out", str(ok)]) == 0
    assert "cone, workload album:attempts=1, faults crash=1, seed 2" in capsys.readouterr().out
    header = json.loads(ok.read_text().splitlines()[0])
    assert header["protocol"] == "cone" and header["spec"] == "cone/Cone.tla" and header["constants"]["Adders"] == ["c1", "c2"]
    assert main(["check", str(ok)]) == 0
    assert "accepted:" in capsys.readouterr().out
    assert main(["simulate", "--protocol", "cone", "--seed", "0", "--workload", "album:adders=2,attempts=1", "--bugs", "no_ryw", "--out", str(bad)]) == 0
    capsys.readouterr()
    assert main(["check", "--json", str(bad)]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["status"] == "rejected" and verdict["event"]["action"] == "CoRead" and "read_ts" in verdict["reason"]
    assert main(["mutate", "--mutants", "2", "--jobs", "2", str(ok)]) in (0, 1)
    assert "mutation score" in capsys.readouterr().out


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("txconform: error: ")
    return err[0]


@pytest.mark.parametrize(
    "args,says",
    [
        (["--workload", "album:adders=x"], "--workload: adders=x: adders needs a whole number"),
        (["--workload", "copy"], "--workload: unknown workload 'copy'; use album"),
        (["--workload", "album:adders=0"], "--workload: the workload has no client"),
        (["--faults", "crash=1,gc=2"], "--faults: unknown fault 'gc'"),
        (["--bugs", "zombie"], "--bugs: unknown bug 'zombie'"),
    ],
)
def test_bad_simulate_options_get_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], says: str) -> None:
    assert main(["simulate", "--protocol", "cone", *args, "--out", str(tmp_path / "t.jsonl")]) == 2
    assert says in one_error_line(capsys)


@pytest.mark.parametrize(
    "change,says",
    [
        (lambda h, evs: evs[0].update(coordinator="x1"), ':2: ClientBegin: field "coordinator" is not something ClientBegin logs'),
        (lambda h, evs: evs[0].update(client="c9"), ':2: ClientBegin: field "client" = "c9" is not a client'),
        (lambda h, evs: evs[0].update(attempt=5), ':2: ClientBegin: field "attempt" = 5 is not an attempt'),
        (lambda h, evs: evs[1].update(color="red"), ':3: unknown field "color"'),
        (lambda h, evs: evs[0].update(action="ClientBegins"), ':2: field "action": unknown value "ClientBegins"'),
        (lambda h, evs: h["constants"].update(Adders=["p0"]), ':1: header: constants: "Adders" names a photo key'),
        (lambda h, evs: h["constants"].update(Bugs=["no_such_bug"]), ':1: header: constants: "Bugs": "no_such_bug" is not one'),
        (lambda h, evs: h["constants"].pop("MaxAttempts"), ':1: header: constants: missing "MaxAttempts" (give "MaxAttempts": an integer)'),
    ],
)
def test_a_bad_trace_gets_one_line_naming_the_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: Any, says: str) -> None:
    path = simulate(tmp_path / "t.jsonl", 1, "album", "none")
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[1]["action"] == "ClientBegin"
    change(lines[0], lines[1:])
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    assert main(["check", str(path)]) == 2
    assert says in one_error_line(capsys)
