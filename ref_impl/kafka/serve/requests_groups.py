"""Consumer groups' requests (outside the spec; the state is ``groups.Groups``): JoinGroup, SyncGroup,
Heartbeat, LeaveGroup, DescribeGroups, OffsetCommit, OffsetFetch."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import DescribeGroupsResponse
from kafka.protocol.consumer.group import HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse, OffsetCommitResponse, OffsetFetchResponse, SyncGroupResponse

from . import wire
from .translate import ERRORS, BrokerCore


class GroupRequests(BrokerCore):
    """The classic group protocol's requests over ``groups.Groups``; transactional offsets wait for the spec's GcMarker."""

    # --- consumer groups (outside the spec) ---

    def on_join_group(self, req: wire.Request, body: Any) -> Any:
        R = JoinGroupResponse
        protocols = [(pr.name, bytes(pr.metadata)) for pr in body.protocols]
        err, g, member = self.groups.join(body.group_id, body.member_id or "", body.protocol_type, protocols)
        members = []
        if err == 0 and member == g.leader:
            members = [R.JoinGroupResponseMember(member_id=m, group_instance_id=None, metadata=md) for m, md in g.members.items()]
        return R(throttle_time_ms=0, error_code=err, generation_id=g.generation if err == 0 else -1,
                 protocol_type=g.protocol_type, protocol_name=g.protocol, leader=g.leader or "", skip_assignment=False,
                 member_id=member, members=members)

    def on_sync_group(self, req: wire.Request, body: Any) -> Any:
        assignments = {a.member_id: bytes(a.assignment) for a in body.assignments}
        err, assignment = self.groups.sync(body.group_id, body.generation_id, body.member_id, assignments)
        g = self.groups.group(body.group_id)
        return SyncGroupResponse(throttle_time_ms=0, error_code=err, protocol_type=g.protocol_type, protocol_name=g.protocol,
                                 assignment=assignment)

    def on_heartbeat(self, req: wire.Request, body: Any) -> Any:
        return HeartbeatResponse(throttle_time_ms=0, error_code=self.groups.heartbeat(body.group_id, body.generation_id, body.member_id))

    def on_leave_group(self, req: wire.Request, body: Any) -> Any:
        R = LeaveGroupResponse
        if req.api_version >= 3:
            results = [R.MemberResponse(member_id=m.member_id, group_instance_id=m.group_instance_id,
                                        error_code=self.groups.leave(body.group_id, m.member_id)) for m in body.members]
            return R(throttle_time_ms=0, error_code=0, members=results)
        return R(throttle_time_ms=0, error_code=self.groups.leave(body.group_id, body.member_id))

    def on_describe_groups(self, req: wire.Request, body: Any) -> Any:
        R = DescribeGroupsResponse
        G = R.DescribedGroup
        out = []
        for group_id in body.groups:
            g = self.groups.groups.get(group_id)
            if g is None:
                out.append(G(error_code=0, error_message=None, group_id=group_id, group_state="Dead", protocol_type="",
                             protocol_data="", members=[], authorized_operations=None))
                continue
            state = "Stable" if g.synced else "CompletingRebalance" if g.members else "Empty"
            members = [G.DescribedGroupMember(member_id=m, group_instance_id=None, client_id="", client_host="",
                                              member_metadata=md, member_assignment=g.assignments.get(m, b""))
                       for m, md in g.members.items()]
            out.append(G(error_code=0, error_message=None, group_id=group_id, group_state=state, protocol_type=g.protocol_type,
                         protocol_data=g.protocol or "", members=members, authorized_operations=None))
        return R(throttle_time_ms=0, groups=out)

    def on_offset_commit(self, req: wire.Request, body: Any) -> Any:
        R = OffsetCommitResponse
        TR = R.OffsetCommitResponseTopic
        PR = TR.OffsetCommitResponsePartition
        err = self.groups.check(body.group_id, body.generation_id_or_member_epoch, body.member_id or "")
        topics = []
        for t in body.topics:
            out = []
            for q in t.partitions:
                code = err
                if code == 0 and self.partition(t.name, q.partition_index, create=False) is None:
                    code = ERRORS["UNKNOWN_TOPIC_OR_PARTITION"]
                if code == 0:
                    self.groups.commit(body.group_id, {(t.name, q.partition_index): q.committed_offset})
                out.append(PR(partition_index=q.partition_index, error_code=code))
            topics.append(TR(name=t.name, partitions=out))
        return R(throttle_time_ms=0, topics=topics)

    def on_offset_fetch(self, req: wire.Request, body: Any) -> Any:
        R = OffsetFetchResponse
        stable = req.api_version >= 7 and bool(body.require_stable)
        if req.api_version >= 8:
            groups = []
            for rg in body.groups:
                topics = self._fetched_offsets(rg.group_id, rg.topics, stable, R.OffsetFetchResponseGroup.OffsetFetchResponseTopics)
                groups.append(R.OffsetFetchResponseGroup(group_id=rg.group_id, topics=topics, error_code=0))
            return R(throttle_time_ms=0, groups=groups)
        topics = self._fetched_offsets(body.group_id, body.topics, stable, R.OffsetFetchResponseTopic)
        return R(throttle_time_ms=0, topics=topics, error_code=0)

    def _fetched_offsets(self, group_id: str, wanted: Any, stable: bool, TR: Any) -> list[Any]:
        PR = TR.OffsetFetchResponsePartitions if hasattr(TR, "OffsetFetchResponsePartitions") else TR.OffsetFetchResponsePartition
        g = self.groups.group(group_id)
        if wanted is None:  # every partition the group committed
            by_topic: dict[str, list[int]] = {}
            for (name, index) in sorted(g.committed):
                by_topic.setdefault(name, []).append(index)
            pairs = list(by_topic.items())
        else:
            pairs = [(t.name, list(t.partition_indexes)) for t in wanted]
        out = []
        for name, indexes in pairs:
            parts = []
            for i in indexes:
                code = ERRORS["UNSTABLE_OFFSET_COMMIT"] if stable and self.groups.unstable(group_id, (name, i)) else 0
                off = g.committed.get((name, i), -1) if code == 0 else -1
                parts.append(PR(partition_index=i, committed_offset=off, committed_leader_epoch=-1, metadata="", error_code=code))
            out.append(TR(name=name, partitions=parts))
        return out
