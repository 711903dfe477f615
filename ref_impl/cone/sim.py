"""Deterministic simulation of C*One: a seeded scheduler over the engine's enabled steps.

Workload ``album`` (the seed's photo album): ``adders`` clients each add a photo (c1, c2, ...),
``retaggers`` clients each change the indexed tag of photo p0 to ``retag_to`` (r1, ...), each
with ``attempts`` attempts. Faults: ``none``, ``all`` (one of each), or budgets
``crash=N,pause=N,cut=N,drop=N,dc=N`` (master crashes, GC pauses of the master, heartbeat links
cut, mutations lost, data centres lost). Bugs: the spec's ``Bugs``, joined with ``+``. The same seed gives the same
trace, byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from .actions import enabled_steps
from .constants import BUGS, Constants
from .engine import Engine

GENERATOR = "txconform ref_impl.cone 1"
NORMAL, FAULT = 10, 1


class SpecError(ValueError):
    """A workload, fault or bug option that cannot be parsed; the message says what is expected."""


def _settings(text: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = part.partition("=")
        if not eq and what == "faults":
            value = "1"
        if not eq and what == "workload":
            raise SpecError(f"{key}: a workload setting needs a value, e.g. {key}=1")
        out[key.strip()] = value.strip()
    return out


def _int(key: str, value: str, least: int, most: int) -> int:
    try:
        n = int(value)
    except ValueError:
        raise SpecError(f"{key}={value}: {key} needs a whole number") from None
    if not least <= n <= most:
        raise SpecError(f"{key}={value}: {key} must be between {least} and {most}")
    return n


@attrs.frozen
class Workload:
    """``album``, then optional ``:key=value,...`` (adders, retaggers, retag_to, attempts)."""

    adders: int = 2
    retaggers: int = 0
    retag_to: int = 1
    attempts: int = 2

    KEYS = ("adders", "retaggers", "retag_to", "attempts")
    LIMITS: ClassVar[dict[str, tuple[int, int]]] = {"adders": (0, 9), "retaggers": (0, 9), "retag_to": (0, 9), "attempts": (1, 9)}

    @classmethod
    def parse(cls, text: str) -> Workload:
        kind, _, rest = text.strip().partition(":")
        if kind != "album":
            raise SpecError(f"unknown workload {kind!r}; use album, e.g. album:adders=2,retaggers=1,attempts=2")
        fields: dict[str, Any] = {}
        for key, value in _settings(rest, "workload").items():
            if key not in cls.KEYS:
                raise SpecError(f"unknown workload setting {key!r}; use {', '.join(cls.KEYS)}")
            fields[key] = _int(key, value, *cls.LIMITS[key])
        w = cls(**fields)
        if w.adders + w.retaggers == 0:
            raise SpecError("the workload has no client: give adders=N or retaggers=N")
        return w

    def describe(self) -> str:
        d, default = attrs.asdict(self), attrs.asdict(Workload())
        changed = [f"{k}={v}" for k, v in d.items() if v != default[k]]
        return "album" + (":" + ",".join(changed) if changed else "")


@attrs.frozen
class Faults:
    """The fault budgets: the spec's MaxCrashes, MaxPauses, MaxCuts, MaxDrops, MaxDcFails."""

    crash: int = 0
    pause: int = 0
    cut: int = 0
    drop: int = 0
    dc: int = 0

    KEYS = ("crash", "pause", "cut", "drop", "dc")

    @classmethod
    def parse(cls, text: str) -> Faults:
        text = text.strip()
        if text in ("", "none"):
            return cls()
        if text == "all":
            return cls(1, 1, 1, 1, 1)
        fields: dict[str, int] = {}
        for key, value in _settings(text, "faults").items():
            if key not in cls.KEYS:
                raise SpecError(f"unknown fault {key!r}; use none, all, or {', '.join(k + '=N' for k in cls.KEYS)}")
            fields[key] = _int(key, value, 0, 9)
        return cls(**fields)

    def describe(self) -> str:
        d = attrs.asdict(self)
        return ",".join(f"{k}={v}" for k, v in d.items() if v) or "none"


def parse_bugs(text: str) -> tuple[str, ...]:
    bugs = tuple(b for b in text.split("+") if b)
    for b in bugs:
        if b not in BUGS:
            raise SpecError(f"unknown bug {b!r}; the spec's Bugs are {', '.join(BUGS)}")
    return bugs


def constants_for(w: Workload, f: Faults, bugs: tuple[str, ...] = ()) -> Constants:
    return Constants(
        adders=tuple(f"c{n}" for n in range(1, w.adders + 1)),
        retaggers=tuple(f"r{n}" for n in range(1, w.retaggers + 1)),
        retag_to=w.retag_to,
        max_attempts=w.attempts,
        max_crashes=f.crash,
        max_pauses=f.pause,
        max_cuts=f.cut,
        max_drops=f.drop,
        max_dc_fails=f.dc,
        bugs=frozenset(bugs),
    )


class Simulation:
    def __init__(
        self, w: Workload, f: Faults, seed: int, emit: Callable[[dict[str, Any]], None], bugs: tuple[str, ...] = (), max_events: int = 100_000
    ) -> None:
        self.k = constants_for(w, f, bugs)
        self.engine = Engine(self.k, emit)
        self.rng = random.Random(seed)
        self.max_events = max_events

    def run(self, progress: Callable[[int], None] | None = None) -> int:
        """Run until no step is enabled (every step is bounded) or max_events; the number of events."""
        e = self.engine
        while e.events < self.max_events:
            steps = enabled_steps(e)
            if not steps:
                break
            weights = [FAULT if a.fault else NORMAL for a, _ in steps]
            x = self.rng.randrange(sum(weights))
            chosen = 0
            while x >= weights[chosen]:
                x -= weights[chosen]
                chosen += 1
            a, arg = steps[chosen]
            a.apply(e, arg)
            if progress:
                progress(e.events)
        return e.events
