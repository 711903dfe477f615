"""What a model-checking run asks for (``CheckTask``) and what it found (``CheckResult``).

One pair of types for both engines: TLC and Apalache differ in how they are run and how they
report, not in what a user wants to know.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs


class Outcome(enum.Enum):
    HOLDS = "holds"
    VIOLATED = "violated"  # an invariant is violated; CheckResult.invariant names it
    DEADLOCK = "deadlock"
    PARSE_ERROR = "parse error"
    SEMANTIC_ERROR = "semantic error"  # the spec parses but does not resolve (unknown name, level error)
    CONFIG_ERROR = "config error"  # the model asks for something the spec does not define
    TYPE_ERROR = "type error"  # Apalache's type checker rejected the spec
    EVAL_ERROR = "evaluation error"  # the engine could not evaluate an expression in some state
    ENGINE_CRASH = "engine crash"
    TIMEOUT = "timeout"


@attrs.frozen
class TlcOptions:
    """TLC-only bounds and reductions, each naming an operator of the model module."""

    constraints: tuple[str, ...] = ()
    action_constraints: tuple[str, ...] = ()
    symmetry: str | None = None
    view: str | None = None
    workers: int = 1
    check_deadlock: bool = True
    # The JVM's heap limit (-Xmx) unless $TXCONFORM_TLC_JAVA_OPTS sets one; None: Java's default
    # (a quarter of the memory), which a long run fills with garbage before it collects any.
    heap: str | None = None
    # The JVM's garbage collector unless $TXCONFORM_TLC_JAVA_OPTS names one: ParallelGC, what TLC
    # advises for model checking; a trace's window, one worker with a 1 GB heap, runs faster with
    # SerialGC, which keeps no collector threads busy beside it (docs/benchmarks.md, "Long traces").
    collector: str = "ParallelGC"
    # Compile with the JIT's first tier alone (-XX:TieredStopAtLevel=1) unless
    # $TXCONFORM_TLC_JAVA_OPTS says how to compile: faster when two TLC runs share two cores,
    # whose optimizing compiler threads then take CPU from the other run's worker; slower for a
    # run that has the cores to itself (docs/benchmarks.md, "Long traces").
    quick_jit: bool = False
    # Folders or jars put on TLC's classpath after tla2tools.jar: Java that overrides operators
    # (trace_check/engines/tlc_java.py: a trace window's start states read from a file).
    classpath: tuple[str, ...] = ()


@attrs.frozen
class ApalacheOptions:
    """Apalache-only bounds: Apalache checks executions of at most ``length`` steps."""

    length: int = 10


@attrs.frozen
class Checkpointing:
    """How a TLC run uses checkpoints: how often it writes them, and whether it resumes the last one."""

    resume: bool = False
    every_minutes: int | None = None  # None: TLC's default (30)


@attrs.frozen
class CheckTask:
    """One model to check: a module, its constants, the invariants, and each engine's bounds."""

    name: str
    spec_file: Path  # the module to check; its folder holds the modules it extends
    constants: Mapping[str, Any] = attrs.field(factory=dict)  # int, str, bool, or a list (a set)
    # constants bound to operators of the module, e.g. {"Trace": "TraceData"} (TLC: Trace <- TraceData)
    substitutions: Mapping[str, str] = attrs.field(factory=dict)
    invariants: tuple[str, ...] = ()
    # The named parts of each invariant that is a conjunction of names (models.definitions:
    # named_parts): the engines check the parts one by one, in order, so that a violation names
    # the part that is false (CheckResult.part). The same states are explored either way.
    parts: Mapping[str, tuple[str, ...]] = attrs.field(factory=dict)
    init: str = "Init"
    next: str = "Next"
    # A spec formula with fairness (e.g. "FairSpec"): TLC then checks SPECIFICATION it, not
    # INIT/NEXT, and ``properties`` are temporal properties checked against it.
    specification: str | None = None
    properties: tuple[str, ...] = ()
    tlc: TlcOptions = TlcOptions()
    apalache: ApalacheOptions = ApalacheOptions()
    timeout: float = 300.0

    @property
    def module(self) -> str:
        return self.spec_file.stem

    @property
    def checked_invariants(self) -> tuple[str, ...]:
        """What the engine checks: each invariant, or its named parts in its place (each name once)."""
        return tuple(dict.fromkeys(p for inv in self.invariants for p in self.parts.get(inv, (inv,))))

    def named(self, result: CheckResult) -> CheckResult:
        """``result`` with a violated part reported as its invariant, the part kept beside it (a
        part that is also one of the model's invariants is reported as itself)."""
        if result.invariant in self.invariants:
            return result
        for inv, parts in self.parts.items():
            if result.invariant in parts and result.invariant != inv:
                return attrs.evolve(result, invariant=inv, part=result.invariant)
        return result


@attrs.frozen
class Step:
    """One state of a trace and the action that produced it (``None`` for the initial state)."""

    index: int  # 1-based, as TLC numbers states
    action: str | None
    state: Mapping[str, Any]
    location: str | None = None  # where the action is defined, when the engine says


@attrs.frozen
class Counterexample:
    steps: tuple[Step, ...]
    variables: tuple[str, ...]
    loop: int | None = None  # index the lasso loops back to, for liveness traces


@attrs.frozen
class Progress:
    """A progress report an engine gives while it runs."""

    elapsed: float
    distinct_states: int | None = None
    states_generated: int | None = None
    queue: int | None = None
    phase: str = "checking"


ProgressCallback = Callable[[Progress], None]


@attrs.frozen
class CheckResult:
    engine: str
    outcome: Outcome
    wall_time: float
    invariant: str | None = None
    part: str | None = None  # the named part of ``invariant`` that is false (CheckTask.parts)
    message: str = ""  # one line, for anything but HOLDS
    counterexample: Counterexample | None = None
    distinct_states: int | None = None
    states_generated: int | None = None
    depth: int | None = None
    command: tuple[str, ...] = ()
    log_file: Path | None = None
    bound: str | None = None  # what a "holds" is limited to, e.g. Apalache's "length <= 12"
    resumed_from: str | None = None  # the time of the TLC checkpoint this run continued from

    @property
    def verdict(self) -> str:
        """The outcome in the registry's vocabulary: ``holds``, ``violates Inv``, ``deadlock``, ..."""
        if self.outcome is Outcome.VIOLATED:
            return f"violates {self.invariant}"
        value: str = self.outcome.value
        return value

    @property
    def states_per_second(self) -> float | None:
        if self.states_generated is None or self.wall_time <= 0:
            return None
        return self.states_generated / self.wall_time
