"""Real TLC runs on tiny specs, one for every outcome the bridge distinguishes."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import attrs
import pytest

from trace_check.engines import tlc, tlc_cache, tlc_tools, tlc_workdir
from trace_check.errors import EngineUnavailable, ResumeError
from trace_check.models.result import Checkpointing, CheckTask, Outcome, TlcOptions
from trace_check.values.tla import Record

FIXTURES = Path(__file__).parent / "fixtures" / "tlc"

pytestmark = pytest.mark.tlc


def counter(**overrides) -> CheckTask:
    fields = dict(
        name="counter",
        spec_file=FIXTURES / "Counter.tla",
        constants={"Limit": 4, "Names": ["a", "b"]},
        invariants=("Small",),
        timeout=120,
    )
    fields.update(overrides)
    return CheckTask(**fields)


@pytest.fixture(autouse=True)
def _no_run_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about running TLC: each runs it (tests/conftest.py shares runs elsewhere)."""
    monkeypatch.delenv(tlc_cache.CACHE_ENV, raising=False)


def test_a_kept_run_is_read_again_as_a_live_one_and_only_for_the_same_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tlc_cache.CACHE_ENV, str(tmp_path / "kept"))
    task = counter(invariants=("Small", "BelowThree"))
    live = tlc.run_tlc(task, tmp_path / "live")
    assert live.outcome is Outcome.VIOLATED and len(list((tmp_path / "kept").glob("*.json"))) == 1

    def no_tlc(*args: object, **kwargs: object) -> None:
        raise AssertionError("TLC was started for a model whose run is kept")

    with monkeypatch.context() as m:
        m.setattr(tlc.subprocess, "Popen", no_tlc)
        progress = []
        again = tlc.run_tlc(task, tmp_path / "again", progress.append)
    for field in ("outcome", "invariant", "message", "counterexample", "distinct_states", "states_generated", "depth", "wall_time"):
        assert getattr(again, field) == getattr(live, field), field
    assert again.log_file is not None and again.log_file.read_text() == (tmp_path / "live" / "tlc.log").read_text()
    assert progress, "a kept run reports its progress messages too"
    # another constant, another budget or an edited module: TLC runs
    other = tlc.run_tlc(counter(invariants=("Small", "BelowThree"), constants={"Limit": 5, "Names": ["a", "b"]}), tmp_path / "other")
    assert other.outcome is Outcome.VIOLATED and len(list((tmp_path / "kept").glob("*.json"))) == 2
    tlc.run_tlc(attrs.evolve(task, timeout=119), tmp_path / "budget")
    assert len(list((tmp_path / "kept").glob("*.json"))) == 3
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / "Counter.tla").write_text((FIXTURES / "Counter.tla").read_text() + "\\* edited\n")
    tlc.run_tlc(attrs.evolve(task, spec_file=edited / "Counter.tla"), tmp_path / "edited-run")
    assert len(list((tmp_path / "kept").glob("*.json"))) == 4


def test_two_asking_at_once_for_the_same_run_start_tlc_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other pytest-xdist worker (here: another thread, which flock tells apart alike) waits for
    the run under way and reads it, instead of running TLC a second time."""
    monkeypatch.setenv(tlc_cache.CACHE_ENV, str(tmp_path / "kept"))
    started: list[object] = []
    real = tlc.subprocess.Popen

    def counting(*args: Any, **kwargs: Any) -> Any:
        if "tlc2.TLC" in args[0]:  # not the probes of Java's version
            started.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(tlc.subprocess, "Popen", counting)
    task = counter(invariants=("Small", "BelowThree"))
    results: dict[str, Any] = {}
    threads = [threading.Thread(target=lambda n=n: results.__setitem__(n, tlc.run_tlc(task, tmp_path / n))) for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert len(started) == 1
    assert results["a"].outcome is results["b"].outcome is Outcome.VIOLATED
    assert results["a"].counterexample == results["b"].counterexample


def test_a_liveness_counterexample_is_a_lasso_named_after_its_property(tmp_path: Path) -> None:
    task = counter(specification="FairSpec", properties=("ReachesLimit",))
    assert "SPECIFICATION FairSpec\n" in tlc_workdir.config_text(task) and "PROPERTY ReachesLimit\n" in tlc_workdir.config_text(task)
    assert "INIT" not in tlc_workdir.config_text(task)
    result = tlc.run_tlc(task, tmp_path / "run")
    assert result.outcome is Outcome.VIOLATED, result.message
    # TLC does not name a violated temporal property; with one checked, it is that one
    assert result.invariant == "ReachesLimit"
    cex = result.counterexample
    assert cex is not None and cex.loop is not None and 1 <= cex.loop <= len(cex.steps), "a lasso says where it loops back to"
    again = tlc.run_tlc(task, tmp_path / "again")
    assert again.counterexample == cex, "the same model gives the same lasso (a fixed fingerprint polynomial)"
    from trace_check.models.counterexample import render_steps

    assert f"back to state {cex.loop}: the behaviour loops from there for ever" in render_steps(cex)[-1]
    held = tlc.run_tlc(counter(specification="FairIncSpec", properties=("ReachesLimit",), tlc=TlcOptions(check_deadlock=False)), tmp_path / "held")
    assert held.outcome is Outcome.HOLDS, held.message


def test_a_step_property_is_violated_at_its_step(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(specification="FairSpec", properties=("NeverDown",)), tmp_path / "run")
    assert result.outcome is Outcome.VIOLATED and result.invariant == "NeverDown", result.message
    assert result.counterexample is not None and result.counterexample.steps[-1].action == "Reset"


def test_holds_reports_statistics(tmp_path: Path) -> None:
    progress = []
    result = tlc.run_tlc(counter(), tmp_path / "run", progress.append)
    assert result.outcome is Outcome.HOLDS, result.message
    assert result.verdict == "holds"
    assert result.distinct_states == 5
    assert result.depth == 5
    assert result.states_generated and result.states_generated >= result.distinct_states
    assert result.wall_time > 0 and result.states_per_second
    assert result.counterexample is None
    assert progress, "the progress callback was never called"
    assert (tmp_path / "run" / "states").is_dir(), "TLC must use the run's own -metadir"
    assert result.log_file is not None and "@!@!@STARTMSG" in result.log_file.read_text()


def test_violation_names_the_invariant_and_parses_the_trace(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(invariants=("Small", "BelowThree")), tmp_path / "run")
    assert result.outcome is Outcome.VIOLATED
    assert result.invariant == "BelowThree"
    assert result.verdict == "violates BelowThree"
    cex = result.counterexample
    assert cex is not None
    assert [s.action for s in cex.steps] == [None, "Inc", "Inc", "Inc"]
    assert [s.state["x"] for s in cex.steps] == [0, 1, 2, 3]
    assert cex.steps[-1].state["hist"] == (0, 1, 2)
    # a function over strings is a record to TLC
    assert cex.steps[0].state["seen"] == Record({"a": 0, "b": 0})
    assert cex.steps[1].location and "module Counter" in cex.steps[1].location
    assert cex.variables == ("hist", "seen", "x")


def test_a_violated_invariant_made_of_named_parts_names_the_part_that_is_false(tmp_path: Path) -> None:
    """Its parts are checked one by one (CheckTask.parts): the same states, the same counterexample,
    and the part that failed beside the invariant the model names."""
    whole = tlc.run_tlc(counter(invariants=("Bounded",)), tmp_path / "whole")
    split = counter(invariants=("Bounded",), parts={"Bounded": ("Small", "BelowThree")})
    assert "INVARIANT Small\nINVARIANT BelowThree" in tlc_workdir.config_text(split)
    result = tlc.run_tlc(split, tmp_path / "split")
    assert (whole.invariant, whole.part) == ("Bounded", None)
    assert (result.invariant, result.part, result.verdict) == ("Bounded", "BelowThree", "violates Bounded")
    assert (result.distinct_states, result.depth) == (whole.distinct_states, whole.depth)
    assert result.counterexample == whole.counterexample


def test_deadlock(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(next="OnlyInc"), tmp_path / "run")
    assert result.outcome is Outcome.DEADLOCK
    assert result.counterexample is not None
    assert result.counterexample.steps[-1].state["x"] == 4


def test_deadlock_check_can_be_turned_off(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(next="OnlyInc", tlc=TlcOptions(check_deadlock=False)), tmp_path / "run")
    assert result.outcome is Outcome.HOLDS


def test_parse_error_names_the_real_file_and_line(tmp_path: Path) -> None:
    task = CheckTask(name="p", spec_file=FIXTURES / "ParseError.tla", timeout=120)
    result = tlc.run_tlc(task, tmp_path / "run")
    assert result.outcome is Outcome.PARSE_ERROR
    assert str(FIXTURES / "ParseError.tla") + ":3:" in result.message
    assert "\n" not in result.message


def test_semantic_error(tmp_path: Path) -> None:
    task = CheckTask(name="s", spec_file=FIXTURES / "SemanticError.tla", timeout=120)
    result = tlc.run_tlc(task, tmp_path / "run")
    assert result.outcome is Outcome.SEMANTIC_ERROR
    assert str(FIXTURES / "SemanticError.tla") + ":3:13" in result.message
    assert "Unknown operator" in result.message


def test_config_error_for_an_unassigned_constant(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(constants={"Limit": 4}), tmp_path / "run")
    assert result.outcome is Outcome.CONFIG_ERROR
    assert result.message == "The constant parameter Names is not assigned a value by the configuration file."


def test_a_non_boolean_invariant_is_an_evaluation_error(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(invariants=("NotBool",)), tmp_path / "run")
    assert result.outcome is Outcome.EVAL_ERROR
    assert "NotBool" in result.message or "boolean" in result.message.lower()


def test_evaluation_error_has_place_and_trace(tmp_path: Path) -> None:
    result = tlc.run_tlc(counter(next="Crash"), tmp_path / "run")
    assert result.outcome is Outcome.EVAL_ERROR
    assert "out of domain" in result.message
    assert "Counter.tla:" in result.message
    assert result.counterexample is not None and result.counterexample.steps[-1].state["x"] == 2


def test_timeout_kills_tlc(tmp_path: Path) -> None:
    start = time.monotonic()
    result = tlc.run_tlc(counter(next="Huge", timeout=3), tmp_path / "run")
    assert result.outcome is Outcome.TIMEOUT
    assert result.verdict == "timeout"
    assert time.monotonic() - start < 30
    assert "3 s" in result.message


def test_engine_crash_when_the_jar_is_not_a_jar(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "tla2tools.jar"
    fake.write_text("not a jar")
    monkeypatch.setenv("TLA2TOOLS_JAR", str(fake))
    result = tlc.run_tlc(counter(), tmp_path / "run")
    assert result.outcome is Outcome.ENGINE_CRASH
    assert "status" in result.message


def test_missing_jar_override_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TLA2TOOLS_JAR", str(tmp_path / "nope.jar"))
    with pytest.raises(EngineUnavailable, match="TLA2TOOLS_JAR"):
        tlc_tools.find_tla2tools()


def test_no_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EngineUnavailable, match=r"Java not found.*apt-get install openjdk-17"):
        tlc_tools.find_java()


def test_old_java_is_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    java = tmp_path / "bin" / "java"
    java.parent.mkdir()
    java.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    java.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(tmp_path))
    with pytest.raises(EngineUnavailable, match="Java 11: TLC needs Java 17"):
        tlc_tools.find_java()


def test_config_text_lists_everything_the_task_asks_for() -> None:
    task = counter(
        invariants=("Small", "BelowThree"),
        tlc=TlcOptions(constraints=("C",), action_constraints=("A",), symmetry="Sym", view="View"),
    )
    assert tlc_workdir.config_text(task) == (
        "CONSTANTS\n"
        "    Limit = 4\n"
        '    Names = {"a", "b"}\n'
        "INIT Init\nNEXT Next\n"
        "INVARIANT Small\nINVARIANT BelowThree\n"
        "CONSTRAINT C\nACTION_CONSTRAINT A\nSYMMETRY Sym\nVIEW View\n"
    )


def test_two_runs_never_share_a_directory(tmp_path: Path) -> None:
    a = tlc.run_tlc(counter(), tmp_path / "a")
    b = tlc.run_tlc(counter(), tmp_path / "b")
    assert a.outcome is b.outcome is Outcome.HOLDS
    assert (tmp_path / "a" / "states").exists() and (tmp_path / "b" / "states").exists()
    assert not list(FIXTURES.glob("*.cfg")) and not (FIXTURES / "states").exists(), "TLC wrote into the spec folder"


def test_an_interrupted_run_leaves_no_tlc_behind(tmp_path: Path) -> None:
    """Interrupting txconform (Ctrl-C, or SIGTERM from a CI runner) must stop TLC as well."""
    import os
    import signal
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; sys.path.insert(0, %r)\n"
        "from trace_check.cli.main import main\n"
        "sys.exit(main(['model-check', '--registry', %r, '--workdir', %r, 'huge']))\n"
    )
    registry = tmp_path / "models.toml"
    (tmp_path / "tlc").mkdir()
    for f in FIXTURES.glob("*.tla"):
        (tmp_path / "tlc" / f.name).write_text(f.read_text())
    registry.write_text(
        '[models.huge]\nspec = "tlc/Counter.tla"\nconstants = { Limit = 4, Names = ["a"] }\n'
        'invariants = ["Small"]\nexpect = "holds"\nnext = "Huge"\ntimeout = 120\nnote = "Big."\napalache = { length = 2 }\ntier = "full"\n'
    )
    root = str(Path(__file__).resolve().parents[1])
    proc = subprocess.Popen([sys.executable, "-c", script % (root, str(registry), str(tmp_path / "work"))])
    log = tmp_path / "work" / "huge" / "tlc.log"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (log.exists() and "STARTMSG" in log.read_text()):
        time.sleep(0.2)
    assert log.exists(), "TLC never started"
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    time.sleep(1)
    leftovers = subprocess.run(["pgrep", "-f", str(tmp_path / "work")], capture_output=True, text=True).stdout.split()
    for pid in leftovers:
        os.kill(int(pid), signal.SIGKILL)
    assert not leftovers, "a TLC process outlived txconform"


WALK_SIZE = 99
# TLC checkpoints every whole minute at the least (-checkpoint MINUTES); its system property
# tlc2.TLCGlobals.chkpt sets the interval in milliseconds instead (TLCGlobals.java), so the first
# checkpoint comes about 3 s into the run and the test costs seconds of CPU, not minutes.
CHECKPOINT_EVERY_MS = 2000
FIRST_RUN_SECONDS = 120  # at most, for the first run to write its first checkpoint (then it is stopped)


def walk(**overrides) -> CheckTask:
    fields = dict(
        name="walk",
        spec_file=FIXTURES / "Walk.tla",
        # Work sets the cost per state: about 14 s in all on one idle core, twice the first
        # checkpoint and the first run's time budget
        constants={"Size": WALK_SIZE, "Work": 6000},
        invariants=("Costly",),
        tlc=TlcOptions(workers=1),
        timeout=600,
    )
    fields.update(overrides)
    return CheckTask(**fields)


def test_a_resumed_run_finds_exactly_the_states_of_an_uninterrupted_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, f"-Dtlc2.TLCGlobals.chkpt={CHECKPOINT_EVERY_MS}")
    # The first run is stopped once its first checkpoint is complete, however fast the machine: a
    # fixed budget was too short on two loaded cores and longer than the whole walk on a quiet one
    # (stop 62: 6.4 s in all).
    work = tmp_path / "run"
    stop = threading.Event()

    def stop_after_the_first_checkpoint() -> None:
        deadline = time.monotonic() + FIRST_RUN_SECONDS
        log = work / "tlc.log"
        while time.monotonic() < deadline and not stop.is_set():
            if log.exists() and "Checkpointing completed" in log.read_text(errors="replace"):
                stop.set()
            time.sleep(0.05)

    watcher = threading.Thread(target=stop_after_the_first_checkpoint)
    watcher.start()
    try:
        with pytest.raises(tlc.Cancelled):
            tlc.run_tlc(walk(), work, stop=stop)
    finally:
        stop.set()
        watcher.join()
    checkpoint = tlc_workdir.find_checkpoint(work)
    assert checkpoint is not None, f"no checkpoint in {FIRST_RUN_SECONDS} s; see {work / 'tlc.log'}"

    resumed = tlc.run_tlc(walk(), work, checkpointing=Checkpointing(resume=True))
    assert resumed.outcome is Outcome.HOLDS, resumed.message
    assert f"-Dtlc2.TLCGlobals.chkpt={CHECKPOINT_EVERY_MS}" in resumed.command
    assert resumed.resumed_from == checkpoint.taken_at
    # a grid of (Size+1)^2 points, each counted once, as in one run from the start: with another
    # fingerprint polynomial than the first run's, the states seen before the checkpoint count twice
    assert resumed.distinct_states == (WALK_SIZE + 1) ** 2
    assert resumed.command[resumed.command.index("-fp") + 1] == str(checkpoint.fp_index)
    log = work / "tlc.log"
    assert log.read_text().count("Starting recovery from checkpoint") == 1, "the resumed run must add to the log"


def test_java_options_come_from_the_environment_and_bad_ones_are_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, "-Xmx2g  '-Dname=a b'")
    assert tlc_tools.java_options() == ["-Xmx2g", "-Dname=a b"]
    cmd = tlc.build_command(counter(), Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert cmd[cmd.index("-Xmx2g") + 1] == "-Dname=a b" and cmd.index("-Xmx2g") < cmd.index("tlc2.TLC")
    monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, "-Xmx2g Walk.tla")
    with pytest.raises(EngineUnavailable, match=r"'Walk\.tla' is not a JVM option"):
        tlc_tools.java_options()
    monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, "-Dname='open")
    with pytest.raises(EngineUnavailable, match=r"TXCONFORM_TLC_JAVA_OPTS=.*shell words"):
        tlc_tools.java_options()
    monkeypatch.delenv(tlc_tools.JAVA_OPTS_ENV)
    assert tlc_tools.java_options() == []


def test_the_collector_is_the_tasks_unless_the_user_names_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two collectors on one command line stop the JVM before TLC starts."""
    monkeypatch.delenv(tlc_tools.JAVA_OPTS_ENV, raising=False)
    model = tlc.build_command(counter(), Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert "-XX:+UseParallelGC" in model
    window = attrs.evolve(counter(), tlc=attrs.evolve(counter().tlc, collector="SerialGC"))
    cmd = tlc.build_command(window, Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert "-XX:+UseSerialGC" in cmd and "-XX:+UseParallelGC" not in cmd
    monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, "-XX:+UseG1GC")
    cmd = tlc.build_command(window, Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert [o for o in cmd if o.endswith("GC")] == ["-XX:+UseG1GC"]


def test_the_first_tier_alone_when_the_task_asks_unless_the_user_says_how_to_compile(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(tlc_tools.JAVA_OPTS_ENV, raising=False)
    assert not any("Tiered" in o for o in tlc.build_command(counter(), Path("/w"), Path("java"), Path("tla2tools.jar")))
    quick = attrs.evolve(counter(), tlc=attrs.evolve(counter().tlc, quick_jit=True))
    cmd = tlc.build_command(quick, Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert "-XX:TieredStopAtLevel=1" in cmd and cmd.index("-XX:TieredStopAtLevel=1") < cmd.index("tlc2.TLC")
    for user in ("-XX:TieredStopAtLevel=4", "-XX:-TieredCompilation"):
        monkeypatch.setenv(tlc_tools.JAVA_OPTS_ENV, user)
        cmd = tlc.build_command(quick, Path("/w"), Path("java"), Path("tla2tools.jar"))
        assert [o for o in cmd if "Tiered" in o] == [user]


def test_resuming_needs_a_completed_checkpoint(tmp_path: Path) -> None:
    tlc_workdir.prepare_workdir(counter(), tmp_path / "run")
    with pytest.raises(ResumeError, match=r"no completed TLC checkpoint to resume.*run without --resume"):
        tlc_workdir.resumable_checkpoint(counter(), tmp_path / "run")


def test_a_checkpoint_resumes_only_the_same_model(tmp_path: Path, leave_checkpoint) -> None:
    task = counter()
    tlc_workdir.prepare_workdir(task, tmp_path / "run")
    leave_checkpoint(tmp_path / "run")
    checkpoint = tlc_workdir.resumable_checkpoint(task, tmp_path / "run")
    assert checkpoint.fp_index == 68 and checkpoint.taken_at == "2026-11-23 05:40:41"

    with pytest.raises(ResumeError, match=r"configuration \(Counter.cfg\) changed since TLC's checkpoint of 2026-11-23 05:40:41"):
        tlc_workdir.resumable_checkpoint(attrs.evolve(task, constants={"Limit": 5, "Names": ["a", "b"]}), tmp_path / "run")
    (tmp_path / "run" / "Counter.tla").write_text((FIXTURES / "Counter.tla").read_text() + "\\* edited\n")
    with pytest.raises(ResumeError, match=r"Counter\.tla changed since"):
        tlc_workdir.resumable_checkpoint(task, tmp_path / "run")


def test_temporal_properties_are_checked_once_on_the_whole_graph() -> None:
    """TLC also checks temporal properties when its progress timer fires; a violation found then
    stops the run early, and the pinned distinct-state count would depend on the machine's speed
    (kafka_tv2_abort_empty_old_rule gave 737 states instead of 847 on a slow CI run)."""
    live = tlc.build_command(counter(properties=("Eventually",)), Path("/w"), Path("java"), Path("tla2tools.jar"))
    assert live[live.index("-lncheck") + 1] == "final" and live.index("-lncheck") < live.index("Counter.tla")
    assert "-lncheck" not in tlc.build_command(counter(), Path("/w"), Path("java"), Path("tla2tools.jar"))
