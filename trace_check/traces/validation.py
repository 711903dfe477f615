"""Trace validation: is a trace a behaviour of the spec? The public entry points, ``check_trace``
and ``check_trace_file``.

The checker writes a module that extends the protocol's trace spec (for Kafka,
specs/kafka/TraceKafkaTxn.tla; the plug-in names it; ``module_text``) and defines the trace, then
asks TLC, window by window (``windows``, ``one_window``):

1. for a complete search with the spec's invariants (``TraceInv_X``, at the end of the trace or
   after every event). A search as deep as the trace is long means every event was explained:
   accepted. A violation means the run is a behaviour of the spec that breaks X. A shallower
   search of depth d means no behaviour explains event d.
2. for a rejected trace, a second run whose invariants diagnose event d in the state before it:
   was its message in flight, was the action enabled, which logged field disagreed.

With Apalache, the trace is checked in one run of the record encoding (``records``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

from trace_check.engines.runner import check_engine_available, resolve_engine
from trace_check.errors import TxconformError
from trace_check.traces.options import DEFAULT, CheckOptions, TraceSource
from trace_check.traces.reader import Trace, count_events, read_trace, read_windows, windows_ending, windows_of
from trace_check.traces.records import check_trace_records
from trace_check.traces.verdicts import Status, Verdict
from trace_check.traces.window_sizes import balanced_size, parallel_jobs
from trace_check.traces.windows import check_windows


def _engine(trace: Trace, engine: str) -> str:
    name, _why = resolve_engine(engine)
    if name == "apalache" and trace.protocol.records_module is None:
        if engine != "auto":
            raise TxconformError(f"--engine apalache: protocol {trace.protocol.name} has no record encoding for Apalache; "
                                 "use --engine tlc")
        name = "tlc"  # auto: the protocol's trace spec is TLC's alone
    check_engine_available(name)
    return name


def check_trace(trace: Trace, options: CheckOptions = DEFAULT, ends: Sequence[int] | None = None) -> Verdict:
    """Validate ``trace`` against its protocol's spec, as ``options`` say. TLC checks the trace in
    windows of ``options.window`` events, or in windows that end after the events ``ends``, each
    starting from the states the last one ended in: the verdict is the same as one run's. With
    ``options.jobs`` > 1, up to that many windows run at once (``check_windows``)."""
    jobs = parallel_jobs(trace.protocol, options.jobs)
    size = balanced_size(options.window, len(trace.events), jobs)
    windows = windows_of(trace, size) if ends is None else windows_ending(trace, ends)
    source = TraceSource(trace, windows, len(trace.events), lambda n: [dict(e) for e in trace.events[:n]], lambda: trace)
    return _check(source, attrs.evolve(options, jobs=jobs))


def check_trace_file(path: Path, options: CheckOptions = DEFAULT, events: int | None = None) -> Verdict:
    """``check_trace`` for a file, read window by window, so that memory holds one window of
    events, not the trace. ``events`` is the number of events, if the caller has already checked
    the whole file (``reader.count_events``): every line is checked before any engine runs."""
    total = count_events(path) if events is None else events
    head = read_trace(path, limit=1)
    jobs = parallel_jobs(head.protocol, options.jobs)
    source = TraceSource(head, read_windows(path, balanced_size(options.window, total, jobs)), total,
                         lambda n: [dict(e) for e in read_trace(path, limit=n).events], lambda: read_trace(path))
    return _check(source, attrs.evolve(options, jobs=jobs))


def _check(source: TraceSource, options: CheckOptions) -> Verdict:
    name = _engine(source.head, options.engine)
    base = options.workdir or Path(tempfile.mkdtemp(prefix="txconform-check-"))
    if name == "apalache":  # no ToString in Apalache: the record encoding, field by field
        return check_trace_records(source.whole(), "apalache", base / "apalache", options.timeout)
    protocol = source.head.protocol
    if options.jobs > 1 and protocol.spec_states is not None and name == "tlc":
        replay = protocol.spec_states(dict(source.head.constants))
        return _checked(base, options.keep, lambda: check_windows(source, options, base, replay, protocol.history))
    return _checked(base, options.keep, lambda: check_windows(source, attrs.evolve(options, jobs=1), base))


def _checked(base: Path, keep: bool, check: Callable[[], Verdict]) -> Verdict:
    try:
        verdict = check()
        keep = keep or verdict.status is Status.ERROR  # keep the generated module and TLC's log for the report
        return verdict
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
