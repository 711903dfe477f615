"""The pages themselves: README.md stays a page or two that answers a newcomer's three questions,
and every relative link of README.md, docs/ and specs/README.md leads to a file that exists (with
an anchor, to a heading of that file). The tool output in them is tests/test_docs.py's."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from docsite.slugs import github_slug as slug

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "specs" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.DOTALL | re.MULTILINE)


def anchors(page: Path) -> set[str]:
    text = FENCE.sub("", page.read_text())
    return {slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.MULTILINE)}


def test_the_readme_is_a_page_or_two_and_answers_the_three_questions() -> None:
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    headings = re.findall(r"^## (.+)$", readme, re.MULTILINE)
    assert {"Check my trace", "Check my broker", "Check my Kafka log"} <= set(headings)
    assert "make test" in readme and re.search(r"`make` took \d+ min", readme), "say how long the two commands take"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_leads_somewhere(page: Path) -> None:
    text = FENCE.sub("", page.read_text())
    broken = []
    for target in LINK.findall(text):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no heading with that anchor in {file.relative_to(ROOT)}")
    assert broken == [], f"{page.relative_to(ROOT)}: fix these links"


def test_slugs_are_githubs() -> None:
    assert slug("## `txconform simulate` and `txconform check`".lstrip("# ")) == "txconform-simulate-and-txconform-check"
    assert slug("Where the test suite's minutes go") == "where-the-test-suites-minutes-go"
    assert slug("Long traces: checking in windows (issue 24)") == "long-traces-checking-in-windows-issue-24"


def test_a_tla_excerpt_quotes_the_spec_and_names_what_it_cannot_find() -> None:
    import importlib.util

    root = Path(__file__).resolve().parents[1]
    spec = importlib.util.spec_from_file_location("gen_docs_excerpt", root / "scripts" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    text = gen_docs.tla_excerpt("specs/resharding/Resharding.tla Conflict ExactlyOnce")
    source = (root / "specs" / "resharding" / "Resharding.tla").read_text(encoding="utf-8")
    assert text.startswith("```tla\n\\* Does the commit of a transaction") and text.endswith("```\n")
    assert 'Conflict(p, o) == Design = "txn_offset_check" /\\ committed[p] # o' in text
    assert "ExactlyOnce == NoDuplicates /\\ NoLoss" in text
    assert "@type:" not in text and "@type: (Int, Int) => Bool;" in source  # annotations left out
    with pytest.raises(SystemExit, match="defines no Nope"):
        gen_docs.tla_excerpt("specs/resharding/Resharding.tla Nope")
    with pytest.raises(SystemExit, match="give a TLA\\+ file"):
        gen_docs.tla_excerpt("specs/none.tla Conflict")
