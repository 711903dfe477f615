"""Finding the protocol plug-ins.

A plug-in is a module that defines ``PROTOCOL`` (a ``trace_check.traces.protocol.Protocol``). The
built-in ones are ``ref_impl/<name>/protocol.py``; more can be named, comma-separated, in the
environment variable ``TXCONFORM_PROTOCOLS`` (e.g. ``mypkg.protocol``), which is how a test's toy
protocol or a user's own protocol plugs in without touching this tree.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import pkgutil
from typing import Optional

from trace_check.errors import TxconformError, suggest
from trace_check.traces.protocol import Protocol

ENV = "TXCONFORM_PROTOCOLS"
BUILTIN_PACKAGE = "ref_impl"


class ProtocolError(TxconformError):
    """A plug-in that cannot be loaded, or a protocol no plug-in provides."""


def _builtin_modules() -> list[str]:
    try:
        package = importlib.import_module(BUILTIN_PACKAGE)
    except ImportError:
        return []
    return [
        f"{BUILTIN_PACKAGE}.{info.name}.protocol"
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name)
        if info.ispkg and importlib.util.find_spec(f"{BUILTIN_PACKAGE}.{info.name}.protocol") is not None
    ]


def _load(module_name: str) -> Protocol:
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ProtocolError(f"protocol plug-in {module_name} cannot be imported: {e}; check {ENV}") from None
    protocol = getattr(module, "PROTOCOL", None)
    if not isinstance(protocol, Protocol):
        raise ProtocolError(f"protocol plug-in {module_name} defines no PROTOCOL (a trace_check.traces.protocol.Protocol)")
    return protocol


@functools.lru_cache(maxsize=None)
def _discover(extra: str) -> dict[str, Protocol]:
    found: dict[str, Protocol] = {}
    for module_name in _builtin_modules() + [m.strip() for m in extra.split(",") if m.strip()]:
        p = _load(module_name)
        if p.name in found and found[p.name] is not p:
            raise ProtocolError(f"two plug-ins claim protocol {p.name!r} ({module_name} is the second)")
        found[p.name] = p
    return found


def protocols() -> dict[str, Protocol]:
    """Every protocol plug-in, by name."""
    return _discover(os.environ.get(ENV, ""))


def get(name: Optional[str]) -> Protocol:
    """The plug-in of protocol ``name``; a one-line error names the known ones."""
    known = protocols()
    if name in known:
        return known[name]
    names = ", ".join(sorted(known)) or "none"
    raise ProtocolError(f"no plug-in for protocol {name!r}{suggest(str(name), known)}; known: {names}")
