"""The tool output quoted in README.md and docs/ is what the tool prints now.

scripts/gen_docs.py fills every ``<!-- txconform: ... -->`` block by running the command; this test
runs them again and compares, ignoring only wall-clock times.

Most blocks model-check registered models that tests/test_models.py checks too. Those ``txconform
model-check`` commands run in this process, with TLC's result for each model shared with the other
tests of the session (tests/shared_runs.py): TLC checks each model once. The other commands run the
console script, as gen_docs does.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.util
import io
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from shared_runs import LONG_MODELS, SharedTlcRuns

from trace_check.cli import main as cli
from trace_check.cli import model_check
from trace_check.engines import runner
from trace_check.engines.tlc_cache import CACHE_ENV
from trace_check.models.result import Checkpointing, CheckResult, CheckTask, ProgressCallback

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
gen_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_docs)

pytestmark = pytest.mark.tlc


def blocks(path: Path) -> list[tuple[str, str, str]]:
    return [(m.group("kind"), m.group("args"), m.group("body")) for m in gen_docs.BLOCK.finditer(path.read_text())]


@pytest.fixture
def txconform(shared_tlc: SharedTlcRuns, monkeypatch: pytest.MonkeyPatch, docs_spark: list[Any]) -> gen_docs.Runner:
    """Run ``txconform ARGS`` for a block in this process (gen_docs runs the console script; the
    output is the same): ``model-check`` with the session's shared TLC runs, ``replay`` and
    ``probe`` on the worker's Spark session."""

    def run_task(engine: str, task: CheckTask, workdir: Path, on_progress: ProgressCallback | None = None,
                 checkpointing: Checkpointing = Checkpointing(), stop: threading.Event | None = None) -> CheckResult:
        if engine == "tlc" and checkpointing == Checkpointing():
            return shared_tlc.run(task, on_progress)
        return runner.run_task(engine, task, workdir, on_progress, checkpointing, stop)

    monkeypatch.setattr(model_check, "run_task", run_task)
    monkeypatch.chdir(ROOT)  # where gen_docs runs the console script
    monkeypatch.setenv("COLUMNS", "160")

    def run(args: list[str]) -> str:
        if args[0] == "model-check":
            return in_process(args)
        return once_per_session(args, lambda: in_process(args, docs_spark if args[0] in SPARK_COMMANDS else None))

    return run


# The commands that run on Spark. They run in this process, on one local Spark session the
# worker keeps for its docs (a JVM starts once, not once per block): an active session is
# reused by the replay and left running (spark_replay.session.replay_spark).
SPARK_COMMANDS = ("replay", "probe")


@pytest.fixture(scope="session")
def docs_spark() -> Iterator[list[Any]]:
    """The worker's Spark session for the docs' Spark blocks, made at the first one."""
    made: list[Any] = []
    yield made
    if made:
        made[0].stop()


def in_process(args: list[str], spark: list[Any] | None = None) -> str:
    """``txconform ARGS`` run in this process: stdout and stderr in the order printed, as gen_docs
    captures them from the console script."""
    if spark is not None and not spark:
        from spark_replay.session import spark_session

        spark.append(spark_session())  # what the console script would make: local[*], its defaults
    output = io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)  # main() sets its own
    try:
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            cli.main(args)
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return gen_docs.tidy(output.getvalue())


def once_per_session(args: list[str], run: Callable[[], str] | None = None) -> str:
    """The console script's output for ``args``. A command that only reads (``check``, ``replay``
    without ``--out``, ``probe --from``) and is quoted in two documents, such as the replay of the dump-log samples in
    README.md and docs/replay.md, runs once per test session: its output is kept next to the
    session's TLC runs (tests/conftest.py), keyed by the command and the bytes of the files it
    names, and the other worker waits for it under a lock."""
    read_only = args[0] in ("check", "replay") or (args[0] == "probe" and "--from" in args)
    fresh = run or (lambda: gen_docs.txconform(args))
    if not read_only or "--out" in args or CACHE_ENV not in os.environ:
        return fresh()
    key = hashlib.sha256(repr(args).encode())
    for arg in args[1:]:
        path = ROOT / arg
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] if path.is_file() else []
        for f in files:
            key.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    kept = Path(os.environ[CACHE_ENV]) / f"docs-{key.hexdigest()[:24]}.txt"
    kept.parent.mkdir(parents=True, exist_ok=True)
    with open(kept.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if kept.exists():
            return kept.read_text()
        output = fresh()
        kept.write_text(output)
        return output


def _writes(args: str) -> bool:
    return "--out" in args.split() or args.startswith("generate-logs")


def _each_block() -> list[Any]:
    """One test per block, so that the two workers share a long document's blocks; a document
    with a block that writes a file (a later block may read it) stays one test, run in order."""
    params = []
    for path in gen_docs.doc_files():
        found = blocks(path)
        name = str(path.relative_to(ROOT))
        if any(_writes(args) for _, args, _ in found):
            params.append(pytest.param(path, None, id=name, marks=_long(found)))
        else:
            params += [pytest.param(path, k, id=f"{name}#{k + 1}", marks=_long(found[k : k + 1])) for k in range(len(found))]
    return params


def _long(found: list[tuple[str, str, str]]) -> list[pytest.MarkDecorator]:
    """The marker `long` for blocks that model-check one of shared_runs.LONG_MODELS; `core` for
    blocks that only model-check other models (test_models checks each of them, and TLC runs it
    once for both: tests/tiers.py keeps them in every CI run)."""
    named = {word for kind, args, _ in found if kind == "txconform-mermaid" or args.startswith("model-check") for word in args.split()}
    if named & LONG_MODELS:
        return [pytest.mark.long]
    only_models = all(kind in ("txconform-mermaid", "txconform-tla") or args.startswith("model-check") for kind, args, _ in found)
    return [pytest.mark.core] if only_models else []


@pytest.mark.parametrize(("path", "k"), _each_block())
def test_generated_blocks_match_a_fresh_run(path: Path, k: int | None, txconform: gen_docs.Runner) -> None:
    if not (Path(sys.executable).parent / "txconform").exists():
        pytest.skip("the txconform console script is not installed in this environment")
    found = blocks(path)
    for kind, args, body in found if k is None else [found[k]]:
        fresh = gen_docs.render(kind, args, txconform)
        assert gen_docs.comparable(fresh) == gen_docs.comparable(body), (
            f"{path.name}: the block for `{args}` is out of date; run `python scripts/gen_docs.py`"
        )


def test_every_doc_with_counterexamples_has_generated_blocks() -> None:
    walkthrough = blocks(ROOT / "docs" / "resharding.md")
    traced = {args.split()[-1] for kind, args, _ in walkthrough if "--traces" in args}
    assert {"resharding_naive", "resharding_txn_no_check", "resharding_txn_no_check_order"} <= traced
    assert all(body.strip() for _, _, body in walkthrough), "an empty generated block: run scripts/gen_docs.py"


def test_comparison_ignores_times_and_the_table_width_they_cause() -> None:
    a = "│ m │ 9.8 s │\n└───┴───────┘"
    b = "│ m │ 11.0 s │\n└───┴────────┘"
    assert gen_docs.comparable(a) == gen_docs.comparable(b)
    assert gen_docs.comparable("│ 576 │") != gen_docs.comparable("│ 577 │"), "state counts must still be compared"
