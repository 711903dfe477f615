"""Tests for trace_check.engines.apalache.

Apalache is not installed here, so every run below uses a *fake* ``apalache-mc``: a shell script
the test writes into tmp_path that prints log lines shaped like Apalache's, drops a canned ITF
trace where Apalache would, and exits with Apalache's exit codes. These tests check our command
line, our reading of exit codes and logs, the timeout kill and the trace reading; they say
nothing about what real Apalache finds in any spec.
"""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from trace_check.engines.apalache import (
    CINIT_OPERATOR,
    build_command,
    error_line,
    find_apalache,
    interpret,
    invariant_for_condition,
    prepare_workdir,
    run_apalache,
    verification_conditions,
    wrapper_text,
)
from trace_check.errors import EngineUnavailable, TxconformError
from trace_check.models.result import ApalacheOptions, CheckTask, Outcome, Progress, TlcOptions
from trace_check.values.tla import FnMap

SPEC = """---- MODULE Bank ----
EXTENDS Integers, Helpers
CONSTANTS N, Accounts, Debug
VARIABLES balance
Init == balance = [a \\in Accounts |-> N]
Next == \\E a \\in Accounts: balance' = [balance EXCEPT ![a] = @ - 1]
TypeOK == balance \\in [Accounts -> Int]
NoOverdraft == \\A a \\in Accounts: balance[a] >= 0
====
"""

# What the fake writes as its counterexample: two states of the spec above.
CANNED_TRACE = {
    "#meta": {"format": "ITF", "description": "canned trace for a fake apalache-mc"},
    "params": ["N"],
    "vars": ["balance"],
    "states": [
        {"#meta": {"index": 0}, "N": {"#bigint": "3"}, "balance": {"#map": [["a", {"#bigint": "0"}]]}},
        {"#meta": {"index": 1}, "balance": {"#map": [["a", {"#bigint": "-1"}]]}},
    ],
}


def log_line(message: str, level: str = "I") -> str:
    """A line as Apalache's console log prints it: padded message, then level@time."""
    return f"{message:<65} {level}@12:34:56.789"


@pytest.fixture
def spec_dir(tmp_path: Path) -> Path:
    d = tmp_path / "spec"
    d.mkdir()
    (d / "Bank.tla").write_text(SPEC)
    (d / "Helpers.tla").write_text("---- MODULE Helpers ----\nDouble(x) == 2 * x\n====\n")
    (d / "notes.txt").write_text("not a module")
    return d


def make_task(spec_dir: Path, **overrides) -> CheckTask:
    fields = dict(
        name="bank",
        spec_file=spec_dir / "Bank.tla",
        constants={"N": 3, "Accounts": ["a", "b"], "Debug": False},
        invariants=("TypeOK", "NoOverdraft"),
        tlc=TlcOptions(check_deadlock=False),
        apalache=ApalacheOptions(length=7),
        timeout=60.0,
    )
    fields.update(overrides)
    return CheckTask(**fields)


def write_fake_apalache(
    directory: Path,
    log_lines: list[str],
    exit_code: int,
    trace_to: str | None = None,
    body: str = "",
) -> Path:
    """Write a fake ``apalache-mc``: it records its argv, prints ``log_lines``, optionally copies
    CANNED_TRACE to ``trace_to`` (relative to the --run-dir or --out-dir it was given, e.g.
    ``run:violation1.itf.json``), runs ``body`` and exits with ``exit_code``."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "canned.itf.json").write_text(json.dumps(CANNED_TRACE))
    (directory / "log.txt").write_text("".join(line + "\n" for line in log_lines))
    copy = ""
    if trace_to is not None:
        where, name = trace_to.split(":", 1)
        target = f'"$RUN/{name}"' if where == "run" else f'"$OUT/{name}"'
        copy = f'mkdir -p "$(dirname {target})"\ncp "$HERE/canned.itf.json" {target}\n'
    script = directory / "apalache-mc"
    script.write_text(
        "#!/bin/sh\n"
        "# A FAKE apalache-mc for tests: it checks nothing.\n"
        'HERE="$(cd "$(dirname "$0")" && pwd)"\n'
        'printf "%s\\n" "$@" > "$HERE/argv.txt"\n'
        'for arg in "$@"; do\n'
        '  case "$arg" in\n'
        '    --run-dir=*) RUN="${arg#--run-dir=}" ;;\n'
        '    --out-dir=*) OUT="${arg#--out-dir=}" ;;\n'
        "  esac\n"
        "done\n"
        'cat "$HERE/log.txt"\n'
        f"{copy}{body}\n"
        f"exit {exit_code}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return script


VIOLATION_LOG = [
    "Output directory: /somewhere",  # printed without a logger suffix
    log_line("  > Set the initialization predicate to Init"),
    log_line("Step 0: picking a transition out of 1 transition(s)"),
    log_line("State 0: Checking 2 state invariants"),
    log_line("State 0: state invariant 0 holds."),
    log_line("Step 1: picking a transition out of 2 transition(s)"),
    log_line("State 1: Checking 2 state invariants"),
    log_line("Step 2: picking a transition out of 2 transition(s)"),
    log_line("Step 3: picking a transition out of 2 transition(s)"),
    log_line("State 3: Checking 2 state invariants"),
    log_line("Check the trace in: violation1.tla, violation1.itf.json"),
    log_line("State 3: state invariant 1 violated."),
    log_line("Found 1 error(s)"),
    log_line("The outcome is: Error"),
    log_line("Checker has found an error"),
    "EXITCODE: ERROR (12)",
]


# ---------------------------------------------------------------------------------------------
# Command line and wrapper module


def test_build_command_exact_argv(spec_dir: Path, tmp_path: Path) -> None:
    wd = tmp_path / "work"
    cmd = build_command(make_task(spec_dir), wd, Path("/opt/apalache/bin/apalache-mc"))
    assert cmd == [
        "/opt/apalache/bin/apalache-mc",
        "check",
        "--init=Init",
        "--next=Next",
        "--inv=TypeOK,NoOverdraft",
        "--cinit=CInit_txconform",
        "--length=7",
        "--no-deadlock=true",
        f"--out-dir={wd}/apalache-out",
        f"--run-dir={wd}/apalache-run",
        f"{wd}/MC_txconform_apalache.tla",
    ]


def test_build_command_without_constants_invariants_or_deadlock_opt_out(spec_dir: Path, tmp_path: Path) -> None:
    task = make_task(spec_dir, constants={}, invariants=(), init="MyInit", next="MyNext", tlc=TlcOptions())
    cmd = build_command(task, tmp_path, Path("apalache-mc"))
    assert cmd == [
        "apalache-mc",
        "check",
        "--init=MyInit",
        "--next=MyNext",
        "--length=7",
        f"--out-dir={tmp_path}/apalache-out",
        f"--run-dir={tmp_path}/apalache-run",
        f"{tmp_path}/MC_txconform_apalache.tla",
    ]


def test_wrapper_module_text(spec_dir: Path) -> None:
    assert wrapper_text(make_task(spec_dir)) == (
        "---- MODULE MC_txconform_apalache ----\n"
        "EXTENDS Bank\n"
        "\n"
        "CInit_txconform ==\n"
        '    /\\ Accounts = {"a", "b"}\n'
        "    /\\ Debug = FALSE\n"
        "    /\\ N = 3\n"
        "\n"
        "====\n"
    )
    assert CINIT_OPERATOR not in wrapper_text(make_task(spec_dir, constants={}))


def test_prepare_workdir_copies_modules_and_writes_the_wrapper(spec_dir: Path, tmp_path: Path) -> None:
    wd = tmp_path / "work"
    wrapper = prepare_workdir(make_task(spec_dir), wd)
    assert wrapper == wd / "MC_txconform_apalache.tla"
    assert sorted(p.name for p in wd.iterdir()) == ["Bank.tla", "Helpers.tla", "MC_txconform_apalache.tla"]
    assert (wd / "Bank.tla").read_text() == SPEC
    assert wrapper.read_text() == wrapper_text(make_task(spec_dir))
    # the spec folder itself as workdir: nothing to copy onto itself
    assert prepare_workdir(make_task(spec_dir), spec_dir) == spec_dir / "MC_txconform_apalache.tla"


# ---------------------------------------------------------------------------------------------
# Finding apalache-mc


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(0o755)
    return path


def test_find_apalache_prefers_apalache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home_exe = _executable(tmp_path / "home" / "bin" / "apalache-mc")
    _executable(tmp_path / "path" / "apalache-mc")
    monkeypatch.setenv("APALACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    assert find_apalache() == home_exe


def test_find_apalache_falls_back_to_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    on_path = _executable(tmp_path / "path" / "apalache-mc")
    not_executable = tmp_path / "home" / "bin" / "apalache-mc"
    not_executable.parent.mkdir(parents=True)
    not_executable.write_text("")
    monkeypatch.setenv("APALACHE_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PATH", str(tmp_path / "path"))
    assert find_apalache() == on_path
    monkeypatch.delenv("APALACHE_HOME")
    assert find_apalache() == on_path


def test_find_apalache_none_when_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert find_apalache() is None


def test_missing_apalache_raises_engine_unavailable(spec_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("APALACHE_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    for executable in (None, tmp_path / "no-such-apalache-mc"):
        with pytest.raises(EngineUnavailable) as info:
            run_apalache(make_task(spec_dir), tmp_path / "work", executable=executable)
        message = str(info.value)
        assert "\n" not in message
        assert "github.com/apalache-mc/apalache/releases" in message and "APALACHE_HOME" in message
        assert isinstance(info.value, TxconformError) and isinstance(info.value, RuntimeError)


# ---------------------------------------------------------------------------------------------
# Runs with a fake apalache-mc


def test_fake_apalache_violation_maps_invariant_and_reads_trace(spec_dir: Path, tmp_path: Path) -> None:
    fake = write_fake_apalache(tmp_path / "fake", VIOLATION_LOG, 12, trace_to="run:violation1.itf.json")
    task = make_task(spec_dir)
    wd = tmp_path / "work"
    progress: list[Progress] = []
    result = run_apalache(task, wd, on_progress=progress.append, executable=fake)

    assert result.engine == "apalache"
    assert result.outcome is Outcome.VIOLATED
    assert result.invariant == "NoOverdraft"  # "state invariant 1", one condition per invariant
    assert result.verdict == "violates NoOverdraft"
    assert result.message == "State 3: state invariant 1 violated."
    assert result.command == tuple(build_command(task, wd, fake))
    assert (tmp_path / "fake" / "argv.txt").read_text().splitlines() == list(result.command[1:])
    assert result.log_file == wd / "apalache.log"
    assert "State 3: state invariant 1 violated." in result.log_file.read_text()
    assert result.wall_time > 0
    assert result.bound is None

    cex = result.counterexample
    assert cex is not None
    assert cex.variables == ("balance",)
    assert [s.index for s in cex.steps] == [1, 2]
    assert cex.steps[0].state == {"N": 3, "balance": FnMap({"a": 0})}
    assert cex.steps[1].state["balance"] == FnMap({"a": -1})

    phases = [p.phase for p in progress]
    assert phases == [
        "step 0 of length 7",
        "state 0 of length 7",
        "step 1 of length 7",
        "state 1 of length 7",
        "step 2 of length 7",
        "step 3 of length 7",
        "state 3 of length 7",
    ]
    assert all(p.elapsed >= 0 for p in progress)


def test_fake_apalache_no_error_holds_with_bound(spec_dir: Path, tmp_path: Path) -> None:
    log = [
        log_line("State 7: Checking 2 state invariants"),
        log_line("The outcome is: NoError"),
        log_line("Checker reports no error up to computation length 7"),
        "EXITCODE: OK",
    ]
    fake = write_fake_apalache(tmp_path / "fake", log, 0)
    result = run_apalache(make_task(spec_dir), tmp_path / "work", executable=fake)
    assert result.outcome is Outcome.HOLDS
    assert result.verdict == "holds"
    assert result.bound == "length <= 7"
    assert result.counterexample is None and result.invariant is None
    assert result.message == ""


def test_fake_apalache_parse_error_exit_150(spec_dir: Path, tmp_path: Path) -> None:
    log = [
        log_line("  > Error parsing file Bank.qnt.json", "E"),
        log_line("  > unexpected token at line 3", "E"),
        "EXITCODE: ERROR (150)",
    ]
    fake = write_fake_apalache(tmp_path / "fake", log, 150)
    result = run_apalache(make_task(spec_dir), tmp_path / "work", executable=fake)
    assert result.outcome is Outcome.PARSE_ERROR
    assert result.message == "> Error parsing file Bank.qnt.json"
    assert result.counterexample is None


def test_fake_apalache_deadlock_reads_fallback_trace_from_out_dir(spec_dir: Path, tmp_path: Path) -> None:
    log = [
        log_line("Step 2: picking a transition out of 1 transition(s)"),
        log_line("Found a deadlock.", "E"),
        log_line("Check the trace in: violation1.tla, violation1.itf.json"),
        log_line("The outcome is: Deadlock"),
        "EXITCODE: ERROR (12)",
    ]
    # only violation.itf.json, in --out-dir's per-run folder, as a fallback
    fake = write_fake_apalache(
        tmp_path / "fake", log, 12, trace_to="out:MC_txconform_apalache.tla/2026-01-01T00-00-00_1/violation.itf.json"
    )
    result = run_apalache(make_task(spec_dir, tlc=TlcOptions()), tmp_path / "work", executable=fake)
    assert result.outcome is Outcome.DEADLOCK
    assert result.verdict == "deadlock"
    assert result.message == "Found a deadlock."
    assert result.counterexample is not None and len(result.counterexample.steps) == 2


def test_fake_apalache_old_trace_in_reused_workdir_is_ignored(spec_dir: Path, tmp_path: Path) -> None:
    wd = tmp_path / "work"
    stale = wd / "apalache-out" / "old-run" / "violation1.itf.json"
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps(CANNED_TRACE))
    old = time.time() - 3600
    os.utime(stale, (old, old))
    log = [log_line("Found a deadlock. No SMT model.", "E"), log_line("The outcome is: Deadlock")]
    fake = write_fake_apalache(tmp_path / "fake", log, 12)
    result = run_apalache(make_task(spec_dir), wd, executable=fake)
    assert result.outcome is Outcome.DEADLOCK
    assert result.counterexample is None
    assert "no counterexample" in result.message


def test_fake_apalache_unreadable_trace_keeps_the_verdict(spec_dir: Path, tmp_path: Path) -> None:
    fake = write_fake_apalache(
        tmp_path / "fake", VIOLATION_LOG, 12, body='mkdir -p "$RUN" && echo "not json" > "$RUN/violation1.itf.json"'
    )
    result = run_apalache(make_task(spec_dir), tmp_path / "work", executable=fake)
    assert result.outcome is Outcome.VIOLATED and result.invariant == "NoOverdraft"
    assert result.counterexample is None
    assert "cannot read the counterexample" in result.message and "violation1.itf.json" in result.message


def test_fake_apalache_timeout_kills_the_process_group(spec_dir: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "sleeper.pid"
    # a background child keeps stdout open, as the JVM under the real script would
    body = f'sleep 60 &\necho $! > "{pid_file}"\nwait'
    fake = write_fake_apalache(tmp_path / "fake", [log_line("Step 0: picking a transition")], 0, body=body)
    start = time.monotonic()
    result = run_apalache(make_task(spec_dir, timeout=1.0), tmp_path / "work", executable=fake)
    elapsed = time.monotonic() - start
    assert result.outcome is Outcome.TIMEOUT
    assert result.verdict == "timeout"
    assert "1 s" in result.message
    assert 1.0 <= elapsed < 10
    assert result.log_file is not None and "Step 0" in result.log_file.read_text()
    sleeper = int(pid_file.read_text())
    assert _gone(sleeper), "the fake's background sleep survived the timeout"


def test_fake_apalache_exits_but_leaves_a_child_holding_the_output(spec_dir: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "sleeper.pid"
    body = f'sleep 60 &\necho $! > "{pid_file}"'
    fake = write_fake_apalache(tmp_path / "fake", [log_line("The outcome is: NoError")], 0, body=body)
    start = time.monotonic()
    result = run_apalache(make_task(spec_dir), tmp_path / "work", executable=fake)
    assert time.monotonic() - start < 10
    assert result.outcome is Outcome.HOLDS
    assert _gone(int(pid_file.read_text())), "the fake's leftover child was not cleaned up"


def test_fake_apalache_with_relative_workdir(spec_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_fake_apalache(tmp_path / "fake", VIOLATION_LOG, 12, trace_to="run:violation1.itf.json")
    monkeypatch.chdir(tmp_path)
    result = run_apalache(make_task(spec_dir), Path("work"), executable=Path("fake/apalache-mc"))
    assert result.outcome is Outcome.VIOLATED and result.counterexample is not None
    assert result.command[0] == str(tmp_path / "fake" / "apalache-mc")
    assert result.command[-1] == str(tmp_path / "work" / "MC_txconform_apalache.tla")


def _gone(pid: int, wait: float = 5.0) -> bool:
    """True once ``pid`` no longer runs (a zombie awaiting its reaper counts as gone)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except FileNotFoundError:
            return True
        if "\nState:\tZ" in status:
            return True
        time.sleep(0.05)
    return False


# ---------------------------------------------------------------------------------------------
# Reading exit codes and logs (no process at all)


@pytest.mark.parametrize(
    ("code", "log", "outcome", "message"),
    [
        (0, [log_line("The outcome is: NoError")], Outcome.HOLDS, ""),
        (0, [log_line("The outcome is: ExecutionsTooShort")], Outcome.HOLDS, ""),
        (0, [log_line("The outcome is: SmtTimeout")], Outcome.TIMEOUT, "inconclusive"),
        (12, [log_line("Found a deadlock.", "E"), log_line("The outcome is: Deadlock")], Outcome.DEADLOCK, "Found a deadlock."),
        (12, [log_line("Unhandled exception", "E"), log_line("The outcome is: RuntimeError")], Outcome.ENGINE_CRASH, "Unhandled exception"),
        (
            75,
            [log_line("Bank.tla:15:14-15:27: unsupported expression: Seq(_) produces an infinite set", "E")],
            Outcome.EVAL_ERROR,
            "Bank.tla:15:14-15:27: unsupported expression: Seq(_) produces an infinite set",
        ),
        (
            120,
            [
                log_line(" > Running Snowcat .::."),
                log_line("[Bank.tla:21:9-21:26]: Arguments to = should have the same type", "E"),
                log_line("[Bank.tla:21:1-21:26]: Error when computing the type of Init", "E"),
            ],
            Outcome.TYPE_ERROR,
            "[Bank.tla:21:9-21:26]: Arguments to = should have the same type",
        ),
        (150, [log_line("  > Error parsing file x.qnt", "E")], Outcome.PARSE_ERROR, "> Error parsing file x.qnt"),
        (
            255,
            ["Parsing error: Semantic errors:", "line 14, col 12 to line 14, col 18 of module Bank",
             log_line("Unknown operator: `IndInv1'.", "E")],
            Outcome.SEMANTIC_ERROR,
            "Parsing error: Semantic errors: line 14, col 12 to line 14, col 18 of module Bank Unknown operator: `IndInv1'.",
        ),
        (255, [log_line("Parsing error: Encountered \"==\" at line 5", "E")], Outcome.PARSE_ERROR,
         "Parsing error: Encountered \"==\" at line 5"),
        (
            255,
            [log_line("Configuration error (see the manual): Operator Foo not found (used as an invariant)", "E")],
            Outcome.CONFIG_ERROR,
            "Configuration error (see the manual): Operator Foo not found (used as an invariant)",
        ),
        (255, [log_line("Assignment error: no assignment to x", "E")], Outcome.ENGINE_CRASH, "Assignment error: no assignment to x"),
        (1, ["Error: Could not find or load main class"], Outcome.ENGINE_CRASH, "Error: Could not find or load main class"),
        (137, [], Outcome.ENGINE_CRASH, "apalache-mc exited with code 137"),
    ],
)
def test_interpret_exit_codes_and_logs(spec_dir: Path, code: int, log: list[str], outcome: Outcome, message: str) -> None:
    verdict = interpret(make_task(spec_dir), code, "\n".join([*log, "EXITCODE: ..."]))
    assert verdict.outcome is outcome
    assert message in verdict.message


def test_invariant_index_counts_verification_conditions_not_operators(spec_dir: Path) -> None:
    # TypeOK splits into two conditions (VCNotInv$0, $1), NoOverdraft is one (VCNotInv$0);
    # Apalache orders them by name, stably: TypeOK$0, NoOverdraft$0, TypeOK$1.
    vcgen = [
        log_line("  > Producing verification conditions from the invariant TypeOK"),
        log_line("  > VCGen produced 2 verification condition(s)"),
        log_line("  > Producing verification conditions from the invariant NoOverdraft"),
        log_line("  > VCGen produced 1 verification condition(s)"),
    ]
    task = make_task(spec_dir)
    for k, expected in [(0, "TypeOK"), (1, "NoOverdraft"), (2, "TypeOK")]:
        log = "\n".join([*vcgen, log_line(f"State 2: state invariant {k} violated.")])
        assert interpret(task, 12, log).invariant == expected


def test_invariant_for_condition() -> None:
    # one invariant: whatever the condition number
    assert invariant_for_condition("state", 4, ("Inv",), []) == "Inv"
    assert invariant_for_condition("action", 0, ("Inv",), []) == "Inv"
    # no counts in the log: one condition per invariant
    assert invariant_for_condition("state", 1, ("A", "B"), []) == "B"
    assert invariant_for_condition("state", 2, ("A", "B"), []) is None
    # names sort as strings: $10 comes before $2
    conditions = [("A", 11), ("B", 1)]
    order = ["A0", "B0", "A1", "A10", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9"]
    for k, named in enumerate(order):
        assert invariant_for_condition("state", k, ("A", "B"), conditions) == named[0]
    assert invariant_for_condition("state", 12, ("A", "B"), conditions) is None
    # action and trace invariants live in other lists that the log does not describe
    assert invariant_for_condition("action", 0, ("A", "B"), conditions) is None


def test_violation_with_labels_and_unknown_invariant(spec_dir: Path) -> None:
    log = log_line("State 1: action invariant 0 [Inv2] violated.")
    verdict = interpret(make_task(spec_dir), 12, log)
    assert verdict.outcome is Outcome.VIOLATED
    assert verdict.invariant is None
    assert verdict.message.startswith("State 1: action invariant 0 [Inv2] violated.")
    assert "TypeOK, NoOverdraft" in verdict.message


def test_verification_conditions_from_log() -> None:
    lines = [
        "  > Producing verification conditions from the invariant A",
        "  > VCGen produced 3 verification condition(s)",
        "  > Producing verification conditions from the invariant TraceInv",
        "  > Producing verification conditions from the invariant B",
        "  > VCGen produced 1 verification condition(s)",
    ]
    assert verification_conditions(lines) == [("A", 3), ("TraceInv", 0), ("B", 1)]


def test_error_line_prefers_error_level_records() -> None:
    log = "\n".join(
        [
            log_line("Checker options: error budget 1"),  # "error" but only informational
            "Parsing error: Semantic errors:",
            log_line("Unknown operator: `X'.", "E"),
        ]
    )
    assert error_line(log) == "Parsing error: Semantic errors: Unknown operator: `X'."
    assert error_line("no level here\nsomething failed with an Error\n") == "something failed with an Error"
    assert error_line("") == ""
