"""C5, dependency cycles: Elle's G0, G1c and G2 in a Kafka client history (Jepsen's queue workload).

The graph is the one jepsen-io/jepsen's ``jepsen/src/jepsen/tests/kafka.clj`` builds (its analysis,
step 4), over the ok ops (transactions) of a client history, each key (topic, partition) ordered by
offset (the version order: the offsets sends were given and polls returned, numbered densely):

- ``ww``: T1 sent the version just before the one T2 sent on a key;
- ``wr``: T2's highest read of a key is the version T1 sent;
- ``rw``: T1's highest read of a key is the version just before the one T2 sent;
- ``process``: T1 is the op of the process just before T2 (Elle's process order).

The edges are computed on Spark (windows and joins over the staged ``writes`` and ``reads``); they
are collected, as Elle holds its graph in one process, and searched for cycles on the driver:
strongly connected components (Tarjan), then in each a shortest cycle of each kind, named as Elle
names them: ``G0`` (ww only), ``G1c`` (ww and wr, at least one wr), ``G-single`` (exactly one rw)
and ``G2-item`` (more than one rw); a cycle that needs a process edge takes the suffix
``-process``. Each cycle is one violation, its detail the cycle's operations and why each precedes
the next.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from .base import Check, Derived, memo

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

Op = tuple[str, str, int]  # (trace_id, process, op_index)
DATA = ("ww", "wr", "rw")


@attrs.frozen
class Edge:
    src: Op
    dst: Op
    rel: str  # ww, wr, rw, process
    topic: str | None = None
    partition: int | None = None
    why: str = ""


def _sends(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    return d.t.writes.where((F.col("source") != "trace") & (F.col("outcome") == "ok") & F.col("offset").isNotNull())


def _polls(d: Derived) -> DataFrame:
    from pyspark.sql import functions as F

    return d.t.reads.where(
        (F.col("source") != "trace") & (F.col("op_type") == "ok") & F.col("op_f").isin("poll", "txn") & F.col("offset").isNotNull()
    )


def edges_frame(d: Derived) -> DataFrame:
    """Every edge of the dependency graph: src and dst ops, the relation, the key and its offsets."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    def make() -> DataFrame:
        key = ["trace_id", "topic", "partition"]
        sends = _sends(d).select(*key, "offset", "process", "op_index")
        polls = _polls(d).select(*key, "offset", "process", "op_index")
        versions = sends.select(*key, "offset").unionByName(polls.select(*key, "offset")).distinct()
        versions = versions.withColumn("idx", F.dense_rank().over(Window.partitionBy(*key).orderBy("offset")))
        writer = sends.join(versions, on=[*key, "offset"]).select(*key, "idx", "offset", F.col("process").alias("wp"), F.col("op_index").alias("wi"))
        nxt = writer.select(*key, (F.col("idx") - 1).alias("idx"), F.col("offset").alias("offset2"), F.col("wp").alias("wp2"), F.col("wi").alias("wi2"))
        ww = writer.join(nxt, on=[*key, "idx"]).select(
            "trace_id", F.col("wp").alias("sp"), F.col("wi").alias("si"), F.col("wp2").alias("dp"), F.col("wi2").alias("di"),
            F.lit("ww").alias("rel"), "topic", "partition", "offset", "offset2",
        )  # fmt: skip
        top = polls.groupBy(*key, "process", "op_index").agg(F.max("offset").alias("offset")).join(versions, on=[*key, "offset"])
        wr = top.join(writer, on=[*key, "idx", "offset"]).select(
            "trace_id", F.col("wp").alias("sp"), F.col("wi").alias("si"), F.col("process").alias("dp"), F.col("op_index").alias("di"),
            F.lit("wr").alias("rel"), "topic", "partition", "offset", F.col("offset").alias("offset2"),
        )  # fmt: skip
        rw = top.join(nxt, on=[*key, "idx"]).select(
            "trace_id", F.col("process").alias("sp"), F.col("op_index").alias("si"), F.col("wp2").alias("dp"), F.col("wi2").alias("di"),
            F.lit("rw").alias("rel"), "topic", "partition", "offset", "offset2",
        )  # fmt: skip
        ops = sends.select("trace_id", "process", "op_index").unionByName(polls.select("trace_id", "process", "op_index")).distinct()
        follow = Window.partitionBy("trace_id", "process").orderBy("op_index")
        process = (
            ops.withColumn("di", F.lead("op_index").over(follow))
            .where(F.col("di").isNotNull())
            .select(
                "trace_id", F.col("process").alias("sp"), F.col("op_index").alias("si"), F.col("process").alias("dp"), "di",
                F.lit("process").alias("rel"), F.lit(None).cast("string").alias("topic"), F.lit(None).cast("int").alias("partition"),
                F.lit(None).cast("long").alias("offset"), F.lit(None).cast("long").alias("offset2"),
            )
        )  # fmt: skip
        union = ww.unionByName(wr).unionByName(rw).unionByName(process)
        return union.where((F.col("sp") != F.col("dp")) | (F.col("si") != F.col("di")))

    return memo(d, "c5_edges", make)


def as_edges(rows: Iterable[Any]) -> list[Edge]:
    out = []
    for r in rows:
        src, dst = (r["trace_id"], r["sp"], int(r["si"])), (r["trace_id"], r["dp"], int(r["di"]))
        if r["rel"] == "ww":
            why = f"{_name(src)} sent offset {r['offset']} of {r['topic']}-{r['partition']}, and {_name(dst)} the next one, {r['offset2']}"
        elif r["rel"] == "wr":
            why = f"{_name(dst)}'s highest read of {r['topic']}-{r['partition']} was offset {r['offset']}, which {_name(src)} sent"
        elif r["rel"] == "rw":
            why = f"{_name(src)}'s highest read of {r['topic']}-{r['partition']} was offset {r['offset']}, and {_name(dst)} sent the next one, {r['offset2']}"
        else:
            why = f"process {src[1]} ran op {src[2]} before op {dst[2]}"
        out.append(Edge(src, dst, r["rel"], r["topic"], r["partition"], why))
    return out


def _name(op: Op) -> str:
    return f"process {op[1]}'s op {op[2]}"


def _components(nodes: set[Op], adj: dict[Op, list[Edge]]) -> list[set[Op]]:
    """Strongly connected components of more than one node (Tarjan's algorithm, iterative)."""
    index: dict[Op, int] = {}
    low: dict[Op, int] = {}
    stack: list[Op] = []
    on: set[Op] = set()
    out: list[set[Op]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = len(index)
                stack.append(v)
                on.add(v)
            succ = adj.get(v, [])
            if i < len(succ):
                work.append((v, i + 1))
                w = succ[i].dst
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            for e in succ:
                if e.dst in on and index[e.dst] > index[v]:
                    low[v] = min(low[v], low[e.dst])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(comp)
    return out


def _path(adj: dict[Op, list[Edge]], start: Op, goal: Op, within: set[Op], rels: set[str]) -> list[Edge] | None:
    """A shortest path from ``start`` to ``goal`` inside ``within`` over edges of ``rels`` (BFS)."""
    seen = {start: None}
    prev: dict[Op, Edge] = {}
    todo = deque([start])
    while todo:
        v = todo.popleft()
        if v == goal:
            path = []
            while v != start:
                e = prev[v]
                path.append(e)
                v = e.src
            return path[::-1]
        for e in adj.get(v, []):
            if e.rel in rels and e.dst in within and e.dst not in seen:
                seen[e.dst] = None
                prev[e.dst] = e
                todo.append(e.dst)
    return None


def _cycle_with(adj: dict[Op, list[Edge]], comp: set[Op], through: set[str], back: set[str]) -> list[Edge] | None:
    """A shortest cycle in ``comp`` that takes an edge of ``through`` and returns over edges of ``back``."""
    best: list[Edge] | None = None
    for v in sorted(comp):
        for e in adj.get(v, []):
            if e.rel in through and e.dst in comp:
                rest = _path(adj, e.dst, e.src, comp, back)
                if rest is not None and (best is None or len(rest) + 1 < len(best)):
                    best = [e, *rest]
    return best


# Elle's kinds, weakest first: the edge a cycle must take, and the edges it may return over. A
# G2-item is looked for only where no G-single is (a cycle with one rw is the stronger finding).
KINDS = (
    ("G0", {"ww"}, {"ww"}),
    ("G1c", {"wr"}, {"ww", "wr"}),
    ("G-single", {"rw"}, {"ww", "wr"}),
    ("G2-item", {"rw"}, {"ww", "wr", "rw"}),
)


def find_cycles(edges: list[Edge]) -> list[tuple[str, list[Edge]]]:
    """Elle's cycle anomalies in a dependency graph: per strongly connected component, a shortest
    cycle of each kind that occurs there; with process edges, only the cycles that need one."""
    found: list[tuple[str, list[Edge]]] = []
    for with_process in (False, True):
        extra = {"process"} if with_process else set()
        adj: dict[Op, list[Edge]] = {}
        nodes: set[Op] = set()
        for e in edges:
            if e.rel in DATA or with_process:
                adj.setdefault(e.src, []).append(e)
                nodes |= {e.src, e.dst}
        for comp in _components(nodes, adj):
            kinds: set[str] = set()
            for name, through, back in KINDS:
                if name == "G2-item" and "G-single" in kinds:
                    continue
                cycle = _cycle_with(adj, comp, through, back | extra)
                if cycle is None:
                    continue
                kinds.add(name)
                if with_process and not any(e.rel == "process" for e in cycle):
                    continue  # found without process edges already
                found.append((name + ("-process" if with_process else ""), cycle))
    return found


def describe(cycle: list[Edge]) -> str:
    """The cycle as Elle explains one: its operations, then why each precedes the next."""
    ops = [e.src for e in cycle]
    names = {op: f"T{i + 1}" for i, op in enumerate(ops)}
    let = "; ".join(f"{names[op]} = {_name(op)}" for op in ops)
    then = "; ".join(f"{names[e.src]} < {names[e.dst]} ({e.rel}): {e.why}" for e in cycle)
    return f"{let}. {then}: a cycle"


def c5_cycles(d: Derived) -> DataFrame:
    from spark_replay.partition_pass import VIOLATION_COLUMNS

    rows = []
    for name, cycle in find_cycles(as_edges(edges_frame(d).collect())):
        first = min((e.src for e in cycle), key=lambda op: op[2])
        keyed = next((e for e in cycle if e.topic is not None), None)
        rows.append(
            {"check": "C5", "kind": name, "trace_id": first[0], "topic": keyed.topic if keyed else None, "partition": keyed.partition if keyed else None,
             "producer_id": None, "offset": None, "event": first[2], "ts_ms": None, "txn_id": None, "detail": describe(cycle)}
        )  # fmt: skip
    schema = (
        "check string, kind string, trace_id string, topic string, partition int, producer_id long, offset long, event long, ts_ms long, "
        "txn_id string, detail string"
    )
    return d.t.spark.createDataFrame([tuple(r[c] for c in VIOLATION_COLUMNS) for r in rows], schema)


def _ops(d: Derived) -> DataFrame:
    """The ops of the graph: every end of an edge."""
    edges = edges_frame(d)
    return edges.selectExpr("trace_id", "sp AS p", "si AS i").union(edges.selectExpr("trace_id", "dp AS p", "di AS i")).distinct()


def _inapplicable(d: Derived) -> str:
    return "" if _sends(d).limit(1).count() else "no client history's acknowledged send (Jepsen, the probe's clients) in the input"


C5_CHECK = Check(
    "C5",
    "dependency cycles",
    "Serializability",
    "G0, G1c, G-single, G2-item",
    ("writes", "reads"),
    "transactions (ok ops)",
    c5_cycles,
    lambda d: _ops(d).count(),
    inapplicable=_inapplicable,
    default=False,  # run with --checks C5: the default suite's reports (and the docs that show them) are unchanged
)
