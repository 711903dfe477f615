"""Tests for trace_check.models.itf: reading ITF traces with itf-py, and writing them back."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trace_check.errors import ItfError, TxconformError
from trace_check.models.itf import itf_json, read_itf, write_itf
from trace_check.models.result import Counterexample, Step
from trace_check.values.tla import FnMap, Record, Unserializable, Variant, format_value

REPO = Path(__file__).resolve().parents[1]
# Traces written by Apalache and Quint themselves, shared next to the repository.
SHARED_ITF = Path(__file__).resolve().parents[2] / "shared" / "apalache-itf"
BIG = 2**255 - 1  # 57896044618658097711785492504343953926634992332820282019728792003956564819967


def shared_trace(name: str) -> Path:
    path = SHARED_ITF / name
    if not path.is_file():
        pytest.skip(f"{path} is not available")
    return path


def write_json(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def one_state_trace(tmp_path: Path, value: Any, name: str = "t.itf.json") -> Path:
    return write_json(tmp_path / name, {"vars": ["v"], "states": [{"#meta": {"index": 0}, "v": value}]})


# ---------------------------------------------------------------------------------------------
# The shared traces from Apalache and Quint


def test_every_shared_trace_reads_and_round_trips(tmp_path: Path) -> None:
    if not SHARED_ITF.is_dir():
        pytest.skip(f"{SHARED_ITF} is not available")
    files = sorted(SHARED_ITF.glob("*.json"))
    assert files, f"no traces in {SHARED_ITF}"
    for path in files:
        cex = read_itf(path)
        raw = json.loads(path.read_text())
        assert len(cex.steps) == len(raw["states"]) > 0, path.name
        assert cex.variables == tuple(raw["vars"]), path.name
        assert [s.index for s in cex.steps] == list(range(1, len(cex.steps) + 1))
        assert all(set(cex.variables) <= set(s.state) for s in cex.steps), path.name
        out = tmp_path / path.name
        write_itf(cex, out, {"source": path.name})
        assert read_itf(out) == cex, path.name


def test_missionaries_and_cannibals() -> None:
    cex = read_itf(shared_trace("MissionariesAndCannibals.itf.json"))
    everyone = frozenset({"c1_OF_PERSON", "c2_OF_PERSON", "m1_OF_PERSON", "m2_OF_PERSON"})
    assert len(cex.steps) == 6
    assert cex.variables == ("bank_of_boat", "who_is_on_bank")
    assert cex.loop is None
    first, last = cex.steps[0], cex.steps[-1]
    assert first.index == 1 and first.action is None
    assert first.state["bank_of_boat"] == "E"
    assert isinstance(first.state["who_is_on_bank"], FnMap)
    assert first.state["who_is_on_bank"]["E"] == everyone
    assert first.state["who_is_on_bank"]["W"] == frozenset()
    assert cex.steps[1].state["who_is_on_bank"] == FnMap(
        {"E": frozenset({"c1_OF_PERSON", "m1_OF_PERSON"}), "W": frozenset({"c2_OF_PERSON", "m2_OF_PERSON"})}
    )
    assert last.index == 6
    assert last.state == {"bank_of_boat": "W", "who_is_on_bank": FnMap({"E": frozenset(), "W": everyone})}


def test_quint_option_variants_including_the_tag_None() -> None:
    # itf-py 0.5.0 alone raises ValueError here: "None" cannot name a namedtuple, and it would
    # also try to make a field called "#bigint" out of the payload {"#bigint": "40"}.
    cex = read_itf(shared_trace("SumTypes0.itf.json"))
    assert cex.variables == ("value",)
    assert [s.state["value"] for s in cex.steps] == [
        Variant("None", Record()),
        Variant("Some", 40),
        Variant("Some", 41),
    ]
    assert format_value(cex.steps[1].state["value"]) == "Some(40)"


def test_big_integers_survive_exactly() -> None:
    cex = read_itf(shared_trace("TestInsufficientSuccess9.itf.json"))
    assert cex.variables == ("outcome", "balances", "action", "step")
    assert len(cex.steps) == 5
    alice = cex.steps[0].state["balances"]["Alice"]
    assert alice == FnMap({"atom": BIG, "muon": BIG, "gluon": BIG})
    assert type(alice["atom"]) is int
    last = cex.steps[-1].state
    assert last["balances"]["Eve"]["gluon"] == BIG - 2
    assert last["balances"]["Eve"]["atom"] == 2
    assert last["step"] == 4 and last["outcome"] == "SUCCESS"
    # a record with a "tag" field and others is still a record, not a variant
    action = last["action"]
    assert isinstance(action, Record)
    assert action["tag"] == "send" and action["sender"] == "Bob"
    assert action["coins"] == (
        Record({"amount": 1, "denom": "gluon"}),
        Record({"amount": 1, "denom": "muon"}),
        Record({"amount": 1, "denom": "atom"}),
    )


def test_quint_records_nested_in_records_and_underscore_variables() -> None:
    cex = read_itf(shared_trace("DecideNonProposerTest0.itf.json"))
    assert len(cex.steps) == 36
    assert cex.variables == ("system", "_Event", "_Result")
    result = cex.steps[0].state["_Result"]
    assert isinstance(result, Record)
    assert result["proposal"] == Record({"height": -1, "proposal": "", "round": -1, "src": "", "validRound": -1})
    assert isinstance(result["voteMessage"], Record) and result["voteMessage"]["step"] == ""
    josef = cex.steps[0].state["system"]["Josef"]
    assert isinstance(josef, Record) and josef["step"] == "newRound" and josef["round"] == 0
    final = cex.steps[35].state
    assert final["_Event"]["name"] == "ProposalInvalid"
    assert final["_Result"]["skipRound"] == 42
    assert final["system"]["Josef"]["validRound"] == 200


# ---------------------------------------------------------------------------------------------
# Names and encodings itf-py 0.5.0 cannot take on its own


def test_field_names_and_tags_that_are_not_python_identifiers(tmp_path: Path) -> None:
    fields = {
        "class": 1,  # keyword
        "_hidden": 2,  # namedtuple rejects a leading underscore
        "my-field": 3,
        "X_41": 4,  # looks like an escaped name; must stay itself
        "": 5,
        "é": 6,
        "ok": {"tag": "True", "value": {"_x": "y"}},
    }
    cex = read_itf(one_state_trace(tmp_path, fields))
    assert cex.steps[0].state["v"] == Record(
        {"class": 1, "_hidden": 2, "my-field": 3, "X_41": 4, "": 5, "é": 6, "ok": Variant("True", Record({"_x": "y"}))}
    )


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"tag": "A", "value": {"value": 5}}, Variant("A", Record({"value": 5}))),
        ({"tag": "A", "value": 5}, Variant("A", 5)),
        ({"tag": "A", "value": None}, Variant("A", Record())),  # how itf-py writes a unit payload
        ({"tag": "A", "value": {"#set": [1, 2]}}, Variant("A", frozenset({1, 2}))),
        ({"tag": "A", "value": {"tag": "B", "value": "u_OF_UNIT"}}, Variant("A", Variant("B", "u_OF_UNIT"))),
        ({"#tup": [1, "a", True]}, (1, "a", True)),
        ([1, 2, 3], (1, 2, 3)),
        ({"#set": [{"#unserializable": "Nat"}, 1]}, frozenset({Unserializable("Nat"), 1})),
        ({"#map": [[{"a": 1}, {"#unserializable": "Int"}]]}, FnMap({Record({"a": 1}): Unserializable("Int")})),
        ({"#unserializable": "[x \\in Nat |-> x]"}, Unserializable("[x \\in Nat |-> x]")),
        ({"#bigint": "-12345678901234567890"}, -12345678901234567890),
        ({}, Record()),
        # itf-py alone merges these: its namedtuples compare as plain tuples
        ({"#set": [{"a": 1}, {"b": 1}]}, frozenset({Record({"a": 1}), Record({"b": 1})})),
        ({"#set": [{"tag": "A", "value": 1}, {"tag": "B", "value": 1}]}, frozenset({Variant("A", 1), Variant("B", 1)})),
        ({"#set": [{"a": 1}, {"#tup": [1]}]}, frozenset({Record({"a": 1}), (1,)})),
        ({"#map": [[{"a": 1}, "x"], [{"b": 1}, "y"]]}, FnMap({Record({"a": 1}): "x", Record({"b": 1}): "y"})),
    ],
)
def test_value_encodings(tmp_path: Path, raw: Any, expected: Any) -> None:
    value = read_itf(one_state_trace(tmp_path, raw)).steps[0].state["v"]
    assert value == expected
    assert format_value(value) == format_value(expected)


def test_action_meta_and_loop(tmp_path: Path) -> None:
    path = write_json(
        tmp_path / "lasso.itf.json",
        {
            "vars": ["x"],
            "loop": 1,
            "states": [
                {"#meta": {"index": 0}, "x": 0},
                {"#meta": {"index": 1, "action": "Inc"}, "x": 1},
                {"#meta": {"index": 2, "action": "Reset"}, "x": 0},
            ],
        },
    )
    cex = read_itf(path)
    assert [s.action for s in cex.steps] == [None, "Inc", "Reset"]
    assert cex.loop == 2  # the Step.index of ITF state 1
    out = tmp_path / "again.itf.json"
    write_itf(cex, out, {})
    assert json.loads(out.read_text())["loop"] == 1
    assert read_itf(out) == cex


def test_a_record_with_exactly_tag_and_value_reads_as_a_variant(tmp_path: Path) -> None:
    # ITF's own ambiguity (Apalache reads it the same way), documented in trace_check.models.itf.
    cex = Counterexample(steps=(Step(1, None, {"v": Record({"tag": "A", "value": 1})}),), variables=("v",))
    out = tmp_path / "r.itf.json"
    write_itf(cex, out, {})
    assert json.loads(out.read_text())["states"][0]["v"] == {"tag": "A", "value": {"#bigint": "1"}}
    assert read_itf(out).steps[0].state["v"] == Variant("A", 1)


# ---------------------------------------------------------------------------------------------
# Writing


def sample_counterexample() -> Counterexample:
    state1 = {
        "n": BIG,
        "flag": True,
        "name": "w1",
        "procs": frozenset({"p3", "p1", "p2"}),
        "queue": (1, 2),
        "msg": Record({"id": 7, "body": "hi"}),
        "owner": FnMap({"b": 2, "a": 1}),
        "opt": Variant("Some", 3),
        "inf": Unserializable("Nat"),
    }
    state2 = {**state1, "n": 0, "flag": False, "queue": (), "opt": Variant("None", Record())}
    return Counterexample(
        steps=(Step(1, None, state1), Step(2, "Send", state2)),
        variables=tuple(state1),
    )


def test_written_json_has_the_itf_structure(tmp_path: Path) -> None:
    out = tmp_path / "cex.itf.json"
    write_itf(sample_counterexample(), out, {"source": "Demo.tla", "description": "a test"})
    text = out.read_text(encoding="utf-8")
    assert text.startswith('{\n  "#meta": {\n')  # pretty-printed, indent 2
    data = json.loads(text)
    assert data["#meta"] == {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": "Demo.tla",
        "description": "a test",
    }
    assert data["vars"] == list(sample_counterexample().variables)
    assert [s["#meta"] for s in data["states"]] == [{"index": 0}, {"index": 1, "action": "Send"}]
    first = data["states"][0]
    assert list(first) == ["#meta", *data["vars"]]
    assert first["n"] == {"#bigint": str(BIG)}
    assert first["flag"] is True and first["name"] == "w1"
    assert first["procs"] == {"#set": ["p1", "p2", "p3"]}  # sorted
    assert first["queue"] == [{"#bigint": "1"}, {"#bigint": "2"}]
    assert first["msg"] == {"id": {"#bigint": "7"}, "body": "hi"}
    assert first["owner"] == {"#map": [["a", {"#bigint": "1"}], ["b", {"#bigint": "2"}]]}  # sorted
    assert first["opt"] == {"tag": "Some", "value": {"#bigint": "3"}}
    assert first["inf"] == {"#unserializable": "Nat"}
    second = data["states"][1]
    assert second["queue"] == [] and second["opt"] == {"tag": "None", "value": {}}


def test_itf_json_is_what_write_itf_writes(tmp_path: Path) -> None:
    out = tmp_path / "cex.itf.json"
    write_itf(sample_counterexample(), out, {"source": "x"})
    assert json.loads(out.read_text()) == itf_json(sample_counterexample(), {"source": "x"})


def test_output_is_byte_for_byte_deterministic(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_itf(sample_counterexample(), a, {"source": "x"})
    write_itf(sample_counterexample(), b, {"source": "x"})
    assert a.read_bytes() == b.read_bytes()


def test_output_does_not_depend_on_the_string_hash_seed(tmp_path: Path) -> None:
    # Set iteration order changes with PYTHONHASHSEED; the writer must not show it.
    script = (
        "import sys; from pathlib import Path\n"
        "from trace_check.models.itf import write_itf\n"
        "from trace_check.models.result import Counterexample, Step\n"
        "from trace_check.values.tla import FnMap, Record\n"
        "names = frozenset('p%d' % i for i in range(30))\n"
        "v = FnMap({n: frozenset({Record({'to': n, 'tags': names})}) for n in names})\n"
        "cex = Counterexample(steps=(Step(1, None, {'v': v, 's': names}),), variables=('v', 's'))\n"
        "write_itf(cex, Path(sys.argv[1]), {})\n"
    )
    outputs = []
    for seed in ("1", "2", "3"):
        out = tmp_path / f"seed{seed}.json"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        subprocess.run([sys.executable, "-c", script, str(out)], check=True, env=env, cwd=REPO)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]


# Values of the project's model, nested. Record field names may be anything but ITF's own "#..."
# keys; a record with exactly the fields tag and value is ITF's variant encoding (see above).
_names = st.text(max_size=6).filter(lambda s: not s.startswith("#"))
_tags = st.text(max_size=6).filter(lambda s: "\x00" not in s)  # a Python class name cannot hold NUL
_scalars = st.one_of(
    st.booleans(),
    st.integers(),
    st.tuples(st.sampled_from([1, -1]), st.integers(min_value=60, max_value=300)).map(lambda se: se[0] * (2 ** se[1] - 1)),
    st.text(max_size=8),
    st.text(max_size=8).map(Unserializable),
)


def _compound(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(children, max_size=4).map(tuple),
        st.frozensets(children, max_size=4),
        st.dictionaries(_names, children, max_size=4).filter(lambda d: set(d) != {"tag", "value"}).map(Record),
        st.dictionaries(children, children, max_size=3).map(FnMap),
        st.tuples(_tags, children).map(lambda tv: Variant(*tv)),
    )


tla_values = st.recursive(_scalars, _compound, max_leaves=16)


def strict(value: Any) -> Any:
    """A hashable form of a value in which kinds never compare equal (True is not 1)."""
    if isinstance(value, (bool, int, str)):
        return (type(value).__name__, value)
    if isinstance(value, Unserializable):
        return ("unserializable", value.text)
    if isinstance(value, tuple):
        return ("seq", tuple(strict(v) for v in value))
    if isinstance(value, frozenset):
        return ("set", frozenset(strict(v) for v in value))
    if isinstance(value, Record):
        return ("record", frozenset((k, strict(v)) for k, v in value.items()))
    if isinstance(value, FnMap):
        return ("fn", frozenset((strict(k), strict(v)) for k, v in value.items()))
    if isinstance(value, Variant):
        return ("variant", value.tag, strict(value.value))
    raise TypeError(value)


# Hypothesis reprs the nested recursive strategy itself, which is long but harmless.
@pytest.mark.filterwarnings("ignore:Generating overly large repr")
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=tla_values, second=tla_values, action=st.one_of(st.none(), st.text(max_size=8)))
def test_write_then_read_gives_back_the_same_values(tmp_path: Path, first: Any, second: Any, action: Any) -> None:
    cex = Counterexample(
        steps=(Step(1, None, {"x": first, "y": second}), Step(2, action, {"x": second, "y": first})),
        variables=("x", "y"),
    )
    out = tmp_path / "rt.itf.json"
    write_itf(cex, out, {})
    again = read_itf(out)
    assert again == cex
    # == treats True and 1 alike; strict() does not
    for before, after in zip(cex.steps, again.steps, strict=False):
        assert {k: strict(v) for k, v in after.state.items()} == {k: strict(v) for k, v in before.state.items()}
    second_out = tmp_path / "rt2.itf.json"
    write_itf(again, second_out, {})
    assert second_out.read_bytes() == out.read_bytes()


# ---------------------------------------------------------------------------------------------
# Bad input


@pytest.mark.parametrize(
    ("content", "complaint"),
    [
        ("this is not json", "not JSON"),
        ("[1, 2, 3]", "expected a JSON object"),
        ('{"vars": ["x"]}', "no 'states'"),
        ('{"states": []}', "no 'vars'"),
        ('{"vars": ["x"], "states": {}}', "'states' is not a list"),
        ('{"vars": ["x"], "states": [1]}', "state 0 is not a JSON object"),
        ('{"vars": ["x"], "states": [{"x": {"#bigint": "12a"}}]}', "not a valid ITF trace"),
        ('{"vars": ["x"], "states": [{"x": null}]}', "null"),
        ('{"vars": ["x"], "states": [{"x": 1.5}]}', "fractional"),
        ('{"vars": ["x"], "states": [{"x": {"#map": [[1]]}}]}', "[key, value] pair"),
        ('{"vars": ["x"], "states": [{"x": {"tag": 3, "value": 1}}]}', "tag must be a string"),
        ('{"vars": ["x"], "loop": "z", "states": []}', "'loop' is not an integer"),
    ],
)
def test_bad_files_raise_itf_error_naming_the_file(tmp_path: Path, content: str, complaint: str) -> None:
    path = tmp_path / "broken.itf.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ItfError) as info:
        read_itf(path)
    message = str(info.value)
    assert "broken.itf.json" in message
    assert complaint in message
    assert "\n" not in message
    assert isinstance(info.value, (ValueError, TxconformError))


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(ItfError, match=r"absent\.itf\.json: cannot read"):
        read_itf(tmp_path / "absent.itf.json")
    binary = tmp_path / "binary.itf.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ItfError, match=r"binary\.itf\.json"):
        read_itf(binary)
