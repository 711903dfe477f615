"""The one error of the YDB server's layers: a request refused, with YDB's status."""

from __future__ import annotations


class FrontError(Exception):
    """A request the front refuses: ``status`` is the YDB status name (StatusIds), the message one line."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
