"""Hypothesis strategies over workloads and fault schedules (tests and benchmarks use them).

Schedules shrink well: fewer faults, earlier, with smaller targets and delays, so a failing run
shrinks to a short list of faults that still breaks it.
"""

from __future__ import annotations

import attrs
from hypothesis import strategies as st

from ref_impl.kafka.messages import REQUEST_TYPES

from .faults import FAULT_KINDS, Fault, Schedule
from .workloads import Workload
from .zoo import ZooBug

TYPES = ("", *REQUEST_TYPES, "WriteTxnMarkers", "WriteTxnMarkersResp")


def faults(kinds: tuple[str, ...] = FAULT_KINDS, types: tuple[str, ...] = TYPES, horizon: int = 80) -> st.SearchStrategy[Fault]:
    return st.builds(
        Fault,
        at=st.integers(0, horizon),
        kind=st.sampled_from(kinds),
        target=st.integers(0, 3),
        steps=st.integers(1, 40),
        type=st.sampled_from(types),
    )


def schedules(kinds: tuple[str, ...] = FAULT_KINDS, types: tuple[str, ...] = TYPES, max_faults: int = 5) -> st.SearchStrategy[Schedule]:
    if not kinds:
        return st.just(Schedule())
    return st.lists(faults(kinds, types), max_size=max_faults).map(lambda fs: Schedule(tuple(sorted(fs))))


def workloads() -> st.SearchStrategy[Workload]:
    """Small workloads: the checker explores every state the trace leaves open."""

    def of_kind(kind: str, **extra: st.SearchStrategy) -> st.SearchStrategy[Workload]:
        return st.builds(
            Workload,
            kind=st.just(kind),
            ids=st.integers(1, 2),
            instances=st.integers(1, 2),
            partitions=st.integers(1, 2),
            txns=st.integers(1, 3),
            records=st.just(1),
            aborts=st.booleans(),
            version=st.sampled_from(("TV1", "TV1V", "TV2")),
            # Short.MaxValue, or a bound small enough for producer ids to rotate
            max_epoch=st.sampled_from((32767, 2, 3)),
            # one batch per partition, or two, pipelined or not
            batches=st.integers(1, 2),
            in_flight=st.integers(1, 2),
            bumps=st.booleans(),
            resilient=st.booleans(),
            **extra,
        ).map(lambda w: attrs.evolve(w, records=max(w.records, w.batches),  # a batch needs a record
                                     bumps=w.bumps and w.instances == 1))  # KIP-360 bumps: one instance

    return st.one_of(of_kind("transfer"), of_kind("ctp", input=st.integers(1, 3)))


def seeds() -> st.SearchStrategy[int]:
    return st.integers(0, 2**16)


def zoo_schedules(bug: ZooBug) -> st.SearchStrategy[Schedule]:
    if not bug.fault_kinds:
        return st.just(Schedule())
    return st.lists(faults(bug.fault_kinds, bug.fault_types, bug.horizon), max_size=4).map(
        lambda fs: Schedule(tuple(sorted(fs)))
    )
