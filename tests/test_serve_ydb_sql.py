"""The statements the YDB server runs (ref_impl/ydb/serve/sql.py) and the rows it keeps
(tables.py): what is read, and the one-line refusal of what is not."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ydb._grpc.common.protos import ydb_value_pb2

from ref_impl.ydb.serve.errors import FrontError
from ref_impl.ydb.serve.sql import (
    CreateTable,
    DeleteRow,
    DropTable,
    Operand,
    SelectN,
    SelectRow,
    SqlError,
    Upsert,
    parse,
)
from ref_impl.ydb.serve.tables import Pending, Tables


@pytest.mark.parametrize(("text", "stmt"), [
    ("select 1", SelectN(1, "column0")),
    ("SELECT 7 AS res;", SelectN(7, "res")),
    ("-- a comment\nPRAGMA TablePathPrefix('/local');\nselect 2", SelectN(2, "column0")),
    ("CREATE TABLE `t` (k Int64 NOT NULL, v Utf8, PRIMARY KEY (k))", CreateTable("t", (("k", "int64"), ("v", "utf8")), "k")),
    ("drop table t;", DropTable("t")),
    ("DECLARE $k AS Int64;\nDECLARE $v AS Utf8;\nUPSERT INTO t (k, v) VALUES ($k, $v);",
     Upsert("t", ("k", "v"), (Operand(param="$k"), Operand(param="$v")))),
    ("upsert into t (k, v) values (1, 'it\\'s, a \\'string\\'')",  # a comma inside a string stays in it
     Upsert("t", ("k", "v"), (Operand(literal=1), Operand(literal="it's, a 'string'")))),
    ("SELECT * FROM t WHERE k = $k", SelectRow("t", (), "k", Operand(param="$k"))),
    ("select v, k from t where k = -3", SelectRow("t", ("v", "k"), "k", Operand(literal=-3))),
    ("DELETE FROM t WHERE k = true", DeleteRow("t", "k", Operand(literal=True))),
])
def test_the_served_statements_are_read(text: str, stmt: Any) -> None:
    assert parse(text) == stmt


@pytest.mark.parametrize(("text", "message"), [
    ("select 1; select 2", "query <select 1; select 2>: this server runs one statement a query, not 2"),
    ("", "query <>: this server runs one statement a query, not 0"),
    ("UPDATE t SET v = 1 WHERE k = 1", "query <UPDATE t SET v = 1 WHERE k = 1>: not served; this server runs select n"),
    ("SELECT * FROM t", "query <SELECT * FROM t>: not served"),
    ("CREATE TABLE t (k Decimal(22,9), PRIMARY KEY (k))", "cannot read"),
    ("CREATE TABLE t (k Date, PRIMARY KEY (k))", "column 'k' of type 'Date' is not served"),
    ("CREATE TABLE t (k Int64, v Utf8)", "CREATE TABLE needs PRIMARY KEY (one of its columns)"),
    ("UPSERT INTO t (k, v) VALUES ($k)", "UPSERT names 2 column(s) and gives 1 value(s)"),
    ("UPSERT INTO t (k, v) VALUES (1, 'it''s')", "cannot read the VALUES (1, 'it''s')"),
    ("UPSERT INTO t (k, v) VALUES (1, now())", "cannot read the VALUES (1, now())"),
])
def test_what_is_not_served_is_one_line_saying_so(text: str, message: str) -> None:
    with pytest.raises(SqlError) as e:
        parse(text)
    assert message in str(e.value) and "\n" not in str(e.value)


def parsed(text: str, kind: type[Any]) -> Any:
    stmt = parse(text)
    assert isinstance(stmt, kind)
    return stmt


def typed(type_id: int, **value: Any) -> Any:
    return ydb_value_pb2.TypedValue(type=ydb_value_pb2.Type(type_id=type_id), value=ydb_value_pb2.Value(**value))


def test_rows_by_key_read_their_own_writes_and_reach_the_table_at_apply() -> None:
    tables = Tables()
    tables.create(parsed("CREATE TABLE t (k Int64, v Utf8, n Int32, PRIMARY KEY (k))", CreateTable))
    T = ydb_value_pb2.Type
    params = {"$k": typed(T.INT64, int64_value=5), "$v": typed(T.UTF8, text_value="five")}
    pending = Pending()
    tables.upsert(parsed("UPSERT INTO t (k, v) VALUES ($k, $v)", Upsert), params, pending)
    select = parsed("SELECT v, n FROM t WHERE k = 5", SelectRow)
    mine = tables.select(select, {}, pending)
    assert [i.text_value for i in mine.rows[0].items[:1]] == ["five"]
    assert mine.rows[0].items[1].WhichOneof("value") == "null_flag_value"  # a column never written is null
    assert [c.type.optional_type.item.type_id for c in mine.columns] == [T.UTF8, T.INT32]
    assert list(tables.select(select, {}, None).rows) == []  # not committed: nobody else sees it
    tables.apply(pending)
    assert tables.select(select, {}, None).rows[0].items[0].text_value == "five"
    gone = Pending()
    tables.delete(parsed("DELETE FROM t WHERE k = $k", DeleteRow), params, gone)
    tables.apply(gone)
    assert list(tables.select(select, {}, None).rows) == []


@pytest.mark.parametrize(("text", "params", "status", "message"), [
    ("UPSERT INTO t (k, v) VALUES ($k, $v)", {"$k": "int64"}, "BAD_REQUEST", "parameter $v is not given"),
    ("UPSERT INTO t (k, v) VALUES ($k, 5)", {"$k": "int64"}, "BAD_REQUEST", "column 'v' of 't': the literal 5 is not a utf8"),
    ("UPSERT INTO t (k, v) VALUES ($k, 'x')", {"$k": "utf8"}, "BAD_REQUEST", "parameter $k is"),
    ("UPSERT INTO t (v) VALUES ('x')", {}, "BAD_REQUEST", "UPSERT INTO 't' without its key column 'k'"),
    ("UPSERT INTO t (k, w) VALUES (1, 'x')", {}, "BAD_REQUEST", "table 't' has no column 'w' (it has k, v)"),
    ("SELECT * FROM t WHERE v = 'x'", {}, "BAD_REQUEST", "a row is named by its key 'k', not 'v'"),
    ("SELECT * FROM u WHERE k = 1", {}, "SCHEME_ERROR", "table 'u' does not exist (CREATE TABLE it first)"),
])
def test_bad_statements_are_refused_with_ydbs_status(text: str, params: dict[str, str], status: str, message: str) -> None:
    tables = Tables()
    tables.create(parsed("CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))", CreateTable))
    T = ydb_value_pb2.Type
    values = {"int64": typed(T.INT64, int64_value=1), "utf8": typed(T.UTF8, text_value="one")}
    stmt = parse(text)
    with pytest.raises(FrontError) as e:
        if isinstance(stmt, Upsert):
            tables.upsert(stmt, {k: values[v] for k, v in params.items()}, Pending())
        else:
            assert isinstance(stmt, SelectRow)
            tables.select(stmt, {}, None)
    assert e.value.status == status and message in str(e.value)


# --- untrusted input: any text and any parameter get a statement or a one-line refusal ---------------

SQLISH = st.lists(st.sampled_from(["select", "SELECT", "upsert", "into", "delete", "from", "where", "create", "table", "drop",
                                   "values", "primary", "key", "as", "declare", "t", "k", "v", "$k", "$v", "1", "-2", "'x'",
                                   "'a,b'", "true", "(", ")", ",", ";", "=", "*", "Int64", "Utf8", "--", "\n", " ", "`"]),
                  max_size=25).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(st.one_of(SQLISH, st.text(max_size=80)))
def test_any_query_text_is_a_statement_or_a_one_line_sql_error(text: str) -> None:
    try:
        parse(text)
    except SqlError as e:
        assert "\n" not in str(e)


VALUES = st.one_of(
    st.builds(lambda v: typed(ydb_value_pb2.Type.INT64, int64_value=v), st.integers(-(2**63), 2**63 - 1)),
    st.builds(lambda v: typed(ydb_value_pb2.Type.UTF8, text_value=v), st.text(max_size=5)),
    st.builds(lambda v: typed(ydb_value_pb2.Type.BOOL, bool_value=v), st.booleans()),
    st.just(ydb_value_pb2.TypedValue()),  # no type, no value
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["UPSERT INTO t (k, v) VALUES ($k, $v)", "SELECT * FROM t WHERE k = $k", "DELETE FROM t WHERE k = $k",
                        "UPSERT INTO t (k, v) VALUES ($k, 'x')", "SELECT v FROM t WHERE k = $v"]),
       st.dictionaries(st.sampled_from(["$k", "$v", "$w"]), VALUES, max_size=3))
def test_any_parameters_are_used_or_refused_with_a_status(text: str, params: dict[str, Any]) -> None:
    tables = Tables()
    tables.create(parsed("CREATE TABLE t (k Int64, v Utf8, PRIMARY KEY (k))", CreateTable))
    stmt = parse(text)
    try:
        if isinstance(stmt, Upsert):
            tables.upsert(stmt, params, Pending())
        elif isinstance(stmt, DeleteRow):
            tables.delete(stmt, params, Pending())
        else:
            assert isinstance(stmt, SelectRow)
            tables.select(stmt, params, None)
    except FrontError as e:
        assert e.status in ("BAD_REQUEST", "SCHEME_ERROR") and "\n" not in str(e)
