"""The Apache Kafka Java client (``org.apache.kafka:kafka-clients`` 4.x) as a probe client: the one
client that speaks Transactions V2 (KIP-890), recorded like the others (probe.clients).

A producer instance is a Java process, ``io.txconform.probe.ClientDriver``
(``probe/java/src/io/txconform/probe/ClientDriver.java``), driven over stdin/stdout: one JSON
command per line, one JSON answer line per command (its ``seq`` echoed, so an answer that comes
after its call timed out is recognised and dropped). Delivery reports are kept by the driver and
returned by ``flush``, so every ``send`` line is written here, by the thread that drives the
producer. The driver's classpath is kafka-clients' runtime jars plus log4j's SLF4J binding,
resolved through ``probe/java/kafka-client.pom.xml`` (probe.maven); its class is compiled with
``javac`` once into ``$XDG_CACHE_HOME/txconform/java-client-<digest>`` (``~/.cache/txconform``).
The client's log (log4j2) and the JVM's stderr go to the run's clients.log.

The same driver may also hold a KafkaConsumer in a group, for consume-transform-produce (KIP-447):
``JavaProducer.subscribe``, ``poll``, ``assignment``, ``positions``, ``ctp_offsets`` (the
consumer's positions sent to the transaction with ``consumer.groupMetadata()``, so generation and
member id travel with them), ``seek_committed`` (after an abort) and ``consumer_close``.

Every call to the driver is bounded (the client's own timeouts plus ``MARGIN``); a driver that dies
or does not answer gives an error string (outcome ``info``), never a hang. ``close()`` asks the
driver to close its producer and consumer, then stops the process by its own id (SIGTERM, then SIGKILL).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Any

from probe import maven
from probe.clients import CALL_SECONDS, Emit, TxnProducer
from probe.targets import TargetError, stop_process

DEFAULT = "4.4.0"
JAVA_DIR = Path(__file__).resolve().parent / "java"
POM = JAVA_DIR / "kafka-client.pom.xml"
SOURCE = JAVA_DIR / "src" / "io" / "txconform" / "probe" / "ClientDriver.java"
MAIN = "io.txconform.probe.ClientDriver"
CLIENT = "java"
# a bounded heap; the client's start matters more than its peak speed here (C1 only, serial GC: half
# the CPU time of a default JVM's start and first InitProducerId, measured on a busy machine)
JVM_FLAGS = ("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
MARGIN = 10.0  # beyond the client's own bound: a cold JVM, a busy machine
DELIVERY_SECONDS = 15.0  # delivery.timeout.ms: what bounds the driver's flush
CLOSE_SECONDS = 5.0  # the driver closes its producer within this
START_SECONDS = 30.0  # a JVM's start and a KafkaProducer's construction
COMPILE_SECONDS = 300.0
RETRIES = 3  # a commit or abort that timed out is called again this often (under faults: a coordinator's failover)
MAX_POLL_MS = 30_000  # the driver's bound on one poll
MAX_LINE = 64 << 20  # bytes of one answer line at most (a flush of many reports)

LOG4J2 = """status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:txconform.client.log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
logger.kafka.name = org.apache.kafka
logger.kafka.level = INFO
"""

Record = tuple[str, int, int, str | None, str | None]  # a consumed record: topic, partition, offset, key, value


def _javac() -> Path:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "javac", os.X_OK):
        return Path(home) / "bin" / "javac"
    found = shutil.which("javac")
    if not found:
        raise TargetError("javac not found: the Java client is compiled on first use and needs a JDK 17+ (Debian: apt-get install openjdk-17-jdk-headless)")
    return Path(found)


def client_lib(version: str = DEFAULT) -> Path:
    """kafka-clients' runtime jars at ``version`` (resolved through Maven once, then cached)."""
    try:
        return maven.classpath(POM, version, "kafka-clients", "kafka.version")
    except maven.MavenError as e:
        raise TargetError(f"java client: {e}") from None


def driver_classes(version: str = DEFAULT) -> tuple[Path, Path]:
    """(the folder of the compiled driver classes, the folder of kafka-clients' jars) for ``version``."""
    lib = client_lib(version)
    maven.java()
    if not SOURCE.is_file():
        raise TargetError(f"{SOURCE}: the Java client driver's source is missing; reinstall txconform")
    key = hashlib.sha256(SOURCE.read_bytes())
    key.update(f"\0{version}\0{LOG4J2}".encode())
    target = maven.cache_root() / f"java-client-{key.hexdigest()[:16]}"
    if (target / "done").is_file():
        return target, lib
    javac = _javac()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{target.name}.lock", "w") as lock:  # one compile at a time (pytest-xdist workers)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / "done").is_file():
            _compile(javac, lib, target)
    return target, lib


def _compile(javac: Path, lib: Path, target: Path) -> None:
    """Compile into a fresh folder and move it into place."""
    tmp = Path(tempfile.mkdtemp(prefix="java-client-", dir=target.parent))
    try:
        out = subprocess.run(
            [str(javac), "-nowarn", "--release", "17", "-encoding", "UTF-8", "-cp", maven.jars(lib), "-d", str(tmp), str(SOURCE)],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=COMPILE_SECONDS,
        )
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        raise TargetError(f"javac did not compile {SOURCE.name} within {COMPILE_SECONDS:.0f} s: is the machine overloaded?") from None
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise TargetError(f"javac could not run ({e}): check the JDK install or JAVA_HOME") from None
    if out.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        log = target.parent / f"{target.name}.javac.log"
        log.write_text(out.stdout + out.stderr, encoding="utf-8")
        first = next((ln.strip() for ln in (out.stderr + out.stdout).splitlines() if "error" in ln), "no output")
        raise TargetError(
            f"javac failed on {SOURCE.name} against the jars in {lib} ({first[:240]}): the driver is written for kafka-clients 4.x; javac's output: {log}"
        )
    (tmp / "log4j2-txconform.properties").write_text(LOG4J2, encoding="utf-8")
    (tmp / "done").write_text("compiled\n", encoding="utf-8")
    try:
        tmp.rename(target)
    except OSError:  # compiled meanwhile by another process: use that one
        shutil.rmtree(tmp, ignore_errors=True)
    if not (target / "done").is_file():
        raise TargetError(f"the compiled Java client could not be moved into {target}: check that folder's permissions")


def driver_command(version: str = DEFAULT, log_path: str | None = None) -> list[str]:
    """The command line of a driver process whose client logs to ``log_path`` (nowhere without)."""
    classes, lib = driver_classes(version)
    return [
        str(maven.java()),
        *JVM_FLAGS,
        "-XX:+DisplayVMOutputToStderr",  # the JVM's own warnings: not on the answers' stdout
        f"-Dlog4j2.configurationFile={classes / 'log4j2-txconform.properties'}",
        f"-Dtxconform.client.log={log_path or os.devnull}",
        "-cp",
        f"{classes}{os.pathsep}{maven.jars(lib)}",
        MAIN,
    ]


def client_version(version: str = DEFAULT) -> str:
    """kafka-clients' version string (AppInfoParser.getVersion), for the record's header."""
    found = maven.version_of(client_lib(version), "kafka-clients")
    if found:
        return found
    driver = _Driver(version, None)
    try:
        answer = driver.call({"op": "version"}, START_SECONDS)
        return str(answer.get("kafka_clients") or f"unknown ({answer.get('error')})")
    finally:
        driver.stop()


class _Driver:
    """One ClientDriver process: a command line out, its answer line back, within a bound."""

    def __init__(self, version: str, log_path: str | None) -> None:
        log = log_path or os.devnull
        cmd = driver_command(version, log)
        self.dead: str | None = None  # why the driver answers no more
        self._seq = 0
        self._buf = bytearray()
        try:
            with open(log, "ab") as err:
                self.process: subprocess.Popen[bytes] = subprocess.Popen(
                    cmd, bufsize=0, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, start_new_session=True
                )
        except OSError as e:
            raise TargetError(f"java client: could not start {cmd[0]} ({e}); check the Java install and the log path {log}") from None
        assert self.process.stdin is not None and self.process.stdout is not None
        self._in: IO[bytes] = self.process.stdin
        self._out = self.process.stdout.fileno()

    def call(self, command: dict[str, Any], seconds: float) -> dict[str, Any]:
        """The driver's answer to ``command``; ``{"ok": False, "error": ...}`` when it gives none in time."""
        op = command.get("op")
        if self.dead is None and self.process.poll() is not None:
            self.dead = f"java client driver exited (code {self.process.returncode})"
        if self.dead is not None:
            return {"ok": False, "error": f"{self.dead}; {op} not sent"}
        self._seq += 1
        try:
            self._in.write(json.dumps({**command, "seq": self._seq}).encode() + b"\n")
            self._in.flush()
        except (OSError, ValueError) as e:
            self.dead = f"java client driver gone ({type(e).__name__})"
            return {"ok": False, "error": f"{self.dead}; {op} not sent"}
        deadline = time.monotonic() + seconds
        for _ in range(10_000):  # stale answers (of calls that timed out) are skipped
            line, why = self._line(deadline)
            if line is None:
                if why == "eof":
                    try:
                        code: int | None = self.process.wait(CLOSE_SECONDS)
                    except subprocess.TimeoutExpired:
                        code = None
                    self.dead = f"java client driver exited (code {code})"
                    return {"ok": False, "error": f"{self.dead} during {op}"}
                if why == "long":
                    self.dead = f"java client driver: an answer longer than {MAX_LINE} bytes"
                    return {"ok": False, "error": f"{self.dead} during {op}"}
                return {"ok": False, "error": f"java client driver: no answer to {op} within {seconds:.0f} s"}
            try:
                answer = json.loads(line)
            except ValueError:
                continue
            if isinstance(answer, dict) and answer.get("seq", self._seq) == self._seq:
                return answer
        return {"ok": False, "error": f"java client driver: no answer to {op} among its lines"}

    def _line(self, deadline: float) -> tuple[bytes | None, str]:
        """The next line of the driver's stdout by ``deadline``; (None, "eof" | "timeout") without."""
        for _ in range(1_000_000):
            nl = self._buf.find(b"\n")
            if nl >= 0:
                line = bytes(self._buf[:nl])
                del self._buf[: nl + 1]
                return line, ""
            left = deadline - time.monotonic()
            if len(self._buf) > MAX_LINE:
                return None, "long"
            if left <= 0:
                return None, "timeout"
            ready, _, _ = select.select([self._out], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._out, 1 << 16)
            if not chunk:
                return None, "eof"
            self._buf += chunk
        return None, "timeout"

    def stop(self) -> None:
        """Close the producer and the consumer (bounded), then stop the process by its own id; idempotent."""
        if self.dead is None and self.process.poll() is None:
            self.call({"op": "close"}, 2 * CLOSE_SECONDS + MARGIN)  # the producer's close, then the consumer's
        self.dead = self.dead or "java client driver closed"
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(1.0)
        stop_process(self.process)


class JavaProducer(TxnProducer):
    """The steps of probe.clients.TxnProducer with the Java client's transactional KafkaProducer, in
    its own process (``pid``: the probe may SIGKILL it mid-transaction). Fencing is
    ProducerFencedException or InvalidProducerEpochException (possibly as a cause); an abortable
    commit error (TransactionAbortableException, a retriable one) is followed by an abort; a
    TimeoutException leaves the outcome unknown."""

    def __init__(
        self,
        emit: Emit,
        bootstrap: str,
        txid: str,
        instance: int,
        process: str,
        log_path: str | None = None,
        version: str = DEFAULT,
        config: dict[str, Any] | None = None,
    ) -> None:
        """``config``: producer properties beyond (or instead of) the driver's own, e.g. {"max.request.size": 1024}."""
        self._steps(emit, txid, instance, process)
        self._sends: dict[int, dict[str, Any]] = {}  # send id -> its line's fields, in send order, until reported
        self._next_id = 0
        self.bootstrap = bootstrap
        self.driver = _Driver(version, log_path)
        answer = self.driver.call({"op": "producer", "bootstrap": bootstrap, "txid": txid, "config": config or {}}, START_SECONDS)
        if not answer.get("ok"):
            self.driver.stop()
            raise TargetError(f"java client: no KafkaProducer for {txid}: {answer.get('error')}")

    @property
    def pid(self) -> int:
        return self.driver.process.pid

    def _call(self, op: str, seconds: float = CALL_SECONDS + MARGIN, **fields: Any) -> dict[str, Any]:
        return self.driver.call({"op": op, **fields}, seconds)

    def init(self) -> str | None:
        a = self._call("init")
        if a.get("ok"):
            self.emit("note", process=self.process, what="init", txid=self.txid, instance=self.instance, client=CLIENT)
            return None
        error = str(a.get("error"))
        self.emit("note", process=self.process, what="init-failed", txid=self.txid, instance=self.instance, client=CLIENT, error=error)
        return error

    def begin(self) -> bool:
        self.n += 1
        a = self._call("begin")
        if a.get("ok"):
            return True
        self.fenced = self.fenced or bool(a.get("fenced"))
        self.end("fail" if self.fenced else "info", str(a.get("error")))
        return False

    def send(self, topic: str, partition: int, key: str, value: str) -> None:
        fields = {"process": self.process, "txn": self.txn_name(), "op": self.n, "topic": topic, "partition": partition, "key": key, "value": value}
        self._next_id += 1
        a = self._call("send", topic=topic, partition=partition, key=key, value=value, id=self._next_id)
        if a.get("ok"):
            self._sends[self._next_id] = fields
        else:  # send() threw (or the driver is gone): the record never left
            self.emit("send", **fields, offset=None, error=str(a.get("error")))

    def flush(self) -> int:
        """Wait for every delivery report (the driver's flush); emit them; how many had none."""
        a = self._call("flush", DELIVERY_SECONDS + MARGIN)
        if not a.get("ok"):
            self.fenced = self.fenced or bool(a.get("fenced"))
            self.emit("note", process=self.process, what="client-error", txn=self.txn_name(), client=CLIENT, error=str(a.get("error")))
        reports = {r.get("id"): r for r in a.get("reports") or [] if isinstance(r, dict)}
        left = 0
        for sid, fields in self._sends.items():
            r = reports.get(sid)
            if r is None:
                left += 1
                self.emit("send", **fields, offset=None, error=f"no answer: {a.get('error') or 'no report'}")
                continue
            error = r.get("error")
            left += error == "no answer"
            offset = r.get("offset") if error is None else None
            self.emit("send", **fields, offset=offset if isinstance(offset, int) else None, error=None if error is None else str(error))
        self._sends = {}
        return left

    def _reported(self) -> None:
        """Before a transaction's end line: the reports of its sends (commit and abort flush too)."""
        if self._sends:
            self.flush()

    def _retried(self, op: str) -> dict[str, Any]:
        """``op`` (commit, abort), called again after a timeout, at most RETRIES times: the Java
        producer's contract (a timed-out commitTransaction "must be retried": every other call
        refuses until it is)."""
        a = self._call(op)
        for _ in range(RETRIES):
            if a.get("ok") or "TimeoutException" not in str(a.get("error")):
                break
            self.emit("note", process=self.process, what=f"{op}-retried", txn=self.txn_name(), client=CLIENT, error=str(a.get("error")))
            a = self._call(op)
        return a

    def commit(self) -> str:
        a = self._retried("commit")
        if a.get("ok"):
            return self.end("ok")
        error = str(a.get("error"))
        if a.get("fenced"):
            self.fenced = True
            return self.end("fail", error)
        if a.get("abortable"):
            b = self._retried("abort")
            if b.get("ok"):
                return self.end("fail", error)
            self.fenced = self.fenced or bool(b.get("fenced"))
            return self.end("info", f"{error}; then abort: {b.get('error')}")
        return self.end("info", error)

    def abort(self) -> str:
        a = self._retried("abort")
        if a.get("ok"):
            return self.end("fail", None, decided="abort")
        self.fenced = self.fenced or bool(a.get("fenced"))
        return self.end("fail" if self.fenced else "info", str(a.get("error")), decided="abort")

    def offsets(self, group: str, offsets: list[tuple[str, int, int]]) -> str | None:
        """sendOffsetsToTransaction (consume-transform-produce); None, or the error."""
        a = self._call("offsets", group=group, offsets=[list(o) for o in offsets])
        if a.get("ok"):
            return None
        self.fenced = self.fenced or bool(a.get("fenced"))
        return str(a.get("error"))

    # --- the consumer of consume-transform-produce (KIP-447), in the same driver ------------------

    def subscribe(self, group: str, topics: list[str], config: dict[str, Any] | None = None) -> str | None:
        """A KafkaConsumer in ``group`` (read_committed, no auto commit, earliest, the classic
        protocol; ``config`` overrides), subscribed to ``topics``; None, or the error."""
        a = self._call("consumer", START_SECONDS, bootstrap=self.bootstrap, group=group, topics=list(topics), config=config or {})
        if a.get("ok"):
            self.emit("note", process=self.process, what="subscribe", group=group, topics=list(topics), client=CLIENT)
            return None
        return str(a.get("error"))

    def poll(self, ms: int) -> tuple[list[Record], str | None]:
        """consumer.poll(ms): ([(topic, partition, offset, key, value), ...], None), or ([], the error)."""
        ms = max(0, min(int(ms), MAX_POLL_MS))
        a = self._call("poll", ms / 1000 + CALL_SECONDS + MARGIN, ms=ms)
        if not a.get("ok"):
            return [], str(a.get("error"))
        records: list[Record] = []
        for r in a.get("records") or []:
            if isinstance(r, list) and len(r) == 5:
                records.append((str(r[0]), int(r[1]), int(r[2]), r[3], r[4]))
        return records, None

    def assignment(self) -> tuple[list[tuple[str, int]], str | None]:
        """The consumer's assigned partitions, sorted; or ([], the error)."""
        a = self._call("assignment")
        if not a.get("ok"):
            return [], str(a.get("error"))
        return [(str(t), int(p)) for t, p in a.get("assignment") or []], None

    def positions(self) -> tuple[list[tuple[str, int, int]], str | None]:
        """The consumer's position on each assigned partition; or ([], the error)."""
        a = self._call("positions")
        if not a.get("ok"):
            return [], str(a.get("error"))
        return [(str(t), int(p), int(o)) for t, p, o in a.get("positions") or []], None

    def ctp_offsets(self) -> str | None:
        """sendOffsetsToTransaction(the consumer's positions, consumer.groupMetadata()): KIP-447's
        path, the generation and member id with the offsets; None, or the error. The offsets sent
        and the group metadata are noted (``what="ctp-offsets"``)."""
        a = self._call("ctp_offsets", 2 * CALL_SECONDS + MARGIN)
        if a.get("ok"):
            self.emit(
                "note",
                process=self.process,
                what="ctp-offsets",
                txn=self.txn_name(),
                client=CLIENT,
                offsets=a.get("offsets"),
                generation=a.get("generation"),
                member=a.get("member"),
            )
            return None
        self.fenced = self.fenced or bool(a.get("fenced"))
        return str(a.get("error"))

    def seek_committed(self) -> str | None:
        """Every assigned partition back to its committed offset (its beginning without one), as
        after an abort; None, or the error."""
        a = self._call("seek_committed")
        if a.get("ok"):
            self.emit("note", process=self.process, what="seek-committed", client=CLIENT, committed=a.get("committed"))
            return None
        return str(a.get("error"))

    def consumer_close(self) -> str | None:
        """Close the consumer (it leaves its group), bounded; None, or the error."""
        a = self._call("consumer_close", CLOSE_SECONDS + MARGIN)
        return None if a.get("ok") else str(a.get("error"))

    def close(self) -> None:
        """Close the producer and the consumer (bounded), then stop the driver by its own id; idempotent."""
        self.driver.stop()

    def __enter__(self) -> JavaProducer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
