"""Sequence diagrams of a run, with the protocol's processes as lifelines (Mermaid).

A protocol's ``Diagram`` (``trace_check.traces.protocol``), in the module a spec folder's
``models.toml`` names (its key ``diagram``), says what each step drew: the messages it sent and
answered, lost messages, faults, the state changes that matter. This module lays them out: the
processes the steps drew on, in the protocol's order; the step's number on its first arrow or note;
the step that breaks the checked property shaded and marked with its name. A run of a spec with no
``Diagram`` is drawn as one note a step over the actor the step names.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable

from trace_check.errors import TxconformError
from trace_check.models.counterexample import label, render_steps
from trace_check.models.result import Counterexample
from trace_check.traces.protocol import Arrow, Diagram, Note

Drawn = Arrow | Note
# The shading of the breaking step: a pale red, which both of Mermaid's themes show.
BREAK_SHADE = "rgb(255, 228, 225)"


class DiagramError(TxconformError):
    """The module a registry names as a protocol's diagram is missing or defines no ``DIAGRAM``."""


def load(module: str) -> Diagram:
    """The ``DIAGRAM`` of ``module`` (e.g. ``ref_impl.kafka.diagram``), imported by name."""
    try:
        found = getattr(importlib.import_module(module), "DIAGRAM", None)
    except ImportError as e:
        raise DiagramError(f"diagram module {module} cannot be imported: {e}") from None
    if not isinstance(found, Diagram):
        raise DiagramError(f"diagram module {module} defines no DIAGRAM (a trace_check.traces.protocol.Diagram)")
    return found


def steps(cex: Counterexample, diagram: Diagram | None) -> list[tuple[int, list[Drawn]]]:
    """What each step after the first drew, with its number: the diagram's items (a step that drew
    nothing is left out), or with no diagram a note over the actor the step names."""
    out: list[tuple[int, list[Drawn]]] = []
    for before, after in zip(cex.steps, cex.steps[1:], strict=False):
        if diagram is None:
            lab = label(after)
            drawn: list[Drawn] = [Note((lab.actor or "environment",), str(lab))]
        else:
            drawn = list(diagram.draw(before.state, after.state))
        if drawn:
            out.append((after.index, drawn))
    return out


def to_mermaid(cex: Counterexample, diagram: Diagram | None, mark: str = "") -> str:
    """The run as a Mermaid sequence diagram; ``mark`` (e.g. ``breaks ExactlyOnce``) is noted on
    its last step, which is shaded; a run that loops (a liveness counterexample) says where to."""
    drawn = steps(cex, diagram)
    final = cex.steps[-1].index if cex.steps else 0
    if mark and final > 1 and (not drawn or drawn[-1][0] != final):  # the breaking step drew nothing: mark it alone
        drawn.append((final, []))
    order = list(diagram.lifelines(cex.steps[0].state)) if diagram is not None and cex.steps else []
    used = _order(order, (name for _, items in drawn for item in items for name in _names(item)))
    if drawn and not used:  # only a mark, on a step that drew nothing: a lifeline to put it on
        used = [order[0] if order else "run"]
    lines = ["sequenceDiagram"] + [f"    participant {_pid(name)} as {_text(name)}" for name in used]
    for index, items in drawn:
        last = mark and index == final
        body = [_line(item, f"{index}. " if i == 0 else "") for i, item in enumerate(items)]
        if last:
            over = _span(used, [name for item in items for name in _names(item)])
            body.append(f"    Note over {over}: {_text(mark if items else f'{index}. {mark}')}")
            body = [f"    rect {BREAK_SHADE}"] + ["    " + b for b in body] + ["    end"]
        lines += body
    if cex.loop is not None and used:
        lines.append(f"    Note over {_span(used, used)}: {_text(f'↻ back to state {cex.loop}: the run loops from there for ever')}")
    return "\n".join(lines) + "\n"


def markdown(title: str, cex: Counterexample, diagram: Diagram | None, mark: str, hide: tuple[str, ...] = (), note: str = "") -> str:
    """A run as Markdown: a title, a note, its numbered steps and its sequence diagram."""
    steps = "\n".join(render_steps(cex, hide))
    return f"# {title}\n\n" + (f"{note}\n\n" if note else "") + f"```text\n{steps}\n```\n\n```mermaid\n{to_mermaid(cex, diagram, mark)}```\n"


def _order(declared: list[str], appearing: Iterable[str]) -> list[str]:
    """The processes that appear, in the declared order, then those not declared as they appear."""
    seen: list[str] = []
    for name in appearing:
        if name not in seen:
            seen.append(name)
    return [d for d in declared if d in seen] + [s for s in seen if s not in declared]


def _names(item: Drawn) -> tuple[str, ...]:
    return (item.sender, item.receiver) if isinstance(item, Arrow) else item.over


def _span(used: list[str], names: list[str]) -> str:
    """A note's ``over``: the leftmost and the rightmost of ``names`` (one name: just it)."""
    ranked = sorted(set(names), key=used.index)
    ends = [ranked[0], ranked[-1]] if len(ranked) > 1 else ranked[:1] or used[:1]
    return ",".join(_pid(e) for e in ends)


def _line(item: Drawn, number: str) -> str:
    if isinstance(item, Arrow):
        head = ("--" if item.answer else "-") + ("x" if item.lost else ">>")
        lost = " ✗ lost" if item.lost else ""
        return f"    {_pid(item.sender)}{head}{_pid(item.receiver)}: {_text(number + item.text + lost)}"
    text = ("✗ " if item.fault else "") + item.text
    return f"    Note over {','.join(_pid(o) for o in item.over[:2])}: {_text(number + text)}"


def _pid(name: str) -> str:
    """A Mermaid participant id: letters, digits and underscores only."""
    return "p_" + "".join(ch if ch.isalnum() else "_" for ch in name)


_MERMAID_ESCAPES = {"#": "#35;", ";": "#59;", "<": "#lt;", ">": "#gt;", '"': "#quot;"}


def _text(text: str) -> str:
    """Escape text for Mermaid: entity codes for the characters it would parse; a line break
    in ``text`` is one in the diagram."""
    return "<br/>".join("".join(_MERMAID_ESCAPES.get(ch, ch) for ch in part) for part in text.split("\n"))

