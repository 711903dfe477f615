"""The constants of a run: the spec's CONSTANTS, which a trace's header records for the checker."""

from __future__ import annotations

from typing import Any

import attrs

BUGS = ("no_epoch_bump", "no_idempotence", "no_pending_check", "lso_inclusive", "no_generation_check",
        "restart_forgets_producers", "tv2_endtxn_before_4_0", "early_producer_expiry",
        "append_fail_keeps_pending", "tv2_overflow_wrong_pid", "fence_no_rotation", "fence_bump_on_failed_append",
        "verify_checks_pending", "no_lowest_sequence")
# Short.MaxValue: Kafka's bound on producer epochs (KafkaTxn: MaxEpoch).
SHORT_MAX = 32767
LATE_REQUEST_TYPES = ("InitProducerId", "AddPartitionsToTxn", "Produce", "EndTxn")
# TV1, TV1 clients with KIP-890 part 1 verification at the leaders, TV2 (KIP-890 part 2).
VERSIONS = ("TV1", "TV1V", "TV2")


def _sorted_tuple(values: Any) -> tuple[Any, ...]:
    return tuple(sorted(values))


@attrs.frozen
class Constants:
    txn_ids: tuple[str, ...] = attrs.field(default=("t1",), converter=_sorted_tuple)
    num_instances: int = 2
    num_partitions: int = 2
    txns_per_instance: int = 2
    version: str = attrs.field(default="TV2", validator=attrs.validators.in_(VERSIONS))
    late_requests: tuple[str, ...] = attrs.field(default=(), converter=_sorted_tuple)
    max_retries: int = 0
    max_loss: int = 0
    max_failovers: int = 0
    app_aborts: bool = False
    produce_timeouts: bool = False
    max_hangs: int = 0
    input_size: int = 0
    leader_restarts: bool = False
    txn_timeouts: bool = False
    producer_expiry: bool = False
    max_append_fails: int = 0
    max_epoch: int = attrs.field(default=SHORT_MAX, validator=attrs.validators.ge(2))
    unclean_elections: bool = False
    # max.in.flight.requests.per.connection (at most 5 with idempotence) and batches per partition
    # per transaction (KafkaTxn: MaxInFlight, Batches).
    max_in_flight: int = attrs.field(default=1, validator=[attrs.validators.ge(1), attrs.validators.le(5)])
    batches: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    # KIP-360 clients: an abortable error makes a TV1 client bump its epoch after the abort.
    client_bumps: bool = False
    # Real clients, served by txconform serve (KafkaTxn: OpenClients): the spec's client program is not theirs.
    open_clients: bool = False
    bugs: tuple[str, ...] = attrs.field(default=(), converter=_sorted_tuple)

    def __attrs_post_init__(self) -> None:
        for b in self.bugs:
            if b not in BUGS:
                raise ValueError(f"unknown bug {b!r}; the bug zoo has: {', '.join(BUGS)}")
        for r in self.late_requests:
            if r not in LATE_REQUEST_TYPES:
                raise ValueError(f"late_requests: {r!r} is not one of {', '.join(LATE_REQUEST_TYPES)}")
        if self.client_bumps and self.num_instances != 1:
            raise ValueError("client_bumps: the KIP-360 bump is modelled for one instance per transactional.id "
                             "(a zombie's bump is not); use num_instances = 1")
        if self.open_clients and self.client_bumps:
            raise ValueError("open_clients: real clients bump as they do; client_bumps describes the spec's own clients")
        if self.pipelined and (self.produce_timeouts or "Produce" in self.late_requests):
            raise ValueError("max_in_flight > 1: produce requests neither time out nor arrive late "
                             "(drop produce timeouts and the late Produce, or use max_in_flight = 1)")

    @property
    def kip_bump(self) -> bool:
        """An abortable error asks for a KIP-360 epoch bump (TV2 clients bump with EndTxn) (KipBump)."""
        return self.client_bumps and not self.tv2

    @property
    def pipelined(self) -> bool:
        """Produce requests are pipelined, up to max_in_flight per connection (KafkaTxn: Pipelined)."""
        return self.max_in_flight > 1

    @property
    def tv2(self) -> bool:
        return self.version == "TV2"

    @property
    def verifies(self) -> bool:
        """Leaders verify a producer's first transactional append to a partition, and the group
        coordinator its TxnOffsetCommit (KIP-890)."""
        return self.version in ("TV1V", "TV2")

    @property
    def ctp(self) -> bool:
        return self.input_size > 0

    def bug(self, name: str) -> bool:
        return name in self.bugs

    # Producer ids and epochs (KafkaTxn: Span, EpochOf, PidOf, Exhausted, NewPid, FenceEpoch): the
    # engine keeps a producer's id and epoch as one generation g = id * (max_epoch + 1) + epoch,
    # with the ids of a transactional.id numbered 0, 1, ...; -1 is no producer yet.
    @property
    def span(self) -> int:
        return self.max_epoch + 1

    def epoch_of(self, g: int) -> int:
        return g if g < 0 else g % self.span

    def pid_of(self, g: int) -> int:
        return -1 if g < 0 else g // self.span

    def exhausted(self, g: int) -> bool:
        """No client may hold max_epoch: from max_epoch - 1 on, a new producer id (isEpochExhausted)."""
        return g >= 0 and self.epoch_of(g) >= self.max_epoch - 1

    def new_pid(self, g: int) -> int:
        return (self.pid_of(g) + 1) * self.span

    def fence_epoch(self, g: int) -> int:
        """A fence's epoch: one bump, two under TV2, never past max_epoch (KAFKA-19367, KAFKA-20090)."""
        k = 2 if self.tv2 else 1
        return self.pid_of(g) * self.span + self.max_epoch if self.epoch_of(g) + k > self.max_epoch else g + k

    def fenced_error(self, e: int, c: int) -> str:
        return "INVALID_PRODUCER_ID_MAPPING" if self.pid_of(e) != self.pid_of(c) else "PRODUCER_FENCED"

    def to_spec(self, bugs: bool = True) -> dict[str, Any]:
        """The spec's constants (registry form: lists are sets)."""
        return {
            "TxnIds": list(self.txn_ids),
            "NumInstances": self.num_instances,
            "NumPartitions": self.num_partitions,
            "TxnsPerInstance": self.txns_per_instance,
            "Version": self.version,
            "LateRequests": list(self.late_requests),
            "MaxRetries": self.max_retries,
            "MaxLoss": self.max_loss,
            "MaxFailovers": self.max_failovers,
            "AppAborts": self.app_aborts,
            "ProduceTimeouts": self.produce_timeouts,
            "MaxHangs": self.max_hangs,
            "InputSize": self.input_size,
            "LeaderRestarts": self.leader_restarts,
            "TxnTimeouts": self.txn_timeouts,
            "ProducerExpiry": self.producer_expiry,
            "MaxAppendFails": self.max_append_fails,
            "MaxEpoch": self.max_epoch,
            "UncleanElections": self.unclean_elections,
            "MaxInFlight": self.max_in_flight,
            "Batches": self.batches,
            "ClientBumps": self.client_bumps,
            "OpenClients": self.open_clients,
            "Bugs": list(self.bugs) if bugs else [],
        }

    @classmethod
    def from_spec(cls, d: dict[str, Any]) -> Constants:
        return cls(
            txn_ids=d["TxnIds"],
            num_instances=d["NumInstances"],
            num_partitions=d["NumPartitions"],
            txns_per_instance=d["TxnsPerInstance"],
            version=d["Version"],
            late_requests=d["LateRequests"],
            max_retries=d["MaxRetries"],
            max_loss=d["MaxLoss"],
            max_failovers=d["MaxFailovers"],
            app_aborts=d["AppAborts"],
            produce_timeouts=d["ProduceTimeouts"],
            max_hangs=d["MaxHangs"],
            input_size=d["InputSize"],
            leader_restarts=d.get("LeaderRestarts", False),  # traces made before restarts existed
            txn_timeouts=d.get("TxnTimeouts", False),  # traces made before timeouts existed
            producer_expiry=d.get("ProducerExpiry", False),  # ... and before producer expiry
            max_append_fails=d.get("MaxAppendFails", 0),  # ... and before failed appends
            max_epoch=d.get("MaxEpoch", SHORT_MAX),  # ... and before the epoch bound
            unclean_elections=d.get("UncleanElections", False),  # ... and before replication
            max_in_flight=d.get("MaxInFlight", 1),  # ... and before pipelining
            batches=d.get("Batches", 1),
            client_bumps=d.get("ClientBumps", False),  # ... and before KIP-360 clients
            open_clients=d.get("OpenClients", False),  # ... and before txconform serve
            bugs=d.get("Bugs", ()),
        )

    # The client program of one transaction (KafkaTxn: FirstPc, EndPc, ...).
    @property
    def first_pc(self) -> int:
        return 2 if self.tv2 else 1

    @property
    def last_produce_pc(self) -> int:
        return self.num_partitions * self.batches + 1

    @property
    def add_offsets_pc(self) -> int:
        """AddOffsetsToTxn (CTP, TV1 and TV1V only: a TV2 client sends TxnOffsetCommit at once)."""
        return self.last_produce_pc + 1

    @property
    def offset_commit_pc(self) -> int:
        return self.last_produce_pc + (1 if self.tv2 else 2)

    @property
    def end_pc(self) -> int:
        return self.offset_commit_pc + 1 if self.ctp else self.last_produce_pc + 1

    def is_produce_pc(self, pc: int) -> bool:
        return 2 <= pc <= self.last_produce_pc

    def part_of_pc(self, pc: int) -> int:
        """The partition a produce step writes to: ``batches`` batches to partition 1, then to 2, ..."""
        return (pc - 2) // self.batches + 1

    def batch_of_pc(self, pc: int) -> int:
        """Which of its partition's batches (0-based) a produce step sends."""
        return (pc - 2) % self.batches
