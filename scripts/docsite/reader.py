"""What a reader sees: every page of the built site loaded in headless Chromium, served over HTTP
on 127.0.0.1. The search box must find pages. A page must load (HTTP 200, a title, its text), run no script into an error, fetch
nothing from off the site, and draw each of its Mermaid blocks as an SVG with a size (not left as
source, not Mermaid's error picture); every link between pages must lead to a file of the site,
and its anchor to an element of the page it names. Screenshots of the main pages are kept."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

import attrs

from docsite.build import site_path
from docsite.chromium import HOW_TO_INSTALL, Browser, BrowserError, find_chromium, screenshot
from docsite.server import served
from docsite.stage import ROOT

SCREENSHOT_PAGES = ("README.md", "docs/resharding.md", "docs/ydb-zoo.md")
LOAD_TIMEOUT = 60.0
DIAGRAM_TIMEOUT = 90.0
MERMAID_FENCE = re.compile(r"^```mermaid\s*$", re.MULTILINE)

# The Material theme draws each diagram into a closed shadow root; opened, the check can look inside.
OPEN_SHADOW_ROOTS = """
const attach = Element.prototype.attachShadow;
Element.prototype.attachShadow = function (options) { return attach.call(this, {...options, mode: "open"}); };
"""
VIEW = """JSON.stringify((() => {
  const drawn = [...document.querySelectorAll("div.mermaid")].map(host => {
    const svg = host.shadowRoot && host.shadowRoot.querySelector("svg");
    if (!svg) return "no SVG";
    if (svg.getAttribute("aria-roledescription") === "error") return "Mermaid's error picture";
    const box = svg.getBoundingClientRect();
    return box.width > 0 && box.height > 0 ? "ok" : "an SVG of no size";
  });
  const article = document.querySelector("article");
  return {
    pending: document.querySelectorAll("pre.mermaid").length,
    drawn,
    title: document.title,
    text: article ? article.innerText.length : 0,
    links: [...document.querySelectorAll("a[href]")].map(a => a.href),
    ids: [...document.querySelectorAll("[id]")].map(e => e.id),
  };
})())"""


SEARCH_QUERY = "ExactlyOnce"  # a word of many pages: the theme's search (its index, its worker) must find them
SEARCH = """(() => {
  const input = document.querySelector("input.md-search__input");
  if (!input) return false;
  input.focus();
  input.value = QUERY;
  input.dispatchEvent(new Event("input", {bubbles: true}));
  input.dispatchEvent(new KeyboardEvent("keyup", {bubbles: true, key: "e"}));
  return true;
})()"""
SEARCH_HITS = 'document.querySelectorAll(".md-search-result__item").length'


@attrs.frozen
class Target:
    """A page to load: its name in messages, its path on the site, and how many diagrams it must draw."""

    name: str
    path: str
    diagrams: int

    @classmethod
    def of(cls, page: Path) -> Target:
        """The site's page made from Markdown file ``page`` (relative to the repository)."""
        fences = MERMAID_FENCE.findall((ROOT / page).read_text(encoding="utf-8"))
        return cls(page.as_posix(), site_path(page), len(fences))


@attrs.frozen
class PageView:
    """One page as Chromium showed it."""

    page: str  # the Markdown file, relative to the repository
    url: str
    diagrams_expected: int  # Mermaid fences in the Markdown
    drawn: tuple[str, ...]  # per diagram host: "ok" or what is wrong with it
    pending: int  # Mermaid blocks still source when the wait ended
    title: str
    text: int  # characters of the article's text
    links: tuple[str, ...]
    ids: frozenset[str]
    errors: tuple[str, ...]  # scripts' exceptions, console errors, failed or off-site loads


def _evaluate(browser: Browser, expression: str) -> Any:
    result = browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    if "exceptionDetails" in result:
        raise BrowserError(f"the check's script failed: {result['exceptionDetails'].get('text')}")
    return result["result"].get("value")


def _errors(events: list[dict[str, Any]], base: str) -> list[str]:
    """What went wrong while a page loaded, from the DevTools events."""
    found = []
    urls: dict[str, str] = {}
    for e in events:
        params = e.get("params", {})
        method = e.get("method")
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            if not url.startswith((base, "data:", "blob:", "about:")):
                found.append(f"fetched {url} from off the site (it must work with no network)")
        elif method == "Network.responseReceived" and params["response"]["status"] >= 400:
            found.append(f"{params['response']['url']}: HTTP {params['response']['status']}")
        elif method == "Network.loadingFailed" and not params.get("canceled"):
            found.append(f"{urls.get(params['requestId'], 'a request')} failed: {params.get('errorText')}")
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            found.append("script error: " + (details.get("exception", {}).get("description") or details.get("text", "")).splitlines()[0])
        elif method == "Runtime.consoleAPICalled" and params.get("type") == "error":
            found.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
            found.append("console error: " + params["entry"].get("text", ""))
    return found


def view_page(browser: Browser, base: str, target: Target) -> PageView:
    """Load one page and wait (bounded) until each of its diagrams is drawn or has failed (a
    diagram Mermaid cannot parse stays source, and its rejected promise is a script error)."""
    url = urljoin(base, target.path)
    browser.events.clear()
    navigation = browser.call("Page.navigate", {"url": url}, timeout=LOAD_TIMEOUT)
    errors = [f"did not load: {navigation['errorText']}"] if navigation.get("errorText") else []
    browser.wait_for("Page.loadEventFired", LOAD_TIMEOUT)
    deadline = time.monotonic() + DIAGRAM_TIMEOUT
    while True:
        seen = json.loads(_evaluate(browser, VIEW))
        thrown = sum(e.get("method") == "Runtime.exceptionThrown" for e in browser.events)
        if seen["pending"] <= thrown or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    errors += _errors(browser.events, base)
    return PageView(target.name, url, target.diagrams, tuple(seen["drawn"]), seen["pending"], seen["title"], seen["text"],
                    tuple(seen["links"]), frozenset(seen["ids"]), tuple(errors))


def search_hits(browser: Browser, query: str) -> int:
    """Type ``query`` into the loaded page's search box; the results it lists (waiting, bounded, for
    the search index to load and answer)."""
    if not _evaluate(browser, SEARCH.replace("QUERY", json.dumps(query))):
        return 0
    deadline = time.monotonic() + LOAD_TIMEOUT
    while True:
        hits = int(_evaluate(browser, SEARCH_HITS))
        if hits or time.monotonic() > deadline:
            return hits
        time.sleep(0.2)


def problems_of(view: PageView) -> list[str]:
    found = [f"{view.page}: {e}" for e in view.errors]
    if not view.title or view.text < 200:
        found.append(f"{view.page}: no page to read (title {view.title!r}, {view.text} characters of text)")
    if view.pending:
        found.append(f"{view.page}: {view.pending} Mermaid block(s) still source after {DIAGRAM_TIMEOUT:.0f} s (a syntax error, or Mermaid not loaded)")
    if len(view.drawn) + view.pending != view.diagrams_expected:
        found.append(f"{view.page}: {view.diagrams_expected} Mermaid fences in the Markdown but {len(view.drawn) + view.pending} diagrams on the page "
                     "(mkdocs.yml's superfences custom fence for mermaid?)")
    found += [f"{view.page}: diagram {i} is {what}" for i, what in enumerate(view.drawn, 1) if what != "ok"]
    return found


def broken_links(views: list[PageView], base: str, site: Path) -> list[str]:
    """Links between the site's files that lead nowhere: no such file, or no element with the anchor's id."""
    ids = {urlsplit(v.url).path: v.ids for v in views}
    found = []
    for view in views:
        for link in sorted(set(view.links)):
            if not link.startswith(base):
                continue  # the web: not fetched here
            parts = urlsplit(link)
            path = parts.path if not parts.path.endswith("/") else parts.path + "index.html"
            if not (site / unquote(path).lstrip("/")).is_file():
                found.append(f"{view.page}: a link to {path} leads to no file of the site")
            elif parts.fragment and path in ids and unquote(parts.fragment) not in ids[path]:
                found.append(f"{view.page}: a link to {path}#{parts.fragment}: that page has no such anchor")
    return found


def check_site(site: Path, targets: list[Target], chromium: str, shots: Path | None = None) -> tuple[list[PageView], list[str]]:
    """Serve ``site``, load each page in Chromium; returns what was seen and the problems found."""
    views = []
    with served(site) as base, Browser.start(chromium) as browser:
        for domain in ("Page", "Runtime", "Network", "Log"):
            browser.call(f"{domain}.enable")
        browser.call("Page.addScriptToEvaluateOnNewDocument", {"source": OPEN_SHADOW_ROOTS})
        searched = 0
        for target in targets:
            view = view_page(browser, base, target)
            views.append(view)
            if len(views) == 1:
                searched = search_hits(browser, SEARCH_QUERY)
            if shots is not None and target.name in SCREENSHOT_PAGES:
                _evaluate(browser, 'void (document.querySelector("div.mermaid") || document.body).scrollIntoView()')
                screenshot(browser, shots / (target.name.replace("/", "_").removesuffix(".md") + ".png"))
        problems = [p for v in views for p in problems_of(v)] + broken_links(views, base, site)
        if targets and not searched:
            problems.append(f"{targets[0].name}: the search box finds nothing for {SEARCH_QUERY!r} (did search/search_index.json load?)")
    return views, problems


def check_site_cli(site: Path, pages: list[Path], shots: Path) -> int:
    chromium = find_chromium()
    if chromium is None:
        print(f"docs: no Chromium to check the site with: {HOW_TO_INSTALL}", file=sys.stderr)
        return 2
    try:
        views, problems = check_site(site, [Target.of(p) for p in pages], chromium, shots)
    except BrowserError as e:
        print(f"docs: {e}", file=sys.stderr)
        return 2
    for v in views:
        drawn = f", {v.drawn.count('ok')}/{v.diagrams_expected} diagrams drawn" if v.diagrams_expected else ""
        print(f"  {v.page}: {v.title!r}, {len(set(v.links))} links{drawn}")
    for p in problems:
        print(f"docs: {p}", file=sys.stderr)
    print(f"docs: {len(views)} pages in Chromium, {len(problems)} problems; screenshots in {shots}")
    return 1 if problems else 0
