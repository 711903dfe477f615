"""spark_replay.generate: generated logs are valid (the replay finds nothing in them) and each
planted violation is found where it was planted, and nothing else; the staged input format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")
pytest.importorskip("pyarrow")

import random

import pandas as pd
import pyarrow.parquet as pq

import spark_replay.partition_pass as partition_pass
from spark_replay.checks import VIOLATION_COLUMNS
from spark_replay.generate import generate, violation_key
from spark_replay.replay import ReplayOptions, run_replay
from spark_replay.staged import STAGED, run_checks

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]

KINDS = {
    ("P1", "DUPLICATE"),
    ("P2", "STALE_EPOCH_DATA"),
    ("P3", "COORDINATOR_EPOCH_BACK"),
    ("P4", "MARKER_AGAINST_DECISION"),
    ("P4", "MARKER_MISSING"),
    ("P5", "HANGING"),
    ("P7", "ILLEGAL_TRANSITION"),
    ("C1", "DIRTY_READ"),
}


@pytest.fixture(scope="module")
def spark(local_spark: Any) -> Any:
    return local_spark


def test_the_same_seed_writes_the_same_files(tmp_path: Path) -> None:
    a = generate(tmp_path / "a", 8_000, seed=5)
    b = generate(tmp_path / "b", 8_000, seed=5)
    c = generate(tmp_path / "c", 8_000, seed=6)
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*.parquet"))
    assert files and files == sorted(p.relative_to(tmp_path / "b") for p in (tmp_path / "b").rglob("*.parquet"))
    assert all((tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes() for f in files)
    assert a.plants == b.plants and a.plants != c.plants
    assert {(p.check, p.kind) for p in a.plants} == KINDS


@pytest.mark.spark
def test_a_generated_set_is_clean_but_for_exactly_the_planted_violations(spark: Any, tmp_path: Path) -> None:
    # two traces: the first with one violation of each kind, the second without any
    g = generate(tmp_path / "staged", 20_000, seed=11, trace_events=10_000)
    assert g.traces == 2 and {(p.check, p.kind) for p in g.plants} == KINDS
    assert {p.key[0] for p in g.plants} == {"generated-11-0000"}
    report = run_checks(tmp_path / "staged", spark, out=tmp_path / "out")
    found = set()
    for d in (tmp_path / "out" / "violations").iterdir():
        found |= {(r["check"], r["kind"], violation_key(r)) for r in pq.read_table(d).to_pylist()}
    assert found == {(p.check, p.kind, p.key) for p in g.plants}
    # the windows plan, the pass's oracle, gives the same rows, column by column, and the same report
    windows = run_checks(tmp_path / "staged", spark, out=tmp_path / "windows", plan="windows")
    assert _rows_by_check(tmp_path / "windows") == _rows_by_check(tmp_path / "out")
    assert [(o.id, o.status, o.by_kind, o.entities, o.note) for o in windows.outcomes] == [
        (o.id, o.status, o.by_kind, o.entities, o.note) for o in report.outcomes
    ]
    # every check with a plant applied and checked something; C4 (poll order) checks the fetches and
    # passes; C2 (client answers), C3 (provenance) and P6 (.txnindex) have no input here and say so
    planted = {p.check for p in g.plants}
    by_id = {o.id: o for o in report.outcomes}
    assert planted <= set(by_id)
    assert all(by_id[c].status == "violated" and by_id[c].entities > 0 for c in planted), [(o.id, o.status) for o in report.outcomes]
    others = {o.id: o.status for o in report.outcomes if o.id not in planted}
    assert others == {"C4": "pass", "C2": "not applicable", "C3": "not applicable", "P6": "not applicable"}, others


@pytest.mark.spark
def test_replay_reads_a_staged_directory(spark: Any, tmp_path: Path) -> None:
    from spark_replay.adapters import FORMATS  # kafka-python warns on import: inside the test's filters

    generate(tmp_path / "staged", 8_000, seed=3)
    report = run_replay([tmp_path / "staged"], {STAGED.name: STAGED, **FORMATS}, ReplayOptions(spark_factory=lambda: spark, checks=["P7"]))
    assert report.formats == {"staged": [str(tmp_path / "staged")]}
    (p7,) = report.outcomes
    assert p7.by_kind == {"ILLEGAL_TRANSITION": 1}


def _rows_by_check(out: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Every violation row written under ``out/violations``, per check, sorted."""
    found = {}
    for d in sorted((out / "violations").iterdir()):
        rows = [tuple(r[c] for c in VIOLATION_COLUMNS) for r in pq.read_table(d).to_pylist()]
        found[d.name] = sorted(rows, key=lambda row: tuple((0, "") if v is None else (1, v) for v in row))
    return found


def _merged(entries: list[dict], reads: list[dict]) -> pd.DataFrame:
    """The frame C1 gives sweep_partition for one partition (entries and read rows, the last row
    of each fetch with kind_order 2), with the dtypes Arrow gives pandas."""
    rows = [{"row": "entry", "kind_order": 0, "from_offset": None, "to_offset": None, "lso": None, **e} for e in entries]
    by_event: dict[int, list[dict]] = {}
    for r in reads:
        by_event.setdefault(r["event"], []).append(r)
    for rs in by_event.values():
        rs.sort(key=lambda r: -1 if r["offset"] is None else r["offset"])
        blank = {"row": "read", "producer_id": None, "is_txn": None, "is_control": None, "control": None}
        rows += [{**blank, "kind_order": 2 if i == len(rs) - 1 else 1, **r} for i, r in enumerate(rs)]
    frame = pd.DataFrame(rows)
    for c in ("offset", "from_offset", "to_offset", "lso", "producer_id"):
        frame[c] = pd.to_numeric(frame[c], errors="coerce").astype("float64")
    return frame.assign(trace_id="t", topic="x", partition=1)


def _rows(frame: pd.DataFrame) -> list[tuple]:
    return sorted((int(r.event), -1 if pd.isna(r.offset) else int(r.offset), r.kind, r.detail) for r in frame.itertuples())


def test_the_vectorised_c1_sweep_gives_the_rows_of_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """On random partitions (markers of several producers, non-transactional batches, reads of
    open, aborted, missing and marker offsets, wrong LSOs, skipped records): the same violations."""
    rng = random.Random(19)
    compared = 0
    for _ in range(400):
        n_e = rng.randint(1, 20)
        events = rng.sample(range(1, 120), n_e + rng.randint(1, 6))
        entry_events = sorted(events[:n_e])
        offsets = sorted(rng.sample(range(0, 40), n_e))
        entries = []
        for ev, off in zip(entry_events, offsets, strict=True):
            ctrl = rng.random() < 0.3
            control = rng.choice(["COMMIT", "ABORT"]) if ctrl else None
            entries.append({"event": ev, "offset": off, "producer_id": rng.randint(1, 3), "is_txn": rng.random() < 0.9, "is_control": ctrl, "control": control})
        reads = []
        for ev in events[n_e:]:
            lso, frm = rng.choice([None, rng.randint(0, 30)]), rng.choice([None, rng.randint(0, 15)])
            upto = rng.choice([None, None, rng.randint(0, 35)])  # a partial answer
            offs = [rng.randint(0, 35) for _ in range(rng.randint(0, 4))] or [None]
            reads += [{"event": ev, "offset": o, "from_offset": frm, "to_offset": upto, "lso": lso} for o in offs]
        frame = _merged(entries, reads)
        fast = partition_pass._sweep_vectorised(frame.copy())
        assert fast is not None
        with monkeypatch.context() as m:
            m.setattr(partition_pass, "_sweep_vectorised", lambda pdf: None)
            slow = partition_pass.sweep_partition(frame.copy())
        assert _rows(fast) == _rows(slow)
        compared += len(slow)
    assert compared > 200  # the inputs did have violations to compare


def test_generate_logs_cli_writes_what_it_lists_and_refuses_bad_arguments(tmp_path: Path) -> None:
    code, out = _cli(["generate-logs", str(tmp_path / "g"), "--events", "20k", "--seed", "3"])
    assert code == 0, out
    g = generate(tmp_path / "again", 20_000, seed=3)
    assert f"wrote {g.events:,} rows" in out and out.count("\n  ") == len(g.plants) == len(KINDS)
    for p in g.plants:
        assert f"{p.check} {p.kind}: " in out and f"event {p.key[5]}" in out
    for args, said in (
        (["--events", "5x"], "--events 5x: not a count"),
        (["--events", "10"], "--events 10: not a count"),
        ([], "add --force to replace it"),  # g is there now: nothing is overwritten
    ):
        code, out = _cli(["generate-logs", str(tmp_path / "g"), *args])
        assert code == 2 and said in out and "Traceback" not in out, out
    listed = json.loads((tmp_path / "g" / "planted.json").read_text())
    assert [(p["check"], p["kind"], p["event"]) for p in listed["planted"]] == [(p.check, p.kind, p.key[5]) for p in g.plants]
    # --force replaces only what generate-logs wrote
    code, out = _cli(["generate-logs", str(tmp_path / "g"), "--events", "20k", "--seed", "4", "--force"])
    assert code == 0 and json.loads((tmp_path / "g" / "planted.json").read_text())["seed"] == 4
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    code, out = _cli(["generate-logs", str(tmp_path / "mine"), "--force"])
    assert code == 2 and "name a new one" in out and (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def _cli(args: list[str]) -> tuple[int, str]:
    import os
    import subprocess
    import sys

    exe = Path(sys.executable).parent / "txconform"
    proc = subprocess.run([str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120, env=dict(os.environ, COLUMNS="200"))
    return proc.returncode, proc.stdout
