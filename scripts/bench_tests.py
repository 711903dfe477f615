#!/usr/bin/env python3
"""Where the test suite's minutes go: run ``make test`` on a fresh clone of a commit with pytest's
JUnit XML, and tabulate the time of each test file, beside a baseline run of another commit.

    python scripts/bench_tests.py --run HEAD --out /tmp/tests-head.xml
        clone this repository at HEAD into a temporary directory, run ``make test`` there
        (setup included) and keep the JUnit XML; prints the wall time
    python scripts/bench_tests.py --table NEW.xml [--baseline OLD.xml] [--wall NEW_S] [--baseline-wall OLD_S]
        the table of test files by time (and the slowest tests), each beside the baseline's

A file's time is the sum of its tests' times as pytest-xdist's workers report them (setup and
teardown of fixtures included, charged to the test that first asked for them). With two workers
the sum is about twice the wall time when both are busy to the end.
"""

from __future__ import annotations

import argparse
import collections
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def times(junit: Path) -> dict[str, float]:
    """Each test's time in seconds, by node id."""
    out: dict[str, float] = {}
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "").replace(".", "/")
        out[f"{module}.py::{case.get('name')}"] = float(case.get("time", 0))
    return out


def by_file(tests: dict[str, float]) -> dict[str, tuple[int, float]]:
    files: dict[str, list[float]] = collections.defaultdict(list)
    for node, t in tests.items():
        files[node.split("::")[0]].append(t)
    return {f: (len(ts), sum(ts)) for f, ts in files.items()}


def table(new: Path, baseline: Path | None, wall: float | None, baseline_wall: float | None, top: int) -> str:
    n = times(new)
    b = times(baseline) if baseline else {}
    nf, bf = by_file(n), by_file(b)
    lines = []
    total_n, total_b = sum(n.values()), sum(b.values())
    if baseline:
        lines += ["| test file | tests | seconds | baseline seconds | ratio |", "|---|---:|---:|---:|---:|"]
    else:
        lines += ["| test file | tests | seconds | share |", "|---|---:|---:|---:|"]
    for f, (count, t) in sorted(nf.items(), key=lambda kv: -kv[1][1]):
        if baseline:
            old = bf.get(f, (0, 0.0))[1]
            ratio = f"{t / old:.2f}" if old else "new"
            lines.append(f"| `{f}` | {count} | {t:,.0f} | {old:,.0f} | {ratio} |")
        else:
            lines.append(f"| `{f}` | {count} | {t:,.0f} | {t / total_n:.0%} |")
    if baseline:
        lines.append(f"| all | {len(n)} | {total_n:,.0f} | {total_b:,.0f} | {total_n / total_b:.2f} |")
        if wall and baseline_wall:
            lines.append(f"| wall time of `make test` | | {wall:,.0f} | {baseline_wall:,.0f} | {wall / baseline_wall:.2f} |")
    else:
        lines.append(f"| all | {len(n)} | {total_n:,.0f} | |")
    lines += ["", f"The {top} slowest tests:", "", "| test | seconds |" + (" baseline |" if baseline else ""),
              "|---|---:|" + ("---:|" if baseline else "")]
    for node, t in sorted(n.items(), key=lambda kv: -kv[1])[:top]:
        extra = f" {b[node]:,.0f} |" if node in b else (" - |" if baseline else "")
        lines.append(f"| `{node}` | {t:,.0f} |{extra}")
    return "\n".join(lines)


def run(commit: str, out: Path) -> float:
    """``make test`` on a fresh clone of ``commit``: its wall time (setup included)."""
    with tempfile.TemporaryDirectory(prefix="txconform-bench-tests-") as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        subprocess.run(["git", "-C", str(clone), "checkout", "-q", commit], check=True)
        t0 = time.monotonic()
        env = {"PYTEST_ADDOPTS": f"--junitxml={out.resolve()}"}
        proc = subprocess.run(["make", "test"], cwd=clone, env={**os.environ, **env})
        wall = time.monotonic() - t0
        if proc.returncode != 0:
            print(f"make test failed (exit {proc.returncode}) after {wall:.0f} s", file=sys.stderr)
    print(f"make test on a fresh clone of {commit}: {wall:.0f} s wall; JUnit XML in {out}")
    return wall


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--run", metavar="COMMIT", help="run make test on a fresh clone of COMMIT")
    ap.add_argument("--out", type=Path, help="with --run: where to keep the JUnit XML")
    ap.add_argument("--table", type=Path, metavar="XML", help="tabulate this run's JUnit XML")
    ap.add_argument("--baseline", type=Path, metavar="XML", help="beside this run's")
    ap.add_argument("--wall", type=float, help="the run's wall time in seconds")
    ap.add_argument("--baseline-wall", type=float, help="the baseline's wall time in seconds")
    ap.add_argument("--top", type=int, default=15, help="how many of the slowest tests to list")
    args = ap.parse_args()
    if args.run:
        if not args.out:
            ap.error("--run needs --out XML")
        run(args.run, args.out)
    if args.table:
        for path in (args.table, args.baseline):
            if path is not None and not path.is_file():
                ap.error(f"{path}: no such file: give the JUnit XML a --run wrote")
        print(table(args.table, args.baseline, args.wall, args.baseline_wall, args.top))
    if not args.run and not args.table:
        ap.error("give --run COMMIT --out XML, or --table XML")
    return 0


if __name__ == "__main__":
    sys.exit(main())
