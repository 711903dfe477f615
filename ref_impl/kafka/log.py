"""A partition log and what it means to readers (specs/kafka/KafkaLog.tla).

Entries are record batches (one per Produce) and COMMIT/ABORT control markers; the offset of entry
``i`` (0-based here, as in Kafka) is its position. A marker of producer P closes P's records written
since P's previous marker on the partition.
"""

from __future__ import annotations

from typing import Optional

import attrs

from .messages import NO_GTX, Gtx


@attrs.frozen
class Entry:
    kind: str  # "data" or "marker"
    pid: str
    epoch: int
    seq: int = -1
    commit: bool = False
    cepoch: int = -1
    gtx: Gtx = NO_GTX  # ghost
    end_by: Gtx = NO_GTX  # ghost
    zombie: bool = False  # ghost
    src: int = -1  # CTP: the input offset this output came from (a marker: 0, as KafkaTxn.tla LeaderMarker has it)
    records: tuple = ()  # the batch's values (the spec abstracts payloads)


@attrs.define
class PartitionLog:
    entries: list[Entry] = attrs.field(factory=list)

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, entry: Entry) -> int:
        self.entries.append(entry)
        return len(self.entries) - 1

    def closer_of(self, i: int) -> Optional[int]:
        """The marker that closes data entry ``i``, or None while its transaction is open."""
        pid = self.entries[i].pid
        for j in range(i + 1, len(self.entries)):
            e = self.entries[j]
            if e.kind == "marker" and e.pid == pid:
                return j
        return None

    def fate(self, i: int) -> str:
        c = self.closer_of(i)
        if c is None:
            return "open"
        return "committed" if self.entries[c].commit else "aborted"

    def lso(self) -> int:
        """The last stable offset: the first offset of the earliest open transaction, else the log end."""
        open_from: dict[str, int] = {}
        for i, e in enumerate(self.entries):
            if e.kind == "marker":
                open_from.pop(e.pid, None)
            elif e.pid not in open_from:
                open_from[e.pid] = i
        return min(open_from.values(), default=len(self.entries))

    def aborted_index(self) -> list[tuple[str, int, int]]:
        """(producer, first offset, marker offset) for every ABORT marker that closed records."""
        index = []
        first: dict[str, int] = {}
        for i, e in enumerate(self.entries):
            if e.kind == "data":
                first.setdefault(e.pid, i)
            else:
                start = first.pop(e.pid, None)
                if not e.commit and start is not None:
                    index.append((e.pid, start, i))
        return index

    def fetch(self, isolation: str, start: int, lso_inclusive: bool = False) -> list[int]:
        """The data offsets >= ``start`` a consumer with ``isolation`` is given."""
        data = [i for i, e in enumerate(self.entries) if e.kind == "data" and i >= start]
        if isolation == "read_uncommitted":
            return data
        lso = self.lso()
        aborted = self.aborted_index()
        return [
            i
            for i in data
            if (i <= lso if lso_inclusive else i < lso)
            and not any(pid == self.entries[i].pid and a <= i <= b for pid, a, b in aborted)
        ]
