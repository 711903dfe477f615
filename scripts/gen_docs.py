#!/usr/bin/env python3
"""Fill the generated blocks of the docs with the real output of txconform.

A block is a pair of markers around a fenced code block:

    <!-- txconform: model-check --traces resharding_naive -->
    ```text
    ...what `txconform model-check --traces resharding_naive` prints...
    ```
    <!-- /txconform -->

``<!-- txconform-head: PATH N -->`` blocks get the first N lines of a file an earlier block
wrote (a trace made by ``txconform simulate --out PATH``).

``<!-- txconform-mermaid: NAME -->`` blocks get the Mermaid diagram of model NAME's counterexample
(what ``txconform model-check --out DIR NAME`` writes to DIR/NAME.md).

``<!-- txconform-tla: PATH NAME [NAME ...] -->`` blocks get the definitions NAME of the TLA+ module
PATH, each with the comment lines just above it (its ``@type`` annotation left out), as the spec
file has them: the excerpts a walkthrough quotes stay what the spec says.

    python scripts/gen_docs.py            rewrite the blocks of README.md and docs/*.md
    python scripts/gen_docs.py --check    exit 1 if any block differs from a fresh run (timings aside)

tests/test_docs.py runs the check, so the docs cannot drift from what the tool prints.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(?P<open><!-- (?P<kind>txconform|txconform-mermaid|txconform-head|txconform-tla): (?P<args>[^>]*?) -->\n)"
    r"(?P<body>.*?)"
    r"(?P<close><!-- /txconform -->)",
    re.DOTALL,
)
# What legitimately changes from run to run: wall-clock times.
_TIMING = re.compile(r"\d+(?:\.\d+)? s\b")


def doc_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def txconform(args: list[str]) -> str:
    """Run the installed console script as a user would, stdout and stderr in the order printed."""
    exe = Path(sys.executable).parent / "txconform"
    env = dict(os.environ, PYTHONUNBUFFERED="1", COLUMNS="160")
    proc = subprocess.run([str(exe), *args], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return tidy(proc.stdout)


def tidy(output: str) -> str:
    """What a block quotes of a command's output: no trailing blanks, no blank lines around it."""
    return "\n".join(line.rstrip() for line in output.splitlines()).strip("\n")


# Runs `txconform ARGS` and returns its output (stdout and stderr, tidied); tests/test_docs.py runs
# some commands another way.
Runner = Callable[[list[str]], str]


def mermaid(model: str, run: Runner = txconform) -> str:
    with tempfile.TemporaryDirectory() as out:
        said = run(["model-check", "--out", out, model])
        if not (Path(out) / f"{model}.md").is_file():  # no counterexample: the run says why (a timeout under load, ...)
            raise SystemExit(f"gen_docs: model-check {model} wrote no counterexample: {said.splitlines()[-1] if said else 'no output'}")
        md = (Path(out) / f"{model}.md").read_text()
    match = re.search(r"```mermaid\n(.*?)```", md, re.DOTALL)
    if not match:
        raise SystemExit(f"gen_docs: no Mermaid diagram written for {model}")
    return match.group(1).rstrip("\n")


def head(args: str) -> str:
    """The first N lines of a file the docs made (a trace written by an earlier block)."""
    path, n = args.split()
    lines = (ROOT / path).read_text(encoding="utf-8").splitlines()[: int(n)]
    return "```json\n" + "\n".join(lines) + "\n```\n"


def tla_excerpt(args: str) -> str:
    """The definitions named in ``args`` ("PATH NAME ...") of a TLA+ module, each with the comment
    lines just above it, as the file has them (``@type`` annotations left out), blank-line apart."""
    path, *names = args.split()
    source = ROOT / path
    if not source.is_file() or not names:
        raise SystemExit(f"gen_docs: txconform-tla: {args!r}: give a TLA+ file of this repository and the names to quote, "
                         "e.g. specs/resharding/Resharding.tla Conflict")
    lines = source.read_text(encoding="utf-8").splitlines()
    parts = []
    for name in names:
        start = next((k for k, line in enumerate(lines) if re.match(rf"{re.escape(name)}(\(.*\))? ==", line)), None)
        if start is None:
            raise SystemExit(f"gen_docs: txconform-tla: {path} defines no {name}: quote a definition the module has")
        top = start
        while top > 0 and lines[top - 1].startswith("\\*"):
            top -= 1
        end = start + 1
        while end < len(lines) and lines[end].strip() and not re.match(r"[A-Za-z_]\w*(\(.*\))? ==|\\\*|-{4,}|={4,}", lines[end]):
            end += 1
        parts.append("\n".join(line for line in lines[top:end] if "@type:" not in line))
    return "```tla\n" + "\n\n".join(parts) + "\n```\n"


def render(kind: str, args: str, run: Runner = txconform) -> str:
    if kind == "txconform":
        return f"```text\n$ txconform {args}\n{run(args.split())}\n```\n"
    if kind == "txconform-head":
        return head(args)
    if kind == "txconform-tla":
        return tla_excerpt(args)
    return f"```mermaid\n{mermaid(args.strip(), run)}\n```\n"


def regenerate(text: str, only: str = "") -> str:
    """The text with its blocks filled anew; with ``only``, just the blocks whose arguments contain it."""

    def fill(m: re.Match[str]) -> str:
        if only not in m.group("args"):
            return m.group(0)
        return m.group("open") + render(m.group("kind"), m.group("args")) + m.group("close")

    return BLOCK.sub(fill, text)


def comparable(text: str) -> str:
    """The text with what legitimately varies between runs taken out: wall-clock times, the
    search depth in result tables (with several workers TLC reports it give or take one: seen 34
    and 35 for resharding_txn_offset_check), and the table padding and border lengths that
    follow from a time's width."""
    text = _TIMING.sub("<time>", text)
    text = re.sub(r"(│ *[\d,]+ *│ *)\d+( *│ *<time>)", r"\1<depth>\2", text)
    text = re.sub(r"[─━]+", "─", text)
    return re.sub(r" +", " ", text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of rewriting")
    parser.add_argument("--only", default="", metavar="TEXT", help="regenerate only the blocks whose command contains TEXT (e.g. a model's name)")
    parser.add_argument("files", nargs="*", type=Path, help="docs to process (default: README.md and docs/*.md)")
    args = parser.parse_args()
    stale = []
    for path in [p.resolve() for p in args.files] or doc_files():
        text = path.read_text(encoding="utf-8")
        fresh = regenerate(text, args.only)
        if args.check:
            if comparable(fresh) != comparable(text):
                stale.append(path)
        elif fresh != text:
            path.write_text(fresh, encoding="utf-8")
            print(f"gen_docs: updated {path.relative_to(ROOT)}")
    if stale:
        names = ", ".join(str(p.relative_to(ROOT)) for p in stale)
        print(f"gen_docs: out of date: {names}: run `python scripts/gen_docs.py`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
