"""The contract a protocol plug-in fills in: everything ``trace_check`` needs to know of a protocol.

A protocol (Kafka, YDB Topics, C*One, a test's toy) is one folder of specs (``specs/<protocol>/``)
and one Python package (``ref_impl/<protocol>/``) whose ``protocol`` module defines ``PROTOCOL``,
a ``Protocol``. ``trace_check.traces.plugins`` discovers them; ``simulate``, ``check``, ``mutate`` and
the trace reader dispatch on a trace header's ``protocol`` and never name a protocol themselves.

This module is a leaf: a plug-in imports it and ``trace_check.traces.format``, and nothing else of
``trace_check``.

The trace spec a plug-in names follows one convention, which ``trace_check.traces.validation``
relies on: it declares the constants ``TraceChunks`` (the events, as tuples, in chunks),
``ChunkSize`` and ``Shapes`` (per event shape, the logged columns of each compared group), and the
variable ``l`` (the next event); it defines ``TraceInit``, ``TraceNext``, ``TraceAccepted``,
``AtEnd(inv)``, the diagnosis operators the plug-in lists (each taking the stuck event's index),
``DiagnoseField(stuck, column, rendered)`` and ``DiagnoseReached(stuck)``. An event's tuple is
``<<action, shape>> \\o params \\o <<group_1, ..., group_k>> \\o tail``, where each group is TLC's
``ToString`` of the logged columns of that group and the tail is usually empty.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

Event = dict[str, Any]
Constants = dict[str, Any]

# The kinds a trace column or a header constant may have. INT is a number TLC can represent
# (32-bit); INT64 a signed 64-bit number (format version 2), for columns the spec never reads.
STRING, INT, BOOL, OFFSETS, LIST, INT64 = "string", "int", "bool", "offsets", "list", "int64"
KINDS = (STRING, INT, BOOL, OFFSETS, LIST, INT64)


class ProtocolInputError(ValueError):
    """Bad input to a plug-in (a trace's constants or event, a simulate option): the message is one
    line saying what is wrong and what is expected; the caller adds the file, line or option."""


@attrs.frozen
class Columns:
    """The columns of a protocol's trace events, in the order a writer puts them.

    ``kinds`` maps every column to one of KINDS (``offsets``: a list of whole numbers >= 0;
    ``int64``: only for ``info`` columns, since TLC's integers are 32-bit); ``enums`` lists the
    values a string column may take; ``info`` columns are for people and partitioning only: the
    spec never reads them. ``since`` gives the trace format version that introduced a column
    (absent: version 1): an older trace that has it is refused. ``event`` and ``action`` are
    always columns.
    """

    order: tuple[str, ...]
    kinds: Mapping[str, str]
    enums: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    info: frozenset[str] = frozenset({"event"})
    since: Mapping[str, int] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        for required in ("event", "action"):
            if required not in self.order:
                raise ValueError(f"Columns: {required!r} must be a column")
        missing = [c for c in self.order if c not in self.kinds]
        if missing:
            raise ValueError(f"Columns: no kind for {', '.join(missing)}")
        bad = [c for c, k in self.kinds.items() if k not in KINDS]
        if bad:
            raise ValueError(f"Columns: {bad[0]} has kind {self.kinds[bad[0]]!r}; kinds are {', '.join(KINDS)}")
        wide = [c for c, k in self.kinds.items() if k == INT64 and c not in self.info]
        if wide:
            raise ValueError(f"Columns: {wide[0]} is int64, so it must be an info column: the spec's integers are TLC's, 32-bit")
        unknown = [c for c in self.since if c not in self.kinds]
        if unknown:
            raise ValueError(f"Columns: since names {unknown[0]}, which is not a column")


@attrs.frozen
class Encoding:
    """How the events of a trace become the trace spec's tuples.

    ``params(event)`` gives the event's parameters (the values the spec's dispatch reads, with a
    placeholder for what the event does not log); ``groups`` lists, per compared group, the columns
    the spec renders with ``ToString`` and compares as one string; ``diagnosed`` is the index of
    the group whose columns are diagnosed one by one when an event is rejected.
    """

    params: Callable[[Event], tuple[Any, ...]]
    groups: tuple[tuple[str, ...], ...]
    diagnosed: int
    # What some events carry after the groups (e.g. a request the spec builds from the event);
    # most events carry nothing, so they cost the trace spec's parser nothing.
    tail: Callable[[Event], tuple[Any, ...]] = lambda event: ()


@attrs.frozen
class Diagnosis:
    """A diagnosis operator of the trace spec (``name(stuck)``) and what it means when it fails
    first: ``explain(event)`` is one line for the user."""

    name: str
    explain: Callable[[Event], str]


@attrs.frozen
class SimulateOptions:
    """What ``txconform simulate`` passes on; ``workload``, ``faults`` and ``bugs`` are the plug-in's
    own little languages, parsed by it."""

    seed: int = 0
    workload: str = ""
    faults: str = "none"
    bugs: str = ""
    max_events: int = 100_000
    progress: Callable[[int], None] | None = None


@attrs.frozen
class ServeOptions:
    """What ``txconform serve`` (and the pytest fixture) pass on to a plug-in that serves real
    clients: where to listen, the protocol version, the fault switches and bugs (the plug-in's own
    little languages), and where to write the session's trace."""

    port: int = 0
    host: str = "127.0.0.1"
    version: str = ""
    partitions: int = 1
    bugs: str = ""
    faults: str = ""
    trace: Path | None = None
    auto_create: bool = True
    workload: str = ""  # the shape of the served engine, in the plug-in's workload language (ydb: copy:msgs=8,...)


class Server(typing.Protocol):
    """A plug-in's server, bound to its port and not yet serving (``serve`` returns it)."""

    port: int

    @property
    def bootstrap(self) -> str: ...  # "host:port", for clients' bootstrap.servers

    def start(self) -> Server: ...  # serve in a background thread
    def run(self, announce: Callable[[str], None]) -> None: ...  # serve here until SIGINT or SIGTERM
    def stop(self) -> Path | None: ...  # stop; write the trace (its path, if one was asked for)
    def summary(self) -> list[str]: ...  # lines for people: what was served, what was refused


class StateReplay(typing.Protocol):
    """The reference engine replaying a trace, window by window (``Protocol.spec_states``)."""

    def advance(self, events: list[Event]) -> Mapping[str, Any] | None:
        """Take the trace's next ``events``; the spec state after them, every variable but the
        trace's cursor and ``Protocol.history``, as ``trace_check.values.tla`` values (what
        ``trace_check.values.tlc_print.parse_value`` gives for the state TLC prints); None once the
        engine cannot take an event (and from then on)."""
        ...


@attrs.frozen
class Simulation:
    """A finished simulated run: the trace header and events, and one line that describes it."""

    header: dict[str, Any]
    events: list[Event]
    summary: str


@attrs.frozen
class Arrow:
    """A message in a sequence diagram: from the process ``sender`` to the process ``receiver``,
    ``text`` in the protocol's own words (``EndTxn(commit, epoch 0)``); an ``answer`` is drawn
    dashed, and a ``lost`` message ends in a cross where it was lost."""

    sender: str
    receiver: str
    text: str
    answer: bool = False
    lost: bool = False


@attrs.frozen
class Note:
    """A note on the processes ``over`` (one, or the two a note spans): a state change that matters
    (``tlog: PrepareCommit``), or with ``fault`` a fault (a crash, a hang, a failover), marked so."""

    over: tuple[str, ...]
    text: str
    fault: bool = False


@attrs.frozen
class Diagram:
    """How a protocol's runs become sequence diagrams with its processes as lifelines (a spec
    folder's ``models.toml`` names the module that defines one as ``DIAGRAM``, its key ``diagram``).

    ``lifelines(first)`` gives every process in the order they are drawn, from the first state of
    a run; ``draw(before, after)`` gives what one step did, from the states before and after it
    (``after["action"]`` names the step, when the spec keeps that history variable): the messages
    it sent and answered, the faults, the state changes that matter. A diagram shows the processes
    its steps draw on, in the order ``lifelines`` gives."""

    lifelines: Callable[[Mapping[str, Any]], tuple[str, ...]]
    draw: Callable[[Mapping[str, Any], Mapping[str, Any]], tuple[Arrow | Note, ...]]


@attrs.frozen
class Protocol:
    """A protocol plug-in. Every callable gets plain JSON values, as a trace holds them."""

    name: str  # the trace header's "protocol"
    title: str  # e.g. "Apache Kafka transactions"
    spec_dir: Path  # the folder of the spec modules
    spec_modules: tuple[str, ...]  # hashed into a trace's spec_hash; the first is the spec
    trace_module: str  # the trace spec (TLC encoding) the generated module extends
    columns: Columns
    constants: Mapping[str, str]  # each header constant and its kind (KINDS)
    encoding: Encoding
    diagnoses: tuple[Diagnosis, ...]
    # Checks of a header's constants beyond their kinds (raise ProtocolInputError).
    check_constants: Callable[[Constants], None]
    # Checks of one event against the constants, beyond column kinds and enums (raise ProtocolInputError).
    check_event: Callable[[Event, Constants], None]
    # The constants the spec is checked with (e.g. with every bug switched off).
    spec_constants: Callable[[Constants], Constants]
    simulate: Callable[[SimulateOptions], Simulation]
    # The 1-based index of the first event the reference engine cannot reproduce, or None.
    replay: Callable[[Constants, list[Event]], int | None]
    # What the reference engine logs for column ``field`` at event n, after replaying the ones before.
    engine_value: Callable[[Constants, list[Event], int, str], Any]
    event_text: Callable[[Event], str]  # one event as a short line
    # Where the invariants come from: the base of this registry, or else ``invariants``.
    registry: Path | None = None
    invariants: tuple[str, ...] = ()
    engine_noun: str = "the reference engine"  # how messages name the reference engine
    records_module: str | None = None  # the record encoding (Apalache), if the protocol has one
    defaults: Mapping[str, Any] = attrs.field(factory=dict)  # constants an older trace may lack
    # Mutation testing: another value for a column the generic alterations do not cover.
    alter: Callable[[str, Any, Constants], Any] = lambda column, value, constants: None
    # Mutation testing: why a mutant the engine replays is a legal run (None: the generic reason).
    why_legal: Callable[[str, Event, int, int], str | None] = lambda op, event, index, length: None
    # Serving real clients (``txconform serve``): a bound server (ProtocolInputError for bad options).
    serve: Callable[[ServeOptions], Server] | None = None
    serve_port: int = 0  # the port ``txconform serve`` listens on unless told (0: a free one)
    # Logs: variables that are functions to sequences which the spec changes only by appending at
    # the end or by cutting back to a prefix (a test of the plug-in checks the spec's text for it;
    # for Kafka, LogsGrowOrAreCut in MCKafkaTxnForms model-checks it too). A window that starts
    # from one state fingerprints only what lies beyond that state's logs (handoff.py); after
    # every event a log is compared with the one before by its lengths, and an XSince form is
    # given those lengths (invariants.changed_definitions).
    logs: tuple[str, ...] = ()
    # Spec operators the trace check computes from its index of a log (reads.indexed_log) when it
    # keeps one: (operator, log, arity) names ``Op(a1, ..)`` and its form ``OpFromIndex(a1, ..,
    # idx)``, given the index of the log in the same state; the two must agree in every state (for
    # Kafka, MCKafkaTxnForms' IndexMeans checks PartitionLSO and LatestInstance). The window's TLC
    # run replaces the operator by the form (invariants.from_index_definitions).
    from_index: tuple[tuple[str, str, int], ...] = ()
    # Parallel windows: the reference engine replays the trace and gives the spec state at each
    # window's start, so that a window can run before the one ahead of it ends. Its verdict stands
    # only if that window's hand-off is exactly this state; otherwise it runs again from the
    # hand-off. A wrong state costs time, never a wrong verdict (windows.check_windows).
    spec_states: Callable[[Constants], StateReplay] | None = None
    # Bases of logs: for each log of ``logs`` that has one, the spec's constant operator of the
    # entries before the variable's (Kafka: PlogBase, empty in the spec) and its operator of every
    # log whole, base and variable (Plogs). A window of a long trace that starts from one state
    # gives the entries its logs begin with as the bases (up to ``base_limits``), read once from
    # a file, and the state holds only the entries after them: what TLC copies, normalizes and
    # fingerprints at a step is then what the window appended (handoff.Base).
    log_bases: Mapping[str, tuple[str, str]] = attrs.field(factory=dict)
    # The spec's operator that joins a base and the entries after it (Kafka: Joined, base \o after):
    # with txconform's Java for TLC, it is computed once for each value of the variable (TraceLoad's
    # TraceConcat, trace_check/engines/java/), not at every read of a log, and not at all where the
    # base is empty. (Bases need that Java.)
    log_join: str = ""
    # How far a base may reach into each log of a state (log, key: at most that many entries; a
    # key not given: all of them): where a later step could cut it back (Kafka: lag).
    base_limits: Callable[[Mapping[str, Any]], Mapping[str, Mapping[Any, int]]] = lambda state: {}
    # Variables the spec sets in every step and reads nowhere (a last step's name, for people):
    # the replayed state leaves them out and a hand-off is compared without them (a test of the
    # plug-in checks that no module of the spec reads them).
    history: tuple[str, ...] = ()
    # The spec action an event's action stands for (the trace spec's Bound), when the two names
    # differ (YDB: PartitionCommit -> PartitionApply): a rejection shows first what that action reads.
    spec_action: Callable[[str], str] = lambda action: action
    # The trace spec's definition of the spec's value of a logged column for the step (PostVal):
    # a rejection shows what it reads in the state before too, beside what the action reads.
    column_values: str = ""

    @property
    def spec(self) -> str:
        """The spec, as a trace header names it: ``kafka/KafkaTxn.tla``."""
        return f"{self.spec_dir.name}/{self.spec_modules[0]}"


# What a protocol's trace module (``ref_impl/<protocol>/trace.py``) defines under these names, and
# the field of ``Protocol`` each fills: a plug-in is declared from its trace module, not wired
# field by field (``declare``).
FROM_TRACE_MODULE = {
    "spec_dir": "SPEC_DIR",
    "spec_modules": "SPEC_MODULES",
    "trace_module": "TRACE_MODULE",
    "records_module": "RECORDS_MODULE",
    "columns": "COLUMNS",
    "constants": "CONSTANT_KINDS",
    "defaults": "DEFAULTS",
    "encoding": "ENCODING",
    "diagnoses": "DIAGNOSES",
    "check_constants": "check_constants",
    "check_event": "check_event",
    "spec_constants": "spec_constants",
    "spec_action": "spec_action",
    "event_text": "event_text",
    "alter": "alter",
    "why_legal": "why_legal",
}


def declare(trace: types.ModuleType, **fields: Any) -> Protocol:
    """The plug-in whose trace semantics are the module ``trace``: every field of
    ``FROM_TRACE_MODULE`` the module defines, the spec folder's ``models.toml`` as the registry
    when there is one, and ``fields`` (the name, the title, the engine's callables) for the rest;
    a field given in ``fields`` wins over the module's."""
    found = {field: getattr(trace, name) for field, name in FROM_TRACE_MODULE.items() if hasattr(trace, name)}
    if "spec_dir" in found and (found["spec_dir"] / "models.toml").exists():
        found["registry"] = found["spec_dir"] / "models.toml"
    return Protocol(**{**found, **fields})
