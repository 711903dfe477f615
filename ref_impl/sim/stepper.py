"""The seeded step loop every protocol's simulator runs.

Each round the simulator lists the steps enabled in its engine (an application's next call, a
message delivered or lost, a fault within its budget), each with a weight, and the loop picks one
with the run's seeded ``random.Random``: the chance of a step is its weight over the total, so
faults (weight 1) happen less often than normal steps (weight 10). The run ends when nothing is
enabled or at ``max_events``. The same seed and settings give the same choices, so the same run
and the same trace, byte for byte: the loop draws exactly one ``randrange(total)`` per step.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import attrs

NORMAL, FAULT = 10, 1  # the weights of a normal step and of a fault


@attrs.define
class Step:
    """One enabled step: the spec action's name, how likely the loop is to pick it, and the call
    that takes it (it answers whether the step ran). ``fault`` marks a fault, which a run that
    follows a fault schedule takes from the schedule only."""

    action: str
    weight: int
    run: Callable[[], bool]
    fault: bool = False


def pick(rng: random.Random, weights: Sequence[int]) -> int:
    """The index of the step chosen: one draw of ``rng.randrange(sum(weights))``, then the step
    whose share of the total holds it (the first step owns ``0 .. weights[0] - 1``, and so on)."""
    x = rng.randrange(sum(weights))
    for i, w in enumerate(weights):
        x -= w
        if x < 0:
            return i
    raise AssertionError("a draw below the total falls on a step")


class Stepper:
    """The loop: subclasses say how many events the engine has written (``events``), which steps
    are enabled (``steps``), and what to do before each round (``before_round``: e.g. run the
    applications to their next call) and when nothing is enabled (``when_stuck``: e.g. release
    delayed messages; it returns the steps then enabled)."""

    rng: random.Random
    max_events: int

    def events(self) -> int:
        raise NotImplementedError

    def steps(self) -> list[Step]:
        raise NotImplementedError

    def before_round(self) -> None:
        """Nothing by default."""

    def when_stuck(self) -> list[Step]:
        return []

    def run(self, progress: Callable[[int], None] | None = None) -> int:
        """Run until nothing is enabled (every step is bounded) or ``max_events``; the number of events."""
        while self.events() < self.max_events:
            self.before_round()
            steps = self.steps() or self.when_stuck()
            if not steps:
                break
            s = steps[pick(self.rng, [s.weight for s in steps])]
            if not s.run():
                raise AssertionError(f"step {s.action} was listed as enabled but did not run")
            if progress:
                progress(self.events())
        return self.events()
