"""The tool output quoted in README.md and docs/ is what the tool prints now.

scripts/gen_docs.py fills every ``<!-- txconform: ... -->`` block by running the command; this test
runs them again and compares, ignoring only wall-clock times.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
gen_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_docs)

pytestmark = pytest.mark.tlc


def blocks(path: Path) -> list[tuple[str, str, str]]:
    return [(m.group("kind"), m.group("args"), m.group("body")) for m in gen_docs.BLOCK.finditer(path.read_text())]


@pytest.mark.parametrize("path", gen_docs.doc_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_generated_blocks_match_a_fresh_run(path: Path) -> None:
    if not (Path(sys.executable).parent / "txconform").exists():
        pytest.skip("the txconform console script is not installed in this environment")
    for kind, args, body in blocks(path):
        fresh = gen_docs.render(kind, args)
        assert gen_docs.comparable(fresh) == gen_docs.comparable(body), (
            f"{path.name}: the block for `{args}` is out of date; run `python scripts/gen_docs.py`"
        )


def test_every_doc_with_counterexamples_has_generated_blocks() -> None:
    walkthrough = blocks(ROOT / "docs" / "resharding.md")
    traced = {args.split()[-1] for kind, args, _ in walkthrough if "--traces" in args}
    assert {"resharding_naive", "resharding_txn_no_check", "resharding_txn_no_check_order"} <= traced
    assert all(body.strip() for _, _, body in walkthrough), "an empty generated block: run scripts/gen_docs.py"


def test_comparison_ignores_times_and_the_table_width_they_cause() -> None:
    a = "│ m │ 9.8 s │\n└───┴───────┘"
    b = "│ m │ 11.0 s │\n└───┴────────┘"
    assert gen_docs.comparable(a) == gen_docs.comparable(b)
    assert gen_docs.comparable("│ 576 │") != gen_docs.comparable("│ 577 │"), "state counts must still be compared"
