"""Which tests ``make test`` runs (CI: ``pytest --tier ci``) and which ``make test-all`` adds.

CI runs on every stop on 2 cores, and the whole suite takes 45-55 minutes there, mostly TLC's model
checks and trace checks, Spark's replays and the real brokers' starts. ``--tier ci`` keeps it near
15 minutes and still checks every claim over a few stops:

- the core, run every time: every test that starts no TLC, Spark, broker or browser (``make
  quick``'s), every registered model's outcome and pins but those of shared_runs.LONG_MODELS, the
  docs blocks that model-check only the others (TLC runs each model once for both), and SMOKE, a
  few short tests of each subsystem (trace checks, windows, replay, serve, the YDB and C*One
  checkers, the hypothesis runs);
- one shard of the rest, in turn: the other tests are dealt into SHARDS shards, those with a time
  in DURATIONS (a fresh-clone run's, tests/durations.json: ``python tests/tiers.py JUNIT.xml``
  writes it) the longest first into the shard with the least time so far, the others by a hash of
  their node id; the run of a commit takes the shard of its number of commits (``git rev-list
  --count HEAD``), so SHARDS successive commits run every test once. ``TXCONFORM_SHARD=K`` picks
  a shard by hand (``all``: every shard, what ``make test-all`` runs). The tests of a module of
  TOGETHER, which share a real server, are dealt as one, so a shard starts it once.

A test marked ``long`` is never in the core. The run's header names the shard it took.
"""

from __future__ import annotations

import heapq
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARDS = 16
SHARD_ENV = "TXCONFORM_SHARD"
DURATIONS = Path(__file__).resolve().parent / "durations.json"
# The markers of tests that start TLC, Spark, a broker or a browser (Makefile: QUICK leaves them out).
HEAVY = ("tlc", "spark", "spark_cluster", "probe", "hypothesis_runs", "browser")

# A few short tests of each subsystem the core would otherwise leave to the shards (CI's log of
# this session: each 2 to 15 s).
SMOKE = frozenset({
    "tests/test_trace_validation.py::test_a_run_of_the_reference_broker_is_accepted",
    "tests/test_trace_validation.py::test_a_changed_answer_is_rejected_at_its_event_with_the_state_before",
    "tests/test_trace_validation.py::test_cli_simulate_then_check",
    "tests/test_windows.py::test_a_boundary_anywhere_gives_the_whole_trace_verdict[after a failover]",
    "tests/test_windows.py::test_every_protocol_checks_in_windows[cone-album:adders=2,retaggers=1-all]",
    "tests/test_parallel_windows.py::test_at_the_end_in_parallel",
    "tests/test_replay.py::test_a_zoo_bug_trips_its_check[no_idempotence]",
    "tests/test_serve.py::test_librdkafka_commits_and_aborts_and_a_read_committed_consumer_skips_the_aborted",
    "tests/test_serve.py::test_kafka_python_transactions_are_accepted",
    "tests/test_serve.py::test_a_zombie_is_fenced_by_its_successor_and_its_records_are_aborted",
    "tests/test_serve_ydb.py::test_a_committed_copy_publishes_its_writes_and_commits_the_read_offsets[checked]",
    "tests/test_ydb_check.py::test_what_an_event_does_not_log_is_left_free",
    "tests/test_cone.py::test_a_trace_that_logs_only_its_keys_is_accepted_and_a_wrong_key_is_caught",
    "tests/test_tlc.py::test_violation_names_the_invariant_and_parses_the_trace",
    "tests/test_tlc.py::test_holds_reports_statistics",
    "tests/test_hypothesis_runs.py::test_the_checker_catches_every_bug_of_the_zoo[no_idempotence]",
})


def core(item: pytest.Item) -> bool:
    """Whether ``--tier ci`` runs ``item`` every time."""
    if item.get_closest_marker("long"):
        return False
    if item.get_closest_marker("core") or item.nodeid in SMOKE:
        return True
    if item.nodeid.startswith("tests/test_models.py::"):
        return True
    return not any(item.get_closest_marker(m) for m in HEAVY)


def shard_of(nodeid: str) -> int:
    """The shard of a test with no recorded time."""
    return zlib.crc32(nodeid.encode()) % SHARDS


def recorded() -> dict[str, float]:
    try:
        return {str(k): float(v) for k, v in json.loads(DURATIONS.read_text(encoding="utf-8")).items()}
    except (OSError, ValueError, AttributeError):
        return {}


# The modules whose tests share a real server that a module-scoped fixture starts (a Cassandra node
# takes 30-40 s, three nodes 95-143 s): their tests are dealt as one, so that one shard starts it once.
TOGETHER = frozenset({"tests/test_cassandra_target.py"})


def unit_of(nodeid: str) -> str:
    """What is dealt to a shard as one: a test, or the module of TOGETHER it is in."""
    module = nodeid.partition("::")[0]
    return module if module in TOGETHER else nodeid


def shards(nodeids: list[str], times: dict[str, float]) -> dict[str, int]:
    """Each test's shard: the units (unit_of) with a time (their tests' recorded times added up) the
    longest first into the shard with the least time so far (ties by name, so every process deals
    alike), the others by shard_of."""
    units: dict[str, list[str]] = {}
    for n in nodeids:
        units.setdefault(unit_of(n), []).append(n)
    took = {u: sum(times[n] for n in ns if n in times) for u, ns in units.items() if any(n in times for n in ns)}
    load = [(0.0, k) for k in range(SHARDS)]
    dealt = {}
    for unit in sorted(took, key=lambda u: (-took[u], u)):
        total, k = heapq.heappop(load)
        dealt[unit] = k
        heapq.heappush(load, (total + took[unit], k))
    return {n: dealt[u] if u in dealt else shard_of(u) for u, ns in units.items() for n in ns}


def this_shard() -> int | None:
    """The shard this run takes: $TXCONFORM_SHARD, else the commit count of HEAD; None: all."""
    given = os.environ.get(SHARD_ENV, "").strip()
    if given == "all":
        return None
    if given:
        try:
            return int(given) % SHARDS
        except ValueError:
            raise pytest.UsageError(f"{SHARD_ENV}={given!r}: give a shard number 0..{SHARDS - 1} or 'all'") from None
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=True).stdout.strip()

    try:
        if git("rev-parse", "--is-shallow-repository") == "true":  # a shallow clone counts 1 commit: take the commit's hash
            return int(git("rev-parse", "HEAD")[:8], 16) % SHARDS
        return int(git("rev-list", "--count", "HEAD")) % SHARDS
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0  # no git: the first shard


def select(items: list[pytest.Item], shard: int | None, times: dict[str, float] | None = None) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """The items the tier runs, and those it leaves out."""
    if shard is None:
        return items, []
    others = [i.nodeid for i in items if not core(i)]
    dealt = shards(others, recorded() if times is None else times)
    kept = [i for i in items if core(i) or dealt[i.nodeid] == shard]
    ids = {id(i) for i in kept}
    return kept, [i for i in items if id(i) not in ids]


def write_durations(junit: Path, out: Path = DURATIONS) -> int:
    """DURATIONS from a JUnit XML of a whole run (``PYTEST_ADDOPTS=--junitxml=X make test-all``):
    each test of a second or more."""
    times = {}
    for case in ET.parse(junit).iter("testcase"):
        module = "tests/" + case.get("classname", "").split(".")[-1] + ".py"
        seconds = float(case.get("time", "0"))
        if seconds >= 1.0:
            times[f"{module}::{case.get('name')}"] = round(seconds, 1)
    out.write_text(json.dumps(dict(sorted(times.items())), indent=0) + "\n", encoding="utf-8")
    return len(times)


if __name__ == "__main__":
    if len(sys.argv) != 2 or not Path(sys.argv[1]).is_file():
        print("usage: python tests/tiers.py JUNIT.xml   (a whole run's JUnit XML: writes tests/durations.json)", file=sys.stderr)
        sys.exit(2)
    print(f"tiers: {write_durations(Path(sys.argv[1]))} tests' times written to {DURATIONS}")
