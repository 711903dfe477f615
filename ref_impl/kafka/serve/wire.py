"""The server side of Kafka's wire protocol: requests real clients send in, responses they accept out.

Every message is encoded and decoded by kafka-python's protocol classes (``kafka.protocol``), which
are generated from Kafka's own JSON message schemas (clients/src/main/resources/common/message/
*Request.json, *Response.json in apache/kafka). This module only chooses the class and version,
checks the input and frames the output:

- A request is one frame without its 4-byte size: a request header (RequestHeader.json, v1, or v2
  from an API's first flexible version on) and the body. Flexible versions (KIP-482) use compact
  strings and arrays and end every struct with tagged fields; the header's client id stays a
  classic nullable string in v2 too.
- A response is framed: size, response header (v0, or v1 with tagged fields in flexible versions)
  and body. ApiVersions is the exception (KIP-511): its response header is always v0, so that a
  client that does not know the broker's versions yet can read it; and an ApiVersions request of a
  version the broker does not serve is answered UNSUPPORTED_VERSION at version 0, with the list of
  supported versions, and the client retries with a version from that list.
- Record batches (magic v2, KIP-98) are read and built with kafka-python's record classes
  (``kafka.record``): a Produce request carries them as opaque bytes, the broker gives them their
  offsets, and writes the control batches (transaction markers) that end a transaction.

``decode_request`` never raises anything but ``WireError``: whatever a client (or a random byte
string) sends, the server either gets a request or a one-line reason to close the connection.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Mapping
from typing import Any

import attrs
from kafka.protocol.admin import CreateTopicsRequest, CreateTopicsResponse, DescribeGroupsRequest, DescribeGroupsResponse
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
from kafka.record.memory_records import MemoryRecords

API_VERSIONS = 18
UNSUPPORTED_VERSION = 35  # Kafka's error code (Errors.java)

# api key -> kafka-python's (request class, response class)
_CLASSES: dict[int, tuple[Any, Any]] = {
    0: (ProduceRequest, ProduceResponse),
    1: (FetchRequest, FetchResponse),
    2: (ListOffsetsRequest, ListOffsetsResponse),
    3: (MetadataRequest, MetadataResponse),
    8: (OffsetCommitRequest, OffsetCommitResponse),
    9: (OffsetFetchRequest, OffsetFetchResponse),
    10: (FindCoordinatorRequest, FindCoordinatorResponse),
    11: (JoinGroupRequest, JoinGroupResponse),
    12: (HeartbeatRequest, HeartbeatResponse),
    13: (LeaveGroupRequest, LeaveGroupResponse),
    14: (SyncGroupRequest, SyncGroupResponse),
    15: (DescribeGroupsRequest, DescribeGroupsResponse),
    18: (ApiVersionsRequest, ApiVersionsResponse),
    19: (CreateTopicsRequest, CreateTopicsResponse),
    22: (InitProducerIdRequest, InitProducerIdResponse),
    24: (AddPartitionsToTxnRequest, AddPartitionsToTxnResponse),
    25: (AddOffsetsToTxnRequest, AddOffsetsToTxnResponse),
    26: (EndTxnRequest, EndTxnResponse),
    28: (TxnOffsetCommitRequest, TxnOffsetCommitResponse),
}

# api key -> (min, max) version served. The minimum is the schema's validVersions minimum (kafka-python's
# classes claim 0 for every API, but Kafka 4.0 removed the older versions, KIP-896, and its schemas
# no longer describe them); the maximum is the class's max_version unless noted.
SUPPORTED: dict[int, tuple[int, int]] = {
    # Produce: 3 is the first with record batches v2 (0-2 removed in 4.0); 12 is 11 plus TV2's
    # implicit AddPartitionsToTxn (KIP-890 part 2), which the Java client uses in a transaction only when
    # ApiVersions finalizes transaction.version >= 2; 13 names topics by id (KIP-516), which we do not have.
    0: (3, 12),
    # Fetch: 4 is the first with isolation levels and batches v2 (0-3 removed in 4.0); 13 names topics by id.
    1: (4, 12),
    # ListOffsets: 7 adds MAX_TIMESTAMP (-3, KIP-734), which a log answers; 8-11 add the timestamps and
    # timeouts of tiered storage (KIP-405, KIP-1005, KIP-1075, KIP-1023), which this broker does not have.
    2: (1, 7),
    # Metadata: 13 only adds a top-level error code (KIP-1102 rebootstrap); 12 is enough.
    3: (0, 12),
    # OffsetCommit: 10 names topics by id (KIP-848).
    8: (2, 9),
    # OffsetFetch: 10 names topics by id (KIP-848); 8 batches groups, 9 adds KIP-848 member fields.
    9: (1, 9),
    # FindCoordinator: all (4 batches keys, KIP-699; 6 adds the share-group key type, KIP-932, which
    # only share consumers send, and they need APIs this broker does not serve anyway).
    10: (0, 6),
    # JoinGroup, Heartbeat, LeaveGroup, SyncGroup, DescribeGroups: all; the classic group protocol.
    11: (0, 9),
    12: (0, 4),
    13: (0, 5),
    14: (0, 5),
    15: (0, 6),
    # ApiVersions: all (3 is flexible and adds the client's software name, KIP-511; 4 fixes KAFKA-17011).
    18: (0, 4),
    # CreateTopics: all (0-1 removed in 4.0).
    19: (2, 7),
    # InitProducerId: 6 (two-phase commit, KIP-939) is marked latestVersionUnstable in the schema.
    22: (0, 5),
    # AddPartitionsToTxn: all. 4+ is the broker-to-broker form (KIP-890 part 1: a batch of
    # transactions, VerifyOnly), which partition leaders send the coordinator in TV1V; 5 adds
    # TRANSACTION_ABORTABLE. Clients send 3 and below.
    24: (0, 5),
    # AddOffsetsToTxn: all (4 adds TRANSACTION_ABORTABLE).
    25: (0, 4),
    # EndTxn: all; 5 (TV2) returns the producer id and epoch bumped by the end of the transaction.
    26: (0, 5),
    # TxnOffsetCommit: all; 5 implies AddOffsetsToTxn under TV2 (per the schema, clients without TV2 stay at 4).
    28: (0, 5),
}

# KAFKA-18659: librdkafka's compressed Produce fails unless ApiVersions lists Produce from v0, so Kafka 4.0
# lists it from 0 and rejects 0-2 (ProduceRequest.json). We do as Kafka does.
_ADVERTISED_MIN = {0: 0}


class WireError(Exception):
    """Malformed input; ``str(e)`` is a one-line reason."""


class UnsupportedRequest(WireError):
    """A well-formed request header, but an API key or version this broker does not serve."""

    def __init__(self, api_key: int, api_version: int, correlation_id: int) -> None:
        super().__init__(f"unsupported request: api key {api_key} version {api_version}")
        self.api_key = api_key
        self.api_version = api_version
        self.correlation_id = correlation_id


@attrs.frozen
class Request:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    name: str  # the API's name, e.g. "Produce", "InitProducerId"
    body: Any  # the decoded kafka-python request object


_Header = Request | UnsupportedRequest


def _one_line(e: BaseException) -> str:
    return " ".join(f"{type(e).__name__}: {e}".split())


def decode_request(payload: bytes) -> Request:
    """The request in ``payload``, one frame without its 4-byte size prefix."""
    if len(payload) < 8:
        raise WireError(f"truncated request header ({len(payload)} bytes)")
    # api key, api version and correlation id: the first 8 bytes of every request header version
    api_key, api_version, correlation_id = struct.unpack_from(">hhi", payload)
    versions = SUPPORTED.get(api_key)
    if versions is None or not versions[0] <= api_version <= versions[1]:
        raise UnsupportedRequest(api_key, api_version, correlation_id)
    cls = _CLASSES[api_key][0]
    try:
        # ApiMessage.decode, keeping the end position: the compiled decoder slices strings and
        # bytes without checking that they are all there, so a truncated frame can decode.
        flexible = cls.flexible_version_q(api_version)
        stream = io.BytesIO(payload)
        header = cls.parse_header(stream, version=api_version)
        decode = cls._struct.compiled_decode_from(api_version, compact=flexible, tagged=flexible, data_class=cls)
        body, end = decode(memoryview(payload), stream.tell())
    except Exception as e:  # whatever kafka-python raises on bad input: struct.error, IndexError, ...
        raise WireError(f"malformed {cls.name} v{api_version}: {_one_line(e)}") from None
    if end > len(payload):
        raise WireError(f"truncated {cls.name} v{api_version}: {end - len(payload)} bytes missing")
    body._header = header
    return Request(api_key, api_version, correlation_id, header.client_id, cls.name[: -len("Request")], body)


def response_class(request: Request) -> Any:
    """kafka-python's response class for the request's API, at the request's version."""
    return _CLASSES[request.api_key][1][request.api_version]


def _frame(body: Any, version: int, correlation_id: int) -> bytes:
    if body.version != version:
        # before with_header: kafka-python's API_VERSION setter also sets the header's
        # request_api_version, an AttributeError on a ResponseHeader
        body.API_VERSION = version
    body.with_header(correlation_id=correlation_id)
    return bytes(body.encode(header=True, framed=True))


def encode_response(request: Request, body: Any) -> bytes:
    """The framed response to ``request``: size, response header and ``body`` at the request's version,
    except an ApiVersions error, which is at version 0 (as Kafka answers and clients read it)."""
    cls = _CLASSES[request.api_key][1]
    if not isinstance(body, cls):
        raise TypeError(f"a {request.name} request needs a {cls.name}, not {type(body).__name__}")
    version = request.api_version
    if request.api_key == API_VERSIONS and body.error_code:
        version = 0
    return _frame(body, version, request.correlation_id)


def api_versions_response(request: _Header, *, features: Mapping[str, int] | None = None) -> Any:
    """The ApiVersions answer listing SUPPORTED; UNSUPPORTED_VERSION at version 0 (with the list) if
    the client asked with a version we do not serve. ``features`` maps a feature name (e.g.
    "transaction.version") to its finalized level, listed (v3+) as supported from 1 to that level
    and finalized at it, with features epoch 0; clients enable TV2 on transaction.version >= 2."""
    low, high = SUPPORTED[API_VERSIONS]
    if low <= request.api_version <= high:
        version, error_code = request.api_version, 0
    else:
        version, error_code = 0, UNSUPPORTED_VERSION
    cls = ApiVersionsResponse
    levels = {name: level for name, level in (features or {}).items() if level >= 1}
    tagged: dict[str, Any] = {}
    if levels:  # tagged fields, encoded from v3 on
        tagged = {
            "supported_features": [cls.SupportedFeatureKey(name=n, min_version=1, max_version=lv) for n, lv in levels.items()],
            "finalized_features_epoch": 0,
            "finalized_features": [cls.FinalizedFeatureKey(name=n, max_version_level=lv, min_version_level=lv) for n, lv in levels.items()],
        }
    api_keys = [cls.ApiVersion(api_key=k, min_version=_ADVERTISED_MIN.get(k, lo), max_version=hi) for k, (lo, hi) in sorted(SUPPORTED.items())]
    return cls[version](error_code=error_code, api_keys=api_keys, throttle_time_ms=0, **tagged)


def error_response(request_header_or_request: _Header, error_code: int) -> bytes | None:
    """Best effort: a framed response of the request's API and version whose top-level error code is
    ``error_code``, typically for an UnsupportedRequest; None when there is no such response (an
    unknown API, a version kafka-python cannot encode, a schema without a top-level error code at
    that version): then the server closes the connection (Kafka closes it on every unsupported
    version but ApiVersions'). An ApiVersions error comes at version 0 with the supported versions."""
    r = request_header_or_request
    if r.api_key == API_VERSIONS:
        body = api_versions_response(r)
        body.error_code = error_code
        return _frame(body, 0 if error_code else body.version, r.correlation_id)
    if r.api_key not in _CLASSES:
        return None
    cls = _CLASSES[r.api_key][1]
    field = cls.fields.get("error_code")
    if not 0 <= r.api_version <= cls.max_version or field is None or not field.for_version_q(r.api_version):
        return None
    return _frame(cls[r.api_version](error_code=error_code), r.api_version, r.correlation_id)


# Record batches (magic v2): DefaultRecordBatch.java, EndTransactionMarker.java in Kafka.


@attrs.frozen
class Batch:
    base_offset: int
    last_offset_delta: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int
    is_transactional: bool
    is_control: bool
    first_timestamp: int
    max_timestamp: int
    raw: bytes  # the batch's bytes as received


def parse_batches(records: bytes | None) -> list[Batch]:
    """The record batches of a Produce partition's ``records`` ([] for null or empty). WireError if a
    batch is not magic v2, fails its CRC, does not decode to exactly its record count, or the bytes
    end inside a batch. Kafka's LogValidator rules are the caller's (exactly one batch per partition
    in Produce v3+, record count >= 1 and equal to last offset delta + 1, no control batch from a
    client, a sequence with a producer id: INVALID_RECORD)."""
    if not records:
        return []
    data = bytes(records)
    out, pos = [], 0
    try:
        memory = MemoryRecords(data)
        while (b := memory.next_batch()) is not None:
            raw = data[pos : pos + b.size_in_bytes]  # before iterating: that decompresses in place
            pos += len(raw)
            if not isinstance(b, DefaultRecordBatch) or b.magic != 2:
                raise WireError(f"record batch of magic {b.magic}: only v2 is served")
            if not b.validate_crc():
                raise WireError(f"record batch at offset {b.base_offset}: CRC mismatch")
            if b.compression_type == 0:  # decodes every record: DefaultRecordBatch checks their count and sizes
                sum(1 for _ in b)
            # a compressed batch is passed on as it came (its CRC checked): consumers decompress it, and
            # kafka-python here has only gzip of the codecs clients use (snappy, lz4, zstd)
            out.append(Batch(
                b.base_offset, b.last_offset_delta, b.producer_id, b.producer_epoch, b.base_sequence, b.records_count,
                b.is_transactional, b.is_control_batch, b.first_timestamp, b.max_timestamp, raw,
            ))
    except WireError:
        raise
    except Exception as e:  # CorruptRecordError, UnsupportedCodecError, struct.error, ...
        raise WireError(f"malformed record batch: {_one_line(e)}") from None
    missing = len(data) - pos
    if missing:
        raise WireError(f"records end inside a batch ({missing} bytes left over)")
    return out


def rebase(batch: Batch, base_offset: int) -> bytes:
    """The batch's bytes with base offset ``base_offset``. The CRC covers attributes onward, not the
    base offset, so it stays valid."""
    raw = bytearray(batch.raw)
    struct.pack_into(">q", raw, 0, base_offset)  # BaseOffset => Int64, the batch's first field
    return bytes(raw)


class _ControlBatchBuilder(DefaultRecordBatchBuilder):  # type: ignore[misc]  # kafka-python is untyped
    """kafka-python's builder leaves out the control bit ("only created by Broker"); we are the broker.
    The CRC is computed after the attributes, in write_header."""

    __slots__ = ()

    def _get_attributes(self, include_compression_type: bool = True) -> int:
        return int(super()._get_attributes(include_compression_type)) | int(self.CONTROL_MASK)


def control_batch(producer_id: int, producer_epoch: int, commit: bool, coordinator_epoch: int, base_offset: int, timestamp_ms: int) -> bytes:
    """A transactional control batch holding one COMMIT or ABORT marker, as Kafka's
    EndTransactionMarker writes it: key (version 0, type 1=COMMIT/0=ABORT), value (version 0,
    coordinator epoch), no sequence."""
    builder = _ControlBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=-1, batch_size=1 << 20,
    )
    key = ControlRecord.KEY_STRUCT.pack(0, 1 if commit else 0)
    value = struct.pack(">hi", 0, coordinator_epoch)  # EndTxnMarker.json v0: Version int16, CoordinatorEpoch int32
    builder.append(0, timestamp=timestamp_ms, key=key, value=value, headers=[])
    raw = bytearray(builder.build())
    struct.pack_into(">q", raw, 0, base_offset)
    return bytes(raw)


def data_records(batch: Batch) -> list[tuple[int, bytes | None, bytes | None]]:
    """(offset, key, value) of the batch's records, offsets from the base offset of ``batch.raw``;
    [] for a control batch (its record is a marker, not data)."""
    if batch.is_control:
        return []
    try:
        return [(r.offset, r.key, r.value) for r in DefaultRecordBatch(batch.raw)]
    except Exception as e:
        raise WireError(f"malformed record batch: {_one_line(e)}") from None
