"""Every spec is typed for Apalache: each CONSTANT and VARIABLE, and each operator with parameters,
carries a ``\\* @type: ...;`` annotation just above it. (Operators without parameters Apalache infers;
an INSTANCE has the types of the module it instantiates.)
Apalache cannot run here, so this is the check CI can make."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

SPECS = sorted((Path(__file__).resolve().parents[1] / "specs").glob("*/*.tla"))
OPERATOR = re.compile(r"^([A-Z][A-Za-z0-9_]*)\([^)]*\)\s*==")
DECLARATION = re.compile(r"^(CONSTANTS?|VARIABLES?)\b(.*)$")
NAME = re.compile(r"^\s+([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*$")


def untyped(text: str) -> list[str]:
    """The names declared or defined in ``text`` with no @type annotation, as 'line N: name'."""
    lines = text.splitlines()
    missing = []
    typed = False  # an annotation since the last declared name
    in_block = False
    for number, line in enumerate(lines, start=1):
        if "@type:" in line:
            typed = True
            continue
        if DECLARATION.match(line):
            in_block = True
            rest = DECLARATION.match(line).group(2).strip()  # "VARIABLE x" on one line
            if rest:
                for name in filter(None, (n.strip() for n in rest.split(","))):
                    if not typed:
                        missing.append(f"line {number}: {name}")
                in_block = rest.endswith(",")
            typed = False if rest else typed
            continue
        if in_block:
            if line.strip().startswith("\\*"):
                continue
            name = NAME.match(line)
            if name:
                if not typed:
                    missing.append(f"line {number}: {name.group(1)}")
                typed = False
                in_block = line.rstrip().endswith(",")
                continue
            in_block = False
        operator = OPERATOR.match(line)
        if operator and not re.search(r"==\s*INSTANCE\b", line) and not typed:
            missing.append(f"line {number}: {operator.group(1)}")
        if line.strip() and not line.strip().startswith("\\*") and not line.startswith(" "):
            typed = False
    return missing


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_declaration_and_operator_is_typed(spec: Path) -> None:
    assert untyped(spec.read_text(encoding="utf-8")) == []


def test_the_check_finds_a_missing_annotation() -> None:
    text = (
        "CONSTANTS\n    \\* @type: Int;\n    N,\n    M\n\n"
        "VARIABLES\n    \\* @type: Int;\n    x\n\n"
        "\\* @type: (Int) => Int;\nF(a) == a\n\nG(a) == a\n"
    )
    assert untyped(text) == ["line 4: M", "line 13: G"]
