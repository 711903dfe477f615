"""The YDB plug-in's entry point of txconform serve.

``serve`` is the plug-in's ``Protocol.serve``. grpcio and the ``ydb`` SDK's generated messages (the
``ydb`` extra) load only when a session is served, not whenever the plug-in checks or simulates a
trace.
"""

from __future__ import annotations

import attrs

from ref_impl.sim import settings
from ref_impl.sim.settings import SettingsError
from trace_check.traces.protocol import ProtocolInputError, ServeOptions, Server

PORT = 2136  # YDB's gRPC port
SERVED_KEYS = ("msgs", "batch", "txns", "plain", "others", "commits", "workers")


@attrs.frozen
class Shape:
    """The served engine's constants a ``--workload`` may set (the rest is one partition of A and
    of B): ``copy:msgs=8,batch=2,txns=16,plain=256,others=128,commits=256,workers=1`` is the
    default. Each worker is in one transaction at a time: ``workers=N`` serves N concurrent
    transactions (write-only ones, or one reading topic A: A has one partition, its first worker's)."""

    msgs: int = 8  # MsgsPerSrc
    batch: int = 2  # BatchMax
    txns: int = 16  # MaxTxns
    plain: int = 256  # MaxPlainWrites: writes to B outside any transaction
    others: int = 128  # Others: producer ids of such writers
    commits: int = 256  # MaxPlainCommits: batches of A read and committed outside any transaction
    workers: int = 1  # Workers: transactions open at once

    @classmethod
    def parse(cls, text: str) -> Shape:
        kind, _, rest = text.strip().partition(":")
        if kind not in ("", "copy"):
            raise SettingsError(f"unknown workload {kind!r}; the served engine runs copy, e.g. copy:msgs=8,batch=2,txns=16")
        fields: dict[str, int] = {}
        for key, value in settings.pairs(rest).items():
            if key not in SERVED_KEYS:
                raise settings.unknown("workload setting of the served engine", key, SERVED_KEYS, "{}=N")
            # workers: each open transaction's streams hold gRPC threads (MAX_STREAMS)
            fields[key] = settings.whole(key, value, 0 if key in ("plain", "commits") else 1, 32 if key == "workers" else 10_000)
        return cls(**fields)


def serve(o: ServeOptions) -> Server:
    """A bound, not yet serving YDB server (``txconform serve --protocol ydb``)."""
    if o.partitions != 1:
        raise ProtocolInputError(f"--partitions {o.partitions}: the YDB server's topics have the shape of the engine's "
                                 "constants (A: 1 partition, B: 1 partition)")
    try:
        from .run import Options, Running
    except ImportError as e:
        raise ProtocolInputError(f"txconform serve --protocol ydb needs grpcio and the ydb SDK: pip install 'txconform[ydb]' ({e})") from None
    from ..sim import parse_bugs
    from .faults import Switches

    shape = settings.option("--workload", Shape.parse, o.workload)
    switches = settings.option("--faults", Switches.parse, o.faults)
    bugs = settings.option("--bugs", parse_bugs, o.bugs)
    return Running(Options(port=o.port, host=o.host, version=o.version or "v26", messages=shape.msgs, batch=shape.batch,
                           txns=shape.txns, plain=shape.plain, others=shape.others, commits=shape.commits,
                           workers=shape.workers, trace=o.trace, faults=switches, bugs=bugs))
