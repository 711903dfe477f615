"""The trace format: JSON Lines, a header then one event per line (docs/trace-format.md).

Columns are flat, so a trace converts to a table (Parquet, a Spark DataFrame) without reshaping.
A column absent from an event, or null, is not logged; the checker leaves it free. Which columns a
protocol has is the protocol plug-in's (``trace_check.traces.protocol``); Kafka's JSON Schema is
``docs/trace-format.schema.json``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Iterator, Optional, Sequence

FORMAT = "txconform-trace"
# The version this txconform writes, and the versions it reads. Version 2 added 64-bit integer
# columns (a Kafka producer id) and new columns (a protocol's ``Columns.since`` names them); a
# version 1 trace is read and checked as before: it simply does not log them.
FORMAT_VERSION = 2
READ_VERSIONS = (1, 2)

HEADER_ORDER = ("format", "version", "protocol", "spec", "spec_hash", "generator", "seed", "workload", "faults",
                "bugs", "constants", "logged")


def spec_hash(spec_dir: Path, modules: Sequence[str]) -> str:
    """sha256 over the spec modules a trace is checked against (named ``folder/Module.tla``)."""
    h = hashlib.sha256()
    for module in modules:
        rel = f"{spec_dir.name}/{module}"
        h.update(rel.encode() + b"\0" + (spec_dir / module).read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def header(
    protocol: str,
    spec_dir: Path,
    spec_modules: Sequence[str],
    constants: dict[str, Any],
    seed: Optional[int],
    generator: str,
    logged: Iterable[str],
    **extra: Any,
) -> dict[str, Any]:
    h: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "protocol": protocol,
        "spec": f"{spec_dir.name}/{spec_modules[0]}",
        "spec_hash": spec_hash(spec_dir, spec_modules),
        "constants": constants,
        "seed": seed,
        "generator": generator,
        "logged": sorted(logged),
    }
    h.update(extra)
    return h


def dumps(obj: dict[str, Any], order: Iterable[str] = ()) -> str:
    """One line of JSON, keys in ``order`` first: the same object always gives the same bytes."""
    keys = [k for k in order if k in obj] + sorted(k for k in obj if k not in set(order))
    return json.dumps({k: obj[k] for k in keys}, separators=(",", ":"), ensure_ascii=False)


def event_lines(events: Iterable[dict[str, Any]], order: Sequence[str]) -> Iterator[str]:
    for n, ev in enumerate(events, 1):
        yield dumps({"event": n, **ev}, order)


def write_trace(path: Path, head: dict[str, Any], events: Iterable[dict[str, Any]], order: Sequence[str]) -> None:
    """Write a trace file; events are numbered 1, 2, ... in order, their columns in ``order``
    (the protocol's column order) and then alphabetically."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(head, HEADER_ORDER) + "\n")
        for line in event_lines(events, order):
            f.write(line + "\n")
    tmp.replace(path)  # never leave a half-written trace under the real name
