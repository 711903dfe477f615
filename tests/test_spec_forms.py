"""Rewritten invariants mean what they meant: a faster form of an invariant must equal its first
form in every state of a model that reaches states where the invariant fails."""

from __future__ import annotations

from pathlib import Path

import attrs
import pytest

from trace_check.engines.runner import run_task
from trace_check.models.registry import load_registry
from trace_check.models.result import Outcome

REGISTRY = load_registry(Path(__file__).resolve().parents[1] / "specs" / "kafka" / "models.toml")

pytestmark = pytest.mark.tlc


def test_atomicity_through_fates_equals_atomicity_through_pairs(tmp_path: Path) -> None:
    torn = next(m for m in REGISTRY.models if m.name == "kafka_tv1_late_endtxn_torn")
    assert torn.expect == "violates Atomicity"  # its states include ones where Atomicity fails
    agree = attrs.evolve(torn.task, invariants=("AtomicityFormsAgree",))
    r = run_task("tlc", agree, tmp_path)
    assert r.outcome is Outcome.HOLDS, f"{r.message} (log: {r.log_file})"
    # every state, past the first violation the registered model stops at
    assert r.distinct_states is not None and torn.distinct_states is not None and r.distinct_states > torn.distinct_states


# Models whose states hold what each log operator reads: aborted and torn transactions, the
# inclusive LSO, duplicates, gaps in sequences, restarts, expiry, unclean elections, zombies, a
# transaction torn across partitions. All but kafka_zombie_never_commits are models of a bug, whose
# states include ones where an invariant fails.
LOG_FORM_MODELS = (
    "kafka_tv1_late_endtxn_torn",
    "kafka_lso_inclusive",
    "kafka_no_idempotence",
    "kafka_restart_forgets_producers",
    "kafka_restart_state_lost",
    "kafka_tv2_no_lowest_sequence",
    "kafka_tv1v_verify_pending",
    "kafka_early_producer_expiry",
    "kafka_unclean_election",
    "kafka_zombie_never_commits",
    "kafka_tv1_hanging",  # a record committed in one partition and aborted in the other (AtomicityNow fails)
)


# The models whose forms check takes half a minute or more on 2 cores are outside CI's core (the
# marker `long`: tests/tiers.py runs them in their shard's turn); the core checks the other five.
LONG_FORM_MODELS = {"kafka_tv2_no_lowest_sequence", "kafka_zombie_never_commits", "kafka_tv1_hanging", "kafka_no_idempotence",
                    "kafka_tv1_late_endtxn_torn", "kafka_early_producer_expiry"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.long) if n in LONG_FORM_MODELS else n for n in LOG_FORM_MODELS])
def test_log_operators_equal_their_first_forms(tmp_path: Path, name: str) -> None:
    model = next(m for m in REGISTRY.models if m.name == name)
    forms = model.task.spec_file.with_name("MCKafkaTxnForms.tla")
    # (every form on every prefix of every state takes longer than the model, whose timeout is
    # set for the model: kafka_zombie_never_commits took 59 s alone, 24 s since SinceStep reads
    # the invariants after a step through InState instead of priming them)
    agree = attrs.evolve(model.task, spec_file=forms, invariants=("LogFormsAgree", "SinceFormsAgree", "IndexMeans"),
                         properties=("SinceFormsAgreeOnSteps", "LogsGrowOrAreCut"), timeout=max(model.task.timeout, 600))
    r = run_task("tlc", agree, tmp_path)
    assert r.outcome is Outcome.HOLDS, f"{r.message} (log: {r.log_file})"
    assert r.distinct_states is not None and model.distinct_states is not None and r.distinct_states >= model.distinct_states


def test_the_searches_of_the_log_operators_find_the_first_and_the_last_entry_across_blocks(tmp_path: Path) -> None:
    """KafkaLog's FirstFrom and LastUpTo search block by block (64 entries); compared with the
    least and greatest element of the set of matches, over ranges that start, end and match on
    either side of block boundaries, and with no match at all."""
    import shutil
    import subprocess

    from trace_check.engines.tlc_tools import find_java, find_tla2tools

    shutil.copy(Path(__file__).resolve().parents[1] / "specs" / "kafka" / "KafkaLog.tla", tmp_path)
    (tmp_path / "SearchCheck.tla").write_text("""---- MODULE SearchCheck ----
EXTENDS KafkaLog
Los == {1, 2, 63, 64, 65, 129, 200}
Mods == {1, 7, 64, 65, 1000}
Match(m, j) == j % m = 0
Set(lo, hi, m) == {j \\in lo..hi : Match(m, j)}
ASSUME \\A lo \\in Los, m \\in Mods : \\A hi \\in (lo - 1)..(lo + 200) :
    /\\ FirstFrom(lo, hi, LAMBDA j : Match(m, j)) = IF Set(lo, hi, m) = {} THEN hi + 1 ELSE MinOf(Set(lo, hi, m))
    /\\ LastUpTo(lo, hi, LAMBDA j : Match(m, j)) = IF Set(lo, hi, m) = {} THEN lo - 1 ELSE MaxOf(Set(lo, hi, m))
VARIABLE x
Init == x = 0
Next == UNCHANGED x
====
""")
    (tmp_path / "SearchCheck.cfg").write_text("INIT Init\nNEXT Next\n")
    out = subprocess.run(
        [str(find_java()), f"-Djava.io.tmpdir={tmp_path}", "-cp", str(find_tla2tools()), "tlc2.TLC",
         "-metadir", str(tmp_path / "states"), "SearchCheck.tla"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    ).stdout
    assert "Model checking completed. No error has been found." in out, out[-2000:]


# A form checked from a prefix that is wrong where it matters: the state invariant over every prefix
# (SinceFormsAgree) and the property over every step (SinceFormsAgreeOnSteps) must fail.
BOTH = ("SinceFormsAgree", "SinceFormsAgreeOnSteps")
WRONG_SINCE_FORMS = (
    # the other partitions' records of the transaction are not looked at
    ("kafka_tv1_hanging", "IN \\A q \\in DOMAIN logs :", "IN \\A q \\in {p} :", BOTH),
    # a new batch with sequence 0 is not compared with the epoch's batches before it
    ("kafka_no_idempotence", "IN IF log[j].seq = 0 THEN b < 1 ELSE", "IN IF log[j].seq = 0 THEN TRUE ELSE", BOTH),
    # none of the entries (a fetch from the log's end)
    ("kafka_lso_inclusive", "ReadCommittedFetchAfter(log, lo - 1,", "ReadCommittedFetchAfter(log, Len(log),", BOTH),
    # a producer state that changed with no new entry of its producer is not looked at (only a
    # step has a state before whose producer states differ)
    ("kafka_restart_state_lost", "(from[p] = 0 \\/ ps[p][t] # before[p][t] \\/", "(from[p] = 0 \\/", ("SinceFormsAgreeOnSteps",)),
    # the index: an open transaction that began before the prefix's end is taken to begin after it
    ("kafka_tv2_no_lowest_sequence", "IF c = m /\\ P \\in DOMAIN idx.open THEN idx.open[P]", "IF FALSE THEN idx.open[P]", BOTH),
    # the index: ABORT markers taken for COMMIT markers
    ("kafka_tv1_hanging", "committed |-> WithGtxs(idx.committed, Closed(TRUE))", "committed |-> WithGtxs(idx.committed, Closed(FALSE))", BOTH),
    # a new COMMIT marker's records not compared with the aborted ones
    ("kafka_tv1_hanging", "IF log[c].commit THEN ~AbortedIn(now, log[i].gtx)", "IF log[c].commit THEN TRUE", BOTH),
    # no record looked at
    ("kafka_lso_inclusive", "lo == IF from[p] = 0 THEN 1 ELSE LSOOfIndex(before[p], from[p])", "lo == Len(log) + 1", BOTH),
    # a committed record looked for in the open record's own partition only
    ("kafka_tv1_late_endtxn_torn", "=> ~CommittedIn(now, pl[p][i].gtx)", "=> ~CommittedIn([q \\in {p} |-> now[q]], pl[p][i].gtx)", BOTH),
    # the epochs of the index before not looked at: a new batch with sequence 0 of an epoch that
    # had batches is taken for the epoch's first
    ("kafka_no_idempotence", "/\\ ~HasEpoch(before[p], P, e)", "/\\ TRUE", BOTH),
    # an earlier record of the new one's transaction that a marker closed is not looked for
    ("kafka_no_idempotence", "ELSE IF ClosedIn(before[p], g) THEN 1", "ELSE IF FALSE THEN 1", BOTH),
    # the epochs a producer has records of, from the index before the step: the step's new batch
    # of a new epoch is not found (a prefix without it does not hold the producer state of this
    # state, so only a step shows it)
    ("kafka_restart_state_lost", "LAMBDA e : HasEpoch(now[p], t, e)", "LAMBDA e : HasEpoch(before[p], t, e)", ("SinceFormsAgreeOnSteps",)),
    # the index: the epochs of the prefix forgotten when it grows
    ("kafka_no_idempotence", "epochs |-> WithPairs(idx.epochs,", "epochs |-> WithPairs(EmptyLogIndex.epochs,", BOTH),
    # the index: sequences taken for epochs (IndexMeans compares it with the log)
    ("kafka_no_idempotence", "{<<log[j].pid, log[j].epoch>> : j \\in", "{<<log[j].pid, log[j].seq>> : j \\in", ("IndexMeans",)),
    # the LSO from the index: a log with no open transaction taken to end one entry sooner
    ("kafka_lso_inclusive", "PartitionLSOFromIndex(p, idx) == LSOOfIndex(idx[p], PlogLen(p))",
     "PartitionLSOFromIndex(p, idx) == LSOOfIndex(idx[p], PlogLen(p) - 1)", ("IndexMeans",)),
    # the index of __transaction_state: the instance named in the prefix forgotten when it grows
    ("kafka_tv1_hanging", "IF from[t] = 0 THEN 0 ELSE before[t])]", "IF from[t] = 0 THEN 0 ELSE 0)]", BOTH),
    # the index of __transaction_state read for another instance than the one it names
    ("kafka_no_idempotence", "LatestInstanceFromIndex(t, idx) == idx[t]", "LatestInstanceFromIndex(t, idx) == idx[t] + 1", ("IndexMeans",)),
)
CASES = [(name, right, wrong, prop) for name, right, wrong, props in WRONG_SINCE_FORMS for prop in props]
# The wrong forms that take 10 s or more to be caught (on models whose forms check is itself
# `long`) are outside CI's core (tests/tiers.py: in their shard's turn).
LONG_WRONG = {("kafka_tv1_hanging", "IN \\A q \\in DOMAIN logs :"), ("kafka_tv1_hanging", "IF log[c].commit THEN ~AbortedIn(now, log[i].gtx)"),
              ("kafka_tv1_late_endtxn_torn", "=> ~CommittedIn(now, pl[p][i].gtx)")}


@pytest.mark.parametrize("name,right,wrong,prop", [pytest.param(*c, marks=pytest.mark.long) if c[:2] in LONG_WRONG else c for c in CASES],
                         ids=[f"{c[0]}-{c[3]}" for c in CASES])
def test_a_wrong_form_checked_from_a_prefix_is_caught(tmp_path: Path, name: str, right: str, wrong: str, prop: str) -> None:
    step = prop == "SinceFormsAgreeOnSteps"
    violated(tmp_path, name, "KafkaTxnSince.tla", right, wrong, prop, invariant=not step)


def violated(tmp_path: Path, name: str, module: str, right: str, wrong: str, prop: str, invariant: bool = False) -> None:
    """Model ``name``, with ``right`` replaced by ``wrong`` once in ``module``, violates ``prop``
    of MCKafkaTxnForms (an invariant or a property)."""
    import shutil

    model = next(m for m in REGISTRY.models if m.name == name)
    specs = tmp_path / "specs"
    shutil.copytree(model.task.spec_file.parent, specs)
    text = (specs / module).read_text(encoding="utf-8")
    assert text.count(right) == 1
    (specs / module).write_text(text.replace(right, wrong), encoding="utf-8")
    task = attrs.evolve(model.task, spec_file=specs / "MCKafkaTxnForms.tla", invariants=(prop,) if invariant else (),
                        properties=() if invariant else (prop,))
    r = run_task("tlc", task, tmp_path)
    assert r.outcome is Outcome.VIOLATED and r.invariant == prop, f"{r.outcome}: {r.message} (log: {r.log_file})"


# A step that changes a log other than at its end: what the trace checker may not assume away
# (it compares logs by their lengths). LogsGrowOrAreCut must fail on it.
LOG_REWRITES = (
    # a batch is appended after the log's first entry was moved to its end
    ("kafka_no_idempotence", 'THEN [plog EXCEPT ![p] = Append(@, [kind |-> "data",',
     'THEN [plog EXCEPT ![p] = Append(IF @ = <<>> THEN @ ELSE Tail(@) \\o <<Head(@)>>, [kind |-> "data",'),
    # an unclean election cuts the log and also drops its first entry
    ("kafka_unclean_election", "plog' = [plog EXCEPT ![p] = SubSeq(@, 1, lag[p] - Len(PlogBase[p]))]",
     "plog' = [plog EXCEPT ![p] = IF lag[p] = 0 THEN <<>> ELSE Tail(SubSeq(@, 1, lag[p])) \\o <<@[1]>>]"),
)


@pytest.mark.parametrize("name,right,wrong", LOG_REWRITES, ids=[c[0] for c in LOG_REWRITES])
def test_a_step_that_rewrites_a_log_is_caught(tmp_path: Path, name: str, right: str, wrong: str) -> None:
    violated(tmp_path, name, "KafkaTxn.tla", right, wrong, "LogsGrowOrAreCut")


def test_the_state_after_a_step_is_given_every_variable() -> None:
    """MCKafkaTxnForms reads the invariants in the state after a step through ``InState``, an
    INSTANCE of KafkaTxnSince with each VARIABLE of KafkaTxn replaced by its value there. A
    variable left out of its WITH would silently keep the state before's value, and the step's
    check would compare the forms with invariants of a state that is neither."""
    import re

    specs = Path(__file__).resolve().parents[1] / "specs" / "kafka"
    txn = (specs / "KafkaTxn.tla").read_text(encoding="utf-8")
    block = re.search(r"^VARIABLES\n(.*?)\n\n", txn, re.S | re.M)
    assert block is not None
    declared = {m.group(1) for m in re.finditer(r"^\s+(\w+),?\s*$", block.group(1), re.M)}
    assert {"net", "plog", "tlog", "pst", "action"} <= declared  # the block was found and read
    forms = (specs / "MCKafkaTxnForms.tla").read_text(encoding="utf-8")
    with_ = re.search(r"InState\((.*?)\) ==\s*INSTANCE KafkaTxnSince WITH(.*?)\n\n", forms, re.S)
    assert with_ is not None
    substituted = set(re.findall(r"(\w+) <- \w+", with_.group(2)))
    assert substituted == declared
    # each *In(s) operator passes every field of s, in InState's order
    params = [p.strip() for p in with_.group(1).split(",")]
    calls = re.findall(r"^(\w+)In\(s\) == InState\((.*?)\)!(\w+)$", forms, re.M)
    assert len(calls) >= 10
    order = [re.search(rf"(\w+) <- {p}\b", with_.group(2)).group(1) for p in params]  # type: ignore[union-attr]
    for name, args, inv in calls:
        assert name == inv
        assert [a.strip() for a in args.split(",")] == [f"s.{v}" for v in order]


def test_the_long_cases_name_existing_ones() -> None:
    assert LONG_WRONG.issubset(c[:2] for c in CASES) and LONG_FORM_MODELS.issubset(LOG_FORM_MODELS)
