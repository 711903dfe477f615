"""Trace validation with TLC: accepted, rejected at the right event with a reason, invariant
violations, and hostile strings that must not change the generated module's meaning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ref_impl.kafka.sim.faults import Fault, Faults, Schedule
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from trace_check.cli import main as cli
from trace_check.traces.module_text import CHUNK, module_text
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.tla_text import tla_string
from trace_check.traces.validation import check_trace
from trace_check.traces.verdicts import verdict_lines

pytestmark = pytest.mark.tlc


def make(tmp: Path, w: str, f: str, seed: int, name: str = "t.jsonl", **kw) -> Path:
    head, events = simulate(Workload.parse(w), Faults.parse(f), seed, **kw)
    path = tmp / name
    write_trace(path, head, events)
    return path


def rewrite(path: Path, fn, name: str = "m.jsonl") -> Path:
    objs = [json.loads(x) for x in path.read_text().splitlines()]
    fn(objs)
    out = path.with_name(name)
    out.write_text("".join(json.dumps(o) + "\n" for o in objs))
    return out


@pytest.fixture(scope="module")
def tv1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A faulty TV1 run long enough to have every step the tests below change."""
    tmp = tmp_path_factory.mktemp("tv1")
    for seed in range(5, 60):
        path = make(tmp, "transfer:version=TV1,aborts=true", "all", seed)
        actions = {(o.get("action"), o.get("type"), o.get("result")) for o in map(json.loads, path.read_text().splitlines())}
        if {("TcAddPartitionsToTxn", "AddPartitionsToTxn", "NONE"), ("SendRequest", "Produce", None)} <= actions:
            return path
    raise AssertionError("no seed gave a run with AddPartitionsToTxn and Produce")


def test_a_run_of_the_reference_broker_is_accepted(tv1: Path) -> None:
    v = check_trace(read_trace(tv1))
    assert v.status == "accepted", v.reason or v.message
    assert v.every_step


def test_a_changed_answer_is_rejected_at_its_event_with_the_state_before(tv1: Path) -> None:
    def change(objs: list) -> None:
        n = next(k for k, o in enumerate(objs) if o.get("action") == "TcAddPartitionsToTxn" and o.get("result") == "NONE")
        objs[n]["result"] = "INVALID_TXN_STATE"
        change.at = n  # type: ignore[attr-defined]

    v = check_trace(read_trace(rewrite(tv1, change)))
    assert v.status == "rejected"
    assert v.at_event == change.at  # type: ignore[attr-defined]
    assert "does not answer INVALID_TXN_STATE" in v.reason
    assert v.state_before is not None and "tc" in v.state_before and "net" in v.state_before


def test_a_message_never_sent_is_rejected_as_not_in_flight(tv1: Path) -> None:
    def drop_send(objs: list) -> None:
        n = next(k for k, o in enumerate(objs) if o.get("action") == "SendRequest" and o.get("type") == "Produce")
        del objs[n]
        for k, o in enumerate(objs[1:], 1):
            o["event"] = k
        drop_send.at = n  # type: ignore[attr-defined]

    v = check_trace(read_trace(rewrite(tv1, drop_send)))
    assert v.status == "rejected"
    assert "no message in flight" in v.reason or "not enabled" in v.reason


def test_tv1_late_endtxn_is_a_behaviour_of_the_spec_that_breaks_marker_safety(tmp_path: Path) -> None:
    # KAFKA-17754, as hypothesis found it for the bug zoo (tests/test_hypothesis_runs.py).
    schedule = Schedule((Fault(0, "delay", 0, 40, "EndTxn"), Fault(0, "retry", 0, 0, "EndTxn")))
    found = None
    for seed in range(40):
        head, events = simulate(Workload.parse("transfer:version=TV1,txns=3"), Faults(), seed, schedule=schedule)
        path = tmp_path / f"late-{seed}.jsonl"
        write_trace(path, head, events)
        v = check_trace(read_trace(path))
        assert v.status in ("accepted", "violates"), v.reason
        if v.status == "violates":
            # The late COMMIT can also close the next transaction before its last produce,
            # which then hangs: the same bug, seen first by NoHangingTransaction.
            assert v.invariant in ("MarkerSafety", "Atomicity", "NoHangingTransaction")
            # Atomicity is a conjunction of named parts, checked one by one: the verdict names the false one
            assert (v.part is None) == (v.invariant != "Atomicity") and v.part in (None, "AtomicityNow", "AtomicityWhenQuiescent")
            if v.invariant != "NoHangingTransaction":
                found = v
                break
    assert found is not None, "no TV1 run with a late EndTxn broke MarkerSafety or Atomicity"


HOSTILE = ['t"1', "a\\b", "==== MODULE X", "(* open comment", "\\* rest", "THEOREM EXTENDS VARIABLE", 'x" \\/ TRUE \\/ "']


def test_hostile_strings_cannot_change_the_generated_module(tv1: Path, tmp_path: Path) -> None:
    evil = HOSTILE[0] + HOSTILE[2] + HOSTILE[3] + HOSTILE[4] + HOSTILE[5] + HOSTILE[6] + HOSTILE[1]

    def rename(objs: list) -> None:
        objs[0]["constants"]["TxnIds"] = [evil]
        for o in objs[1:]:
            if o.get("txn_id") == "t1":
                o["txn_id"] = evil

    renamed = rewrite(tv1, rename, "evil.jsonl")
    trace = read_trace(renamed)
    text = module_text(trace, every_step=False)
    assert tla_string(evil) in text
    # The same run with the transactional.id renamed everywhere is still accepted ...
    assert check_trace(trace).status == "accepted"

    # ... and renamed in one event only, rejected at that event (a mismatch, not a parse error).
    def rename_one(objs: list) -> None:
        rename(objs)
        n = next(k for k, o in enumerate(objs) if o.get("action") == "TcAppend")
        objs[n]["txn_id"] = HOSTILE[6]
        objs[0]["constants"]["TxnIds"] = [evil, HOSTILE[6]]
        rename_one.at = n  # type: ignore[attr-defined]

    v = check_trace(read_trace(rewrite(tv1, rename_one, "evil1.jsonl")))
    assert v.status == "rejected" and v.at_event == rename_one.at, v.message  # type: ignore[attr-defined]


def test_long_traces_are_split_into_chunks(tmp_path: Path) -> None:
    path = make(tmp_path, "transfer:txns=30,ids=2,partitions=1", "none", 2)
    trace = read_trace(path)
    assert len(trace.events) > CHUNK
    text = module_text(trace, every_step=False)
    assert "TraceChunk2 ==" in text and "TraceData == <<TraceChunk1, TraceChunk2" in text
    assert check_trace(trace, CheckOptions(every_step=False)).status == "accepted"


def test_a_buggy_broker_is_rejected(tmp_path: Path) -> None:
    path = make(tmp_path, "transfer", "none", 0, bugs=("lso_inclusive",))
    v = check_trace(read_trace(path))
    assert v.status == "rejected"
    assert v.event is not None and v.event["action"] == "Fetch"
    # the spec would not return the open record; the reference broker says which records it would
    assert "not with records = " in v.reason and "the reference broker, replaying the trace, gives records = [" in v.reason


def test_cli_simulate_then_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run.jsonl"
    assert cli.main(["simulate", "--seed", "2", "--workload", "ctp:aborts=true", "--faults", "all", "--out", str(out)]) == 0
    assert "wrote" in capsys.readouterr().out
    assert cli.main(["check", str(out)]) == 0
    assert capsys.readouterr().out.startswith("accepted: ")
    assert cli.main(["check", "--json", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "accepted"


def test_cli_reports_bad_traces_and_arguments_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "txconform-trace"}\n')
    assert cli.main(["check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.jsonl:1: header" in err
    assert cli.main(["simulate", "--faults", "loss=x", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "--faults: loss=x: loss needs a whole number" in capsys.readouterr().err
    assert cli.main(["simulate", "--bugs", "no_fencing", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown bug" in capsys.readouterr().err


def test_cli_mutate_scores_a_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path, "transfer:version=TV1", "all", 1)
    rc = cli.main(["mutate", "--mutants", "6", str(path)])
    out = capsys.readouterr().out
    assert "mutation score:" in out
    assert rc == 0, out


def test_the_record_encoding_for_apalache_gives_the_same_answers_under_tlc(tv1: Path, tmp_path: Path) -> None:
    # specs/kafka/TraceKafkaTxnRecords.tla is what Apalache checks; TLC runs it here so that the
    # module itself is tested, not only the command line.
    from trace_check.traces.records import check_trace_records

    assert check_trace_records(read_trace(tv1), "tlc", tmp_path / "ok").status == "accepted"
    bad = make(tmp_path, "transfer", "none", 0, name="lso.jsonl", bugs=("lso_inclusive",))
    assert check_trace_records(read_trace(bad), "tlc", tmp_path / "bad").status == "rejected"


def test_fake_apalache_checks_a_trace_with_the_record_encoding(tv1: Path, tmp_path: Path, monkeypatch) -> None:
    from test_apalache import log_line, write_fake_apalache

    log = [log_line("The outcome is: NoError"), log_line("Checker reports no error up to computation length 79")]
    fake = write_fake_apalache(tmp_path / "fake", log, 0)
    monkeypatch.setenv("APALACHE_HOME", str(tmp_path / "nohome"))
    monkeypatch.setenv("PATH", f"{fake.parent}:{__import__('os').environ['PATH']}")
    trace = read_trace(tv1)
    v = check_trace(trace, CheckOptions(engine="apalache", workdir=tmp_path / "work"))
    assert v.engine == "apalache" and v.status == "rejected"  # the fake found no acceptance
    argv = (fake.parent / "argv.txt").read_text().splitlines()
    assert "--init=TraceInit" in argv and "--next=TraceNext" in argv
    assert f"--length={len(trace.events)}" in argv
    assert any(a.startswith("--inv=") and a.endswith(",TraceAccepted") for a in argv)
    wrapper = next((tmp_path / "work").rglob("MC_txconform_apalache.tla")).read_text()
    assert "/\\ Trace = TraceData" in wrapper and "EXTENDS TraceRunRecords" in wrapper


# --- trace format version 2: the new columns are checked against the spec ---


def changed_at(tv1: Path, pick, changes: dict, name: str) -> tuple[Path, int]:
    """The trace with event `pick` chose changed; and that event's number."""
    at = {}

    def change(objs: list) -> None:
        n = next(k for k, o in enumerate(objs) if k > 0 and pick(o))
        objs[n].update(changes)
        at["n"] = n

    path = rewrite(tv1, change, name)
    return path, at["n"]


def test_a_wrong_partition_set_on_tcappend_is_rejected_at_that_event(tv1: Path) -> None:
    path, n = changed_at(tv1, lambda o: o.get("action") == "TcAppend" and o.get("txn_partitions") == [1, 2], {"txn_partitions": [1]}, "parts.jsonl")
    v = check_trace(read_trace(path))
    assert v.status == "rejected" and v.at_event == n, v.reason
    assert "not with txn_partitions = [1]" in v.reason and "gives txn_partitions = [1, 2]" in v.reason


def test_a_wrong_append_offset_is_rejected_at_that_event(tv1: Path) -> None:
    path, n = changed_at(tv1, lambda o: o.get("action") == "LeaderProduce" and "append_offset" in o, {"append_offset": 5}, "offset.jsonl")
    v = check_trace(read_trace(path))
    assert v.status == "rejected" and v.at_event == n, v.reason
    assert "not with append_offset = 5" in v.reason


def test_an_append_offset_on_a_step_that_appended_nothing_is_rejected(tv1: Path) -> None:
    # a produce the leader refused: the log did not grow, so no offset was taken
    def refused(o: dict) -> bool:
        return o.get("action") in ("LeaderProduce", "LeaderVerified", "LeaderMarker") and "append_offset" not in o and "log_end" in o

    objs = [json.loads(x) for x in tv1.read_text().splitlines()]
    log_end = next(o for o in objs[1:] if refused(o))["log_end"]
    path, n = changed_at(tv1, refused, {"append_offset": log_end}, "noappend.jsonl")
    v = check_trace(read_trace(path))
    assert v.status == "rejected" and v.at_event == n, v.reason
    assert "not with append_offset" in v.reason


def test_the_new_columns_left_out_are_free(tv1: Path) -> None:
    def strip(objs: list) -> None:
        for o in objs[1:]:
            o.pop("txn_partitions", None)
            o.pop("append_offset", None)

    assert check_trace(read_trace(rewrite(tv1, strip, "stripped.jsonl"))).status == "accepted"


V1_TRACE = Path(__file__).resolve().parent / "fixtures" / "traces" / "kafka-v1-faulty.jsonl"


def test_a_version_1_trace_is_checked_as_before(tmp_path: Path) -> None:
    # The same run, simulated now, without the version 2 columns: TLC gets exactly the same module
    # (producer ids never reach it), and accepts it.
    v1 = read_trace(V1_TRACE)
    path = make(tmp_path, v1.header["workload"], v1.header["faults"], v1.header["seed"])

    def strip(objs: list) -> None:
        for o in objs[1:]:
            o.pop("txn_partitions", None)
            o.pop("append_offset", None)

    now = read_trace(rewrite(path, strip, "now.jsonl"))
    assert now.version == 2 and v1.version == 1
    for every_step in (True, False):
        assert module_text(v1, every_step) == module_text(now, every_step)
    assert "txn_partitions" not in module_text(v1, True) and "append_offset" not in module_text(v1, True)
    v = check_trace(v1)
    assert v.status == "accepted" and v.events == 106, v.reason


def test_the_record_encoding_checks_the_new_columns_too(tv1: Path, tmp_path: Path) -> None:
    from trace_check.traces.records import check_trace_records

    path, _ = changed_at(tv1, lambda o: o.get("action") == "TcAppend" and o.get("txn_partitions") == [1, 2], {"txn_partitions": [2]}, "parts-records.jsonl")
    assert check_trace_records(read_trace(path), "tlc", tmp_path / "parts").status == "rejected"


@pytest.mark.parametrize("unclean_at, status", [(18, "violates"), (None, "accepted")])
def test_an_unclean_election_that_loses_a_marker_is_a_behaviour_that_breaks_no_hanging_transaction(
    tmp_path: Path, unclean_at, status: str
) -> None:
    """KAFKA-20716: the follower leaves the ISR after the record (event 11), the marker is
    acknowledged by the leader alone, and the stale follower is elected: the spec allows it (Kafka
    does not promise exactly-once with unclean elections) and NoHangingTransaction fails."""
    faults = (Fault(11, "lag"),) + ((Fault(unclean_at, "unclean"),) if unclean_at else ())
    head, events = simulate(Workload.parse("transfer:version=TV1,partitions=1,txns=1"), Faults(), 0, schedule=Schedule(faults))
    assert head["constants"]["UncleanElections"] is True
    assert [e["action"] for e in events].count("UncleanElection") == (1 if unclean_at else 0)
    path = tmp_path / "unclean.jsonl"
    write_trace(path, head, events)
    v = check_trace(read_trace(path), CheckOptions(timeout=300))
    assert v.status == status, v.message
    if unclean_at:
        assert v.invariant == "NoHangingTransaction"
        # caught once the coordinator's log says the transaction is complete (its CompleteCommit)
        election = 1 + next(n for n, e in enumerate(events) if e["action"] == "UncleanElection")
        assert v.event is not None and v.event["event"] > election and v.event["action"] == "TcAppend"


def test_a_trace_that_breaks_a_part_of_an_invariant_is_told_which_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An invariant that is a conjunction of named parts is checked part by part, each its own
    TLC invariant (TraceInv_X__P): the verdict names the part that is false. Here the unclean
    election's run (above), against a copy of the spec whose NoHangingTransaction is made of two
    named parts, one of them the old invariant."""
    import shutil

    import attrs

    from trace_check.traces import plugins

    faults = (Fault(11, "lag"), Fault(18, "unclean"))
    head, events = simulate(Workload.parse("transfer:version=TV1,partitions=1,txns=1"), Faults(), 0, schedule=Schedule(faults))
    path = tmp_path / "unclean.jsonl"
    write_trace(path, head, events)
    kafka = plugins.get("kafka")
    specs = tmp_path / "kafka"
    shutil.copytree(kafka.spec_dir, specs)
    props = specs / "KafkaTxnProperties.tla"
    text = props.read_text(encoding="utf-8")
    assert text.count("\nNoHangingTransaction ==") == 1
    text = text.replace("\nNoHangingTransaction ==", "\nNoHangingTransactionItself ==")
    text = text.replace("\n=====", "\nCepochCounts == cepoch = failovers\nNoHangingTransaction == CepochCounts /\\ NoHangingTransactionItself\n\n=====", 1)
    props.write_text(text, encoding="utf-8")
    variant = attrs.evolve(kafka, spec_dir=specs)
    original = plugins.get
    monkeypatch.setattr(plugins, "get", lambda name: variant if name == "kafka" else original(name))
    v = check_trace(read_trace(path), CheckOptions(timeout=300))
    assert (v.status, v.invariant, v.part) == ("violates", "NoHangingTransaction", "NoHangingTransactionItself"), v.message
    assert "breaks NoHangingTransaction after event" in "\n".join(verdict_lines(v, path, "the reference broker"))
    assert "(its part NoHangingTransactionItself is false)" in "\n".join(verdict_lines(v, path, "the reference broker"))
