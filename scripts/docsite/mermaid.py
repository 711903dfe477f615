"""Mermaid for the site, from its npm package: the site bundles ``mermaid.min.js`` so that its
diagrams render with no network (the Material theme would otherwise load it from a CDN).

``npm pack`` fetches the pinned version's tarball once into ~/.cache/txconform (npm checks it
against the registry's integrity hash; so do we, against the one pinned here)."""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

# The major version the Material theme drives (it would load mermaid@11 from unpkg), and the
# registry's sha512 of that tarball (`npm view mermaid@11.17.2 dist.integrity`).
VERSION = "11.17.2"
INTEGRITY = "sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg=="
MEMBER = "package/dist/mermaid.min.js"
NPM_TIMEOUT = 300


class MermaidError(Exception):
    """Mermaid could not be had: the message says how to get it."""


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "txconform" / f"mermaid-{VERSION}"


def integrity(path: Path) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(path.read_bytes()).digest()).decode()


def mermaid_js() -> Path:
    """The path of mermaid.min.js, fetched with npm on first use."""
    target = cache_dir() / "mermaid.min.js"
    if target.exists():
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise MermaidError(f"npm not found: the site bundles Mermaid from the npm package mermaid@{VERSION}; install Node.js (Debian: apt-get install npm)")
    with tempfile.TemporaryDirectory(prefix="txconform-mermaid-") as tmp:
        try:
            proc = subprocess.run([npm, "pack", f"mermaid@{VERSION}", "--silent", "--pack-destination", tmp],
                                  capture_output=True, text=True, timeout=NPM_TIMEOUT, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise MermaidError(f"npm pack mermaid@{VERSION} took over {NPM_TIMEOUT} s: is the npm registry reachable? try again") from None
        tarball = Path(tmp) / f"mermaid-{VERSION}.tgz"
        if proc.returncode != 0 or not tarball.exists():
            last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
            raise MermaidError(f"npm pack mermaid@{VERSION} failed ({last}): check that npm reaches its registry")
        if integrity(tarball) != INTEGRITY:
            raise MermaidError(f"mermaid-{VERSION}.tgz does not match the sha512 pinned in scripts/docsite/mermaid.py: "
                               "do not use it; update VERSION and INTEGRITY together")
        with tarfile.open(tarball) as tar:
            member = tar.extractfile(MEMBER)
            if member is None:
                raise MermaidError(f"mermaid-{VERSION}.tgz has no {MEMBER}: pin a version that ships it")
            data = member.read()
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial")
    partial.write_bytes(data)
    partial.replace(target)
    return target
