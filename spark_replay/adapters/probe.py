"""The record of a ``txconform probe`` run (``probe.jsonl``, probe/history.py) into the replay tables.

- ``writes``: one row per ``send`` line, its outcome that of its transaction's ``txn`` line (``ok``
  committed, ``fail`` aborted, ``info`` unknown; a transaction with no ``txn`` line, such as the
  killed process's or the one left open, is ``info``).
- ``reads``: one row per record of each consumer ``poll`` (``op_f`` poll, with its isolation level),
  and one per record a read_committed client takes from each raw read_committed ``fetch`` (``op_f``
  fetch, with ``from_offset`` and the LSO the broker reported; an empty one gives a row with a null
  offset). The fetches are what C1 replays; the polls are what C2 and C4 judge.
- ``entries``: one row per batch of the final read_uncommitted pass over each partition (process
  ``log``), that is the log as the broker served it at the end, markers included. An entry's
  ``event`` places it between the raw read_committed fetches of its partition: it comes just before
  the first fetch whose high watermark is past it (it was not yet readable at the fetch before),
  which is what C1 needs to say what a fetch could see. ``txn_id`` comes from the sends whose
  offsets the batch holds, and from the producer id for its markers.

Events are the lines' ``seq`` times ``SCALE``, so entries fit between two lines. ``trace_id`` is
the name of the record's directory (``probe-kafka-4.1.0-7``), so that two records of one target and
seed (a version against its fix) are two traces. C2 still looks a send up in the log of its topic
by name, whichever input holds that log (a Jepsen history's log is an input of its own): replay
together only records whose topics differ, that is of different seeds. A line that is not what probe.jsonl holds is a ReplayInputError naming
the file and line.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from spark_replay.adapters.kafka_common import ENTRY_COLUMNS
from spark_replay.staging import InputFormat, ReplayInputError, Stager
from spark_replay.tables import rows_to_table

FORMAT = "txconform-probe"
VERSIONS = (1,)
FILE = "probe.jsonl"
SCALE = 1_000_000
_FIX = "give the probe.jsonl a txconform probe run wrote, unchanged"


def _file(path: Path) -> Path:
    return path / FILE if path.is_dir() else path


def sniff(path: Path) -> bool:
    f = _file(path)
    if not f.is_file():
        return False
    try:
        with f.open("rb") as fh:
            return f'"{FORMAT}"'.encode() in fh.readline(64 * 1024)
    except OSError:
        return False


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                line = json.loads(raw)
            except json.JSONDecodeError as e:
                raise ReplayInputError(f"{path}:{n}: not JSON ({e.msg}); {_FIX}") from None
            if not isinstance(line, dict):
                raise ReplayInputError(f"{path}:{n}: a line must be a JSON object; {_FIX}")
            yield n, line


def _need(path: Path, n: int, line: dict[str, Any], *fields: str) -> None:
    for name in fields:
        if name not in line:
            raise ReplayInputError(f"{path}:{n}: a {line.get('type')} line without {name!r}; {_FIX}")


def _int(path: Path, n: int, value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ReplayInputError(f"{path}:{n}: {name} is {value!r}, not an integer; {_FIX}")
    return value


def read(path: Path) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The header and the rows of each table, from one probe.jsonl."""
    lines = _lines(path)
    try:
        _, header = next(lines)
    except StopIteration:
        raise ReplayInputError(f"{path}: empty; {_FIX}") from None
    if header.get("format") != FORMAT:
        raise ReplayInputError(f"{path}:1: the header's format is {header.get('format')!r}, not {FORMAT!r}; {_FIX}")
    if header.get("version") not in VERSIONS:
        raise ReplayInputError(f"{path}:1: probe record version {header.get('version')!r}; this txconform reads {VERSIONS}: upgrade txconform")
    trace_id = _file(Path(path)).resolve().parent.name
    sends: list[tuple[int, dict[str, Any]]] = []
    ends: dict[str, str] = {}
    reads: list[dict[str, Any]] = []
    log: list[tuple[int, dict[str, Any]]] = []
    marks: dict[tuple[str, int], list[tuple[int, int]]] = {}  # (topic, partition) -> [(seq, high watermark)] of read_committed fetches
    fetch_ops: dict[str, int] = {}
    for n, line in lines:
        kind = line.get("type")
        _need(path, n, line, "type", "seq")
        seq = _int(path, n, line["seq"], "seq") or 0
        event = seq * SCALE
        if kind == "send":
            _need(path, n, line, "process", "txn", "op", "topic", "partition", "value", "offset")
            sends.append((n, line))
        elif kind == "txn":
            _need(path, n, line, "txn", "outcome")
            if line["outcome"] not in ("ok", "fail", "info"):
                raise ReplayInputError(f"{path}:{n}: outcome {line['outcome']!r}: not ok, fail or info; {_FIX}")
            ends[str(line["txn"])] = line["outcome"]
        elif kind == "poll":
            _need(path, n, line, "process", "op", "isolation", "records")
            for i, rec in enumerate(line["records"]):
                if not isinstance(rec, list) or len(rec) != 5:
                    raise ReplayInputError(f"{path}:{n}: a polled record must be [topic, partition, offset, key, value]; {_FIX}")
                reads.append(
                    {
                        "source": "probe",
                        "trace_id": trace_id,
                        "process": line["process"],
                        "op_index": _int(path, n, line["op"], "op"),
                        "time": line.get("time_ns"),
                        "isolation": line["isolation"],
                        "topic": rec[0],
                        "partition": _int(path, n, rec[1], "partition"),
                        "offset": _int(path, n, rec[2], "offset"),
                        "key": rec[3],
                        "value": rec[4],
                        "event": event,
                        "op_type": "ok",
                        "op_f": "poll",
                        "read_index": i,
                    }
                )
        elif kind == "fetch":
            _need(path, n, line, "process", "isolation", "topic", "partition", "from_offset", "high_watermark", "batches")
            if line.get("error_code") or line.get("empty_response"):
                continue
            tp = (str(line["topic"]), _int(path, n, line["partition"], "partition") or 0)
            if line["process"] == "log":
                log.append((n, line))
                continue
            if line["isolation"] != "read_committed":
                continue
            marks.setdefault(tp, []).append((seq, _int(path, n, line["high_watermark"], "high_watermark") or 0))
            process = str(line["process"])
            fetch_ops[process] = fetch_ops.get(process, 0) + 1
            base = {
                "source": "probe",
                "trace_id": trace_id,
                "process": process,
                "op_index": fetch_ops[process],
                "time": line.get("time_ns"),
                "isolation": "read_committed",
                "topic": tp[0],
                "partition": tp[1],
                "from_offset": _int(path, n, line["from_offset"], "from_offset"),
                # a broker may answer with part of what it has below the LSO: the fetch covers up to
                # the offset after its last batch
                "to_offset": max([_int(path, n, line["from_offset"], "from_offset") or 0, *(int(b["last_offset"]) + 1 for b in line["batches"])]),
                "lso": _int(path, n, line.get("lso"), "lso"),
                "event": event,
                "op_type": "ok",
                "op_f": "fetch",
            }
            delivered = line.get("delivered") or []
            if not delivered:
                reads.append({**base, "offset": None})
            for i, rec in enumerate(delivered):
                reads.append({**base, "offset": _int(path, n, rec[0], "offset"), "key": rec[1], "value": rec[2], "read_index": i})
    writes = []
    txid_at: dict[tuple[str, int, int], str] = {}
    for n, line in sends:
        txn = str(line["txn"])
        outcome = ends.get(txn, "info")
        offset = _int(path, n, line["offset"], "offset")
        partition = _int(path, n, line["partition"], "partition")
        writes.append(
            {
                "source": "probe",
                "trace_id": trace_id,
                "process": line["process"],
                "op_index": _int(path, n, line["op"], "op"),
                "time": line.get("time_ns"),
                "txn": txn,
                "topic": line["topic"],
                "partition": partition,
                "key": line.get("key"),
                "value": line["value"],
                "offset": offset,
                "outcome": outcome,
                "event": (_int(path, n, line["seq"], "seq") or 0) * SCALE,
                "committed": {"ok": True, "fail": False}.get(outcome),
            }
        )
        if offset is not None and partition is not None:
            txid_at[(str(line["topic"]), partition, offset)] = txn.split("/")[0]
    return header, {"writes": writes, "reads": reads, "entries": _entries(path, trace_id, log, marks, txid_at)}


def _entries(
    path: Path,
    trace_id: str,
    log: list[tuple[int, dict[str, Any]]],
    marks: dict[tuple[str, int], list[tuple[int, int]]],
    txid_at: dict[tuple[str, int, int], str],
) -> list[dict[str, Any]]:
    by_tp: dict[tuple[str, int], dict[int, dict[str, Any]]] = {}
    for n, line in log:
        tp = (str(line["topic"]), int(line["partition"]))
        for b in line["batches"]:
            if not isinstance(b, dict) or not isinstance(b.get("base_offset"), int) or not isinstance(b.get("last_offset"), int):
                raise ReplayInputError(f"{path}:{n}: a batch without integer base_offset and last_offset; {_FIX}")
            by_tp.setdefault(tp, {})[b["base_offset"]] = {**b, "_line": n}
    rows = []
    for tp, batches in sorted(by_tp.items()):
        seen = sorted(marks.get(tp, []))
        # the high watermark a fetch reported, then the first fetch (in seq order) past each offset
        seqs = [s for s, _ in seen]
        reach = [h for _, h in seen]
        best = 0
        for i, h in enumerate(reach):  # a later fetch never reports less than an earlier one saw
            best = max(best, h)
            reach[i] = best
        last_seq = max([0, *seqs])
        rank: dict[int, int] = {}
        txids: dict[int, str] = {}
        ordered = [batches[o] for o in sorted(batches)]
        for b in ordered:
            if not b.get("is_control"):
                for rec in b.get("records") or []:
                    txid = txid_at.get((tp[0], tp[1], rec[0]))
                    if txid is not None:
                        txids.setdefault(int(b["producer_id"]), txid)
        for b in ordered:
            k = bisect.bisect_right(reach, b["last_offset"])
            slot = seqs[k] - 1 if k < len(seqs) else last_seq + 1
            rank[slot] = rank.get(slot, 0) + 1
            if rank[slot] >= SCALE:
                raise ReplayInputError(f"{path}:{b['_line']}: more than {SCALE - 1} batches between two fetches; {_FIX}")
            rows.append(
                {
                    "source": "fetch",
                    "trace_id": trace_id,
                    "topic": tp[0],
                    "partition": tp[1],
                    # a batch's own columns, as the segment reader gives them (its position is the line's)
                    **{c: b.get(c) for c in ENTRY_COLUMNS if c != "position"},
                    "event": slot * SCALE + rank[slot],
                    "txn_id": txids.get(int(b["producer_id"])) if b.get("producer_id") is not None else None,
                    "file": FILE,
                    "position": b["_line"],
                }
            )
    return rows


def stage(paths: list[Path], stager: Stager) -> None:
    for p in paths:
        f = _file(p)
        if not f.is_file():
            raise ReplayInputError(f"{p}: no {FILE} here; give a directory txconform probe wrote, or its {FILE}")
        _, tables = read(f)
        for name, rows in tables.items():
            if rows:
                try:
                    stager.write(name, rows_to_table(name, rows))
                except (TypeError, ValueError) as e:  # pyarrow: a value of the wrong type
                    raise ReplayInputError(f"{f}: a {name} value of the wrong type ({e}); {_FIX}") from None


PROBE = InputFormat("probe", "a txconform probe run (probe.jsonl: client history and raw Fetch responses)", sniff, stage)
