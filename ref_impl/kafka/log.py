"""A partition log and what it means to readers (specs/kafka/KafkaLog.tla).

Entries are record batches (one per Produce) and COMMIT/ABORT control markers; the offset of entry
``i`` (0-based here, as in Kafka) is its position. A marker of producer P closes P's records written
since P's previous marker on the partition.
"""

from __future__ import annotations

import bisect
from typing import Any

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
    records: tuple[Any, ...] = ()  # the batch's values (the spec abstracts payloads)


@attrs.define
class PartitionLog:
    """Entries change only through ``append`` and ``truncate``: what a reader asks of the log (its
    LSO, the aborted ranges) is kept as entries come, not found by reading the whole log at every
    fetch (at a million events, a fetch's cost grew with the log and a run with its square)."""

    entries: list[Entry] = attrs.field(factory=list)
    # Each producer's first entry since its last marker (its open transaction), and every ABORT
    # marker that closed records, as (producer, first offset, marker offset): in the log's order,
    # and by producer (ascending, as a producer's ranges do not overlap).
    _open: dict[str, int] = attrs.field(init=False, factory=dict, eq=False, repr=False)
    _aborted: list[tuple[str, int, int]] = attrs.field(init=False, factory=list, eq=False, repr=False)
    _aborted_by: dict[str, tuple[list[int], list[int]]] = attrs.field(init=False, factory=dict, eq=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self._reindex()

    def _reindex(self) -> None:
        self._open, self._aborted, self._aborted_by = {}, [], {}
        for i, e in enumerate(self.entries):
            self._note(i, e)

    def _note(self, i: int, e: Entry) -> None:
        if e.kind == "data":
            self._open.setdefault(e.pid, i)
            return
        start = self._open.pop(e.pid, None)
        if not e.commit and start is not None:
            self._aborted.append((e.pid, start, i))
            starts, ends = self._aborted_by.setdefault(e.pid, ([], []))
            starts.append(start)
            ends.append(i)

    def __len__(self) -> int:
        return len(self.entries)

    def append(self, entry: Entry) -> int:
        self.entries.append(entry)
        self._note(len(self.entries) - 1, entry)
        return len(self.entries) - 1

    def truncate(self, length: int) -> None:
        """Cut the log back to its first ``length`` entries (an unclean election)."""
        del self.entries[length:]
        self._reindex()

    def closer_of(self, i: int) -> int | None:
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
        return min(self._open.values(), default=len(self.entries))

    def aborted_index(self) -> list[tuple[str, int, int]]:
        """(producer, first offset, marker offset) for every ABORT marker that closed records."""
        return list(self._aborted)

    def aborted(self, i: int) -> bool:
        """Is data entry ``i`` among records an ABORT marker closed?"""
        ranges = self._aborted_by.get(self.entries[i].pid)
        if ranges is None:
            return False
        starts, ends = ranges
        k = bisect.bisect_right(starts, i) - 1
        return k >= 0 and i <= ends[k]

    def fetch(self, isolation: str, start: int, lso_inclusive: bool = False) -> list[int]:
        """The data offsets >= ``start`` a consumer with ``isolation`` is given."""
        data = [i for i in range(max(start, 0), len(self.entries)) if self.entries[i].kind == "data"]
        if isolation == "read_uncommitted":
            return data
        lso = self.lso()
        return [i for i in data if (i <= lso if lso_inclusive else i < lso) and not self.aborted(i)]
