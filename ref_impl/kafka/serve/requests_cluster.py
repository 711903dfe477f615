"""The requests a client sends before any transaction: ApiVersions, Metadata, CreateTopics, FindCoordinator."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin.topics import CreateTopicsResponse
from kafka.protocol.metadata.find_coordinator import FindCoordinatorResponse
from kafka.protocol.metadata.metadata import MetadataResponse

from . import wire
from .translate import CLUSTER_ID, ERRORS, NODE_ID, BrokerCore, valid_topic


class ClusterRequests(BrokerCore):
    """ApiVersions, Metadata, CreateTopics and FindCoordinator: the broker, its topics and who coordinates."""

    def on_api_versions(self, req: wire.Request, body: Any) -> Any:
        # a Kafka 4 broker finalizes transaction.version 2 when TV2 is on: clients then use it
        return wire.api_versions_response(req, features={"transaction.version": 2} if self.c.k.tv2 else None)

    def on_metadata(self, req: wire.Request, body: Any) -> Any:
        names = None if body.topics is None else [t.name for t in body.topics]
        allow = req.api_version < 4 or bool(body.allow_auto_topic_creation)
        R = MetadataResponse
        topics = []
        for name in (sorted(self.topics) if names is None else names):
            if name not in self.topics and allow:
                self.partition(name, 0)
            parts = self.topics.get(name)
            if parts is None:
                topics.append(R.MetadataResponseTopic(error_code=ERRORS["UNKNOWN_TOPIC_OR_PARTITION"], name=name,
                                                       is_internal=False, partitions=[]))
                continue
            topics.append(R.MetadataResponseTopic(
                error_code=0, name=name, is_internal=False,
                partitions=[R.MetadataResponseTopic.MetadataResponsePartition(
                    error_code=0, partition_index=i, leader_id=NODE_ID, leader_epoch=0, replica_nodes=[NODE_ID],
                    isr_nodes=[NODE_ID], offline_replicas=[]) for i in range(len(parts))]))
        return R(throttle_time_ms=0, brokers=[R.MetadataResponseBroker(node_id=NODE_ID, host=self.host, port=self.port, rack=None)],
                 cluster_id=CLUSTER_ID, controller_id=NODE_ID, topics=topics)

    def on_create_topics(self, req: wire.Request, body: Any) -> Any:
        R = CreateTopicsResponse
        out = []
        for t in body.topics:
            n = self.default_partitions if t.num_partitions == -1 else t.num_partitions
            if t.name in self.topics:
                err, msg = ERRORS["TOPIC_ALREADY_EXISTS"], f"Topic '{t.name}' already exists."
            elif n < 1 or not valid_topic(t.name):
                err, msg = ERRORS["INVALID_PARTITIONS" if n < 1 else "INVALID_REQUEST"], "invalid topic"
            else:
                if not body.validate_only:
                    self.create_topic(t.name, n)
                err, msg = 0, None
            out.append(R.CreatableTopicResult(name=t.name, error_code=err, error_message=msg, num_partitions=n,
                                              replication_factor=1, configs=[]))
        return R(throttle_time_ms=0, topics=out)

    def on_find_coordinator(self, req: wire.Request, body: Any) -> Any:
        keys = list(body.coordinator_keys) if req.api_version >= 4 else [body.key]
        if body.key_type == 1:
            for key in keys:
                if key:
                    self.txn_id(key)
        R = FindCoordinatorResponse
        if req.api_version >= 4:
            return R(throttle_time_ms=0, coordinators=[
                R.Coordinator(key=key, node_id=NODE_ID, host=self.host, port=self.port, error_code=0, error_message=None)
                for key in keys])
        return R(throttle_time_ms=0, error_code=0, error_message=None, node_id=NODE_ID, host=self.host, port=self.port)
