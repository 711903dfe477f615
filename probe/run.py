"""One probe: start the target, run the plan, record it, stop the target, check the record.

``record(...)`` returns the run's directory (``probe.jsonl``, ``target.log``, ``clients.log``);
the checks are the replay's (``spark_replay.adapters.probe`` reads ``probe.jsonl``), run by the CLI.
"""

from __future__ import annotations

import platform
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from probe import targets
from probe.history import FILE, Recorder
from probe.workload import Plan, Run


@dataclass
class Recorded:
    directory: Path
    target: str
    target_version: str
    errors: list[str] = field(default_factory=list)
    topic_left: Optional[str] = None  # why the probe's topic could not be deleted, if it could not


def client_versions() -> dict[str, str]:
    import confluent_kafka
    import kafka

    return {"confluent-kafka": confluent_kafka.__version__, "librdkafka": confluent_kafka.libversion()[0], "kafka-python": kafka.__version__}


def record(plan: Plan, target_name: str, out: Path, bootstrap: Optional[str] = None, command: str = "", seconds: float = 90.0) -> Recorded:
    """Run ``plan`` against the target and record it under ``out``; the target is stopped (if the
    probe started it) and the probe's topic deleted, whatever happens."""
    out.mkdir(parents=True, exist_ok=True)
    target = targets.start(target_name, out, bootstrap)
    try:
        header = {
            "target": target.name,
            "target_version": target.version,
            "bootstrap": target.bootstrap,
            "target_pid": target.pid,
            "clients": client_versions(),
            "python": platform.python_version(),
            "seed": plan.seed,
            "plan": plan.to_json(),
            "command": command,
        }
        rec = Recorder(out / FILE, header)
        run = Run(plan, target, rec, out, deadline_s=seconds)
        try:
            run.run()
        finally:
            left = run.delete_topics()
            rec.close()
        return Recorded(out, target.name, target.version, run.errors, left)
    finally:
        target.stop()
