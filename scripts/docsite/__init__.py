"""The docs site: README.md, docs/ and the spec files they link, built by MkDocs (Material theme)
with Mermaid bundled from its npm package, and checked in headless Chromium as a reader sees it.

    python -m docsite build [--site DIR]     stage and build (strict: a broken link fails), default out/site
    python -m docsite serve [--port N]       build, then serve on 127.0.0.1 until Ctrl-C
    python -m docsite check [--shots DIR]    build, serve, and load every page in headless Chromium

(run from scripts/, or with scripts/ on PYTHONPATH: `make docs` does the first).
"""
