"""``txconform model-check``: check the registered models and compare each outcome with its expectation."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

import attrs
from rich import box
from rich.console import Console, JustifyMethod
from rich.progress import Progress as RichProgress
from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from trace_check.engines import parallel, tlc_workdir
from trace_check.engines.runner import ENGINE_CHOICES, check_checkpointing, check_engine_available, resolve_engine, run_task
from trace_check.errors import ResumeError, TxconformError, suggest
from trace_check.models.counterexample import Reading, render_steps
from trace_check.models.itf import itf_json, write_itf
from trace_check.models.registry import SELECTIONS, Model, Registry, default_registry_files, load_registries
from trace_check.models.result import Checkpointing, CheckResult, Outcome, Progress
from trace_check.traces import diagrams
from trace_check.traces.reads import ReadsError, reads_in_module

EXIT_OK = 0
EXIT_MISMATCH = 1  # some model's outcome differs from its expectation, or its TLC state count from the pin


@attrs.frozen
class ModelRun:
    model: Model
    result: CheckResult
    workdir: Path

    @property
    def outcome_ok(self) -> bool:
        return self.result.verdict == self.model.expect

    @property
    def pin_mismatch(self) -> str | None:
        """How TLC's counts differ from the registry's pins (with the fix), when the outcome is right."""
        return self.model.pin_mismatch(self.result) if self.outcome_ok else None

    @property
    def ok(self) -> bool:
        return self.outcome_ok and self.pin_mismatch is None


def _whole(what: str) -> Any:
    """An argparse type: a whole number of ``what`` of at least 1."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {what} of at least 1")
        return value

    return parse


def registry_of(args: argparse.Namespace) -> Registry:
    """The models the arguments name: one registry file (--registry), or every default one, only
    those of protocol --protocol (the registry specs/P/models.toml) when it is given."""
    files = [args.registry] if args.registry else default_registry_files()
    if args.protocol:
        known = sorted({f.parent.name for f in files})
        files = [f for f in files if f.parent.name == args.protocol]
        if not files:
            raise TxconformError(f"--protocol {args.protocol}: no registry of that protocol{suggest(args.protocol, known)}; "
                                 f"give one of {', '.join(known)}")
    return load_registries(files)


def cmd_model_check(args: argparse.Namespace, out: Console, err: Console) -> int:
    registry = registry_of(args)
    models = registry.select(args.names, args.tier)
    if args.list:
        out.print(models_table(models, out.width))
        if out.width < NOTES_WIDTH:
            err.print(f"(each model's note is shown from {NOTES_WIDTH} columns on; this terminal has {out.width})")
        return EXIT_OK
    if args.resume and (args.workdir is None or not args.names):
        raise ResumeError("--resume needs --workdir DIR and the NAMEs of the models to resume from DIR/NAME")
    if args.example:
        check_example(args.example, models, args.json)
    engine, why = resolve_engine(args.engine)
    check_engine_available(engine)
    checkpointing = Checkpointing(resume=args.resume, every_minutes=args.checkpoint)
    check_checkpointing(engine, checkpointing)
    if args.resume:  # refuse before any run starts, so no model is half done when another cannot resume
        for model in models:
            tlc_workdir.resumable_checkpoint(model.task, (args.workdir / model.name).resolve())
    err.print(f"engine: {why}")

    keep_all = args.workdir is not None
    root = args.workdir or Path(tempfile.mkdtemp(prefix="txconform-"))
    runs = run_models(models, engine, root, err, checkpointing, args.jobs)

    if args.out:
        write_outputs(runs, args.out)
    if args.json:
        out.print_json(json.dumps(runs_json(runs, engine, registry)))
    else:
        for run in runs:
            if run.result.counterexample is not None and (args.traces or not run.outcome_ok or run.model.name == args.example):
                print_counterexample(run, out, full=args.full)
        for run in runs:
            if not run.ok:
                print_failure(run, out, resume_command(run, root, args.registry))
        out.print(results_table(runs))
    for run in runs:  # keep what explains a surprise; the rest is noise
        if not keep_all and run.ok:
            shutil.rmtree(run.workdir, ignore_errors=True)
    if not keep_all and not any(root.iterdir()):
        root.rmdir()
    failed = [run.model.name for run in runs if not run.ok]
    if failed:
        err.print(Text(f"txconform: {len(failed)} of {len(runs)} model(s) differ from their expected outcome or pinned state count: "
                       f"{', '.join(failed)}"))
    else:
        err.print(f"txconform: all {len(runs)} model(s) as expected")
    if args.out:
        written = sum(run.result.counterexample is not None for run in runs)
        err.print(Text(f"txconform: {written} counterexample(s) in {args.out}{os.sep}: NAME.md (the steps and a Mermaid diagram) "
                       "and NAME.itf.json (ITF) for each; `txconform model-check --traces NAME` prints one"))
    return EXIT_MISMATCH if failed else EXIT_OK


def check_example(name: str, models: list[Model], as_json: bool) -> None:
    """Refuse an --example that could print nothing, before any model runs."""
    if as_json:
        raise TxconformError("--example prints a counterexample as text and --json prints JSON: drop one")
    by_name = {m.name: m for m in models}
    if name not in by_name:
        raise TxconformError(f"--example {name}: not among the models to check{suggest(name, by_name)}")
    if not by_name[name].expect.startswith("violates"):
        raise TxconformError(f"--example {name}: its expected outcome is {by_name[name].expect}, so it has no counterexample: "
                             "name a model expected to violate an invariant")


def run_models(
    models: list[Model],
    engine: str,
    root: Path,
    err: Console,
    checkpointing: Checkpointing = Checkpointing(),
    jobs: int = 1,
) -> list[ModelRun]:
    """Run each model in ``root/NAME``, ``jobs`` cores at a time (trace_check/engines/parallel.py),
    with a live progress line per running model; each model's outcome line is printed in the
    registry's order, whichever run ends first."""
    with RichProgress(
        SpinnerColumn(),
        TextColumn("[bold]{task.fields[model]}[/bold]"),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,  # a live line means nothing in a log file
    ) as bar:

        def run(model: Model, stop: threading.Event) -> ModelRun:
            return run_one(model, engine, root / model.name, bar, checkpointing, stop)

        return parallel.run_within_cores(
            models,
            run,
            jobs=jobs,
            cores=lambda m: m.task.tlc.workers if engine == "tlc" else 1,
            cost=lambda m: m.distinct_states or 0,  # TLC's pinned count: the runs' lengths in order
            done=lambda _, run: err.print(outcome_line(run)),
        )


def run_one(
    model: Model,
    engine: str,
    workdir: Path,
    bar: RichProgress,
    checkpointing: Checkpointing = Checkpointing(),
    stop: threading.Event | None = None,
) -> ModelRun:
    """Run one model, its progress on a line of ``bar`` while it runs."""
    if workdir.exists() and not checkpointing.resume:
        shutil.rmtree(workdir)
    task_id = bar.add_task("", model=model.name, status=f"{engine}: starting", total=None)

    def on_progress(p: Progress) -> None:
        status = p.phase
        if p.distinct_states is not None:
            status = f"{p.distinct_states:,} distinct states, {p.queue or 0:,} on queue"
        bar.update(task_id, status=f"{engine}: {status}")

    try:
        result = run_task(engine, model.task, workdir, on_progress, checkpointing, stop)
    finally:
        bar.remove_task(task_id)
    return ModelRun(model=model, result=result, workdir=workdir)


def outcome_line(run: ModelRun) -> Text:
    """The line printed when a model's run ends: ok or FAIL, the outcome, the states and the time."""
    result, model = run.result, run.model
    mark = "[green]ok[/green]  " if run.ok else "[red]FAIL[/red]"
    states = f"{result.distinct_states:,} distinct states" if result.distinct_states is not None else "no state count"
    expected = "as expected" if run.outcome_ok else f"expected {model.shown_expect}"
    resumed = f" (resumed from TLC's checkpoint of {result.resumed_from})" if result.resumed_from else ""
    if run.pin_mismatch:
        states = f"but {run.pin_mismatch}"
    return Text.from_markup(mark).append(
        f" {model.name}: {model.shown(result.verdict)} ({expected}); {states}; {result.wall_time:.1f} s{resumed}"
    )


# A terminal narrower than this lists the models without their notes: at 80 columns, notes folded
# into the last column made `model-check --list` 1,384 lines long with names broken mid-word.
NOTES_WIDTH = 120


def models_table(models: list[Model], width: int = NOTES_WIDTH) -> Table:
    """The models, one row each: name, spec, expected outcome, budget, and the note when ``width``
    columns leave room for it (names and outcomes are never broken)."""
    wide = width >= NOTES_WIDTH
    table = Table(title="Registered models", title_justify="left", box=box.HEAVY_HEAD if wide else box.SIMPLE_HEAD)
    table.add_column("model", no_wrap=True)
    if wide:
        table.add_column("spec", no_wrap=True)
    table.add_column("expected", overflow="fold")
    table.add_column("budget", no_wrap=True)
    if wide:
        table.add_column("note", overflow="fold")
    for m in models:
        spec = f"{m.task.spec_file.parent.name}/{m.task.spec_file.name}"
        budget = f"{m.timeout:g} s" if m.tier == "ci" else f"{m.timeout:g} s ({m.tier})"
        table.add_row(*([m.name, spec, m.shown_expect, budget, m.note] if wide else [m.name, m.shown_expect, budget]))
    return table


def results_table(runs: list[ModelRun]) -> Table:
    table = Table(title="Model-checking results", title_justify="left")
    table.add_column("model", no_wrap=True)
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("engine", "left"),
        ("expected", "left"),
        ("got", "left"),
        ("distinct states", "right"),
        ("depth", "right"),
        ("time", "right"),
        ("", "left"),
    )
    for col, justify in columns:
        table.add_column(col, justify=justify)
    for run in runs:
        r = run.result
        got = run.model.shown(r.verdict) + (f" ({r.bound})" if r.bound else "")
        states = f"{r.distinct_states:,}" if r.distinct_states is not None else "-"
        depth = str(r.depth) if r.depth is not None else "-"
        if run.pin_mismatch and r.distinct_states != run.model.distinct_states:
            states += f" (pinned {run.model.distinct_states:,})"
        if run.pin_mismatch and r.depth != run.model.depth and run.model.task.tlc.workers == 1:
            depth += f" (pinned {run.model.depth})"
        table.add_row(
            run.model.name,
            r.engine,
            run.model.shown_expect,
            got,
            states,
            depth,
            f"{r.wall_time:.1f} s",
            "[green]ok[/green]" if run.ok else "[red]FAIL[/red]",
        )
    return table


def reading(run: ModelRun, width: int) -> Reading | None:
    """How to show ``run``'s counterexample to a reader: the property it breaks and what that
    reads, lines cut to ``width``; None when the verdict names no property of the model's module."""
    kind, _, name = run.result.verdict.partition(" ")
    if kind != "violates" or not name:
        return None
    part = run.result.part
    try:
        read = reads_in_module(run.model.task.spec_file, part or name)
    except (ReadsError, OSError):
        return None
    return Reading(broken=name, reads=read, witness=run.model.witness and run.outcome_ok, width=width, part=part)


def print_counterexample(run: ModelRun, out: Console, full: bool = False) -> None:
    """The counterexample as steps: by default the first state shows what the broken property
    reads and lines fit the console; ``full`` shows every variable whole."""
    cex = run.result.counterexample
    assert cex is not None
    part = f", its part {run.result.part} false" if run.result.part else ""
    out.print(Text(f"\n{run.model.name}: {run.model.shown(run.result.verdict)}{part} ({run.result.engine}, {len(cex.steps)} states)",
                   style="bold"))
    out.print(Text(f"  {run.model.note}", style="italic"))
    for line in render_steps(cex, run.model.trace_hide, None if full else reading(run, out.width)):
        out.print(Text(line))
    out.print()


def print_failure(run: ModelRun, out: Console, resume: str | None = None) -> None:
    r = run.result
    if run.pin_mismatch:
        out.print(Text(f"{run.model.name}: {run.model.shown(r.verdict)} as expected, but {run.pin_mismatch}", style="bold red"))
        return
    out.print(Text(f"{run.model.name}: expected {run.model.shown_expect}, got {r.verdict}", style="bold red"))
    if r.message:
        out.print(Text(f"  {r.message}"))
    if r.log_file is not None:
        out.print(Text(f"  engine log: {r.log_file}"))
    if resume:
        out.print(Text(f"  to go on from there: {resume}"))


def resume_command(run: ModelRun, root: Path, registry: Path | None) -> str | None:
    """The command that resumes a run that ran out of time, when TLC left a checkpoint to resume from."""
    if run.result.outcome is not Outcome.TIMEOUT or run.result.engine != "tlc":
        return None
    checkpoint = tlc_workdir.find_checkpoint(run.workdir.resolve())
    if checkpoint is None:
        return None
    reg = f" --registry {registry}" if registry else ""
    return (
        f"txconform model-check {run.model.name}{reg} --workdir {root} --resume "
        f"(TLC's checkpoint of {checkpoint.taken_at})"
    )


def write_outputs(runs: list[ModelRun], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for run in runs:
        cex = run.result.counterexample
        if cex is None:  # a counterexample an earlier run wrote is no longer one
            for stale in (directory / f"{run.model.name}.itf.json", directory / f"{run.model.name}.md"):
                stale.unlink(missing_ok=True)
            continue
        write_itf(cex, directory / f"{run.model.name}.itf.json", itf_meta(run))
        (directory / f"{run.model.name}.md").write_text(counterexample_markdown(run), encoding="utf-8")


def itf_meta(run: ModelRun) -> dict[str, Any]:
    return {
        "format": "ITF",
        "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
        "source": run.model.task.spec_file.name,
        "description": f"{run.model.name}: {run.result.verdict}, found by {run.result.engine} (txconform)",
    }


def counterexample_markdown(run: ModelRun) -> str:
    cex = run.result.counterexample
    assert cex is not None
    kind, _, name = run.result.verdict.partition(" ")
    mark = ""
    if kind == "violates" and name:
        mark = f"{name}: the example run ends here" if run.model.witness and run.outcome_ok else f"breaks {name}"
    return diagrams.markdown(f"{run.model.name}: {run.model.shown(run.result.verdict)}", cex,
                             diagrams.load(run.model.diagram) if run.model.diagram else None, mark, run.model.trace_hide,
                             f"{run.model.note}\n\nFound by {run.result.engine} in {run.result.wall_time:.1f} s.")


def runs_json(runs: list[ModelRun], engine: str, registry: Registry) -> dict[str, Any]:
    return {
        "engine": engine,
        "registries": [str(f) for f in registry.files],
        "ok": all(run.ok for run in runs),
        "models": [
            {
                "name": run.model.name,
                "spec": str(run.model.task.spec_file),
                "expected": run.model.expect,
                "witness": run.model.witness,
                "got": run.result.verdict,
                "ok": run.ok,
                "pinned_distinct_states": run.model.distinct_states,
                "pinned_depth": run.model.depth,
                "pin_mismatch": run.pin_mismatch,
                "outcome": run.result.outcome.value,
                "invariant": run.result.invariant,
                "part": run.result.part,
                "bound": run.result.bound,
                "resumed_from": run.result.resumed_from,
                "message": run.result.message,
                "distinct_states": run.result.distinct_states,
                "states_generated": run.result.states_generated,
                "depth": run.result.depth,
                "wall_time": round(run.result.wall_time, 3),
                "note": run.model.note,
                "counterexample": itf_json(run.result.counterexample, itf_meta(run)) if run.result.counterexample else None,
            }
            for run in runs
        ],
    }


def add_parsers(sub: Any) -> None:
    mc = sub.add_parser(
        "model-check",
        help="model-check the registered models and compare each outcome with its expectation",
        description="Model-check the models of the registry (all, or those named) and compare each outcome "
        "with the one the registry expects. Exit status: 0 all as expected, 1 some differ, 2 bad input.",
    )
    mc.add_argument("names", nargs="*", metavar="NAME", help="models to check (default: every model of the tier)")
    mc.add_argument("--tier", choices=SELECTIONS, default="ci",
                    help="without NAMEs, which models: ci (default: the ones CI checks), full (larger bounds, "
                         "hours), all, or tour (a few of tier ci per protocol that tell its story: what make checks)")
    mc.add_argument("--list", action="store_true", help="list the models and their expected outcomes, check nothing")
    mc.add_argument("--engine", choices=ENGINE_CHOICES, default="auto", help="model checker (default: auto, Apalache if installed, else TLC)")
    mc.add_argument("--json", action="store_true", help="print the results as JSON on stdout (progress stays on stderr)")
    mc.add_argument("--out", type=Path, metavar="DIR", help="write each counterexample as DIR/NAME.itf.json and DIR/NAME.md (steps and a Mermaid diagram)")
    mc.add_argument("--traces", action="store_true", help="print every counterexample (those of unexpected outcomes are always printed)")
    mc.add_argument("--full", action="store_true",
                    help="print a counterexample's first state whole and every line in full (default: the first state "
                         "shows the variables the broken property reads, and lines fit the terminal)")
    mc.add_argument("--example", metavar="NAME",
                    help="print the counterexample of model NAME as an example (with --out DIR, the others are in DIR)")
    mc.add_argument("--registry", type=Path, metavar="FILE",
                    help="one models registry (default: every specs/*/models.toml, of the current directory if it has any)")
    mc.add_argument("--protocol", metavar="P",
                    help="only the models of protocol P, those of specs/P/models.toml: kafka, ydb, cone or resharding")
    mc.add_argument("--workdir", type=Path, metavar="DIR", help="keep each run's files (model, engine log, states) in DIR/NAME")
    mc.add_argument("--resume", action="store_true",
                    help="continue each named model from the last checkpoint TLC wrote in DIR/NAME of --workdir "
                         "(the model must be unchanged)")
    mc.add_argument("--jobs", type=_whole("cores"), default=parallel.default_jobs(), metavar="N",
                    help="cores the runs may use at once: models run side by side, each taking as many cores as it has "
                         "TLC workers (default: the cores this machine has); --jobs 1 runs one model at a time")
    mc.add_argument("--checkpoint", type=_whole("minutes"), metavar="MINUTES",
                    help=f"TLC writes a checkpoint every MINUTES minutes (default {tlc_workdir.DEFAULT_CHECKPOINT_MINUTES})")
    mc.set_defaults(func=cmd_model_check)
