"""One replay: stage the inputs as Parquet, run the checks on Spark, report.

The report mirrors ``txconform check``: per check pass / violated / not applicable, the number of
violations and of entities checked; the first violation with its row, the neighbouring entries
of the same (partition, producer id), the producer's transaction-log records and the spec
invariant it approximates; up to ``EXAMPLES`` violations per check in the report and all of them
in Parquet (``--out``). Exit status 0 (no violation), 1 (some), 2 (bad input).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from spark_replay.staging import InputFormat, ReplayInputError, Stager
from spark_replay.tables import TABLES

EXAMPLES = 32
CONTEXT = 3


@attrs.define
class CheckOutcome:
    id: str
    name: str
    invariant: str
    anomaly: str
    status: str  # "pass", "violated", "not applicable"
    violations: int = 0
    entities: int = 0
    entities_what: str = ""
    by_kind: dict[str, int] = attrs.field(factory=dict)
    first: dict[str, Any] | None = None
    neighbours: list[dict[str, Any]] = attrs.field(factory=list)
    txn_records: list[dict[str, Any]] = attrs.field(factory=list)
    examples: list[dict[str, Any]] = attrs.field(factory=list)
    note: str = ""


@attrs.define
class Report:
    inputs: list[str]
    formats: dict[str, list[str]]
    rows: dict[str, int]
    outcomes: list[CheckOutcome]
    seconds: float
    staged: str = ""

    @property
    def violated(self) -> bool:
        return any(o.status == "violated" for o in self.outcomes)

    @property
    def exit_code(self) -> int:
        return 1 if self.violated else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "inputs": self.inputs,
            "formats": self.formats,
            "rows": self.rows,
            "verdict": "violated" if self.violated else "clean",
            "seconds": round(self.seconds, 1),
            "checks": [attrs.asdict(o) for o in self.outcomes],
        }


def detect(path: Path, formats: dict[str, InputFormat]) -> InputFormat:
    for fmt in formats.values():
        if fmt.sniff(path):
            return fmt
    names = ", ".join(formats)
    raise ReplayInputError(f"{path}: not a format replay knows; name it with --input-format ({names})")


def _jsonable(row: Any) -> dict[str, Any]:
    d = row.asDict(recursive=True)
    return {k: v for k, v in d.items() if v is not None}


def _quiet(line: str) -> None:
    """Progress told to no one."""


@attrs.frozen
class ReplayOptions:
    """How ``run_replay`` replays: ``input_format`` names the inputs' format (None: each is
    detected); ``spark_factory`` makes the Spark session (None: spark_replay.session's);
    ``out`` keeps the staged tables and every violation (None: a temporary folder, removed);
    ``checks`` the checks to run (None: all); ``progress`` is told each stage; ``plan`` is how
    the checks of one partition's log run (checks.Derived)."""

    input_format: str | None = None
    spark_factory: Callable[[], Any] | None = None
    out: Path | None = None
    checks: list[str] | None = None
    progress: Callable[[str], None] = _quiet
    plan: str = "pass"


DEFAULT_REPLAY = ReplayOptions()


def run_replay(inputs: list[Path], formats: dict[str, InputFormat], options: ReplayOptions = DEFAULT_REPLAY) -> Report:
    """Replay ``inputs`` of ``formats``, as ``options`` say."""
    from spark_replay.session import spark_session

    input_format, spark_factory, out, checks, progress, plan = (
        options.input_format, options.spark_factory, options.out, options.checks, options.progress, options.plan)

    t0 = time.perf_counter()
    missing = [p for p in inputs if not p.exists()]
    if missing:
        raise ReplayInputError(f"{missing[0]}: no such file or directory")
    if input_format is not None and input_format not in formats:
        raise ReplayInputError(f"--input-format {input_format}: unknown; use one of {', '.join(formats)}")
    groups: dict[str, list[Path]] = {}
    for p in inputs:
        if input_format:
            groups.setdefault(input_format, []).append(p)
            continue
        if p.is_dir() and not any(f.sniff(p) for f in formats.values()):
            # a directory of inputs: each file a format recognises; the others are named, not read
            files = sorted(f for f in p.iterdir() if f.is_file())
            known = [(f, next((fmt for fmt in formats.values() if fmt.sniff(f)), None)) for f in files]
            skipped = [f.name for f, fmt in known if fmt is None]
            if len(skipped) == len(files):
                raise ReplayInputError(f"{p}: no file in it is of a format replay knows; name it with --input-format ({', '.join(formats)})")
            if skipped:
                progress(f"{p}: skipping {len(skipped)} file(s) of no known format: {', '.join(skipped)}")
            for f, fmt in known:
                if fmt is not None:
                    groups.setdefault(fmt.name, []).append(f)
            continue
        groups.setdefault(detect(p, formats).name, []).append(p)

    factory = spark_factory or spark_session
    staged = Path(out / "staged") if out else Path(tempfile.mkdtemp(prefix="txconform-replay-"))
    if staged.exists() and out:
        shutil.rmtree(staged)
    session: list[Any] = []

    def get_spark() -> Any:
        if not session:
            progress("starting Spark")
            session.append(factory())
        return session[0]

    stager = Stager(staged, get_spark)
    for name, paths in groups.items():
        progress(f"staging {len(paths)} {name} input(s)")
        formats[name].stage(paths, stager)
    if not any(stager.rows.values()):
        # a replay that read nothing would report no violation: say so instead (a log directory
        # whose name looked like a partition's once staged nothing and passed as clean)
        shutil.rmtree(staged, ignore_errors=True)
        names = ", ".join(str(p) for p in inputs)
        raise ReplayInputError(f"{names}: nothing to replay: no record, batch or event was read from it "
                               f"({', '.join(groups)} input); check that it holds data, or name its format with --input-format")
    spark = get_spark()
    try:
        report = check_tables(spark, staged, stager.rows, checks, out, progress, plan)
    finally:
        if not out:
            shutil.rmtree(staged, ignore_errors=True)
    report.inputs = [str(p) for p in inputs]
    report.formats = {k: [str(p) for p in v] for k, v in groups.items()}
    report.seconds = time.perf_counter() - t0
    report.staged = str(staged) if out else ""
    return report


def load_tables(spark: Any, staged: Path, rows: dict[str, int]) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    from spark_replay.checks import Tables

    frames = {}
    for name, schema in TABLES.items():
        spark_schema = from_arrow_schema(schema)
        if rows.get(name, 0) > 0:
            frames[name] = spark.read.schema(spark_schema).parquet(str(staged / name))
        else:
            frames[name] = spark.createDataFrame([], spark_schema)
    return Tables(spark=spark, counts=dict(rows), **frames)


def check_tables(
    spark: Any, staged: Path, rows: dict[str, int], only: list[str] | None, out: Path | None, progress: Callable[[str], None], plan: str = "pass"
) -> Report:
    """The checks (``only``, else all) on the tables staged under ``staged`` (``rows``: their row
    counts), each violated one's first violations with their context; with ``out``, every violation
    under ``out/violations/<check>/``. The caller fills in the inputs, formats and time."""
    from pyspark.sql import functions as F

    from spark_replay.checks import CHECKS, Derived
    from spark_replay.partition_pass import KEY

    tables = load_tables(spark, staged, rows)
    derived = Derived(tables, plan)
    outcomes = []
    for check in CHECKS:
        if (only and check.id not in only) or (not only and not check.default):
            continue
        absent = [t for t in check.needs if rows.get(t, 0) == 0]
        if absent:
            outcomes.append(CheckOutcome(check.id, check.name, check.invariant, check.anomaly, "not applicable", note=f"no {' or '.join(absent)} in the input"))
            continue
        reason = check.inapplicable(derived)
        if reason:
            outcomes.append(CheckOutcome(check.id, check.name, check.invariant, check.anomaly, "not applicable", note=reason))
            continue
        progress(f"{check.id} {check.name}")
        found = check.run(derived).cache()
        kinds = {r["kind"]: r["count"] for r in found.groupBy("kind").count().collect()}
        total = sum(kinds.values())
        outcome = CheckOutcome(
            check.id,
            check.name,
            check.invariant,
            check.anomaly,
            "violated" if total else "pass",
            violations=total,
            entities=check.count_entities(derived),
            entities_what=check.entities,
            by_kind=kinds,
            note=check.unseen(derived),
        )
        if total:
            ordered = found.orderBy(
                F.col("event").asc_nulls_last(),
                F.col("ts_ms").asc_nulls_last(),
                "trace_id",
                "topic",
                "partition",
                F.col("offset").asc_nulls_last(),
            )
            examples = [_jsonable(r) for r in ordered.limit(EXAMPLES).collect()]
            # and the first of each kind the first EXAMPLES do not show
            for kind in sorted(set(kinds) - {e.get("kind") for e in examples}):
                examples += [_jsonable(r) for r in ordered.where(F.col("kind") == kind).limit(1).collect()]
            outcome.examples = examples
            first = examples[0]
            outcome.first = first
            if all(first.get(k) is not None for k in ("producer_id", "offset", "topic", "partition")):
                cond = [F.col(k) == first.get(k) for k in KEY if first.get(k) is not None]
                near = tables.entries
                for c in cond:
                    near = near.where(c)
                # the producer's batches nearest the violation on the partition: CONTEXT before, CONTEXT after
                off = first["offset"]
                before = near.where(F.col("base_offset") <= off).orderBy(F.col("base_offset").desc()).limit(CONTEXT + 1).collect()
                after = near.where(F.col("base_offset") > off).orderBy("base_offset").limit(CONTEXT).collect()
                outcome.neighbours = [_jsonable(r) for r in [*reversed(before), *after]]
            if first.get("producer_id") is not None:
                recs = tables.txn_log.where((F.col("producer_id") == first["producer_id"]) & (F.col("trace_id") == first.get("trace_id")))
                # the records around the violation: up to 8 at or before it, 4 after
                at_col = "event" if first.get("event") is not None else "ts_ms"
                at = first.get(at_col)
                if at is None:
                    rows_ = recs.orderBy("ts_ms", "log_offset").limit(12).collect()
                else:
                    before = recs.where(F.col(at_col) <= at).orderBy(F.col(at_col).desc(), F.col("log_offset").desc()).limit(8).collect()
                    after = recs.where(F.col(at_col) > at).orderBy(at_col, "log_offset").limit(4).collect()
                    rows_ = [*reversed(before), *after]
                outcome.txn_records = [_jsonable(r) for r in rows_]
            if out:
                found.write.mode("overwrite").parquet(str(out / "violations" / check.id))
        found.unpersist()
        outcomes.append(outcome)
    return Report(inputs=[], formats={}, rows=dict(rows), outcomes=outcomes, seconds=0.0)
