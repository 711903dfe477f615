"""Reading what TLC says: its ``-tool`` messages, and the CheckResult they and its exit code give.

TLC is started with ``-tool``, which frames every message as ``@!@!@STARTMSG code:severity @!@!@``
... ``@!@!@ENDMSG code @!@!@``; the message codes (tlc2.output.EC) are far more stable across
versions than the English text. The exit code gives the outcome; the messages give the violated
invariant, the error trace, the statistics and the one-line explanation of a failure.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

import attrs

from trace_check.engines.process import one_line
from trace_check.models.result import (
    CheckResult,
    CheckTask,
    Counterexample,
    Outcome,
    Progress,
    ProgressCallback,
    Step,
)
from trace_check.values.tlc_print import TlcValueError, parse_state

# tlc2.output.EC codes this module reads.
MSG_TLC_MODE = 2187
MSG_INIT_DONE = 2190
MSG_INVARIANT_VIOLATED_INITIAL = 2107
MSG_INVARIANT_VIOLATED = 2110
MSG_PROPERTY_VIOLATED = 2116
MSG_DEADLOCK = 2114
MSG_BEHAVIOR_FOLLOWS = 2121
MSG_STATE = 2217
MSG_STUTTERING = 2218  # a liveness counterexample that ends by stuttering forever
MSG_BACK_TO_STATE = 2122  # "N: Back to state: <Action ...>": a liveness counterexample loops back to state N
MSG_PROGRESS = 2200
MSG_STATS = 2199
MSG_DEPTH = 2194
MSG_FINGERPRINT_FAILED = 2147
MSG_PARSE_FAILED = 3002
MSG_UNEXPECTED = 1000

# TLC's exit codes (tlc2.output.EC.ExitStatus).
EXIT_OUTCOMES = {
    0: Outcome.HOLDS,
    10: Outcome.EVAL_ERROR,  # an ASSUME is false
    11: Outcome.DEADLOCK,
    12: Outcome.VIOLATED,  # safety
    13: Outcome.VIOLATED,  # liveness
    75: Outcome.EVAL_ERROR,
    76: Outcome.EVAL_ERROR,
    77: Outcome.EVAL_ERROR,
    150: Outcome.PARSE_ERROR,  # or a semantic error: told apart by SANY's text
    151: Outcome.CONFIG_ERROR,
}

_FRAME_START = re.compile(r"^@!@!@STARTMSG (\d+):(\d+) @!@!@$")
_FRAME_END = re.compile(r"^@!@!@ENDMSG (\d+) @!@!@$")
_STATE_HEADER = re.compile(r"^(\d+): (?:<(.*?)>|(Stuttering))\s*$")
_BACK_TO = re.compile(r"^(\d+): Back to state\b")
_ACTION_HEADER = re.compile(r"^(\S+) (line \d+, col \d+ to line \d+, col \d+ of module \S+)$")
_COUNTS = re.compile(r"([\d,]+) states generated.*?([\d,]+) distinct states found.*?([\d,]+) states left on queue")
_INVARIANT = re.compile(r"(?:Invariant|Temporal properties?|Property) (\S+?) (?:is|was) violated")
# the lines TLC prints before the message of an unexpected exception
_PREAMBLE = re.compile(r"^(TLC threw an unexpected exception|This was probably caused|See the User Output)")
# TLC writes places two ways: "line 3, col 9 to line 3, col 20 of module M" and "Line 3, column 9 to ... in M".
_LOCATION = re.compile(r"[Ll]ine (\d+), col(?:umn)? (\d+)(?: to line \d+, col(?:umn)? \d+)?(?: (?:of module|in) (\w+))?")


@attrs.frozen
class Message:
    code: int
    severity: int
    text: str


class OutputReader:
    """Splits TLC's -tool output into framed messages and loose lines, reporting progress as it goes."""

    def __init__(self, start: float, on_progress: ProgressCallback | None) -> None:
        self.start = start
        self.on_progress = on_progress
        self.messages: list[Message] = []
        self.loose: list[str] = []

    def consume(self, stream: IO[str], log: IO[str]) -> None:
        # Messages nest (an error message can wrap the message that explains it), so keep a stack;
        # a closed message's text is also part of the message around it.
        open_msgs: list[tuple[int, int, list[str]]] = []
        for line in stream:
            log.write(line)
            line = line.rstrip("\n")
            start = _FRAME_START.match(line)
            if start:
                open_msgs.append((int(start.group(1)), int(start.group(2)), []))
            elif _FRAME_END.match(line) and open_msgs:
                self._close(open_msgs)
            elif open_msgs:
                open_msgs[-1][2].append(line)
            else:
                self.loose.append(line)
        while open_msgs:
            self._close(open_msgs)

    def _close(self, open_msgs: list[tuple[int, int, list[str]]]) -> None:
        code, severity, body = open_msgs.pop()
        if open_msgs:
            open_msgs[-1][2].extend(body)
        self._add(Message(code, severity, "\n".join(body)))

    def _add(self, msg: Message) -> None:
        self.messages.append(msg)
        if self.on_progress is None:
            return
        elapsed = time.monotonic() - self.start
        if msg.code == MSG_INIT_DONE:
            self.on_progress(Progress(elapsed=elapsed, phase="initial states computed"))
        elif msg.code == MSG_PROGRESS:
            counts = _parse_counts(msg.text)
            if counts:
                self.on_progress(
                    Progress(
                        elapsed=elapsed,
                        states_generated=counts[0],
                        distinct_states=counts[1],
                        queue=counts[2],
                    )
                )

    def first(self, *codes: int) -> Message | None:
        return next((m for m in self.messages if m.code in codes), None)

    def all(self, code: int) -> Iterator[Message]:
        return (m for m in self.messages if m.code == code)


def _parse_counts(text: str) -> tuple[int, int, int] | None:
    match = _COUNTS.search(text)
    if not match:
        return None
    generated, distinct, queue = (int(g.replace(",", "")) for g in match.groups())
    return generated, distinct, queue


def interpret(
    task: CheckTask,
    reader: OutputReader,
    returncode: int,
    timed_out: bool,
    wall: float,
    cmd: tuple[str, ...],
    log_file: Path,
) -> CheckResult:
    stats = reader.first(MSG_STATS)
    progress = list(reader.all(MSG_PROGRESS))
    counts = _parse_counts(stats.text) if stats else (_parse_counts(progress[-1].text) if progress else None)
    depth_msg = reader.first(MSG_DEPTH)
    depth_match = re.search(r"(\d+)", depth_msg.text) if depth_msg else None
    common: dict[str, Any] = dict(
        engine="tlc",
        wall_time=wall,
        states_generated=counts[0] if counts else None,
        distinct_states=counts[1] if counts else None,
        depth=int(depth_match.group(1)) if depth_match else None,
        command=cmd,
        log_file=log_file,
    )
    if timed_out:
        return CheckResult(outcome=Outcome.TIMEOUT, message=f"no verdict within the {task.timeout:g} s budget", **common)

    outcome = EXIT_OUTCOMES.get(returncode, Outcome.ENGINE_CRASH)
    invariant = None
    message = ""
    counterexample = None
    if outcome is Outcome.VIOLATED:
        invariant, message = _violated_property(reader)
        if invariant is None and len(task.properties) == 1:
            # TLC names a violated invariant, but of temporal properties says only that one was
            # violated: with one property checked, it is that one.
            invariant = task.properties[0]
    elif outcome is Outcome.DEADLOCK:
        message = "a reachable state has no successor (and is not a declared terminal state)"
    elif outcome is Outcome.PARSE_ERROR:
        outcome, message = _sany_failure(task, reader.loose)
    elif outcome is Outcome.CONFIG_ERROR:
        message = _error_text(reader) or "TLC rejected the model configuration"
    elif outcome is Outcome.EVAL_ERROR:
        message = _eval_error(task, reader)
    elif outcome is Outcome.ENGINE_CRASH:
        message = f"TLC exited with status {returncode}: " + (
            _error_text(reader) or _last_loose(reader) or "no explanation printed"
        )
    if outcome in (Outcome.VIOLATED, Outcome.DEADLOCK, Outcome.EVAL_ERROR):
        try:
            counterexample = _error_trace(reader)
        except TlcValueError as exc:
            message = f"{message} (the error trace could not be read: {exc}; see {log_file})"
    return task.named(CheckResult(outcome=outcome, invariant=invariant, message=message, counterexample=counterexample, **common))


def _violated_property(reader: OutputReader) -> tuple[str | None, str]:
    msg = reader.first(MSG_INVARIANT_VIOLATED, MSG_INVARIANT_VIOLATED_INITIAL, MSG_PROPERTY_VIOLATED)
    text = msg.text if msg else _error_text(reader)
    match = _INVARIANT.search(text or "")
    name = match.group(1) if match else None
    return name, one_line(text or "a property is violated")


def _error_trace(reader: OutputReader) -> Counterexample | None:
    steps: list[Step] = []
    loop = None
    for msg in (m for m in reader.messages if m.code in (MSG_STATE, MSG_STUTTERING, MSG_BACK_TO_STATE)):
        header, _, body = msg.text.partition("\n")
        back = _BACK_TO.match(header.strip())
        if back:
            loop = int(back.group(1))
            continue
        if msg.code == MSG_STUTTERING and steps:
            loop = steps[-1].index  # it stays in the last state for ever
            continue
        match = _STATE_HEADER.match(header.strip())
        if not match:
            continue
        index = int(match.group(1))
        action, location = None, None
        if match.group(2) and match.group(2) != "Initial predicate":
            named = _ACTION_HEADER.match(match.group(2))
            action, location = (named.group(1), named.group(2)) if named else (match.group(2), None)
        elif match.group(3):
            action = "Stuttering"
        # TLC prints variables in no useful order; sort them so every trace reads the same way.
        state = dict(sorted(parse_state(body).items())) if body.strip() else (steps[-1].state if steps else {})
        steps.append(Step(index=index, action=action, state=state, location=location))
    if not steps:
        # An invariant violated by an initial state: TLC prints that state inside its message,
        # after the line naming the invariant, and no numbered state.
        initial = reader.first(MSG_INVARIANT_VIOLATED_INITIAL)
        body = initial.text.partition("\n")[2] if initial else ""
        if not body.strip():
            return None
        steps.append(Step(index=1, action=None, state=dict(sorted(parse_state(body).items())), location=None))
    return Counterexample(steps=tuple(steps), variables=tuple(steps[0].state), loop=loop)


def _sany_failure(task: CheckTask, loose: list[str]) -> tuple[Outcome, str]:
    """Parse and semantic errors come from SANY as unframed text; keep the first error and its place."""
    text = [line.strip() for line in loose if line.strip()]
    if "Semantic errors:" in text:
        body = text[text.index("Semantic errors:") + 1 :]
        body = [line for line in body if not line.startswith("***")]
        where = body[0] if body else ""
        what = body[1] if len(body) > 1 else ""
        return Outcome.SEMANTIC_ERROR, _with_file(task, where, what)
    encountered = next((line for line in text if line.startswith("Encountered")), None)
    expecting = next((line for line in text if line.startswith("Was expecting")), None)
    if encountered:
        what = encountered + (f" ({expecting[0].lower()}{expecting[1:]})" if expecting else "")
        return Outcome.PARSE_ERROR, _with_file(task, encountered, what)
    lexical = next((line for line in text if "Lexical error" in line or "Cannot find source file" in line), None)
    if lexical:
        return Outcome.PARSE_ERROR, _with_file(task, lexical, lexical)
    could_not = next((line for line in text if line.startswith("Could not parse") or "error" in line.lower()), None)
    return Outcome.PARSE_ERROR, could_not or "SANY could not parse the spec"


def _with_file(task: CheckTask, where: str, what: str) -> str:
    """Prefix an error with the real spec file (not our working copy) and its line and column."""
    match = _LOCATION.search(where)
    if not match:
        return one_line(what or where)
    module = match.group(3) or task.module
    path = task.spec_file.parent / f"{module}.tla"
    what = _LOCATION.sub("", what).strip(" ,:") if what is not where else what
    return one_line(f"{path}:{match.group(1)}:{match.group(2)}: {what}")


def _eval_error(task: CheckTask, reader: OutputReader) -> str:
    """The reason TLC gives, prefixed with the place in the spec it names (or the innermost place it was evaluating)."""
    reason = _error_text(reader) or "TLC could not evaluate the spec"
    reason = re.sub(r"^The exception was a \S*?(Exception|Error)\s*:?\s*", "", reason)
    reason = reason.split(" While working on", 1)[0].strip()
    place = _LOCATION.search(reason)
    if place is None:
        for msg in reader.messages:
            if msg.severity == 1 or msg.code == MSG_FINGERPRINT_FAILED:
                place = _LOCATION.search(msg.text) or place
                if place and msg.code == MSG_FINGERPRINT_FAILED:
                    break
    return _with_file(task, place.group(0), reason) if place else reason


def _error_text(reader: OutputReader) -> str | None:
    """The first error message, on one line, without TLC's generic preamble."""
    skip = {MSG_BEHAVIOR_FOLLOWS, MSG_STATE}
    msg = next((m for m in reader.messages if m.severity == 1 and m.code not in skip and m.text.strip()), None)
    if msg is None:
        return None
    lines = [line for line in msg.text.splitlines() if line.strip()]
    if msg.code == MSG_UNEXPECTED:  # "TLC threw an unexpected exception. This was probably caused by..."
        lines = [line for line in lines if not _PREAMBLE.match(line)] or lines
    return one_line("\n".join(lines))



def _last_loose(reader: OutputReader) -> str:
    lines = [line for line in reader.loose if line.strip()]
    return one_line(lines[-1]) if lines else ""


def parse_output(task: CheckTask, lines: Iterable[str], returncode: int) -> CheckResult:
    """Interpret captured TLC output (for tests and for re-reading a saved log)."""
    import io

    reader = OutputReader(time.monotonic(), None)
    reader.consume(io.StringIO("".join(line if line.endswith("\n") else line + "\n" for line in lines)), io.StringIO())
    return interpret(task, reader, returncode, False, 0.0, (), Path("-"))
