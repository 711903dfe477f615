"""The probe's record through the replay checks: anomalies planted in a recorded run are found where
they were planted, with Jepsen's names, and the probe's own checks (CRC) read the record.

The record is a real probe of Tansu (tests/fixtures/probe/tansu-seed11.jsonl, written by
``txconform probe --target tansu --seed 11 --txns 4 --no-check``). Tansu itself breaks
ReadCommitted there (docs/probe.md); the test does not depend on what it does wrong: each planted
anomaly must be reported at its place, and the unchanged record must not report it there. Uses the
session's local Spark (conftest.py, ``local_spark``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("kafka")

import pyarrow.parquet as pq

from probe.findings import ANOMALIES, findings, record_findings
from spark_replay.adapters import FORMATS
from spark_replay.adapters.probe import SCALE
from spark_replay.replay import ReplayOptions, run_replay

pytestmark = [pytest.mark.spark, pytest.mark.filterwarnings("ignore::DeprecationWarning"), pytest.mark.filterwarnings("ignore::FutureWarning")]

FIXTURE = Path(__file__).parent / "fixtures" / "probe" / "tansu-seed11.jsonl"
Lines = list[dict[str, Any]]


def _lines() -> Lines:
    return [json.loads(x) for x in FIXTURE.read_text().splitlines()]


def _log(lines: Lines, partition: int) -> list[dict[str, Any]]:
    return next(ln for ln in lines[1:] if ln["type"] == "fetch" and ln["process"] == "log" and ln["partition"] == partition)["batches"]


def _data(batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [b for b in batches if not b["is_control"]]


def _closer(batches: list[dict[str, Any]], b: dict[str, Any]) -> dict[str, Any] | None:
    return next((m for m in batches if m["is_control"] and m["producer_id"] == b["producer_id"] and m["base_offset"] > b["last_offset"]), None)


def _sends(lines: Lines, outcome: str) -> list[dict[str, Any]]:
    ends = {ln["txn"]: ln["outcome"] for ln in lines[1:] if ln["type"] == "txn"}
    return [ln for ln in lines[1:] if ln["type"] == "send" and ln["offset"] is not None and ends.get(ln["txn"], "info") == outcome]


# Each plant changes the record in place and says where the replay must report what.
Plant = Callable[[Lines], tuple[str, str, int, Any]]


def plant_duplicate(lines: Lines) -> tuple[str, str, int, Any]:
    """P1: a producer's last batch of an epoch on partition 0 repeats the sequence of the one before."""
    batches = _log(lines, 0)
    data = _data(batches)
    for i in range(len(data) - 1, 0, -1):
        b = data[i]
        same = [p for p in data[:i] if (p["producer_id"], p["producer_epoch"]) == (b["producer_id"], b["producer_epoch"])]
        later = [p for p in data[i + 1 :] if (p["producer_id"], p["producer_epoch"]) == (b["producer_id"], b["producer_epoch"])]
        if same and not later:
            b["base_seq"] = same[-1]["base_seq"]
            b["last_seq"] = b["base_seq"] + b["last_offset"] - b["base_offset"]
            return "P1", "DUPLICATE", 0, b["base_offset"]
    raise AssertionError("no batch to plant a duplicate on")


def plant_zombie(lines: Lines) -> tuple[str, str, int, Any]:
    """P2: the log of partition 1 ends with a batch of an epoch its producer already left behind."""
    batches = _log(lines, 1)
    b = next(b for b in reversed(_data(batches)) if b["producer_epoch"] >= 1)
    older = [p for p in _data(batches) if p["producer_id"] == b["producer_id"] and p["producer_epoch"] == b["producer_epoch"] - 1]
    end = max(x["last_offset"] for x in batches) + 1
    stale = copy.deepcopy(b) | {"base_offset": end, "last_offset": end, "producer_epoch": b["producer_epoch"] - 1, "records": [[end, "k1", "stale"]]}
    stale["base_seq"] = stale["last_seq"] = (older[-1]["last_seq"] + 1) if older else 0
    batches.append(stale)
    return "P2", "STALE_EPOCH_DATA", 1, end


def plant_coordinator_epoch(lines: Lines) -> tuple[str, str, int, Any]:
    """P3: on partition 2, a producer's first marker claims a coordinator epoch above its next one's."""
    batches = _log(lines, 2)
    markers = [m for m in batches if m["is_control"]]
    for m in markers:
        nxt = [n for n in markers if n["producer_id"] == m["producer_id"] and n["base_offset"] > m["base_offset"]]
        if nxt:
            m["coord_epoch"] = nxt[0]["coord_epoch"] + 3
            return "P3", "COORDINATOR_EPOCH_BACK", 2, nxt[0]["base_offset"]
    raise AssertionError("no producer with two markers")


def _committed_send_on(lines: Lines, partition: int, last: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """A send of a committed transaction on ``partition`` and the COMMIT marker that closes its batch
    (``last``: the producer's last marker there, so that no later marker closes the batch instead)."""
    batches = _log(lines, partition)
    found = []
    for s in _sends(lines, "ok"):
        if s["partition"] != partition:
            continue
        b = next(b for b in _data(batches) if b["base_offset"] <= s["offset"] <= b["last_offset"])
        m = _closer(batches, b)
        if m is None or m["control"] != "COMMIT":
            continue
        if not last or not [n for n in batches if n["is_control"] and n["producer_id"] == m["producer_id"] and n["base_offset"] > m["base_offset"]]:
            found.append((s, m))
    return found[0]


def plant_lost_write(lines: Lines) -> tuple[str, str, int, Any]:
    """C2: the marker that closes a committed transaction's batch on partition 0 says ABORT."""
    send, marker = _committed_send_on(lines, 0)
    marker["control"] = "ABORT"
    return "C2", "LOST_WRITE", 0, send["offset"]


def plant_missing_marker(lines: Lines) -> tuple[str, str, int, Any]:
    """C2: the COMMIT marker of a committed transaction's batch on partition 1 is not in the log."""
    send, marker = _committed_send_on(lines, 1, last=True)
    batches = _log(lines, 1)
    batches.remove(marker)
    return "C2", "MARKER_MISSING", 1, send["offset"]


def plant_aborted_committed(lines: Lines) -> tuple[str, str, int, Any]:
    """C2 (G1A by the log): the marker closing an aborted transaction's batch on partition 2 says COMMIT."""
    batches = _log(lines, 2)
    for s in _sends(lines, "fail"):
        if s["partition"] != 2:
            continue
        b = next(b for b in _data(batches) if b["base_offset"] <= s["offset"] <= b["last_offset"])
        m = _closer(batches, b)
        if m is not None and m["control"] == "ABORT":
            m["control"] = "COMMIT"
            return "C2", "G1A", 2, s["offset"]
    raise AssertionError("no aborted send to plant on")


def plant_nonmonotonic_poll(lines: Lines) -> tuple[str, str, int, Any]:
    """C4: the read_uncommitted consumer polls again what its last poll returned."""
    polls = [ln for ln in lines[1:] if ln["type"] == "poll" and ln["process"] == "consumer-ru"]
    last = polls[-1]
    again = copy.deepcopy(last) | {"seq": lines[-1]["seq"] + 1, "op": last["op"] + 1}
    lines.append(again)
    return "C4", "NONMONOTONIC_POLL", again["records"][0][1], None


def plant_dirty_read(lines: Lines) -> tuple[str, str, int, Any]:
    """C1: the last read_committed fetch of partition 0 returns the transaction left open."""
    open_txn = next(ln["txn"] for ln in lines[1:] if ln["type"] == "note" and ln["what"] == "left-open")
    send = next(s for s in lines[1:] if s["type"] == "send" and s["txn"] == open_txn and s["partition"] == 0)
    fetch = [ln for ln in lines[1:] if ln["type"] == "fetch" and ln["process"] == "fetch-rc-final" and ln["partition"] == 0][-1]
    fetch["delivered"].append([send["offset"], send["key"], send["value"]])
    return "C1", "DIRTY_READ", 0, send["offset"]


PLANTS = (
    plant_duplicate,
    plant_zombie,
    plant_coordinator_epoch,
    plant_lost_write,
    plant_missing_marker,
    plant_aborted_committed,
    plant_nonmonotonic_poll,
    plant_dirty_read,
)


def _replay(spark: Any, records: dict[str, Lines], root: Path) -> tuple[Any, dict[str, dict[str, list[dict[str, Any]]]]]:
    """One replay of several records (each its own trace_id, its directory's name): the report
    and, per record, the violation rows of each check."""
    dirs = []
    for name, lines in records.items():
        (root / name).mkdir(parents=True)
        (root / name / "probe.jsonl").write_text("".join(json.dumps(ln) + "\n" for ln in lines))
        dirs.append(root / name)
    report = run_replay(dirs, FORMATS, ReplayOptions(spark_factory=lambda: spark, out=root / "replay"))
    rows: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in records}
    for name in records:
        trace_id = name  # the record's directory
        for o in report.outcomes:
            d = root / "replay" / "violations" / o.id
            rows[name][o.id] = [r for r in (pq.read_table(d).to_pylist() if d.is_dir() else []) if r["trace_id"] == trace_id]
    return report, rows


def _at(rows: list[dict[str, Any]], kind: str, partition: int, offset: Any) -> list[dict[str, Any]]:
    return [r for r in rows if r["kind"] == kind and r["partition"] == partition and (offset is None or r["offset"] == offset)]


@pytest.fixture(scope="module")
def replays(local_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = _lines()
    planted = _lines()
    # its own trace_id and topic, so that one replay reads both (C2 matches a history with the logs
    # given with it by topic, partition and offset, whatever input they came from)
    topic = base[0]["plan"]["topic"]
    planted = [json.loads(json.dumps(ln).replace(topic, topic + "-planted")) for ln in planted]
    planted[0]["seed"] += 1000
    wanted = [plant(planted) for plant in PLANTS]
    report, rows = _replay(local_spark, {"base": base, "planted": planted}, tmp_path_factory.mktemp("probe-checks"))
    return {"report": report, "base": rows["base"], "planted": rows["planted"], "wanted": wanted}


def test_each_planted_anomaly_is_reported_where_it_was_planted(replays: dict[str, Any]) -> None:
    base, planted, report = replays["base"], replays["planted"], replays["report"]
    for check, kind, partition, offset in replays["wanted"]:
        assert _at(planted[check], kind, partition, offset), f"{check} {kind} at partition {partition} offset {offset} not reported"
        if kind == "G1A":  # the unchanged record may have G1A there by a poll; the plant is the one by the log
            assert not [r for r in _at(base[check], kind, partition, offset) if "was committed" in r["detail"]]
            assert [r for r in _at(planted[check], kind, partition, offset) if "was committed" in r["detail"]]
        else:
            assert not _at(base[check], kind, partition, offset), f"{check} {kind} at partition {partition} offset {offset} is in the unchanged record"
    # every planted kind is named as Jepsen or the spec names it, with an example
    named = {(f["check"], f["kind"]): f for f in findings(report)}
    for check, kind, _, _ in replays["wanted"]:
        assert (check, kind) in ANOMALIES and named[(check, kind)]["example"] is not None


def test_checks_the_plants_did_not_touch_keep_their_verdict(replays: dict[str, Any]) -> None:
    base, planted = replays["base"], replays["planted"]
    assert base["P1"] == base["P2"] == base["P3"] == []  # the producers' fields of Tansu's log are in order
    # each producer check found only its plant in the planted record
    for check in ("P1", "P2", "P3"):
        assert len(planted[check]) == 1, planted[check]
    status = {o.id: o.status for o in replays["report"].outcomes}
    for check in ("P4", "P5", "P6", "P7", "C3"):
        assert status[check] == "not applicable"  # no coordinator log, no .txnindex from a probe


def test_the_record_findings_see_a_batch_whose_crc_does_not_match(tmp_path: Path) -> None:
    lines = _lines()
    assert record_findings(FIXTURE) == []
    b = _log(lines, 0)[1]
    b["crc_valid"] = False
    f = tmp_path / "probe.jsonl"
    f.write_text("".join(json.dumps(ln) + "\n" for ln in lines))
    (found,) = record_findings(f)
    assert found["kind"] == "BAD_CRC" and found["count"] == 1 and found["example"]["offset"] == b["base_offset"]


def test_events_leave_room_for_every_batch_between_two_lines() -> None:
    assert SCALE >= 1_000_000
