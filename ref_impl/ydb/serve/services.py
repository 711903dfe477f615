"""YDB's gRPC services over the front (``front.Front``), with the generated messages and stubs the
``ydb`` SDK ships (``ydb._grpc.common``: the version matching the installed protobuf, as the SDK
itself picks it, ydb-python-sdk ``ydb/_grpc/common/__init__.py``). No protocol code of our own:
only what each request means to the engine.

Served: Discovery (``ListEndpoints``, ``WhoAmI``); Query (``CreateSession``, ``AttachSession``,
``DeleteSession``, ``BeginTransaction``, ``CommitTransaction``, ``RollbackTransaction``,
``ExecuteQuery`` of ``select n`` and single-row table statements, sql.py); Topic (``CreateTopic``,
``DescribeTopic``, ``AlterTopic`` (consumers), ``DropTopic``, ``StreamWrite``, ``StreamRead``,
``CommitOffset``, ``UpdateOffsetsInTransaction``). Anything else gets UNIMPLEMENTED
(gRPC) or a YDB status with a message saying what is served.

Every request runs under one lock (``lock``); a stream's answers go through a queue its
generator yields from, so that the front can push data to a reader when B's log grows.
"""

from __future__ import annotations

import contextlib
import gzip
import logging
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf import any_pb2, message, timestamp_pb2
from ydb._grpc.common import (  # type: ignore[attr-defined]  # the SDK's alias of the version it loaded
    ydb_discovery_v1_pb2_grpc,
    ydb_query_v1_pb2_grpc,
    ydb_topic_v1_pb2_grpc,
)
from ydb._grpc.common.protos import (
    ydb_discovery_pb2,
    ydb_issue_message_pb2,
    ydb_operation_pb2,
    ydb_query_pb2,
    ydb_scheme_pb2,
    ydb_status_codes_pb2,
    ydb_topic_pb2,
    ydb_value_pb2,
)

from . import sql
from .errors import FrontError
from .faults import NO_FAULTS, Switches
from .front import DATABASE, SOURCE, TARGET, Front, ReaderStream, normalize

log = logging.getLogger("txconform.serve.ydb")

StatusIds = ydb_status_codes_pb2.StatusIds
RAW = 1  # Ydb.Topic.Codec.CODEC_RAW
GZIP = 2  # Ydb.Topic.Codec.CODEC_GZIP
# The codecs a writer may send data in, and how the server reads it (a codec is how the data travels,
# not a step of the transaction protocol: the engine keeps the data decoded, and readers get it RAW).
# LZOP and ZSTD are refused (UNSUPPORTED): they would need packages this project does not install.
DECODERS: dict[int, Callable[[bytes], bytes]] = {RAW: lambda data: data, GZIP: gzip.decompress}
# Custom codecs (Ydb.Topic.Codec: CODEC_CUSTOM = 10000 and up) are the application's own: the server
# keeps such data as it came, and readers get it back with its codec to decode (or not) themselves.
CUSTOM_CODECS = range(10000, 20000)
NODE_ID = 1
POLL_S = 0.2  # how often a waiting stream looks whether its client or the server has gone
W = ydb_topic_pb2.StreamWriteMessage
R = ydb_topic_pb2.StreamReadMessage


def status(name: str) -> int:
    return int(StatusIds.StatusCode.Value(name))


def issues(message: str) -> list[Any]:
    return [ydb_issue_message_pb2.IssueMessage(message=message, severity=1)] if message else []


def operation(result: Any = None, error: FrontError | None = None) -> Any:
    """A finished operation (Ydb.Operations.Operation, ready): its status and result."""
    op = ydb_operation_pb2.Operation(ready=True, status=status(error.status if error else "SUCCESS"),
                                     issues=issues(str(error) if error else ""))
    if result is not None:
        packed = any_pb2.Any()
        packed.Pack(result)
        op.result.CopyFrom(packed)
    return op


class Closed(Exception):
    """The stream ends (the client's, or the server stops)."""


class Shared:
    """What every service shares: the front, its lock, the open streams' queues, the stop flag."""

    def __init__(self, front: Front, host: str, switches: Switches = NO_FAULTS) -> None:
        self.front = front
        self.host = host
        self.port = 0
        self.lock = threading.RLock()
        self.stopping = threading.Event()
        self.requests: dict[str, int] = {}
        self.switches = switches
        self.fault_counts: dict[str, int] = {}  # the requests that take faults, by name (faults.REQUESTS)
        self.reader_queues: dict[int, queue.Queue[Any]] = {}
        self.attached: dict[str, queue.Queue[Any]] = {}
        front.on_change = self.push_reads
        front.on_session_lost = self.session_lost

    def count(self, name: str) -> None:
        self.requests[name] = self.requests.get(name, 0) + 1

    @contextlib.contextmanager
    def faults_at(self, request: str, tid: str) -> Iterator[None]:
        """Serve one request of ``request`` on transaction ``tid`` (under the lock), with the fault
        switch of its number armed (faults.py)."""
        n = self.fault_counts[request] = self.fault_counts.get(request, 0) + 1
        switch = self.switches.at(request, n)
        if switch is not None:
            self.front.arm(switch, tid)
        try:
            yield
        finally:
            self.front.disarm()

    def session_lost(self, sid: str) -> None:
        """The session died underneath its client (under the lock): its attach stream says so and ends."""
        q = self.attached.pop(sid, None)
        if q is not None:
            q.put(ydb_query_pb2.SessionState(status=status("BAD_SESSION"), issues=issues(f"session {sid!r} was lost")))

    def push_reads(self) -> None:
        """Send every reader what it may read now (under the lock)."""
        for rid, q in list(self.reader_queues.items()):
            r = self.front.readers.get(rid)
            if r is not None:
                for msg in read_responses(self.front, r):
                    q.put(msg)

    def stream(self, name: str, context: grpc.ServicerContext, requests: Iterator[Any],
               on_request: Callable[[str, Any, queue.Queue[Any]], None], on_end: Callable[[], None], reply: Any) -> Iterator[Any]:
        """A bidirectional stream (StreamWrite, StreamRead): a thread takes the client's messages,
        each under the lock, by the name of its ``client_message``; the generator yields the
        answers (``reply``: the stream's FromServer) from a queue. A token update is answered here;
        a FrontError answers with its status and ends the stream."""
        self.count(name)
        out: queue.Queue[Any] = queue.Queue()

        def error(e: FrontError) -> Any:
            return reply(status=status(e.status), issues=issues(str(e)))

        def pump() -> None:
            try:
                for req in requests:
                    kind = req.WhichOneof("client_message")
                    with self.lock:
                        if kind == "update_token_request":
                            out.put(reply(status=status("SUCCESS"), update_token_response=ydb_topic_pb2.UpdateTokenResponse()))
                        else:
                            on_request(kind, req, out)
            except FrontError as e:
                out.put(error(e))
            except grpc.RpcError:
                pass  # the client went away
            except Exception as e:  # a bug of ours ends this stream, never the server
                log.exception("stream failed")
                out.put(error(FrontError("INTERNAL_ERROR", f"internal error: {e}")))
            finally:
                with self.lock:
                    on_end()
                out.put(None)

        threading.Thread(target=pump, name="txconform-ydb-stream", daemon=True).start()
        yield from drain(out, context, self.stopping)


def drain(out: queue.Queue[Any], context: grpc.ServicerContext, stopping: threading.Event) -> Iterator[Any]:
    while True:
        try:
            item = out.get(timeout=POLL_S)
        except queue.Empty:
            if stopping.is_set() and context.is_active():
                # as a YDB node going down: UNAVAILABLE, which the SDK retries (a stream that just
                # ends with OK is not what it expects: its reader fails with a TypeError)
                context.abort(grpc.StatusCode.UNAVAILABLE, "txconform serve is stopping")
            if not context.is_active():
                return
            continue
        if item is None:
            return
        yield item
        if item.status not in (0, status("SUCCESS")):
            return


def timestamp() -> Any:
    ts = timestamp_pb2.Timestamp()
    ts.GetCurrentTime()
    return ts


def read_responses(front: Front, r: ReaderStream) -> list[Any]:
    batches = front.take_batches(r)
    if not batches:
        return []
    now = timestamp()
    data = []
    size = 0
    for psid, _p, msgs in batches:
        # a batch per run of messages of one codec (a reader decodes a batch with its codec); the engine's
        # batch of A is one such run, which a transaction takes whole
        out: list[Any] = []
        for offset, payload, s in msgs:
            codec = s.codec if s else RAW
            if not out or out[-1].codec != codec:
                out.append(R.ReadResponse.Batch(producer_id=s.producer if s else "A", codec=codec, written_at=now))
            out[-1].message_data.append(R.ReadResponse.MessageData(offset=offset, seq_no=s.seq_no if s else offset + 1,
                                                                   created_at=now, data=payload, uncompressed_size=len(payload)))
            size += len(payload)
        data.append(R.ReadResponse.PartitionData(partition_session_id=psid, batches=out))
    return [R.FromServer(status=status("SUCCESS"), read_response=R.ReadResponse(partition_data=data, bytes_size=size))]


class Discovery(ydb_discovery_v1_pb2_grpc.DiscoveryServiceServicer):  # type: ignore[misc]
    """Ydb.Discovery.V1: one endpoint, this server (ydb-python-sdk ``ydb/resolver.py`` connects to
    each endpoint ``ListEndpoints`` names; ``driver.wait`` waits for one)."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def ListEndpoints(self, request: Any, context: grpc.ServicerContext) -> Any:
        self.shared.count("ListEndpoints")
        if request.database and request.database != DATABASE:
            return ydb_discovery_pb2.ListEndpointsResponse(operation=operation(
                error=FrontError("SCHEME_ERROR", f"database {request.database!r}: this server has {DATABASE!r}")))
        info = ydb_discovery_pb2.EndpointInfo(address=self.shared.host, port=self.shared.port, node_id=NODE_ID,
                                              location="txconform", service=["discovery", "query", "topic", "scheme"])
        result = ydb_discovery_pb2.ListEndpointsResult(endpoints=[info], self_location="txconform")
        return ydb_discovery_pb2.ListEndpointsResponse(operation=operation(result))

    def WhoAmI(self, request: Any, context: grpc.ServicerContext) -> Any:
        self.shared.count("WhoAmI")
        return ydb_discovery_pb2.WhoAmIResponse(operation=operation(ydb_discovery_pb2.WhoAmIResult(user="txconform")))


class Query(ydb_query_v1_pb2_grpc.QueryServiceServicer):  # type: ignore[misc]
    """Ydb.Query.V1: sessions, their attach stream and transactions; ``select 1``."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def _run(self, name: str, f: Callable[[], Any], answer: Callable[[int, list[Any], Any], Any], tid: str | None = None) -> Any:
        """Serve request ``name``; one on transaction ``tid`` takes the fault switch of its number."""
        self.shared.count(name)
        with self.shared.lock:
            try:
                if tid is None:
                    return answer(status("SUCCESS"), [], f())
                with self.shared.faults_at(name, tid):
                    return answer(status("SUCCESS"), [], f())
            except FrontError as e:
                return answer(status(e.status), issues(str(e)), None)

    def CreateSession(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._run("CreateSession", self.shared.front.create_session,
                         lambda st, iss, sid: ydb_query_pb2.CreateSessionResponse(status=st, issues=iss, session_id=sid or "",
                                                                                  node_id=NODE_ID))

    def AttachSession(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        """The session lives while this stream does (ydb-python-sdk ``ydb/query/session.py``
        ``_attach``: the first SessionState must say SUCCESS)."""
        self.shared.count("AttachSession")
        sid = request.session_id
        with self.shared.lock:
            known = sid in self.shared.front.sessions
            out: queue.Queue[Any] = queue.Queue()
            if known:
                self.shared.attached[sid] = out
        if not known:
            yield ydb_query_pb2.SessionState(status=status("BAD_SESSION"), issues=issues(f"session {sid!r} does not exist"))
            return
        yield ydb_query_pb2.SessionState(status=status("SUCCESS"))
        try:
            yield from drain(out, context, self.shared.stopping)
        finally:
            with self.shared.lock:
                self.shared.attached.pop(sid, None)
                self.shared.front.delete_session(sid)

    def DeleteSession(self, request: Any, context: grpc.ServicerContext) -> Any:
        def delete() -> None:
            self.shared.front.session(request.session_id)
            self.shared.front.delete_session(request.session_id)
            q = self.shared.attached.pop(request.session_id, None)
            if q is not None:
                q.put(None)

        return self._run("DeleteSession", delete, lambda st, iss, _: ydb_query_pb2.DeleteSessionResponse(status=st, issues=iss))

    def BeginTransaction(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._run("BeginTransaction", lambda: self.shared.front.begin(request.session_id),
                         lambda st, iss, tid: ydb_query_pb2.BeginTransactionResponse(
                             status=st, issues=iss, tx_meta=ydb_query_pb2.TransactionMeta(id=tid or "")))

    def CommitTransaction(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._run("CommitTransaction", lambda: self.shared.front.commit(request.tx_id, request.session_id),
                         lambda st, iss, _: ydb_query_pb2.CommitTransactionResponse(status=st, issues=iss), tid=request.tx_id)

    def RollbackTransaction(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._run("RollbackTransaction", lambda: self.shared.front.rollback(request.tx_id, request.session_id),
                         lambda st, iss, _: ydb_query_pb2.RollbackTransactionResponse(status=st, issues=iss), tid=request.tx_id)

    def ExecuteQuery(self, request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
        """One statement (sql.py): ``select n`` as the SDK's ``tx.execute("select 1")`` sends it,
        ``CREATE TABLE``/``DROP TABLE`` outside a transaction, and single-row ``UPSERT``,
        ``SELECT`` and ``DELETE`` by key in the session's transaction (begun here with
        ``begin_tx``; committed with ``commit_tx``: the commit through a query of YDB's TxUsage
        WriteToTopic_Demo_43 and _44), or, with no transaction control, in a transaction of its
        own that commits at once (YDB's implicit transaction). Anything else is BAD_REQUEST, naming
        what is served. A statement that fails in a transaction ends it, as in YDB."""
        self.shared.count("ExecuteQuery")
        front = self.shared.front
        result: Any = None
        tid = ""
        with self.shared.lock:
            try:
                front.session(request.session_id)
                try:
                    stmt = sql.parse(request.query_content.text)
                except sql.SqlError as e:
                    raise front.refuse("BAD_REQUEST", str(e)) from None
                tc = request.tx_control if request.HasField("tx_control") else None
                if isinstance(stmt, (sql.CreateTable, sql.DropTable)):
                    if tc is not None:
                        raise front.refuse("PRECONDITION_FAILED", "Scheme operations cannot be executed inside a "
                                           "transaction (send CREATE TABLE and DROP TABLE with no transaction control)")
                    if isinstance(stmt, sql.CreateTable):
                        front.tables.create(stmt)
                    else:
                        front.tables.drop(stmt.table)
                else:
                    commit = tc is None or tc.commit_tx
                    if tc is None or tc.HasField("begin_tx"):
                        tid = front.begin(request.session_id)
                    elif tc.tx_id:
                        tid = front.tx(tc.tx_id, request.session_id).id
                    if isinstance(stmt, sql.SelectN):
                        result = select_n(stmt)
                    elif tid:
                        try:
                            result = front.table_statement(tid, request.session_id, stmt, dict(request.parameters), commit)
                        except FrontError:
                            if front.txs[tid].state == "open":
                                front.rollback(tid, request.session_id)
                            raise
                    if commit and tid:
                        front.commit(tid, request.session_id)
            except FrontError as e:
                yield ydb_query_pb2.ExecuteQueryResponsePart(status=status(e.status), issues=issues(str(e)))
                return
        part = ydb_query_pb2.ExecuteQueryResponsePart(status=status("SUCCESS"))
        if result is not None:
            part.result_set_index = 0
            part.result_set.CopyFrom(result)
        if tid and front.txs[tid].state == "open":
            part.tx_meta.CopyFrom(ydb_query_pb2.TransactionMeta(id=tid))
        yield part


def select_n(stmt: sql.SelectN) -> Any:
    column = ydb_value_pb2.Column(name=stmt.name, type=ydb_value_pb2.Type(type_id=ydb_value_pb2.Type.INT32))
    row = ydb_value_pb2.Value(items=[ydb_value_pb2.Value(int32_value=stmt.n)])
    return ydb_value_pb2.ResultSet(columns=[column], rows=[row])


class Topic(ydb_topic_v1_pb2_grpc.TopicServiceServicer):  # type: ignore[misc]
    """Ydb.Topic.V1: the scheme of topics A and B, the writer and reader streams, and the read
    range a transaction commits."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared

    def _op(self, name: str, f: Callable[[], Any], answer: Callable[[Any], Any], tid: str | None = None) -> Any:
        """Serve request ``name``; one on transaction ``tid`` takes the fault switch of its number."""
        self.shared.count(name)
        with self.shared.lock:
            try:
                if tid is None:
                    return answer(operation(f()))
                with self.shared.faults_at(name, tid):
                    return answer(operation(f()))
            except FrontError as e:
                return answer(operation(error=e))

    def CreateTopic(self, request: Any, context: grpc.ServicerContext) -> Any:
        parts = request.partitioning_settings.min_active_partitions
        return self._op("CreateTopic", lambda: self.shared.front.create_topic(request.path, parts, [c.name for c in request.consumers]),
                        lambda op: ydb_topic_pb2.CreateTopicResponse(operation=op))

    def DescribeTopic(self, request: Any, context: grpc.ServicerContext) -> Any:
        def describe() -> Any:
            t = self.shared.front.topic(request.path)
            return ydb_topic_pb2.DescribeTopicResult(
                self=ydb_scheme_pb2.Entry(name=t.name, type=ydb_scheme_pb2.Entry.TOPIC),
                partitioning_settings=ydb_topic_pb2.PartitioningSettings(min_active_partitions=t.partitions,
                                                                         partition_count_limit=t.partitions),
                partitions=[ydb_topic_pb2.DescribeTopicResult.PartitionInfo(partition_id=p, active=self.shared.front.active(t.name, p))
                            for p in range(t.partitions)],
                supported_codecs=ydb_topic_pb2.SupportedCodecs(codecs=sorted(DECODERS)),
                consumers=[ydb_topic_pb2.Consumer(name=c) for c in t.consumers])

        return self._op("DescribeTopic", describe, lambda op: ydb_topic_pb2.DescribeTopicResponse(operation=op))

    def DropTopic(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._op("DropTopic", lambda: self.shared.front.drop_topic(request.path),
                        lambda op: ydb_topic_pb2.DropTopicResponse(operation=op))

    def AlterTopic(self, request: Any, context: grpc.ServicerContext) -> Any:
        consumers = ("add_consumers", "drop_consumers")
        # a setting the request changes (the SDK sends an empty alter_partitioning_settings with any alter)
        others = [f.name for f, v in request.ListFields() if f.name not in ("operation_params", "path", *consumers)
                  and not (isinstance(v, message.Message) and v.ByteSize() == 0)]
        return self._op("AlterTopic", lambda: self.shared.front.alter_topic(
            request.path, [c.name for c in request.add_consumers], list(request.drop_consumers), others),
            lambda op: ydb_topic_pb2.AlterTopicResponse(operation=op))

    def CommitOffset(self, request: Any, context: grpc.ServicerContext) -> Any:
        def commit() -> None:
            self.shared.front.commit_offset_call(request.path, request.partition_id, request.consumer, request.offset,
                                                 request.read_session_id)

        return self._op("CommitOffset", commit, lambda op: ydb_topic_pb2.CommitOffsetResponse(operation=op))

    def UpdateOffsetsInTransaction(self, request: Any, context: grpc.ServicerContext) -> Any:
        topics = [(t.path, pt.partition_id, [(r.start, r.end) for r in pt.partition_offsets])
                  for t in request.topics for pt in t.partitions]
        return self._op("UpdateOffsetsInTransaction",
                        lambda: self.shared.front.update_offsets(request.tx.id, request.tx.session, request.consumer, topics),
                        lambda op: ydb_topic_pb2.UpdateOffsetsInTransactionResponse(operation=op), tid=request.tx.id)

    # --- StreamWrite ---

    def StreamWrite(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        """The writer's stream: an init naming topic B and the producer, then writes, each acked
        "written in transaction" once tablet B has it (ydb-python-sdk ``ydb/_topic_writer/
        topic_writer_asyncio.py``, ``WriterAsyncIOStream``; the transaction's identity rides on each
        WriteRequest, ``messages_to_proto_requests``)."""
        front = self.shared.front
        state: dict[str, Any] = {}

        def on_request(kind: str, msg: Any, out: queue.Queue[Any]) -> None:
            if kind == "init_request":
                init = msg.init_request
                t = front.topic(init.path)
                if init.WhichOneof("partitioning") == "partition_id" and init.partition_id >= t.partitions:
                    raise front.refuse("BAD_REQUEST", f"partition {init.partition_id}: topic {t.name!r} has {t.partitions}")
                state["path"], state["producer"] = init.path, init.producer_id
                state["partition"] = init.partition_id if init.WhichOneof("partitioning") == "partition_id" else 0
                if t.name == SOURCE:
                    last = front.source_last_seq_no(init.producer_id)
                else:  # B's log holds the producer's committed and plain writes alike
                    last = max((s.seq_no for s in front.b_log[1] if s.producer == init.producer_id), default=0)
                out.put(W.FromServer(status=status("SUCCESS"), init_response=W.InitResponse(
                    last_seq_no=last, session_id=front.new_id("write"), partition_id=state["partition"],
                    supported_codecs=ydb_topic_pb2.SupportedCodecs(codecs=sorted(DECODERS)))))
            elif kind == "write_request":
                if "path" not in state:
                    raise front.refuse("BAD_REQUEST", "a write before the stream's init_request")
                wr = msg.write_request
                # ydb-platform/ydb ydb/services/persqueue_v1/actors/write_session_topic_api_actor.cpp, HandleWrite:
                # a write with no messages or with codec 0 is a protocol error (BAD_REQUEST); acks of writes in a
                # transaction are written_in_tx, with no offset (write_session_actor.cpp)
                if not wr.messages or wr.codec == 0:
                    raise front.refuse("BAD_REQUEST", "bad write request: no messages, or codec unspecified (id 0)")
                if wr.codec not in DECODERS and wr.codec not in CUSTOM_CODECS:
                    raise front.refuse("UNSUPPORTED", f"codec {wr.codec}: this server takes RAW (1), GZIP (2) and custom "
                                       "codecs (10000 to 19999) only")
                codec = wr.codec if wr.codec in CUSTOM_CODECS else RAW  # how the data is kept and read back
                data = []
                for m in wr.messages:
                    try:
                        data.append(m.data if wr.codec in CUSTOM_CODECS else DECODERS[wr.codec](m.data))
                    except (OSError, EOFError, zlib.error):
                        raise front.refuse("BAD_REQUEST", f"message seq_no {m.seq_no}: its data is not codec {wr.codec} (GZIP)") from None
                acks = []
                if not wr.HasField("tx"):  # outside a transaction: A's data before it is read, or B's PlainWrite
                    for m, d in zip(wr.messages, data, strict=True):
                        if normalize(state["path"]) == TARGET and front.k.max_plain_writes:
                            off = front.plain_write(d, state["producer"], m.seq_no, codec)
                            if off is None:  # AlreadyWritten: the SDK's Skipped
                                acks.append(W.WriteResponse.WriteAck(seq_no=m.seq_no, skipped=W.WriteResponse.WriteAck.Skipped(
                                    reason=W.WriteResponse.WriteAck.Skipped.REASON_ALREADY_WRITTEN)))
                            else:
                                acks.append(W.WriteResponse.WriteAck(seq_no=m.seq_no, written=W.WriteResponse.WriteAck.Written(offset=off)))
                            continue
                        o = front.preload(state["path"], state["partition"], d, state["producer"], m.seq_no, codec)
                        acks.append(W.WriteResponse.WriteAck(seq_no=m.seq_no, written=W.WriteResponse.WriteAck.Written(offset=o)))
                    out.put(W.FromServer(status=status("SUCCESS"), write_response=W.WriteResponse(
                        acks=acks, partition_id=state["partition"])))
                    return
                for m, d in zip(wr.messages, data, strict=True):
                    with self.shared.faults_at("Write", wr.tx.id):
                        front.write(wr.tx.id, wr.tx.session, state["path"], d, state["producer"], m.seq_no, codec)
                    acks.append(W.WriteResponse.WriteAck(seq_no=m.seq_no, written_in_tx=W.WriteResponse.WriteAck.WrittenInTx()))
                out.put(W.FromServer(status=status("SUCCESS"), write_response=W.WriteResponse(acks=acks, partition_id=0)))

        return self.shared.stream("StreamWrite", context, requests, on_request, lambda: None, W.FromServer)

    # --- StreamRead ---

    def StreamRead(self, requests: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        """The reader's stream: init (consumer, topic), a partition session a partition, then data
        as the client asks for it by bytes (ydb-python-sdk ``ydb/_topic_reader/
        topic_reader_asyncio.py``, ``ReaderStream``). A commit outside a transaction (reader.commit)
    is the engine's PlainRead and CommitOffset of the batches up to its end."""
        front = self.shared.front
        state: dict[str, ReaderStream] = {}

        def on_request(kind: str, msg: Any, out: queue.Queue[Any]) -> None:
            if kind == "init_request":
                init = msg.init_request
                r = front.open_reader(init.consumer, [s.path for s in init.topics_read_settings])
                state["r"] = r
                self.shared.reader_queues[r.id] = out
                out.put(R.FromServer(status=status("SUCCESS"), init_response=R.InitResponse(session_id=f"read-{r.id}")))
                for psid, p in sorted(r.sessions.items()):
                    out.put(R.FromServer(status=status("SUCCESS"), start_partition_session_request=R.StartPartitionSessionRequest(
                        partition_session=R.PartitionSession(partition_session_id=psid, path=init.topics_read_settings[0].path,
                                                             partition_id=p - 1),
                        committed_offset=front.committed_offset(r, p),
                        partition_offsets=ydb_topic_pb2.OffsetsRange(start=0, end=front.end_offset(r, p)))))
                return
            current = state.get("r")
            if current is None:
                raise front.refuse("BAD_REQUEST", "a message before the stream's init_request")
            r = current
            if kind == "read_request":
                r.budget += msg.read_request.bytes_size
            elif kind == "start_partition_session_response":
                sp = msg.start_partition_session_response
                front.start_session(r, sp.partition_session_id, sp.read_offset if sp.HasField("read_offset") else None)
            elif kind == "commit_offset_request":
                done = [R.CommitOffsetResponse.PartitionCommittedOffset(
                            partition_session_id=c.partition_session_id,
                            committed_offset=front.commit_offset(r, c.partition_session_id, [(x.start, x.end) for x in c.offsets]))
                        for c in msg.commit_offset_request.commit_offsets]
                out.put(R.FromServer(status=status("SUCCESS"), commit_offset_response=R.CommitOffsetResponse(
                    partitions_committed_offsets=done)))
            elif kind not in ("stop_partition_session_response", "partition_session_status_request"):
                raise front.refuse("UNSUPPORTED", f"StreamRead {kind}: not served")
            for m in read_responses(front, r):
                out.put(m)

        def on_end() -> None:
            r = state.get("r")
            if r is not None:
                self.shared.reader_queues.pop(r.id, None)
                front.close_reader(r)

        return self.shared.stream("StreamRead", context, requests, on_request, on_end, R.FromServer)


def add_services(server: grpc.Server, shared: Shared) -> None:
    ydb_discovery_v1_pb2_grpc.add_DiscoveryServiceServicer_to_server(Discovery(shared), server)
    ydb_query_v1_pb2_grpc.add_QueryServiceServicer_to_server(Query(shared), server)
    ydb_topic_v1_pb2_grpc.add_TopicServiceServicer_to_server(Topic(shared), server)
