"""scripts/setup.sh refuses to go on without Java 17+ and says how to get it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

SETUP = Path(__file__).resolve().parents[1] / "scripts" / "setup.sh"


def run_setup(tmp_path: Path, java_version: str | None) -> subprocess.CompletedProcess:
    """Run setup.sh with a PATH holding only bash tools, python3 and (maybe) a fake java."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sed", "head", "dirname", "env"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    (bin_dir / "python3").symlink_to(sys.executable)
    if java_version is not None:
        java = bin_dir / "java"
        java.write_text(f"#!/bin/sh\necho 'openjdk version \"{java_version}\" 2020-01-01' >&2\n")
        java.chmod(0o755)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path)}
    return subprocess.run(["bash", str(SETUP)], capture_output=True, text=True, env=env, timeout=60)


def test_no_java(tmp_path: Path) -> None:
    proc = run_setup(tmp_path, None)
    assert proc.returncode == 1
    assert "Java not found" in proc.stderr and "apt-get install openjdk-17-jre-headless" in proc.stderr


def test_java_too_old(tmp_path: Path) -> None:
    proc = run_setup(tmp_path, "11.0.2")
    assert proc.returncode == 1
    assert "is Java 11: TLC needs Java 17+" in proc.stderr
