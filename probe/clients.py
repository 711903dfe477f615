"""Transactional producers and consumers with confluent-kafka (librdkafka), recording every step.

Shared by the probe's own process and the child it kills (probe._child). Every librdkafka call that
waits has a timeout; the outcome of a transaction is what the client was told:

- ``ok``: commit_transaction returned.
- ``fail``: abort_transaction returned; or commit failed with an abortable error and the abort
  succeeded; or the producer was fenced (a newer instance's InitProducerId aborts the older
  instance's open transaction: KIP-98, TransactionCoordinator.handleInitProducerId).
- ``info``: anything else (a timeout, a fatal error other than fencing, a killed process).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

CALL_SECONDS = 10.0
RETRIES = 3  # a commit or abort that failed with a retriable error is called again this often
END_SECONDS = 30.0  # kafka-python's commit and abort: how long the probe waits for one to return
ADMIN_SECONDS = 5.0  # CreateTopics / DeleteTopics: a broker that does not serve them fails fast

Emit = Callable[..., Any]  # emit(kind, **fields): Recorder.add, or a child's line printer


def client_logger(path: str | None) -> logging.Logger:
    """librdkafka's log lines go to the run's clients.log, not to the terminal."""
    log = logging.getLogger("txconform.probe.librdkafka")
    log.propagate = False
    if path and not any(getattr(h, "baseFilename", None) == path for h in log.handlers):
        log.addHandler(logging.FileHandler(path))
    log.setLevel(logging.INFO)
    return log


def producer_config(bootstrap: str, txid: str, log_path: str | None) -> dict[str, Any]:
    return {
        "bootstrap.servers": bootstrap,
        "transactional.id": txid,
        "enable.idempotence": True,
        "transaction.timeout.ms": 60000,
        "message.timeout.ms": 15000,
        "linger.ms": 2,
        "socket.connection.setup.timeout.ms": 5000,
        "logger": client_logger(log_path),
    }


class TxnProducer:
    """One producer instance: its transactions, each recorded as sends and an end."""

    def __init__(self, emit: Emit, bootstrap: str, txid: str, instance: int, process: str, log_path: str | None = None) -> None:
        from confluent_kafka import Producer

        self._steps(emit, txid, instance, process)
        self.producer = Producer(producer_config(bootstrap, txid, log_path))

    def _steps(self, emit: Emit, txid: str, instance: int, process: str) -> None:
        """What every client's instance records its steps with."""
        self.emit = emit
        self.txid = txid
        self.instance = instance
        self.process = process
        self.n = 0  # the current transaction's number
        self.fenced = False
        self._reports: list[tuple[dict[str, Any], Any, Any]] = []  # delivery reports not emitted yet (send)

    def init(self) -> str | None:
        """InitProducerId; None, or the error."""
        try:
            self.producer.init_transactions(CALL_SECONDS)
            self.emit("note", process=self.process, what="init", txid=self.txid, instance=self.instance)
            return None
        except Exception as e:
            self.emit("note", process=self.process, what="init-failed", txid=self.txid, instance=self.instance, error=_err(e))
            return _err(e)

    def txn_name(self) -> str:
        return f"{self.txid}/{self.instance}/{self.n}"

    def begin(self) -> bool:
        self.n += 1
        try:
            self.producer.begin_transaction()
            return True
        except Exception as e:
            self.end("info", _err(e))
            return False

    def send(self, topic: str, partition: int, key: str, value: str) -> None:
        fields = {"process": self.process, "txn": self.txn_name(), "op": self.n, "topic": topic, "partition": partition, "key": key, "value": value}
        reports = self._reports

        def delivered(err: Any, msg: Any) -> None:
            # One C call and nothing else: after a fatal error (a fenced producer) confluent-kafka
            # 2.16 calls this with its KafkaException already set, so any C call here raises
            # SystemError after it has run (a lock taken with `with` stayed taken and hung the
            # probe). The append has happened by then; _reported() emits it afterwards.
            reports.append((fields, err, msg))

        try:
            self.producer.produce(topic, value=value.encode(), key=key.encode(), partition=partition, on_delivery=delivered)
        except Exception as e:  # BufferError, KafkaException (fenced, fatal): the send never left
            self.emit("send", **fields, offset=None, error=_err(e))

    def _reported(self) -> None:
        """Emit the delivery reports the client has served since the last call, in order."""
        while self._reports:
            fields, err, msg = self._reports.pop(0)
            self.emit("send", **fields, offset=None if err else msg.offset(), error=str(err) if err else None)

    def flush(self) -> int:
        """Wait for every delivery report; returns how many are still pending. A flush that raises
        (a fatal error; see send) is served again, at most once per report it still owes."""
        left = len(self.producer)
        for _ in range(left + 1):
            try:
                left = int(self.producer.flush(CALL_SECONDS))
                break
            except Exception as e:
                cause = _unwrap(e)
                self.fenced = self.fenced or _is_fenced(cause.args[0] if cause.args else None)
                self.emit("note", process=self.process, what="client-error", txn=self.txn_name(), error=_err(e))
                left = len(self.producer)
            finally:
                self._reported()
        return left

    def commit(self) -> str:
        try:
            self._retrying(self.producer.commit_transaction)
            return self.end("ok")
        except Exception as raised:
            e = _unwrap(raised)
            kerr = e.args[0] if e.args else None
            if _is_fenced(kerr):
                self.fenced = True
                return self.end("fail", _err(e))
            if kerr is not None and getattr(kerr, "txn_requires_abort", lambda: False)():
                try:
                    self.producer.abort_transaction(CALL_SECONDS)
                    return self.end("fail", _err(e))
                except Exception as e2:
                    return self.end("info", f"{_err(e)}; then abort: {_err(e2)}")
            return self.end("info", _err(e))

    def _retrying(self, call: Callable[[float], Any]) -> None:
        """``call`` (commit_transaction, abort_transaction), again after a retriable error such as
        _TIMED_OUT ("retry call to resume": librdkafka's contract), at most RETRIES times."""
        for attempt in range(RETRIES + 1):
            try:
                call(CALL_SECONDS)
                return
            except Exception as raised:
                e = _unwrap(raised)
                kerr = e.args[0] if e.args else None
                if attempt == RETRIES or not getattr(kerr, "retriable", lambda: False)():
                    raise
                self.emit("note", process=self.process, what="end-retried", txn=self.txn_name(), error=_err(e))

    def abort(self) -> str:
        try:
            self._retrying(self.producer.abort_transaction)
            return self.end("fail", None, decided="abort")
        except Exception as raised:
            e = _unwrap(raised)
            kerr = e.args[0] if e.args else None
            if _is_fenced(kerr):
                self.fenced = True
                return self.end("fail", _err(e), decided="abort")
            return self.end("info", _err(e), decided="abort")

    def end(self, outcome: str, error: str | None = None, decided: str = "commit") -> str:
        self._reported()  # commit and abort flush too: their sends' reports come first
        self.emit("txn", process=self.process, txn=self.txn_name(), op=self.n, outcome=outcome, decided=decided, error=error)
        return outcome


def _is_fenced(kerr: Any) -> bool:
    if kerr is None:
        return False
    from confluent_kafka import KafkaError

    codes = {getattr(KafkaError, n) for n in ("_FENCED", "PRODUCER_FENCED", "INVALID_PRODUCER_EPOCH") if hasattr(KafkaError, n)}
    return bool(getattr(kerr, "code", lambda: None)() in codes)


def _unwrap(e: BaseException) -> BaseException:
    """The client's own error behind a SystemError that a delivery callback raised (see send)."""
    return e.__cause__ if isinstance(e, SystemError) and e.__cause__ is not None else e


def _err(e: BaseException) -> str:
    e = _unwrap(e)
    kerr = e.args[0] if e.args else None
    if kerr is not None and hasattr(kerr, "name") and hasattr(kerr, "str"):
        return f"{kerr.name()}: {kerr.str()}"
    return f"{type(e).__name__}: {e}"


class KpProducer(TxnProducer):
    """The same steps with kafka-python's transactional KafkaProducer (kafka-python 2.1+): a second
    client with its own sequence, epoch and retry logic, recorded the same way. Its errors are
    kafka.errors classes: ProducerFencedError (and InvalidProducerEpochError) is fencing, a
    KafkaTimeoutError leaves the outcome unknown."""

    def __init__(self, emit: Emit, bootstrap: str, txid: str, instance: int, process: str, log_path: str | None = None) -> None:
        from kafka import KafkaProducer

        self._steps(emit, txid, instance, process)
        self._pending: list[Any] = []
        self.kp = KafkaProducer(
            bootstrap_servers=bootstrap.split(","),
            transactional_id=txid,
            enable_idempotence=True,
            transaction_timeout_ms=60000,
            max_block_ms=int(CALL_SECONDS * 1000),
            bootstrap_timeout_ms=int(CALL_SECONDS * 1000),
            request_timeout_ms=int(CALL_SECONDS * 1000),
            linger_ms=2,
        )

    def init(self) -> str | None:
        try:
            self.kp.init_transactions()
            self.emit("note", process=self.process, what="init", txid=self.txid, instance=self.instance, client="kafka-python")
            return None
        except Exception as e:
            self.emit("note", process=self.process, what="init-failed", txid=self.txid, instance=self.instance, client="kafka-python", error=_kp_err(e))
            return _kp_err(e)

    def begin(self) -> bool:
        self.n += 1
        try:
            self.kp.begin_transaction()
            return True
        except Exception as e:
            self.fenced = self.fenced or _kp_fenced(e)
            self.end("fail" if self.fenced else "info", _kp_err(e))
            return False

    def send(self, topic: str, partition: int, key: str, value: str) -> None:
        txn, op = self.txn_name(), self.n
        fields = {"process": self.process, "txn": txn, "op": op, "topic": topic, "partition": partition, "key": key, "value": value}
        try:
            future = self.kp.send(topic, value=value.encode(), key=key.encode(), partition=partition)
            self._pending.append((future, fields))
        except Exception as e:
            self.emit("send", **fields, offset=None, error=_kp_err(e))

    def flush(self) -> int:
        with contextlib.suppress(Exception):  # each send's own outcome is read below
            self.kp.flush(timeout=CALL_SECONDS)
        left = 0
        for future, fields in self._pending:
            if not future.is_done:
                left += 1
                self.emit("send", **fields, offset=None, error="no answer before the flush timed out")
            elif future.failed():
                self.emit("send", **fields, offset=None, error=_kp_err(future.exception))
            else:
                self.emit("send", **fields, offset=future.value.offset, error=None)
        self._pending = []
        return left

    def _ended(self, call: Callable[[], Any]) -> None:
        """Run commit_transaction or abort_transaction, waiting at most END_SECONDS. kafka-python
        (3.0.12) waits for EndTxn's answer without a bound (KafkaProducer.commit_transaction:
        ``result.wait()``; the Java client stops at max.block.ms): after the transaction
        coordinator was killed and restarted, a wait of 290 s never returned. The call goes on
        in a daemon thread; the transaction's outcome is then unknown."""
        failed: list[BaseException] = []

        def run() -> None:
            try:
                call()
            except BaseException as e:  # handed to the caller's thread
                failed.append(e)

        t = threading.Thread(target=run, name=f"{self.process}-end", daemon=True)
        t.start()
        t.join(END_SECONDS)
        if t.is_alive():
            stuck = f"{getattr(call, '__name__', 'the call')} did not return within {END_SECONDS:g} s"
            self.emit("note", process=self.process, what="client-stuck", txn=self.txn_name(), client="kafka-python", error=stuck)
            raise _Stuck(stuck)
        if failed:
            raise failed[0]

    def commit(self) -> str:
        try:
            self._ended(self.kp.commit_transaction)
            return self.end("ok")
        except _Stuck as e:
            return self.end("info", str(e))
        except Exception as e:
            if _kp_fenced(e):
                self.fenced = True
                return self.end("fail", _kp_err(e))
            try:
                self._ended(self.kp.abort_transaction)
                return self.end("fail", _kp_err(e))
            except Exception as e2:
                return self.end("info", f"{_kp_err(e)}; then abort: {_kp_err(e2)}")

    def abort(self) -> str:
        try:
            self._ended(self.kp.abort_transaction)
            return self.end("fail", None, decided="abort")
        except _Stuck as e:
            return self.end("info", str(e), decided="abort")
        except Exception as e:
            self.fenced = self.fenced or _kp_fenced(e)
            return self.end("fail" if self.fenced else "info", _kp_err(e), decided="abort")

    def close(self) -> None:
        with contextlib.suppress(Exception):  # closing a producer in a fatal state: nothing left to record
            self.kp.close(timeout=CALL_SECONDS)


class _Stuck(Exception):
    """A client call that did not return in time; the operation's outcome is unknown."""


def _kp_fenced(e: BaseException) -> bool:
    return type(e).__name__ in ("ProducerFencedError", "InvalidProducerEpochError")


def _kp_err(e: BaseException | None) -> str:
    return "unknown" if e is None else f"{type(e).__name__}: {e}"
