"""Each spec frames its steps by groups of variables (issue 49), as etcd raft's and CCF's specs
do: the variables are grouped into tuples, `vars` is built from the groups, every `UNCHANGED`
names groups only, and the type invariant has one named part per variable. Read from the spec
text: no TLC."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

SPECS = Path(__file__).resolve().parents[1] / "specs"
# each protocol's spec and the module that holds its TypeOK
FRAMED = {
    "cone": ("Cone.tla", "ConeProperties.tla"),
    "kafka": ("KafkaTxn.tla", "KafkaTxnProperties.tla"),
    "ydb": ("YdbTopics.tla", "YdbTopicsProperties.tla"),
    "resharding": ("Resharding.tla", "Resharding.tla"),
}
HISTORY = "action"  # the history variable: no module reads it, so no type invariant checks it


def _code(text: str) -> str:
    """The text without comments (``\\* ...`` to the line's end, ``(* ... *)`` blocks)."""
    text = re.sub(r"\(\*.*?\*\)", " ", text, flags=re.S)
    return re.sub(r"\\\*[^\n]*", " ", text)


def _declared(text: str) -> list[str]:
    block = re.search(r"^VARIABLES\n(.*?)\n\n", text, re.S | re.M)
    assert block is not None, "no VARIABLES block"
    return [m.group(1) for m in re.finditer(r"^\s+(\w+),?\s*$", _code(block.group(1)), re.M)]


def _groups(code: str) -> dict[str, list[str]]:
    """``name == <<a, b>>`` tuples of names: the groups (and vars)."""
    return {m.group(1): [x.strip() for x in m.group(2).split(",")]
            for m in re.finditer(r"^(\w+) == <<([\w\s,]+)>>\s*$", code, re.M)}


def _unchanged_variables(code: str) -> tuple[int, set[str]]:
    """How many UNCHANGED clauses there are, and the names in them that are not groups."""
    groups = _groups(code)
    clauses = re.findall(r"\bUNCHANGED\s*(<<[^>]*>>|\w+)", code)
    return len(clauses), {n for c in clauses for n in re.findall(r"\w+", c) if n not in groups}


def _flat(name: str, groups: dict[str, list[str]]) -> list[str]:
    return [v for part in groups[name] for v in (_flat(part, groups) if part in groups else [part])]


@pytest.mark.parametrize("protocol", sorted(FRAMED))
def test_vars_is_built_from_groups_that_hold_each_variable_once(protocol: str) -> None:
    text = (SPECS / protocol / FRAMED[protocol][0]).read_text(encoding="utf-8")
    declared, groups = _declared(text), _groups(_code(text))
    assert "vars" in groups and all(part in groups for part in groups["vars"]), groups.get("vars")
    assert sorted(_flat("vars", groups)) == sorted(declared)
    # every group is part of vars, and holds variables or groups, not both
    reachable = set()
    todo = ["vars"]
    while todo:
        g = todo.pop()
        reachable.add(g)
        todo += [p for p in groups[g] if p in groups]
        kinds = {p in groups for p in groups[g]}
        assert len(kinds) == 1, f"{g} mixes variables and groups: {groups[g]}"
    assert set(groups) == reachable, f"groups outside vars: {set(groups) - reachable}"


@pytest.mark.parametrize("protocol", sorted(FRAMED))
def test_every_unchanged_names_groups_only(protocol: str) -> None:
    clauses, singles = _unchanged_variables(_code((SPECS / protocol / FRAMED[protocol][0]).read_text(encoding="utf-8")))
    assert clauses >= 10
    assert not singles, f"UNCHANGED names variables, not groups: {sorted(singles)}"


def test_the_check_finds_a_single_variable_in_unchanged() -> None:
    text = (SPECS / "kafka" / "KafkaTxn.tla").read_text(encoding="utf-8")
    assert "UNCHANGED <<clientVars, retryVars>>" in text
    wrong = text.replace("UNCHANGED <<clientVars, retryVars>>", "UNCHANGED <<clientVars, retries>>", 1)
    assert _unchanged_variables(_code(wrong))[1] == {"retries"}


@pytest.mark.parametrize("protocol", sorted(FRAMED))
def test_the_type_invariant_has_one_named_part_per_variable(protocol: str) -> None:
    spec, props = FRAMED[protocol]
    declared = _declared((SPECS / protocol / spec).read_text(encoding="utf-8"))
    code = _code((SPECS / protocol / props).read_text(encoding="utf-8"))
    body = re.search(r"^TypeOK ==\n((?:    /\\ \w+\n)+)", code, re.M)
    assert body is not None, "TypeOK is not a list of named parts"
    parts = re.findall(r"/\\ (\w+)", body.group(1))
    expected = [v for v in declared if v != HISTORY]
    # part XTypeOK for variable x, in the order of the declarations
    assert parts == [v[0].upper() + v[1:] + "TypeOK" for v in expected]
    for part, var in zip(parts, expected, strict=True):
        definition = re.search(rf"^{part} ==(.*?)(?=^\S|\Z)", code, re.M | re.S)
        assert definition is not None, part
        assert re.search(rf"\b{var}\b", definition.group(1)), f"{part} does not read {var}"
