"""Which conjunct of an action's guard a rejected event breaks.

When the spec's action of a rejected event is not enabled in the state before it, the diagnosis
(``one_window``) asks TLC, in that state, whether each prefix of the action's guard is enabled for
the event's arguments: the guard's first k conjuncts, the leading conjuncts of the action's body
that read no primed variable (``/\\ ptx[t][tx].st = "PLANNED"``). The first prefix that is not
enabled ends with the conjunct that is false.

The action is reached from the trace spec's ``DiagnoseEnabled`` through its dispatch (YDB's and
C*One's ``Bound``, Kafka's ``StepWith`` and ``Dispatch``): those definitions are copied into the
generated module once for each prefix, ``Name__gK``, with the action replaced by its first K
conjuncts (``PqCalc__g2(t, tx) == /\\ ... /\\ ...``), and ``Diag_guard_K`` checks
``DiagnoseEnabled__gK(Stuck)``. The copies are TLA+ text taken from the spec files, so they say
what the spec says; an action whose body is not a list of conjuncts gets no such diagnosis.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import attrs

from trace_check.traces.protocol import Protocol
from trace_check.traces.reads import reads
from trace_check.traces.spec_text import COMMENT_RE, EXTENDS_RE, spec_stamps, spec_variables

ENABLED = "DiagnoseEnabled"  # the trace spec's diagnosis that the action is enabled
GUARD = "Diag_guard_"  # Diag_guard_K: the guard's first K conjuncts are enabled
COPY = "__g"  # a definition copied for prefix K: Name__gK

_HEAD = re.compile(r"^([A-Za-z_]\w*)[ \t]*(\(|==)", re.MULTILINE)
# what ends a definition's body besides the next one: a separator, the module's end, or another unit
_END = re.compile(r"^(?:-{4,}|={4,}|(?:ASSUME|ASSUMPTION|VARIABLES?|CONSTANTS?|RECURSIVE|INSTANCE|THEOREM|LEMMA|EXTENDS|LOCAL)\b)",
                  re.MULTILINE)
_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_NAME = re.compile(r"(?<![.!\w])([A-Za-z_]\w*)\b")


@attrs.frozen
class Definition:
    name: str
    head: str  # "Name(a, b)" or "Name"
    body: str  # the text after ``==``, to the next definition


@attrs.frozen
class GuardDiagnosis:
    """The generated module's lines and, for each ``Diag_guard_K``, the conjunct K of the guard and
    the variables it reads (an over-approximation, as ``reads.reads`` finds them)."""

    lines: tuple[str, ...]
    conjuncts: dict[str, str]
    reads: dict[str, frozenset[str]]


def _definitions(text: str) -> dict[str, Definition]:
    """The column-0 definitions of one module's text (comments removed), with their heads."""
    out: dict[str, Definition] = {}
    starts = []
    for m in _HEAD.finditer(text):
        k = m.end(1)
        if m.group(2) == "(":  # parameters, which may hold operator parameters: F(_)
            depth, j = 0, k
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                j += 1
                if depth == 0:
                    break
            rest = text[j:].lstrip(" ")
            if not rest.startswith("=="):
                continue
            starts.append((m.start(), m.group(1), text[m.start():j], j + (len(text[j:]) - len(rest)) + 2))
        else:
            starts.append((m.start(), m.group(1), m.group(1), m.end()))
    ends = [s for s, *_ in starts[1:]]
    for (_start, name, head, body_start), nxt in zip(starts, [*ends, len(text)], strict=True):
        end = _END.search(text, body_start, nxt)
        out.setdefault(name, Definition(name, head, text[body_start:end.start() if end else nxt].rstrip()))
    return out


@functools.lru_cache(maxsize=16)
def _spec(spec_dir: Path, module: str, stamps: tuple[tuple[str, int, int], ...]) -> dict[str, Definition]:
    defs: dict[str, Definition] = {}
    todo, seen = [module], set()
    while todo:
        m = todo.pop()
        path = spec_dir / f"{m}.tla"
        if m in seen or not path.is_file():
            continue
        seen.add(m)
        text = COMMENT_RE.sub(lambda x: " " * len(x.group()), path.read_text(encoding="utf-8"))
        for name, d in _definitions(text).items():
            defs.setdefault(name, d)
        todo += [n.strip() for e in EXTENDS_RE.finditer(text) for n in e.group(1).split(",")]
    return defs


def _names(body: str) -> set[str]:
    return set(_NAME.findall(_STRING.sub('""', body)))


def _renamed(body: str, renames: dict[str, str]) -> str:
    """``body`` with each name of ``renames`` replaced, outside strings and record fields."""
    out, last = [], 0
    for s in _STRING.finditer(body):
        out.append(_NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), body[last:s.start()]))
        out.append(s.group())
        last = s.end()
    out.append(_NAME.sub(lambda m: renames.get(m.group(1), m.group(1)), body[last:]))
    return "".join(out)


def guard_conjuncts(body: str) -> list[str]:
    """The leading conjuncts of an action's body that read no primed variable: its guard. Each is
    its lines as written (``    /\\ x > 0``); none when the body is not a list of conjuncts."""
    lines = body.split("\n")
    first = next((ln for ln in lines if ln.strip()), "")
    if not first.lstrip().startswith("/\\") or lines[0].strip():
        return []
    col = len(first) - len(first.lstrip())
    items: list[list[str]] = []
    for ln in lines:
        if not ln.strip():
            continue
        indent = len(ln) - len(ln.lstrip())
        if indent == col and ln.lstrip().startswith("/\\"):
            items.append([ln])
        elif indent > col and items:
            items[-1].append(ln)
        else:
            return []  # not one list of conjuncts
    guard = []
    for item in items:
        text = _STRING.sub('""', "\n".join(item))
        if "'" in text or "UNCHANGED" in text or "ENABLED" in text:
            break
        guard.append("\n".join(item))
    return guard


def guard_diagnosis(protocol: Protocol, action: str) -> GuardDiagnosis | None:
    """The definitions that check each prefix of ``action``'s guard in the state before the stuck
    event (``Stuck``), or None when the spec gives no way to: no ``DiagnoseEnabled``, an action
    that is not a list of conjuncts, or one that ``DiagnoseEnabled`` does not reach."""
    defs = _spec(protocol.spec_dir, protocol.trace_module, spec_stamps(protocol.spec_dir))
    if ENABLED not in defs or action not in defs:
        return None
    guard = guard_conjuncts(defs[action].body)
    if not guard:
        return None
    refs = {name: _names(d.body) & set(defs) for name, d in defs.items()}
    reaching = {action}  # the definitions that use the action, directly or through others
    grown = True
    while grown:
        more = {name for name, r in refs.items() if r & reaching} - reaching
        reaching |= more
        grown = bool(more)
    chain: list[str] = []
    todo = [ENABLED]
    while todo:  # the definitions between DiagnoseEnabled and the action
        name = todo.pop()
        if name in chain or name == action or name not in reaching:
            continue
        chain.append(name)
        todo += sorted(refs[name])
    if ENABLED not in chain:
        return None
    lines: list[str] = []
    conjuncts: dict[str, str] = {}
    read: dict[str, frozenset[str]] = {}
    variables = set(spec_variables(protocol))
    action_head = defs[action].head
    for k in range(1, len(guard) + 1):
        renames = {n: f"{n}{COPY}{k}" for n in (*chain, action)}
        lines.append(f"{_renamed(action_head, renames)} ==\n" + "\n".join(guard[:k]))
        for name in reversed(chain):
            d = defs[name]
            lines.append(f"{_renamed(d.head, renames)} =={_renamed(d.body, renames)}")
        lines.append(f"{GUARD}{k} == {ENABLED}{COPY}{k}(Stuck)")
        conjuncts[f"{GUARD}{k}"] = " ".join(guard[k - 1].split()).removeprefix("/\\ ")
        named = _names(guard[k - 1])
        read[f"{GUARD}{k}"] = frozenset(named & variables).union(*(reads(protocol, n) for n in sorted(named & set(defs))))
    return GuardDiagnosis(tuple(lines), conjuncts, read)
