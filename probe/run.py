"""One probe: start the target, run the plan, record it, stop the target, check the record.

``record(...)`` returns the run's directory (``probe.jsonl``, ``target.log``, ``clients.log``);
the checks are the replay's (``spark_replay.adapters.probe`` reads ``probe.jsonl``), run by the CLI.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Any

import attrs

from probe import targets
from probe.history import FILE, Recorder
from probe.targets import Target
from probe.workload import Plan, Run


@attrs.frozen
class TargetSpec:
    """What to run against: ``name`` (mock, tansu, kafka) with, for kafka, its version (None: the
    default), transaction version (None: the broker's default), node count and whether its data
    folders stay after it stops; or a running cluster at ``bootstrap``."""

    name: str = "mock"
    version: str | None = None
    transaction_version: int | None = None
    brokers: int = 1
    keep_data: bool = False
    bootstrap: str | None = None

    @property
    def label(self) -> str:
        if self.bootstrap:
            return "bootstrap"
        return f"{self.name}-{self.version}" if self.version else self.name


def start_target(spec: TargetSpec, workdir: Path) -> Target:
    """The target ``spec`` names, started (or reached) and ready for clients."""
    if spec.name == "kafka" and not spec.bootstrap:
        from probe.kafka import start_kafka

        targets.require_clients()
        return start_kafka(workdir, spec.version, spec.transaction_version, spec.brokers, spec.keep_data)
    return targets.start(spec.name, workdir, spec.bootstrap)


@attrs.define
class Recorded:
    directory: Path
    target: str
    target_version: str
    errors: list[str] = attrs.field(factory=list)
    topic_left: str | None = None  # why the probe's topic could not be deleted, if it could not


def client_versions(plan: Plan) -> dict[str, str]:
    import confluent_kafka
    import kafka

    from probe import java_client

    versions = {"confluent-kafka": confluent_kafka.__version__, "librdkafka": confluent_kafka.libversion()[0], "kafka-python": kafka.__version__}
    if plan.java:
        versions["kafka-clients (Java)"] = java_client.DEFAULT
    return versions


def record(
    plan: Plan, spec: TargetSpec, out: Path, command: str = "", seconds: float = 90.0, target: Target | None = None, faults: tuple[Any, ...] = ()
) -> Recorded:
    """Run ``plan`` against the target and record it under ``out``; the target is stopped (if the
    probe started it) and the probe's topic deleted, whatever happens. ``target``: one already
    running that the caller owns (tests share one broker): used, not stopped."""
    out.mkdir(parents=True, exist_ok=True)
    owned = target is None
    target = start_target(spec, out) if target is None else target
    try:
        header = {
            "target": target.name,
            "target_version": target.version,
            "bootstrap": target.bootstrap,
            "target_pid": target.pid,
            "clients": client_versions(plan),
            "python": platform.python_version(),
            "seed": plan.seed,
            "plan": plan.to_json(),
            "command": command,
            "faults": [f.name for f in faults],
        }
        rec = Recorder(out / FILE, header)
        run = Run(plan, target, rec, out, deadline_s=seconds, faults=faults)
        try:
            run.run()
        finally:
            left = run.delete_topics()
            rec.close()
        return Recorded(out, target.name, target.version, run.errors, left)
    finally:
        if owned:
            target.stop()
