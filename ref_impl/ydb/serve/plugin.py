"""The YDB plug-in's entry point of txconform serve.

``serve`` is the plug-in's ``Protocol.serve``. grpcio and the ``ydb`` SDK's generated messages (the
``ydb`` extra) load only when a session is served, not whenever the plug-in checks or simulates a
trace.
"""

from __future__ import annotations

from trace_check.traces.protocol import ProtocolInputError, ServeOptions, Server

PORT = 2136  # YDB's gRPC port


def serve(o: ServeOptions) -> Server:
    """A bound, not yet serving YDB server (``txconform serve --protocol ydb``)."""
    if o.bugs or o.faults:
        raise ProtocolInputError("--bugs and --faults: the YDB server has no fault switches or bugs yet; serve without them")
    if o.partitions != 1:
        raise ProtocolInputError(f"--partitions {o.partitions}: the YDB server's topics have the shape of the engine's "
                                 "constants (A: 1 partition, B: 1 partition)")
    try:
        from .run import Options, Running, ServeOptionError
    except ImportError as e:
        raise ProtocolInputError(f"txconform serve --protocol ydb needs grpcio and the ydb SDK: pip install 'txconform[ydb]' ({e})") from None
    try:
        return Running(Options(port=o.port, host=o.host, version=o.version or "v26", trace=o.trace))
    except ServeOptionError as e:
        raise ProtocolInputError(str(e)) from None
