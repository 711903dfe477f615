"""Staging: every input becomes the canonical tables (spark_replay.tables), written once as Parquet.

A staged run is a directory with one sub-directory per table (``entries/``, ``txn_log/``, ...),
each holding Parquet files written by the adapters: pure-Python adapters write Arrow tables with
pyarrow (``Stager.write``), Spark adapters write DataFrames (``Stager.write_frame``). The checks
read each directory with the table's explicit schema.

An adapter is a ``InputFormat``: a name (``--input-format``), a test that recognises its files,
and ``stage(paths, stager)``. Bad input raises ``ReplayInputError`` naming the file, the line or
field, and what to do about it; the CLI prints it on one line and exits 2.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pyarrow as pa
import pyarrow.parquet as pq

from spark_replay.tables import TABLES
from trace_check.errors import TxconformError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession


class ReplayInputError(TxconformError, ValueError):
    """Input the replay cannot read: the message names the file, line or field, and the fix."""


@attrs.frozen
class InputFormat:
    name: str
    description: str
    # Whether a file (or directory) is of this format, from its name and first bytes.
    sniff: Callable[[Path], bool]
    # Turn the inputs into tables through the stager.
    stage: Callable[[list[Path], Stager], None]
    # Whether stage() needs a Spark session (stager.spark).
    needs_spark: bool = False


class Stager:
    """Writes the canonical tables of one replay under ``root``."""

    def __init__(self, root: Path, spark_factory: Callable[[], SparkSession] | None = None) -> None:
        self.root = root
        self._spark_factory = spark_factory
        self._spark: SparkSession | None = None
        self._parts = itertools.count()
        self.rows: dict[str, int] = {name: 0 for name in TABLES}
        for name in TABLES:
            (root / name).mkdir(parents=True, exist_ok=True)

    @property
    def spark(self) -> SparkSession:
        if self._spark is None:
            if self._spark_factory is None:
                raise RuntimeError("this stager has no Spark session")
            self._spark = self._spark_factory()
        return self._spark

    def write(self, name: str, table: pa.Table) -> None:
        """Append Arrow ``table`` (schema TABLES[name]) to table ``name``."""
        schema = TABLES[name]
        if not table.schema.equals(schema):
            table = table.select(schema.names).cast(schema)
        if table.num_rows == 0:
            return
        pq.write_table(table, self.root / name / f"part-py-{next(self._parts):05d}.parquet")
        self.rows[name] += table.num_rows

    def write_frame(self, name: str, frame: DataFrame) -> None:
        """Append Spark DataFrame ``frame`` (the columns of TABLES[name]) to table ``name``."""
        frame = frame.select(*TABLES[name].names)
        before = set((self.root / name).glob("*.parquet"))
        frame.write.mode("append").parquet(str(self.root / name))
        written = set((self.root / name).glob("*.parquet")) - before
        self.rows[name] += sum(pq.ParquetFile(f).metadata.num_rows for f in written)
