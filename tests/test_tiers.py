"""The CI tier (tests/tiers.py): the core every time, and each other test in exactly one shard."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import tiers

TESTS = Path(__file__).resolve().parent


class FakeItem:
    def __init__(self, nodeid: str, *markers: str) -> None:
        self.nodeid = nodeid
        self.markers = set(markers)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_each_smoke_test_names_a_test_function_that_exists() -> None:
    for nodeid in tiers.SMOKE:
        path, _, rest = nodeid.partition("::")
        name = rest.partition("[")[0]
        assert re.search(rf"^def {name}\(", (TESTS.parent / path).read_text(encoding="utf-8"), re.M), nodeid


def test_the_core_runs_every_time_and_each_other_test_in_one_shard() -> None:
    items = [FakeItem("tests/test_cli.py::test_a"),  # no heavy marker: core
             FakeItem("tests/test_models.py::test_m[x]", "tlc"),  # a model's pins: core
             FakeItem("tests/test_models.py::test_m[y]", "tlc", "long"),  # a long model: a shard
             FakeItem("tests/test_docs.py::test_d[a.md#1]", "tlc", "core"),
             FakeItem(next(iter(tiers.SMOKE)), "tlc"),
             *(FakeItem(f"tests/test_windows.py::test_w[{k}]", "tlc") for k in range(200))]
    core = [i for i in items if tiers.core(i)]  # type: ignore[arg-type]
    assert [i.nodeid for i in core] == [i.nodeid for i in items[:2]] + [items[3].nodeid, items[4].nodeid]
    seen: dict[str, int] = {}
    for shard in range(tiers.SHARDS):
        kept, left = tiers.select(items, shard, times={})  # type: ignore[arg-type]
        assert all(i in kept for i in core) and len(kept) + len(left) == len(items)
        for i in kept:
            if i not in core:
                assert i.nodeid not in seen, f"{i.nodeid} in shards {seen[i.nodeid]} and {shard}"
                seen[i.nodeid] = shard
    assert len(seen) == len(items) - len(core)  # every other test in one shard
    assert tiers.select(items, None) == (items, [])  # every shard: all


def test_a_shard_is_given_by_hand(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(tiers.SHARD_ENV, "3")
    assert tiers.this_shard() == 3
    monkeypatch.setenv(tiers.SHARD_ENV, "all")
    assert tiers.this_shard() is None
    monkeypatch.setenv(tiers.SHARD_ENV, "three")
    with pytest.raises(pytest.UsageError, match="TXCONFORM_SHARD='three'"):
        tiers.this_shard()


def test_timed_tests_are_dealt_the_longest_first_into_the_emptiest_shard() -> None:
    times = {f"t{k}": float(k) for k in range(1, 65)}  # 64 tests of 1 to 64 s: 130 s a shard at best
    dealt = tiers.shards([*times, "untimed"], times)
    load = [sum(times[n] for n, k in dealt.items() if k == shard and n in times) for shard in range(tiers.SHARDS)]
    assert max(load) - min(load) <= 10 and sum(load) == sum(times.values())
    assert dealt["untimed"] == tiers.shard_of("untimed")
    assert tiers.shards(list(reversed([*times, "untimed"])), times) == dealt  # the same in any order


def test_the_tests_of_a_module_that_shares_a_server_are_dealt_together() -> None:
    """A module of TOGETHER (its module-scoped fixture starts a real server) is one unit: all its
    tests in one shard, timed or not, so that a CI run starts the server once."""
    module = next(iter(tiers.TOGETHER))
    tests = [f"{module}::test_{k}" for k in range(12)]
    times = {tests[0]: 30.0, tests[1]: 5.0} | {f"t{k}": float(k) for k in range(1, 40)}
    dealt = tiers.shards([*tests, *(n for n in times if n.startswith("t"))], times)
    assert len({dealt[n] for n in tests}) == 1
    untimed = tiers.shards(tests[2:], {})
    assert set(untimed.values()) == {tiers.shard_of(module)}
    assert tiers.unit_of("tests/test_cli.py::test_a") == "tests/test_cli.py::test_a"


def test_the_recorded_times_are_read(tmp_path: Path) -> None:
    junit = tmp_path / "run.xml"
    junit.write_text('<testsuites><testsuite><testcase classname="tests.test_x" name="test_a[1]" time="12.34"/>'
                     '<testcase classname="tests.test_x" name="test_b" time="0.2"/></testsuite></testsuites>')
    out = tmp_path / "durations.json"
    assert tiers.write_durations(junit, out) == 1
    assert out.read_text().count("tests/test_x.py::test_a[1]") == 1
    assert tiers.recorded()  # the repository's own file parses
