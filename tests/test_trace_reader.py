"""Traces are untrusted input: every problem is one line naming the file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from ref_impl.kafka.sim.faults import Faults
from ref_impl.kafka.sim.run import simulate, write_trace
from ref_impl.kafka.sim.workloads import Workload
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
        (1, {"protocol": "cstar"}, ':1: header: "protocol" "cstar" has no plug-in; supported: "cone", "kafka", "ydb"'),
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


def test_every_problem_of_the_constants_is_named_at_once(good: Path, tmp_path: Path) -> None:
    """A hand-written header gets one line naming every missing, mistyped and unknown constant,
    not one run per fix."""
    from trace_check.traces import plugins

    kafka = plugins.get("kafka")
    objs = lines_of(good)
    needed = [n for n in kafka.constants if n not in kafka.defaults][:2]
    assert len(needed) == 2
    for name in needed:
        del objs[0]["constants"][name]
    objs[0]["constants"]["NumPartitions"] = "two"
    objs[0]["constants"]["MaxLos"] = 1
    with pytest.raises(TraceError) as info:
        read_trace(write(tmp_path, objs))
    message = str(info.value)
    assert "\n" not in message and message.count("header: constants:") == 1
    assert all(f'"{n}"' in message for n in needed)
    assert '"NumPartitions" must be an integer' in message and 'unknown constant "MaxLos"' in message


def test_header_constants_are_checked(good: Path, tmp_path: Path) -> None:
    objs = lines_of(good)
    objs[0]["constants"]["NumPartitions"] = "two"
    with pytest.raises(TraceError, match='"NumPartitions" must be an integer'):
        read_trace(write(tmp_path, objs))
    objs[0]["constants"]["NumPartitions"] = 2
    objs[0]["constants"]["MaxLos"] = 1
    with pytest.raises(TraceError, match="unknown constant \"MaxLos\" \\(did you mean 'MaxLoss'\\?\\)"):
        read_trace(write(tmp_path, objs))
    del objs[0]["constants"]["MaxLos"]
    objs[0]["constants"]["MaxEpoch"] = 40000
    with pytest.raises(TraceError, match='"MaxEpoch" must be a whole number from 2 to 32767'):
        read_trace(write(tmp_path, objs))
    objs[0]["constants"]["MaxEpoch"] = 32767
    objs[0]["constants"]["MaxInFlight"] = 6
    with pytest.raises(TraceError, match='"MaxInFlight" must be a whole number from 1 to 5'):
        read_trace(write(tmp_path, objs))
    objs[0]["constants"]["MaxInFlight"] = 2
    objs[0]["constants"]["ProduceTimeouts"] = True
    with pytest.raises(TraceError, match='set "ProduceTimeouts" to false'):
        read_trace(write(tmp_path, objs))
    objs[0]["constants"]["MaxInFlight"] = 1
    objs[0]["constants"]["ClientBumps"] = True
    objs[0]["constants"]["NumInstances"] = 2
    with pytest.raises(TraceError, match='set "NumInstances" to 1'):
        read_trace(write(tmp_path, objs))


# --- trace format version 2: new columns, 64-bit producer ids, version 1 still read ---

V1_TRACE = Path(__file__).resolve().parent / "fixtures" / "traces" / "kafka-v1-faulty.jsonl"
V2_COLUMNS = ("txn_partitions", "append_offset")


def test_the_reference_broker_writes_version_2_with_the_new_columns_and_64_bit_producer_ids(good: Path) -> None:
    head, *events = lines_of(good)
    assert head["version"] == 2 and set(V2_COLUMNS) <= set(head["logged"])
    pids = {e["producer_id"] for e in events if "producer_id" in e}
    assert pids and all(p > 2**32 for p in pids)  # a 32-bit truncation would show
    trace = read_trace(good)
    assert trace.version == 2
    assert {e["producer_id"] for e in trace.events if "producer_id" in e} == pids
    assert any("txn_partitions" in e for e in trace.events) and any("append_offset" in e for e in trace.events)


def test_a_version_1_trace_is_still_read_as_it_was() -> None:
    trace = read_trace(V1_TRACE)
    assert trace.version == 1 and len(trace.events) == 106
    assert not any(c in e for e in trace.events for c in V2_COLUMNS)
    assert {e["producer_id"] for e in trace.events if "producer_id" in e} == {1000}


@pytest.mark.parametrize(
    "line, changes, message",
    [
        (1, {"version": 3}, ':1: header: "version" 3 is not supported; this txconform reads versions 1 and 2'),
        (1, {"version": "2"}, ':1: header: "version" "2" is not supported'),
        (1, {"version": True}, ':1: header: "version" true is not supported'),
        (2, {"producer_id": 2**63}, ':2: field "producer_id": expected a signed 64-bit integer, got 9223372036854775808'),
        (2, {"producer_id": -(2**63) - 1}, ':2: field "producer_id": expected a signed 64-bit integer'),
        (2, {"producer_id": 1.5}, ':2: field "producer_id": expected a whole number'),
        (2, {"txn_partitions": [1]}, ':2: StartInstance: field "txn_partitions" is the partition set of a TcAppend'),
        (2, {"append_offset": 0}, ':2: StartInstance: field "append_offset" is the offset of an entry appended to a partition log'),
    ],
)
def test_bad_version_2_values_get_one_line_errors(good: Path, tmp_path: Path, line: int, changes: dict, message: str) -> None:
    path = mutate_line(good, tmp_path, line, **changes)
    with pytest.raises(TraceError) as e:
        read_trace(path)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_any_int64_producer_id_is_read(good: Path, tmp_path: Path) -> None:
    for pid in (2**63 - 1, -(2**63), 0):
        assert read_trace(mutate_line(good, tmp_path, 2, producer_id=pid)).events[0]["producer_id"] == pid


def nth(objs: list, pred) -> int:
    return next(k for k, o in enumerate(objs) if k > 0 and pred(o))


@pytest.mark.parametrize(
    "pick, changes, message",
    [
        (lambda o: o.get("action") == "TcAppend", {"txn_partitions": [2, 1]}, 'field "txn_partitions" = [2, 1] is not a sorted list of distinct partitions'),
        (lambda o: o.get("action") == "TcAppend", {"txn_partitions": [1, 1]},
         "is not a sorted list of distinct partitions (0: the offsets partition, 1..2: data)"),
        (lambda o: o.get("action") == "TcAppend", {"txn_partitions": [0, 3]}, 'field "txn_partitions" = [0, 3] is not a sorted list'),
        (lambda o: o.get("action") == "TcAppend", {"txn_partitions": [-1]}, 'field "txn_partitions": expected a list of offsets'),
        (lambda o: o.get("action") == "TcAppend", {"append_offset": 3},
         'TcAppend: field "append_offset" is the offset of an entry appended to a partition log, and TcAppend appends none'),
        (lambda o: "append_offset" in o, {"append_offset": -1}, 'field "append_offset" = -1 is not an offset'),
        (lambda o: "append_offset" in o, {"partition": ...}, 'field "partition" is missing; it says a data partition'),
        (lambda o: o.get("action") == "Fetch", {"txn_partitions": [1]}, "Fetch: field \"txn_partitions\" is the partition set of a TcAppend's entry"),
    ],
)
def test_the_new_columns_are_checked_against_the_constants(good: Path, tmp_path: Path, pick, changes: dict, message: str) -> None:
    objs = lines_of(good)
    n = nth(objs, pick)
    path = mutate_line(good, tmp_path, n + 1, **changes)
    with pytest.raises(TraceError) as e:
        read_trace(path)
    assert f":{n + 1}: " in str(e.value) and message in str(e.value)


@pytest.mark.parametrize("column, value", [("txn_partitions", [1]), ("append_offset", 0)])
def test_a_version_1_trace_may_not_have_the_version_2_columns(tmp_path: Path, column: str, value) -> None:
    objs = lines_of(V1_TRACE)
    n = nth(objs, lambda o: o.get("action") == ("TcAppend" if column == "txn_partitions" else "LeaderProduce"))
    objs[n][column] = value
    with pytest.raises(TraceError) as e:
        read_trace(write(tmp_path, objs))
    assert f':{n + 1}: field "{column}" is new in trace format version 2, and the header says version 1' in str(e.value)


def test_a_version_1_trace_keeps_32_bit_producer_ids(tmp_path: Path) -> None:
    objs = lines_of(V1_TRACE)
    objs[1]["producer_id"] = 2**40
    with pytest.raises(TraceError, match=':2: field "producer_id": expected a number TLC can represent'):
        read_trace(write(tmp_path, objs))
    objs[0]["version"] = 2  # the same line in a version 2 trace is fine
    assert read_trace(write(tmp_path, objs)).events[0]["producer_id"] == 2**40


def test_the_schema_takes_both_versions_and_int64_producer_ids() -> None:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    v1 = lines_of(V1_TRACE)
    for obj in v1:
        validator.validate(obj)
    assert validator.is_valid({"action": "TcAppend", "txn_id": "t1", "producer_id": 2**63 - 1, "txn_partitions": [0, 2]})
    assert not validator.is_valid({"action": "TcAppend", "producer_id": 2**63})
    assert not validator.is_valid({"action": "LeaderProduce", "append_offset": -1})
    assert not validator.is_valid({**v1[0], "version": 3})
