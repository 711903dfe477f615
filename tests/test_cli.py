"""The txconform command line: exit codes, messages, outputs."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trace_check.cli.main import main
from trace_check.models.itf import read_itf

FIXTURES = Path(__file__).parent / "fixtures" / "tlc"
ROOT = Path(__file__).resolve().parents[1]

MODELS = """
[base]
spec = "tlc/Counter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["Small"]
timeout = 60
apalache = { length = 5 }

[models.counter_holds]
expect = "holds"
note = "The counter stays within its limit."
distinct_states = 5
depth = 5

[models.counter_passes_three]
invariants = ["Small", "BelowThree"]
expect = "violates BelowThree"
note = "The counter passes three."
distinct_states = 4
depth = 4
"""


@pytest.fixture
def reg(tmp_path: Path):
    def make(text: str = MODELS) -> Path:
        if not (tmp_path / "tlc").exists():
            shutil.copytree(FIXTURES, tmp_path / "tlc")
        path = tmp_path / "models.toml"
        path.write_text(text)
        return path

    return make


@pytest.fixture(autouse=True)
def no_apalache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """These tests are about TLC; make sure no Apalache on the machine changes what `auto` picks."""
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not (Path(p) / "apalache-mc").exists()))


def test_list(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--list", "--registry", str(reg())]) == 0
    out = capsys.readouterr().out
    assert "counter_holds" in out and "violates BelowThree" in out and "The counter passes three." in out


def test_list_of_one_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--list", "--protocol", "cone"]) == 0
    out = capsys.readouterr().out
    assert "cone_zombie_commit" in out and "kafka_happy_path" not in out and "ydb_" not in out


def test_an_unknown_protocol_is_one_line_with_the_known_ones(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--list", "--protocol", "kafak"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "did you mean 'kafka'?" in err and "cone, kafka, resharding, ydb" in err


def test_a_narrow_terminal_lists_names_and_outcomes_whole_without_notes() -> None:
    """At 80 columns the list was 1,384 lines of notes folded into a narrow column with names broken
    mid-word: now one line per model, its name and outcome whole, and a line saying where the notes went."""
    from rich.console import Console

    from trace_check.cli.model_check import models_table
    from trace_check.models.registry import default_registry_files, load_registries

    models = load_registries(default_registry_files()).select([], "ci")
    console = Console(width=80, record=True, file=io.StringIO())
    console.print(models_table(models, console.width))
    lines = console.export_text().splitlines()
    assert all(len(line) <= 80 for line in lines)
    rows = [line for line in lines if line.strip().split(" ")[0] in {m.name for m in models}]
    assert len(rows) == len(models)  # every model on one line, its name whole
    longest = max(models, key=lambda m: len(m.shown_expect))
    assert longest.name in "".join(lines) and longest.note not in "".join(lines)


def test_full_tier_models_run_only_when_asked_for(reg, capsys: pytest.CaptureFixture[str]) -> None:
    holds = MODELS[MODELS.index("[models.counter_holds]"):MODELS.index("[models.counter_passes_three]")]
    text = MODELS + holds.replace("counter_holds]", "counter_big]\ntier = \"full\"\nconstants = { Limit = 6 }").replace("= 5", "= 7")
    assert main(["model-check", "--list", "--registry", str(reg(text))]) == 0
    assert "counter_big" not in capsys.readouterr().out
    assert main(["model-check", "--tier", "full", "--registry", str(reg(text))]) == 0
    captured = capsys.readouterr()
    assert "counter_big" in captured.out and "counter_holds" not in captured.out
    assert "all 1 model(s) as expected" in captured.err


def test_all_as_expected_exits_zero_and_shows_the_table(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--registry", str(reg())]) == 0
    captured = capsys.readouterr()
    assert "engine: TLC (auto: apalache-mc is not installed)" in captured.err
    assert "all 2 model(s) as expected" in captured.err
    for column in ("model", "engine", "expected", "got", "distinct states", "time"):
        assert column in captured.out
    assert "violates BelowThree" in captured.out


def test_traces_prints_the_counterexample_as_steps(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--traces", "--registry", str(reg()), "counter_passes_three"]) == 0
    out = capsys.readouterr().out
    assert "counter_passes_three: violates BelowThree (tlc, 4 states)" in out
    assert "  1. Init" in out and "  4. Inc" in out
    assert "x: 2 -> 3" in out
    assert "hist appended 2" in out
    # for a reader: the first state shows what BelowThree reads, and the breaking state is marked
    assert "       x = 0\n       (and hist, seen, which BelowThree does not read)" in out
    assert "  => state 4 breaks BelowThree; what it reads there:\n       x = 3" in out
    assert main(["model-check", "--traces", "--full", "--registry", str(reg()), "counter_passes_three"]) == 0
    full = capsys.readouterr().out
    init = full[full.index("  1. Init") : full.index("  2. Inc")]
    assert all(f"       {v} = " in init for v in ("x", "hist", "seen")) and "=> state" not in full


def test_unexpected_outcome_exits_one_and_explains(reg, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(MODELS.replace('expect = "violates BelowThree"', 'expect = "holds"'))
    assert main(["model-check", "--registry", str(path)]) == 1
    captured = capsys.readouterr()
    assert "counter_passes_three: expected holds, got violates BelowThree" in captured.out
    assert "engine log:" in captured.out
    assert "1 of 2 model(s) differ from their expected outcome or pinned state count: counter_passes_three" in captured.err
    # an unexpected counterexample is always printed, even without --traces
    assert "x: 2 -> 3" in captured.out


def test_a_violation_that_disappears_fails(reg, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(MODELS.replace('expect = "holds"', 'expect = "violates Small"'))
    assert main(["model-check", "--registry", str(path), "counter_holds"]) == 1
    assert "expected violates Small, got holds" in capsys.readouterr().out


def test_running_out_of_budget_fails(reg, capsys: pytest.CaptureFixture[str]) -> None:
    text = MODELS + '\n[models.huge]\nconstants = { Names = ["a"] }\n' \
        'expect = "holds"\nnext = "Huge"\ntimeout = 3\nnote = "Too big."\ndistinct_states = 1\ndepth = 1\n'
    assert main(["model-check", "--registry", str(reg(text)), "huge"]) == 1
    out = capsys.readouterr().out
    assert "huge: expected holds, got timeout" in out and "3 s budget" in out


def test_spec_that_does_not_parse(reg, capsys: pytest.CaptureFixture[str]) -> None:
    text = '[models.broken]\nspec = "tlc/ParseError.tla"\ninvariants = []\nexpect = "holds"\nnote = "Broken."\n' \
        'apalache = { length = 2 }\ndistinct_states = 1\ndepth = 1\n'
    path = reg(text)
    assert main(["model-check", "--registry", str(path)]) == 1
    out = capsys.readouterr().out
    assert "broken: expected holds, got parse error" in out
    assert "ParseError.tla:3:" in out


def test_json_output(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--json", "--registry", str(reg())]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is True and data["engine"] == "tlc"
    by_name = {m["name"]: m for m in data["models"]}
    assert by_name["counter_holds"]["got"] == "holds" and by_name["counter_holds"]["counterexample"] is None
    violated = by_name["counter_passes_three"]
    assert violated["got"] == "violates BelowThree" and violated["ok"] is True
    assert violated["distinct_states"] > 0 and violated["depth"] >= 4
    states = violated["counterexample"]["states"]
    assert [s["x"] for s in states] == [{"#bigint": str(i)} for i in range(4)]


def test_out_writes_itf_and_mermaid(reg, tmp_path: Path) -> None:
    out_dir = tmp_path / "cex"
    assert main(["model-check", "--registry", str(reg()), "--out", str(out_dir)]) == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["counter_passes_three.itf.json", "counter_passes_three.md"]
    cex = read_itf(out_dir / "counter_passes_three.itf.json")
    assert [s.state["x"] for s in cex.steps] == [0, 1, 2, 3]
    assert [s.action for s in cex.steps] == [None, "Inc", "Inc", "Inc"]
    md = (out_dir / "counter_passes_three.md").read_text()
    assert "```mermaid\nsequenceDiagram" in md and "4. Inc" in md


def test_workdir_keeps_the_engine_files(reg, tmp_path: Path) -> None:
    work = tmp_path / "work"
    assert main(["model-check", "--registry", str(reg()), "--workdir", str(work), "counter_holds"]) == 0
    assert (work / "counter_holds" / "tlc.log").is_file()
    assert (work / "counter_holds" / "Counter.cfg").is_file()


def test_relative_workdir(reg, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # TLC runs inside the workdir: a relative path used to make it miss its standard modules
    registry = reg()
    monkeypatch.chdir(tmp_path)
    assert main(["model-check", "--registry", str(registry), "--workdir", "work", "counter_holds"]) == 0
    assert (tmp_path / "work" / "counter_holds" / "tlc.log").is_file()


def test_resume_needs_a_workdir_names_and_a_checkpoint(reg, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    registry = str(reg())
    assert main(["model-check", "--registry", registry, "--resume", "counter_holds"]) == 2
    assert "--resume needs --workdir DIR and the NAMEs" in capsys.readouterr().err
    work = str(tmp_path / "work")
    assert main(["model-check", "--registry", registry, "--workdir", work, "--resume"]) == 2
    capsys.readouterr()
    assert main(["model-check", "--registry", registry, "--workdir", work, "counter_holds"]) == 0
    capsys.readouterr()
    # a run of seconds writes no checkpoint: nothing to resume, and nothing is run or deleted
    assert main(["model-check", "--registry", registry, "--workdir", work, "counter_holds", "--resume"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "no completed TLC checkpoint to resume" in err
    assert (tmp_path / "work" / "counter_holds" / "tlc.log").is_file()


def test_checkpoints_are_refused_for_apalache() -> None:
    from trace_check.engines.runner import check_checkpointing
    from trace_check.errors import EngineUnavailable
    from trace_check.models.result import Checkpointing

    check_checkpointing("apalache", Checkpointing())
    check_checkpointing("tlc", Checkpointing(resume=True, every_minutes=5))
    for asked in (Checkpointing(resume=True), Checkpointing(every_minutes=5)):
        with pytest.raises(EngineUnavailable, match=r"TLC only .*add --engine tlc"):
            check_checkpointing("apalache", asked)


def test_a_timeout_with_a_checkpoint_prints_how_to_resume(tmp_path: Path, leave_checkpoint) -> None:
    from trace_check.cli.model_check import ModelRun, resume_command
    from trace_check.models.registry import load_registry
    from trace_check.models.result import CheckResult, Outcome

    registry = tmp_path / "models.toml"
    shutil.copytree(FIXTURES, tmp_path / "tlc")
    registry.write_text(MODELS)
    model = load_registry(registry).select(["counter_holds"], "ci")[0]
    work = tmp_path / "work" / "counter_holds"
    run = ModelRun(model=model, result=CheckResult(engine="tlc", outcome=Outcome.TIMEOUT, wall_time=9.0), workdir=work)
    assert resume_command(run, tmp_path / "work", registry) is None, "no checkpoint yet: nothing to resume"
    leave_checkpoint(work)
    assert resume_command(run, tmp_path / "work", registry) == (
        f"txconform model-check counter_holds --registry {registry} --workdir {tmp_path / 'work'} --resume "
        "(TLC's checkpoint of 2026-11-23 05:40:41)"
    )


def test_bad_registry_is_one_line_and_exit_two(reg, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(MODELS.replace("invariants = [\"Small\", ", "invariants = [\"Smal\", "))
    assert main(["model-check", "--registry", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("txconform: error: ") and "\n" not in err
    assert "invariant Smal is not defined" in err


def test_unknown_model_name(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--registry", str(reg()), "nope"]) == 2
    assert "no model named 'nope'" in capsys.readouterr().err


def test_asking_for_apalache_when_it_is_missing(reg, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--engine", "apalache", "--registry", str(reg())]) == 2
    err = capsys.readouterr().err
    assert "apalache-mc not found" in err and "APALACHE_HOME" in err and "--engine tlc" in err


def test_console_script_without_java_prints_one_line(reg, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "txconform"
    if not script.exists():
        pytest.skip("the txconform console script is not installed in this environment")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java, no apalache-mc
    proc = subprocess.run([str(script), "model-check", "--registry", str(reg())], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("txconform: error: Java not found")
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("minutes", ["0", "-5", "half"])
def test_checkpoint_minutes_must_be_a_whole_number_of_at_least_one(minutes: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["model-check", "--checkpoint", minutes, "counter_holds"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument --checkpoint: '{minutes}' is not a whole number of minutes of at least 1" in err
    assert "Traceback" not in err


def test_a_wrong_pin_is_a_mismatch(reg, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(MODELS.replace("distinct_states = 5\n", "distinct_states = 6\n"))
    assert main(["model-check", "--registry", str(path)]) == 1
    captured = capsys.readouterr()
    hint = f"if the change is meant, update distinct_states in {path}:9"
    assert f"FAIL counter_holds: holds (as expected); but 5 distinct states where 6 are pinned: {hint};" in captured.err
    assert f"counter_holds: holds as expected, but 5 distinct states where 6 are pinned: {hint}" in captured.out
    assert "5 (pinned 6)" in captured.out and "x: 2 -> 3" not in captured.out, "a right outcome's trace stays unprinted"
    assert "1 of 2 model(s) differ from their expected outcome or pinned state count: counter_holds" in captured.err
    # with one TLC worker the depth is compared too; with two it is not (it varies by one between runs)
    path = reg(MODELS.replace("depth = 5\n", "depth = 6\n"))
    assert main(["model-check", "--registry", str(path), "counter_holds"]) == 1
    assert "depth 5 where 6 is pinned: if the change is meant, update depth in" in capsys.readouterr().out
    path = reg(MODELS.replace("depth = 5\n", "depth = 6\ntlc = { workers = 2 }\n"))
    assert main(["model-check", "--registry", str(path), "counter_holds"]) == 0


def test_json_has_the_pins(reg, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(MODELS.replace("distinct_states = 4\n", "distinct_states = 40\n"))
    assert main(["model-check", "--json", "--registry", str(path), "counter_passes_three"]) == 1
    (model,) = json.loads(capsys.readouterr().out)["models"]
    assert (model["ok"], model["got"], model["distinct_states"], model["pinned_distinct_states"]) == (False, "violates BelowThree", 4, 40)
    assert model["pin_mismatch"].startswith("4 distinct states where 40 are pinned")


def test_a_reduction_that_loses_states_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The registry pins what TLC reaches; a view (or next-state relation) that merges or skips
    states it should not is caught even when the expected violation is still found."""
    shutil.copytree(ROOT / "specs" / "resharding", tmp_path / "resharding")
    registry = str(tmp_path / "resharding" / "models.toml")
    assert main(["model-check", "--registry", registry, "resharding_txn_no_check"]) == 0
    assert "8,090 distinct states" in capsys.readouterr().err
    mc = tmp_path / "resharding" / "MCResharding.tla"
    exact = "View == <<target, committed, owner, wk, crashes, hangs>>"
    assert exact in mc.read_text()
    mc.write_text(mc.read_text().replace(exact, "View == <<target, committed, owner, wk, hangs>>"))  # forgets crashes
    assert main(["model-check", "--registry", registry, "resharding_txn_no_check"]) == 1
    captured = capsys.readouterr()
    assert "FAIL resharding_txn_no_check: violates ExactlyOnce (as expected); but " in captured.err
    assert f"distinct states where 8,090 are pinned: if the change is meant, update distinct_states in {registry}:" in captured.err
    assert "(pinned 8,090)" in captured.out


WITNESS = """
[models.counter_reaches_three]
spec = "tlc/MCCounter.tla"
constants = { Limit = 4, Names = ["a", "b"] }
invariants = ["WitnessReachesThree"]
expect = "violates WitnessReachesThree"
witness = true
note = "An example run: the counter reaches three."
apalache = { length = 5 }
distinct_states = 4
depth = 4
"""


def test_witnesses_are_shown_as_witnesses(reg, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = reg(WITNESS)
    (tmp_path / "tlc" / "MCCounter.tla").write_text("---- MODULE MCCounter ----\nEXTENDS Counter\nWitnessReachesThree == BelowThree\n====\n")
    assert main(["model-check", "--list", "--registry", str(path)]) == 0
    assert "witness: WitnessReachesThree" in capsys.readouterr().out
    assert main(["model-check", "--registry", str(path)]) == 0
    captured = capsys.readouterr()
    assert "ok   counter_reaches_three: witness: WitnessReachesThree (as expected); 4 distinct states" in captured.err
    row = next(line for line in captured.out.splitlines() if "counter_reaches_three" in line)
    assert row.count("witness: WitnessReachesThree") == 2 and "violates" not in row  # expected and got


def test_example_prints_one_counterexample_and_out_has_them_all(reg, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = MODELS + MODELS[MODELS.index("[models.counter_passes_three]"):].replace("counter_passes_three]", "counter_passes_three_too]")
    out_dir = tmp_path / "out"
    assert main(["model-check", "--registry", str(reg(text)), "--out", str(out_dir), "--example", "counter_passes_three_too"]) == 0
    captured = capsys.readouterr()
    assert "counter_passes_three_too: violates BelowThree (tlc, 4 states)" in captured.out
    assert captured.out.count("x: 2 -> 3") == 1, "only the example is printed"
    assert "Model-checking results" in captured.out
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "counter_passes_three.itf.json", "counter_passes_three.md", "counter_passes_three_too.itf.json", "counter_passes_three_too.md",
    ]
    last = captured.err.strip().splitlines()[-1]
    assert last == (
        f"txconform: 2 counterexample(s) in {out_dir}{os.sep}: NAME.md (the steps and a Mermaid diagram) and NAME.itf.json (ITF) "
        "for each; `txconform model-check --traces NAME` prints one"
    )


def test_out_drops_a_counterexample_that_is_gone(reg, tmp_path: Path) -> None:
    out_dir = tmp_path / "out"
    path = reg(MODELS.replace('invariants = ["Small", "BelowThree"]', 'invariants = ["Small", "BelowThree"]\nnext = "OnlyInc"'))
    assert main(["model-check", "--registry", str(path), "--out", str(out_dir), "counter_passes_three"]) == 0
    assert (out_dir / "counter_passes_three.md").is_file()
    path.write_text(MODELS.replace('expect = "violates BelowThree"', 'expect = "holds"').replace('["Small", "BelowThree"]', '["Small"]')
                    .replace("distinct_states = 4\ndepth = 4", "distinct_states = 5\ndepth = 5"))
    assert main(["model-check", "--registry", str(path), "--out", str(out_dir), "counter_passes_three"]) == 0
    assert not any(out_dir.iterdir()), "a file left from an earlier run would pass for a counterexample of this one"


@pytest.mark.parametrize(
    "args, message",
    [
        (["--example", "counter_pases_three"], "--example counter_pases_three: not among the models to check (did you mean 'counter_passes_three'?)"),
        (["--example", "counter_holds"], "--example counter_holds: its expected outcome is holds, so it has no counterexample"),
        (["--example", "counter_passes_three", "counter_holds"], "--example counter_passes_three: not among the models to check"),
        (["--example", "counter_passes_three", "--json"], "--example prints a counterexample as text and --json prints JSON: drop one"),
    ],
)
def test_example_is_refused_before_anything_runs(reg, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["model-check", "--registry", str(reg()), *args]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("txconform: error: ") and "\n" not in err and message in err


def test_help_says_what_the_tool_is_and_simulate_names_every_protocols_settings(capsys: pytest.CaptureFixture[str]) -> None:
    from trace_check.traces import plugins

    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith("Check transaction protocols against their TLA+ specs")
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for name in plugins.names():  # a plug-in's workload, faults and bugs are each named in the help
        assert text.count(f"{name}:") >= 2 and f"({name})" in text, name
