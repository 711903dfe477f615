"""Deterministic simulation of C*One: a seeded scheduler over the engine's enabled steps.

Workload ``album`` (the seed's photo album): ``adders`` clients each add a photo (c1, c2, ...),
``retaggers`` clients each change the indexed tag of photo p0 to ``retag_to`` (r1, ...), each
with ``attempts`` attempts. Faults: ``none``, ``all`` (one of each), or budgets
``crash=N,pause=N,cut=N,drop=N,dc=N`` (master crashes, GC pauses of the master, heartbeat links
cut, mutations lost, data centres lost). Bugs: the spec's ``Bugs``, joined with ``+``. The same seed gives the same
trace, byte for byte.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any, ClassVar

import attrs

from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError
from ref_impl.sim.stepper import FAULT, NORMAL, Step, Stepper

from .actions import enabled_steps
from .constants import BUGS, Constants
from .engine import Engine

GENERATOR = "txconform ref_impl.cone 1"


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
            raise SettingsError(f"unknown workload {kind!r}; use album, e.g. album:adders=2,retaggers=1,attempts=2")
        fields: dict[str, Any] = {}
        for key, value in settings.pairs(rest, bare="?").items():
            if key not in cls.KEYS:
                raise settings.unknown("workload setting", key, cls.KEYS)
            if value == "?":
                raise SettingsError(f"{key}: a workload setting needs a value, e.g. {key}=1")
            fields[key] = settings.whole(key, value, *cls.LIMITS[key])
        w = cls(**fields)
        if w.adders + w.retaggers == 0:
            raise SettingsError("the workload has no client: give adders=N or retaggers=N")
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
        preset = settings.fault_preset(text)
        if preset:
            return cls() if preset == "none" else cls(1, 1, 1, 1, 1)
        fields: dict[str, int] = {}
        for key, value in settings.pairs(text, bare="1").items():
            if key not in cls.KEYS:
                raise settings.unknown("fault", key, ("none", "all", *(k + "=N" for k in cls.KEYS)))
            fields[key] = settings.whole(key, value, 0, 9)
        return cls(**fields)

    def describe(self) -> str:
        d = attrs.asdict(self)
        return ",".join(f"{k}={v}" for k, v in d.items() if v) or "none"


def parse_bugs(text: str) -> tuple[str, ...]:
    return settings.bugs(text, BUGS)


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


class Simulation(Stepper):
    def __init__(
        self, w: Workload, f: Faults, seed: int, emit: Callable[[dict[str, Any]], None], bugs: tuple[str, ...] = (), max_events: int = 100_000
    ) -> None:
        self.k = constants_for(w, f, bugs)
        self.engine = Engine(self.k, emit)
        self.rng = random.Random(seed)
        self.max_events = max_events

    # --- the loop (ref_impl/sim/stepper.py) ---

    def events(self) -> int:
        return self.engine.events

    def steps(self) -> list[Step]:
        e = self.engine
        return [Step(a.name, FAULT if a.fault else NORMAL, functools.partial(self._take, a, arg)) for a, arg in enabled_steps(e)]

    def _take(self, a: Any, arg: Any) -> bool:
        a.apply(self.engine, arg)
        return True
