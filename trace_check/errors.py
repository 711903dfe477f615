"""Errors that txconform reports to the user as one line, without a traceback."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class TxconformError(Exception):
    """A one-line error for the user: the message says what went wrong and, when it can, what to do."""


class EngineUnavailable(TxconformError, RuntimeError):
    """A model checker this run needs is not installed."""


class ItfError(TxconformError, ValueError):
    """A file is not a readable ITF trace, or a trace cannot be written as ITF."""


class ResumeError(TxconformError):
    """A model-checking run cannot be resumed from a checkpoint."""


def suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, sorted(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""
