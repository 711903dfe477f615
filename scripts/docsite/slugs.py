"""Heading anchors as GitHub makes them, so that a link with an anchor works on GitHub and on the
site alike (MkDocs' own slugs collapse repeated hyphens; GitHub keeps them)."""

from __future__ import annotations

import re


def github_slug(heading: str, separator: str = "-") -> str:
    """GitHub's anchor for a heading: lower case, punctuation but ``-`` and ``_`` dropped, spaces to ``-``.

    Takes the heading as Markdown (code spans and links) or as text (what MkDocs' toc passes)."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", separator)
