"""The statements ``txconform serve --protocol ydb`` runs through the Query service's
``ExecuteQuery``: what the SDK's topic tests and examples send (``select n``, ``select n as
name``), and single-row statements by key on simple tables, with parameters (``DECLARE``d or
not) or literals:

- ``CREATE TABLE t (k Int64, v Utf8, ..., PRIMARY KEY (k))`` and ``DROP TABLE t`` (outside a
  transaction, as YDB's scheme queries are);
- ``UPSERT INTO t (k, v, ...) VALUES ($k, $v, ...)``;
- ``SELECT * | c1, c2 FROM t WHERE k = $k``;
- ``DELETE FROM t WHERE k = $k``.

Anything else is a ``SqlError`` whose message says what is served. Parsing only: what a
statement does is the front's (front.py). Values stay YDB's protobuf ``Value`` and ``Type``
(ydb ``ydb_value_pb2``), as the request brings them and the answer's result set sends them.
"""

from __future__ import annotations

import re
from typing import Any

import attrs
from ydb._grpc.common.protos import ydb_value_pb2

T = ydb_value_pb2.Type
# the column types served: YQL's name -> (the primitive type id, the Value field that holds it)
TYPES: dict[str, tuple[int, str]] = {
    "int32": (T.INT32, "int32_value"),
    "int64": (T.INT64, "int64_value"),
    "uint32": (T.UINT32, "uint32_value"),
    "uint64": (T.UINT64, "uint64_value"),
    "utf8": (T.UTF8, "text_value"),
    "text": (T.UTF8, "text_value"),
    "string": (T.STRING, "bytes_value"),
    "bytes": (T.STRING, "bytes_value"),
    "bool": (T.BOOL, "bool_value"),
    "double": (T.DOUBLE, "double_value"),
}
FIELD: dict[int, str] = {tid: field for tid, field in TYPES.values()}
SERVED = ("select n [as name]; CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k)); DROP TABLE t; "
          "UPSERT INTO t (k, v) VALUES ($k, $v); SELECT * FROM t WHERE k = $k; DELETE FROM t WHERE k = $k")


class SqlError(ValueError):
    """A statement this server does not run: the message says what it runs."""


@attrs.frozen
class Operand:
    """A value in a statement: a parameter ``$name`` or a literal (an integer, a 'string', true/false)."""

    param: str = ""
    literal: Any = None


@attrs.frozen
class SelectN:
    n: int
    name: str


@attrs.frozen
class CreateTable:
    table: str
    columns: tuple[tuple[str, str], ...]  # (name, YQL type in lower case)
    key: str


@attrs.frozen
class DropTable:
    table: str


@attrs.frozen
class Upsert:
    table: str
    columns: tuple[str, ...]
    values: tuple[Operand, ...]


@attrs.frozen
class SelectRow:
    table: str
    columns: tuple[str, ...]  # () for *
    key_column: str
    key: Operand


@attrs.frozen
class DeleteRow:
    table: str
    key_column: str
    key: Operand


Statement = SelectN | CreateTable | DropTable | Upsert | SelectRow | DeleteRow
DML = (Upsert, SelectRow, DeleteRow)

_NAME = r"`?([A-Za-z_][A-Za-z0-9_/]*)`?"
_OPERAND = r"(\$[A-Za-z_][A-Za-z0-9_]*|-?\d+|'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|true|false)"
_SELECT_N = re.compile(r"^select\s+(\d{1,9})(?:\s+as\s+" + _NAME + r")?$", re.I)
_CREATE = re.compile(r"^create\s+table\s+" + _NAME + r"\s*\((.*)\)$", re.I | re.S)
_DROP = re.compile(r"^drop\s+table\s+" + _NAME + "$", re.I)
_UPSERT = re.compile(r"^(?:upsert|replace)\s+into\s+" + _NAME + r"\s*\(([^)]*)\)\s*values\s*\((.*)\)$", re.I | re.S)
_SELECT = re.compile(r"^select\s+(\*|[A-Za-z_][A-Za-z0-9_,\s`]*?)\s+from\s+" + _NAME + r"\s+where\s+" + _NAME
                     + r"\s*=\s*" + _OPERAND + "$", re.I | re.S)
_DELETE = re.compile(r"^delete\s+from\s+" + _NAME + r"\s+where\s+" + _NAME + r"\s*=\s*" + _OPERAND + "$", re.I | re.S)
_DECLARE = re.compile(r"^declare\s+\$[A-Za-z_][A-Za-z0-9_]*\s+as\s+.+$", re.I | re.S)
_PRIMARY = re.compile(r"^primary\s+key\s*\(\s*" + _NAME + r"\s*\)$", re.I)
_COLUMN = re.compile(r"^" + _NAME + r"\s+([A-Za-z0-9]+)(\s+not\s+null)?$", re.I)


def _operand(text: str) -> Operand:
    if text.startswith("$"):
        return Operand(param=text)
    if text.lower() in ("true", "false"):
        return Operand(literal=text.lower() == "true")
    if text[0] in "'\"":
        return Operand(literal=re.sub(r"\\(.)", r"\1", text[1:-1]))  # \' \" \\ as the character
    return Operand(literal=int(text))


def _statements(text: str) -> list[str]:
    """The statements of ``text`` without comments, ``PRAGMA`` and ``DECLARE`` (the request's
    parameters carry their types)."""
    lines = [re.sub(r"--.*$", "", line) for line in text.splitlines()]
    out = []
    for part in "\n".join(lines).split(";"):
        s = " ".join(part.split())
        if s and not _DECLARE.match(s) and not s.lower().startswith("pragma "):
            out.append(s)
    return out


def parse(text: str) -> Statement:
    """The one statement of ``text``; SqlError for anything this server does not run."""
    stmts = _statements(text)
    shown = " ".join(text.split())[:80]
    if len(stmts) != 1:
        raise SqlError(f"query <{shown}>: this server runs one statement a query, not {len(stmts)} (it runs: {SERVED})")
    s = stmts[0]
    if m := _SELECT_N.match(s):
        return SelectN(int(m.group(1)), m.group(2) or "column0")
    if m := _CREATE.match(s):
        return _create(m.group(1), m.group(2), shown)
    if m := _DROP.match(s):
        return DropTable(m.group(1))
    if m := _UPSERT.match(s):
        cols = tuple(c.strip().strip("`") for c in m.group(2).split(","))
        given = m.group(3).strip()
        if not re.fullmatch(_OPERAND + r"(?:\s*,\s*" + _OPERAND + ")*", given, re.I):
            raise SqlError(f"query <{shown}>: cannot read the VALUES ({given}) (parameters $name, numbers, 'strings' "
                           "with \\' inside, true or false, comma-separated)")
        vals = tuple(re.findall(_OPERAND + r"\s*(?:,|$)", given, re.I))
        if len(vals) != len(cols) or not all(cols):
            raise SqlError(f"query <{shown}>: UPSERT names {len(cols)} column(s) and gives {len(vals)} value(s) "
                           "(one row: VALUES ($a, $b, ...), parameters or literals)")
        return Upsert(m.group(1), cols, tuple(_operand(v) for v in vals))
    if m := _SELECT.match(s):
        cols = () if m.group(1).strip() == "*" else tuple(c.strip().strip("`") for c in m.group(1).split(","))
        return SelectRow(m.group(2), cols, m.group(3), _operand(m.group(4)))
    if m := _DELETE.match(s):
        return DeleteRow(m.group(1), m.group(2), _operand(m.group(3)))
    raise SqlError(f"query <{shown}>: not served; this server runs {SERVED} (single rows by key, "
                   "parameters or literals)")


def _create(table: str, body: str, shown: str) -> CreateTable:
    columns: list[tuple[str, str]] = []
    key = ""
    for part in (p.strip() for p in body.split(",")):
        if m := _PRIMARY.match(part):
            key = m.group(1)
        elif m := _COLUMN.match(part):
            if m.group(2).lower() not in TYPES:
                raise SqlError(f"query <{shown}>: column {m.group(1)!r} of type {m.group(2)!r} is not served "
                               f"(the types served: {', '.join(sorted(TYPES))})")
            columns.append((m.group(1), m.group(2).lower()))
        else:
            raise SqlError(f"query <{shown}>: cannot read {part!r} (a column is `name Type`, the key PRIMARY KEY (name))")
    if not key or key not in dict(columns):
        raise SqlError(f"query <{shown}>: CREATE TABLE needs PRIMARY KEY (one of its columns)")
    return CreateTable(table, tuple(columns), key)


def primitive(type_name: str) -> Any:
    return T(type_id=TYPES[type_name][0])


def optional(type_name: str) -> Any:
    return T(optional_type=ydb_value_pb2.OptionalType(item=primitive(type_name)))


def literal_value(type_name: str, v: Any) -> Any:
    """A literal as a Value of the column's type; SqlError when it is not one."""
    field = TYPES[type_name][1]
    ok = (isinstance(v, bool) if field == "bool_value" else isinstance(v, str) if field in ("text_value", "bytes_value")
          else isinstance(v, int) and not isinstance(v, bool))
    if not ok:
        raise SqlError(f"the literal {v!r} is not a {type_name}")
    if field == "bytes_value":
        v = v.encode()
    if field == "double_value":
        v = float(v)
    try:
        return ydb_value_pb2.Value(**{field: v})
    except (ValueError, TypeError) as e:
        raise SqlError(f"the literal {v!r} is not a {type_name}: {e}") from None


def param_value(type_name: str, typed: Any, name: str) -> Any:
    """A parameter's TypedValue as a Value of the column's type (T or Optional<T>; a null is
    ``null_flag_value``); SqlError when its type is another."""
    want = primitive(type_name)
    t, v = typed.type, typed.value
    if t == want:
        return v
    if t.HasField("optional_type") and t.optional_type.item == want:
        return v  # an Optional's present value is the value itself; a null is null_flag_value
    raise SqlError(f"parameter {name} is {str(t).strip() or 'untyped'}, not the column's {type_name}")
