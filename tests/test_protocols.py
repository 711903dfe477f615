"""A protocol is one plug-in: a toy two-phase commit (tests/fixtures/toy2pc) goes through
``simulate``, ``check`` and ``mutate`` with no Kafka code path, and the plug-in discovery says
clearly what it cannot find."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trace_check.errors import TxconformError
from trace_check.traces import plugins

FIXTURES = Path(__file__).resolve().parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]
TOY_ENV = {"TXCONFORM_PROTOCOLS": "toy2pc.protocol"}

# Runs simulate, check and mutate on the toy in a fresh interpreter, then reports which modules of
# ref_impl were imported: none may be.
SCRIPT = r"""
import json, sys
from pathlib import Path
from trace_check.cli.main import main
tmp = Path(sys.argv[1])
codes = {}
codes["simulate"] = main(["simulate", "--protocol", "toy2pc", "--seed", "3", "--workload", "3", "--out", str(tmp / "ok.jsonl")])
codes["check"] = main(["check", str(tmp / "ok.jsonl")])
codes["simulate_bug"] = main(["simulate", "--protocol", "toy2pc", "--seed", "1", "--workload", "3", "--bugs", "commit_early",
                              "--out", str(tmp / "bug.jsonl")])
codes["check_bug"] = main(["check", str(tmp / "bug.jsonl")])
codes["mutate"] = main(["mutate", "--mutants", "6", "--jobs", "1", str(tmp / "ok.jsonl")])
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace
v = check_trace(read_trace(tmp / "bug.jsonl"))
verdict = {"status": v.status.value, "event": v.event, "reason": v.reason}
print(json.dumps({"codes": codes, "verdict": verdict,
                  "ref_impl": sorted(m for m in sys.modules if m.split(".")[0] == "ref_impl")}))
"""


def run_toy(tmp_path: Path) -> tuple[dict, str]:
    env = {**os.environ, **TOY_ENV, "PYTHONPATH": os.pathsep.join([str(FIXTURES), str(ROOT)])}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], capture_output=True, text=True, env=env,
                          timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    last = proc.stdout.strip().splitlines()[-1]
    return json.loads(last), proc.stdout


@pytest.mark.tlc
def test_the_toy_protocol_runs_through_simulate_check_and_mutate_without_kafka(tmp_path: Path) -> None:
    result, out = run_toy(tmp_path)
    codes = result["codes"]
    assert codes["simulate"] == 0 and codes["simulate_bug"] == 0
    assert codes["check"] == 0, out  # the correct engine's run is a behaviour of the toy spec
    assert "accepted:" in out
    assert codes["check_bug"] == 1, out  # the coordinator that commits early is caught
    verdict = result["verdict"]
    assert verdict["status"] == "rejected"
    assert verdict["event"]["action"] == "TMCommit"
    assert "TMCommit is not enabled" in verdict["reason"]
    assert codes["mutate"] in (0, 1)
    assert "mutation score" in out
    assert result["ref_impl"] == [], "the toy protocol ran code of the built-in protocols"
    header = json.loads((tmp_path / "ok.jsonl").read_text().splitlines()[0])
    assert header["protocol"] == "toy2pc" and header["spec"] == "specs/TwoPhase.tla"


def test_the_toy_trace_is_read_with_its_own_columns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES))
    monkeypatch.setenv("TXCONFORM_PROTOCOLS", "toy2pc.protocol")
    from trace_check.traces.format import write_trace
    from trace_check.traces.protocol import SimulateOptions
    from trace_check.traces.reader import TraceError, read_trace

    toy = plugins.get("toy2pc")
    run = toy.simulate(SimulateOptions(seed=0, workload="2"))
    path = tmp_path / "t.jsonl"
    write_trace(path, run.header, run.events, toy.columns.order)
    trace = read_trace(path)
    assert trace.protocol is toy and len(trace.events) == len(run.events)
    assert toy.replay(trace.constants, trace.events) is None
    lines = path.read_text().splitlines()
    ev = json.loads(lines[1])
    ev["txn_id"] = "t1"  # a Kafka column means nothing to the toy
    lines[1] = json.dumps(ev)
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(TraceError, match=r':2: unknown field "txn_id"'):
        read_trace(path)


def test_an_unknown_protocol_gets_one_line_naming_the_known_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TXCONFORM_PROTOCOLS", raising=False)
    with pytest.raises(TxconformError, match=r"no plug-in for protocol 'kafak' \(did you mean 'kafka'\?\); known: cone, kafka, ydb"):
        plugins.get("kafak")


def test_a_plugin_that_cannot_be_imported_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TXCONFORM_PROTOCOLS", "no_such_module.protocol")
    with pytest.raises(TxconformError, match=r"protocol plug-in no_such_module\.protocol cannot be imported"):
        plugins.get("kafka")


def test_a_trace_of_a_plugin_that_cannot_be_imported_names_the_import_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_check.traces.reader import read_trace

    monkeypatch.setenv("TXCONFORM_PROTOCOLS", "no_such_module.protocol")
    path = tmp_path / "t.jsonl"
    path.write_text('{"format": "txconform-trace", "version": 1, "protocol": "kafka", "constants": {}}\n')
    with pytest.raises(TxconformError, match=r"protocol plug-in no_such_module\.protocol cannot be imported"):
        read_trace(path)


def test_the_columns_contract_keeps_64_bit_integers_away_from_the_spec() -> None:
    from trace_check.traces.protocol import INT, INT64, Columns

    order = ("event", "action", "id", "n")
    ok = Columns(order=order, kinds={"event": INT, "action": "string", "id": INT64, "n": INT}, info=frozenset({"event", "id"}),
                 since={"n": 2})
    assert ok.since == {"n": 2}
    with pytest.raises(ValueError, match="id is int64, so it must be an info column"):
        Columns(order=order, kinds={"event": INT, "action": "string", "id": INT64, "n": INT})
    with pytest.raises(ValueError, match="since names m, which is not a column"):
        Columns(order=order, kinds={"event": INT, "action": "string", "id": INT, "n": INT}, since={"m": 2})


@pytest.mark.parametrize("name", ["kafka", "ydb", "cone"])
def test_a_built_in_plugin_takes_its_trace_semantics_from_its_trace_module(name: str) -> None:
    """Declared, not wired field by field: each name FROM_TRACE_MODULE lists that the protocol's
    trace.py defines is the plug-in's field, the very object; the registry is the spec folder's."""
    import importlib

    from trace_check.traces.protocol import FROM_TRACE_MODULE

    trace = importlib.import_module(f"ref_impl.{name}.trace")
    protocol = importlib.import_module(f"ref_impl.{name}.protocol").PROTOCOL
    defined = [(field, attr) for field, attr in FROM_TRACE_MODULE.items() if hasattr(trace, attr)]
    assert len(defined) >= 14, defined
    for field, attr in defined:
        assert getattr(protocol, field) is getattr(trace, attr), field
    assert protocol.registry == trace.SPEC_DIR / "models.toml" and protocol.registry.exists()
