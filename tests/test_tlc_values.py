r"""Tests for trace_check.tlc_values: parsing values and states as TLC 2.15 prints them."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trace_check.values.tla import FnMap, Record, format_value
from trace_check.values.tlc_print import TlcValueError, parse_state, parse_value

# State 1 of an invariant violation, copied verbatim from `java tlc2.TLC -tool` (TLC 2.15) on a
# spec with CONSTANTS w1, w2 (model values) and:
#   msgs = [i \in 1..4 |-> [id |-> i, body |-> "payload-payload", acked |-> i > 2]]
#   f    = [x \in {"a b", "c"} |-> IF x = "c" THEN 1 ELSE 2]
#   h    = ([x \in {1} |-> 2] :> 3) @@ ([x \in {2} |-> 3] :> 4)
#   e    = [x \in {} |-> 1],  ek = [x \in {"a"} |-> 1],  iv = -1..2,  ...
# Note the variable order (TLC's, not the declaration order), `<< >>` for an empty function,
# the string-domain function `ek` printed as a record, and `iv` printed as an interval.
TLC_STATE = r"""/\ msgs = << [id |-> 1, body |-> "payload-payload", acked |-> FALSE],
   [id |-> 2, body |-> "payload-payload", acked |-> FALSE],
   [id |-> 3, body |-> "payload-payload", acked |-> TRUE],
   [id |-> 4, body |-> "payload-payload", acked |-> TRUE] >>
/\ mv = {w1, w2}
/\ e = << >>
/\ f = ("c" :> 1 @@ "a b" :> 2)
/\ deep = [ a1 |->
      [ b1 |-> {1, 2, 3, 4},
        d1 |-> "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ] ]
/\ g = (0 :> 0 @@ 1 :> -1)
/\ h = (<<2>> :> 3 @@ (2 :> 3) :> 4)
/\ n = -3
/\ q = "a\\b \"c\" /\\ x = 1 |-> >> \t tab \n nl"
/\ r = [a |-> 1, b |-> "q\"x", c |-> <<>>]
/\ s = {{}, {<<1>>}, {1, 2}}
/\ iv = -1..2
/\ ek = [a |-> 1]
"""

# A deeply wrapped value from the same TLC run (a record of a record of a 25-element set).
TLC_WRAPPED = """[ a1 |->
      [ b1 |->
            [ c1 |->
                  { 1,
                    2,
                    3,
                    4,
                    5,
                    6,
                    7,
                    8,
                    9,
                    10,
                    11,
                    12,
                    13,
                    14,
                    15,
                    16,
                    17,
                    18,
                    19,
                    20,
                    21,
                    22,
                    23,
                    24,
                    25 },
              d1 |-> "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ],
        e1 |-> "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" ] ]"""


def typed(v: object) -> object:
    """A canonical form that, unlike ==, tells 1 from TRUE and Record from FnMap."""
    if isinstance(v, (bool, int, str)):
        return (type(v).__name__, v)
    if isinstance(v, frozenset):
        return ("set", tuple(sorted((typed(x) for x in v), key=repr)))
    if isinstance(v, tuple):
        return ("seq", tuple(typed(x) for x in v))
    if isinstance(v, (Record, FnMap)):
        pairs = sorted(((typed(k), typed(x)) for k, x in v.items()), key=repr)
        return (type(v).__name__, tuple(pairs))
    raise TypeError(v)


def same(a: object, b: object) -> bool:
    return a == b and typed(a) == typed(b)


# --- scalars -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("0", 0),
        ("42", 42),
        ("-3", -3),
        ("  -17\n", -17),
        ("123456789012345678901234567890", 123456789012345678901234567890),
        ("TRUE", True),
        ("FALSE", False),
        ("w1", "w1"),
        ("a_b", "a_b"),
        ("Nil", "Nil"),
    ],
)
def test_scalars(text: str, expected: object) -> None:
    assert same(parse_value(text), expected)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('""', ""),
        ('"abc"', "abc"),
        (r'"q\"x"', 'q"x'),
        (r'"a\\b"', "a\\b"),
        (r'"\\n is not a newline"', "\\n is not a newline"),
        (r'"l1\nl2\tt\rr\ff"', "l1\nl2\tt\rr\ff"),
        (r'"/\\ x = 1 |-> >> << :> @@ , } ]"', "/\\ x = 1 |-> >> << :> @@ , } ]"),
        ('"  spaces  kept  "', "  spaces  kept  "),
        ('"é"', "é"),
    ],
)
def test_strings(text: str, expected: str) -> None:
    assert parse_value(text) == expected


# --- collections ---------------------------------------------------------------------------------


def test_sets() -> None:
    assert same(parse_value("{}"), frozenset())
    assert same(parse_value("{1, 2, 3}"), frozenset({1, 2, 3}))
    assert same(parse_value('{{}, {<<1>>}, {1, 2}}'), frozenset({frozenset(), frozenset({(1,)}), frozenset({1, 2})}))
    assert same(parse_value('{w1, w2, "}"}'), frozenset({"w1", "w2", "}"}))


def test_intervals() -> None:
    assert same(parse_value("1..3"), frozenset({1, 2, 3}))
    assert same(parse_value("-2..1"), frozenset({-2, -1, 0, 1}))
    assert same(parse_value("3..1"), frozenset())
    assert same(parse_value("{1..2}"), frozenset({frozenset({1, 2})}))


def test_sequences() -> None:
    assert same(parse_value("<<>>"), ())
    assert same(parse_value("<< >>"), ())  # how TLC prints the empty function [x \in {} |-> ..]
    assert same(parse_value('<<1, "two", TRUE>>'), (1, "two", True))
    assert same(parse_value("<<<<1>>, <<>>>>"), ((1,), ()))
    assert same(parse_value('<<">>", "<<">>'), (">>", "<<"))


def test_records() -> None:
    assert same(parse_value('[a |-> 1, b |-> "x"]'), Record({"a": 1, "b": "x"}))
    assert same(parse_value('[a |-> [b |-> {}], c |-> <<>>]'), Record({"a": Record({"b": frozenset()}), "c": ()}))
    assert same(parse_value('[s |-> "x |-> y, z"]'), Record({"s": "x |-> y, z"}))
    # TLC prints a function over identifier-like strings as a record, even `TRUE` and `1a`.
    assert same(parse_value("[TRUE |-> 1, 1a |-> 2]"), Record({"TRUE": 1, "1a": 2}))
    assert list(parse_value("[z |-> 1, a |-> 2]")) == ["z", "a"]  # printed order is kept


def test_functions() -> None:
    assert same(parse_value('(1 :> "a" @@ 2 :> "b")'), FnMap({1: "a", 2: "b"}))
    assert same(parse_value('("a b" :> 1)'), FnMap({"a b": 1}))
    assert same(parse_value("(0 :> 0 @@ 1 :> -1)"), FnMap({0: 0, 1: -1}))
    assert same(parse_value("((1 :> 2) :> 3)"), FnMap({FnMap({1: 2}): 3}))
    assert same(parse_value("(<<2>> :> 3 @@ (2 :> 3) :> 4)"), FnMap({(2,): 3, FnMap({2: 3}): 4}))
    assert same(parse_value("([a |-> 1] :> {})"), FnMap({Record({"a": 1}): frozenset()}))
    assert same(parse_value('(1 :> (2 :> ":>"))'), FnMap({1: FnMap({2: ":>"})}))


def test_parenthesised_values() -> None:
    assert same(parse_value("(5)"), 5)
    assert same(parse_value("((<<1>>))"), (1,))
    assert same(parse_value("{(1), (2 :> 3)}"), frozenset({1, FnMap({2: 3})}))


def test_multiline_values() -> None:
    text = '<< [id |-> 1, body |-> "a, b"],\n   [id |-> 2, body |-> "c\\nd"] >>'
    assert same(parse_value(text), (Record({"id": 1, "body": "a, b"}), Record({"id": 2, "body": "c\nd"})))
    text = '(\n  1\n  :>\n  "x"\n  @@\n\t2 :>\r\n "y" )'
    assert same(parse_value(text), FnMap({1: "x", 2: "y"}))
    expected = Record(
        {
            "a1": Record(
                {
                    "b1": Record({"c1": frozenset(range(1, 26)), "d1": "x" * 47}),
                    "e1": "y" * 53,
                }
            )
        }
    )
    assert same(parse_value(TLC_WRAPPED), expected)


# --- malformed input -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, message",
    [
        ("<<1, 2", "expected ',' or '>>' at offset 6, found end of input"),
        ("[a |-> ]", "expected a value at offset 7, found ']'"),
        ("{1,,2}", "expected a value at offset 3, found ','"),
        ("{1, 2} x", "expected end of input at offset 7, found 'x'"),
        ("1 2", "expected end of input at offset 2"),
        ('"abc', "unterminated string starting at offset 0"),
        ('<<"ab\\">>', "unterminated string starting at offset 2"),
        ("", "expected a value at offset 0, found end of input"),
        ("[1 |-> 2]", "expected a field name at offset 1, found '1'"),
        ("[a = 2]", "expected '|->' at offset 3"),
        ("(1 :> 2", "expected '@@' or ')' at offset 7"),
        ("(1 :> 2 @@ 3)", "expected ':>' at offset 12"),
        ("(1, 2)", "expected ':>' or ')' at offset 2"),
        ("1..", "expected an integer after '..' at offset 3"),
        ("- 3", "unexpected character '-' at offset 0"),
        ("{1; 2}", "unexpected character ';' at offset 2"),
        (r'"bad \q escape"', r"unknown escape \q in string at offset 5"),
        ("x = 1", "expected end of input at offset 2, found '='"),
        ('<<1 "a\nb">>', "expected ',' or '>>' at offset 4, found string '\"a\\nb\"'"),
    ],
)
def test_malformed_values(text: str, message: str) -> None:
    with pytest.raises(TlcValueError, match=re.escape(message)) as info:
        parse_value(text)
    assert "\n" not in str(info.value)
    assert isinstance(info.value, ValueError)


def test_too_deep_nesting_is_a_clean_error() -> None:
    expected: tuple = ()
    for _ in range(49):
        expected = (expected,)
    assert same(parse_value("<<" * 50 + ">>" * 50), expected)  # realistic depths are fine
    with pytest.raises(TlcValueError, match="nested too deeply"):
        parse_value("<<" * 10_000 + ">>" * 10_000)


def test_huge_interval_is_refused() -> None:
    with pytest.raises(TlcValueError, match="too large"):
        parse_value("0..100000000000")


# --- performance ---------------------------------------------------------------------------------


def test_large_flat_collections_parse_whole() -> None:
    """10,000 elements in one set, sequence and function: parsed whole, without running into
    Python's recursion limit (a parser that recursed per element would). How fast is a benchmark's
    question (scripts/bench_traces.py), not a unit test's: a wall-clock bound failed under load."""
    n = 10_000
    ints = "{" + ", ".join(str(i) for i in range(n)) + "}"
    records = "<< " + ",\n   ".join(f'[id |-> {i}, tag |-> "t{i}"]' for i in range(n)) + " >>"
    fn = "(" + " @@ ".join(f'"k{i}" :> {i}' for i in range(n)) + ")"
    assert parse_value(ints) == frozenset(range(n))
    parsed = parse_value(records)
    assert len(parsed) == n and parsed[-1] == Record({"id": n - 1, "tag": f"t{n - 1}"})
    assert parse_value(fn) == FnMap({f"k{i}": i for i in range(n)})


# --- states --------------------------------------------------------------------------------------


def test_real_tlc_state() -> None:
    state = parse_state(TLC_STATE)
    assert list(state) == ["msgs", "mv", "e", "f", "deep", "g", "h", "n", "q", "r", "s", "iv", "ek"]
    assert same(
        state["msgs"],
        tuple(Record({"id": i, "body": "payload-payload", "acked": i > 2}) for i in range(1, 5)),
    )
    assert same(state["mv"], frozenset({"w1", "w2"}))
    assert same(state["e"], ())
    assert same(state["f"], FnMap({"c": 1, "a b": 2}))
    assert same(state["deep"], Record({"a1": Record({"b1": frozenset({1, 2, 3, 4}), "d1": "x" * 58})}))
    assert same(state["g"], FnMap({0: 0, 1: -1}))
    assert same(state["h"], FnMap({(2,): 3, FnMap({2: 3}): 4}))
    assert same(state["n"], -3)
    assert same(state["q"], 'a\\b "c" /\\ x = 1 |-> >> \t tab \n nl')
    assert same(state["r"], Record({"a": 1, "b": 'q"x', "c": ()}))
    assert same(state["s"], frozenset({frozenset(), frozenset({(1,)}), frozenset({1, 2})}))
    assert same(state["iv"], frozenset({-1, 0, 1, 2}))
    assert same(state["ek"], Record({"a": 1}))


def test_state_from_brief() -> None:
    text = '/\\ r = [a |-> 1, b |-> "q\\"x"]\n/\\ s = <<0, 1>>\n/\\ x = 0\n'
    assert parse_state(text) == {"r": Record({"a": 1, "b": 'q"x'}), "s": (0, 1), "x": 0}


def test_single_variable_state_has_no_prefix() -> None:
    # Verbatim from TLC for a spec with the single variable x.
    assert parse_state('x = [k |-> "a /\\\\ b = c"]\n') == {"x": Record({"k": "a /\\ b = c"})}
    assert parse_state("x = 3") == {"x": 3}


def test_state_with_separators_inside_strings_and_continuations() -> None:
    text = (
        '/\\ log = << "/\\\\ y = 2",\n'
        '   " = ",\n'
        '   "\\n/\\\\ z = 3" >>\n'
        '/\\ y = [ f |-> "a = b",\n'
        '  g |-> {1,\n'
        '         2} ]\n'
    )
    assert parse_state(text) == {
        "log": ("/\\ y = 2", " = ", "\n/\\ z = 3"),
        "y": Record({"f": "a = b", "g": frozenset({1, 2})}),
    }


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "expected a variable name at offset 0, found end of input"),
        ("/\\ x = 1 y = 2", "expected '/\\' or end of input at offset 9, found 'y'"),
        ("x = 1\n/\\ y = 2", "expected end of input at offset 6"),
        ("/\\ x = 1\n/\\ x = 2", "variable 'x' assigned twice, again at offset 12"),
        ("/\\ x 1", "expected '=' at offset 5"),
        ("/\\ x = ", "expected a value at offset 7, found end of input"),
        ("/\\ x = <<1,\n/\\ y = 2", "expected a value at offset 12, found '/\\'"),
        ('/\\ x = "open\n/\\ y = 2', "unterminated string starting at offset 7"),
    ],
)
def test_malformed_states(text: str, message: str) -> None:
    with pytest.raises(TlcValueError, match=re.escape(message)):
        parse_state(text)


# --- round trip through format_value -------------------------------------------------------------

# TLA+ identifiers: letters, digits and underscores with at least one letter (TLC prints `1a` too).
identifiers = st.from_regex(r"[A-Za-z0-9_]{1,8}", fullmatch=True).filter(lambda s: re.search("[A-Za-z]", s))
tricky_text = st.text(alphabet=st.sampled_from('ab "\\\n\t\r\f/=|-><:@,{}[]()é'), max_size=12)
leaves = st.booleans() | st.integers() | st.text(max_size=8) | tricky_text
values = st.recursive(
    leaves,
    # Collections are built from lists, not st.frozensets/st.dictionaries, whose uniqueness
    # filter makes hypothesis repr this recursive strategy (a HypothesisWarning about 64 kB reprs).
    lambda children: (
        st.lists(children, max_size=4).map(frozenset)
        | st.lists(children, max_size=4).map(tuple)
        | st.lists(st.tuples(identifiers, children), max_size=4).map(Record)
        # An empty function prints as <<>>, so FnMap is never empty.
        | st.lists(st.tuples(children, children), min_size=1, max_size=3).map(FnMap)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(values)
def test_round_trip(value: object) -> None:
    assert same(parse_value(format_value(value)), value)


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.booleans() | st.integers(),
        lambda c: st.lists(c, max_size=4).map(frozenset)
        | st.lists(c, max_size=4).map(tuple)
        | st.lists(st.tuples(identifiers, c), max_size=3).map(Record)
        | st.lists(st.tuples(c, c), min_size=1, max_size=3).map(FnMap),
        max_leaves=15,
    ),
    st.lists(st.sampled_from([" ", "\n", "\n   ", "\t", "\r\n  "]), min_size=1, max_size=8),
)
def test_round_trip_with_wrapping(value: object, spaces: list[str]) -> None:
    # Without strings in the value, whitespace can go around any punctuation, as TLC's wrapping does.
    counter = iter(range(10**9))
    text = re.sub(
        r"(<<|>>|\|->|:>|@@|[{}\[\](),])",
        lambda m: m.group() + spaces[next(counter) % len(spaces)],
        format_value(value),
    )
    assert same(parse_value(text), value)


def test_a_string_of_megabytes_is_read_without_keeping_a_trace_of_each_character() -> None:
    """A window's hand-off is one string literal of megabytes (TLC's PrintT of the state, quotes
    escaped). The string pattern matched it character by character with a backtracking point
    each: 584 MB of memory for 3.6 MB. It is possessive now; the bound is far above what it needs
    (about 20 MB) and far below what it took."""
    import tracemalloc

    body = '[kind |-> "data", gtx |-> <<"t1", 1, 2>>, note |-> "a \\\\ b"], ' * 40_000
    literal = '"' + body.replace("\\", "\\\\").replace('"', '\\"') + '"'
    assert len(literal) > 2_500_000
    tracemalloc.start()
    try:
        assert parse_value(literal) == body
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100_000_000, f"{peak / 1e6:.0f} MB to read a {len(literal) / 1e6:.1f} MB string"


def _recursive(text: str) -> object:
    from trace_check.values.tlc_print import _Parser

    parser = _Parser(text)
    value = parser.top_value()
    parser.finish()
    return value


@settings(max_examples=300, deadline=None)
@given(values, st.lists(st.sampled_from(["", " ", "\n  ", "\t"]), min_size=1, max_size=4))
def test_the_one_pass_parse_reads_what_the_recursive_parser_reads(value: object, spaces: list[str]) -> None:
    """parse_value reads well-formed text in one pass (_fast_value) and hands whatever else it
    meets to the recursive parser: where the fast one answers, the answers agree."""
    from trace_check.values.tlc_print import _fast_value, _NotFast

    counter = iter(range(10**9))
    text = format_value(value)
    if '"' not in text:  # whitespace only where it cannot fall inside a string
        text = re.sub(r"(<<|>>|\|->|:>|@@|[{}\[\](),])", lambda m: m.group() + spaces[next(counter) % len(spaces)], text)
    try:
        fast = _fast_value(text)
    except _NotFast:
        return
    assert same(fast, _recursive(text))


@pytest.mark.parametrize("text", ['{1..3}', '(<<1>>)', '<<"a\\"b">>', '[a |-> 1', '{1, 2}}', '<<1 2>>', "[a |-> 1] x",
                                  '(1 :> 2 @@ 3)', "/\\ x = 1", "[" * 150 + "]" * 150,
                                  "<<1, ~2>>", "<<1>> ~", '<<"a>>'])
def test_what_the_one_pass_parse_does_not_take_goes_to_the_recursive_parser(text: str) -> None:
    from trace_check.values.tlc_print import TlcValueError, _fast_value, _NotFast

    with pytest.raises(_NotFast):
        _fast_value(text)
    try:
        expected: object = _recursive(text)
    except TlcValueError as e:
        with pytest.raises(TlcValueError, match=re.escape(str(e))):
            parse_value(text)
    else:
        assert same(parse_value(text), expected)


def test_the_one_pass_parse_takes_a_hand_off_state() -> None:
    """The text of a window's hand-off: records, sets, sequences and functions of strings and numbers."""
    from trace_check.values.tlc_print import _fast_value

    text = ('[net |-> {[type |-> "Produce", tid |-> "t13", epoch |-> 14, gtx |-> <<"t13", 1, 15>>, ok |-> TRUE]}, '
            'plog |-> <<<<[kind |-> "data", seq |-> -1]>>, << >>>>, pst |-> (1 :> ("t1" :> [e |-> 0]) @@ 2 :> ("t1" :> [e |-> 1])), '
            'held |-> {}, m |-> mv1, r |-> []]')
    assert same(_fast_value(text), _recursive(text))
