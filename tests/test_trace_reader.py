"""Traces are untrusted input: every problem is one line naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ref_impl.sim.faults import Faults
from ref_impl.sim.run import simulate, write_trace
from ref_impl.sim.workloads import Workload
from trace_check.traces.reader import TraceError, read_trace

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "docs" / "trace-format.schema.json").read_text())


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    head, events = simulate(Workload.parse("ctp:ids=2,aborts=true,version=TV1"), Faults.parse("all"), 3)
    path = tmp_path_factory.mktemp("trace") / "good.jsonl"
    write_trace(path, head, events)
    return path


def lines_of(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def write(tmp_path: Path, objs: list, raw_lines: dict[int, str] | None = None) -> Path:
    lines = [json.dumps(o) for o in objs]
    for n, raw in (raw_lines or {}).items():
        lines[n - 1] = raw
    p = tmp_path / "t.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


def test_generated_traces_follow_the_json_schema(good: Path) -> None:
    objs = lines_of(good)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    header_only = jsonschema.Draft202012Validator({**SCHEMA, "oneOf": [{"$ref": "#/$defs/header"}]})
    header_only.validate(objs[0])
    for obj in objs:
        validator.validate(obj)
    assert read_trace(good).events


def test_the_schema_refuses_what_the_reader_refuses() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert not validator.is_valid({"action": "TcEndTxn", "colour": "red"})
    assert not validator.is_valid({"action": "Teleport"})
    assert not validator.is_valid({"action": "TcEndTxn", "seq": "one"})
    assert validator.is_valid({"action": "TcEndTxn", "seq": None})


def mutate_line(good: Path, tmp_path: Path, n: int, **changes) -> Path:
    objs = lines_of(good)
    objs[n - 1].update(changes)
    for k in [k for k, v in changes.items() if v is ...]:
        del objs[n - 1][k]
    return write(tmp_path, objs)


@pytest.mark.parametrize(
    "line, changes, message",
    [
        (1, {"format": "otf"}, ':1: header: "format" must be "txconform-trace"'),
        (1, {"version": 9}, ':1: header: "version" 9 is not supported'),
        (1, {"protocol": "cstar"}, ':1: header: "protocol" "cstar" has no plug-in; supported: "kafka", "ydb"'),
        (2, {"action": "TcEndTxm"}, ":2: field \"action\": unknown value \"TcEndTxm\" (did you mean 'TcEndTxn'?)"),
        (2, {"colour": "red"}, ':2: unknown field "colour"'),
        (3, {"seq": "one"}, ':3: field "seq": expected a whole number, got "one"'),
        (3, {"commit": 1}, ':3: field "commit": expected true or false'),
        (3, {"event": 7}, ':3: field "event": this is event 2, but it says 7'),
        (2, {"instance": 9}, ':2: StartInstance: field "instance" = 9 is not a producer instance of this trace'),
        (2, {"txn_id": ...}, ':2: StartInstance: field "txn_id" is missing'),
        (2, {"action": ...}, ':2: field "action" is missing'),
        (3, {"error": "NOT_AN_ERROR"}, ':3: field "error": unknown value "NOT_AN_ERROR"'),
        (3, {"txn_id": "t\u00e91"}, ':3: field "txn_id": expected printable ASCII text'),
        (3, {"seq": 2**40}, ':3: field "seq": expected a number TLC can represent'),
    ],
)
def test_bad_lines_get_one_line_errors(good: Path, tmp_path: Path, line: int, changes: dict, message: str) -> None:
    path = mutate_line(good, tmp_path, line, **changes)
    with pytest.raises(TraceError) as e:
        read_trace(path)
    assert message in str(e.value)
    assert "\n" not in str(e.value)
    assert str(e.value).startswith(str(path))


@pytest.mark.parametrize(
    "raw, message",
    [
        ("{not json", ":2: not valid JSON"),
        ("", ":2: empty line"),
        ('{"action": NaN}', ":2: NaN is not a number JSON allows"),
        ("[1, 2]", ":2: an event must be a JSON object"),
    ],
)
def test_unparseable_lines_name_their_line(good: Path, tmp_path: Path, raw: str, message: str) -> None:
    path = write(tmp_path, lines_of(good)[:3], {2: raw})
    with pytest.raises(TraceError, match=message.replace("(", r"\(")):
        read_trace(path)


def test_empty_missing_and_binary_files(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(TraceError, match="empty file"):
        read_trace(tmp_path / "empty.jsonl")
    with pytest.raises(TraceError, match="cannot read the trace"):
        read_trace(tmp_path / "missing.jsonl")
    (tmp_path / "bin.jsonl").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(TraceError, match="not UTF-8"):
        read_trace(tmp_path / "bin.jsonl")


def test_header_constants_are_checked(good: Path, tmp_path: Path) -> None:
    objs = lines_of(good)
    objs[0]["constants"]["NumPartitions"] = "two"
    with pytest.raises(TraceError, match='"NumPartitions" must be an integer'):
        read_trace(write(tmp_path, objs))
    objs[0]["constants"]["NumPartitions"] = 2
    objs[0]["constants"]["MaxLos"] = 1
    with pytest.raises(TraceError, match="unknown constant \"MaxLos\" \\(did you mean 'MaxLoss'\\?\\)"):
        read_trace(write(tmp_path, objs))
