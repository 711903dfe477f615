"""The Kafka plug-in's entry point of txconform serve.

``serve`` is the plug-in's ``Protocol.serve``. The server and its codec
(kafka-python's protocol classes, about 0.2 s to import) load only when a session is served, not
whenever the plug-in checks or simulates a trace.
"""

from __future__ import annotations

from trace_check.traces.protocol import ProtocolInputError, ServeOptions, Server


def serve(o: ServeOptions) -> Server:
    """A bound, not yet serving broker (``txconform serve``, the pytest fixture)."""
    from .run import Options, Running

    if o.workload:
        raise ProtocolInputError(f"--workload {o.workload}: Kafka's serve has no workload to shape (topics and "
                                 "transactional.ids come from the clients); leave it out")
    bugs = tuple(b for b in o.bugs.split("+") if b)
    return Running(Options(port=o.port, host=o.host, version=o.version or "TV1V", partitions=o.partitions, bugs=bugs,
                           faults=o.faults, trace=o.trace, auto_create=o.auto_create))
