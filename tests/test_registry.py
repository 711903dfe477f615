"""The models registry: the real one loads, and every kind of mistake gets one clear line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from trace_check.models.registry import RegistryError, declared_constants, defined_operators, load_registry

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "tlc"

GOOD_MODEL = """
[models.counter]
spec = "tlc/Counter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["Small", "BelowThree"]
expect = "violates BelowThree"
timeout = 30
note = "A counter passes three."
apalache = { length = 5 }
"""


def registry(tmp_path: Path, text: str) -> Path:
    """A registry file beside a copy of the test specs."""
    shutil.copytree(FIXTURES, tmp_path / "tlc")
    path = tmp_path / "models.toml"
    path.write_text(text)
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(RegistryError) as info:
        load_registry(registry(tmp_path, text))
    message = str(info.value)
    assert "\n" not in message, "errors must fit on one line"
    assert str(tmp_path / "models.toml") in message, "errors must name the registry file"
    return message


def test_the_project_registry_is_valid() -> None:
    reg = load_registry(ROOT / "specs" / "models.toml")
    names = [m.name for m in reg.models]
    assert {"resharding_naive", "resharding_txn_no_check", "resharding_txn_offset_check"} <= set(names)
    for model in reg.models:
        assert model.expect == "holds" or model.expect.startswith("violates ")
        assert model.task.spec_file.is_file()
        assert model.note


def test_every_invariant_is_both_violated_and_held_by_some_model() -> None:
    reg = load_registry(ROOT / "specs" / "models.toml")
    guarantees = [m for m in reg.models if not m.witness]
    violated = {m.expect.split()[1] for m in guarantees if m.expect.startswith("violates")}
    held = {inv for m in guarantees if m.expect == "holds" for inv in m.task.invariants}
    assert violated <= held, f"invariants never shown to hold: {violated - held}"
    checked = {inv for m in guarantees for inv in m.task.invariants} - {"TypeOK"}
    assert checked <= violated, f"invariants no model violates: {checked - violated}"


def test_a_good_entry_loads(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path, GOOD_MODEL))
    (model,) = reg.models
    assert model.expect == "violates BelowThree"
    assert model.task.constants == {"Limit": 4, "Names": ["a", "b"]}
    assert model.task.invariants == ("Small", "BelowThree")
    assert model.task.apalache.length == 5
    assert model.timeout == 30
    assert model.line == 2


def test_typo_in_a_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace("invariants =", "invarants ="))
    assert "model counter: unknown key 'invarants' (did you mean 'invariants'?)" in message
    assert "models.toml:2:" in message


def test_missing_spec_file(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace("tlc/Counter.tla", "tlc/Nope.tla"))
    assert "spec file tlc/Nope.tla not found" in message


def test_invariant_the_spec_does_not_define(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('"Small", ', '"Smal", '))
    assert "invariant Smal is not defined in tlc/Counter.tla" in message
    assert "did you mean 'Small'?" in message


def test_expected_invariant_must_be_checked(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('expect = "violates BelowThree"', 'expect = "violates Small2"'))
    assert "not in its invariants list" in message


def test_malformed_expectation(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('expect = "violates BelowThree"', 'expect = "fails"'))
    assert 'write "holds", "deadlock" or "violates <Invariant>"' in message


def test_unknown_constant_and_missing_constant(tmp_path: Path) -> None:
    assert "constant Limt is not declared" in error_of(tmp_path, GOOD_MODEL.replace("Limit = 4", "Limt = 4"))


def test_missing_constant_value(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('constants = { Limit = 4, Names = ["a", "b"] }', "constants = { Limit = 4 }"))
    assert "no value for constant(s) Names" in message


def test_constant_of_an_unsupported_kind(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace("Limit = 4", "Limit = 4.5"))
    assert "constant Limit = 4.5" in message


def test_missing_apalache_length(tmp_path: Path) -> None:
    assert "missing apalache.length" in error_of(tmp_path, GOOD_MODEL.replace("apalache = { length = 5 }\n", ""))


def test_missing_required_key(tmp_path: Path) -> None:
    assert "missing key 'note'" in error_of(tmp_path, GOOD_MODEL.replace('note = "A counter passes three."\n', ""))


def test_bad_toml_names_the_line(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('timeout = 30', 'timeout = '))
    assert "not valid TOML" in message and "line 7" in message


def test_non_positive_timeout(tmp_path: Path) -> None:
    assert "timeout = -1" in error_of(tmp_path, GOOD_MODEL.replace("timeout = 30", "timeout = -1"))


def test_unknown_tlc_option(tmp_path: Path) -> None:
    text = GOOD_MODEL + 'tlc = { veiw = "View" }\n'
    assert "unknown key 'veiw' (did you mean 'view'?)" in error_of(tmp_path, text)


def test_a_witness_must_expect_a_violation(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace('expect = "violates BelowThree"', 'expect = "holds"\nwitness = true'))
    assert "a witness model must expect" in message


def test_missing_registry_file(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="registry file not found"):
        load_registry(tmp_path / "none.toml")


def test_select_unknown_model(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path, GOOD_MODEL))
    with pytest.raises(RegistryError, match="no model named 'countr' \\(did you mean 'counter'\\?\\)"):
        reg.select(["countr"])


def test_static_reading_of_specs_follows_extends() -> None:
    mc = ROOT / "specs" / "resharding" / "MCResharding.tla"
    ops = defined_operators(mc)
    assert {"View", "Init", "Next", "ExactlyOnce", "OrderPreserved", "Fetch"} <= ops
    assert declared_constants(mc) == {"Workers", "NumSrc", "NumDst", "MsgsPerSrc", "Design", "MaxCrashes", "MaxHangs"}


def test_full_tier_models_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    full = GOOD_MODEL.replace("[models.counter]", "[models.counter_big]") + 'tier = "full"\n'
    reg = load_registry(registry(tmp_path, GOOD_MODEL + full))
    assert [m.name for m in reg.select([])] == ["counter"]
    assert [m.name for m in reg.select([], "full")] == ["counter_big"]
    assert [m.name for m in reg.select([], "all")] == ["counter", "counter_big"]
    assert [m.name for m in reg.select(["counter_big"])] == ["counter_big"]  # a name picks any tier


def test_an_unknown_tier_is_refused(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL + 'tier = "nightly"\n')
    assert "tier = 'nightly'" in message and '"full"' in message
