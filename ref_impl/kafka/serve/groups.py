"""Consumer groups for txconform serve: what a consumer needs to join a group, get an assignment,
commit and fetch offsets (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit, OffsetFetch).

This is the classic group protocol of Kafka's GroupCoordinator (core/src/main/scala/kafka/
coordinator/group/GroupCoordinator.scala, now group-coordinator/.../classic/ClassicGroup.java),
kept small: a JoinGroup completes at once (no waiting for the other members: a member that joined
earlier learns of the new generation from its Heartbeat, REBALANCE_IN_PROGRESS, and joins again),
the first member to join a generation is its leader, and SyncGroup hands out what the leader
assigned (a follower that syncs before the leader is told REBALANCE_IN_PROGRESS and joins again).
Session timeouts are not enforced. Groups are outside the spec (KafkaTxn models one application
group abstractly): the transactional offsets a producer commits are kept pending here until the
spec's GcMarker commits or drops them (``ServeBroker``), and OffsetFetch with require_stable
answers UNSTABLE_OFFSET_COMMIT while a partition of the group has offsets pending (KIP-447).
"""

from __future__ import annotations

import itertools

import attrs

TopicPartition = tuple[str, int]
# Kafka's error codes (clients/src/main/java/org/apache/kafka/common/protocol/Errors.java)
NONE, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, REBALANCE_IN_PROGRESS = 0, 22, 25, 27


@attrs.define
class ConsumerGroup:
    group_id: str
    generation: int = 0
    members: dict[str, bytes] = attrs.field(factory=dict)  # member id -> its protocol metadata
    protocol_type: str = "consumer"
    protocol: str | None = None
    leader: str | None = None
    assignments: dict[str, bytes] = attrs.field(factory=dict)  # of the current generation, once synced
    synced: bool = False
    committed: dict[TopicPartition, int] = attrs.field(factory=dict)


class Groups:
    """Every consumer group of one serving broker."""

    def __init__(self) -> None:
        self.groups: dict[str, ConsumerGroup] = {}
        self._ids = itertools.count(1)
        # transactional offsets not yet decided: transactional.id -> group -> partition -> offset
        self.pending: dict[str, dict[str, dict[TopicPartition, int]]] = {}

    def group(self, group_id: str) -> ConsumerGroup:
        return self.groups.setdefault(group_id, ConsumerGroup(group_id))

    def join(self, group_id: str, member_id: str, protocol_type: str,
             protocols: list[tuple[str, bytes]]) -> tuple[int, ConsumerGroup, str]:
        """(error, group, member id): a new member, or a known one joining again, starts a new
        generation unless it is already in the current one with the same metadata."""
        g = self.group(group_id)
        if member_id and member_id not in g.members:
            return UNKNOWN_MEMBER_ID, g, member_id
        if not member_id:
            member_id = f"txconform-{next(self._ids)}"
        name, metadata = protocols[0] if protocols else ("range", b"")
        if g.members.get(member_id) != metadata or g.protocol is None:
            g.members[member_id] = metadata
            self._new_generation(g)
            g.protocol_type, g.protocol = protocol_type, name
            g.leader = member_id
        elif g.leader not in g.members:
            g.leader = member_id
        return NONE, g, member_id

    def _new_generation(self, g: ConsumerGroup) -> None:
        g.generation += 1
        g.assignments, g.synced, g.leader = {}, False, None

    def sync(self, group_id: str, generation: int, member_id: str, assignments: dict[str, bytes]) -> tuple[int, bytes]:
        g = self.group(group_id)
        err = self.check(group_id, generation, member_id)
        if err:
            return err, b""
        if member_id == g.leader:
            g.assignments, g.synced = dict(assignments), True
        if not g.synced:
            return REBALANCE_IN_PROGRESS, b""
        return NONE, g.assignments.get(member_id, b"")

    def check(self, group_id: str, generation: int, member_id: str) -> int:
        """Is (generation, member) current? Generation -1: a standalone consumer, not checked."""
        g = self.group(group_id)
        if generation == -1 and not member_id:
            return NONE
        if member_id not in g.members:
            return UNKNOWN_MEMBER_ID
        if generation != g.generation:
            return ILLEGAL_GENERATION
        return NONE

    def heartbeat(self, group_id: str, generation: int, member_id: str) -> int:
        err = self.check(group_id, generation, member_id)
        if err == ILLEGAL_GENERATION:
            return REBALANCE_IN_PROGRESS  # the member must join the new generation
        return err

    def leave(self, group_id: str, member_id: str) -> int:
        g = self.group(group_id)
        if member_id not in g.members:
            return UNKNOWN_MEMBER_ID
        del g.members[member_id]
        self._new_generation(g)
        return NONE

    def commit(self, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        self.group(group_id).committed.update(offsets)

    def unstable(self, group_id: str, tp: TopicPartition) -> bool:
        """Offsets of some producer's undecided transaction are pending for tp (require_stable)."""
        return any(tp in by_group.get(group_id, {}) for by_group in self.pending.values())

    # --- transactional offsets: pending until the spec's GcMarker decides ---

    def add_pending(self, txn_id: str, group_id: str, offsets: dict[TopicPartition, int]) -> None:
        self.pending.setdefault(txn_id, {}).setdefault(group_id, {}).update(offsets)

    def decide(self, txn_id: str, commit: bool) -> None:
        """The marker on the offsets partition: commit the producer's pending offsets, or drop them."""
        for group_id, offsets in self.pending.pop(txn_id, {}).items():
            if commit:
                self.commit(group_id, offsets)
