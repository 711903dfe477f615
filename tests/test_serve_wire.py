"""ref_impl.kafka.serve.wire: requests as clients encode them decode, responses decode as clients
decode them (kafka-python's KafkaProtocol, librdkafka), malformed input is a WireError, and record
batches read, rebase and build as Kafka's DefaultRecordBatch does."""

from __future__ import annotations

import contextlib
import gc
import socket
import struct
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.protocol.admin import CreateTopicsRequest as CreateTopicsReq
from kafka.protocol.admin import CreateTopicsResponse as CreateTopicsResp
from kafka.protocol.admin import DescribeGroupsRequest as DescribeGroupsReq
from kafka.protocol.admin import DescribeGroupsResponse as DescribeGroupsResp
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.parser import KafkaProtocol
from kafka.protocol.producer import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    EndTxnRequest,
    EndTxnResponse,
    InitProducerIdRequest,
    InitProducerIdResponse,
    ProduceRequest,
    ProduceResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
)
from kafka.record.default_records import ControlRecord, DefaultRecordBatch, DefaultRecordBatchBuilder
from kafka.record.legacy_records import LegacyRecordBatchBuilder
from kafka.record.util import calc_crc32c

from ref_impl.kafka.serve.wire import (
    SUPPORTED,
    Request,
    UnsupportedRequest,
    WireError,
    api_versions_response,
    control_batch,
    data_records,
    decode_request,
    encode_response,
    error_response,
    parse_batches,
    rebase,
    response_class,
)

PID, EPOCH, SEQ = 4294968296, 3, 5
RECORDS = [(1000, b"k0", b"v0"), (1001, None, b"v1"), (1005, b"k2", None)]


def txn_batch(compression: int = 0, records: list[tuple[int, bytes | None, bytes | None]] = RECORDS) -> bytes:
    """A transactional batch as a producer sends it (base offset 0)."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=compression, is_transactional=True, producer_id=PID, producer_epoch=EPOCH, base_sequence=SEQ, batch_size=1 << 20
    )
    for offset, (ts, key, value) in enumerate(records):
        builder.append(offset, timestamp=ts, key=key, value=value, headers=[])
    return bytes(builder.build())


# --- round trips: one request and one response per API, at a version; a field to check on each ----

Sample = tuple[Any, str, Any, Any, str, Any]  # request, request field path, value, response, response field path, value


def _produce(v: int) -> Sample:
    R, S = ProduceRequest, ProduceResponse
    req = R[v](transactional_id="txn", acks=-1, timeout_ms=1500,
               topic_data=[R.TopicProduceData(name="t", partition_data=[R.TopicProduceData.PartitionProduceData(index=0, records=txn_batch())])])
    resp = S[v](responses=[S.TopicProduceResponse(name="t", partition_responses=[S.TopicProduceResponse.PartitionProduceResponse(index=0, base_offset=42)])])
    return req, "topic_data.0.partition_data.0.records", txn_batch(), resp, "responses.0.partition_responses.0.base_offset", 42


def _fetch(v: int) -> Sample:
    R, S = FetchRequest, FetchResponse
    req = R[v](max_wait_ms=500, min_bytes=1, max_bytes=1 << 20, isolation_level=1,
               topics=[R.FetchTopic(topic="t", partitions=[R.FetchTopic.FetchPartition(partition=0, fetch_offset=7, partition_max_bytes=1 << 20)])])
    P = S.FetchableTopicResponse.PartitionData
    part = P(partition_index=0, high_watermark=10, last_stable_offset=8, aborted_transactions=[P.AbortedTransaction(producer_id=PID, first_offset=3)],
             records=txn_batch())
    resp = S[v](responses=[S.FetchableTopicResponse(topic="t", partitions=[part])])
    return req, "topics.0.partitions.0.fetch_offset", 7, resp, "responses.0.partitions.0.aborted_transactions.0.producer_id", PID


def _list_offsets(v: int) -> Sample:
    R, S = ListOffsetsRequest, ListOffsetsResponse
    req = R[v](isolation_level=1, topics=[R.ListOffsetsTopic(name="t", partitions=[R.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)])])
    T = S.ListOffsetsTopicResponse
    resp = S[v](topics=[T(name="t", partitions=[T.ListOffsetsPartitionResponse(partition_index=0, offset=9)])])
    return req, "topics.0.partitions.0.timestamp", -1, resp, "topics.0.partitions.0.offset", 9


def _metadata(v: int) -> Sample:
    R, S = MetadataRequest, MetadataResponse
    req = R[v](topics=[R.MetadataRequestTopic(name="t")], allow_auto_topic_creation=False)
    T = S.MetadataResponseTopic
    resp = S[v](brokers=[S.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=9092)], cluster_id="c", controller_id=1,
                topics=[T(name="t", partitions=[T.MetadataResponsePartition(partition_index=0, leader_id=1, replica_nodes=[1], isr_nodes=[1])])])
    return req, "topics.0.name", "t", resp, "brokers.0.port", 9092


def _offset_commit(v: int) -> Sample:
    R, S = OffsetCommitRequest, OffsetCommitResponse
    T = R.OffsetCommitRequestTopic
    req = R[v](group_id="g", generation_id_or_member_epoch=2, member_id="m",
               topics=[T(name="t", partitions=[T.OffsetCommitRequestPartition(partition_index=0, committed_offset=11, committed_metadata="")])])
    RT = S.OffsetCommitResponseTopic
    resp = S[v](topics=[RT(name="t", partitions=[RT.OffsetCommitResponsePartition(partition_index=0, error_code=27)])])
    return req, "topics.0.partitions.0.committed_offset", 11, resp, "topics.0.partitions.0.error_code", 27


def _offset_fetch(v: int) -> Sample:
    R, S = OffsetFetchRequest, OffsetFetchResponse
    if v < 8:
        req = R[v](group_id="g", topics=[R.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1])])
        T = S.OffsetFetchResponseTopic
        resp = S[v](topics=[T(name="t", partitions=[T.OffsetFetchResponsePartition(partition_index=0, committed_offset=5, metadata="")])])
        return req, "topics.0.partition_indexes", [0, 1], resp, "topics.0.partitions.0.committed_offset", 5
    G = R.OffsetFetchRequestGroup
    req = R[v](groups=[G(group_id="g", topics=[G.OffsetFetchRequestTopics(name="t", partition_indexes=[0, 1])])], require_stable=True)
    RG = S.OffsetFetchResponseGroup
    RT = RG.OffsetFetchResponseTopics
    partition = RT.OffsetFetchResponsePartitions(partition_index=0, committed_offset=5, metadata="")
    resp = S[v](groups=[RG(group_id="g", topics=[RT(name="t", partitions=[partition])])])
    return req, "groups.0.topics.0.partition_indexes", [0, 1], resp, "groups.0.topics.0.partitions.0.committed_offset", 5


def _find_coordinator(v: int) -> Sample:
    R, S = FindCoordinatorRequest, FindCoordinatorResponse
    req = R[v](key="txn", key_type=1, coordinator_keys=["txn"])
    resp = S[v](node_id=1, host="127.0.0.1", port=9092, coordinators=[S.Coordinator(key="txn", node_id=1, host="127.0.0.1", port=9092)])
    if v < 4:
        return req, "key", "txn", resp, "port", 9092
    return req, "coordinator_keys", ["txn"], resp, "coordinators.0.port", 9092


def _join_group(v: int) -> Sample:
    R, S = JoinGroupRequest, JoinGroupResponse
    req = R[v](group_id="g", session_timeout_ms=10000, rebalance_timeout_ms=30000, member_id="", protocol_type="consumer",
               protocols=[R.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x01")])
    resp = S[v](generation_id=1, protocol_name="range", leader="m", member_id="m", members=[S.JoinGroupResponseMember(member_id="m", metadata=b"\x00\x01")])
    return req, "protocols.0.name", "range", resp, "members.0.metadata", b"\x00\x01"


def _heartbeat(v: int) -> Sample:
    return HeartbeatRequest[v](group_id="g", generation_id=4, member_id="m"), "generation_id", 4, HeartbeatResponse[v](error_code=27), "error_code", 27


def _leave_group(v: int) -> Sample:
    R, S = LeaveGroupRequest, LeaveGroupResponse
    req = R[v](group_id="g", member_id="m", members=[R.MemberIdentity(member_id="m")])
    resp = S[v](error_code=0, members=[S.MemberResponse(member_id="m")])
    return req, "member_id" if v < 3 else "members.0.member_id", "m", resp, "error_code", 0


def _sync_group(v: int) -> Sample:
    R, S = SyncGroupRequest, SyncGroupResponse
    req = R[v](group_id="g", generation_id=1, member_id="m", protocol_type="consumer", protocol_name="range",
               assignments=[R.SyncGroupRequestAssignment(member_id="m", assignment=b"\x01")])
    return req, "assignments.0.assignment", b"\x01", S[v](assignment=b"\x02"), "assignment", b"\x02"


def _describe_groups(v: int) -> Sample:
    R, S = DescribeGroupsReq, DescribeGroupsResp
    resp = S[v](groups=[S.DescribedGroup(group_id="g", group_state="Stable", protocol_type="consumer", protocol_data="range", members=[])])
    return R[v](groups=["g"]), "groups", ["g"], resp, "groups.0.group_state", "Stable"


def _api_versions(v: int) -> Sample:
    S = ApiVersionsResponse
    resp = S[v](error_code=0, api_keys=[S.ApiVersion(api_key=18, min_version=0, max_version=4)])
    req = ApiVersionsRequest[v](client_software_name="c", client_software_version="1")
    return req, "client_software_name" if v >= 3 else "version", "c" if v >= 3 else v, resp, "api_keys.0.max_version", 4


def _create_topics(v: int) -> Sample:
    R, S = CreateTopicsReq, CreateTopicsResp
    req = R[v](topics=[R.CreatableTopic(name="t", num_partitions=3, replication_factor=1, assignments=[], configs=[])], timeout_ms=1000)
    resp = S[v](topics=[S.CreatableTopicResult(name="t", error_code=36, num_partitions=3, replication_factor=1)])
    return req, "topics.0.num_partitions", 3, resp, "topics.0.error_code", 36


def _init_producer_id(v: int) -> Sample:
    req = InitProducerIdRequest[v](transactional_id="txn", transaction_timeout_ms=60000, producer_id=-1, producer_epoch=-1)
    return req, "transactional_id", "txn", InitProducerIdResponse[v](producer_id=PID, producer_epoch=EPOCH), "producer_id", PID


def _add_partitions(v: int) -> Sample:
    R, S = AddPartitionsToTxnRequest, AddPartitionsToTxnResponse
    T = R.AddPartitionsToTxnTransaction
    req = R[v](v3_and_below_transactional_id="txn", v3_and_below_producer_id=PID, v3_and_below_producer_epoch=EPOCH,
               v3_and_below_topics=[R.AddPartitionsToTxnTopic(name="t", partitions=[0, 1])],
               transactions=[T(transactional_id="txn", producer_id=PID, producer_epoch=EPOCH, verify_only=True,
                               topics=[T.AddPartitionsToTxnTopic(name="t", partitions=[0, 1])])])
    if v <= 3:
        TR = S.AddPartitionsToTxnTopicResult
        result = TR.AddPartitionsToTxnPartitionResult(partition_index=1, partition_error_code=48)
        resp = S[v](results_by_topic_v3_and_below=[TR(name="t", results_by_partition=[result])])
        return req, "v3_and_below_producer_id", PID, resp, "results_by_topic_v3_and_below.0.results_by_partition.0.partition_error_code", 48
    RT = S.AddPartitionsToTxnResult
    TR = RT.AddPartitionsToTxnTopicResult
    resp = S[v](results_by_transaction=[RT(transactional_id="txn", topic_results=[
        TR(name="t", results_by_partition=[TR.AddPartitionsToTxnPartitionResult(partition_index=1, partition_error_code=48)])])])
    return req, "transactions.0.verify_only", True, resp, "results_by_transaction.0.topic_results.0.results_by_partition.0.partition_error_code", 48


def _add_offsets(v: int) -> Sample:
    req = AddOffsetsToTxnRequest[v](transactional_id="txn", producer_id=PID, producer_epoch=EPOCH, group_id="g")
    return req, "group_id", "g", AddOffsetsToTxnResponse[v](error_code=51), "error_code", 51


def _end_txn(v: int) -> Sample:
    req = EndTxnRequest[v](transactional_id="txn", producer_id=PID, producer_epoch=EPOCH, committed=True)
    resp = EndTxnResponse[v](error_code=0, producer_id=PID, producer_epoch=EPOCH + 1)
    return req, "committed", True, resp, "producer_epoch" if v >= 5 else "error_code", EPOCH + 1 if v >= 5 else 0


def _txn_offset_commit(v: int) -> Sample:
    R, S = TxnOffsetCommitRequest, TxnOffsetCommitResponse
    T = R.TxnOffsetCommitRequestTopic
    req = R[v](transactional_id="txn", group_id="g", producer_id=PID, producer_epoch=EPOCH, generation_id=1, member_id="m",
               topics=[T(name="t", partitions=[T.TxnOffsetCommitRequestPartition(partition_index=0, committed_offset=12, committed_metadata="")])])
    RT = S.TxnOffsetCommitResponseTopic
    resp = S[v](topics=[RT(name="t", partitions=[RT.TxnOffsetCommitResponsePartition(partition_index=0, error_code=0)])])
    return req, "topics.0.partitions.0.committed_offset", 12, resp, "topics.0.partitions.0.partition_index", 0


SAMPLES: dict[int, Callable[[int], Sample]] = {
    0: _produce, 1: _fetch, 2: _list_offsets, 3: _metadata, 8: _offset_commit, 9: _offset_fetch, 10: _find_coordinator,
    11: _join_group, 12: _heartbeat, 13: _leave_group, 14: _sync_group, 15: _describe_groups, 18: _api_versions,
    19: _create_topics, 22: _init_producer_id, 24: _add_partitions, 25: _add_offsets, 26: _end_txn, 28: _txn_offset_commit,
}
EDGES = [(key, v) for key in sorted(SUPPORTED) for v in sorted(set(SUPPORTED[key]))]


def dig(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = obj[int(part)] if part.isdigit() else getattr(obj, part)
    return obj


def test_supported_serves_the_apis_of_the_broker_within_what_kafka_python_encodes() -> None:
    assert sorted(SUPPORTED) == [0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 18, 19, 22, 24, 25, 26, 28]
    for key, (low, high) in SUPPORTED.items():
        request, _, _, _, _, _ = SAMPLES[key](high)
        cls = type(request)
        assert key == cls.API_KEY
        assert cls.valid_versions[0] <= low <= high <= cls.max_version, cls.name
    assert SUPPORTED[1][1] == 12 and SUPPORTED[3][1] == 12  # topic ids from Fetch v13; Metadata v13 not needed
    assert SUPPORTED[24][1] == AddPartitionsToTxnRequest.max_version and SUPPORTED[26][1] == EndTxnRequest.max_version


@pytest.mark.parametrize(("key", "version"), EDGES)
def test_a_request_round_trips_as_kafka_pythons_client_sends_and_reads_it(key: int, version: int) -> None:
    request, req_path, req_value, response, resp_path, resp_value = SAMPLES[key](version)
    client = KafkaProtocol(client_id="x")
    client.send_request(request, correlation_id=7)
    frame = bytes(client.send_bytes())
    assert struct.unpack(">i", frame[:4])[0] == len(frame) - 4

    got = decode_request(frame[4:])
    assert (got.api_key, got.api_version, got.correlation_id, got.client_id) == (key, version, 7, "x")
    assert got.name == type(request).name.removesuffix("Request")
    assert dig(got.body, req_path) == req_value
    assert bytes(got.body.encode()) == bytes(request.encode())  # every field, as the client encoded it
    assert response_class(got).name == type(response).name and response_class(got)[None] is type(response)

    out = encode_response(got, response)
    [(correlation_id, answer)] = client.receive_bytes(out)
    assert correlation_id == 7
    assert answer.version == version
    assert dig(answer, resp_path) == resp_value


def test_trailing_bytes_after_a_request_are_ignored() -> None:
    request = EndTxnRequest[3](transactional_id="txn", producer_id=PID, producer_epoch=EPOCH, committed=False)
    request.with_header(correlation_id=3, client_id=None)
    got = decode_request(bytes(request.encode(header=True)) + b"\xff\x00junk")
    assert (got.name, got.client_id, got.body.committed) == ("EndTxn", None, False)


def test_encode_response_wants_the_response_class_of_the_request() -> None:
    request = HeartbeatRequest[4](group_id="g", generation_id=1, member_id="m")
    request.with_header(correlation_id=1)
    got = decode_request(bytes(request.encode(header=True)))
    with pytest.raises(TypeError):
        encode_response(got, EndTxnResponse[4]())


# --- ApiVersions -----------------------------------------------------------------------------------


def api_versions_bytes(version: int, correlation_id: int) -> bytes:
    request = ApiVersionsRequest[min(version, ApiVersionsRequest.max_version)](client_software_name="c", client_software_version="1")
    request.with_header(correlation_id=correlation_id, client_id="x")
    payload = bytearray(request.encode(header=True))
    struct.pack_into(">h", payload, 2, version)  # a version kafka-python cannot build
    return bytes(payload)


def listing(response: Any) -> dict[int, tuple[int, int]]:
    return {k.api_key: (k.min_version, k.max_version) for k in response.api_keys}


@pytest.mark.parametrize("version", range(SUPPORTED[18][1] + 1))
def test_api_versions_lists_supported_with_produce_from_v0_and_a_v0_response_header(version: int) -> None:
    request = decode_request(api_versions_bytes(version, 5))
    out = encode_response(request, api_versions_response(request))
    # response header v0 (KIP-511) at every version: the error code right after the correlation id
    assert out[4:8] == struct.pack(">i", 5) and out[8:10] == b"\x00\x00"
    answer = ApiVersionsResponse.decode(out, version=version, header=True, framed=True)
    assert answer.error_code == 0
    assert listing(answer) == {**SUPPORTED, 0: (0, SUPPORTED[0][1])}  # KAFKA-18659: Produce listed from 0


def test_an_api_versions_request_above_the_max_gets_unsupported_version_at_v0_with_the_listing() -> None:
    with pytest.raises(UnsupportedRequest) as caught:
        decode_request(api_versions_bytes(SUPPORTED[18][1] + 1, 9))
    e = caught.value
    assert (e.api_key, e.api_version, e.correlation_id) == (18, SUPPORTED[18][1] + 1, 9)
    body = api_versions_response(e)
    assert (body.version, body.error_code) == (0, 35)
    out = error_response(e, 35)
    assert out is not None
    # what the client reads: header v0, the body at v0 (kafka-python reads an error at v0 too)
    assert out[4:8] == struct.pack(">i", 9)
    answer = ApiVersionsResponse[0].decode(out, header=True, framed=True)
    assert answer.error_code == 35 and listing(answer)[18] == SUPPORTED[18]
    assert struct.unpack(">i", out[:4])[0] == len(out) - 4
    assert len(out) == 4 + 4 + 2 + 4 + 6 * len(SUPPORTED)  # v0 exactly: no throttle time, no tags


def test_an_api_versions_error_is_at_v0_whatever_the_request_version() -> None:
    request = decode_request(api_versions_bytes(3, 4))
    body = api_versions_response(request)
    body.error_code = 35
    for out in (encode_response(request, body), error_response(request, 35)):
        assert out is not None and len(out) == 4 + 4 + 2 + 4 + 6 * len(SUPPORTED)
        assert ApiVersionsResponse[0].decode(out, header=True, framed=True).error_code == 35


def test_api_versions_can_finalize_transaction_version_2_for_tv2_clients() -> None:
    request = decode_request(api_versions_bytes(4, 1))
    out = encode_response(request, api_versions_response(request, features={"transaction.version": 2, "off": 0}))
    answer = ApiVersionsResponse.decode(out, version=4, header=True, framed=True)
    assert [(f.name, f.min_version, f.max_version) for f in answer.supported_features] == [("transaction.version", 1, 2)]
    assert [(f.name, f.max_version_level, f.min_version_level) for f in answer.finalized_features] == [("transaction.version", 2, 2)]
    assert answer.finalized_features_epoch == 0
    plain = ApiVersionsResponse.decode(encode_response(request, api_versions_response(request)), version=4, header=True, framed=True)
    assert plain.finalized_features_epoch == -1 and not plain.finalized_features


# --- malformed input ----------------------------------------------------------------------------


def produce_bytes(version: int) -> bytes:
    request, *_ = _produce(version)
    request.with_header(correlation_id=11, client_id="x")
    return bytes(request.encode(header=True))


def test_an_empty_payload_is_a_wire_error() -> None:
    with pytest.raises(WireError, match="truncated"):
        decode_request(b"")


@settings(max_examples=200, deadline=None, database=None)
@given(st.binary(min_size=1, max_size=20))
def test_random_bytes_are_a_wire_error_or_a_request(data: bytes) -> None:
    try:
        got = decode_request(data)
    except WireError as e:
        assert "\n" not in str(e)
        return
    assert isinstance(got, Request)  # e.g. 00 12 00 00 ...: ApiVersions v0, whose body is empty


@settings(max_examples=200, deadline=None, database=None)
@given(st.sampled_from([(k, v) for k, (lo, hi) in SUPPORTED.items() for v in range(lo, hi + 1)]), st.binary(max_size=64))
def test_a_valid_header_with_random_body_bytes_is_a_wire_error_or_a_request(api: tuple[int, int], body: bytes) -> None:
    with contextlib.suppress(WireError):
        decode_request(struct.pack(">hhih", api[0], api[1], 1, -1) + b"\x00" + body)


@pytest.mark.parametrize("version", [3, 9, 12])
def test_every_prefix_of_a_produce_request_is_a_wire_error(version: int) -> None:
    payload = produce_bytes(version)
    assert decode_request(payload).name == "Produce"
    for n in range(len(payload)):
        with pytest.raises(WireError):
            decode_request(payload[:n])


@pytest.mark.parametrize(("key", "version"), [(999, 0), (-1, 0), (0, 2), (0, 13), (24, 6), (12, 5)])
def test_an_api_or_version_we_do_not_serve_is_unsupported_with_its_correlation_id(key: int, version: int) -> None:
    payload = struct.pack(">hhih", key, version, 1234, 1) + b"x" + b"\x00" * 8
    with pytest.raises(UnsupportedRequest) as caught:
        decode_request(payload)
    assert isinstance(caught.value, WireError)
    assert (caught.value.api_key, caught.value.api_version, caught.value.correlation_id) == (key, version, 1234)
    assert error_response(caught.value, 35) is None  # no API, no top-level error code (Produce), or beyond the class


def test_an_unsupported_version_with_a_top_level_error_code_gets_it() -> None:
    with pytest.raises(UnsupportedRequest) as caught:
        decode_request(struct.pack(">hhih", 1, 13, 77, -1) + b"\x00")
    out = error_response(caught.value, 35)
    assert out is not None
    answer = FetchResponse[13].decode(out, header=True, framed=True)
    assert (answer.header.correlation_id, answer.error_code, answer.responses) == (77, 35, [])


def test_error_response_of_a_served_request() -> None:
    request = InitProducerIdRequest[4](transactional_id="txn", transaction_timeout_ms=1000)
    request.with_header(correlation_id=8)
    out = error_response(decode_request(bytes(request.encode(header=True))), 15)
    assert out is not None
    answer = InitProducerIdResponse[4].decode(out, header=True, framed=True)
    assert (answer.header.correlation_id, answer.error_code) == (8, 15)


def _huge(payload: bytes, offset: int, fmt: str, value: int) -> bytes:
    patched = bytearray(payload)
    struct.pack_into(fmt, patched, offset, value)
    return bytes(patched)


def huge_length_payloads() -> list[bytes]:
    v3 = produce_bytes(3)  # header: key, version, correlation id, client id (int16 length) "x"
    records_at = v3.index(txn_batch()) - 4
    metadata = MetadataRequest[1](topics=[MetadataRequest.MetadataRequestTopic(name="t")])
    metadata.with_header(correlation_id=1, client_id="x")
    m = bytes(metadata.encode(header=True))
    versions = api_versions_bytes(3, 1)  # flexible: client_software_name is a compact string after the header
    return [
        _huge(v3, 8, ">h", 32767),  # client id
        _huge(v3, records_at, ">i", 2**31 - 1),  # records
        _huge(m, 11, ">i", 2**31 - 1),  # topics array count
        versions[:12] + b"\xff\xff\xff\xff\x0f" + versions[13:],  # compact string length 2**32 - 1
        versions[:12] + b"\xff" * 40 + b"\x01",  # a varint far beyond 32 bits
    ]


def test_huge_length_fields_are_wire_errors_without_big_allocations() -> None:
    tracemalloc.start()
    try:
        start = time.monotonic()
        for payload in huge_length_payloads():
            with pytest.raises(WireError):
                decode_request(payload)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20 and time.monotonic() - start < 2


# --- record batches ------------------------------------------------------------------------------


def test_a_transactional_batch_parses_with_its_producer_fields_and_records() -> None:
    raw = txn_batch()
    [batch] = parse_batches(raw)
    assert (batch.base_offset, batch.last_offset_delta, batch.record_count) == (0, 2, 3)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (PID, EPOCH, SEQ)
    assert (batch.is_transactional, batch.is_control) == (True, False)
    assert (batch.first_timestamp, batch.max_timestamp, batch.raw) == (1000, 1005, raw)
    assert data_records(batch) == [(0, b"k0", b"v0"), (1, None, b"v1"), (2, b"k2", None)]


def test_batches_in_a_row_and_no_batches() -> None:
    other = txn_batch(records=[(7, b"a", b"b")])
    batches = parse_batches(txn_batch() + other)
    assert [b.raw for b in batches] == [txn_batch(), other]
    assert parse_batches(None) == [] and parse_batches(b"") == []


def test_a_compressed_batch_keeps_its_bytes_as_received() -> None:
    raw = txn_batch(compression=1, records=[(1000, b"k", b"v" * 200)] * 5)  # gzip
    assert DefaultRecordBatch(raw).compression_type == 1
    [batch] = parse_batches(raw)
    assert batch.raw == raw and len(data_records(batch)) == 5


def test_rebase_moves_the_base_offset_and_keeps_the_crc() -> None:
    [batch] = parse_batches(txn_batch())
    rebased = rebase(batch, 1000)
    read = DefaultRecordBatch(rebased)
    assert read.base_offset == 1000 and read.validate_crc()
    [again] = parse_batches(rebased)
    assert again.base_offset == 1000 and rebased[8:] == batch.raw[8:]
    assert [offset for offset, _, _ in data_records(again)] == [1000, 1001, 1002]


@pytest.mark.parametrize("commit", [True, False])
def test_a_control_batch_reads_as_kafkas_transaction_marker(commit: bool) -> None:
    raw = control_batch(PID, EPOCH, commit, coordinator_epoch=17, base_offset=500, timestamp_ms=123456)
    read = DefaultRecordBatch(raw)
    assert read.validate_crc() and read.magic == 2
    assert (read.is_control_batch, read.is_transactional, read.base_offset) == (True, True, 500)
    assert (read.producer_id, read.producer_epoch, read.base_sequence, read.first_timestamp) == (PID, EPOCH, -1, 123456)
    [marker] = list(read)
    assert isinstance(marker, ControlRecord)
    assert (marker.commit, marker.abort, marker.version, marker.offset) == (commit, not commit, 0, 500)
    assert struct.unpack(">hi", marker.value) == (0, 17)  # EndTransactionMarker v0: version, coordinator epoch
    [batch] = parse_batches(raw)
    assert batch.is_control and batch.record_count == 1 and data_records(batch) == []


def _corrupt(raw: bytes) -> list[bytes]:
    flipped = bytearray(raw)
    flipped[-3] ^= 0x40  # inside the last record
    count = bytearray(raw)
    struct.pack_into(">i", count, 57, 4)  # records count 4 for 3 records, with a CRC that fits
    struct.pack_into(">I", count, DefaultRecordBatch.CRC_OFFSET, calc_crc32c(memoryview(count)[DefaultRecordBatch.ATTRIBUTES_OFFSET:]))
    legacy = LegacyRecordBatchBuilder(magic=1, compression_type=0, batch_size=1 << 20)
    legacy.append(0, timestamp=1000, key=b"k", value=b"v")
    return [bytes(flipped), bytes(count), raw[:-1], raw + raw[:30], bytes(legacy.build()), b"\x00" * 70]


@pytest.mark.parametrize("index", range(6))
def test_a_corrupt_or_truncated_or_old_batch_is_a_wire_error(index: int) -> None:
    with pytest.raises(WireError):
        parse_batches(_corrupt(txn_batch())[index])


# --- real clients --------------------------------------------------------------------------------


class MiniBroker:
    """Answers ApiVersions and Metadata (one broker, no topics) with this module, on 127.0.0.1, a
    thread per connection; keeps every request and every frame."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.port = self.sock.getsockname()[1]
        self.frames: list[bytes] = []
        self.requests: list[Request] = []
        self.errors: list[Exception] = []
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._accept)]
        self.threads[0].start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            thread = threading.Thread(target=self._serve, args=(conn,))
            self.threads.append(thread)
            thread.start()

    def _read(self, conn: socket.socket, n: int) -> bytes | None:
        data = b""
        while len(data) < n and not self.stop.is_set():
            try:
                chunk = conn.recv(n - len(data))
            except TimeoutError:
                continue
            except OSError:  # the client reset the connection (librdkafka does when it is torn down)
                return None
            if not chunk:
                return None
            data += chunk
        return data if len(data) == n else None

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(0.05)
            while (size := self._read(conn, 4)) is not None and (frame := self._read(conn, struct.unpack(">i", size)[0])) is not None:
                self.frames.append(frame)
                try:
                    request = decode_request(frame)
                except WireError as e:
                    self.errors.append(e)
                    return
                self.requests.append(request)
                if request.name == "ApiVersions":
                    answer = encode_response(request, api_versions_response(request))
                elif request.name == "Metadata":
                    R = response_class(request)
                    broker = R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=self.port)
                    answer = encode_response(request, R(brokers=[broker], cluster_id="c", controller_id=1, topics=[]))
                else:
                    return
                try:
                    conn.sendall(answer)
                except OSError:  # the client went away before the answer: its connection, not our error
                    return

    def close(self) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(5)
        self.sock.close()


@pytest.fixture
def broker() -> Any:
    b = MiniBroker()
    yield b
    b.close()


def test_librdkafka_gets_its_api_versions_and_metadata_from_us(broker: MiniBroker) -> None:
    confluent_kafka = pytest.importorskip("confluent_kafka")
    producer = confluent_kafka.Producer({"bootstrap.servers": f"127.0.0.1:{broker.port}", "transactional.id": "t", "socket.timeout.ms": 2000})
    try:
        metadata = producer.list_topics(timeout=5)
    finally:
        producer.flush(0)
        del producer
        gc.collect()
    assert metadata.cluster_id == "c" and list(metadata.brokers) == [1]
    assert not broker.errors
    first = broker.requests[0]
    assert (first.name, first.client_id) == ("ApiVersions", "rdkafka") and first.api_version >= 3  # 2.16 sends v3: flexible
    assert first.body.client_software_name == "confluent-kafka-python"
    assert {(r.name, r.api_version) for r in broker.requests[1:]} >= {("Metadata", SUPPORTED[3][1])}  # chosen from our listing
    for n in range(len(broker.frames[0])):
        with pytest.raises(WireError):
            decode_request(broker.frames[0][:n])


def test_kafka_python_gets_its_api_versions_and_metadata_from_us(broker: MiniBroker) -> None:
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(bootstrap_servers=f"127.0.0.1:{broker.port}", request_timeout_ms=5000)
    try:
        assert consumer.topics() == set()
    finally:
        consumer.close()
    assert not broker.errors
    assert [(r.name, r.api_version) for r in broker.requests[:2]] == [("ApiVersions", SUPPORTED[18][1]), ("Metadata", SUPPORTED[3][1])]
