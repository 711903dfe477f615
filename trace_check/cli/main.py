"""The ``txconform`` command line: parse the arguments, run the subcommand, and turn a
``TxconformError`` into one line on stderr and exit status 2."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.text import Text

from trace_check import __doc__ as package_doc
from trace_check.cli import model_check, probe, replay, serve, traces
from trace_check.errors import TxconformError

EXIT_USAGE = 2  # bad input: registry, arguments, missing engine, unreadable trace


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
    parser = argparse.ArgumentParser(prog="txconform", description=package_doc)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    model_check.add_parsers(sub)
    traces.add_parsers(sub)
    replay.add_parsers(sub)
    probe.add_parsers(sub)
    serve.add_parsers(sub)
    return parser


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
