"""The models registry (``specs/models.toml``): every model CI checks, with its expected outcome.

A model names a spec module, the constants to instantiate it with, the invariants to check, the
bounds each engine needs, the outcome it must have (``holds`` or ``violates <Invariant>``), a time
budget and a one-line teaching note. Everything is validated before any engine starts, and every
problem is reported as one line naming the file, the model and the fix.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Mapping, Optional

import attrs

from trace_check.errors import TxconformError, suggest
from trace_check.models.result import ApalacheOptions, CheckTask, TlcOptions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class RegistryError(TxconformError):
    """The registry file is wrong; the message names the file, the model and what to do."""


MODEL_KEYS = {"spec", "constants", "invariants", "expect", "timeout", "note", "init", "next", "tlc", "apalache", "witness", "trace_hide",
              "tier"}
# "ci": checked on every change (the default); "full": the same protocols at larger bounds, hours
# rather than minutes, checked when asked for (`txconform model-check --tier full`).
TIERS = ("ci", "full")
REQUIRED_KEYS = ("spec", "invariants", "expect", "note")
TLC_KEYS = {"constraints", "action_constraints", "symmetry", "view", "workers", "check_deadlock"}
APALACHE_KEYS = {"length"}
DEFAULT_KEYS = {"timeout", "workers"}
_EXPECT = re.compile(r"^(holds|deadlock|violates ([A-Za-z_][A-Za-z0-9_]*))$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_HIDE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$")


@attrs.frozen
class Model:
    name: str
    task: CheckTask
    expect: str  # "holds", "deadlock" or "violates <Invariant>"
    note: str
    line: int  # where the model's table starts in the registry, for error messages
    # The expected violation is a demonstration (an example trace, e.g. the happy path),
    # not a bug: its invariant is a witness, not a guarantee.
    witness: bool = False
    # Variables the readable steps and diagrams leave out (ITF and JSON keep them).
    trace_hide: tuple[str, ...] = ()
    tier: str = "ci"

    @property
    def timeout(self) -> float:
        return self.task.timeout


@attrs.frozen
class Registry:
    path: Path
    models: tuple[Model, ...]

    def select(self, names: list[str], tier: str = "ci") -> list[Model]:
        """The named models in the order given (whatever their tier), or all models of ``tier``
        ("ci", "full" or "all"); an unknown name is an error."""
        if not names:
            return [m for m in self.models if tier in ("all", m.tier)]
        by_name = {m.name: m for m in self.models}
        chosen = []
        for name in names:
            if name not in by_name:
                raise RegistryError(f"{self.path}: no model named {name!r}{suggest(name, by_name)}; `txconform model-check --list` lists them")
            chosen.append(by_name[name])
        return chosen


def default_registry_path() -> Path:
    """``specs/models.toml`` of the current directory if there is one, else of this checkout."""
    local = Path("specs") / "models.toml"
    if local.is_file():
        return local
    return Path(__file__).resolve().parents[2] / "specs" / "models.toml"


def load_registry(path: Path) -> Registry:
    if not path.is_file():
        raise RegistryError(f"{path}: registry file not found: pass --registry FILE or run from the project root")
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{path}: not valid TOML: {exc}") from None
    _check_keys(path, "the top level", data, {"defaults", "models"}, line=1)
    defaults = data.get("defaults", {})
    _check_table(path, "[defaults]", defaults, 1)
    _check_keys(path, "[defaults]", defaults, DEFAULT_KEYS, line=_table_line(text, "defaults"))
    models_table = data.get("models", {})
    _check_table(path, "[models]", models_table, 1)
    if not models_table:
        raise RegistryError(f"{path}: no models: add a [models.NAME] table")
    models = tuple(
        _load_model(path, text, name, entry, defaults) for name, entry in models_table.items()
    )
    return Registry(path=path, models=models)


def _load_model(path: Path, text: str, name: str, entry: Any, defaults: Mapping[str, Any]) -> Model:
    line = _table_line(text, f"models.{name}")
    where = f"{path}:{line}: model {name}"
    if not _NAME.match(name):
        raise RegistryError(f"{where}: a model name must be letters, digits and underscores")
    _check_table(path, f"model {name}", entry, line)
    _check_keys(path, f"model {name}", entry, MODEL_KEYS, line)
    for key in REQUIRED_KEYS:
        if key not in entry:
            raise RegistryError(f"{where}: missing key {key!r}")

    spec_file = (path.parent / _typed(where, "spec", entry["spec"], str)).resolve()
    if not spec_file.is_file():
        raise RegistryError(f"{where}: spec file {entry['spec']} not found (looked for {spec_file})")

    constants = _typed(where, "constants", entry.get("constants", {}), dict)
    for cname, value in constants.items():
        _check_constant(where, cname, value)

    invariants = tuple(_names(where, "invariants", entry["invariants"]))
    expect = _typed(where, "expect", entry["expect"], str).strip()
    match = _EXPECT.match(expect)
    if not match:
        raise RegistryError(f"{where}: expect = {expect!r}: write \"holds\", \"deadlock\" or \"violates <Invariant>\"")
    if match.group(2) and match.group(2) not in invariants:
        raise RegistryError(f"{where}: expects a violation of {match.group(2)}, which is not in its invariants list")

    tlc_entry = _typed(where, "tlc", entry.get("tlc", {}), dict)
    _check_keys(path, f"model {name} [tlc]", tlc_entry, TLC_KEYS, line)
    tlc = TlcOptions(
        constraints=tuple(_names(where, "tlc.constraints", tlc_entry.get("constraints", []))),
        action_constraints=tuple(_names(where, "tlc.action_constraints", tlc_entry.get("action_constraints", []))),
        symmetry=_optional_name(where, "tlc.symmetry", tlc_entry.get("symmetry")),
        view=_optional_name(where, "tlc.view", tlc_entry.get("view")),
        workers=_positive_int(where, "tlc.workers", tlc_entry.get("workers", defaults.get("workers", 1))),
        check_deadlock=_typed(where, "tlc.check_deadlock", tlc_entry.get("check_deadlock", True), bool),
    )
    apalache_entry = _typed(where, "apalache", entry.get("apalache", {}), dict)
    _check_keys(path, f"model {name} [apalache]", apalache_entry, APALACHE_KEYS, line)
    if "length" not in apalache_entry:
        raise RegistryError(f"{where}: missing apalache.length (the number of steps Apalache explores)")
    apalache = ApalacheOptions(length=_positive_int(where, "apalache.length", apalache_entry["length"]))

    timeout = entry.get("timeout", defaults.get("timeout", 300))
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise RegistryError(f"{where}: timeout = {timeout!r}: give a positive number of seconds")
    init = _optional_name(where, "init", entry.get("init")) or "Init"
    nxt = _optional_name(where, "next", entry.get("next")) or "Next"

    defined = defined_operators(spec_file)
    operators = [("init", init), ("next", nxt)] + [("invariant", i) for i in invariants]
    operators += [("tlc constraint", c) for c in tlc.constraints + tlc.action_constraints]
    operators += [(kind, op) for kind, op in (("tlc.symmetry", tlc.symmetry), ("tlc.view", tlc.view)) if op]
    for kind, op in operators:
        if op not in defined:
            raise RegistryError(
                f"{where}: {kind} {op} is not defined in {entry['spec']} or the modules it extends{suggest(op, defined)}"
            )
    declared = declared_constants(spec_file)
    for cname in constants:
        if cname not in declared:
            raise RegistryError(f"{where}: constant {cname} is not declared by {entry['spec']}{suggest(cname, declared)}")
    missing = sorted(declared - set(constants))
    if missing:
        raise RegistryError(f"{where}: no value for constant(s) {', '.join(missing)}: add them to constants")

    witness = _typed(where, "witness", entry.get("witness", False), bool)
    trace_hide = tuple(entry.get("trace_hide", []))
    if not all(isinstance(h, str) and _HIDE.match(h) for h in trace_hide):
        raise RegistryError(f"{where}: trace_hide must list variables or var.field names, e.g. [\"net\", \"cl.req\"]")
    if witness and not match.group(2):
        raise RegistryError(f"{where}: a witness model must expect \"violates <Witness>\": its trace is the example")
    tier = _typed(where, "tier", entry.get("tier", "ci"), str)
    if tier not in TIERS:
        raise RegistryError(f"{where}: tier = {tier!r}: write \"ci\" (checked on every change) or \"full\" (larger bounds, on demand)")
    note = _typed(where, "note", entry["note"], str).strip()
    if not note or "\n" in note:
        raise RegistryError(f"{where}: note must be one non-empty line")
    task = CheckTask(
        name=name,
        spec_file=spec_file,
        constants=constants,
        invariants=invariants,
        init=init,
        next=nxt,
        tlc=tlc,
        apalache=apalache,
        timeout=float(timeout),
    )
    return Model(name=name, task=task, expect=expect, note=note, line=line, witness=witness, trace_hide=trace_hide,
                 tier=tier)


# --- what a spec defines, read statically so that typos are caught before an engine starts ---

_DEF = re.compile(r"^\s*(?:LOCAL\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*==", re.MULTILINE)
_EXTENDS = re.compile(r"^\s*EXTENDS\s+([\w\s,]+?)\s*$", re.MULTILINE)
_CONSTANTS = re.compile(r"^\s*CONSTANTS?\b(.*?)(?=^\s*(?:VARIABLES?|ASSUME|[A-Za-z_]\w*\s*(?:\(|==))|\Z)", re.MULTILINE | re.DOTALL)
_COMMENT = re.compile(r"\(\*.*?\*\)|\\\*[^\n]*", re.DOTALL)


def _module_texts(spec_file: Path) -> list[str]:
    """The text of a module and of the modules it extends that live beside it (comments removed)."""
    seen: set[str] = set()
    texts: list[str] = []
    todo = [spec_file.stem]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        file = spec_file.parent / f"{module}.tla"
        if not file.is_file():
            continue  # a standard module (Naturals, TLC, ...) or one TLC will report as missing
        text = _COMMENT.sub(" ", file.read_text(encoding="utf-8", errors="replace"))
        texts.append(text)
        for match in _EXTENDS.finditer(text):
            todo += [m.strip() for m in match.group(1).split(",") if m.strip()]
    return texts


def defined_operators(spec_file: Path) -> set[str]:
    return {m.group(1) for text in _module_texts(spec_file) for m in _DEF.finditer(text)}


def declared_constants(spec_file: Path) -> set[str]:
    names: set[str] = set()
    for text in _module_texts(spec_file):
        for block in _CONSTANTS.finditer(text):
            names |= set(re.findall(r"([A-Za-z_]\w*)(?:\s*\([^)]*\))?\s*(?:,|$)", block.group(1).strip(), re.MULTILINE))
    return names


# --- small validators ---


def _table_line(text: str, dotted: str) -> int:
    pattern = re.compile(r"^[ \t]*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in dotted.split(".")) + r"\s*\]", re.MULTILINE)
    match = pattern.search(text)
    return text.count("\n", 0, match.start()) + 1 if match else 1


def _check_table(path: Path, what: str, value: Any, line: int) -> None:
    if not isinstance(value, dict):
        raise RegistryError(f"{path}:{line}: {what} must be a table")


def _check_keys(path: Path, what: str, table: Mapping[str, Any], allowed: set[str], line: int) -> None:
    for key in table:
        if key not in allowed:
            raise RegistryError(f"{path}:{line}: {what}: unknown key {key!r}{suggest(key, allowed)}")


def _typed(where: str, key: str, value: Any, kind: type) -> Any:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise RegistryError(f"{where}: {key} must be a {_KIND_NAMES.get(kind, kind.__name__)}, not {value!r}")
    return value


_KIND_NAMES = {str: "string", dict: "table", bool: "boolean (true or false)", list: "list"}


def _names(where: str, key: str, value: Any) -> list[str]:
    items = value if isinstance(value, list) else None
    if items is None or not all(isinstance(v, str) and _NAME.match(v) for v in items):
        raise RegistryError(f"{where}: {key} must be a list of operator names, e.g. [\"TypeOK\"]")
    return items


def _optional_name(where: str, key: str, value: Any) -> Optional[str]:
    if value is None:
        return None
    if not isinstance(value, str) or not _NAME.match(value):
        raise RegistryError(f"{where}: {key} must be an operator name, not {value!r}")
    return value


def _positive_int(where: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RegistryError(f"{where}: {key} must be a positive integer, not {value!r}")
    return value


def _check_constant(where: str, name: str, value: Any) -> None:
    scalar = (int, str)
    ok = isinstance(value, scalar) or (
        isinstance(value, list) and all(isinstance(v, scalar) and not isinstance(v, bool) for v in value)
    )
    if not ok:
        raise RegistryError(
            f"{where}: constant {name} = {value!r}: use an integer, a string, a boolean, or a list of integers or strings (a set)"
        )
