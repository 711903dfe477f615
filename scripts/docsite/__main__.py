"""python -m docsite build|serve|check: see the package's docstring."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from docsite.build import BuildError, build
from docsite.mermaid import MermaidError
from docsite.stage import ROOT, StageError

OUT = ROOT / "out"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docsite", description="Build, serve or check the docs site (MkDocs, Material theme).")
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="stage README.md, docs/ and the linked spec files, and build the site (strict)")
    b.add_argument("--site", type=Path, default=OUT / "site", help="where to build it (default: out/site)")
    s = sub.add_parser("serve", help="build, then serve the site on 127.0.0.1 until Ctrl-C")
    s.add_argument("--port", type=int, default=8000, help="the port (default 8000; 0: a free one)")
    c = sub.add_parser("check", help="build, serve on a free port, and load every page in headless Chromium")
    c.add_argument("--shots", type=Path, default=OUT / "site-screenshots", help="where to keep screenshots of the main pages (default: out/site-screenshots)")
    args = parser.parse_args(argv)
    site = getattr(args, "site", OUT / "site")
    try:
        pages = build(site, OUT / "docs-src")
    except (BuildError, MermaidError, StageError) as e:
        print(f"docs: {e}", file=sys.stderr)
        return 2
    print(f"docs: built {len(pages)} pages into {site}")
    if args.command == "serve":
        from docsite.server import serve_forever

        serve_forever(site, args.port)
    elif args.command == "check":
        from docsite.reader import check_site_cli

        return check_site_cli(site, pages, args.shots)
    return 0


if __name__ == "__main__":
    sys.exit(main())
