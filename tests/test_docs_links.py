"""The prose of the pages cites what a reader can open: every Kafka ticket (KAFKA-N), KIP and
GitHub issue or pull request is a link at its first mention on each page, and a page that names a
source document by its number ("seed 003") links to docs/sources.md, which says what it is.

Only prose counts: the generated blocks (tests/test_docs.py's), code fences and inline code are
blanked first, keeping the line numbers. Reads files only; runs no tool."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
import tomllib
from test_docs_pages import FENCE, PAGES, ROOT

GENERATED = re.compile(r"<!-- txconform(?:-mermaid|-head)?: [^>]*? -->\n.*?<!-- /txconform -->", re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"(?<!!)\[([^\]]*)\]\(([^)\s]+)\)")

JIRA = "https://issues.apache.org/jira/browse/"
KIPS = "https://cwiki.apache.org/confluence/display/KAFKA/"
GITHUB = "https://github.com/"
# A citation and the link it must have: the URL it must start with, from the match.
CITATIONS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"\bKAFKA-\d+\b"), lambda m: JIRA + m.group(0)),
    (re.compile(r"\bKIP-\d+\b"), lambda m: KIPS + m.group(0)),
    (re.compile(r"\b(apache/kafka)#(\d+)"), lambda m: f"{GITHUB}{m.group(1)}/pull/{m.group(2)}"),
    (re.compile(r"\bRedpanda #(\d+)"), lambda m: f"{GITHUB}redpanda-data/redpanda/issues/{m.group(1)}"),
    (re.compile(r"\bydb-python-sdk PR (\d+)"), lambda m: f"{GITHUB}ydb-platform/ydb-python-sdk/pull/{m.group(1)}"),
    (re.compile(r"\bydb (?:issue|PR) (\d+)"), lambda m: f"{GITHUB}ydb-platform/ydb/"),
]


def _blank(match: re.Match[str]) -> str:
    return re.sub(r"[^\n]", " ", match.group(0))


def prose(text: str) -> str:
    """The page with generated blocks, code fences and inline code blanked (line numbers kept)."""
    for pattern in (GENERATED, FENCE, INLINE_CODE):
        text = pattern.sub(_blank, text)
    return text


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _links(text: str) -> list[tuple[int, int, str]]:
    """Each link of the prose: the span of its text (its brackets included) and its URL."""
    return [(m.start(), m.end(1) + 1, m.group(2)) for m in LINK.finditer(text)]


def unlinked_first_mentions(text: str) -> list[str]:
    """The citations of a page whose first mention in prose is not a link to where it lives."""
    text = prose(text)
    links = _links(text)
    seen: set[str] = set()
    wrong = []
    for pattern, url_of in CITATIONS:
        for m in pattern.finditer(text):
            name = m.group(0)
            if name in seen:
                continue
            seen.add(name)
            # A citation written "ydb PR [17497](...)" or "[PR 17497](...)" links its number.
            number = re.search(r"\d+$", name)
            assert number is not None
            at = m.start() + number.start()
            url = url_of(m)
            if not any(a <= at < b and target.startswith(url) and target.rstrip("/").endswith(number.group(0))
                       for a, b, target in links):
                wrong.append(f"line {_line(text, m.start())}: {name} (link it to {url}...)")
    return wrong


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_ticket_is_a_link_at_its_first_mention(page: Path) -> None:
    wrong = unlinked_first_mentions(page.read_text())
    assert wrong == [], f"{page.relative_to(ROOT)}: link these first mentions:\n  " + "\n  ".join(wrong)


def test_the_check_sees_prose_only_and_wants_the_right_url() -> None:
    assert unlinked_first_mentions("See KAFKA-1 and `KAFKA-2`.\n") == ["line 1: KAFKA-1 (link it to " + JIRA + "KAFKA-1...)"]
    assert unlinked_first_mentions(f"[KAFKA-1]({JIRA}KAFKA-1), then KAFKA-1 again.\n") == []
    assert unlinked_first_mentions(f"[KIP-447]({JIRA}KIP-447)\n") != [], "a KIP links to the wiki"
    assert unlinked_first_mentions(f"[KIP-4]({KIPS}KIP-447)\n") != [], "the number must match"
    assert unlinked_first_mentions("```\nKAFKA-1\n```\n<!-- txconform: x -->\nKIP-2\n<!-- /txconform -->\n") == []
    assert unlinked_first_mentions(f"ydb [PR 4758]({GITHUB}ydb-platform/ydb/pull/4758)\n") == []
    assert unlinked_first_mentions("see\napache/kafka#1 here\n") == [
        f"line 2: apache/kafka#1 (link it to {GITHUB}apache/kafka/pull/1...)"]


# The source documents by number ("seed 003"), by file name, or as the models' notes name them.
SEED = re.compile(r"\bseeds? 00\d\b|\bseed's author\b|\b[Tt]he seed as written\b|\b[Tt]he seed's (?:example|count|'intersects')"
                  r"|\b00\d_[0-9a-f]{16}\.txt\b")


def links_to_sources(page: Path, text: str) -> bool:
    return any((page.parent / target.partition("#")[0]).resolve() == ROOT / "docs" / "sources.md"
               for _, _, target in _links(prose(text)))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_page_that_names_a_source_document_by_number_links_to_the_sources(page: Path) -> None:
    """Prose or a generated block (a model's note) that says "seed 003" or "the seed's author"
    means one of the documents the specs were written from; docs/sources.md says which."""
    text = page.read_text()
    found = [f"line {_line(text, m.start())}: {m.group(0)!r}" for m in SEED.finditer(text)]
    if found and page != ROOT / "docs" / "sources.md":
        assert links_to_sources(page, text), (
            f"{page.relative_to(ROOT)} names source documents by number ({', '.join(found[:3])}) "
            "without a link to docs/sources.md: say what the document is and link it")


def test_model_notes_name_their_source_document() -> None:
    """A model's note is printed by `model-check --list` and `--traces`, on a terminal with no link
    to follow: it names the document ("the C*One article", "the YDB-vs-Kafka talk"), not "the seed"."""
    vague = re.compile(r"\b[Tt]he seed\b|\bseed's\b|\bseeds? 00\d\b")
    found = []
    for registry in sorted((ROOT / "specs").glob("*/models.toml")):
        models = tomllib.loads(registry.read_text())["models"]
        found += [f"{registry.relative_to(ROOT)}: {name}: {m['note']!r}" for name, m in models.items() if vague.search(m.get("note", ""))]
    assert found == [], "say which source document (docs/sources.md's short names)"


def test_the_sources_page_names_every_seed() -> None:
    sources = (ROOT / "docs" / "sources.md").read_text()
    headings = re.findall(r"^## (\d{3}): ", sources, re.MULTILINE)
    assert headings == ["000", "001", "002", "003", "004"]
    assert "[the source documents](docs/sources.md)" in (ROOT / "README.md").read_text()


# The glossary: every variable each protocol's main spec declares has its line.
SPECS = ["resharding/Resharding.tla", "kafka/KafkaTxn.tla", "ydb/YdbTopics.tla", "cone/Cone.tla"]


def declared_variables(tla: str) -> list[str]:
    """The names of a module's ``VARIABLE(S)`` declarations (comments and type annotations skipped)."""
    names = []
    for m in re.finditer(r"^VARIABLES?\b(.*?)(?=^\S|\n\s*\n|\Z)", tla, re.DOTALL | re.MULTILINE):
        body = re.sub(r"\(\*.*?\*\)", "", m.group(1), flags=re.DOTALL)
        body = re.sub(r"\\\*[^\n]*", "", body)
        names += [n.strip() for n in body.split(",") if n.strip()]
    return names


def glossary_sections() -> dict[str, str]:
    """The glossary's sections by the spec file their heading names."""
    text = (ROOT / "docs" / "glossary.md").read_text()
    parts = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    return {m.group(1): part for part in parts if (m := re.search(r"`specs/([\w/]+\.tla)`", part.splitlines()[0]))}


@pytest.mark.parametrize("spec", SPECS)
def test_every_spec_variable_has_its_line_in_the_glossary(spec: str) -> None:
    names = declared_variables((ROOT / "specs" / spec).read_text())
    assert len(names) >= 7, f"no VARIABLES read from {spec}"
    section = glossary_sections().get(spec)
    assert section is not None, f"docs/glossary.md: add a section `## ...: \\`specs/{spec}\\``"
    # A row names the variable first: | `x` | or | `x`, `y` | ...
    rows = [re.findall(r"`(\w+)`", line.split("|")[1]) for line in section.splitlines() if line.startswith("| `")]
    explained = {name for row in rows for name in row}
    missing = [n for n in names if n not in explained]
    assert missing == [], f"docs/glossary.md, section for specs/{spec}: give these variables a line: {missing}"


def test_the_variable_parser_reads_declarations() -> None:
    tla = "VARIABLES\n    \\* a comment, with commas\n    \\* @type: Int;\n    x,\n    (* y, *)\n    z\n\nFoo == 1\nVARIABLE w\n"
    assert declared_variables(tla) == ["x", "z", "w"]
