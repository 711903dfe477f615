"""``txconform replay``: check large traces and real Kafka logs on Spark (spark_replay/)."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from trace_check.errors import TxconformError


def add_parsers(sub: Any) -> None:
    rep = sub.add_parser(
        "replay",
        help="check traces, Kafka log segments, kafka-dump-log output or Jepsen histories on Spark",
        description="Turn the inputs into canonical tables (Parquet) and run the replay checks on Spark, each an "
        "approximation of a spec invariant on what a deployment exposes (docs/replay.md). Local Spark by default; "
        "--master (or spark-submit) runs on a cluster. Exit status: 0 no violation, 1 some, 2 bad input.",
    )
    rep.add_argument("inputs", nargs="+", type=Path, metavar="INPUT", help="files or log directories")
    rep.add_argument(
        "--input-format", default=None, metavar="F", help="the inputs' format (default: recognised per file): staged, trace, segment, dump-log, jepsen"
    )
    rep.add_argument("--master", default=None, metavar="URL", help="Spark master, e.g. spark://127.0.0.1:7077 (default: local[*], or what spark-submit set)")
    rep.add_argument("--checks", default="", metavar="IDS", help="run only these checks, e.g. P1,P4,C1 (C5, dependency cycles, runs only when named)")
    rep.add_argument(
        "--plan",
        choices=("pass", "windows"),
        default="pass",
        help="how the checks of each partition's log run: pass (default: one shuffle, then each partition's log in one pass "
        "over Arrow, which must fit an executor's memory) or windows (Spark windows and joins per check: slower, no such limit)",
    )
    rep.add_argument("--json", action="store_true", help="print the report as JSON on stdout (progress stays on stderr)")
    rep.add_argument(
        "--out", type=Path, default=None, metavar="DIR", help="keep the staged tables (DIR/staged) and write every violation as Parquet (DIR/violations/ID)"
    )
    rep.set_defaults(func=cmd_replay)

    gen = sub.add_parser(
        "generate-logs",
        help="write large Kafka-shaped logs with planted violations, as staged tables replay reads",
        description="Write about N rows of valid Kafka-shaped logs (data batches, markers, __transaction_state "
        "records, read_committed fetches) as staged Parquet tables under DIR, with one planted violation of each kind "
        "the checks know (spark_replay/generate.py); list what was planted and where. `txconform replay DIR` must find "
        "exactly those. The same seed writes the same files.",
    )
    gen.add_argument("dir", type=Path, metavar="DIR", help="an empty or new directory")
    gen.add_argument("--events", default="1M", metavar="N", help="rows to write, e.g. 200k, 1M, 10M (default 1M)")
    gen.add_argument("--seed", type=int, default=0, metavar="S", help="the generator's seed (default 0)")
    gen.add_argument("--no-plants", action="store_true", help="write clean logs only")
    gen.add_argument("--force", action="store_true", help="replace DIR if generate-logs wrote it (it holds planted.json)")
    gen.set_defaults(func=cmd_generate_logs)


def cmd_replay(args: argparse.Namespace, out: Console, err: Console) -> int:
    try:
        from spark_replay.adapters import FORMATS
        from spark_replay.replay import ReplayOptions, Report, run_replay
        from spark_replay.session import replay_spark  # noqa: F401 (on_spark's; checked here for the extra)
    except ImportError as e:
        raise TxconformError(f"replay needs the spark extra ({e.name} is missing): pip install 'txconform[spark]'") from None
    from spark_replay.checks import CHECKS

    # Spark's own messages go to a log, not in front of the user.
    log = (args.out / "spark.log") if args.out else Path(tempfile.gettempdir()) / f"txconform-replay-{os.getpid()}-spark.log"
    only = [c.strip() for c in args.checks.split(",") if c.strip()]
    unknown = [c for c in only if c not in {k.id for k in CHECKS}]
    if unknown:
        raise TxconformError(f"--checks {unknown[0]}: no such check; the checks are {', '.join(k.id for k in CHECKS)}")
    stage = ["starting"]

    def progress(s: str) -> None:
        stage[0] = s
        err.print(f"replay: {s}", markup=False)

    def work(spark_factory: Any) -> Any:
        options = ReplayOptions(input_format=args.input_format, spark_factory=spark_factory, out=args.out, checks=only or None,
                                progress=progress, plan=args.plan)
        return run_replay(args.inputs, FORMATS, options)

    report: Report = on_spark(args.master, log, work, where=lambda: stage[0])
    if args.json:
        out.print_json(json.dumps(report.to_json()))
        return report.exit_code
    print_report(report, out)
    if args.out:
        out.print(f"\nviolations and staged tables under {args.out}", markup=False)
    verdict = "violations found" if report.violated else "no violation"
    out.print(f"\nreplay: {verdict} ({report.seconds:.1f} s)", markup=False)
    return report.exit_code


def print_report(report: Any, out: Console) -> None:
    """The table of checks, their notes, and each violated check's first violation with its context."""
    rows = ", ".join(f"{n} {c:,}" for n, c in report.rows.items() if c)
    out.print(f"staged: {rows}", markup=False)
    table = Table(title="Replay checks")
    for col in ("check", "invariant", "status", "violations", "checked"):
        table.add_column(col, justify="right" if col in ("violations",) else "left")
    for o in report.outcomes:
        checked = f"{o.entities:,} {o.entities_what}" if o.status != "not applicable" else o.note
        table.add_row(*(Text(x) for x in (f"{o.id} {o.name}", o.invariant, o.status, f"{o.violations:,}", checked)))
    out.print(table)
    for o in report.outcomes:
        if o.note and o.status != "not applicable":
            out.print(f"{o.id}: {o.note}", markup=False)
    for o in report.outcomes:
        if not o.first:
            continue
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(o.by_kind.items()))
        out.print(f"\n{o.id} violated ({kinds}); it approximates {o.invariant}. First violation:", markup=False)
        out.print(f"  {_where(o.first)}: {o.first.get('kind')}: {o.first.get('detail')}", markup=False)
        if o.neighbours:
            out.print("  entries of the same partition and producer around it:", markup=False)
            for n in o.neighbours:
                out.print(f"    {_entry(n)}", markup=False)
        if o.txn_records:
            out.print("  the producer's transaction-log records:", markup=False)
            for r in o.txn_records:
                parts = ",".join(f"{p['topic']}-{p['partition']}" for p in r.get("partitions") or [])
                out.print(f"    {_at(r)} {r.get('txn_id')} {r.get('state')} epoch {r.get('epoch')} [{parts}]", markup=False)


def on_spark(master: str | None, log: Path, work: Callable[[Any], Any], where: Callable[[], str] = lambda: "") -> Any:
    """``work(spark_factory)`` in a replay's Spark session (spark_replay.session.replay_spark, stopped
    after it); Spark's failures (Py4JJavaError, PySparkException, ...) become one line, not a JVM
    stack, naming ``where()`` it failed and Spark's log."""
    from spark_replay.session import replay_spark

    try:
        with replay_spark(master, log=log) as spark_factory:
            return work(spark_factory)
    except TxconformError:
        raise
    except Exception as e:
        if type(e).__module__.split(".")[0] not in ("py4j", "pyspark"):
            raise
        at = where()
        raise TxconformError(f"Spark failed{f' at {at!r}' if at else ''}: {_first_line(e)}; Spark's log: {log}") from None


def _first_line(e: Exception) -> str:
    """The JVM's own message of a Spark failure, without its stack."""
    text = str(getattr(e, "java_exception", None) or e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
    for ln in lines:  # the JVM exception's class and message, e.g. "SparkException: Not enough memory ..."
        m = re.search(r"([\w$]+(?:Exception|Error)): (.+)", ln)
        if m:
            return f"{m.group(1)}: {m.group(2)}"[:400]
    return (lines[0] if lines else type(e).__name__)[:400]


def _count(text: str) -> int:
    t = text.strip().lower().replace(",", "").replace("_", "")
    mult = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}.get(t[-1:], 1)
    try:
        n = float(t[:-1] if mult > 1 else t) * mult
    except ValueError:
        n = -1
    if n < 1_000 or n != int(n):
        raise TxconformError(f"--events {text}: not a count of at least 1,000 rows; write it as 200000, 200k or 1M")
    return int(n)


PLANTED = "planted.json"  # what generate-logs planted, next to the tables (replay ignores it)
KEY_NAMES = ("trace_id", "topic", "partition", "producer_id", "offset", "event")


def cmd_generate_logs(args: argparse.Namespace, out: Console, err: Console) -> int:
    try:
        from spark_replay.generate import generate
    except ImportError as e:
        raise TxconformError(f"generate-logs needs the spark extra ({e.name} is missing): pip install 'txconform[spark]'") from None
    events = _count(args.events)
    if args.dir.exists() and (not args.dir.is_dir() or any(args.dir.iterdir())):
        if not (args.force and (args.dir / PLANTED).is_file()):
            why = "add --force to replace it" if (args.dir / PLANTED).is_file() else "name a new one"
            raise TxconformError(f"{args.dir}: exists and is not an empty directory; {why} (nothing was written)")
        shutil.rmtree(args.dir)
    g = generate(args.dir, events, seed=args.seed, plants=not args.no_plants)
    listed = [{"check": p.check, "kind": p.kind, "what": p.what, **dict(zip(KEY_NAMES, p.key, strict=True))} for p in g.plants]
    (args.dir / PLANTED).write_text(json.dumps({"events": events, "seed": args.seed, "rows": g.rows, "planted": listed}, indent=1) + "\n")
    rows = ", ".join(f"{n} {c:,}" for n, c in g.rows.items())
    out.print(f"wrote {g.events:,} rows in {g.traces} trace(s) under {args.dir}: {rows}", markup=False)
    if g.plants:
        out.print(f"planted {len(g.plants)} violations, one of each kind:", markup=False)
        for p in g.plants:
            _trace_id, topic, partition, pid, offset, event = p.key
            where = " ".join(
                s
                for s in (
                    f"{topic}-{partition}" if topic is not None else "__transaction_state",
                    f"offset {offset}" if offset is not None else "",
                    f"producer {pid}" if pid is not None else "",
                    f"event {event}",
                )
                if s
            )
            out.print(f"  {p.check} {p.kind}: {where}: {p.what}", markup=False)
    out.print(f"the list is in {args.dir / PLANTED}; next: txconform replay {args.dir}", markup=False)
    return 0


def _at(row: dict[str, Any]) -> str:
    return f"event {row['event']}" if row.get("event") is not None else f"ts {row.get('ts_ms')}"


def _where(v: dict[str, Any]) -> str:
    place = f"{v.get('topic')}-{v.get('partition')}" if v.get("topic") is not None else "-"
    off = f" offset {v['offset']}" if v.get("offset") is not None else ""
    pid = f" producer {v['producer_id']}" if v.get("producer_id") is not None else ""
    src = Path(str(v.get("trace_id", ""))).name
    return f"{src} {_at(v)} {place}{off}{pid}"


def _entry(n: dict[str, Any]) -> str:
    what = (
        f"{n.get('control')} marker (coordinator epoch {n.get('coord_epoch')})"
        if n.get("is_control")
        else (f"data seq {n.get('base_seq')}..{n.get('last_seq')}")
    )
    return f"offset {n.get('base_offset')} {_at(n)} epoch {n.get('producer_epoch')} {what}"
