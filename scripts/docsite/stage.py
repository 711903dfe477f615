"""What the site is made of: README.md as its home page, docs/ whole, specs/README.md, and every
file outside docs/ that a page links (a spec, a registry, a simulator's source), copied into one
folder laid out as the repository is, so that every relative link stays as written."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The pages outside docs/ that the site shows as pages.
PAGES_OUTSIDE_DOCS = ("README.md", "specs/README.md")
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


class StageError(Exception):
    """A page links something the site cannot hold (a folder, or a path outside the repository)."""


def pages(root: Path = ROOT) -> list[Path]:
    """The Markdown pages of the site, as paths relative to the repository."""
    return [Path(p) for p in PAGES_OUTSIDE_DOCS] + sorted(p.relative_to(root) for p in (root / "docs").rglob("*.md"))


def linked_files(page: Path, root: Path = ROOT) -> list[Path]:
    """The files outside docs/ that ``page`` (relative to ``root``) links, relative to ``root``."""
    text = FENCE.sub("", (root / page).read_text(encoding="utf-8"))
    found = []
    for target in LINK.findall(text):
        path = target.partition("#")[0]
        if not path or re.match(r"[a-z][a-z0-9+.-]*:", path):  # an anchor of the page, https:, mailto:
            continue
        file = (root / page).parent.joinpath(path).resolve()
        if not file.is_relative_to(root):
            raise StageError(f"{page} links {target}, outside the repository: link a file inside it")
        if file.is_dir():
            raise StageError(f"{page} links the folder {target}: the site cannot list a folder, link a file (specs/README.md has a section per spec)")
        rel = file.relative_to(root)
        if rel.parts[0] != "docs" and file.exists():
            found.append(rel)
    return found


def stage(dest: Path, root: Path = ROOT) -> list[Path]:
    """Copy the site's sources into ``dest`` (which must not exist); returns the pages, relative."""
    shutil.copytree(root / "docs", dest / "docs")
    site_pages = pages(root)
    wanted = {Path(p) for p in PAGES_OUTSIDE_DOCS}
    for page in site_pages:
        wanted.update(linked_files(page, root))
    for rel in sorted(wanted):
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, dest / rel)
    return site_pages
