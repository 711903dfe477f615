"""Reading TLA+ source as text: comments and strings blanked, the modules a module extends and
the variables it declares, and a stamp of a spec directory's files under which what was read from
them is kept (``reads``, ``invariants`` and ``handoff`` read the specs through it)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from trace_check.traces.protocol import Protocol

COMMENT_RE = re.compile(r"\(\*.*?\*\)|\\\*[^\n]*", re.DOTALL)
STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"')
EXTENDS_RE = re.compile(r"\bEXTENDS\b\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)")
VARIABLES_RE = re.compile(r"\bVARIABLES?\b\s+([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)")


def code(text: str) -> str:
    """``text`` with its comments blanked and its strings emptied: what is left is TLA+ code."""
    return STRING_RE.sub('""', COMMENT_RE.sub(" ", text))


def declarations(text: str) -> tuple[list[str], list[str]]:
    """The modules ``text`` (a module's source) extends and the variables it declares."""
    body = code(text)
    extends = [n.strip() for m in EXTENDS_RE.finditer(body) for n in m.group(1).split(",")]
    variables = [n.strip() for m in VARIABLES_RE.finditer(body) for n in m.group(1).split(",")]
    return extends, variables


def spec_stamps(spec_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """The spec modules of ``spec_dir`` as they are now (name, modification time, size): what is
    read from them is kept under this key, so a module edited while the process runs is read again."""
    return tuple((f.name, st.st_mtime_ns, st.st_size) for f in sorted(spec_dir.glob("*.tla")) if (st := f.stat()))


def spec_variables(protocol: Protocol) -> tuple[str, ...]:
    """The variables of the protocol's trace spec, in the order they are declared: those of the trace
    module and of every module of ``protocol.spec_dir`` it extends (standard modules declare none)."""
    return _spec_variables(protocol.spec_dir, protocol.trace_module, spec_stamps(protocol.spec_dir))


@functools.lru_cache(maxsize=32)  # asked again for every window of a long trace
def _spec_variables(spec_dir: Path, trace_module: str, stamps: tuple[tuple[str, int, int], ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    out: list[str] = []

    def visit(module: str) -> None:
        if module in seen:
            return
        seen.add(module)
        path = spec_dir / f"{module}.tla"
        if not path.is_file():
            return  # a standard module (Integers, TLC, ...)
        extends, variables = declarations(path.read_text(encoding="utf-8"))
        for m in extends:
            visit(m)
        out.extend(v for v in variables if v not in out)

    visit(trace_module)
    return tuple(out)
