"""Apache Cassandra itself, for C*One over a real Cassandra (issue 54): ``txconform probe --target
cassandra --hold`` (``cassandra:5.0.9``: any 5.0.x Maven Central serves; ``--nodes 1|3``).

The node's runtime classpath comes from Maven Central through ``probe/java/cassandra.pom.xml``
(probe.maven, cached per version under ``~/.cache/txconform``). Node N listens on 127.0.0.N
(127.0.0.1, .2, .3: one per simulated data centre of the C*One design, seed 003), all on the same
free storage and native ports; 127.0.0.1 is the seed. Each node gets a minimal ``cassandra.yaml``
and ``logback.xml`` in its own folder, a bounded heap, and is started as
``java ... org.apache.cassandra.service.CassandraDaemon`` with the JVM flags of Cassandra's
``conf/jvm17-server.options`` (apache/cassandra, cassandra-5.0). Nodes start one after another:
a node bootstraps only when no other is (StorageService's ``cassandra.consistent.rangemovement``
check, "Other bootstrapping/leaving/moving nodes detected"), so node N+1 starts once node N
answers on its native port.

Cassandra 5.0 runs on Java 11 and 17 only (its ``conf/`` has jvm11 and jvm17 options); on Java 25
the daemon fails in ``ThreadAwareSecurityManager`` (``Policy.setPolicy``: "Setting a system-wide
Policy object is not supported"), so the target asks for a Java 17 and says so when it finds another.
``TXCONFORM_CASSANDRA_JAVA_HOME`` names one when ``JAVA_HOME``/``PATH`` give another version.

Readiness is the native transport port accepting connections (it opens last, once the node has
joined: CassandraDaemon.start). Each node is stopped by its own process id (SIGTERM, then SIGKILL
after ``STOP_SECONDS``; a node drains and stops in 6-10 s here), and the cluster's folder is removed.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import attrs

from probe import maven
from probe.targets import stop_process
from trace_check.errors import TxconformError

POM = Path(__file__).resolve().parent / "java" / "cassandra.pom.xml"
DEFAULT_VERSION = "5.0.9"
# Measured on this 2-core machine (docs/cone.md, "C*One over a real Cassandra"): ready in ~19 s
# with a 512 MiB heap, RSS ~700 MiB; a 1 GiB heap took ~25 s and ~1 GiB RSS.
HEAP = ("-Xms256m", "-Xmx512m", "-XX:MaxDirectMemorySize=256m")
READY_SECONDS = 180.0  # per node: a node was ready in 19-38 s here; a busy shared machine takes longer
STOP_SECONDS = 20.0  # SIGTERM, then SIGKILL: a node drained and stopped in 6-10 s here
HOSTS = ("127.0.0.1", "127.0.0.2", "127.0.0.3")
JAVA_HOME_VARIABLE = "TXCONFORM_CASSANDRA_JAVA_HOME"

# apache/cassandra conf/jvm17-server.options (cassandra-5.0): the GC settings, the module exports
# and opens the daemon needs on Java 17, and Netty's properties; the jamm agent as cassandra-env.sh
# adds it (-javaagent:$CASSANDRA_HOME/lib/jamm-*.jar).
JVM17_OPTIONS = (
    "-Xss256k",
    "-XX:+UseG1GC",
    "-XX:+ParallelRefProcEnabled",
    "-XX:MaxTenuringThreshold=1",
    "-XX:G1HeapRegionSize=16m",
    "-XX:G1RSetUpdatingPauseTimePercent=5",
    "-XX:MaxGCPauseMillis=300",
    "-XX:InitiatingHeapOccupancyPercent=70",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djava.net.preferIPv4Stack=true",
    "-Djdk.attach.allowAttachSelf=true",
    "--add-exports",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-exports",
    "java.management.rmi/com.sun.jmx.remote.internal.rmi=ALL-UNNAMED",
    "--add-exports",
    "java.rmi/sun.rmi.registry=ALL-UNNAMED",
    "--add-exports",
    "java.rmi/sun.rmi.server=ALL-UNNAMED",
    "--add-exports",
    "java.sql/java.sql=ALL-UNNAMED",
    "--add-exports",
    "java.base/java.lang.ref=ALL-UNNAMED",
    "--add-exports",
    "jdk.unsupported/sun.misc=ALL-UNNAMED",
    "--add-exports",
    "jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
    "--add-exports",
    "jdk.attach/sun.tools.attach=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.module=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.loader=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.ref=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.reflect=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.math=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.module=ALL-UNNAMED",
    "--add-opens",
    "java.base/jdk.internal.util.jar=ALL-UNNAMED",
    "--add-opens",
    "jdk.management/com.sun.management.internal=ALL-UNNAMED",
    "--add-opens",
    "java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.io=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang.reflect=ALL-UNNAMED",
    "--add-opens",
    "jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.lang=ALL-UNNAMED",
    "--add-opens",
    "java.base/java.util=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dio.netty.allocator.useCacheForAllThreads=true",
    "-Dio.netty.allocator.maxOrder=11",
)

LOGBACK = """<configuration scan="false">
  <appender name="FILE" class="ch.qos.logback.core.FileAppender">
    <file>{log}</file>
    <encoder><pattern>%-5level [%thread] %date{{ISO8601}} %F:%L - %msg%n</pattern></encoder>
  </appender>
  <root level="INFO"><appender-ref ref="FILE"/></root>
</configuration>
"""


class CassandraError(TxconformError):
    """Java, Maven or a version missing, or a node that did not start: one line, with the fix."""


@attrs.define
class Node:
    number: int  # 1, 2, 3: listens on 127.0.0.N
    host: str
    home: Path  # cassandra.yaml, logback.xml, data/, commitlog/, ...
    log: Path  # the node's system.log (logback), the JVM's own output beside it in stdout.log
    process: subprocess.Popen[bytes] | None = None
    started_s: float = 0.0  # seconds from its start to its native port answering
    command: list[str] = attrs.field(factory=list)  # how it was started, to start it again with its data

    def launch(self, native_port: int, seconds: float) -> None:
        """Start the node's process (again) and wait until its native port answers."""
        t0 = time.monotonic()
        with open(self.home / "logs" / "stdout.log", "ab") as out:  # the JVM's own output: a bad flag, a heap too small
            self.process = subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        wait_native(self, native_port, seconds)
        self.started_s = time.monotonic() - t0


@attrs.define
class CassandraCluster:
    """One or three Cassandra nodes of one version, started here and stopped by their process ids."""

    version: str
    storage_port: int
    native_port: int
    scratch: Path
    nodes: list[Node] = attrs.field(factory=list)
    lib: Path | None = None

    @property
    def contact_points(self) -> list[str]:
        return [n.host for n in self.nodes]

    @property
    def pids(self) -> list[int]:
        return [n.process.pid for n in self.nodes if n.process is not None]

    @property
    def label(self) -> str:
        return f"Apache Cassandra {self.version} ({len(self.nodes)} node{'s' if len(self.nodes) > 1 else ''})"

    def exited_why(self) -> str | None:
        """Which node's process has ended while held, with its exit code and log, if one has."""
        for n in self.nodes:
            if n.process is not None and n.process.poll() is not None:
                return f"cassandra node {n.number} ({n.host}) exited with code {n.process.returncode} while held; its log: {n.log}"
        return None

    def stop_node(self, node: Node) -> None:
        if node.process is not None:
            stop_process(node.process, STOP_SECONDS)

    def restart(self, node: Node, seconds: float = READY_SECONDS) -> None:
        """Start a stopped node again, with its data; back once its native port answers."""
        if node.process is not None and node.process.poll() is None:
            return
        node.launch(self.native_port, seconds)

    def stop(self) -> None:
        """Every node stopped by its own process id, the cluster's folder removed; idempotent."""
        for node in reversed(self.nodes):
            self.stop_node(node)
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> CassandraCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def parse_target(text: str) -> str:
    """``cassandra`` or ``cassandra:VERSION`` -> VERSION (DEFAULT_VERSION for the bare name)."""
    name, _, version = text.partition(":")
    if name != "cassandra":
        raise CassandraError(f"--target {text}: not a Cassandra target; give cassandra or cassandra:5.0.9")
    if not version:
        return DEFAULT_VERSION
    if not maven.VERSION.fullmatch(version):
        raise CassandraError(f"--target {text}: give the version as MAJOR.MINOR.PATCH, e.g. cassandra:5.0.9")
    if not version.startswith("5.0."):
        raise CassandraError(f"--target {text}: the real Cassandra target runs Cassandra 5.0.x (on Java 17); give e.g. cassandra:5.0.9")
    return version


def java_major(java: Path) -> int | None:
    """The feature version of ``java`` (17 for 17.0.15), from ``java -version``; None if it does not say."""
    try:
        out = subprocess.run([str(java), "-version"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2) or 0) if major == 1 else major


def java17() -> Path:
    """A Java 17 to run the nodes on: ``$TXCONFORM_CASSANDRA_JAVA_HOME``, ``$JAVA_HOME`` or ``java`` on PATH."""
    candidates: list[Path] = []
    for variable in (JAVA_HOME_VARIABLE, "JAVA_HOME"):
        home = os.environ.get(variable)
        if home and os.access(Path(home) / "bin" / "java", os.X_OK):
            candidates.append(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found:
        candidates.append(Path(found))
    if not candidates:
        raise CassandraError(
            "java not found: the real Cassandra target runs Cassandra 5.0 on Java 17 "
            f"(Debian: apt-get install openjdk-17-jdk-headless, or set {JAVA_HOME_VARIABLE})"
        )
    seen = []
    for java in candidates:
        major = java_major(java)
        if major == 17:
            return java
        seen.append(f"{java} is Java {major if major is not None else 'of unknown version'}")
    raise CassandraError(
        f"{seen[0]}: Cassandra 5.0 runs on Java 17 (on Java 21+ it stops at start: Policy.setPolicy is not supported); "
        f"install openjdk-17-jdk-headless and set {JAVA_HOME_VARIABLE} to it"
    )


def node_jars(version: str) -> Path:
    """The node's runtime classpath at ``version`` (resolved through Maven once, then cached)."""
    try:
        return maven.classpath(POM, version, "cassandra", "cassandra.version")
    except maven.MavenError as e:
        text = (
            str(e)
            .replace("the real Kafka target", "the real Cassandra target")
            .replace("Maven Central serves Kafka 4.0.0 to 4.4.0", "Maven Central serves Cassandra 5.0.0 to 5.0.9")
        )
        raise CassandraError(f"--target cassandra:{version}: {text}") from None


def environment_problem() -> str | None:
    """Why the real Cassandra target cannot run here (no Java 17, no mvn), or None."""
    try:
        java17()
        maven.mvn()
    except (CassandraError, maven.MavenError) as e:
        return str(e).replace("the real Kafka target", "the real Cassandra target")
    return None


def free_ports(hosts: tuple[str, ...], count: int) -> list[int]:
    """``count`` ports free on every one of ``hosts`` (nodes share their ports, each on its own address)."""
    ports: list[int] = []
    for _ in range(200):
        with socket.socket() as s:
            s.bind((hosts[0], 0))
            port = int(s.getsockname()[1])
        if port in ports:
            continue
        try:
            for host in hosts[1:]:
                with socket.socket() as s:
                    s.bind((host, port))
        except OSError:
            continue
        ports.append(port)
        if len(ports) == count:
            return ports
    raise CassandraError(f"no {count} ports free on all of {', '.join(hosts)}")


def cassandra_yaml(node: Node, seed: str, storage_port: int, native_port: int) -> str:
    """A minimal cassandra.yaml: the keys of apache/cassandra conf/cassandra.yaml (5.0) a node needs
    on a private address, and nothing that changes how reads, writes or batches behave."""
    home = node.home
    return "\n".join(
        [
            "cluster_name: txconform-cone",
            "num_tokens: 16",
            "allocate_tokens_for_local_replication_factor: 3",
            "partitioner: org.apache.cassandra.dht.Murmur3Partitioner",
            "endpoint_snitch: SimpleSnitch",
            "seed_provider:",
            "  - class_name: org.apache.cassandra.locator.SimpleSeedProvider",
            "    parameters:",
            f'      - seeds: "{seed}:{storage_port}"',
            f"listen_address: {node.host}",
            f"rpc_address: {node.host}",
            f"storage_port: {storage_port}",
            f"native_transport_port: {native_port}",
            "start_native_transport: true",
            "commitlog_sync: periodic",
            "commitlog_sync_period: 10000ms",
            "data_file_directories:",
            f"  - {home / 'data'}",
            f"commitlog_directory: {home / 'commitlog'}",
            f"saved_caches_directory: {home / 'saved_caches'}",
            f"hints_directory: {home / 'hints'}",
            f"cdc_raw_directory: {home / 'cdc_raw'}",
            # Nodes 2 and 3 join an empty cluster (the keyspace is created once all are up), so they
            # need not bootstrap: with a 1 s RING_DELAY, StorageService.bootstrap's check that gossip
            # saw a seed ("Unable to contact any seeds") failed a third node here, after its 1 s sleep.
            f"auto_bootstrap: {'true' if node.host == seed else 'false'}",
            "authenticator: AllowAllAuthenticator",
            "authorizer: AllowAllAuthorizer",
            "concurrent_compactors: 1",
            "",
        ]
    )


def command(java: Path, lib: Path, node: Node) -> list[str]:
    """How a node is started: bounded heap, Java 17's flags, its yaml and logback, in the foreground."""
    jamm = sorted(lib.glob("jamm-*.jar"))
    home = node.home
    return [
        str(java),
        *HEAP,
        *JVM17_OPTIONS,
        *([f"-javaagent:{jamm[0]}"] if jamm else []),
        f"-Dlogback.configurationFile=file://{home / 'logback.xml'}",
        f"-Dcassandra.logdir={home / 'logs'}",
        f"-Dcassandra.config=file://{home / 'cassandra.yaml'}",
        f"-Dcassandra.storagedir={home}",
        f"-Dcassandra.triggers_dir={home / 'triggers'}",
        "-Dcassandra-foreground=yes",
        # RING_DELAY (CassandraRelevantProperties.RING_DELAY, cassandra.ring_delay_ms) is 30 s by
        # default, waited even by a lone seed; 1 s halves a node's start here.
        "-Dcassandra.ring_delay_ms=1000",
        "-Dcassandra.skip_wait_for_gossip_to_settle=0",
        "-cp",
        maven.jars(lib),
        "org.apache.cassandra.service.CassandraDaemon",
    ]


def prepare(node: Node, seed: str, storage_port: int, native_port: int) -> None:
    for sub in ("data", "commitlog", "saved_caches", "hints", "cdc_raw", "triggers", "logs"):
        (node.home / sub).mkdir(parents=True, exist_ok=True)
    (node.home / "cassandra.yaml").write_text(cassandra_yaml(node, seed, storage_port, native_port))
    (node.home / "logback.xml").write_text(LOGBACK.format(log=node.log))


def start_cassandra(workdir: Path, version: str | None = None, nodes: int = 1, ready_seconds: float = READY_SECONDS) -> CassandraCluster:
    """Resolve and start ``nodes`` (1 or 3) Cassandra nodes of ``version``, one after another, each
    ready (its native port answers) before the next; every node stopped if one does not start."""
    version = version or DEFAULT_VERSION
    if nodes not in (1, 3):
        raise CassandraError(f"--nodes {nodes}: the real Cassandra target runs 1 or 3 nodes (127.0.0.1 to 127.0.0.3)")
    java = java17()
    lib = node_jars(version)
    hosts = HOSTS[:nodes]
    workdir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="txconform-cassandra-", dir=workdir))
    storage_port, native_port = free_ports(hosts, 2)
    cluster = CassandraCluster(version, storage_port, native_port, scratch, lib=lib)
    try:
        for k, host in enumerate(hosts, start=1):
            home = scratch / f"node-{k}"
            node = Node(k, host, home, home / "logs" / "system.log")
            cluster.nodes.append(node)
            prepare(node, hosts[0], storage_port, native_port)
            node.command = command(java, lib, node)
            node.launch(native_port, ready_seconds)
    except BaseException:
        for n in reversed(cluster.nodes):
            cluster.stop_node(n)
        for n in cluster.nodes:  # the logs outlive the cluster's folder, for the error's reader
            keep_log(n, workdir)
        cluster.stop()
        raise
    return cluster


def tail(node: Node, lines: int = 3) -> str:
    texts = []
    for path in (node.log, node.home / "logs" / "stdout.log"):
        if path.is_file():
            texts += [ln.strip() for ln in path.read_text(errors="replace").splitlines() if ln.strip().startswith(("ERROR", "Exception", "Caused by", "Error"))]
    return " | ".join(texts[-lines:])[:400]


def keep_log(node: Node, workdir: Path) -> None:
    """``workdir/cassandra-node-N.log``: the JVM's output and the node's system.log, kept when the
    cluster's folder goes (a node that did not start)."""
    kept = workdir / f"cassandra-node-{node.number}.log"
    parts = [p.read_text(errors="replace") for p in (node.home / "logs" / "stdout.log", node.log) if p.is_file()]
    kept.write_text("".join(parts))
    node.log = kept


def wait_native(node: Node, port: int, seconds: float) -> None:
    """Bounded wait until ``node`` accepts a connection on its native port; a one-line error if it exits or does not."""
    deadline = time.monotonic() + seconds
    assert node.process is not None
    while time.monotonic() < deadline:
        if node.process.poll() is not None:
            why = tail(node)
            raise CassandraError(
                f"cassandra node {node.number} ({node.host}) exited with code {node.process.returncode} before it was ready"
                + (f": {why}" if why else "")
                + f"; its log: {node.home.parent.parent / f'cassandra-node-{node.number}.log'}"
            )
        try:
            with socket.create_connection((node.host, port), timeout=1.0):
                return
        except OSError:
            time.sleep(0.5)
    raise CassandraError(
        f"cassandra node {node.number} ({node.host}) did not open its native port {port} within {seconds:.0f} s; "
        f"its log: {node.home.parent.parent / f'cassandra-node-{node.number}.log'}"
    )


def rss_mib(pid: int) -> float | None:
    """Resident memory of ``pid`` in MiB (from /proc), for the measurements in docs/cone.md."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def hold_message(cluster: CassandraCluster) -> str:
    return (
        f"{cluster.label} at {', '.join(cluster.contact_points)} port {cluster.native_port} "
        f"(pids {', '.join(map(str, cluster.pids))}); interrupt (Ctrl-C) to stop it"
    )
