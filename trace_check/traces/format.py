"""The trace format: JSON Lines, a header then one event per line (docs/trace-format.md).

Columns are flat, so a trace converts to a table (Parquet, a Spark DataFrame) without reshaping.
A column absent from an event, or null, is not logged; the checker leaves it free. Which columns a
protocol has is the protocol plug-in's (``trace_check.traces.protocol``); Kafka's JSON Schema is
``docs/trace-format.schema.json``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

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
    seed: int | None,
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


class TraceWriter:
    """Writes a trace's events one at a time (``writer(event)``), numbered 1, 2, ... in order, their
    columns in ``order`` (the protocol's column order) and then alphabetically; ``count`` so far."""

    def __init__(self, f: IO[str], order: Sequence[str]) -> None:
        self._f, self._order, self.count = f, order, 0

    def __call__(self, ev: dict[str, Any]) -> None:
        self.count += 1
        self._f.write(dumps({"event": self.count, **ev}, self._order) + "\n")


@contextlib.contextmanager
def writing(path: Path, head: dict[str, Any], order: Sequence[str]) -> Iterator[TraceWriter]:
    """A trace file written as events come: under ``path.tmp`` until the block ends without an
    error, then under ``path`` (never a half-written trace under the real name)."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(dumps(head, HEADER_ORDER) + "\n")
        yield TraceWriter(f, order)
    tmp.replace(path)


def write_trace(path: Path, head: dict[str, Any], events: Iterable[dict[str, Any]], order: Sequence[str]) -> None:
    """Write a trace file (``writing``)."""
    with writing(path, head, order) as write:
        for ev in events:
            write(ev)
