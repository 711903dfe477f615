"""The docs site (scripts/docsite, `make docs`) as a reader sees it.

MkDocs builds it in strict mode into a temporary folder: a broken link or anchor, or a page left out
of the nav, fails the build. The built site is served on a free loopback port and every page is
loaded in headless Chromium: it must load, run no script into an error, fetch nothing from off the
site, draw each Mermaid block as an SVG, and its links must lead to files and anchors of the site;
the search box must find pages.
A copy of a page with a diagram Mermaid cannot parse and two broken links is loaded with them, and
must be reported, so that the check is seen to fail. Screenshots of the main pages are kept in the
test's temporary folder. The browser tests skip only where Chromium is absent."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from docsite.build import BuildError, build
from docsite.chromium import HOW_TO_INSTALL, find_chromium
from docsite.reader import SCREENSHOT_PAGES, PageView, Target, broken_links, check_site, problems_of
from docsite.stage import ROOT, StageError, linked_files, pages

BROKEN = Target("docs/broken.md (a copy of resharding.md, broken on purpose)", "docs/broken.html", 2)


def nav_pages() -> list[str]:
    """The pages of mkdocs.yml's nav, in order."""

    def walk(entries: list[object]) -> list[str]:
        found = []
        for entry in entries:
            value = next(iter(entry.values())) if isinstance(entry, dict) else entry
            found += walk(value) if isinstance(value, list) else [str(value)]
        return found

    # !!python/name tags (the Mermaid fence's formatter) need no resolving to read the nav
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda loader, suffix, node: None)
    return walk(yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)["nav"])


def test_the_nav_starts_with_the_first_walkthrough_and_holds_every_page() -> None:
    nav = nav_pages()
    assert nav[:2] == ["README.md", "docs/resharding.md"], "the home page, then the walkthrough to read first"
    assert sorted(nav) == sorted(p.as_posix() for p in pages()), "mkdocs.yml's nav: add the new page where a reader meets it"


def test_a_link_to_a_folder_is_refused_with_what_to_link_instead(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "specs" / "kafka").mkdir(parents=True)
    (tmp_path / "docs" / "a.md").write_text("[the spec](../specs/kafka/KafkaTxn.tla), [`kafka/`](../specs/kafka)\n")
    (tmp_path / "specs" / "kafka" / "KafkaTxn.tla").write_text("---- MODULE KafkaTxn ----\n")
    with pytest.raises(StageError, match=r"links the folder \.\./specs/kafka: .*link a file"):
        linked_files(Path("docs/a.md"), tmp_path)
    (tmp_path / "docs" / "a.md").write_text("[the spec](../specs/kafka/KafkaTxn.tla#x), [here](#y), [web](https://x.org/a.md)\n")
    assert linked_files(Path("docs/a.md"), tmp_path) == [Path("specs/kafka/KafkaTxn.tla")]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site built from this checkout in strict mode (MkDocs' own link and anchor checks)."""
    folder = tmp_path_factory.mktemp("docs-site")
    build(folder / "site", folder / "src")
    return folder / "site"


@pytest.mark.browser
def test_the_site_builds_in_strict_mode_with_every_page(site: Path) -> None:
    for page in pages():
        name = "index.html" if page.name == "README.md" else page.with_suffix(".html").name
        assert (site / page.parent / name).is_file(), f"{page} was not built"
    assert (site / "assets" / "mermaid.min.js").stat().st_size > 1_000_000, "Mermaid is bundled, not fetched from a CDN"
    assert "mermaid.min.js" not in (site / "index.html").read_text(), "Mermaid loads only where a diagram is"


def broken_copy(site: Path) -> None:
    """docs/broken.html: resharding.html with its first diagram made unparsable and two bad links."""
    html = (site / "docs" / "resharding.html").read_text()
    html, n = re.subn(r'(<pre class="mermaid"><code>)sequenceDiagram', r"\1sequenceDiagram\n  this is -->> not Mermaid", html, count=1)
    assert n == 1, "resharding.md's first diagram: the copy needs one to break"
    links = '<p><a href="nowhere.html">gone</a> <a href="resharding.html#no-such-heading">lost</a></p>'
    (site / "docs" / "broken.html").write_text(html.replace("</article>", links + "</article>", 1))


@pytest.fixture(scope="module")
def seen(site: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[PageView], list[str], Path]:
    chromium = find_chromium()
    if chromium is None:
        pytest.skip(f"no Chromium: {HOW_TO_INSTALL}")
    broken_copy(site)
    shots = tmp_path_factory.mktemp("docs-site-screenshots")
    views, problems = check_site(site, [*(Target.of(p) for p in pages()), BROKEN], chromium, shots)
    return views, problems, shots


@pytest.mark.browser
def test_every_page_loads_and_draws_its_diagrams_in_chromium(seen: tuple[list[PageView], list[str], Path]) -> None:
    views, problems, _ = seen
    assert [v.page for v in views][:-1] == [p.as_posix() for p in pages()]
    mine = [p for p in problems if not p.startswith(BROKEN.name)]
    assert mine == [], "the docs site as Chromium shows it: fix these"
    drawn = sum(v.drawn.count("ok") for v in views[:-1])
    assert drawn == sum(v.diagrams_expected for v in views[:-1]) >= 20, "every Mermaid block drawn as an SVG"


@pytest.mark.browser
def test_the_check_reports_a_broken_diagram_and_broken_links(seen: tuple[list[PageView], list[str], Path]) -> None:
    _, problems, _ = seen
    theirs = [p.removeprefix(BROKEN.name + ": ") for p in problems if p.startswith(BROKEN.name)]
    assert any(p.startswith("1 Mermaid block(s) still source") for p in theirs), theirs
    assert any(p.startswith("script error:") for p in theirs), theirs
    assert "a link to /docs/nowhere.html leads to no file of the site" in theirs
    assert "a link to /docs/resharding.html#no-such-heading: that page has no such anchor" in theirs


@pytest.mark.browser
def test_screenshots_of_the_main_pages_are_kept(seen: tuple[list[PageView], list[str], Path]) -> None:
    _, _, shots = seen
    for page in SCREENSHOT_PAGES:
        png = shots / (page.replace("/", "_").removesuffix(".md") + ".png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000, f"{png}: no screenshot of {page}"


def view(**changes: object) -> PageView:
    fields: dict[str, object] = dict(page="docs/x.md", url="http://127.0.0.1:1/docs/x.html", diagrams_expected=1, drawn=("ok",), pending=0,
                                     title="X", text=500, links=(), ids=frozenset(), errors=())
    fields.update(changes)
    return PageView(**fields)  # type: ignore[arg-type]


def test_the_problems_of_a_page_view_name_what_a_reader_would_miss() -> None:
    assert problems_of(view()) == []
    assert problems_of(view(drawn=(), diagrams_expected=1)) == [
        "docs/x.md: 1 Mermaid fences in the Markdown but 0 diagrams on the page (mkdocs.yml's superfences custom fence for mermaid?)"]
    assert problems_of(view(drawn=("Mermaid's error picture",))) == ["docs/x.md: diagram 1 is Mermaid's error picture"]
    assert problems_of(view(text=0))[0].startswith("docs/x.md: no page to read")
    assert problems_of(view(errors=("fetched https://unpkg.com/mermaid@11 from off the site (it must work with no network)",))) != []


def test_links_are_checked_against_the_sites_files_and_the_anchors_of_its_pages(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.html").write_text("")
    base = "http://127.0.0.1:1/"
    links = (base + "docs/x.html#here", base + "docs/x.html#gone", base + "docs/y.html", "https://example.org/none.html")
    found = broken_links([view(links=links, ids=frozenset({"here"}))], base, tmp_path)
    assert found == ["docs/x.md: a link to /docs/x.html#gone: that page has no such anchor",
                     "docs/x.md: a link to /docs/y.html leads to no file of the site"]


def test_a_broken_link_fails_the_build_in_one_line(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / "docs").mkdir(parents=True)
    (repo / "specs").mkdir()
    (repo / "README.md").write_text("# Home\n\nRead [the walkthrough](docs/resharding.md).\n")
    (repo / "specs" / "README.md").write_text("# specs/\n")
    (repo / "docs" / "resharding.md").write_text("# Resharding\n\n[gone](nope.md), [lost](../README.md#no-such-heading)\n")
    with pytest.raises(BuildError) as failed:
        build(tmp_path / "site", tmp_path / "src", repo)
    message = str(failed.value)
    assert "\n" not in message and message.startswith("mkdocs build --strict failed: ")
    assert "'nope.md', but the target 'docs/nope.md' is not found" in message
    assert "does not contain an anchor '#no-such-heading'" in message
