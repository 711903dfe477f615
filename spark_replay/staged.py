"""Replaying tables that are already staged: a directory with ``entries/``, ``txn_log/``, ... of
Parquet files in the canonical schemas (spark_replay.tables), such as ``txconform replay --out
DIR`` keeps in ``DIR/staged`` or spark_replay.generate writes.

Two ways in: ``run_checks(staged, spark)`` runs the checks on the directory in place (nothing is
copied), and ``STAGED`` is an input format for ``run_replay``, which links the files into the
replay's own staging directory.
"""

from __future__ import annotations

import os
import shutil
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from spark_replay.replay import Report, check_tables
from spark_replay.staging import InputFormat, ReplayInputError, Stager
from spark_replay.tables import TABLES


def _files(root: Path, name: str) -> list[Path]:
    return sorted((root / name).glob("*.parquet")) if (root / name).is_dir() else []


def staged_rows(root: Path) -> dict[str, int]:
    """The rows of each table under ``root``, from the Parquet footers."""
    return {name: sum(pq.ParquetFile(f).metadata.num_rows for f in _files(root, name)) for name in TABLES}


def _check_schemas(root: Path) -> None:
    for name, schema in TABLES.items():
        for f in _files(root, name)[:1]:
            got = pq.read_schema(f)
            missing = [c for c in schema.names if c not in got.names]
            if missing:
                raise ReplayInputError(f"{f}: not a staged {name} table (no column {', '.join(missing)}); write it with the schema of spark_replay/tables.py")


def run_checks(
    staged: Path,
    spark: Any,
    checks: list[str] | None = None,
    out: Path | None = None,
    progress: Callable[[str], None] = lambda s: None,
    plan: str = "pass",
) -> Report:
    """Run the checks on an already staged directory; with ``out``, every violation is written
    to ``out/violations/<check>/`` as Parquet (as ``txconform replay --out`` does)."""
    t0 = time.perf_counter()
    if not sniff(staged):
        raise ReplayInputError(f"{staged}: not a staged directory (no entries/, txn_log/ or reads/ with Parquet files)")
    _check_schemas(staged)
    rows = staged_rows(staged)
    report = check_tables(spark, staged, rows, checks, out, progress, plan)
    report.inputs = [str(staged)]
    report.formats = {"staged": [str(staged)]}
    report.seconds = time.perf_counter() - t0
    return report


def sniff(path: Path) -> bool:
    return path.is_dir() and any(_files(path, name) for name in TABLES)


def stage(paths: list[Path], stager: Stager) -> None:
    for root in paths:
        _check_schemas(root)
        for name in TABLES:
            for n, f in enumerate(_files(root, name)):
                target = stager.root / name / f"part-staged-{zlib.crc32(str(root).encode()):08x}-{n:05d}.parquet"
                try:
                    os.link(f, target)
                except OSError:
                    shutil.copyfile(f, target)
                stager.rows[name] += pq.ParquetFile(f).metadata.num_rows


STAGED = InputFormat("staged", "directories of already staged Parquet tables (entries/, txn_log/, ...)", sniff, stage)
