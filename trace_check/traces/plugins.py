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

from trace_check.errors import TxconformError, suggest
from trace_check.traces.protocol import Protocol

ENV = "TXCONFORM_PROTOCOLS"
BUILTIN_PACKAGE = "ref_impl"


class ProtocolError(TxconformError):
    """A plug-in that cannot be loaded, or a protocol no plug-in provides."""


class UnknownProtocol(ProtocolError):
    """No plug-in provides the protocol asked for."""


def _builtin_names() -> list[str]:
    try:
        package = importlib.import_module(BUILTIN_PACKAGE)
    except ImportError:
        return []
    return sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.ispkg and _builtin(info.name))


def _builtin(name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{BUILTIN_PACKAGE}.{name}.protocol") is not None
    except (ImportError, ValueError):
        return False


def _load(module_name: str) -> Protocol:
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ProtocolError(f"protocol plug-in {module_name} cannot be imported: {e}; check {ENV}") from None
    protocol = getattr(module, "PROTOCOL", None)
    if not isinstance(protocol, Protocol):
        raise ProtocolError(f"protocol plug-in {module_name} defines no PROTOCOL (a trace_check.traces.protocol.Protocol)")
    return protocol


@functools.cache
def _named(extra: str) -> dict[str, Protocol]:
    """The plug-ins named in the environment, by protocol name."""
    found: dict[str, Protocol] = {}
    for module_name in (m.strip() for m in extra.split(",") if m.strip()):
        p = _load(module_name)
        if p.name in found:
            raise ProtocolError(f"two plug-ins claim protocol {p.name!r} ({module_name} is the second)")
        found[p.name] = p
    return found


def get(name: str | None) -> Protocol:
    """The plug-in of protocol ``name``. Only that plug-in is imported: checking a trace of one
    protocol runs no code of another. A one-line error names the known ones."""
    named = _named(os.environ.get(ENV, ""))
    if name in named:
        return named[name]
    if name and name.isidentifier() and _builtin(name):
        return _load(f"{BUILTIN_PACKAGE}.{name}.protocol")
    known = names()
    raise UnknownProtocol(f"no plug-in for protocol {name!r}{suggest(str(name), known)}; known: {', '.join(known) or 'none'}")


def names() -> list[str]:
    """The names of every protocol a plug-in provides (built-in or named in the environment)."""
    return sorted(set(_builtin_names()) | set(_named(os.environ.get(ENV, ""))))
