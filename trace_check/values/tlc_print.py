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
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

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
    (?P<space>\s*+)                        # the spaces before a token, matched with it
    (?:
      (?P<str>"(?:[^"\\]++|\\.)*+")        # a whole string literal, escapes included (possessive: a
                                           # literal of megabytes, a hand-off's, keeps no backtracking)
    | (?P<num>-?\d+(?![A-Za-z0-9_]))       # `1a` is an identifier, not a number
    | (?P<word>[A-Za-z0-9_]+)              # TRUE, FALSE, model values, field and variable names
    | (?P<punct><<|>>|\|->|:>|@@|\.\.|/\\|[{}\[\](),=])
    )
    """,
    re.VERBOSE | re.DOTALL,
)
_SPACE_RE = re.compile(r"\s*")
_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t", "r": "\r", "f": "\f"}
_ESCAPE_RE = re.compile(r"\\(.)", re.DOTALL)
_MAX_INTERVAL = 1_000_000  # `lo..hi` is expanded into a set; refuse absurd sizes


def _tokenize(text: str) -> list[_Token]:
    """The tokens of ``text``, in one pass of the pattern over it rather than a match called per
    token (a 4 MB hand-off state, 1.3 million tokens: its whole parse 2.4 s, against 2.7 s)."""
    out: list[_Token] = []
    append = out.append
    pos = 0
    for m in _TOKEN_RE.finditer(text):
        if m.start() != pos:  # finditer skipped what no token matches
            break
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        tok = m.group(kind)
        append(_Token(tok if kind == "punct" else kind, tok, m.start(kind)))
    end = _SPACE_RE.match(text, pos).end()  # type: ignore[union-attr]  # \s* always matches
    if end < len(text):
        if text[end] == '"':
            raise TlcValueError(f"unterminated string starting at offset {end}")
        raise TlcValueError(f"unexpected character {text[end]!r} at offset {end}")
    append(_Token("end", "", len(text)))
    return out


def _unescape(literal: str, pos: int) -> str:
    def replace(m: re.Match[str]) -> str:
        if m.group(1) not in _ESCAPES:
            raise TlcValueError(f"unknown escape \\{m.group(1)} in string at offset {pos + 1 + m.start()}")
        return _ESCAPES[m.group(1)]

    return _ESCAPE_RE.sub(replace, literal[1:-1])  # offsets inside are one past the quote


class _Parser:
    """Recursive descent over the token list; one method per bracket kind."""

    def __init__(self, text: str) -> None:
        self.tokens = _tokenize(text)
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
    try:
        return _fast_value(text)
    except _NotFast:
        pass
    parser = _Parser(text)
    value = parser.top_value()
    parser.finish()
    return value


class _NotFast(Exception):
    """Text the fast parse does not take as it is: the parser above reads it, or says what is wrong."""


_CLOSERS = {"{": "}", "<<": ">>", "[": "]"}
_FAST_DEPTH = 100  # deeper values go to the recursive parser, which refuses what Python's stack cannot take


def _fast_value(text: str) -> TlaValue:
    """``parse_value`` for well-formed text, in one pass over the tokens with a stack instead of a
    call per token: a 4 MB hand-off state (1.3 million tokens) in 0.9 s, where the recursive parser
    took 2.7 s (the check of each window's hand-off reads one, docs/benchmarks.md). Anything it
    does not expect (an interval, a parenthesised value, an error) raises ``_NotFast``, and the
    recursive parser reads the text instead, so the values and the error messages are its."""
    # The tokens one at a time (a list of all of them took 170 MB at its peak for a 4 MB state,
    # 30 MB for the value it made), each starting where the one before ended.
    pos = 0
    # A frame: [opener, items, state, pending key]; states: "v" a value (or the closer, first),
    # "sep" a comma or the closer, "name" a field name, "arrow" |->, and for "(": "k" a key,
    # ":>", "fv" the key's value, "@@" @@ or ")".
    stack: list[list[Any]] = []
    done: list[TlaValue] = []

    def put(v: TlaValue) -> None:
        if not stack:
            if done:
                raise _NotFast
            done.append(v)
            return
        f = stack[-1]
        state = f[2]
        if state == "v" and f[0] != "(":
            f[1].append(v if f[0] != "[" else (f[3], v))
            f[2] = "sep"
        elif state == "k":
            f[3] = v
            f[2] = ":>"
        elif state == "fv":
            f[1].append((f[3], v))
            f[2] = "@@"
        else:
            raise _NotFast

    for m in _TOKEN_RE.finditer(text):
        if m.start() != pos:
            raise _NotFast  # text that no token matches
        pos = m.end()
        _, s, num, word, punct = m.groups()
        if s:
            if "\\" in s:
                raise _NotFast
            put(s[1:-1])
        elif num:
            put(int(num))
        elif word:
            if stack and stack[-1][2] == "name":
                stack[-1][3] = word
                stack[-1][2] = "arrow"
            else:
                put(True if word == "TRUE" else False if word == "FALSE" else word)
        elif punct in _CLOSERS or punct == "(":
            if (stack and stack[-1][2] not in ("v", "k", "fv")) or len(stack) >= _FAST_DEPTH:
                raise _NotFast
            stack.append([punct, [], "name" if punct == "[" else "k" if punct == "(" else "v", None])
        else:
            if not stack:
                raise _NotFast
            f = stack[-1]
            opener, items, state = f[0], f[1], f[2]
            if punct == "," and state == "sep":
                f[2] = "name" if opener == "[" else "v"
            elif punct == "|->" and state == "arrow":
                f[2] = "v"
            elif punct == ":>" and state == ":>":
                f[2] = "fv"
            elif punct == "@@" and state == "@@":
                f[2] = "k"
            elif opener != "(" and punct == _CLOSERS[opener] and (state == "sep" or (not items and state == ("name" if opener == "[" else "v"))):
                stack.pop()
                put(frozenset(items) if opener == "{" else tuple(items) if opener == "<<" else Record(items))
            elif opener == "(" and punct == ")" and state == "@@":
                stack.pop()
                put(FnMap(items))
            else:
                raise _NotFast
    if stack or not done or pos != len(text.rstrip()):
        raise _NotFast
    return done[0]


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
