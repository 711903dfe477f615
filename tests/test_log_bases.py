"""Bases of logs (trace_check/traces/handoff.py: Base, rebase, matches): a window of a long trace
starts from a state whose logs hold only the entries after the base, and TLC reads the base once, as
the spec's PlogBase and TlogBase. These are the Python halves: that a base and the entries after it
are the logs it was made from, that it stops where a log can be cut back, that its files are the
values TLC reads, and that a replayed state is compared with a hand-off over its base exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ref_impl.kafka.protocol import base_limits
from trace_check.traces import handoff, plugins
from trace_check.values.tla import Record, format_value
from trace_check.values.tlc_print import parse_value

KAFKA = plugins.get("kafka")


def entry(n: int, pid: str = "t1") -> Record:
    return Record({"kind": "data", "pid": pid, "seq": n, "gtx": (pid, 1, n)})


def tentry(n: int) -> Record:
    return Record({"st": "Ongoing", "epoch": n, "parts": frozenset({1, 2})})


def state(plog: tuple[tuple[Any, ...], ...], lag: tuple[int, ...], tlog: Record) -> dict[str, Any]:
    return {"net": frozenset(), "tlog": tlog, "plog": plog, "lag": lag, "action": "x"}


def test_a_base_takes_every_entry_but_those_a_cut_can_reach() -> None:
    """A partition whose follower fell behind at offset n (lag n) can be cut back to n entries:
    its base stops there. In sync (-1) or after the election (-2), and __transaction_state, which
    is never cut, go to the base whole."""
    plog = (tuple(entry(i) for i in range(4)), tuple(entry(i) for i in range(3)), tuple(entry(i) for i in range(2)))
    tlog = Record({"t1": tuple(tentry(i) for i in range(3)), "t2": ()})
    s = state(plog, (-1, 1, -2), tlog)
    base, rest = handoff.rebase(KAFKA, s, None, format_value, replayed=True)
    assert [base.length("plog", p) for p in (1, 2, 3)] == [4, 1, 2]
    assert base.length("tlog", "t1") == 3 and base.length("tlog", "t2") == 0
    assert rest["plog"] == ((), plog[1][1:], ())
    assert rest["tlog"] == Record({"t1": (), "t2": ()})
    assert rest["net"] == s["net"] and rest["lag"] == s["lag"]
    assert base.objects["plog"][2] == (plog[1][0],) and base.objects["plog"][2][0] is plog[1][0]
    assert base.joined(rest) == s


def test_a_base_grows_from_a_hand_off_and_never_past_its_limit() -> None:
    """From one window to the next, the base keeps its entries and takes what the logs gained, up to
    the limit (a follower that fell behind after the last window started)."""
    first = state((tuple(entry(i) for i in range(2)), ()), (-1, -1), Record({"t1": (tentry(0),)}))
    base, _ = handoff.rebase(KAFKA, first, None, format_value, replayed=False)
    assert base.objects["plog"][1] == (None, None)
    later = state((tuple(entry(i) for i in range(2, 6)), (entry(0),)), (3, -1), Record({"t1": (tentry(1),)}))
    grown, rest = handoff.rebase(KAFKA, later, base, format_value, replayed=False)
    assert grown.length("plog", 1) == 3 and grown.length("plog", 2) == 1 and grown.length("tlog", "t1") == 2
    assert rest["plog"] == ((entry(3), entry(4), entry(5)), ())
    assert grown.texts["plog"][1][:2] == base.texts["plog"][1]
    assert grown.joined(rest)["plog"] == ((*first["plog"][0], *later["plog"][0]), (entry(0),))


def test_the_base_files_are_the_values_tlc_reads() -> None:
    """A base file is a function from each key to its entries, in TLA+, as TLC prints it: 1..n as a
    tuple, field names as a record, other keys with :> and @@. Read back, it is the base."""
    logs = {
        "plog": (tuple(entry(i) for i in range(3)), ()),
        "tlog": Record({"t1": (tentry(0),), "t_2": ()}),
    }
    s = {**logs, "lag": (-1, -1)}
    base, _ = handoff.rebase(KAFKA, s, None, format_value, replayed=False)
    for log, value in logs.items():
        assert parse_value(base.file_text(log)) == value, log
    odd = handoff.Base({"plog": {"a b": ("1",), 0: ()}}, {"plog": {"a b": (None,), 0: ()}})
    assert parse_value(odd.file_text("plog")) == parse_value('(0 :> <<>> @@ "a b" :> <<1>>)')


def test_a_replayed_state_matches_a_hand_off_over_its_base_by_value() -> None:
    """Over the base, an entry that is the replay's object the base was made from matches at once;
    any other is compared with the base's text read back, so a replay that differs there is told apart."""
    plog = (tuple(entry(i) for i in range(3)),)
    s = state(plog, (-1,), Record({"t1": ()}))
    base, rest = handoff.rebase(KAFKA, s, None, format_value, replayed=True)
    assert handoff.matches(base, rest, s, ("action",))
    copy = state((tuple(Record(dict(e)) for e in plog[0]),), (-1,), Record({"t1": ()}))
    assert copy["plog"][0][0] is not plog[0][0]
    assert handoff.matches(base, rest, copy, ("action",))  # equal values, other objects: read back
    wrong = state(((entry(0), entry(7), entry(2)),), (-1,), Record({"t1": ()}))
    assert not handoff.matches(base, rest, wrong, ("action",))
    longer = state((plog[0] + (entry(3),),), (-1,), Record({"t1": ()}))
    assert not handoff.matches(base, rest, longer, ("action",))
    assert not handoff.matches(base, rest, {**s, "net": frozenset({1})}, ("action",))


def test_kafkas_limits_are_the_lags_of_the_followers_behind() -> None:
    assert base_limits({"lag": (-1, 0, 5, -2)}) == {"plog": {2: 0, 3: 5}}
    assert base_limits({}) == {"plog": {}}


LOGS = st.lists(st.lists(st.integers(0, 3), max_size=6), min_size=1, max_size=3)


@settings(max_examples=60, deadline=None)
@given(first=LOGS, gained=st.data())
def test_a_base_and_the_entries_after_it_are_the_logs(first: list[list[int]], gained: st.DataObject) -> None:
    """Window after window (a state, then the same logs with entries appended), the base and the
    state's entries after it are the logs, whatever the limits."""
    logs = tuple(tuple(entry(n, f"t{n}") for n in log) for log in first)
    lags = tuple(gained.draw(st.integers(-2, len(log))) for log in logs)
    s = state(logs, lags, Record({"t1": ()}))
    base, rest = handoff.rebase(KAFKA, s, None, format_value, replayed=True)
    assert base.joined(rest) == s
    for p, lag in enumerate(lags, 1):
        assert base.length("plog", p) == (lag if lag >= 0 else len(logs[p - 1]))
    more = tuple(rest["plog"][p] + tuple(entry(9, "t9") for _ in range(gained.draw(st.integers(0, 3)))) for p in range(len(logs)))
    later = {**rest, "plog": more, "lag": tuple(-1 for _ in logs)}
    grown, after = handoff.rebase(KAFKA, later, base, format_value, replayed=False)
    assert grown.joined(after) == base.joined(later)
    assert all(after["plog"][p] == () for p in range(len(logs)))


def test_a_window_takes_the_index_saved_of_the_latest_base_its_own_begins_with(tmp_path: Path) -> None:
    """handoff.prior_of: a base's index is computed from the one a run saved of an earlier base,
    only if every log of the new base begins with that base's entries (text by text) and the run
    has written its files; the latest such, else none (from scratch)."""
    def base_of(plog: tuple[tuple[Any, ...], ...], tlog: Record) -> handoff.Base:
        return handoff.rebase(KAFKA, state(plog, (-1,) * len(plog), tlog), None, format_value, replayed=False)[0]

    small = base_of(((entry(0),), ()), Record({"t1": (tentry(0),)}))
    larger = base_of(((entry(0), entry(1)), (entry(0),)), Record({"t1": (tentry(0), tentry(1))}))
    other = base_of(((entry(0), entry(7)), (entry(0),)), Record({"t1": (tentry(0), tentry(1))}))
    latest = base_of(((entry(0), entry(1), entry(2)), (entry(0),)), Record({"t1": (tentry(0), tentry(1))}))
    assert larger.begins(small) and latest.begins(larger) and latest.begins(latest)
    assert not small.begins(larger) and not latest.begins(other) and not other.begins(larger)

    def files(name: str, written: bool) -> dict[str, Path]:
        out = {v: tmp_path / f"{name}_{v}.txt" for v in ("plog", "tlog")}
        for f in out.values():
            if written:
                f.write_text("<<>>", encoding="utf-8")
        return out

    saved = [(small, files("small", True)), (larger, files("larger", True)), (other, files("other", True))]
    prior = handoff.prior_of(saved, latest)
    assert prior is not None and prior.files["plog"].endswith("larger_plog.txt")  # not `other`: latest differs from it at 2
    assert prior.lengths == {"plog": {1: 2, 2: 1}, "tlog": {"t1": 2}}
    saved[1] = (larger, files("unwritten", False))  # its run has not saved it yet: the one before
    prior = handoff.prior_of(saved, latest)
    assert prior is not None and prior.files["tlog"].endswith("small_tlog.txt") and prior.lengths["plog"] == {1: 1, 2: 0}
    assert handoff.prior_of(saved[2:], latest) is None and handoff.prior_of([], latest) is None


def test_a_replayed_start_writes_only_the_entries_its_last_base_did_not_have() -> None:
    """Window after window, the replay's logs keep their entries, the same objects: a start's base
    takes the texts of those its last base had (rebase's ``known``) and writes only the others;
    a log cut to a prefix and grown again (new objects) is written again whole. Either way the
    base is the one written from scratch."""
    p1 = tuple(entry(i) for i in range(5))
    t1 = tuple(tentry(i) for i in range(3))
    first = state((p1, ()), (-1, -1), Record({"t1": t1}))
    known, _ = handoff.rebase(KAFKA, first, None, format_value, replayed=True)
    written: list[Any] = []

    def text_of(e: Any) -> str:
        written.append(e)
        return format_value(e)

    grown = state(((*p1, entry(5)), (entry(0),)), (-1, -1), Record({"t1": (*t1, tentry(3))}))
    base, rest = handoff.rebase(KAFKA, grown, None, text_of, replayed=True, known=known)
    scratch, scratch_rest = handoff.rebase(KAFKA, grown, None, format_value, replayed=True)
    assert sorted(map(format_value, written)) == sorted(map(format_value, [entry(5), entry(0), tentry(3)]))
    assert base.texts == scratch.texts and rest == scratch_rest and base.joined(rest) == grown
    written.clear()
    cut = state(((*p1[:2], entry(7), entry(8), entry(9)), ()), (-1, -1), Record({"t1": t1}))  # same length, not the same entries
    base, rest = handoff.rebase(KAFKA, cut, None, text_of, replayed=True, known=known)
    assert written == [*cut["plog"][0]] and base.texts == handoff.rebase(KAFKA, cut, None, format_value, replayed=True)[0].texts
    assert base.joined(rest) == cut
