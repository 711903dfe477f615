"""Parse the values TLC 2.15 prints in error traces (``-tool`` mode) into :mod:`trace_check.values.tla`.

What TLC prints, and what it becomes here:

==============================  ==========================  ======================================
TLC output                      Python                      notes
==============================  ==========================  ======================================
``TRUE``, ``-3``                ``bool``, ``int``
``"a\\"b"``                     ``str``                     escapes ``\\" \\\\ \\n \\t \\r \\f``
``w1`` (model value)            ``str``                     indistinguishable from ``"w1"``
``{1, 2}``, ``-1..2``           ``frozenset``               TLC keeps intervals as ``lo..hi``
``<<1, 2>>``, ``<< >>``         ``tuple``                   also any function with domain ``1..n``
``[a |-> 1]``                   ``Record``                  also functions whose domain is strings
                                                            that are all identifiers; ``[]`` (which
                                                            only ``format_value`` prints) is accepted
``(1 :> "a" @@ 2 :> "b")``      ``FnMap``                   keys may themselves be ``(k :> v)``
==============================  ==========================  ======================================

TLC wraps long values over several indented lines, so whitespace between tokens is insignificant.
The tokenizer reads string literals whole, so text such as ``/\\ x = 1`` inside a string is never
mistaken for structure.  Only nesting recurses; flat collections are parsed in a loop.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, NamedTuple, TypeVar

from trace_check.values.tla import FnMap, Record, TlaValue

__all__ = ["TlcValueError", "parse_state", "parse_value"]

_T = TypeVar("_T")


class TlcValueError(ValueError):
    """TLC output that is not a well-formed value; the message names the offset."""


class _Token(NamedTuple):
    kind: str  # "str", "num", "word", "end", or the punctuation itself ("<<", "|->", ...)
    text: str
    pos: int


_TOKEN_RE = re.compile(
    r"""
      (?P<space>\s+)
    | (?P<str>"(?:[^"\\]++|\\.)*+")        # a whole string literal, escapes included (possessive: a
                                           # literal of megabytes, a hand-off's, keeps no backtracking)
    | (?P<num>-?\d+(?![A-Za-z0-9_]))       # `1a` is an identifier, not a number
    | (?P<word>[A-Za-z0-9_]+)              # TRUE, FALSE, model values, field and variable names
    | (?P<punct><<|>>|\|->|:>|@@|\.\.|/\\|[{}\[\](),=])
    """,
    re.VERBOSE | re.DOTALL,
)
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "f": "\f"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_MAX_INTERVAL = 1_000_000  # `lo..hi` is expanded into a set; refuse absurd sizes


def _tokenize(text: str) -> Iterator[_Token]:
    pos = 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            if text[pos] == '"':
                raise TlcValueError(f"unterminated string starting at offset {pos}")
            raise TlcValueError(f"unexpected character {text[pos]!r} at offset {pos}")
        kind = m.lastgroup
        assert kind is not None
        if kind != "space":
            yield _Token(m.group() if kind == "punct" else kind, m.group(), pos)
        pos = m.end()
    yield _Token("end", "", len(text))


def _unescape(literal: str, pos: int) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) not in _ESCAPES:
            raise TlcValueError(f"unknown escape \\{m.group(1)} in string at offset {pos + 1 + m.start()}")
        return _ESCAPES[m.group(1)]

    return _ESCAPE_RE.sub(replace, literal[1:-1])  # offsets inside are one past the quote


class _Parser:
    """Recursive descent over the token list; one method per bracket kind."""

    def __init__(self, text: str) -> None:
        self.tokens = list(_tokenize(text))
        self.i = 0

    @property
    def tok(self) -> _Token:
        return self.tokens[self.i]

    def next(self) -> _Token:
        tok = self.tokens[self.i]
        if tok.kind != "end":
            self.i += 1
        return tok

    def fail(self, expected: str, tok: _Token | None = None) -> TlcValueError:
        tok = tok or self.tok
        if tok.kind == "end":
            found = "end of input"
        elif tok.kind == "str":  # repr keeps the message on one line
            found = "string " + repr(tok.text[:30])
        else:
            found = f"'{tok.text}'"
        return TlcValueError(f"expected {expected} at offset {tok.pos}, found {found}")

    def expect(self, kind: str, expected: str | None = None) -> _Token:
        if self.tok.kind != kind:
            raise self.fail(expected or repr(kind))
        return self.next()

    def accept(self, kind: str) -> bool:
        if self.tok.kind == kind:
            self.next()
            return True
        return False

    def items(self, close: str, item: Callable[[], _T]) -> list[_T]:
        """``item (, item)* close``, or just ``close``: a loop, so long flat collections are cheap."""
        out: list[_T] = []
        if self.accept(close):
            return out
        while True:
            out.append(item())
            if self.accept(close):
                return out
            if not self.accept(","):
                raise self.fail(f"',' or {close!r}")

    def value(self) -> TlaValue:
        tok = self.next()
        if tok.kind == "num":
            if self.accept(".."):  # an interval such as -1..2, which TLC prints unexpanded
                hi = int(self.expect("num", "an integer after '..'").text)
                lo = int(tok.text)
                if hi - lo >= _MAX_INTERVAL:
                    raise TlcValueError(f"interval {lo}..{hi} at offset {tok.pos} is too large to expand")
                return frozenset(range(lo, hi + 1))
            return int(tok.text)
        if tok.kind == "str":
            return _unescape(tok.text, tok.pos)
        if tok.kind == "word":
            return {"TRUE": True, "FALSE": False}.get(tok.text, tok.text)  # else a model value
        if tok.kind == "{":
            return frozenset(self.items("}", self.value))
        if tok.kind == "<<":
            return tuple(self.items(">>", self.value))
        if tok.kind == "[":
            return Record(self.items("]", self.field))
        if tok.kind == "(":
            return self.paren()
        raise self.fail("a value", tok)

    def field(self) -> tuple[str, TlaValue]:
        # TLC prints any identifier-like field name, even `TRUE` or `1a`, but never plain digits.
        name = self.expect("word", "a field name").text
        self.expect("|->")
        return name, self.value()

    def paren(self) -> TlaValue:
        """After '(': either a function ``k :> v @@ ...`` or a parenthesised value ``(x)``."""
        first = self.value()  # a key may itself be a function: ((1 :> 2) :> 3)
        if not self.accept(":>"):
            self.expect(")", "':>' or ')'")
            return first
        pairs = [(first, self.value())]
        while self.accept("@@"):
            key = self.value()
            self.expect(":>")
            pairs.append((key, self.value()))
        self.expect(")", "'@@' or ')'")
        return FnMap(pairs)

    def top_value(self) -> TlaValue:
        try:
            return self.value()
        except RecursionError:
            raise TlcValueError("value is nested too deeply to parse") from None

    def finish(self) -> None:
        if self.tok.kind != "end":
            raise self.fail("end of input")


def parse_value(text: str) -> TlaValue:
    """Parse one value as TLC prints it, e.g. ``[a |-> {1, 2}, b |-> ("x" :> <<>>)]``."""
    parser = _Parser(text)
    value = parser.top_value()
    parser.finish()
    return value


def parse_state(text: str) -> dict[str, TlaValue]:
    r"""Parse the body of one state of a TLC trace (the lines after ``1: <Initial predicate>``).

    The body is ``/\ var = value`` lines, or a bare ``var = value`` when the spec has a single
    variable. Returns the variables in printed order (TLC's order, not the declaration order).
    """
    parser = _Parser(text)
    prefixed = parser.tok.kind == "/\\"
    state: dict[str, TlaValue] = {}
    while True:
        if prefixed:
            parser.expect("/\\", "'/\\' or end of input")
        name_tok = parser.tok
        name = parser.expect("word", "a variable name").text
        if name in state:
            raise TlcValueError(f"variable {name!r} assigned twice, again at offset {name_tok.pos}")
        parser.expect("=")
        state[name] = parser.top_value()
        if not prefixed or parser.tok.kind == "end":
            break
    parser.finish()
    return state
