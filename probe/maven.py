"""Jars from Maven Central, resolved once into the user's cache: the runtime classpath of a POM that
ships with the package (``probe/java/*.pom.xml``) at one version.

``classpath(pom, version, name)`` runs ``mvn -B -q -f POM dependency:copy-dependencies
-DincludeScope=runtime -D<property>=VERSION -DoutputDirectory=TMP`` and moves TMP into
``$XDG_CACHE_HOME/txconform/<name>-<version>-<digest of the POM>/lib`` (``~/.cache/txconform``;
``TXCONFORM_CACHE`` overrides the root). Maven keeps what it downloads in its own repository
(``~/.m2``), so a second version costs little. A folder that is there and marked complete is used
as it is; two processes resolving at once each resolve into their own temporary folder, and the
second one's rename loses (it uses the first one's). Nothing fetched is ever written into the
project.

A missing ``java`` or ``mvn``, or a version Maven cannot resolve, raises ``MavenError``: one line
naming the cause and the fix.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from trace_check.errors import TxconformError

RESOLVE_SECONDS = 900.0  # a first resolution of a broker's classpath took 52 s here (docs/probe.md)
VERSION = re.compile(r"\d+\.\d+\.\d+")


class MavenError(TxconformError):
    """Java or Maven missing, or a classpath Maven could not resolve."""


def cache_root() -> Path:
    root = os.environ.get("TXCONFORM_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "txconform"


def java() -> Path:
    """The ``java`` to run: ``$JAVA_HOME/bin/java``, else the one on PATH; a one-line error without."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(Path(home) / "bin" / "java", os.X_OK):
        return Path(home) / "bin" / "java"
    found = shutil.which("java")
    if not found:
        raise MavenError("java not found: the real Kafka target needs Java 17+ (Debian: apt-get install openjdk-17-jdk-headless) or JAVA_HOME set")
    return Path(found)


def mvn() -> Path:
    found = shutil.which("mvn")
    if not found:
        raise MavenError("mvn not found: the real Kafka target resolves its jars with Maven (Debian: apt-get install maven)")
    return Path(found)


def classpath(pom: Path, version: str, name: str, prop: str, seconds: float = RESOLVE_SECONDS) -> Path:
    """The folder of ``pom``'s runtime jars with ``prop`` set to ``version``, resolved if needed."""
    if not VERSION.fullmatch(version):
        raise MavenError(f"{name} version {version!r}: give a version as MAJOR.MINOR.PATCH, e.g. 4.4.0")
    digest = hashlib.sha256(pom.read_bytes()).hexdigest()[:12]
    home = cache_root() / f"{name}-{version}-{digest}"
    lib = home / "lib"
    if (home / "complete").is_file():
        return lib
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "lock", "w") as lock:  # one resolution at a time per folder (pytest-xdist workers)
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (home / "complete").is_file():
            _resolve(pom, version, name, prop, home, seconds)
    return lib


def _resolve(pom: Path, version: str, name: str, prop: str, home: Path, seconds: float) -> None:
    java()  # Maven runs on it: say so first
    tmp = Path(tempfile.mkdtemp(prefix="lib-", dir=home))
    log = home / "mvn.log"
    cmd = [str(mvn()), "-B", "-q", "-f", str(pom), "dependency:copy-dependencies", "-DincludeScope=runtime", f"-D{prop}={version}", f"-DoutputDirectory={tmp}"]
    try:
        with open(log, "w") as out:
            code = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, timeout=seconds).returncode
    except subprocess.TimeoutExpired:
        shutil.rmtree(tmp, ignore_errors=True)
        raise MavenError(f"mvn did not resolve {name} {version} within {seconds:.0f} s; its output: {log}") from None
    if code != 0 or not any(tmp.glob("*.jar")):
        shutil.rmtree(tmp, ignore_errors=True)
        raise MavenError(f"{name} {version}: {_why(log)}; its whole output: {log}")
    lib = home / "lib"
    shutil.rmtree(lib, ignore_errors=True)
    tmp.rename(lib)
    (home / "complete").write_text(" ".join(cmd) + "\n")


def _why(log: Path) -> str:
    """The part of Maven's output that says what failed, shortened."""
    text = re.sub(r"\x1b\[[0-9;]*m", "", log.read_text(errors="replace") if log.is_file() else "")
    missing = re.search(r"([\w.-]+:[\w.-]+:jar:[\w.-]+) was not found|Could not find artifact ([\w.-]+:[\w.-]+:jar:[\w.-]+)", text)
    if missing:
        artifact = missing.group(1) or missing.group(2)
        return f"Maven could not resolve {artifact}: is that version served by your Maven repository (Maven Central serves Kafka 4.0.0 to 4.4.0)?"
    offline = re.search(r"(Could not transfer|UnknownHost|Connection refused|Network is unreachable)[^\n]*", text)
    if offline:
        return f"Maven could not reach its repository ({offline.group(0)[:160]}): check the network or ~/.m2/settings.xml"
    errors = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("[ERROR]") and len(ln.strip()) > 8]
    return errors[0][:240] if errors else "mvn failed"


def jars(lib: Path) -> str:
    """A Java classpath of every jar in ``lib``."""
    return f"{lib}/*"


def version_of(lib: Path, artifact: str) -> str | None:
    """The version of ``artifact`` among the resolved jars, if there."""
    for jar in lib.glob(f"{artifact}-*.jar"):
        m = re.fullmatch(re.escape(artifact) + r"-(\d+\.\d+\.\d+)\.jar", jar.name)
        if m:
            return m.group(1)
    return None
