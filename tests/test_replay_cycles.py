"""C5, Elle's cycle anomalies in Kafka client histories (spark_replay/checks/cycles.py).

The cycle search is compared with a brute-force enumeration of every simple cycle on random small
graphs (pure Python); then one replay (the process's local Spark, conftest.py's ``local_spark``) of
hand-made Jepsen histories, each with one known cycle, and of clean ones, finds exactly those.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path
from typing import Any

import pytest

from spark_replay.checks.cycles import Edge, describe, find_cycles

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning"),
]


def _op(i: int) -> tuple[str, str, int]:
    return ("h", str(i % 3), i)


def _simple_cycles(edges: list[Edge]) -> list[list[Edge]]:
    """Every simple cycle (as its edges), by brute force: each start node, every path back to it
    through nodes above it."""
    adj: dict[Any, list[Edge]] = {}
    for e in edges:
        adj.setdefault(e.src, []).append(e)
    out: list[list[Edge]] = []

    def walk(start: Any, v: Any, path: list[Edge], seen: set[Any]) -> None:
        for e in adj.get(v, []):
            if e.dst == start:
                out.append([*path, e])
            elif e.dst > start and e.dst not in seen:
                walk(start, e.dst, [*path, e], seen | {e.dst})

    for start in sorted(adj):
        walk(start, start, [], {start})
    return out


def _kinds_brute(edges: list[Edge]) -> set[str]:
    """Elle's kinds that some cycle of the graph has (a cycle's kind by its edges)."""
    kinds = set()
    for cycle in _simple_cycles(edges):
        rels = [e.rel for e in cycle]
        rw = rels.count("rw")
        base = "G0" if set(rels) <= {"ww", "process"} else "G1c" if rw == 0 else "G-single" if rw == 1 else "G2-item"
        kinds.add(base + ("-process" if "process" in rels else ""))
    return kinds


def test_the_cycle_search_finds_the_kinds_every_cycle_has() -> None:
    """On random graphs of 2 to 6 ops: a kind without -process is found iff some cycle of that kind
    avoids process edges; a -process kind is only found when every cycle of it needs a process edge;
    a G2-item only where no G-single is, in its component. Every cycle found is one."""
    rng = random.Random(53)
    compared = 0
    for _ in range(600):
        n = rng.randint(2, 6)
        edges = [
            Edge(_op(a), _op(b), rng.choice(("ww", "ww", "wr", "rw", "process")))
            for a, b in itertools.permutations(range(n), 2)
            if rng.random() < 0.3
        ]
        found = find_cycles(edges)
        names = {name for name, _ in found}
        brute = _kinds_brute(edges)
        for name, cycle in found:  # each is a cycle of its kind
            assert all(a.dst == b.src for a, b in itertools.pairwise([*cycle, cycle[0]])), name
            assert name in brute, (name, brute)
        plain = {k for k in brute if not k.endswith("-process")}
        for k in ("G0", "G1c", "G-single"):
            assert (k in names) == (k in plain), (k, names, brute, edges)
        if "G2-item" in plain and "G-single" not in plain:
            assert "G2-item" in names
        compared += bool(brute)
    assert compared > 200  # the random graphs did have cycles


def test_a_cycle_is_told_as_elle_tells_it() -> None:
    t1, t2 = _op(1), _op(2)
    cycle = [Edge(t1, t2, "ww", "t0", 0, "w1"), Edge(t2, t1, "ww", "t0", 1, "w2")]
    assert find_cycles(cycle) == [("G0", cycle)]
    assert describe(cycle) == "T1 = process 1's op 1; T2 = process 2's op 2. T1 < T2 (ww): w1; T2 < T1 (ww): w2: a cycle"


# --- on Spark, from Jepsen histories -------------------------------------------------------------

# Hand-made histories (keys 0 and 1 are t0-0 and t0-1), each with the cycle kinds C5 must find.
HISTORIES: dict[str, tuple[str, set[str]]] = {
    # two transactions send to both keys in opposite orders: ww both ways
    "g0": (
        """
        {:index 0, :type :invoke, :process 0, :f :txn, :value [[:send 0 1] [:send 1 1]]}
        {:index 1, :type :invoke, :process 1, :f :txn, :value [[:send 0 2] [:send 1 2]]}
        {:index 2, :type :ok, :process 0, :f :txn, :value [[:send 0 [0 1]] [:send 1 [1 1]]]}
        {:index 3, :type :ok, :process 1, :f :txn, :value [[:send 0 [1 2]] [:send 1 [0 2]]]}
        """,
        {"G0"},
    ),
    # each transaction reads what the other sent: wr both ways
    "g1c": (
        """
        {:index 0, :type :ok, :process 0, :f :txn, :value [[:send 0 [0 1]] [:poll {1 [[0 5]]}]]}
        {:index 1, :type :ok, :process 1, :f :txn, :value [[:send 1 [0 5]] [:poll {0 [[0 1]]}]]}
        """,
        {"G1c"},
    ),
    # T1 reads key 0 before T2's send, and T2's send to key 1 (read by T1): rw then wr
    "gsingle": (
        """
        {:index 0, :type :ok, :process 2, :f :send, :value [[:send 0 [0 0]]]}
        {:index 1, :type :ok, :process 0, :f :poll, :value [[:poll {0 [[0 0]], 1 [[0 5]]}]]}
        {:index 2, :type :ok, :process 1, :f :send, :value [[:send 0 [1 7]] [:send 1 [0 5]]]}
        """,
        {"G-single"},
    ),
    # write skew: each reads the initial version of the key the other then sends to: rw both ways
    "g2": (
        """
        {:index 0, :type :ok, :process 2, :f :send, :value [[:send 0 [0 0]] [:send 1 [0 0]]]}
        {:index 1, :type :ok, :process 0, :f :txn, :value [[:poll {0 [[0 0]]}] [:send 1 [1 1]]]}
        {:index 2, :type :ok, :process 1, :f :txn, :value [[:poll {1 [[0 0]]}] [:send 0 [1 1]]]}
        """,
        {"G2-item"},
    ),
    # a process sends at offset 1, then its next op at offset 0: ww against the process order
    "g0process": (
        """
        {:index 0, :type :ok, :process 0, :f :send, :value [[:send 0 [1 1]]]}
        {:index 1, :type :ok, :process 0, :f :send, :value [[:send 0 [0 2]]]}
        """,
        {"G0-process"},
    ),
    # serial: each reads what the one before sent
    "serial": (
        """
        {:index 0, :type :ok, :process 0, :f :send, :value [[:send 0 [0 0]]]}
        {:index 1, :type :ok, :process 1, :f :txn, :value [[:poll {0 [[0 0]]}] [:send 1 [0 1]]]}
        {:index 2, :type :ok, :process 2, :f :poll, :value [[:poll {0 [[0 0]], 1 [[0 1]]}]]}
        {:index 3, :type :ok, :process 0, :f :send, :value [[:send 0 [1 3]]]}
        {:index 4, :type :ok, :process 2, :f :poll, :value [[:poll {0 [[1 3]]}]]}
        """,
        set(),
    ),
}


@pytest.fixture(scope="module")
def cycles(local_spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One replay (check C5) of the histories and of tests/fixtures/jepsen/history.edn (clean)."""
    pytest.importorskip("edn_format")
    import pyarrow.parquet as pq

    from spark_replay.adapters import FORMATS
    from spark_replay.replay import ReplayOptions, run_replay

    tmp = tmp_path_factory.mktemp("cycles")
    paths = [Path(__file__).parent / "fixtures" / "jepsen" / "history.edn"]
    for name, (text, _) in HISTORIES.items():
        paths.append(tmp / f"{name}.edn")
        paths[-1].write_text("\n".join(line.strip() for line in text.strip().splitlines()) + "\n")
    report = run_replay(paths, FORMATS, ReplayOptions(spark_factory=lambda: local_spark, out=tmp / "out", checks=["C5"]))
    found: dict[str, list[dict[str, Any]]] = {}
    root = tmp / "out" / "violations"
    for d in root.iterdir() if root.is_dir() else []:
        for row in pq.read_table(d).to_pylist():
            found.setdefault(Path(row["trace_id"]).stem, []).append(row)
    return {"report": report, "found": found}


@pytest.mark.spark
@pytest.mark.parametrize("name", list(HISTORIES))
def test_a_history_gives_its_cycles_and_no_other(cycles: dict[str, Any], name: str) -> None:
    assert {v["kind"] for v in cycles["found"].get(name, [])} == HISTORIES[name][1]


@pytest.mark.spark
def test_the_fixture_history_has_no_cycle_and_a_cycle_names_its_ops(cycles: dict[str, Any]) -> None:
    assert "history" not in cycles["found"]
    (c5,) = cycles["report"].outcomes
    assert c5.status == "violated" and c5.entities > 0
    (g0,) = cycles["found"]["g0"]
    assert (g0["topic"], g0["event"]) == ("t0", 2)
    assert g0["detail"].startswith("T1 = process 0's op 2; T2 = process 1's op 3. T1 < T2 (ww): process 0's op 2 sent offset 0 of t0-0")
