"""The ydb Python SDK's own topic-transaction tests (ydb-platform/ydb-python-sdk
``tests/topics/test_topic_transactions.py``) against ``txconform serve --protocol ydb``, through
``scripts/sdk_topic_tests.py`` and its plug-in ``probe/ydb_sdk.py`` (docs/serve-ydb.md, "The SDK's
own tests"). Their code is not in this repository: the test runs when ``$TXCONFORM_YDB_SDK_DIR``
names a checkout of the SDK (or a bare git directory of it), and is skipped otherwise.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("ydb")

ROOT = Path(__file__).resolve().parents[1]
SDK = os.environ.get("TXCONFORM_YDB_SDK_DIR", "")

# What the engine refuses of that file (docs/serve-ydb.md): the test writes 3 messages in a transaction
# that reads nothing, and a write-only transaction of the engine writes at most BatchMax (2 by default).
REFUSED = {"TestTopicTransactionalWriter::test_writes_do_not_conflict_with_executes",
           "TestTopicTransactionalWriterSync::test_writes_do_not_conflict_with_executes"}


@pytest.mark.probe
@pytest.mark.tlc
@pytest.mark.long
@pytest.mark.skipif(not SDK, reason="no ydb-python-sdk checkout: set TXCONFORM_YDB_SDK_DIR to run the SDK's own topic tests")
def test_the_sdks_topic_transaction_tests_pass_or_are_refused_and_every_trace_is_accepted(tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "sdk_topic_tests.py"), "--sdk", SDK, "--json", str(out),
                          "transactions"], capture_output=True, text=True, timeout=1500, cwd=ROOT)
    assert out.is_file(), run.stdout[-3000:] + run.stderr[-3000:]
    summary = json.loads(out.read_text())
    rows = {r["test"]: r for r in summary["rows"]}
    assert len(rows) == 25, run.stdout
    failed = {t for t, r in rows.items() if r["outcome"] != "passed"}
    assert failed == REFUSED, run.stdout
    assert all(rows[t]["refused"].endswith("writes at most 2 (BatchMax)") for t in REFUSED), run.stdout
    assert summary["other_failures"] == 0 and summary["rejected"] == 0, run.stdout
    # a session whose transactions never reached the engine (rolled back before the SDK named its offsets) is empty
    verdicts = [r["verdict"].split(" ")[0] for r in rows.values()]
    assert set(verdicts) == {"accepted", "empty"} and verdicts.count("accepted") == 16, run.stdout
    assert run.returncode == 0, run.stdout
