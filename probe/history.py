"""The record of a probe run: ``probe.jsonl``, a header line, then one line per step, in order.

Every line but the header has ``type`` and ``seq`` (its position in the run: the order in which the
probe learned it). Lines are written as they happen and flushed, so a run cut short keeps what it saw.

- ``send``: a producer's record and what the client was told: ``process``, ``txn`` (transactional id
  / instance / number), ``op`` (the transaction's number within the process), topic, partition, key,
  value, ``offset`` (null if the delivery failed) and ``error``.
- ``txn``: a transaction's end as the client saw it: ``outcome`` ``ok`` (committed), ``fail``
  (aborted: by the client, or by the coordinator when a newer instance fenced it), ``info`` (unknown:
  a commit that timed out, a process that was killed), with the error if any.
- ``poll``: a consumer's poll and the records it returned (``records``: [topic, partition, offset,
  key, value] in the order returned), with the consumer's ``isolation``.
- ``fetch``: a raw Fetch response for one partition (probe.wire): from_offset, high watermark,
  LSO, aborted transactions, and the batches (entries columns plus their data records).
- ``note``: what else happened (a process killed by its id, a new instance fencing an old one).

Format and version are in the header (``format: txconform-probe``, ``version``) with the target, its
version, the clients' versions, the seed and the command that repeats the run.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import IO, Any

FORMAT = "txconform-probe"
VERSION = 1
FILE = "probe.jsonl"


class Recorder:
    """Appends lines to ``probe.jsonl``; thread-safe; each line gets the next ``seq``."""

    def __init__(self, path: Path, header: dict[str, Any]) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._seq = 0
        self._t0 = time.monotonic_ns()
        self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self._file.write(json.dumps({"format": FORMAT, "version": VERSION, **header}, sort_keys=True) + "\n")
        self._file.flush()

    def add(self, kind: str, **fields: Any) -> int:
        """Append a line; its ``seq``. A client thread that outlived the run (it is reported as not
        finished before the deadline) writes nothing once the record is closed: -1."""
        with self._lock:
            if self._file.closed:
                return -1
            self._seq += 1
            line = {"type": kind, "seq": self._seq, "time_ns": time.monotonic_ns() - self._t0, **fields}
            self._file.write(json.dumps(line, sort_keys=True) + "\n")
            self._file.flush()
            return self._seq

    def add_lines(self, lines: list[dict[str, Any]]) -> None:
        """Lines another process wrote (a child producer): each gets a ``seq`` of this run, in order."""
        for line in lines:
            fields = {k: v for k, v in line.items() if k not in ("type", "seq", "time_ns")}
            self.add(str(line.get("type")), **fields)

    def close(self) -> None:
        with self._lock:
            self._file.close()
