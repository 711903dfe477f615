"""``txconform probe`` (probe/): targets started and stopped by their own process id, a seeded plan
run with real clients, the raw Fetch reader, the record and its adapter, one-line errors.

The tests that start a broker (mark ``probe``) run each installed target with a small plan and
check that it completes, writes its record and report, and leaves no process and no topic behind.
What the targets do wrong is reported by the probe (docs/probe.md); these tests do not expect it.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("kafka")

from probe.targets import TargetError, free_port, parse_bootstrap
from probe.wire import Fetched, FetchedBatch
from probe.workload import make_plan
from spark_replay.adapters.probe import read
from spark_replay.staging import ReplayInputError
from trace_check.cli.main import main

FIXTURE = Path(__file__).parent / "fixtures" / "probe" / "tansu-seed11.jsonl"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not reaped) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# --- without a broker -----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "nohost", "host:0", "host:99999", "a b:1"])
def test_a_bad_bootstrap_is_refused_with_the_fix(text: str) -> None:
    with pytest.raises(TargetError, match="HOST:PORT"):
        parse_bootstrap(text)


def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["probe", "--bootstrap", "nohost", "--out", str(tmp_path / "a")]) == 2
    assert main(["probe", "--scenarios", "zombie,flood", "--out", str(tmp_path / "b")]) == 2
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "keep.txt").write_text("mine")
    assert main(["probe", "--out", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("txconform: error: ") for line in err), err
    assert "flood" in err[1] and "zombie,kill,open,ctp,kafka-python,java" in err[1]
    assert "name a new one" in err[2] and (tmp_path / "c" / "keep.txt").read_text() == "mine"


def test_a_cluster_that_does_not_answer_is_exit_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("probe.targets.BOOTSTRAP_SECONDS", 3.0)
    port = free_port()  # nothing listens there
    assert main(["probe", "--bootstrap", f"127.0.0.1:{port}", "--out", str(tmp_path / "p")]) == 2
    err = capsys.readouterr().err
    assert f"127.0.0.1:{port} did not answer Metadata" in err and "Traceback" not in err


def test_the_plan_is_the_seeds() -> None:
    assert make_plan(5) == make_plan(5)
    assert make_plan(5) != make_plan(6)
    plan = make_plan(5, partitions=4, producers=3, txns=7, records=2, scenarios=("kill",))
    assert len(plan.producers) == 3 and all(len(t) == 7 for t in plan.producers)
    assert all(p < 4 and 1 <= n <= 2 for txns in plan.producers for t in txns for p, n in t.records)
    assert plan.kill and not plan.zombie and not plan.open_txn and not plan.ctp and not plan.kafka_python
    commits = [t.commit for txns in make_plan(1, txns=200).producers for t in txns]
    assert 0.5 < sum(commits) / len(commits) < 0.8  # about a third aborted


def _batch(base: int, last: int, pid: int, control: str | None = None) -> FetchedBatch:
    row = {"base_offset": base, "last_offset": last, "producer_id": pid, "is_txn": True, "is_control": control is not None, "control": control}
    return FetchedBatch(row, [] if control else [(o, "k", f"v{o}") for o in range(base, last + 1)])


def test_a_read_committed_client_skips_what_the_aborted_list_names_as_kafkas_consumer_does() -> None:
    # producer 1 aborts [0..1] (marker 2), commits [3] (marker 5); producer 2's [4] commits (marker 6)
    batches = [_batch(0, 1, 1), _batch(2, 2, 1, "ABORT"), _batch(3, 3, 1), _batch(4, 4, 2), _batch(5, 5, 1, "COMMIT"), _batch(6, 6, 2, "COMMIT")]
    right = Fetched(0, 0, 7, 7, [(1, 0)], batches)
    assert [r[0] for r in right.delivered()] == [3, 4]
    # a broker that leaves the aborted transaction out of the list makes the client deliver it
    wrong = Fetched(0, 0, 7, 7, [], batches)
    assert [r[0] for r in wrong.delivered()] == [0, 1, 3, 4]
    # a fetch from the middle of a batch returns only what is at or past its offset
    assert [r[0] for r in Fetched(1, 0, 7, 7, [], batches).delivered()][:1] == [1]
    assert right.next_offset() == 7


def test_the_record_becomes_the_replay_tables() -> None:
    header, tables = read(FIXTURE)
    assert header["format"] == "txconform-probe" and header["target"] == "tansu" and header["seed"] == 11
    assert set(header["clients"]) >= {"confluent-kafka", "librdkafka", "kafka-python"}
    writes, reads, entries = tables["writes"], tables["reads"], tables["entries"]
    assert {w["outcome"] for w in writes} >= {"ok", "fail", "info"}  # the killed and the open transactions are info
    assert {r["op_f"] for r in reads} == {"poll", "fetch"}
    assert {r["isolation"] for r in reads if r["op_f"] == "poll"} == {"read_committed", "read_uncommitted"}
    assert any(e["is_control"] and e["control"] == "ABORT" for e in entries) and any(e["control"] == "COMMIT" for e in entries)
    # each entry comes after the read_committed fetches of its partition that could not see it
    # (their high watermark was at or below it), and before the first one that could
    lines = [json.loads(x) for x in FIXTURE.read_text().splitlines()[1:]]
    fetches = [ln for ln in lines if ln["type"] == "fetch" and ln["isolation"] == "read_committed" and not ln.get("empty_response")]
    for e in entries:
        mine = [f for f in fetches if f["partition"] == e["partition"]]
        before = [f["seq"] * 1_000_000 for f in mine if f["high_watermark"] <= e["last_offset"]]
        after = [f["seq"] * 1_000_000 for f in mine if f["high_watermark"] > e["last_offset"]]
        assert all(b < e["event"] for b in before if b < min(after, default=b + 1)), e
        assert all(e["event"] < a for a in after), e
    # the transactional id of a batch comes from the sends it holds
    sent = {(w["partition"], w["offset"]): w["txn"].split("/")[0] for w in writes if w["offset"] is not None}
    for e in entries:
        if not e["is_control"] and (e["partition"], e["base_offset"]) in sent:
            assert e["txn_id"] == sent[(e["partition"], e["base_offset"])]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("not json", ":2: not JSON"),
        ('{"type": "send", "seq": 1}', ":2: a send line without 'process'"),
        ('{"type": "txn", "seq": 1, "txn": "a/0/1", "outcome": "maybe"}', ":2: outcome 'maybe'"),
        ('{"type": "poll", "seq": 1, "process": "c", "op": 1, "isolation": "read_committed", "records": [[1, 2]]}', ":2: a polled record must be"),
        ('{"type": "send", "seq": "x", "process": "p"}', ":2: seq is 'x', not an integer"),
    ],
)
def test_a_bad_record_is_one_line_naming_the_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    f = tmp_path / "probe.jsonl"
    f.write_text(FIXTURE.read_text().splitlines()[0] + "\n" + line + "\n")
    with pytest.raises(ReplayInputError, match=message.replace("(", r"\(").replace("[", r"\[")) as e:
        read(f)
    assert str(f) in str(e.value) and "\n" not in str(e.value)


def test_a_record_of_another_version_says_to_upgrade(tmp_path: Path) -> None:
    header = json.loads(FIXTURE.read_text().splitlines()[0]) | {"version": 99}
    f = tmp_path / "probe.jsonl"
    f.write_text(json.dumps(header) + "\n")
    with pytest.raises(ReplayInputError, match=r"version 99.*upgrade txconform"):
        read(f)


# --- against the real targets -------------------------------------------------------------------


def _installed(target: str) -> bool:
    try:
        import confluent_kafka  # noqa: F401

        if target == "tansu":
            from probe.targets import tansu_binary

            tansu_binary()
        return True
    except (ImportError, TargetError):
        return False


@pytest.mark.probe
@pytest.mark.parametrize("target", ["mock", "tansu"])
def test_a_probe_of_each_installed_target_completes_and_leaves_nothing_running(target: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not _installed(target):
        pytest.skip(f"{target} is not installed (pip install 'txconform[probe]')")
    out = tmp_path / "run"
    # the group of consume-transform-produce forms in 3 s on the mock and in 23 s on Tansu, where
    # kafka-python runs (it cannot bootstrap from the mock: docs/probe.md): each scenario once
    scenarios = "zombie,kill,open,ctp" if target == "mock" else "zombie,kill,open,kafka-python"
    code = main(["probe", "--target", target, "--seed", "3", "--txns", "2", "--scenarios", scenarios, "--out", str(out), "--no-check"])
    printed = capsys.readouterr().out
    assert code in (0, 1), printed  # 1: the target did something wrong, which docs/probe.md reports
    lines = [json.loads(x) for x in (out / "probe.jsonl").read_text().splitlines()]
    header = lines[0]
    assert header["target"] == target and header["seed"] == 3 and header["target_version"] and header["clients"]["librdkafka"]
    assert header["command"].startswith(f"txconform probe --target {target} --seed 3") and scenarios in header["command"]
    kinds = {ln["type"] for ln in lines[1:]}
    assert kinds >= {"send", "txn", "poll", "fetch", "note"}
    notes = {ln["what"]: ln for ln in lines[1:] if ln["type"] == "note"}
    assert "killed" in notes and "fenced-older-instance" in notes and "left-open" in notes
    if target == "tansu":  # the second client ran: kafka-python's producer sent, or says why it could not start
        assert any(ln["type"] == "send" and ln["process"] == "kp-0" for ln in lines[1:]) or notes.get("init-failed", {}).get("client") == "kafka-python"
    else:  # the consume-transform-produce member ran
        assert "ctp-assigned" in notes or "ctp-no-assignment" in notes
    # the broker and the killed producer process are gone, each stopped by its own id
    assert not _alive(header["target_pid"]) and not _alive(notes["killed"]["pid"])
    assert json.loads((out / "report.json").read_text())["command"] == header["command"]
    assert (out / "target.log").is_file() and "the target was stopped" in printed


@pytest.mark.probe
def test_a_probe_of_a_running_cluster_deletes_its_topic_and_leaves_the_cluster_running(tmp_path: Path) -> None:
    if not _installed("tansu"):
        pytest.skip("tansu is not installed (pip install 'txconform[probe]')")
    from confluent_kafka.admin import AdminClient

    from probe.run import TargetSpec, record
    from probe.targets import start_tansu

    with start_tansu(tmp_path / "tansu") as tansu:
        plan = make_plan(4, txns=1, scenarios=())
        rec = record(plan, TargetSpec(bootstrap=tansu.bootstrap), tmp_path / "run")
        assert rec.target == "bootstrap" and rec.topic_left is None and not rec.errors
        assert tansu.process is not None and tansu.process.poll() is None  # not the probe's to stop
        topics = AdminClient({"bootstrap.servers": tansu.bootstrap}).list_topics(timeout=10).topics
        assert plan.topic not in topics
        pid = tansu.pid
    assert pid is not None and not _alive(pid)
    with socket.socket() as s:  # its port is free again
        s.bind((tansu.bootstrap.split(":")[0], int(tansu.bootstrap.split(":")[1])))


def _ctp_record(outputs: list[tuple[int, str, str]], group_offset: int, sent: bool = True) -> list[dict[str, Any]]:
    """A minimal record of the consume-transform-produce loop: input partition 0 holds a committed
    batch (offsets 0..2, marker 3) and an aborted one (offset 4, marker 5); the output partition 0
    holds ``outputs`` as (offset, key, marker) with a marker right after each record."""
    topic = "in"
    header = {"format": "txconform-probe", "version": 1, "plan": {"topic": topic, "ctp": True}}
    data = {"is_control": False, "is_txn": True, "producer_id": 1}
    marker = {"is_control": True, "is_txn": True, "producer_id": 1}
    inp = [
        {**data, "base_offset": 0, "last_offset": 2, "records": [[o, None, f"v{o}"] for o in range(3)]},
        {**marker, "base_offset": 3, "last_offset": 3, "control": "COMMIT"},
        {**data, "base_offset": 4, "last_offset": 4, "records": [[4, None, "v4"]]},
        {**marker, "base_offset": 5, "last_offset": 5, "control": "ABORT"},
    ]
    out = []
    for o, key, control in outputs:
        out += [
            {**data, "producer_id": 9, "base_offset": o, "last_offset": o, "records": [[o, key, "x"]]},
            {**marker, "producer_id": 9, "base_offset": o + 1, "last_offset": o + 1, "control": control},
        ]
    lines: list[dict[str, Any]] = [header]
    lines.append({"type": "fetch", "process": "log", "topic": topic, "partition": 0, "batches": inp})
    lines.append({"type": "fetch", "process": "log", "topic": "in-out", "partition": 0, "batches": out})
    if sent:
        lines.append({"type": "note", "process": "ctp-0", "what": "ctp-offsets", "txn": "c/0/1", "offsets": [[topic, 0, 3]]})
        lines.append({"type": "txn", "process": "ctp-0", "txn": "c/0/1", "outcome": "ok"})
    lines.append({"type": "note", "process": "ctp-0", "what": "group-committed", "group": "g", "offsets": [[topic, 0, group_offset]]})
    return lines


def test_exactly_once_of_consume_transform_produce_is_judged_on_both_logs() -> None:
    from probe.findings import ctp_findings

    # each committed input once, the group past them: clean (an aborted output does not count)
    clean = [(0, "in/0/0", "COMMIT"), (2, "in/0/1", "ABORT"), (4, "in/0/1", "COMMIT"), (6, "in/0/2", "COMMIT")]
    assert ctp_findings(_ctp_record(clean, 3)) == []
    kinds = {f["kind"]: f for f in ctp_findings(_ctp_record([*clean, (8, "in/0/2", "COMMIT"), (10, "in/0/4", "COMMIT")], 3))}
    assert set(kinds) == {"CTP_DUPLICATE", "CTP_ABORTED_INPUT"}
    assert kinds["CTP_DUPLICATE"]["example"]["offset"] == 8 and "in/0/2 has 2 committed outputs" in kinds["CTP_DUPLICATE"]["example"]["detail"]
    assert "input in/0/4 committed, but that input is abort" in kinds["CTP_ABORTED_INPUT"]["example"]["detail"]
    (lost,) = ctp_findings(_ctp_record(clean[:2], 3))
    assert lost["kind"] == "CTP_LOST" and lost["count"] == 2 and lost["example"]["offset"] == 1
    (gone,) = ctp_findings(_ctp_record(clean, -1001))
    assert gone["kind"] == "CTP_OFFSETS_NOT_COMMITTED"
    assert ctp_findings(_ctp_record(clean, -1001, sent=False)) == []
    record = _ctp_record(clean, 3)
    record[0]["plan"]["ctp"] = False
    assert ctp_findings(record) == []


class _CtpClients:
    """A consume-transform-produce member's producer and consumer, enough for probe.workload.ctp_end:
    the producer's commit answers ``commit``; the consumer's group committed offset 3 of in/0, and
    its committed() fails ``unreadable`` times first."""

    def __init__(self, commit: str, fenced: bool = False, unreadable: int = 0) -> None:
        self.commit_answer, self.fenced, self.unreadable = commit, fenced, unreadable
        self.ended: list[str] = []
        self.seeks: list[tuple[str, int, int]] = []

    def commit(self) -> str:
        self.ended.append("commit")
        return self.commit_answer

    def abort(self) -> str:
        self.ended.append("abort")
        return "fail"

    def assignment(self) -> list[Any]:
        from confluent_kafka import TopicPartition

        return [TopicPartition("in", 0)]

    def committed(self, parts: list[Any], timeout: float) -> list[Any]:
        from confluent_kafka import TopicPartition

        if self.unreadable:
            self.unreadable -= 1
            raise RuntimeError("COORDINATOR_LOAD_IN_PROGRESS")
        return [TopicPartition(tp.topic, tp.partition, 3) for tp in parts]

    def seek(self, tp: Any) -> None:
        self.seeks.append((tp.topic, tp.partition, tp.offset))


class _Notes:
    def __init__(self) -> None:
        self.notes: list[dict[str, Any]] = []

    def add(self, kind: str, **fields: Any) -> None:
        self.notes.append({"type": kind, **fields})


def test_the_ctp_member_rewinds_to_the_group_offsets_unless_its_transaction_committed(monkeypatch: pytest.MonkeyPatch) -> None:
    """KIP-98's loop: after a transaction that did not commit, the member consumes its input again
    from the group's committed offsets. (The three-node fault run on real Kafka found the probe
    skipping the rewind after a failed commit: CTP_LOST, the probe's own bug.)"""
    pytest.importorskip("confluent_kafka")
    import probe.workload as workload

    monkeypatch.setattr(workload.time, "sleep", lambda s: None)
    for commit, planned_abort, sent, ended in (("ok", False, True, ["commit"]), ("fail", False, True, ["commit"]),
                                              ("info", False, True, ["commit"]), ("ok", True, True, ["abort"]),
                                              ("ok", False, False, ["abort"])):
        clients, notes = _CtpClients(commit), _Notes()
        assert workload.ctp_end(clients, clients, notes, "g", offsets_sent=sent, planned_abort=planned_abort)
        assert clients.ended == ended
        # a transaction whose offsets were not sent is aborted, never committed
        assert clients.seeks == ([] if ended == ["commit"] and commit == "ok" else [("in", 0, 3)]), (commit, planned_abort, sent)
    fenced = _CtpClients("fail", fenced=True)
    assert not workload.ctp_end(fenced, fenced, _Notes(), "g", offsets_sent=True, planned_abort=False)
    loading = _CtpClients("fail", unreadable=2)
    assert workload.ctp_end(loading, loading, _Notes(), "g", offsets_sent=True, planned_abort=False)
    assert loading.seeks == [("in", 0, 3)]
    gone, notes = _CtpClients("fail", unreadable=workload.REWIND_TRIES), _Notes()
    assert not workload.ctp_end(gone, gone, notes, "g", offsets_sent=True, planned_abort=False)
    assert gone.seeks == [] and [n["what"] for n in notes.notes] == ["ctp-rewind-failed"]


def test_a_kafka_python_commit_that_never_returns_leaves_the_outcome_unknown(monkeypatch: pytest.MonkeyPatch) -> None:
    """kafka-python's commit_transaction waits for EndTxn without a bound: the probe waits
    END_SECONDS, records the stuck call, and goes on with the transaction's outcome unknown."""
    import threading

    from probe import clients

    monkeypatch.setattr(clients, "END_SECONDS", 0.2)
    release = threading.Event()

    class Stuck:
        def commit_transaction(self) -> None:
            release.wait(5)

    lines: list[tuple[str, dict[str, Any]]] = []
    p = object.__new__(clients.KpProducer)
    p._steps(lambda kind, **f: lines.append((kind, f)), "t", 0, "kp-0")
    p._pending = []
    p.kp = Stuck()
    p.n = 1
    try:
        assert p.commit() == "info"
    finally:
        release.set()
    [(_, stuck)] = [(k, f) for k, f in lines if f.get("what") == "client-stuck"]
    assert stuck["error"] == "commit_transaction did not return within 0.2 s"
    [(_, txn)] = [(k, f) for k, f in lines if k == "txn"]
    assert txn["outcome"] == "info" and "did not return" in txn["error"]
