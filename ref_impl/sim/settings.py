"""The settings of a simulated run, as ``txconform simulate`` takes them for every protocol.

``--workload KIND:key=value,...``, ``--faults none|all|key=N,...`` (a bare key means 1) and
``--bugs a+b``: one parser and one error for Kafka, YDB and C*One, so the three say the same
thing about the same mistake. Each protocol's simulator (``ref_impl/<protocol>/sim*``) knows its
own keys, limits and defaults.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from trace_check.traces.protocol import ProtocolInputError

T = TypeVar("T")


class SettingsError(ValueError):
    """A workload, fault or bug option that cannot be parsed; the message says what to write."""


TRUE = ("", "1", "true", "yes")
FALSE = ("0", "false", "no")


def pairs(text: str, bare: str = "") -> dict[str, str]:
    """``key=value,...`` as a mapping, in the order written; a key without ``=`` gets ``bare``."""
    out: dict[str, str] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = item.partition("=")
        out[key.strip()] = value.strip() if eq else bare
    return out


def fault_preset(text: str) -> str:
    """``none`` for no fault (the empty text too), ``all`` for the protocol's one of each, or the
    empty string when ``text`` gives the budgets one by one."""
    text = text.strip()
    return "none" if text in ("", "none") else "all" if text == "all" else ""


def whole(key: str, value: str, least: int = 0, most: int | None = None, why_most: str = "") -> int:
    """``value`` as a whole number, at least ``least`` and at most ``most`` (the limit's reason
    ``why_most``, or both bounds in one message when there is none); the error names the setting."""
    try:
        n = int(value)
    except ValueError:
        raise SettingsError(f"{key}={value}: {key} needs a whole number") from None
    if most is not None and not why_most and not least <= n <= most:
        raise SettingsError(f"{key}={value}: {key} must be between {least} and {most}")
    if n < least:
        raise SettingsError(f"{key}={value}: {key} must be at least {least}")
    if most is not None and n > most:
        raise SettingsError(f"{key}={value}: {key} is at most {most} ({why_most})")
    return n


def flag(key: str, value: str) -> bool:
    """A yes-or-no setting: the bare key, ``1``, ``true`` or ``yes``; ``0``, ``false`` or ``no``."""
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise SettingsError(f"{key}={value}: use {key}=true or {key}=false")


def choice(key: str, value: str, options: Iterable[str], hint: str = "") -> str:
    """One of ``options``; the error lists them (or says ``hint``)."""
    names = tuple(options)
    if value not in names:
        raise SettingsError(f"{key}={value}: use {hint or ' or '.join(names)}")
    return value


def unknown(what: str, key: str, keys: Iterable[str], form: str = "{}") -> SettingsError:
    """The error for a key the protocol does not have: what it has, each written as ``form``."""
    return SettingsError(f"unknown {what} {key!r}; use {', '.join(form.format(k) for k in keys)}")


def bugs(text: str, known: Iterable[str]) -> tuple[str, ...]:
    """``a+b``: the spec's ``Bugs`` to plant, each one of ``known``."""
    names, given = tuple(known), tuple(b for b in text.split("+") if b)
    for b in given:
        if b not in names:
            raise SettingsError(f"unknown bug {b!r}; the spec's Bugs are {', '.join(names)}")
    return given


def option(name: str, parse: Callable[[str], T], text: str) -> T:
    """``parse(text)`` for the command-line option ``name``: its error becomes the command's
    one-line error, naming the option (``--faults: loss=x: loss needs a whole number``)."""
    try:
        return parse(text)
    except SettingsError as e:
        raise ProtocolInputError(f"{name}: {e}") from None
