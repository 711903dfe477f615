"""Resharding's runs as sequence diagrams: the workers between topic A (the source), topic B (the
target) and the consumer group (which assigns the source partitions and keeps their committed
offsets). A message is ``A1:0``, the one at offset 0 of source partition 1; target partitions are
``B1``, ``B2``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_check.traces.protocol import Arrow, Diagram, Note

SOURCE, TARGET, GROUP = "topic A", "topic B", "group"


def lifelines(first: Mapping[str, Any]) -> tuple[str, ...]:
    return (SOURCE, *sorted(first["wk"]), TARGET, GROUP)


def draw(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Arrow | Note, ...]:
    act = after["action"]
    name, w, args = act["name"], act["actor"], act["args"]
    if name == "Fetch":
        return (Arrow(w, SOURCE, f"Fetch(A{args['src']}, offset {args['off']})"),)
    if name == "Write":
        msg = f"A{args['src']}:{args['off']}"
        if after["target"] == before["target"]:  # a transaction's write: durable, invisible until the commit
            return (Arrow(w, TARGET, f"Produce(B{args['dst']}, {msg}) in the transaction"),)
        return (Arrow(w, TARGET, f"Produce(B{args['dst']}, {msg})"), Arrow(TARGET, w, "ack", answer=True))
    if name == "CommitOffset":
        return (Arrow(w, GROUP, f"OffsetCommit(A{args['src']}, {args['off'] + 1})"),)
    if name == "CommitTxn":
        return (Arrow(w, TARGET, f"CommitTxn(A{args['src']}:{args['off']} visible, offset {args['off'] + 1})"),
                Arrow(TARGET, w, "committed", answer=True))
    if name == "CommitRejected":
        return (Arrow(w, TARGET, f"CommitTxn(A{args['src']} read at {args['read']})"),
                Arrow(TARGET, w, f"rejected: A{args['src']} is committed at {args['committed']}", answer=True))
    if name == "TakeOver":
        return (Arrow(GROUP, w, f"Assign(A{args['src']}) from hung {_at(before['owner'], args['src'])}"),)
    if name == "Crash":
        return (Note((w,), "crash, restart: the open work is lost", fault=True),)
    if name == "Hang":
        return (Note((w,), "hang", fault=True),)
    if name == "Resume":
        return (Note((w,), "resume: a zombie, unaware it lost its partition"),)
    return ()


def _at(f: Any, key: int) -> Any:
    """f[key] of a function over 1..n, which TLC prints as a sequence."""
    return f[key - 1] if isinstance(f, tuple) else f[key]


DIAGRAM = Diagram(lifelines=lifelines, draw=draw)
