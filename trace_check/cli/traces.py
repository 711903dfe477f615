"""``txconform simulate``, ``check`` and ``mutate``: run a protocol's reference engine, validate a trace,
measure how well validation catches changed traces. Each dispatches on the protocol plug-in."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from trace_check.engines.runner import ENGINE_CHOICES
from trace_check.errors import TxconformError
from trace_check.models.registry import spec_diagram
from trace_check.traces import diagrams, plugins
from trace_check.traces.format import spec_hash, write_trace
from trace_check.traces.options import CheckOptions
from trace_check.traces.protocol import Protocol, ProtocolInputError, SimulateOptions
from trace_check.traces.reader import count_events, read_trace
from trace_check.traces.validation import check_trace_file
from trace_check.traces.verdicts import Status, Verdict, verdict_lines
from trace_check.traces.window_sizes import WINDOW, jobs_count, jobs_default, window_size
from trace_check.values.tla import format_value

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def add_parsers(sub: Any) -> None:
    sim = sub.add_parser(
        "simulate",
        help="run a protocol's reference engine under a seeded fault schedule and write its trace",
        description="Run a protocol's reference engine (ref_impl/PROTOCOL) with a workload and a fault schedule chosen "
        "by a seeded scheduler, and write the run's trace (JSON Lines, docs/trace-format.md). Same seed, same trace.",
    )
    sim.add_argument("--protocol", default="kafka", metavar="P",
                     help="the protocol plug-in (default kafka; see docs/architecture.md for adding one)")
    sim.add_argument("--seed", type=int, default=0, help="the scheduler's seed (default 0)")
    sim.add_argument("--workload", default="", metavar="W",
                     help="the protocol's workload, parsed by its plug-in; kafka: transfer (default) or ctp, with settings: "
                     "e.g. transfer:txns=3,partitions=2,instances=2,aborts=true,version=TV1 (or TV1V, TV2), max_epoch=2, "
                     "resilient=true (applications go on after a transaction their client aborted, so a faulty run is as long "
                     "as --max-events asks); "
                     "ydb: copy, e.g. copy:workers=2,src=1,dst=2,msgs=4,batch=2,txns=6,table=true,version=v25; "
                     "cone: album, e.g. album:adders=2,retaggers=1,retag_to=1,attempts=2")
    sim.add_argument("--faults", default="none", metavar="F",
                     help="none, all, or the protocol's budgets; kafka: e.g. loss=1,late=EndTxn+Produce,retries=2,timeouts,hangs=1,"
                     "failovers=1,restarts=1; ydb: e.g. hangs=1,restarts=1,loss=1,locklosses=1,deadlines=1,reconnects=1,splits=1; "
                     "cone: e.g. crash=1,pause=1,cut=1,drop=1,dc=1")
    sim.add_argument("--bugs", default="", metavar="B",
                     help="switch on bugs of the protocol's bug zoo, e.g. no_epoch_bump+lso_inclusive (kafka), "
                     "no_offset_check+lock_race (ydb), zombie_commit+no_ts_bump (cone)")
    sim.add_argument("--max-events", type=int, default=100_000, help="stop after this many events (default 100000)")
    sim.add_argument("--out", type=Path, required=True, metavar="FILE", help="where to write the trace")
    sim.set_defaults(func=cmd_simulate)

    chk = sub.add_parser(
        "check",
        help="validate a trace against the spec: accepted, or rejected at event N and why",
        description="Check that a trace is a behaviour of the spec and that the spec's invariants hold on it. "
        "Exit status: 0 accepted, 1 rejected or an invariant violated, 2 bad input.",
    )
    chk.add_argument("trace", type=Path, metavar="TRACE")
    chk.add_argument("--engine", choices=ENGINE_CHOICES, default="auto",
                     help="auto (default): Apalache when installed (acceptance only, with the record encoding), else TLC "
                     "(which also locates and explains a rejected event)")
    when = chk.add_mutually_exclusive_group()
    when.add_argument("--every-step", dest="every_step", action="store_true", default=None,
                      help="check the invariants after every event (the default)")
    when.add_argument("--at-end", dest="every_step", action="store_false", help="check the invariants on the final state only")
    chk.add_argument("--timeout", type=float, default=600.0, help="seconds per engine run (default 600)")
    chk.add_argument("--window", type=int, default=None, metavar="N",
                     help=f"events per TLC run (default {WINDOW}): a longer trace is read and checked in windows, each "
                     "starting from the spec states the last one ended in, with the same verdict as one run")
    chk.add_argument("--jobs", type=int, default=None, metavar="N",
                     help=f"TLC runs at once (default {jobs_default()} here: one per core, at most 4): a window runs "
                     "from the state the reference engine replays to, and its verdict stands only if the window "
                     "before ends in exactly that state")
    chk.add_argument("--json", action="store_true", help="print the verdict as JSON")
    chk.add_argument("--full", action="store_true",
                     help="print a rejected event's state before it whole, every variable on one line (default: the "
                     "variables the event's spec action reads, a wide value part by part)")
    chk.add_argument("--workdir", type=Path, metavar="DIR", help="keep the generated module and engine logs in DIR")
    chk.add_argument("--diagram", type=Path, metavar="FILE",
                     help="for a trace rejected or breaking an invariant: write the spec's run up to there (of the last "
                          "window) to FILE, as steps and a Mermaid sequence diagram of the protocol's processes (Markdown)")
    chk.set_defaults(func=cmd_check)

    mut = sub.add_parser(
        "mutate",
        help="mutation score: change one event of valid traces and count how often the checker notices",
        description="Mutate each trace (drop, duplicate, swap or alter one event), check every mutant, and report "
        "the fraction rejected. A mutant the checker accepts and the reference engine can replay is a legal run "
        "and does not count; the report says why it is legal. Exit status 1 if any mutant survived.",
    )
    mut.add_argument("traces", type=Path, nargs="+", metavar="TRACE")
    mut.add_argument("--mutants", type=int, default=20, help="mutants per trace (default 20)")
    mut.add_argument("--seed", type=int, default=0)
    mut.add_argument("--jobs", type=int, default=2, help="checks run in parallel (default 2)")
    mut.set_defaults(func=cmd_mutate)


def cmd_simulate(args: argparse.Namespace, out: Console, err: Console) -> int:
    protocol = plugins.get(args.protocol)
    if not args.out.parent.is_dir():
        raise TxconformError(f"--out: folder {args.out.parent} does not exist")
    with Progress(SpinnerColumn(), TextColumn("simulating"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("events"), TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("sim", total=args.max_events)
        options = SimulateOptions(seed=args.seed, workload=args.workload, faults=args.faults, bugs=args.bugs,
                                  max_events=args.max_events,
                                  progress=lambda n: bar.update(task, completed=n) if n % 500 == 0 else None)
        try:
            run = protocol.simulate(options)
        except ProtocolInputError as e:
            raise TxconformError(str(e)) from None
    write_trace(args.out, run.header, run.events, protocol.columns.order)
    out.print(f"wrote {args.out}: {len(run.events)} events ({run.summary})")
    return EXIT_OK


def cmd_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    window_size(args.window)  # a bad --window or --jobs is an error before the trace is read
    jobs = jobs_count(args.jobs)
    # Every line is checked before any engine runs; the events are then read again window by window.
    events = count_events(args.trace)
    head = read_trace(args.trace, limit=1)
    protocol = head.protocol
    if head.header.get("spec_hash") not in (None, spec_hash(protocol.spec_dir, protocol.spec_modules)):
        err.print(Text(f"txconform: note: {args.trace} was made against another version of the spec "
                       "(spec_hash differs); it is checked against the current one"))
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err, transient=True) as bar:
        t = bar.add_task(f"checking {events} events with the spec")

        def progress(p: Any) -> None:
            if p.distinct_states:
                bar.update(t, description=f"checking {events} events: {p.distinct_states:,} states explored")

        options = CheckOptions(engine=args.engine, every_step=args.every_step is not False, timeout=args.timeout, workdir=args.workdir,
                               window=args.window, jobs=jobs, on_progress=progress)
        v = check_trace_file(args.trace, options, events=events)
    if args.diagram is not None:
        _write_diagram(args.diagram, v, args.trace, protocol, err)
    if args.json:
        out.print_json(json.dumps(verdict_json(v, args.trace), default=str))
    else:
        for line in verdict_lines(v, args.trace, protocol.engine_noun, width=out.width, full=args.full):
            out.print(Text(line))
    if v.status is Status.ERROR:
        return EXIT_USAGE
    return EXIT_OK if v.ok else EXIT_FAIL


def _write_diagram(target: Path, v: Verdict, path: Path, protocol: Protocol, err: Console) -> None:
    """The spec's run of a rejected trace (to the state before the event) or of one that breaks an
    invariant, as Markdown: its steps and a sequence diagram, the last step marked."""
    if v.run is None or not v.run.steps:
        err.print(Text(f"txconform: no diagram written to {target}: the trace was {v.status.value}, not rejected or breaking an invariant"))
        return
    module, hide = spec_diagram(protocol.registry) if protocol.registry is not None else (None, ())
    if v.status is Status.REJECTED and v.event is not None:
        mark = f"event {v.at_event} ({v.event.get('action')}) cannot be taken next: rejected"
    else:
        mark = f"breaks {v.invariant}" + (f" (its part {v.part})" if v.part else "")
    first = verdict_lines(v, path, protocol.engine_noun)[0]
    text = diagrams.markdown(f"{path.name}: {first}", v.run, diagrams.load(module) if module else None, mark, hide)
    try:
        target.write_text(text, encoding="utf-8")
    except OSError as e:
        raise TxconformError(f"--diagram {target}: cannot write it ({e.strerror}); give a file in a folder that exists") from None
    err.print(Text(f"txconform: the spec's run to event {v.at_event or v.events} written to {target}"))


def verdict_json(v: Verdict, path: Path) -> dict[str, Any]:
    return {
        "trace": str(path),
        "status": v.status.value,
        "events": v.events,
        "engine": v.engine,
        "invariants_checked": "every step" if v.every_step else "final state",
        "invariant": v.invariant,
        "part": v.part,
        "at_event": v.at_event,
        "event": v.event,
        "reason": v.reason or None,
        "state_before": {k: format_value(x) for k, x in v.state_before.items()} if v.state_before else None,
        "spec_action": v.spec_action or None,
        "action_reads": sorted(v.action_reads) if v.action_reads is not None else None,
        "message": v.message or None,
        "wall_time": round(v.wall_time, 3),
        "distinct_states": v.distinct_states,
        "windows": v.windows,
        "handed_on": v.handed_on,
        "jobs": v.jobs,
        "run_ahead": v.run_ahead,
        "run_again": v.run_again,
    }


def cmd_mutate(args: argparse.Namespace, out: Console, err: Console) -> int:
    import tempfile

    from rich.table import Table

    from trace_check.traces.mutation import mutation_report

    traces = [read_trace(p) for p in args.traces]
    total = sum(min(args.mutants, 4 * len(t.events)) for t in traces)
    with Progress(SpinnerColumn(), TextColumn("checking mutants"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("mutants", total=total)
        with tempfile.TemporaryDirectory(prefix="txconform-mutate-") as tmp:
            report = mutation_report(traces, args.mutants, args.seed, Path(tmp), jobs=args.jobs,
                                     on_result=lambda r: bar.advance(task))
    table = Table(title="Mutants")
    for col in ("mutation", "outcome", "why"):
        table.add_column(col)
    for r in report.results:
        table.add_row(r.description, r.outcome, r.detail)
    out.print(table)
    score = report.score
    out.print(f"mutation score: {report.count('killed')} killed / ({report.count('killed')} killed + "
              f"{report.count('survived')} survived) = {'n/a' if score is None else f'{100 * score:.1f}%'}; "
              f"{report.count('legal')} legal (not counted), {report.count('error')} errors")
    return EXIT_OK if report.count("survived") == 0 and report.count("error") == 0 else EXIT_FAIL
