"""C*One traces: the columns, what a header's constants and each event must satisfy, how events
become the tuples of specs/cone/TraceCone.tla, and how a rejected event is explained.

An event names the spec action it implements, as the spec's history variable ``action`` names
the step, and logs:

- keys: ``client`` (an adder is named by its photo's key, e.g. ``c1``; a retagger changes photo
  ``p0``), ``attempt`` (the transaction is ``<<client, attempt>>``), ``coordinator`` (``x1`` the
  master, ``x2`` and ``x3`` its backups in failover order, one per data centre), ``peer`` (the
  coordinator a cut or healed heartbeat link goes to), ``batch`` (the storage batch: 1, 2, ...
  in the order sent), ``replica`` (1, 2, 3: the replica a mutation reached or was lost on the way
  to), ``dc`` (the data centre lost: 1, 2, 3, where coordinator xN and replica N live);
- outcomes: ``result`` (CoBegin: ok, orphan (the client no longer waits: an unborn Begin served
  after a failover) or locked; CoRead: ok or locked; ClientTimeout: unknown (a commit) or failed;
  CoCommitDone: committed or none (the client had stopped waiting); Resume: fenced or running),
  ``ts`` (the commit timestamp), ``mutations`` (how many mutations the batch sent holds, index
  rows included), ``read_ts``/``read_val`` (the timestamp and value of the cell a
  read returned; ``read_ts`` -1: no cell, or read from the transaction's own writes),
  ``read_txn`` (for people: the transaction that wrote what was read);
- post-state: ``clock`` (the coordinator's), ``tx_state`` (the transaction's at the coordinator:
  none, open, committing, indexing), ``client_state`` (idle, begin, open, commit, done).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trace_check.traces.protocol import INT, LIST, STRING, Columns, Constants, Diagnosis, Encoding, Event, ProtocolInputError

from .actions import EVENTS
from .constants import BUGS, CO_NAMES, REPLICAS

SPEC_DIR = Path(__file__).resolve().parents[2] / "specs" / "cone"
SPEC_MODULES = ("Cone.tla", "ConeProperties.tla")
TRACE_MODULE = "TraceCone"

KEY_COLUMNS = ("client", "attempt", "coordinator", "peer", "batch", "replica", "dc")
OUTCOME_COLUMNS = ("result", "ts", "mutations", "read_ts", "read_val", "read_txn")
POST_COLUMNS = ("clock", "tx_state", "client_state")
ORDER = ("event", "action", *KEY_COLUMNS, *OUTCOME_COLUMNS, *POST_COLUMNS)
INFO_COLUMNS = frozenset({"event", "read_txn"})
STRING_COLUMNS = frozenset({"action", "client", "coordinator", "peer", "result", "read_txn", "tx_state", "client_state"})
COMPARED = tuple(c for c in ORDER if c not in INFO_COLUMNS and c != "action")
PARAMS = ("client", "attempt", "coordinator", "peer", "batch")

RESULTS = frozenset({"ok", "orphan", "locked", "unknown", "failed", "committed", "none", "fenced", "running"})
TX_STATES = frozenset({"none", "open", "committing", "indexing"})
CLIENT_STATES = frozenset({"idle", "begin", "open", "commit", "done"})

COLUMNS = Columns(
    order=ORDER,
    kinds={c: STRING if c in STRING_COLUMNS else INT for c in ORDER},
    enums={
        "action": frozenset(EVENTS),
        "coordinator": frozenset(CO_NAMES),
        "peer": frozenset(CO_NAMES),
        "result": RESULTS,
        "tx_state": TX_STATES,
        "client_state": CLIENT_STATES,
    },
    info=INFO_COLUMNS,
)
LOGGED = tuple(c for c in ORDER if c not in ("event", "action"))

_TXN = ("client", "attempt")
_CO_TXN = ("coordinator", *_TXN, "tx_state", "client_state")
EVENT_COLUMNS: dict[str, frozenset[str]] = {
    ev: frozenset(cols)
    for ev, cols in {
        "ClientBegin": (*_TXN, "client_state"),
        "ClientCommit": (*_TXN, "client_state"),
        "ClientRollback": (*_TXN, "client_state"),
        "ClientTimeout": (*_TXN, "result", "client_state"),
        "CoBegin": (*_CO_TXN, "result", "read_ts", "read_val", "clock"),
        "CoUnbornExpire": _TXN,
        "CoRead": (*_CO_TXN, "result", "read_ts", "read_val"),
        "CoWrite": (*_CO_TXN, "batch", "clock"),
        "CoCommit": (*_CO_TXN, "batch", "ts", "mutations", "clock"),
        "CoCommitDone": (*_CO_TXN, "batch", "result"),
        "CoIndexWrite": ("coordinator", *_TXN, "batch", "mutations", "tx_state"),
        "CoTxTimeout": ("coordinator", *_TXN, "tx_state"),
        "ApplyMutation": ("batch", "replica"),
        "DropMutation": ("batch", "replica"),
        "BatchlogReplay": ("batch",),
        "Cut": ("coordinator", "peer"),
        "Heal": ("coordinator", "peer"),
        "CoSelfFence": ("coordinator",),
        "DeclareDead": ("coordinator",),
        "CoActivate": ("coordinator", "clock"),
        "Crash": ("coordinator",),
        "Pause": ("coordinator",),
        "Resume": ("coordinator", "result"),
        "DcFail": ("dc",),
    }.items()
}
assert set(EVENT_COLUMNS) == set(EVENTS), "every event of the table of actions has its columns"
_RESULTS_OF = {
    "ClientTimeout": {"unknown", "failed"},
    "CoBegin": {"ok", "orphan", "locked"},
    "CoRead": {"ok", "locked"},
    "CoCommitDone": {"committed", "none"},
    "Resume": {"fenced", "running"},
}

CONSTANT_KINDS = {
    "Adders": LIST,
    "Retaggers": LIST,
    "RetagTo": INT,
    "MaxAttempts": INT,
    "MaxCrashes": INT,
    "MaxPauses": INT,
    "MaxCuts": INT,
    "MaxDrops": INT,
    "MaxDcFails": INT,
    "Bugs": LIST,
}
DEFAULTS: dict[str, Any] = {"Bugs": [], "MaxDcFails": 0}


def _name(s: Any) -> bool:
    return isinstance(s, str) and bool(s) and all(32 < ord(ch) < 127 for ch in s)


def check_constants(k: Constants) -> None:
    adders, retaggers = k["Adders"], k["Retaggers"]
    for name, names in (("Adders", adders), ("Retaggers", retaggers)):
        if not all(_name(c) for c in names) or len(set(names)) != len(names):
            raise ProtocolInputError(f'"{name}" must be a list of distinct printable names without spaces')
    if set(adders) & set(retaggers):
        raise ProtocolInputError(f'"Adders" and "Retaggers" share {sorted(set(adders) & set(retaggers))[0]!r}: a client is one or the other')
    if "p0" in adders:
        raise ProtocolInputError('"Adders" names a photo key; "p0" is the photo the data starts with')
    if not adders and not retaggers:
        raise ProtocolInputError('the trace has no client: give "Adders" or "Retaggers"')
    if k["MaxAttempts"] < 1:
        raise ProtocolInputError(f'"MaxAttempts" must be at least 1, got {k["MaxAttempts"]}')
    for name in ("RetagTo", "MaxCrashes", "MaxPauses", "MaxCuts", "MaxDrops", "MaxDcFails"):
        if k[name] < 0:
            raise ProtocolInputError(f'"{name}" must be 0 or more, got {k[name]}')
    bad = [b for b in k["Bugs"] if b not in BUGS]
    if bad:
        raise ProtocolInputError(f'"Bugs": {json.dumps(bad[0])} is not one of the spec\'s Bugs ({", ".join(BUGS)})')


def spec_constants(k: Constants) -> Constants:
    """Always the correct design: a buggy engine's trace must be rejected."""
    return {**k, "Bugs": []}


def check_event(ev: Event, k: Constants) -> None:
    a = ev["action"]
    allowed = EVENT_COLUMNS[a]
    for c in ev:
        if c not in allowed and c not in INFO_COLUMNS and c != "action":
            raise ProtocolInputError(f'{a}: field "{c}" is not something {a} logs; it logs {", ".join(sorted(allowed))}')
    clients = list(k["Adders"]) + list(k["Retaggers"])

    def within(col: str, valid: Any, what: str) -> None:
        if col in ev and ev[col] not in valid:
            raise ProtocolInputError(f'{a}: field "{col}" = {json.dumps(ev[col])} is not {what} of this trace\'s constants')

    within("client", clients, "a client (Adders or Retaggers)")
    within("attempt", range(1, k["MaxAttempts"] + 1), "an attempt (1..MaxAttempts)")
    within("replica", REPLICAS, "a replica (1, 2 or 3)")
    within("dc", REPLICAS, "a data centre (1, 2 or 3)")
    within("batch", range(1, 2**31), "a batch (1, 2, ...)")
    if a == "CoWrite":
        within("batch", range(0, 2**31), "a batch (0: none, 1, 2, ...)")
    if "result" in ev:
        within("result", _RESULTS_OF.get(a, set()), f"an outcome of {a}")
    if ev.get("peer") is not None and ev.get("peer") == ev.get("coordinator"):
        raise ProtocolInputError(f'{a}: field "peer" names the coordinator itself; a heartbeat link joins two coordinators')


def params(ev: Event) -> tuple[Any, ...]:
    """<<client, attempt, coordinator, peer, batch>>."""
    return tuple(ev.get(c, -1 if COLUMNS.kinds[c] == INT else "") for c in PARAMS)


ENCODING = Encoding(params=params, groups=(COMPARED,), diagnosed=0)

DIAGNOSES = (
    Diagnosis("DiagnoseEnabled", lambda ev: f"the spec's {ev['action']} is not enabled here: its guard is false in this state"),
    Diagnosis("DiagnoseOutcome", lambda ev: f"the step is possible, but not as {ev['action']}"),
)


def event_text(ev: Event) -> str:
    """One event as a short line: ``CoCommit x1 c1/1 batch 1 ts 2 [committing]``."""
    parts = [str(ev.get("action", "?"))]
    if "coordinator" in ev:
        parts.append(str(ev["coordinator"]))
    if "peer" in ev:
        parts.append(f"to {ev['peer']}")
    if "client" in ev:
        parts.append(f"{ev['client']}/{ev.get('attempt', '?')}")
    for col in ("batch", "replica", "dc", "ts"):
        if col in ev:
            parts.append(f"{col} {ev[col]}")
    if "read_val" in ev:
        parts.append(f"read {ev['read_val']}@{ev.get('read_ts', '?')}" + (f" of {ev['read_txn']}" if "read_txn" in ev else ""))
    if "result" in ev:
        parts.append(f"-> {ev['result']}")
    for col, label in (("clock", "clock"), ("tx_state", "tx"), ("client_state", "client")):
        if col in ev:
            parts.append(f"[{label} {ev[col]}]")
    return " ".join(parts)


def alter(col: str, v: Any, k: Constants) -> Any:
    """Another client or coordinator of this trace's constants."""
    names = sorted(list(k["Adders"]) + list(k["Retaggers"])) if col == "client" else list(CO_NAMES) if col in ("coordinator", "peer") else None
    if names and len(names) > 1 and v in names:
        return names[(names.index(v) + 1) % len(names)]
    return None


def why_legal(op: str, ev: Event, index: int, length: int) -> str | None:
    return None
