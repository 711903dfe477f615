"""Build the site: stage the sources, add Mermaid, and run MkDocs in strict mode with mkdocs.yml,
GitHub's heading anchors, and the staging folder and site folder given."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from docsite.mermaid import mermaid_js
from docsite.slugs import github_slug
from docsite.stage import ROOT, stage

CONFIG = ROOT / "mkdocs.yml"
MERMAID_URL = "assets/mermaid.min.js"


class BuildError(Exception):
    """MkDocs refused the site: the message lists its warnings (broken links, missing anchors...)."""


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def build(site: Path, staging: Path, root: Path = ROOT) -> list[Path]:
    """Build the site into ``site`` from the sources of the repository at ``root``, staged in
    ``staging`` (both folders made anew); returns the pages, relative to the repository
    (``docs/kafka.md`` is ``docs/kafka.html`` on the site)."""
    from mkdocs.commands.build import build as mkdocs_build
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, MkDocsException

    for folder in (staging, site):
        if folder.exists():
            shutil.rmtree(folder)
    pages = stage(staging, root)
    (staging / MERMAID_URL).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(mermaid_js(), staging / MERMAID_URL)
    warnings = _Warnings()
    log = logging.getLogger("mkdocs")
    log.addHandler(warnings)
    try:
        config = load_config(str(CONFIG), docs_dir=str(staging), site_dir=str(site), strict=True)
        config.mdx_configs.setdefault("toc", {})["slugify"] = github_slug
        mkdocs_build(config)
    except (Abort, MkDocsException) as e:
        found = "; ".join(" ".join(m.split()) for m in warnings.messages) or str(e)
        raise BuildError(f"mkdocs build --strict failed: {found}") from None
    finally:
        log.removeHandler(warnings)
    return pages


def site_path(page: Path) -> str:
    """Where a page lands on the site (use_directory_urls is off): README.md is index.html."""
    if page.name == "README.md":
        return (page.parent / "index.html").as_posix()
    return page.with_suffix(".html").as_posix()
