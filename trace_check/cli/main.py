"""The ``txconform`` command line: parse the arguments, run the subcommand, and turn a
``TxconformError`` into one line on stderr and exit status 2.

The subcommands are found by name, as ``trace_check.traces.plugins`` finds the plug-ins: ``COMMANDS``
maps each group of subcommands to the ``module:function`` that adds its parsers, imported when the
parser is built. ``spark_replay`` and ``probe`` own their commands (``spark_replay/command.py``,
``probe/command.py``), which import ``trace_check``; ``trace_check`` imports neither of them.
"""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from trace_check.errors import TxconformError

DESCRIPTION = (
    "Check transaction protocols against their TLA+ specs: Kafka transactions (TV1 and TV2), YDB Topics "
    "transactions and the C*One coordinator. Model-check the specs' models, validate a trace of your system, "
    "replay Kafka logs on Spark, probe a real broker with real clients, or serve the reference broker to them."
)
EPILOG = "Each command has its own --help. The commands with real output: docs/guide.md; where to start: README.md."

EXIT_USAGE = 2  # bad input: registry, arguments, missing engine, unreadable trace

# Each group of subcommands, in the order ``txconform --help`` lists them: the function of a module
# that adds its parsers to the subparsers (``add_parsers(sub)``), named, not imported here.
COMMANDS: dict[str, str] = {
    "model-check": "trace_check.cli.model_check:add_parsers",
    "traces": "trace_check.cli.traces:add_parsers",  # simulate, check, mutate
    "replay": "spark_replay.command:add_parsers",  # replay, generate-logs
    "probe": "probe.command:add_parsers",
    "serve": "trace_check.cli.serve:add_parsers",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = _console(stderr=False), _console(stderr=True)
    signal.signal(signal.SIGTERM, _terminate)  # so that a killed run stops its engine too
    try:
        code: int = args.func(args, out, err)
        return code
    except TxconformError as exc:
        err.print(Text(f"txconform: error: {exc}"))
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.print("txconform: interrupted")
        return 130


def _terminate(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _console(stderr: bool) -> Console:
    console = Console(stderr=stderr, highlight=False, soft_wrap=True)
    if not console.is_terminal:  # CI logs and pipes: room for the whole table instead of rich's 80 columns
        console = Console(stderr=stderr, highlight=False, soft_wrap=True, width=160)
    return console


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="txconform", description=DESCRIPTION, epilog=EPILOG)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for where in COMMANDS.values():
        add_parsers(where)(sub)
    return parser


def add_parsers(where: str) -> Callable[[Any], None]:
    """The function ``where`` (``module:function``) names, its module imported by name."""
    module_name, _, function = where.partition(":")
    adder: Callable[[Any], None] = getattr(importlib.import_module(module_name), function)
    return adder


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
