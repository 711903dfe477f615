"""Errors that txconform reports to the user as one line, without a traceback."""

from __future__ import annotations


class TxconformError(Exception):
    """A one-line error for the user: the message says what went wrong and, when it can, what to do."""


class EngineUnavailable(TxconformError, RuntimeError):
    """A model checker this run needs is not installed."""


class ItfError(TxconformError, ValueError):
    """A file is not a readable ITF trace, or a trace cannot be written as ITF."""


class ResumeError(TxconformError):
    """A model-checking run cannot be resumed from a checkpoint."""
