"""C*One's runs (specs/cone/Cone.tla) as sequence diagrams: the clients, the coordinators ``x1``,
``x2``, ``x3`` (one master and two backups, coordinator i in data centre i) and the Cassandra
replicas ``r1``, ``r2``, ``r3`` (replica i in data centre i).

The spec has no network variable: a client's request and the coordinator's step that serves it
are one arrow each way (``Begin`` to every coordinator that is up, ``Read``, ``Commit`` to the
client's coordinator, their answers back); a batch's mutation is an arrow from its coordinator to
a replica when the replica applies it, a cross when it is lost. A commit's logged batch is a note
on its coordinator; crashes, GC pauses, cut heartbeat links and a lost data centre are faults.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_check.traces.protocol import Arrow, Diagram, Note

QUIET = frozenset({"Finished"})


def coordinator(x: int) -> str:
    return f"x{x}"


def replica(r: int) -> str:
    return f"r{r}"


def lifelines(first: Mapping[str, Any]) -> tuple[str, ...]:
    n = len(first["co"])
    return (*sorted(first["cl"]), *(coordinator(x) for x in range(1, n + 1)), *(replica(r) for r in range(1, n + 1)))


def draw(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[Arrow | Note, ...]:
    act = after["action"]
    name, actor, client = str(act["name"]), str(act["actor"]), str(act["client"])
    args = act["args"] if isinstance(act["args"], Mapping) else {}
    out: list[Arrow | Note] = []
    if name == "ClientBegin":
        got = [x for x in _keys(after["unborn"]) if len(_at(after["unborn"], x)) > len(_at(before["unborn"], x))]
        out += [Arrow(client, coordinator(x), f"Begin(attempt {args.get('attempt')})") for x in got]
    elif name == "CoBegin":
        answer = "locked: fails" if args.get("locked") else f"open, album {_read(args, 'absent')}"
        orphan = " (client gone: an orphan)" if args.get("orphan") else ""
        out.append(Arrow(actor, client, f"Begin → {answer}{orphan}", answer=True))
    elif name == "CoRead":
        out.append(Arrow(client, actor, "Read(album)"))
        out.append(Arrow(actor, client, "→ locked: rolled back" if args.get("locked") else f"→ {_read(args, 'its own write')}", answer=True))
    elif name == "CoWrite":
        out.append(Arrow(client, actor, "Write"))
        out.append(Note((actor,), "buffered in memory" if not args.get("batch") else f"written through: batch {args['batch']}"))
    elif name in ("ClientCommit", "ClientRollback"):
        co = _at(after["cl"], client)["co"]
        out.append(Arrow(client, coordinator(co) if co else client, name.removeprefix("Client")))
    elif name == "CoCommit":
        batch = _at(after["batches"], args["batch"])
        kind = "logged batch" if batch["logged"] else "unlogged batch"
        out.append(Note((actor,), f"{kind} {args['batch']}, ts {args.get('ts')}: to every replica"))
    elif name == "CoCommitDone":
        out.append(Note((actor,), f"batch {args.get('batch')}: QUORUM, locks released"))
        if args.get("told"):
            out.append(Arrow(actor, client, "Commit → committed", answer=True))
    elif name == "CoIndexWrite":
        out.append(Note((actor,), f"index batch {args.get('batch')}"))
    elif name == "CoTxTimeout":
        out.append(Note((actor,), f"{client}'s transaction times out: rolled back"))
    elif name == "CoUnbornExpire":
        out.append(Note((client,), "its Begin expires at the backups"))
    elif name == "ClientTimeout":
        out.append(Note((client,), "timeout: outcome unknown" if args.get("unknown") else "timeout: failed"))
    elif name in ("ApplyMutation", "DropMutation"):
        batch = _at(after["batches"], args["batch"])
        out.append(Arrow(coordinator(batch["co"]), replica(args["replica"]),
                         f"Mutation(batch {args['batch']}, ts {batch['ts']})", lost=name == "DropMutation"))
    elif name == "BatchlogReplay":
        batch = _at(after["batches"], args["batch"])
        out.append(Note((replica(min(batch["bdc"] or {1})),), f"batchlog replays batch {args['batch']}"))
    out += _faults(name, actor, args)
    if name == "Resume":
        active = any(coordinator(x) == actor and _at(after["co"], x)["active"] for x in _keys(after["co"]))
        out.append(Note((actor,), "resumes, still acting as master" if active else "resumes"))
    if not out and name not in QUIET:
        out.append(Note((actor,), name))
    return tuple(out)


def _faults(name: str, actor: str, args: Mapping[str, Any]) -> list[Note]:
    if name in ("Cut", "Heal"):
        verb = "cut" if name == "Cut" else "healed"
        return [Note((actor, coordinator(args["to"])), f"heartbeats {actor} → x{args['to']} {verb}", fault=name == "Cut")]
    faults = {"Crash": "crash: locks and transactions lost", "Pause": "GC pause", "CoSelfFence": "fences itself",
              "DeclareDead": "declared dead by a quorum"}
    if name in faults:
        return [Note((actor,), faults[name], fault=True)]
    if name == "DcFail":
        return [Note((actor, replica(args["dc"])), f"data centre {args['dc']} lost", fault=True)]
    if name == "CoActivate":
        return [Note((actor,), "becomes master")]
    return []


def _read(args: Mapping[str, Any], untimed: str) -> str:
    """A value read and its timestamp; with none (-1), ``untimed`` says why (no cell, or the
    transaction's own buffered write)."""
    if args.get("read_ts", -1) < 0:
        return untimed if untimed == "absent" else f"{args.get('read_val')} ({untimed})"
    return f"{args.get('read_val')} at ts {args.get('read_ts')}"


def _keys(f: Any) -> range | Any:
    return range(1, len(f) + 1) if isinstance(f, tuple) else f.keys()


def _at(f: Any, key: Any) -> Any:
    """f[key], for a function over 1..n that TLC prints as a sequence as well."""
    return f[key - 1] if isinstance(f, tuple) else f[key]


DIAGRAM = Diagram(lifelines=lifelines, draw=draw)
