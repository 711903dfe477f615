"""txconform's Java for TLC: the override that reads a trace window's start states from a file.

A window of a long trace starts from the states the window before ended in. Written into the
generated module as a TLA+ literal, they are parsed by SANY, which keeps a syntax node for every
part of them as long as TLC runs: at 500,000 events of a faulty Kafka run a start state is 21.8 MB
of TLA+, and SANY ran out of a 2 GB heap on it after a minute (docs/benchmarks.md). With
``TraceLoad`` (``java/txconform/TraceLoad.java``), TLC evaluates ``TraceLoaded("TraceStart.txt")``
by reading the file and building the values itself.

The classes are compiled with ``javac`` against the tla2tools.jar TLC runs, once, into
``$XDG_CACHE_HOME/txconform`` (``~/.cache/txconform``), under a name that changes with the sources
and the jar. Without ``javac`` (a Java runtime without its compiler), without the sources, or with
``TXCONFORM_TLC_LOADER=0``, windows start from literals as before: slower, and bounded by TLC's
heap, but the same verdicts.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

JAVA_DIR = Path(__file__).resolve().parent / "java"
SOURCES = (JAVA_DIR / "txconform" / "TraceLoad.java", JAVA_DIR / "tlc2" / "overrides" / "TLCOverrides.java")
LOADER_ENV = "TXCONFORM_TLC_LOADER"
MODULE = "TraceLoad"
# The module the generated one extends: TLC replaces TraceLoaded with TraceLoad.load; without the
# class on TLC's classpath the run stops with this message instead of going on without the states.
MODULE_TEXT = f"""---- MODULE {MODULE} ----
LOCAL INSTANCE TLC
LOCAL INSTANCE Sequences
TraceLoaded(path) == Assert(FALSE, "txconform: TraceLoaded needs txconform's Java class on TLC's classpath (tlc_java.py)")
TraceConcat(s, t) == s \\o t
TraceFP(v) == v
TraceSave(path, v) == TRUE
TraceKeep(v) == v
TraceKept(key) == key
TraceSame(a, b) == a = b
====
"""

_lock = threading.Lock()
_built: dict[tuple[str, str], Path | None] = {}


def _javac() -> Path | None:
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "javac", os.X_OK):
        return Path(home) / "bin" / "javac"
    found = shutil.which("javac")
    return Path(found) if found else None


def _cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "txconform"


def loader_classes(jar: Path) -> Path | None:
    """The folder of the compiled classes to put on TLC's classpath beside ``jar``, or None when
    they cannot be had (no javac, a failed compile, or ``TXCONFORM_TLC_LOADER=0``)."""
    if os.environ.get(LOADER_ENV, "1") == "0":
        return None
    javac = _javac()
    if javac is None or not all(src.is_file() for src in SOURCES):
        return None
    key = hashlib.sha256()
    for src in SOURCES:
        key.update(src.read_bytes())
    stat = jar.stat()
    key.update(f"{jar.resolve()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    digest = key.hexdigest()[:20]
    with _lock:
        if (str(javac), digest) in _built:
            return _built[(str(javac), digest)]
        target = _cache_root() / f"tlc-java-{digest}"
        classes = target if (target / "done").is_file() else _compile(javac, jar, target)
        _built[(str(javac), digest)] = classes
        return classes


def _compile(javac: Path, jar: Path, target: Path) -> Path | None:
    """Compile into a fresh folder and move it into place (another process may do the same at once)."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix="tlc-java-", dir=target.parent))
        out = subprocess.run([str(javac), "-nowarn", "-encoding", "UTF-8", "-cp", str(jar), "-d", str(tmp), *map(str, SOURCES)],
                             capture_output=True, text=True, timeout=300)
        if out.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            return None
        (tmp / "done").write_text("compiled\n", encoding="utf-8")
        try:
            tmp.rename(target)
        except OSError:  # compiled meanwhile by another process: use that one
            shutil.rmtree(tmp, ignore_errors=True)
        return target if (target / "done").is_file() else None
    except (OSError, subprocess.SubprocessError):
        return None
