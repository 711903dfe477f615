#!/usr/bin/env python3
"""Run the ydb Python SDK's own topic tests against ``txconform serve --protocol ydb``.

    python scripts/sdk_topic_tests.py --sdk ~/src/ydb-python-sdk                # test_topic_transactions.py
    python scripts/sdk_topic_tests.py --sdk /path/to/ydb-python-sdk.git writer reader
    python scripts/sdk_topic_tests.py --sdk DIR transactions --json summary.json

``--sdk`` is a checkout of ydb-platform/ydb-python-sdk, or a bare git directory of it (its HEAD is
extracted to a temporary directory; nothing of it is kept); without it, ``$TXCONFORM_YDB_SDK_DIR``.
The files are names under ``tests/topics/`` (``transactions``, ``writer``, ``reader``, or a path).

pytest runs them in a subprocess, with a timeout, with ``--noconftest`` (the SDK's conftest starts
YDB in docker) and our plug-in ``probe.ydb_sdk``, whose fixtures of the same names give each test a
server of its own (probe/ydb_sdk.py says how the SDK's topics map to the engine's). The table says
for each test: passed, failed, skipped or error, and for the others a one-line reason: the first
request the server refused (a feature outside the engine's model: a finding, not a failure of ours)
or else the error the test saw. Then each test's trace is checked by TLC (``txconform check``).

Exit status 0 when every test the server did not refuse passed and every trace is accepted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SDK_ENV = "TXCONFORM_YDB_SDK_DIR"
FILES = {"transactions": "tests/topics/test_topic_transactions.py", "writer": "tests/topics/test_topic_writer.py",
         "reader": "tests/topics/test_topic_reader.py"}
REFUSED = "refused (outside the engine's model): "
# The SDK's tests need pytest-asyncio (its test-requirements.txt); it is installed for the test run only, in a
# directory of its own on the subprocess's PYTHONPATH, so that it is not a plug-in of txconform's own test suite.
PLUGINS = {"pytest_asyncio": "pytest-asyncio>=1.0,<2", "pytest_timeout": "pytest-timeout>=2.3,<3"}  # and a per-test timeout
DEPS = Path.home() / ".cache" / "txconform" / "ydb-sdk-tests"


def test_deps(deps: Path) -> Path:
    """``deps`` with pytest-asyncio and pytest-timeout in it (pip, once)."""
    missing = [spec for dist, spec in PLUGINS.items() if not any(deps.glob(f"{dist}-*.dist-info"))]
    if missing:
        deps.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                        "--upgrade", "--target", str(deps), *missing], check=True, timeout=300)
    return deps


def sdk_checkout(arg: str, tmp: Path) -> Path:
    """A directory holding the SDK's tree: ``arg`` itself, or its HEAD extracted when it is a bare git directory."""
    src = Path(arg).expanduser().resolve()
    if (src / "tests" / "topics").is_dir():
        return src
    if (src / "HEAD").is_file() and (src / "objects").is_dir():
        out = tmp / "ydb-python-sdk"
        out.mkdir()
        archive = subprocess.run(["git", "--git-dir", str(src), "archive", "HEAD"], check=True, capture_output=True, timeout=120)
        subprocess.run(["tar", "-x", "-C", str(out)], input=archive.stdout, check=True, timeout=120)
        return out
    raise SystemExit(f"--sdk {arg}: neither a checkout of ydb-python-sdk (no tests/topics) nor a bare git directory")


def one_line(text: str, width: int = 110) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def reason_of(failure: str) -> str:
    """The line of a failure's text that says most: the SDK's YDB error, else the exception's line."""
    lines = [ln.strip() for ln in failure.splitlines() if ln.strip()]
    for pat in (r"^E\s+(ydb\.issues\.\w+.*)", r"(ydb\.issues\.\w+: .*)", r"^E\s+(\w*(Error|Exception)\b.*)", r"^E\s+(.*)"):
        for ln in lines:
            m = re.search(pat, ln)
            if m:
                return m.group(1)
    return lines[-1] if lines else ""


def results(junit: Path, traces: Path) -> list[dict[str, Any]]:
    from probe.ydb_sdk import TRACES_ENV, trace_path

    os.environ[TRACES_ENV] = str(traces)

    rows = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        name = f"{cls}::{case.get('name')}"
        outcome, reason, hung = "passed", "", False
        for tag in ("failure", "error", "skipped"):
            el = case.find(tag)
            if el is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                reason = reason_of((el.text or "") + "\n" + (el.get("message") or ""))
                hung = "Timeout (>" in (el.get("message") or "")
                break
        file = case.get("file") or ""
        nodeid = f"{file}::{cls}::{case.get('name')}"
        rows.append({"test": name, "outcome": outcome, "reason": reason, "hung": hung, "nodeid": nodeid,
                     "time": float(case.get("time", 0))})
    # the server's refusals, by test (the plug-in writes them beside each trace)
    for r in rows:
        path = trace_path(r.pop("nodeid")) if os.environ.get(TRACES_ENV) else None
        r["trace"] = str(path) if path is not None and path.is_file() else ""
        served = path.with_suffix(".served.txt").read_text() if path is not None and path.with_suffix(".served.txt").is_file() else ""
        refusals = [ln.strip()[len(REFUSED):] for ln in served.splitlines() if ln.strip().startswith(REFUSED)]
        r["refused"] = refusals[-1] if refusals else ""  # the last: the one that ended the test
        if r["outcome"] in ("failed", "error") and r["refused"]:
            r["reason"] = ("hung (the per-test timeout) after it was refused: " if r["hung"] else "refused: ") + r["refused"]
    return rows


def check(rows: list[dict[str, Any]], timeout: float) -> None:
    from trace_check.testing import txconform_check

    for r in rows:
        path = Path(r["trace"]) if r["trace"] else None
        if path is None or not path.is_file():
            r["verdict"] = "no trace"
            continue
        events = sum(1 for _ in path.open()) - 1
        if events <= 0:
            r["verdict"] = "empty"
            continue
        try:
            v = txconform_check(path, timeout=timeout)
            r["verdict"] = f"accepted ({events})" if v.ok else f"REJECTED ({events})"
        except Exception as e:  # noqa: BLE001 - a checker failure is a verdict of its own in the table
            r["verdict"] = f"check failed: {one_line(str(e), 60)}"


def table(rows: list[dict[str, Any]]) -> list[str]:
    out = ["| test | outcome | trace | reason |", "|---|---|---|---|"]
    for r in rows:
        out.append(f"| `{r['test']}` | {r['outcome']} | {r.get('verdict', '-')} | {one_line(r['reason']).replace('|', '/')} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*", default=["transactions"], help="transactions, writer, reader, or paths in the SDK's tree")
    ap.add_argument("--sdk", default=os.environ.get(SDK_ENV, ""), help=f"the SDK's checkout or bare git directory (${SDK_ENV})")
    ap.add_argument("-k", default="", help="pytest -k expression")
    ap.add_argument("--timeout", type=float, default=3600.0, help="the whole pytest run, seconds")
    ap.add_argument("--test-timeout", type=float, default=60.0, help="one test, seconds (pytest-timeout)")
    ap.add_argument("--check-timeout", type=float, default=300.0, help="one trace's check, seconds")
    ap.add_argument("--no-check", action="store_true", help="do not check the traces")
    ap.add_argument("--workload", default="", help="the served engine's shape (txconform serve --workload)")
    ap.add_argument("--json", type=Path, help="write the rows and the totals here")
    ap.add_argument("--deps", type=Path, default=DEPS, help="where pytest-asyncio is installed for the run")
    ap.add_argument("--keep", type=Path, help="keep the traces and pytest's report in this directory")
    a = ap.parse_args(argv)
    if not a.sdk:
        print(f"no SDK checkout: pass --sdk DIR or set {SDK_ENV}", file=sys.stderr)
        return 2
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="txconform-sdk-") as tmp_s:
        tmp = Path(tmp_s)
        sdk = sdk_checkout(a.sdk, tmp)
        work = a.keep.resolve() if a.keep else tmp / "run"
        traces = work / "traces"
        traces.mkdir(parents=True, exist_ok=True)
        junit = work / "junit.xml"
        files = [FILES.get(f, f) for f in a.files]
        env = dict(os.environ, TXCONFORM_SDK_TRACES=str(traces), TXCONFORM_SDK_WORKLOAD=a.workload,
                   PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), str(test_deps(a.deps)), os.environ.get("PYTHONPATH", "")) if p))
        cmd = [sys.executable, "-m", "pytest", "--noconftest", "-p", "probe.ydb_sdk", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
               "-o", "asyncio_mode=auto", "-o", "junit_family=xunit1", "--rootdir", str(sdk), "--junitxml", str(junit),
               "-q", "-rN", "--tb=native", f"--timeout={a.test_timeout:g}", "-o", "timeout_method=signal", *(["-k", a.k] if a.k else []), *files]
        try:
            run = subprocess.run(cmd, cwd=sdk, env=env, capture_output=True, text=True, timeout=a.timeout)
        except subprocess.TimeoutExpired as e:
            print(f"pytest did not finish within {a.timeout:.0f} s", file=sys.stderr)
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            print(out[-3000:], file=sys.stderr)
            return 3
        (work / "pytest.out").write_text(run.stdout + run.stderr)
        if not junit.is_file():
            print(run.stdout[-3000:] + run.stderr[-3000:], file=sys.stderr)
            return 3
        rows = results(junit, traces)
        if not a.no_check:
            check(rows, a.check_timeout)
    counts = {k: sum(r["outcome"] == k for r in rows) for k in ("passed", "failed", "error", "skipped")}
    refused = [r for r in rows if r["outcome"] in ("failed", "error") and r["refused"]]
    ours = [r for r in rows if r["outcome"] in ("failed", "error") and not r["refused"]]
    rejected = [r for r in rows if str(r.get("verdict", "")).startswith(("REJECTED", "check failed"))]
    print("\n".join(table(rows)))
    print(f"\n{len(rows)} tests: " + ", ".join(f"{v} {k}" for k, v in counts.items())
          + f"; {len(refused)} need what the server refuses, {len(ours)} failed otherwise; "
          f"traces: {sum(str(r.get('verdict', '')).startswith('accepted') for r in rows)} accepted, {len(rejected)} rejected"
          + (" (not checked)" if a.no_check else "") + f"; {time.monotonic() - started:.0f} s")
    if a.json:
        a.json.write_text(json.dumps({"rows": rows, "counts": counts, "refused": len(refused), "other_failures": len(ours),
                                      "rejected": len(rejected)}, indent=1))
    return 0 if not ours and not rejected and rows else 1


if __name__ == "__main__":
    sys.exit(main())
