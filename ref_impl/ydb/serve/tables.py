"""The rows of the YDB server's tables: the data the spec does not model.

The spec's table (``Table``, datashard DS) is one row under an optimistic lock: a transaction
that touches it takes the lock at the row's version (``TableWrite``), and its commit fails the
predicate when another transaction's write of the row committed since (``TablePredicate``,
"Transaction locks invalidated"). The server keeps the rows here, any number of tables and keys,
and the front takes the spec's one step for every transaction that touches any of them: the spec's
row stands for all the rows (front.py says how). A transaction's writes are kept apart until its
commit, and its reads see them (read your writes).
"""

from __future__ import annotations

from typing import Any

import attrs
from ydb._grpc.common.protos import ydb_value_pb2

from .errors import FrontError
from .sql import CreateTable, DeleteRow, Operand, SelectRow, SqlError, Upsert, literal_value, optional, param_value

Row = dict[str, Any]  # column -> ydb Value


@attrs.define
class Table:
    name: str
    columns: dict[str, str]  # name -> YQL type (sql.TYPES)
    key: str
    rows: dict[bytes, Row] = attrs.field(factory=dict)  # the key's Value, serialized -> the row


@attrs.define
class Pending:
    """A transaction's writes, applied at its commit: (table, key) -> the row, or None (deleted)."""

    writes: dict[tuple[str, bytes], Row | None] = attrs.field(factory=dict)


def key_bytes(v: Any) -> bytes:
    return bytes(v.SerializeToString(deterministic=True))


class Tables:
    def __init__(self) -> None:
        self.tables: dict[str, Table] = {}

    def create(self, s: CreateTable) -> None:
        name = s.table.rsplit("/", 1)[-1]
        if name in self.tables:
            raise FrontError("SCHEME_ERROR", f"table {name!r} exists")
        self.tables[name] = Table(name, dict(s.columns), s.key)

    def drop(self, table: str) -> None:
        self.table(table)
        del self.tables[table.rsplit("/", 1)[-1]]

    def table(self, path: str) -> Table:
        name = path.rsplit("/", 1)[-1]
        if name not in self.tables:
            raise FrontError("SCHEME_ERROR", f"table {name!r} does not exist (CREATE TABLE it first)")
        return self.tables[name]

    def _value(self, t: Table, column: str, o: Operand, params: dict[str, Any]) -> Any:
        if column not in t.columns:
            raise FrontError("BAD_REQUEST", f"table {t.name!r} has no column {column!r} (it has {', '.join(t.columns)})")
        try:
            if o.param:
                if o.param not in params:
                    raise FrontError("BAD_REQUEST", f"parameter {o.param} is not given (the request's parameters: "
                                     f"{', '.join(sorted(params)) or 'none'})")
                return param_value(t.columns[column], params[o.param], o.param)
            return literal_value(t.columns[column], o.literal)
        except SqlError as e:
            raise FrontError("BAD_REQUEST", f"column {column!r} of {t.name!r}: {e}") from None

    def _key(self, t: Table, column: str, o: Operand, params: dict[str, Any]) -> bytes:
        if column != t.key:
            raise FrontError("BAD_REQUEST", f"table {t.name!r}: a row is named by its key {t.key!r}, not {column!r} "
                             "(single rows by key are served)")
        v = self._value(t, column, o, params)
        if v.WhichOneof("value") == "null_flag_value":
            raise FrontError("BAD_REQUEST", f"table {t.name!r}: the key {t.key!r} is null")
        return key_bytes(v)

    def upsert(self, s: Upsert, params: dict[str, Any], pending: Pending) -> None:
        t = self.table(s.table)
        if t.key not in s.columns:
            raise FrontError("BAD_REQUEST", f"UPSERT INTO {t.name!r} without its key column {t.key!r}")
        values = {c: self._value(t, c, o, params) for c, o in zip(s.columns, s.values, strict=True)}
        k = key_bytes(values[t.key])
        row = dict(self.read(t, k, pending) or {})
        row.update(values)  # UPSERT keeps the columns it does not name
        pending.writes[(t.name, k)] = row

    def delete(self, s: DeleteRow, params: dict[str, Any], pending: Pending) -> None:
        t = self.table(s.table)
        pending.writes[(t.name, self._key(t, s.key_column, s.key, params))] = None

    def read(self, t: Table, k: bytes, pending: Pending | None) -> Row | None:
        if pending is not None and (t.name, k) in pending.writes:
            return pending.writes[(t.name, k)]
        return t.rows.get(k)

    def select(self, s: SelectRow, params: dict[str, Any], pending: Pending | None) -> Any:
        """The answer's result set: the row of the key, or none; every column Optional, as YDB
        types a nullable column."""
        t = self.table(s.table)
        cols = list(s.columns) or list(t.columns)
        for c in cols:
            if c not in t.columns:
                raise FrontError("BAD_REQUEST", f"table {t.name!r} has no column {c!r} (it has {', '.join(t.columns)})")
        row = self.read(t, self._key(t, s.key_column, s.key, params), pending)
        rows = [] if row is None else [ydb_value_pb2.Value(items=[row.get(c, ydb_value_pb2.Value(null_flag_value=0))
                                                                  for c in cols])]
        return ydb_value_pb2.ResultSet(columns=[ydb_value_pb2.Column(name=c, type=optional(t.columns[c])) for c in cols],
                                       rows=rows)

    def apply(self, pending: Pending) -> None:
        """A committed transaction's writes (of tables that still exist)."""
        for (name, k), row in pending.writes.items():
            t = self.tables.get(name)
            if t is None:
                continue
            if row is None:
                t.rows.pop(k, None)
            else:
                t.rows[k] = row
