"""Faults on a real Kafka cluster, the Jepsen way: a node's process killed or paused mid-transaction.

``--faults kill-coordinator,pause-leader,...`` (with ``--target kafka --brokers 3``) runs the faults
one at a time while the workload runs: each waits ``GAP_SECONDS``, finds its node, and

- ``kill-coordinator`` / ``kill-leader``: SIGKILL to the process of the transaction coordinator (the
  leader of ``__transaction_state``'s only partition: every transactional id maps to it) or of the
  leader of the probe topic's partition 0, by its process id; ``DOWN_SECONDS`` later the node is
  started again from its data (``KafkaCluster.restart``);
- ``pause-coordinator`` / ``pause-leader``: SIGSTOP to that process, SIGCONT ``DOWN_SECONDS`` later
  (a stop-the-world pause, as a long GC would make; its sessions time out meanwhile).

The first fault waits until the workload is under way (a transaction has committed, at most
``START_SECONDS``); after a restart the next fault waits until the node answers Metadata again (at
most ``RESTART_SECONDS``: a KRaft node's restart took 10 to 15 s on a busy machine here, and over 60 s once beside four other sessions' work). Each fault
and its healing is a ``fault`` note of the record (node, pid, signal, how long the node took to
come back). At most ``MAX_FAULTS`` faults, each bounded in time; a fault left in place when the run
ends is healed before the final read of the log, and a stopped process is continued before the
cluster stops.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

import attrs

from trace_check.errors import TxconformError

KINDS = ("kill-coordinator", "kill-leader", "pause-coordinator", "pause-leader")
GAP_SECONDS = 3.0
DOWN_SECONDS = 4.0
MAX_FAULTS = 8
START_SECONDS = 60.0
RESTART_SECONDS = 120.0


@attrs.frozen
class Fault:
    action: str  # kill | pause
    role: str  # coordinator | leader

    @property
    def name(self) -> str:
        return f"{self.action}-{self.role}"


def parse(text: str) -> tuple[Fault, ...]:
    """``kill-coordinator,pause-leader`` -> the faults, in order; a one-line error for a bad one."""
    names = [t.strip() for t in text.split(",") if t.strip()]
    if not names:
        raise TxconformError(f"--faults {text!r}: name at least one of {','.join(KINDS)}")
    if len(names) > MAX_FAULTS:
        raise TxconformError(f"--faults: {len(names)} faults; at most {MAX_FAULTS} in one run")
    for n in names:
        if n not in KINDS:
            raise TxconformError(f"--faults {n}: no such fault; choose from {','.join(KINDS)}")
    return tuple(Fault(*n.split("-", 1)) for n in names)


class Injector:
    """The thread that applies ``faults`` to ``cluster`` (probe.kafka.KafkaCluster) one at a time."""

    def __init__(
        self, faults: tuple[Fault, ...], cluster: Any, topic: str, emit: Callable[..., Any], stop: threading.Event, under_way: threading.Event
    ) -> None:
        self.faults = faults
        self.under_way = under_way  # set by the workload once a transaction has committed
        self.cluster = cluster
        self.topic = topic
        self.emit = emit
        self.stop = stop
        self._held: tuple[Fault, Any] | None = None
        self._lock = threading.Lock()

    def node_of(self, role: str) -> Any:
        """The node now holding ``role``: the leader of __transaction_state-0 or of TOPIC-0."""
        from confluent_kafka.admin import AdminClient

        topic = "__transaction_state" if role == "coordinator" else self.topic
        admin = AdminClient({"bootstrap.servers": self.cluster.bootstrap, "log_level": 0})
        md = admin.list_topics(topic, timeout=10)
        t = md.topics.get(topic)
        if t is None or t.error is not None or 0 not in t.partitions or t.partitions[0].leader < 0:
            return None
        b = md.brokers[t.partitions[0].leader]
        return self.cluster.node_at(str(b.host), int(b.port))

    def run(self) -> None:
        if not self.under_way.wait(START_SECONDS):
            self.emit("note", what="fault-skipped", fault=",".join(f.name for f in self.faults), why=f"no transaction committed within {START_SECONDS:.0f} s")
            return
        for fault in self.faults:
            if self.stop.wait(GAP_SECONDS):
                break
            node = self.node_of(fault.role)
            if node is None or node.process is None or node.process.poll() is not None:
                self.emit("note", what="fault-skipped", fault=fault.name, why="no live node holds that role")
                continue
            pid = node.process.pid
            with self._lock:
                os.kill(pid, signal.SIGKILL if fault.action == "kill" else signal.SIGSTOP)
                self._held = (fault, node)
            self.emit("note", what="fault", fault=fault.name, node=node.node_id, pid=pid, signal="SIGKILL" if fault.action == "kill" else "SIGSTOP")
            self.stop.wait(DOWN_SECONDS)
            self.heal()

    def heal(self) -> None:
        """Undo the fault in place, if any: restart a killed node, continue a paused one."""
        with self._lock:
            held, self._held = self._held, None
            if held is None:
                return
            fault, node = held
            started = time.monotonic()
            if fault.action == "kill":
                node.process.wait(10)
                self.cluster.restart(node)
                what = {"signal": "restarted", "pid": node.process.pid}
            else:
                os.kill(node.process.pid, signal.SIGCONT)
                what = {"signal": "SIGCONT", "pid": node.process.pid}
            back = self._answers(node)
        self.emit("note", what="fault-healed", fault=fault.name, node=node.node_id, answers=back, seconds=round(time.monotonic() - started, 2), **what)

    def _answers(self, node: Any) -> bool:
        """Whether ``node`` answers Metadata again within RESTART_SECONDS."""
        from probe.targets import LOCAL, Target, TargetError, wait_ready

        one = Target(f"kafka node {node.node_id}", bootstrap=f"{LOCAL}:{node.port}", log=node.log)
        try:
            wait_ready(one, seconds=RESTART_SECONDS)
            return True
        except TargetError:
            return False
