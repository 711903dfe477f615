"""What the tests of the Java client against serve share: why it cannot run here, and a recorder
that keeps the lines a JavaProducer emits."""

from __future__ import annotations

import shutil
from typing import Any


def missing_java() -> str | None:
    for tool in ("java", "javac", "mvn"):
        if shutil.which(tool) is None:
            return f"{tool} not found: the Java client needs a JDK 17+ and Maven"
    return None


class Lines:
    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []

    def __call__(self, kind: str, **fields: Any) -> None:
        self.lines.append({"type": kind, **fields})

    def ends(self, process: str) -> list[str]:
        return [ln["outcome"] for ln in self.lines if ln["type"] == "txn" and ln["process"] == process]
