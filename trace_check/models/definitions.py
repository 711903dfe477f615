"""What a spec defines, read statically from its text (comments removed), so that a registry's
typos are caught before an engine starts: its operators, its constants, and the named parts of a
definition that is a conjunction of names (``Atomicity == AtomicityNow /\\ AtomicityWhenQuiescent``),
which a model checks one by one to name the part that fails."""

from __future__ import annotations

import re
from pathlib import Path

_DEF = re.compile(r"^\s*(?:LOCAL\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*==", re.MULTILINE)
# a definition at the start of a line (not a LET's, which is indented)
_TOP_DEF = re.compile(r"^([A-Za-z_]\w*)\s*(?:\([^)]*\)|\[[^\]]*\])?\s*==", re.MULTILINE)
_EXTENDS = re.compile(r"^\s*EXTENDS\s+([\w\s,]+?)\s*$", re.MULTILINE)
_CONSTANTS = re.compile(r"^\s*CONSTANTS?\b(.*?)(?=^\s*(?:VARIABLES?|ASSUME|[A-Za-z_]\w*\s*(?:\(|==))|\Z)", re.MULTILINE | re.DOTALL)
COMMENT = re.compile(r"\(\*.*?\*\)|\\\*[^\n]*", re.DOTALL)


def _module_texts(spec_file: Path) -> list[str]:
    """The text of a module and of the modules it extends that live beside it (comments removed)."""
    seen: set[str] = set()
    texts: list[str] = []
    todo = [spec_file.stem]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        file = spec_file.parent / f"{module}.tla"
        if not file.is_file():
            continue  # a standard module (Naturals, TLC, ...) or one TLC will report as missing
        text = COMMENT.sub(" ", file.read_text(encoding="utf-8", errors="replace"))
        texts.append(text)
        for match in _EXTENDS.finditer(text):
            todo += [m.strip() for m in match.group(1).split(",") if m.strip()]
    return texts


def defined_operators(spec_file: Path) -> set[str]:
    return {m.group(1) for text in _module_texts(spec_file) for m in _DEF.finditer(text)}


def declared_constants(spec_file: Path) -> set[str]:
    names: set[str] = set()
    for text in _module_texts(spec_file):
        for block in _CONSTANTS.finditer(text):
            names |= set(re.findall(r"([A-Za-z_]\w*)(?:\s*\([^)]*\))?\s*(?:,|$)", block.group(1).strip(), re.MULTILINE))
    return names

# The body of a definition that is a conjunction of names alone: ``A /\\ B``, or ``/\\ A`` lines.
CONJUNCTS_RE = re.compile(r"\s*(?:/\\)?\s*([A-Za-z_]\w*)((?:\s*/\\\s*[A-Za-z_]\w*)+)\s*")


def conjunct_names(body: str) -> tuple[str, ...] | None:
    """The names of ``body`` (a definition's right-hand side, comments removed) when it is a
    conjunction of names alone; otherwise None."""
    m = CONJUNCTS_RE.fullmatch(re.sub(r"-{4,}|={4,}", " ", body))
    return None if m is None else (m.group(1), *re.findall(r"[A-Za-z_]\w*", m.group(2)))


def named_parts(spec_file: Path, name: str) -> tuple[str, ...]:
    """The named parts of definition ``name`` of ``spec_file``'s module (or a module it extends
    beside it), each split again where it is itself a conjunction of names, in order and each once;
    ``(name,)`` when it is not one, or not defined in these modules."""
    bodies = definition_bodies(spec_file)

    def split(n: str, seen: frozenset[str]) -> tuple[str, ...]:
        parts = conjunct_names(bodies[n]) if n in bodies and n not in seen else None
        if parts is None or not all(p in bodies for p in parts):
            return (n,)
        return tuple(q for p in parts for q in split(p, seen | {n}))

    return tuple(dict.fromkeys(split(name, frozenset())))  # a part named twice is checked once


def definition_bodies(spec_file: Path) -> dict[str, str]:
    """Each operator of the module and of those it extends beside it, and the text of its
    definition after ``==`` (to the next definition or the module's end; without parameters)."""
    bodies: dict[str, str] = {}
    for text in _module_texts(spec_file):
        starts = list(_TOP_DEF.finditer(text))
        for k, m in enumerate(starts):
            end = starts[k + 1].start() if k + 1 < len(starts) else len(text)
            bodies.setdefault(m.group(1), text[m.end():end])
    return bodies
