"""txconform replay (spark_replay/): the checks on Spark against TLC and the reference broker.

One local[2] Spark session for the process, shared with the other replay modules (conftest.py's
local_spark; a session costs about 10 s). Differential: runs of the
reference broker that TLC accepts give no violation; runs with a bug of the zoo trip the check
mapped to the invariant it breaks, at the event where TLC rejects the run or later (TLC sees the
illegal step, the replay its consequence in the logs); bad input is one line and exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
from spark_replay.adapters import FORMATS
from spark_replay.replay import ReplayOptions, Report, run_replay
from spark_replay.staging import ReplayInputError
from trace_check.cli.main import main
from trace_check.traces.options import CheckOptions
from trace_check.traces.reader import read_trace
from trace_check.traces.validation import check_trace

pytestmark = [
    pytest.mark.spark,
    # pyspark's own deprecation and resource warnings are not ours
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def spark(local_spark: Any) -> Any:
    return local_spark


def replay(spark: Any, paths: list[Path], out: Path | None = None) -> Report:
    return run_replay(paths, FORMATS, ReplayOptions(spark_factory=lambda: spark, out=out))


def outcome(report: Report, check: str) -> Any:
    return next(o for o in report.outcomes if o.id == check)


def trace(tmp: Path, name: str, workload: str, faults: str, seed: int, bugs: tuple[str, ...] = ()) -> Path:
    head, events = simulate(Workload.parse(workload), Faults.parse(faults), seed, bugs=bugs)
    path = tmp / f"{name}.jsonl"
    write_trace(path, head, events)
    return path


# Runs of the correct broker under every fault, TV1 and TV2, plain and consume-transform-produce.
CLEAN = [
    ("transfer:version=TV1,aborts=true", "all", 1),
    ("transfer:aborts=true", "all", 2),
    ("transfer:ids=2,txns=3", "loss=1,late=EndTxn+Produce,retries=2", 3),
    ("ctp:ids=2,aborts=true", "all", 4),
    ("transfer:version=TV1", "hangs=1,failovers=1", 5),
]


@pytest.mark.tlc
def test_runs_tlc_accepts_give_no_violation(spark: Any, tmp_path: Path) -> None:
    paths = [trace(tmp_path, f"clean-{i}", w, f, s) for i, (w, f, s) in enumerate(CLEAN)]
    for p in paths:
        verdict = check_trace(read_trace(p), CheckOptions(every_step=False))
        assert verdict.status == "accepted", f"{p.name}: {verdict.message}"
    report = replay(spark, paths)
    assert report.rows["entries"] > 0 and report.rows["txn_log"] > 0 and report.rows["reads"] > 0
    for o in report.outcomes:
        if o.id == "P6":  # traces carry no .txnindex
            assert o.status == "not applicable"
            continue
        assert o.status == "pass", f"{o.id}: {o.violations} violation(s), first {o.first}"
        assert o.entities > 0, f"{o.id} checked nothing"
    assert report.exit_code == 0


# (bug, workload, faults, seed, the check it trips and its kind, whether the first violation is at
# TLC's rejection event exactly, other checks the bug's consequences may trip). Seeds found by
# running seeds 0..11 of each zoo bug's workload and faults.
ZOO_RUNS = [
    ("lso_inclusive", "transfer", "none", 0, "C1", "DIRTY_READ", True, ()),
    ("no_idempotence", "transfer:version=TV1", "late=Produce,retries=2", 1, "P1", "DUPLICATE", True, ()),
    # the second InitProducerId is validated while the first is pending: Ongoing -> Empty
    ("no_pending_check", "transfer:version=TV1", "hangs=1", 6, "P7", "ILLEGAL_TRANSITION", False, ()),
    # the hung owner's TxnOffsetCommit is accepted after the group moved on: its output and the new
    # owner's are both committed (the first violation is the marker that commits the second copy).
    # Seed 1 since TV2's group coordinator verifies TxnOffsetCommit (GcVerified): seed 0's run no
    # longer shows the bug (the spec accepts it)
    ("no_generation_check", "ctp:ids=2,instances=1,input=2,txns=1", "hangs=1", 1, "C3", "DUPLICATE_OUTPUT", False, ()),
]


ZOO_REPORT: list[Report] = []


@pytest.fixture(scope="module")
def zoo(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, set[str]]]:
    """One replay of every zoo run and of the same seeds without the bug: trace name -> check -> kinds."""
    import pyarrow.parquet as pq

    tmp = tmp_path_factory.mktemp("zoo")
    paths = []
    for bug, workload, faults, seed, *_ in ZOO_RUNS:
        paths.append(trace(tmp, bug, workload, faults, seed, (bug,)))
        paths.append(trace(tmp, f"{bug}-without", workload, faults, seed))
    report = replay(spark, paths, out=tmp / "out")
    ZOO_REPORT.append(report)
    found: dict[str, dict[str, set[str]]] = {p.stem: {} for p in paths}
    for d in (tmp / "out" / "violations").iterdir():
        for row in pq.read_table(d).to_pylist():
            found[Path(row["trace_id"]).stem].setdefault(row["check"], set()).add(row["kind"])
            found.setdefault("first:" + Path(row["trace_id"]).stem + ":" + row["check"], {}).setdefault("event", set()).add(str(row["event"]))
    found["paths"] = {"dir": {str(tmp)}}
    return found


@pytest.mark.tlc
@pytest.mark.parametrize("bug,workload,faults,seed,check,kind,same_event,also", ZOO_RUNS, ids=[r[0] for r in ZOO_RUNS])
def test_a_zoo_bug_trips_its_check(
    zoo: dict[str, dict[str, set[str]]],
    bug: str,
    workload: str,
    faults: str,
    seed: int,
    check: str,
    kind: str,
    same_event: bool,
    also: tuple[str, ...],
) -> None:
    path = Path(next(iter(zoo["paths"]["dir"]))) / f"{bug}.jsonl"
    verdict = check_trace(read_trace(path), CheckOptions(every_step=False))
    assert verdict.status == "rejected" and verdict.at_event is not None, verdict.message
    assert kind in zoo[bug].get(check, set()), zoo[bug]
    first = min(int(e) for e in zoo[f"first:{bug}:{check}"]["event"])
    assert first >= verdict.at_event
    if same_event:
        assert first == verdict.at_event
    assert set(zoo[bug]) <= {check, *also}, f"{bug} also tripped {set(zoo[bug]) - {check, *also}}"
    assert zoo[f"{bug}-without"] == {}, f"the same seed without the bug: {zoo[f'{bug}-without']}"


def test_the_first_violation_comes_with_its_context(zoo: dict[str, dict[str, set[str]]]) -> None:
    o = outcome(ZOO_REPORT[0], "P1")  # only no_idempotence's run duplicates a batch
    assert o.first is not None and Path(o.first["trace_id"]).stem == "no_idempotence"
    assert o.neighbours and all(n["partition"] == o.first["partition"] for n in o.neighbours)
    assert any(n["base_offset"] == o.first["offset"] for n in o.neighbours)
    assert o.txn_records and {r["state"] for r in o.txn_records} >= {"Empty", "Ongoing"}
    written = list((Path(next(iter(zoo["paths"]["dir"]))) / "out" / "violations" / "P1").glob("*.parquet"))
    assert written, "every violation is written as Parquet"


def test_the_cli_reports_json_and_exit_status(spark: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = trace(tmp_path, "lso", "transfer", "none", 0, ("lso_inclusive",))
    assert main(["replay", "--json", "--checks", "C1,P1", str(path)]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["verdict"] == "violated"
    assert [c["id"] for c in doc["checks"]] == ["P1", "C1"]
    assert doc["checks"][1]["first"]["kind"] == "DIRTY_READ"


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.txt"
    junk.write_text("hello\n")
    assert main(["replay", str(junk)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "junk.txt" in err and "--input-format" in err
    assert main(["replay", str(tmp_path / "absent.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["replay", "--checks", "P9", str(junk)]) == 2
    assert "P9" in capsys.readouterr().err


def test_a_trace_of_another_protocol_is_refused(tmp_path: Path) -> None:
    ydb = ROOT / "docs" / "examples" / "ydb-faulty.jsonl"
    with pytest.raises(ReplayInputError, match="txconform check"):
        run_replay([ydb], FORMATS, ReplayOptions(spark_factory=lambda: pytest.fail("no Spark for bad input")))


def test_a_broken_header_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"format": "txconform-trace", "version": 1, "protocol": "kafka"}\n{"event": 1}\n')
    with pytest.raises(ReplayInputError, match=r"bad\.jsonl"):
        run_replay([bad], FORMATS, ReplayOptions(spark_factory=lambda: pytest.fail("no Spark for bad input")))


def test_the_real_dump_log_samples_check_clean_and_say_what_they_cannot_see(spark: Any) -> None:
    samples = sorted((ROOT / "tests" / "fixtures" / "kafka-dump-log").glob("*.txt"))
    report = replay(spark, samples)
    assert set(report.formats) == {"dump-log"}
    assert report.exit_code == 0, [(o.id, o.first) for o in report.outcomes if o.first]
    p4 = outcome(report, "P4")
    assert p4.status == "pass" and p4.entities == 1  # strimzi's one PrepareCommit, markers on both partitions
    p5 = outcome(report, "P5")
    # ableasdale's three topics come without their __transaction_state: not judged, and said so
    assert p5.entities == 2 and p5.note.startswith("3 (partition, producer)")
    assert outcome(report, "C1").status == "not applicable"


def test_the_aborted_transaction_index_is_recomputed_from_the_log(spark: Any, tmp_path: Path) -> None:
    import struct

    from test_replay_logs import batch, write_segment

    a, b, c = 2**40 + 1, 2**40 + 2, 2**40 + 3
    log = [
        batch(0, [(b"k", b"a0")], pid=a, epoch=0, seq=0, txn=True),
        batch(1, [(b"k", b"b0")], pid=b, epoch=0, seq=0, txn=True),
        batch(2, [], pid=a, epoch=0, txn=True, marker="ABORT", coord_epoch=5),
        batch(3, [], pid=b, epoch=0, txn=True, marker="COMMIT", coord_epoch=5),
        batch(4, [(b"k", b"c0")], pid=c, epoch=0, seq=0, txn=True),
        batch(5, [], pid=c, epoch=0, txn=True, marker="ABORT", coord_epoch=5),
    ]

    def index(*entries: tuple[int, int, int, int]) -> bytes:
        return b"".join(struct.pack(">hqqqq", 0, *e) for e in entries)

    logs = tmp_path / "kafka-logs"
    # right: A's abort at 2 leaves B open from 1; C's abort at 5 leaves nothing open, so LSO 6
    write_segment(logs / "orders-0", log)
    (logs / "orders-0" / "00000000000000000000.txnindex").write_bytes(index((a, 0, 2, 1), (c, 4, 5, 6)))
    # wrong: A's entry missing, C's LSO counted as inclusive
    write_segment(logs / "orders-1", log)
    (logs / "orders-1" / "00000000000000000000.txnindex").write_bytes(index((c, 4, 5, 5)))
    # no index at all: not judged, and said so
    write_segment(logs / "orders-2", log)
    report = replay(spark, [logs])
    p6 = outcome(report, "P6")
    assert p6.status == "violated" and p6.by_kind == {"MISSING_INDEX_ENTRY": 1, "WRONG_INDEX_LSO": 1}, p6
    assert {(e["partition"], e["offset"], e["kind"]) for e in p6.examples} == {(1, 2, "MISSING_INDEX_ENTRY"), (1, 5, "WRONG_INDEX_LSO")}
    assert p6.entities == 2 and p6.note.startswith("1 partition(s)")
    assert [o.id for o in report.outcomes if o.status == "violated"] == ["P6"]


# The reference broker's own logs against what the replay derives from its trace: each data
# batch's fate (PartitionLog.fate), each partition's aborted-transaction index
# (PartitionLog.aborted_index) and its LSO at the end (PartitionLog.lso).
ORACLE_RUNS = [
    ("transfer:ids=2,txns=4,aborts=true", "all", 11),
    ("transfer:version=TV1,aborts=true", "loss=1,late=EndTxn+Produce,retries=2,hangs=1", 12),
    ("ctp:ids=2,aborts=true", "all", 13),
    ("transfer:aborts=true,partitions=3", "hangs=1,failovers=1,restarts=1", 14),
]


def test_fates_index_and_lso_equal_the_reference_brokers(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    from ref_impl.kafka.sim.run import trace_header
    from ref_impl.kafka.sim.scheduler import Simulation
    from spark_replay.checks import Derived
    from spark_replay.partition_pass import index_sweep
    from spark_replay.replay import load_tables

    logs, paths = {}, []
    for i, (w, f, seed) in enumerate(ORACLE_RUNS):
        events: list[dict[str, Any]] = []
        sim = Simulation(Workload.parse(w), Faults.parse(f), seed, events.append)
        sim.run(None)
        path = tmp_path / f"oracle-{i}.jsonl"
        write_trace(path, trace_header(sim), events)
        paths.append(path)
        logs[path.resolve().as_uri()] = sim.cluster.plog
    report = replay(spark, paths, out=tmp_path / "out")
    assert report.exit_code == 0
    tables = load_tables(spark, tmp_path / "out" / "staged", report.rows)
    derived = Derived(tables)
    fate_name = {None: "open", "COMMIT": "committed", "ABORT": "aborted"}
    got_fates: dict[tuple[str, int], set[tuple[int, str]]] = {}
    for r in derived.fates.where(F.col("topic") == "data").select("trace_id", "partition", "base_offset", "fate", "src").collect():
        got_fates.setdefault((r.trace_id, r.partition), set()).add((r.base_offset, fate_name[r.fate], r.src))
    rows = derived.ordered.where(F.col("topic") == "data").toPandas()
    compared = 0
    for uri, plog in logs.items():
        for p, log in plog.items():
            # each batch's fate, and its provenance (the input offset a consume-transform-produce batch was made from)
            want = {(i, log.fate(i), e.src if e.src >= 0 else None) for i, e in enumerate(log.entries) if e.kind == "data"}
            assert got_fates.get((uri, p), set()) == want, f"{uri} partition {p}: fates"
            mine = rows[(rows.trace_id == uri) & (rows.partition == p)]
            index = index_sweep(mine) if len(mine) else None
            got_index = set() if index is None else {(int(x.first_offset), int(x.last_offset)) for x in index.itertuples()}
            assert got_index == {(first, last) for _, first, last in log.aborted_index()}, f"{uri} partition {p}: index"
            open_first = {}
            for x in mine.sort_values("base_offset").itertuples():
                if x.is_control:
                    open_first.pop(x.producer_id, None)
                elif x.is_txn:
                    open_first.setdefault(x.producer_id, int(x.base_offset))
            assert min(open_first.values(), default=len(log)) == log.lso(), f"{uri} partition {p}: LSO"
            compared += len(log)
    assert compared >= 40  # log entries compared, over all runs and partitions


def test_a_spark_failure_is_one_line_naming_the_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import spark_replay.replay as replay_module

    class Py4JJavaError(Exception):  # what py4j raises for a JVM exception, stack and all
        pass

    Py4JJavaError.__module__ = "py4j.protocol"

    def failing(inputs: Any, formats: Any, options: Any) -> None:
        options.progress("P7 coordinator state machine")
        raise Py4JJavaError(
            "An error occurred while calling o2203.collectToPython.\n"
            ": org.apache.spark.SparkException: Not enough memory to build and broadcast the table\n"
            "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.notEnoughMemory(QueryExecutionErrors.scala:2180)"
        )

    monkeypatch.setattr(replay_module, "run_replay", failing)
    path = trace(tmp_path, "t", "transfer", "none", 0)
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "QueryExecutionErrors" not in err
    (line,) = [ln for ln in err.splitlines() if "error:" in ln]
    assert "Spark failed at 'P7 coordinator state machine'" in line and "SparkException: Not enough memory to build" in line and "Spark's log" in line
