"""The models registry: the real one loads, and every kind of mistake gets one clear line."""

from __future__ import annotations

import functools
import shutil
from pathlib import Path

import attrs
import pytest

from trace_check.models.registry import (
    Registry,
    RegistryError,
    declared_constants,
    defined_operators,
    load_registries,
    load_registry,
    registry_files,
    spec_invariants,
)
from trace_check.models.result import CheckResult, Outcome

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures" / "tlc"


@functools.cache
def project() -> Registry:
    """The project's registries, loaded when a test needs them (an error there fails those tests only)."""
    return load_registries(registry_files(ROOT / "specs"))

GOOD_MODEL = """
[models.counter]
spec = "tlc/Counter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["Small", "BelowThree"]
expect = "violates BelowThree"
timeout = 30
note = "A counter passes three."
apalache = { length = 5 }
distinct_states = 4
depth = 4
"""

# The same model, written as a base and a model that gives only what differs from it.
BASED = """
[base]
spec = "tlc/Counter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["Small"]
timeout = 30
tlc = { view = "Small", workers = 2 }
apalache = { length = 5 }
trace_hide = ["hist"]

[models.counter]
constants = { Limit = 5 }
invariants = ["Small", "BelowThree"]
expect = "violates BelowThree"
note = "A counter passes three."
tlc = { workers = 1 }
distinct_states = 4
depth = 4

[models.counter_holds]
expect = "holds"
note = "The counter stays below its limit."
next = "OnlyInc"
distinct_states = 5
depth = 5
"""


def registry(tmp_path: Path, text: str) -> Path:
    """A registry file beside a copy of the test specs."""
    if not (tmp_path / "tlc").exists():
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


def test_the_project_registries_are_valid() -> None:
    assert [f.relative_to(ROOT).as_posix() for f in project().files] == [
        "specs/cone/models.toml",
        "specs/kafka/models.toml",
        "specs/resharding/models.toml",
        "specs/ydb/models.toml",
    ]
    names = [m.name for m in project().models]
    assert {"resharding_naive", "resharding_txn_no_check", "resharding_txn_offset_check", "kafka_tv1_safe"} <= set(names)
    for model in project().models:
        assert model.expect == "holds" or model.expect.startswith("violates ")
        assert model.task.spec_file.is_file()
        assert model.task.spec_file.parent == model.registry.parent, "a registry holds the models of its own spec folder"
        assert model.note
        if model.tier == "ci":
            liveness = model.expect.split()[-1] in model.task.properties and model.expect != "holds"
            assert model.distinct_states and (model.depth or liveness), "TLC reports no depth only for a liveness counterexample"


def test_the_kafka_base_invariants_are_what_the_trace_checker_checks() -> None:
    invariants = spec_invariants(ROOT / "specs" / "kafka" / "models.toml")
    assert invariants[0] == "TypeOK" and {"MarkerSafety", "ProducerStateInLog"} <= set(invariants)
    kafka = [m for m in project().models if m.task.module == "MCKafkaTxn" and m.expect == "holds"]
    assert kafka and all(m.task.invariants == invariants for m in kafka), "every holding Kafka model checks them all"


def test_every_invariant_is_both_violated_and_held_by_some_model() -> None:
    guarantees = [m for m in project().models if not m.witness]
    violated = {m.expect.split()[1] for m in guarantees if m.expect.startswith("violates")}
    held = {inv for m in guarantees if m.expect == "holds" for inv in m.task.invariants + m.task.properties}
    assert violated <= held, f"invariants never shown to hold: {violated - held}"
    # type invariants (TypeOK, DepthTypeOK, ...) are well-formedness checks, not guarantees to break
    checked = {inv for m in guarantees for inv in m.task.invariants + m.task.properties if not inv.endswith("TypeOK")}
    assert checked <= violated, f"invariants no model violates: {checked - violated}"


LIVENESS = """
[base]
spec = "tlc/Counter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["Small"]
tlc = { view = "Small" }
apalache = { length = 5 }

[models.counter_live]
specification = "FairSpec"
properties = ["ReachesLimit"]
expect = "violates ReachesLimit"
note = "Resets keep the counter from its limit."
distinct_states = 5
"""


def test_a_liveness_model_loads_without_the_base_view_and_without_a_depth(tmp_path: Path) -> None:
    (model,) = load_registry(registry(tmp_path, LIVENESS)).models
    assert model.task.specification == "FairSpec" and model.task.properties == ("ReachesLimit",)
    assert model.task.tlc.view is None, "TLC finds the loops of a lasso among whole states"
    assert model.depth is None


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (('specification = "FairSpec"\n', ""), "temporal properties need a specification with fairness"),
        (('properties = ["ReachesLimit"]', 'properties = ["ReachesLimit", "NeverDown"]'), "TLC does not say which of ReachesLimit, NeverDown"),
        (("distinct_states = 5", "distinct_states = 5\ndepth = 3"), "reports no depth with the counterexample of a temporal property"),
        (('specification = "FairSpec"', 'specification = "FairSpec"\ntlc = { view = "Small" }'), "drop tlc.view Small"),
        (('specification = "FairSpec"', 'specification = "FairSpec"\nnext = "OnlyInc"'), "drop init and next"),
        (
            ('properties = ["ReachesLimit"]\nexpect = "violates ReachesLimit"', 'properties = ["ReachesLimt"]\nexpect = "holds"'),
            "property ReachesLimt is not defined",
        ),
        (('expect = "violates ReachesLimit"', 'expect = "violates Limit2"'), "not in its invariants or properties list"),
    ],
)
def test_liveness_mistakes_are_one_line_each(tmp_path: Path, change: tuple[str, str], expected: str) -> None:
    assert change[0] in LIVENESS
    assert expected in error_of(tmp_path, LIVENESS.replace(*change))


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
    assert "not in its invariants or properties list" in message


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


def test_an_invariant_made_of_named_parts_is_checked_part_by_part(tmp_path: Path) -> None:
    from trace_check.models.definitions import named_parts

    spec = FIXTURES / "Counter.tla"
    assert named_parts(spec, "Bounded") == ("Small", "BelowThree")
    assert named_parts(spec, "BoundedAgain") == ("Small", "BelowThree")  # parts of parts, each once
    assert named_parts(spec, "BoundedAtZero") == ("BoundedAtZero",)  # not names alone
    assert named_parts(spec, "Small") == ("Small",) and named_parts(spec, "Nowhere") == ("Nowhere",)
    model = load_registry(registry(tmp_path, GOOD_MODEL.replace('invariants = ["Small", "BelowThree"]',
                                                                 'invariants = ["Small", "BoundedAgain"]')
                                   .replace('expect = "violates BelowThree"', 'expect = "violates BoundedAgain"'))).models[0]
    assert model.task.invariants == ("Small", "BoundedAgain")  # what the model names
    assert model.task.parts == {"BoundedAgain": ("Small", "BelowThree")}
    assert model.task.checked_invariants == ("Small", "BelowThree")  # what the engine checks, each once
    violated = CheckResult(engine="tlc", outcome=Outcome.VIOLATED, wall_time=1.0, invariant="BelowThree")
    assert (model.task.named(violated).invariant, model.task.named(violated).part) == ("BoundedAgain", "BelowThree")
    small = attrs.evolve(violated, invariant="Small")  # a part that is also the model's own invariant
    assert (model.task.named(small).invariant, model.task.named(small).part) == ("Small", None)
    # the project's: TypeOK one part per variable, Kafka's Atomicity in two
    kafka = next(m for m in project().models if m.name == "kafka_tv1_late_endtxn_torn")
    assert kafka.task.parts["Atomicity"] == ("AtomicityNow", "AtomicityWhenQuiescent")
    assert kafka.task.parts["TypeOK"][:2] == ("NetTypeOK", "ClTypeOK")


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


# --- [base] ---


def test_a_model_gives_only_what_differs_from_the_base(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path, BASED))
    counter, holds = reg.models
    # constants and tlc merged key by key over the base's; invariants replaced
    assert counter.task.constants == {"Limit": 5, "Names": ["a", "b"]}
    assert counter.task.invariants == ("Small", "BelowThree")
    assert (counter.task.tlc.view, counter.task.tlc.workers) == ("Small", 1)
    assert counter.task.spec_file == (tmp_path / "tlc" / "Counter.tla").resolve()
    assert counter.timeout == 30 and counter.task.apalache.length == 5 and counter.trace_hide == ("hist",)
    # the other model takes everything from the base
    assert holds.task.constants == {"Limit": 4, "Names": ["a", "b"]}
    assert holds.task.invariants == ("Small",)
    assert (holds.task.tlc.view, holds.task.tlc.workers) == ("Small", 2)
    assert holds.task.next == "OnlyInc" and holds.task.init == "Init"
    assert (holds.distinct_states, holds.depth) == (5, 5)
    assert holds.registry == tmp_path / "models.toml" and holds.line == 20


def test_the_base_invariants(tmp_path: Path) -> None:
    assert spec_invariants(registry(tmp_path, BASED)) == ("Small",)
    with pytest.raises(RegistryError, match=r"models.toml:1: \[base\] has no invariants"):
        spec_invariants(registry(tmp_path, GOOD_MODEL))


def test_the_base_is_checked_on_its_own(tmp_path: Path) -> None:
    message = error_of(tmp_path, BASED.replace('invariants = ["Small"]', 'invariants = ["Smal"]'))
    assert "models.toml:2: [base]: invariant Smal is not defined in tlc/Counter.tla" in message
    assert "did you mean 'Small'?" in message
    message = error_of(tmp_path, BASED.replace("timeout = 30", "timeout = 30\nexpect = \"holds\""))
    assert "models.toml:2: [base]: unknown key 'expect'" in message
    message = error_of(tmp_path, BASED.replace('tlc = { view = "Small", workers = 2 }', 'tlc = { veiw = "Small" }'))
    assert "[base] tlc: unknown key 'veiw' (did you mean 'view'?)" in message
    assert "constant Limt is not declared" in error_of(tmp_path, BASED.replace("Limit = 4,", "Limt = 4,"))


def test_defaults_is_now_base(tmp_path: Path) -> None:
    message = error_of(tmp_path, "[defaults]\ntimeout = 60\n" + GOOD_MODEL)
    assert "models.toml:1: [defaults] is now [base]" in message


def test_a_key_neither_model_nor_base_gives(tmp_path: Path) -> None:
    message = error_of(tmp_path, BASED.replace('spec = "tlc/Counter.tla"\n', ""))
    assert "model counter: missing key 'spec' (give it here or in [base])" in message


# --- pins ---


def test_a_ci_model_without_pins_is_an_error(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL.replace("depth = 4\n", ""))
    assert "models.toml:2: model counter: no pinned depth" in message
    message = error_of(tmp_path, GOOD_MODEL.replace("distinct_states = 4\ndepth = 4\n", ""))
    assert "no pinned distinct_states and depth" in message
    assert "`txconform model-check --engine tlc counter`" in message


def test_the_tour_is_a_story_per_protocol_a_design_that_holds_and_a_bug_it_stops() -> None:
    """``make`` checks the tour (``--tier tour``): per protocol at least one model that holds and one
    that violates a guarantee, all of tier ci (so CI checks each), few enough to take a minute or two."""
    tour = project().select([], "tour")
    assert tour and all(m.tour and m.tier == "ci" for m in tour) and len(tour) <= 16
    for folder in ("resharding", "kafka", "ydb", "cone"):
        mine = [m for m in tour if m.registry is not None and m.registry.parent.name == folder]
        assert any(m.expect == "holds" for m in mine), f"{folder}: no holding model in the tour"
        assert any(m.expect.startswith("violates") and not m.witness for m in mine), f"{folder}: no bug in the tour"
    assert "resharding_txn_no_check" in {m.name for m in tour}  # the Makefile's EXAMPLE counterexample


def test_the_tour_takes_models_of_tier_ci_and_a_boolean(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path, GOOD_MODEL.replace('note = "', 'tour = true\nnote = "', 1)))
    assert [m.name for m in reg.select([], "tour")] == ["counter"] and reg.models[0].tour
    message = error_of(tmp_path, GOOD_MODEL.replace("distinct_states = 4\ndepth = 4\n", 'tier = "full"\ntour = true\n'))
    assert "tour = true, but the tour (`make`) checks models of tier \"ci\" only" in message
    assert "tour" in error_of(tmp_path, GOOD_MODEL.replace('note = "', 'tour = "yes"\nnote = "', 1))


def test_a_full_tier_model_may_go_unpinned(tmp_path: Path) -> None:
    reg = load_registry(registry(tmp_path, GOOD_MODEL.replace("distinct_states = 4\ndepth = 4\n", 'tier = "full"\n')))
    assert reg.models[0].distinct_states is None


def test_pins_are_positive_integers(tmp_path: Path) -> None:
    assert "distinct_states must be a positive integer, not '4'" in error_of(tmp_path, GOOD_MODEL.replace("distinct_states = 4", 'distinct_states = "4"'))
    assert "depth must be a positive integer, not 0" in error_of(tmp_path, GOOD_MODEL.replace("depth = 4", "depth = 0"))


def test_a_violation_count_needs_one_worker(tmp_path: Path) -> None:
    message = error_of(tmp_path, GOOD_MODEL + "tlc = { workers = 2 }\n")
    assert "TLC stops at the first violation" in message and "set tlc.workers = 1" in message


def result(distinct: int | None, depth: int | None, engine: str = "tlc") -> CheckResult:
    return CheckResult(engine=engine, outcome=Outcome.VIOLATED, invariant="BelowThree", wall_time=1.0,
                       distinct_states=distinct, depth=depth)


def test_pin_mismatch(tmp_path: Path) -> None:
    path = registry(tmp_path, BASED)
    counter, holds = load_registry(path).models
    assert counter.pin_mismatch(result(4, 4)) is None
    assert counter.pin_mismatch(result(3, 4)) == (
        f"3 distinct states where 4 are pinned: if the change is meant, update distinct_states in {path}:11"
    )
    assert counter.pin_mismatch(result(4, 5)) == f"depth 5 where 4 is pinned: if the change is meant, update depth in {path}:11"
    assert "update distinct_states and depth" in counter.pin_mismatch(result(3, 3))
    assert counter.pin_mismatch(result(None, None)).startswith("no count of distinct states where 4 are pinned")
    # two TLC workers: the depth varies by one between runs, so only the count is compared
    assert holds.pin_mismatch(result(5, 6)) is None
    assert "6 distinct states where 5 are pinned" in holds.pin_mismatch(result(6, 5))
    # Apalache has no such counts
    assert counter.pin_mismatch(result(None, None, engine="apalache")) is None


# --- several registries ---


def test_model_names_are_unique_across_registries(tmp_path: Path) -> None:
    first = registry(tmp_path, GOOD_MODEL)
    (tmp_path / "other").mkdir()
    shutil.copytree(FIXTURES, tmp_path / "other" / "tlc")
    second = tmp_path / "other" / "models.toml"
    second.write_text("\n\n" + GOOD_MODEL)
    with pytest.raises(RegistryError) as info:
        load_registries([first, second])
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{second}:4: model counter: the name is taken by {first}:2")
    second.write_text(GOOD_MODEL.replace("[models.counter]", "[models.counter2]"))
    both = load_registries([first, second])
    assert [m.name for m in both.models] == ["counter", "counter2"]
    assert [m.registry for m in both.models] == [first, second]
    with pytest.raises(RegistryError, match=f"{first}, {second}: no model named 'counter3'"):
        both.select(["counter3"])


def test_registries_are_found_per_spec_folder(tmp_path: Path) -> None:
    for folder in ("b", "a"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "models.toml").write_text("")
    (tmp_path / "models.toml").write_text("")
    assert registry_files(tmp_path) == [tmp_path / "a" / "models.toml", tmp_path / "b" / "models.toml"]


# --- witnesses ---

WITNESS = GOOD_MODEL.replace('spec = "tlc/Counter.tla"', 'spec = "tlc/MCCounter.tla"').replace(
    'invariants = ["Small", "BelowThree"]\nexpect = "violates BelowThree"',
    'invariants = ["WitnessThree"]\nexpect = "violates WitnessThree"\nwitness = true',
)


def witness_registry(tmp_path: Path, text: str) -> str:
    path = registry(tmp_path, text)
    (tmp_path / "tlc" / "MCCounter.tla").write_text(
        "---- MODULE MCCounter ----\nEXTENDS Counter\nWitnessThree == BelowThree\nDebugThree == BelowThree\n====\n"
    )
    return path.read_text()


def test_a_witness_invariant_is_named_as_one(tmp_path: Path) -> None:
    witness_registry(tmp_path, WITNESS)
    (model,) = load_registry(tmp_path / "models.toml").models
    assert model.witness and model.shown_expect == "witness: WitnessThree"
    assert model.shown("holds") == "holds"
    load_registry(registry(tmp_path, WITNESS.replace("WitnessThree", "DebugThree")))  # CCF's convention


def test_a_witness_named_as_a_guarantee_is_refused(tmp_path: Path) -> None:
    witness_registry(tmp_path, WITNESS)
    message = error_of(tmp_path, WITNESS.replace('"WitnessThree"', '"BelowThree"').replace("violates WitnessThree", "violates BelowThree"))
    assert "model counter: a witness's invariant is named Witness... or Debug..." in message
    assert "rename BelowThree in the spec and here, e.g. to WitnessBelowThree" in message


def test_a_witness_invariant_in_a_model_not_marked_witness(tmp_path: Path) -> None:
    witness_registry(tmp_path, WITNESS)
    message = error_of(tmp_path, WITNESS.replace("witness = true\n", ""))
    assert "model counter: WitnessThree is a witness (its name says so): add witness = true" in message
