"""The constants of a C*One run: specs/cone/Cone.tla's CONSTANTS, as a trace header gives them."""

from __future__ import annotations

from typing import Any

import attrs

# specs/cone/Cone.tla BugNames, in the spec's order.
BUGS = (
    "zombie_commit",
    "failover_no_quorum",
    "no_ts_bump",
    "ts_at_begin",
    "unlogged_batch",
    "early_unlock",
    "commit_cl_one",
    "read_without_lock",
    "no_ryw",
    "write_through",
    "index_outside_txn",
    "index_same_ts_tombstone",
    "failover_no_drain",
    "timeout_as_abort",
    "local_batchlog",
)

COORDS = (1, 2, 3)  # coordinator i: the master (1), the first backup (2), the second (3); in DC i
REPLICAS = (1, 2, 3)  # replica i in DC i
QUORUM = 2
# The replica sets a QUORUM read gets its answers from (Cone.tla Quorums: the pairs).
QUORUMS = ((1, 2), (1, 3), (2, 3))
CO_NAMES = ("x1", "x2", "x3")


def co_name(x: int) -> str:
    return CO_NAMES[x - 1]


@attrs.frozen
class Constants:
    adders: tuple[str, ...]
    retaggers: tuple[str, ...]
    retag_to: int
    max_attempts: int
    max_crashes: int
    max_pauses: int
    max_cuts: int
    max_drops: int
    max_dc_fails: int = 0
    bugs: frozenset[str] = frozenset()

    @property
    def clients(self) -> tuple[str, ...]:
        return tuple(sorted(self.adders + self.retaggers))

    @property
    def photos(self) -> tuple[str, ...]:
        return tuple(sorted(("p0", *self.adders)))

    @property
    def tags(self) -> tuple[int, ...]:
        return tuple(sorted({0, 1, self.retag_to}))

    def bug(self, name: str) -> bool:
        return name in self.bugs

    def to_spec(self) -> dict[str, Any]:
        return {
            "Adders": list(self.adders),
            "Retaggers": list(self.retaggers),
            "RetagTo": self.retag_to,
            "MaxAttempts": self.max_attempts,
            "MaxCrashes": self.max_crashes,
            "MaxPauses": self.max_pauses,
            "MaxCuts": self.max_cuts,
            "MaxDrops": self.max_drops,
            "MaxDcFails": self.max_dc_fails,
            "Bugs": sorted(self.bugs),
        }

    @classmethod
    def from_spec(cls, k: dict[str, Any]) -> Constants:
        return cls(
            adders=tuple(k["Adders"]),
            retaggers=tuple(k["Retaggers"]),
            retag_to=k["RetagTo"],
            max_attempts=k["MaxAttempts"],
            max_crashes=k["MaxCrashes"],
            max_pauses=k["MaxPauses"],
            max_cuts=k["MaxCuts"],
            max_drops=k["MaxDrops"],
            max_dc_fails=k.get("MaxDcFails", 0),
            bugs=frozenset(k.get("Bugs", [])),
        )
