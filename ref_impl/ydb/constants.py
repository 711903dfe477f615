"""The constants of a run: the spec's CONSTANTS (YdbTopics and YdbTopicsProperties), which a
trace's header records so that the checker runs the spec with exactly the run's bounds."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

# The spec's BugNames, each switching on one naive design or real bug of the engine.
BUGS = (
    "no_offset_check",
    "overlap_check",
    "no_gap_check",
    "no_reread",
    "no_consumer_block",
    "visible_before_commit",
    "independent_decision",
    "partition_reapply",
    "lock_race",
    "ack_rs_before_persist",
    "ack_plan_on_receipt",
    "no_flush",
    "rollback_while_committing",
    "no_seqno_check",
    "no_producer_block",
    "immediate_no_offset_check",
    "participants_from_offsets",
    "seqno_ignores_plain",
    "no_write_dedup",
    "no_table_lock",
    "range_gap_accepted",
    "split_ignored",
    "seqno_first_source",
    "plain_no_dedup",
    "first_range_only",
    "commit_dead_session",
    "commit_unblocked",
)
VERSIONS = ("v25", "v26")
PRODUCERS = ("none", "partition")
# The spec's TxShapes: copy (read a batch of A, write it to B), read (read-only), write (write-only).
SHAPES = ("copy", "read", "write")
DEPTH_BOUND = 6  # the registry's base value; the trace checker does not check the depth


def producer(g: int) -> int:
    """Producer(g): writer g of a write-only transaction writes as producer 0, -2, -3, ..."""
    return 0 if g == 0 else -1 - g


def other_producer(k: int, tx_writers: int) -> int:
    """Other(k): the k-th producer that writes only outside transactions: -1 (OtherProducer), then
    below the writers' ids."""
    return -1 if k == 0 else -1 - tx_writers - k


def _sorted_tuple(values: Any) -> tuple[str, ...]:
    return tuple(sorted(values))


@attrs.frozen
class Constants:
    workers: tuple[str, ...] = attrs.field(default=("w1", "w2"), converter=_sorted_tuple)
    num_src: int = 1
    num_dst: int = 1
    msgs_per_src: int = 4
    batch_max: int = 2
    max_txns: int = 4
    table: bool = False
    rollbacks: bool = False
    shapes: tuple[str, ...] = attrs.field(default=("copy",), converter=_sorted_tuple)
    producers: str = attrs.field(default="none", validator=attrs.validators.in_(PRODUCERS))
    version: str = attrs.field(default="v26", validator=attrs.validators.in_(VERSIONS))
    max_hangs: int = 0
    max_restarts: int = 0
    max_loss: int = 0
    max_lock_losses: int = 0
    max_deadlines: int = 0
    max_non_tx_writes: int = 0
    max_reconnects: int = 0
    max_ranges: int = 0
    max_reads: int = 1
    max_other_writes: int = 0
    max_splits: int = 0
    force_closes: bool = False
    tx_writers: int = 1
    max_plain_writes: int = 0
    max_parts_read: int = 1
    others: int = 1
    max_plain_commits: int = 0
    bugs: tuple[str, ...] = attrs.field(default=(), converter=_sorted_tuple)
    depth_bound: int = DEPTH_BOUND

    def __attrs_post_init__(self) -> None:
        for b in self.bugs:
            if b not in BUGS:
                raise ValueError(f"unknown bug {b!r}; the spec's Bugs are {', '.join(BUGS)}")
        for sh in self.shapes:
            if sh not in SHAPES:
                raise ValueError(f"unknown shape {sh!r}; the spec's TxShapes are drawn from {', '.join(SHAPES)}")
        if not self.shapes:
            raise ValueError("TxShapes must not be empty")
        if (not self.workers or self.num_src < 1 or self.num_dst < 1 or self.batch_max < 1 or self.max_reads < 1
                or self.tx_writers < 1):
            raise ValueError("Workers must not be empty; NumSrc, NumDst, BatchMax, MaxReads and TxWriters must be at least 1")
        if self.others < 1:
            raise ValueError("Others must be at least 1 (the other producer)")
        if self.max_parts_read not in (1, 2):
            raise ValueError("MaxPartsRead must be 1 or 2 (a transaction reads one partition of A, or two)")

    def bug(self, name: str) -> bool:
        return name in self.bugs

    # --- the spec's derived sets, in a fixed order ---

    @property
    def src_parts(self) -> range:
        return range(1, self.num_src + 1)

    @property
    def dst_parts(self) -> range:
        return range(1, self.num_dst + 1)

    @property
    def txns(self) -> range:
        return range(1, self.max_txns + 1)

    @property
    def part_ids(self) -> range:
        return range(1, max(self.num_src, self.num_dst) + 1)

    @property
    def tablets(self) -> tuple[str, ...]:
        return ("A", "B", "DS") if self.table else ("A", "B")

    @property
    def writers(self) -> range:
        """Writers: the writers of a write-only transaction, 0..TxWriters-1."""
        return range(self.tx_writers)

    @property
    def plain_producers(self) -> tuple[int, ...]:
        """PlainProducers: the writers' producers (0, -2, ...) and the others (-1, then below the
        writers' ids); with Producers = "none" (a transaction's writer a producer of its own) only
        the others."""
        if self.producers != "partition":
            return self.other_ids
        return (*(producer(g) for g in self.writers), *self.other_ids)

    def free_plain_producer(self, taken: Iterable[int]) -> int | None:
        """The first of PlainProducers not in ``taken`` (a client's producer id gets one), or None."""
        used = set(taken)
        return next((q for q in self.plain_producers if q not in used), None)

    @property
    def other_ids(self) -> tuple[int, ...]:
        """OtherIds: the producers that write only outside transactions."""
        return tuple(other_producer(k, self.tx_writers) for k in range(self.others))

    @property
    def app_offsets(self) -> range:
        """AppOffsets: the SeqNo - 1 of the application's own messages."""
        return range(self.max_txns * self.batch_max + self.max_non_tx_writes + self.max_other_writes
                     + self.max_plain_writes)

    def dest(self, p: int, o: int) -> int:
        """Routing by key (KeyOf(p, o) = p + o), as in Resharding.tla."""
        return ((p + o) % self.num_dst) + 1

    # --- the header ---

    def to_spec(self) -> dict[str, Any]:
        """The spec's constants (registry form: lists are sets)."""
        return {
            "Workers": list(self.workers),
            "NumSrc": self.num_src,
            "NumDst": self.num_dst,
            "MsgsPerSrc": self.msgs_per_src,
            "BatchMax": self.batch_max,
            "MaxTxns": self.max_txns,
            "Table": self.table,
            "Rollbacks": self.rollbacks,
            "TxShapes": list(self.shapes),
            "Producers": self.producers,
            "Version": self.version,
            "MaxHangs": self.max_hangs,
            "MaxRestarts": self.max_restarts,
            "MaxLoss": self.max_loss,
            "MaxLockLosses": self.max_lock_losses,
            "MaxDeadlines": self.max_deadlines,
            "MaxNonTxWrites": self.max_non_tx_writes,
            "MaxReconnects": self.max_reconnects,
            "Bugs": list(self.bugs),
            "DepthBound": self.depth_bound,
            # written only when a run names ranges of its own, so that older runs keep their headers
            **({"MaxRanges": self.max_ranges} if self.max_ranges else {}),
            **({"MaxReads": self.max_reads} if self.max_reads != 1 else {}),
            **({"MaxOtherWrites": self.max_other_writes} if self.max_other_writes else {}),
            **({"MaxSplits": self.max_splits} if self.max_splits else {}),
            **({"ForceCloses": True} if self.force_closes else {}),
            **({"TxWriters": self.tx_writers} if self.tx_writers != 1 else {}),
            **({"MaxPlainWrites": self.max_plain_writes} if self.max_plain_writes else {}),
            **({"MaxPartsRead": self.max_parts_read} if self.max_parts_read != 1 else {}),
            **({"Others": self.others} if self.others != 1 else {}),
            **({"MaxPlainCommits": self.max_plain_commits} if self.max_plain_commits else {}),
        }

    @classmethod
    def from_spec(cls, k: dict[str, Any]) -> Constants:
        return cls(
            workers=tuple(k["Workers"]),
            num_src=k["NumSrc"],
            num_dst=k["NumDst"],
            msgs_per_src=k["MsgsPerSrc"],
            batch_max=k["BatchMax"],
            max_txns=k["MaxTxns"],
            table=k["Table"],
            rollbacks=k.get("Rollbacks", False),
            shapes=tuple(k.get("TxShapes", ("copy",))),
            producers=k.get("Producers", "none"),
            version=k["Version"],
            max_hangs=k["MaxHangs"],
            max_restarts=k["MaxRestarts"],
            max_loss=k["MaxLoss"],
            max_lock_losses=k["MaxLockLosses"],
            max_deadlines=k["MaxDeadlines"],
            max_non_tx_writes=k.get("MaxNonTxWrites", 0),
            max_reconnects=k.get("MaxReconnects", 0),
            max_ranges=k.get("MaxRanges", 0),
            max_reads=k.get("MaxReads", 1),
            max_other_writes=k.get("MaxOtherWrites", 0),
            max_splits=k.get("MaxSplits", 0),
            force_closes=k.get("ForceCloses", False),
            tx_writers=k.get("TxWriters", 1),
            max_plain_writes=k.get("MaxPlainWrites", 0),
            max_parts_read=k.get("MaxPartsRead", 1),
            others=k.get("Others", 1),
            max_plain_commits=k.get("MaxPlainCommits", 0),
            bugs=tuple(k.get("Bugs", ())),
            depth_bound=k.get("DepthBound", DEPTH_BOUND),
        )
