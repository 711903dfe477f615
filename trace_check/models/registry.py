"""The models registries (``specs/<protocol>/models.toml``): every model CI checks, with its
expected outcome and its pinned state count.

Each spec folder has one registry. Its ``[base]`` table holds what the folder's models share (the
spec module, constants, invariants, trace_hide, timeout, engine options); each ``[models.NAME]``
gives only what differs: its constants and its ``tlc``/``apalache`` options are merged key by key
over the base's, every other key replaces the base's. A model names the outcome it must have
(``holds``, ``deadlock`` or ``violates <Invariant or Property>``), a one-line teaching note and, in tier "ci",
the distinct states and depth TLC reports for it, so that a reduction that silently stops reaching
states fails as surely as a lost counterexample. Everything is validated before any engine starts,
and every problem is reported as one line naming the file, the line, the model and the fix.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from trace_check.errors import TxconformError, suggest
from trace_check.models.definitions import COMMENT, declared_constants, defined_operators, named_parts
from trace_check.models.result import ApalacheOptions, CheckResult, CheckTask, TlcOptions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class RegistryError(TxconformError):
    """A registry file is wrong; the message names the file, the line, the model and what to do."""


REGISTRY_NAME = "models.toml"  # specs/<protocol>/models.toml
# What [base] may give every model of its registry.
BASE_KEYS = {"spec", "constants", "invariants", "trace_hide", "diagram", "timeout", "init", "next", "specification", "properties", "tlc", "apalache"}
# Pins: TLC's counts for the model (distinct states found, and the depth of the search).
PIN_KEYS = ("distinct_states", "depth")
MODEL_KEYS = BASE_KEYS | {"expect", "note", "witness", "tier", "tour", *PIN_KEYS}
MERGED_TABLES = ("constants", "tlc", "apalache")  # merged key by key over the base's
# "ci": checked on every change (the default); "full": the same protocols at larger bounds, hours
# rather than minutes, checked when asked for (`txconform model-check --tier full`).
TIERS = ("ci", "full")
# What ``txconform model-check --tier`` selects: a tier, every model, or the tour (the models of tier
# "ci" marked ``tour = true``: a few per protocol that tell its story, a holding design and the bugs
# it stops, which ``make`` checks in a minute or two; ``make models`` checks every model of tier ci).
SELECTIONS = (*TIERS, "all", "tour")
REQUIRED_KEYS = ("spec", "invariants", "expect", "note")
TLC_KEYS = {"constraints", "action_constraints", "symmetry", "view", "workers", "check_deadlock"}
APALACHE_KEYS = {"length"}
# A witness model's invariant is meant to fail (its counterexample is an example run); its name
# says so, as CCF's Debug... invariants do, so that no one reads it as a guarantee.
WITNESS_PREFIXES = ("Witness", "Debug")
DEFAULT_TIMEOUT = 300
# A model that pins at most this many distinct states compiles with the JIT's first tier alone
# (TlcOptions.quick_jit): its run is mostly reading the spec and starting up, which the
# optimizing compiler's work does not pay back. CPU time on 2 cores, both compilers against the
# first tier: kafka_no_fencing (2,712 states) 10.6 s against 5.7 s; kafka_tv2_hanging (6,371)
# 23.0 s against 17.9 s; ydb_independent_decision (22,575) 21.5 s against 11.2 s; but
# kafka_no_group_fencing (36,930) 52.2 s against 69.1 s (docs/benchmarks.md, "Where the test
# suite's minutes go").
QUICK_JIT_STATES = 25_000
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
    # Variables the readable steps leave out (ITF and JSON keep them).
    trace_hide: tuple[str, ...] = ()
    # The module whose DIAGRAM draws the model's runs as sequence diagrams (trace_check.traces.diagrams).
    diagram: str = ""
    tier: str = "ci"
    tour: bool = False  # one of the few models ``make`` checks (SELECTIONS)
    registry: Path | None = None  # the file the model comes from
    # TLC's counts for this model: distinct states, and the depth of the search (compared only
    # with one TLC worker: with more, TLC reports depths that vary by one between runs).
    distinct_states: int | None = None
    depth: int | None = None

    @property
    def timeout(self) -> float:
        return self.task.timeout

    @property
    def shown_expect(self) -> str:
        """The expected outcome as tables show it: a witness as a witness, not as a bug."""
        return self.shown(self.expect)

    def shown(self, verdict: str) -> str:
        """An outcome as tables show it: the expected violation of a witness is ``witness: Inv``."""
        if self.witness and verdict == self.expect:
            return "witness: " + verdict.split(" ", 1)[1]
        return verdict

    def pin_mismatch(self, result: CheckResult) -> str | None:
        """How a TLC result's counts differ from the pins, with the fix; None if they match or are
        not compared (no pin, another engine, or the depth of a run with several TLC workers)."""
        if result.engine != "tlc" or self.distinct_states is None:
            return None
        found, keys = [], []
        if result.distinct_states != self.distinct_states:
            count = f"{result.distinct_states:,}" if result.distinct_states is not None else "no count of"
            found.append(f"{count} distinct states where {self.distinct_states:,} are pinned")
            keys.append("distinct_states")
        if self.depth is not None and self.task.tlc.workers == 1 and result.depth != self.depth:
            found.append(f"depth {result.depth if result.depth is not None else '-'} where {self.depth} is pinned")
            keys.append("depth")
        if not found:
            return None
        where = f"{self.registry}:{self.line}" if self.registry else "the registry"
        return f"{', '.join(found)}: if the change is meant, update {' and '.join(keys)} in {where}"


@attrs.frozen
class Registry:
    files: tuple[Path, ...]
    models: tuple[Model, ...]

    @property
    def where(self) -> str:
        return ", ".join(str(f) for f in self.files)

    def select(self, names: list[str], tier: str = "ci") -> list[Model]:
        """The named models in the order given (whatever their tier), or all models of ``tier``
        (one of SELECTIONS: "ci", "full", "all" or "tour"); an unknown name is an error."""
        if not names:
            return [m for m in self.models if tier in ("all", m.tier) or (tier == "tour" and m.tour)]
        by_name = {m.name: m for m in self.models}
        chosen = []
        for name in names:
            if name not in by_name:
                raise RegistryError(f"{self.where}: no model named {name!r}{suggest(name, by_name)}; `txconform model-check --list` lists them")
            chosen.append(by_name[name])
        return chosen


def registry_files(specs_dir: Path) -> list[Path]:
    """The registries of a specs folder: one ``models.toml`` per spec folder, in name order."""
    return sorted(specs_dir.glob(f"*/{REGISTRY_NAME}"))


def default_registry_files() -> list[Path]:
    """Every ``specs/*/models.toml`` of the current directory if it has any, else of this checkout."""
    local = registry_files(Path("specs"))
    if local:
        return local
    checkout = Path(__file__).resolve().parents[2] / "specs"
    files = registry_files(checkout)
    if not files:
        raise RegistryError(f"no registry: neither specs/*/{REGISTRY_NAME} here nor {checkout}/*/{REGISTRY_NAME} exists; pass --registry FILE")
    return files


def load_registries(paths: Iterable[Path]) -> Registry:
    """Several registries as one; a model name may be used only once across them."""
    files: list[Path] = []
    models: list[Model] = []
    seen: dict[str, Model] = {}
    for path in paths:
        reg = load_registry(path)
        files.append(path)
        for model in reg.models:
            if model.name in seen:
                first = seen[model.name]
                raise RegistryError(
                    f"{path}:{model.line}: model {model.name}: the name is taken by {first.registry}:{first.line}: "
                    "model names must be unique across the registries; rename one"
                )
            seen[model.name] = model
            models.append(model)
    if not files:
        raise RegistryError("no registry given")
    return Registry(files=tuple(files), models=tuple(models))


def load_registry(path: Path) -> Registry:
    text, data = _read(path)
    base = _load_base(path, text, data)
    _check_keys(path, "the top level", data, {"base", "models"}, line=1)
    models_table = data.get("models", {})
    _check_table(path, "[models]", models_table, 1)
    if not models_table:
        raise RegistryError(f"{path}: no models: add a [models.NAME] table")
    models = tuple(_load_model(path, text, name, entry, base) for name, entry in models_table.items())
    return Registry(files=(path,), models=models)


def spec_invariants(registry_file: Path) -> tuple[str, ...]:
    """The invariants of a registry's [base]: what every model of the spec checks unless it says
    otherwise (the trace checker checks them along every trace)."""
    text, data = _read(registry_file)
    base = _load_base(registry_file, text, data)
    if "invariants" not in base:
        raise RegistryError(f"{registry_file}:{_table_line(text, 'base')}: [base] has no invariants: add invariants = [...]")
    return tuple(base["invariants"])


def spec_diagram(registry_file: Path) -> tuple[str | None, tuple[str, ...]]:
    """The [base]'s ``diagram`` module (None: none) and ``trace_hide``: how a run of the spec is
    drawn and shown (a checked trace's, as a model's counterexample)."""
    text, data = _read(registry_file)
    base = _load_base(registry_file, text, data)
    return base.get("diagram"), tuple(base.get("trace_hide", ()))


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    if not path.is_file():
        raise RegistryError(f"{path}: registry file not found: pass --registry FILE or run from the project root")
    text = path.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RegistryError(f"{path}: not valid TOML: {exc}") from None


def _load_base(path: Path, text: str, data: Mapping[str, Any]) -> dict[str, Any]:
    """The [base] table, checked on its own: keys, kinds, and the operators its spec must define."""
    if "defaults" in data:
        raise RegistryError(
            f"{path}:{_table_line(text, 'defaults')}: [defaults] is now [base]: rename it, and write workers as tlc = {{ workers = N }}"
        )
    base = data.get("base", {})
    line = _table_line(text, "base")
    _check_table(path, "[base]", base, line)
    _check_keys(path, "[base]", base, BASE_KEYS, line)
    where = f"{path}:{line}: [base]"
    for key in MERGED_TABLES:
        _typed(where, key, base.get(key, {}), dict)
    _check_keys(path, "[base] tlc", base.get("tlc", {}), TLC_KEYS, line)
    _check_keys(path, "[base] apalache", base.get("apalache", {}), APALACHE_KEYS, line)
    for cname, value in base.get("constants", {}).items():
        _check_constant(where, cname, value)
    if "invariants" in base:
        _names(where, "invariants", base["invariants"])
    if "spec" in base:
        spec_file = _spec_file(path, where, base["spec"])
        defined = defined_operators(spec_file)
        for op in base.get("invariants", []):
            if op not in defined:
                raise RegistryError(f"{where}: invariant {op} is not defined in {base['spec']} or the modules it extends{suggest(op, defined)}")
        declared = declared_constants(spec_file)
        for cname in base.get("constants", {}):
            if cname not in declared:
                raise RegistryError(f"{where}: constant {cname} is not declared by {base['spec']}{suggest(cname, declared)}")
    return dict(base)


def _merge(base: Mapping[str, Any], entry: Mapping[str, Any]) -> dict[str, Any]:
    """A model's entry over the base: constants, tlc and apalache key by key, the rest replaced."""
    merged = dict(base)
    for key, value in entry.items():
        if key in MERGED_TABLES and isinstance(value, dict):
            merged[key] = {**base.get(key, {}), **value}
        else:
            merged[key] = value
    return merged


def _spec_file(path: Path, where: str, spec: Any) -> Path:
    spec_file: Path = (path.parent / _typed(where, "spec", spec, str)).resolve()
    if not spec_file.is_file():
        raise RegistryError(f"{where}: spec file {spec} not found (looked for {spec_file})")
    return spec_file


def _load_model(path: Path, text: str, name: str, own: Any, base: Mapping[str, Any]) -> Model:
    line = _table_line(text, f"models.{name}")
    where = f"{path}:{line}: model {name}"
    if not _NAME.match(name):
        raise RegistryError(f"{where}: a model name must be letters, digits and underscores")
    _check_table(path, f"model {name}", own, line)
    _check_keys(path, f"model {name}", own, MODEL_KEYS, line)
    entry = _merge(base, own)
    for key in REQUIRED_KEYS:
        if key not in entry:
            raise RegistryError(f"{where}: missing key {key!r}" + (" (give it here or in [base])" if key in BASE_KEYS else ""))

    spec_file = _spec_file(path, where, entry["spec"])

    constants = _typed(where, "constants", entry.get("constants", {}), dict)
    for cname, value in constants.items():
        _check_constant(where, cname, value)

    invariants = tuple(_names(where, "invariants", entry["invariants"]))
    expect = _typed(where, "expect", entry["expect"], str).strip()
    match = _EXPECT.match(expect)
    if not match:
        raise RegistryError(f"{where}: expect = {expect!r}: write \"holds\", \"deadlock\" or \"violates <Invariant>\"")
    expected_inv = match.group(2)
    properties = tuple(_names(where, "properties", entry.get("properties", [])))
    specification = _optional_name(where, "specification", entry.get("specification"))
    if expected_inv and expected_inv not in invariants + properties:
        raise RegistryError(f"{where}: expects a violation of {expected_inv}, which is not in its invariants or properties list")
    if expected_inv in properties and len(properties) > 1:
        raise RegistryError(
            f"{where}: expects a violation of the temporal property {expected_inv}, but TLC does not say which of "
            f"{', '.join(properties)} it found violated: list only {expected_inv} in properties"
        )
    if specification and ("init" in own or "next" in own):
        raise RegistryError(f"{where}: gives specification = {specification!r} and init/next: the specification formula names both; drop init and next")
    if properties and not specification:
        raise RegistryError(f"{where}: temporal properties need a specification with fairness: add specification = \"FairSpec\" (or the spec's own)")

    tlc_entry = _typed(where, "tlc", entry.get("tlc", {}), dict)
    _check_keys(path, f"model {name} [tlc]", tlc_entry, TLC_KEYS, line)
    tlc = TlcOptions(
        constraints=tuple(_names(where, "tlc.constraints", tlc_entry.get("constraints", []))),
        action_constraints=tuple(_names(where, "tlc.action_constraints", tlc_entry.get("action_constraints", []))),
        symmetry=_optional_name(where, "tlc.symmetry", tlc_entry.get("symmetry")),
        view=_optional_name(where, "tlc.view", tlc_entry.get("view")),
        workers=_positive_int(where, "tlc.workers", tlc_entry.get("workers", 1)),
        check_deadlock=_typed(where, "tlc.check_deadlock", tlc_entry.get("check_deadlock", True), bool),
    )
    apalache_entry = _typed(where, "apalache", entry.get("apalache", {}), dict)
    _check_keys(path, f"model {name} [apalache]", apalache_entry, APALACHE_KEYS, line)
    if "length" not in apalache_entry:
        raise RegistryError(f"{where}: missing apalache.length (the number of steps Apalache explores)")
    apalache = ApalacheOptions(length=_positive_int(where, "apalache.length", apalache_entry["length"]))

    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise RegistryError(f"{where}: timeout = {timeout!r}: give a positive number of seconds")
    if properties and tlc.view:
        # TLC finds the loops of a liveness counterexample among whole states: a view that merges
        # states (the base's, for the safety models) is not used, and a model may not ask for one.
        if "view" in own.get("tlc", {}):
            raise RegistryError(f"{where}: TLC checks temporal properties on whole states: drop tlc.view {tlc.view}")
        tlc = attrs.evolve(tlc, view=None)
    init = _optional_name(where, "init", entry.get("init")) or "Init"
    nxt = _optional_name(where, "next", entry.get("next")) or "Next"

    defined = defined_operators(spec_file)
    operators = [("init", init), ("next", nxt)] + [("invariant", i) for i in invariants] + [("property", q) for q in properties]
    operators += [("specification", specification)] if specification else []
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
    trace_hide = tuple(_typed(where, "trace_hide", entry.get("trace_hide", []), list))
    if not all(isinstance(h, str) and _HIDE.match(h) for h in trace_hide):
        raise RegistryError(f"{where}: trace_hide must list variables or var.field names, e.g. [\"net\", \"cl.req\"]")
    diagram = _typed(where, "diagram", entry.get("diagram", ""), str)
    if diagram and not all(part.isidentifier() for part in diagram.split(".")):
        raise RegistryError(f"{where}: diagram = {diagram!r}: name a Python module that defines DIAGRAM, e.g. \"ref_impl.kafka.diagram\"")
    if witness and not expected_inv:
        raise RegistryError(f"{where}: a witness model must expect \"violates <Witness>\": its trace is the example")
    if witness and not expected_inv.startswith(WITNESS_PREFIXES):
        raise RegistryError(
            f"{where}: a witness's invariant is named Witness... or Debug..., so that no one takes it for a guarantee: "
            f"rename {expected_inv} in the spec and here, e.g. to Witness{_unprefixed(expected_inv)}"
        )
    if expected_inv and expected_inv.startswith(WITNESS_PREFIXES) and not witness:
        raise RegistryError(f"{where}: {expected_inv} is a witness (its name says so): add witness = true")
    tier = _typed(where, "tier", entry.get("tier", "ci"), str)
    if tier not in TIERS:
        raise RegistryError(f"{where}: tier = {tier!r}: write \"ci\" (checked on every change) or \"full\" (larger bounds, on demand)")
    tour = _typed(where, "tour", own.get("tour", False), bool)
    if tour and tier != "ci":
        raise RegistryError(f"{where}: tour = true, but the tour (`make`) checks models of tier \"ci\" only, in a minute or two: drop tour or the tier")
    note = _typed(where, "note", entry["note"], str).strip()
    if not note or "\n" in note:
        raise RegistryError(f"{where}: note must be one non-empty line")

    pins = {key: _positive_int(where, key, entry[key]) for key in PIN_KEYS if key in entry}
    # TLC finds a liveness counterexample after its search and reports no depth with it.
    liveness_cex = bool(expected_inv) and expected_inv in properties and _is_liveness(spec_file, expected_inv)
    pin_keys = ("distinct_states",) if liveness_cex else PIN_KEYS
    if "depth" in pins and "depth" not in pin_keys:
        raise RegistryError(f"{where}: TLC reports no depth with the counterexample of a temporal property: drop depth")
    if tier == "ci" and len(pins) < len(pin_keys):
        absent = " and ".join(k for k in pin_keys if k not in pins)
        raise RegistryError(
            f"{where}: no pinned {absent}: every model of tier \"ci\" pins TLC's distinct_states and depth "
            "(to measure them, pin any number, e.g. distinct_states = 1, depth = 1, and run "
            f"`txconform model-check --engine tlc {name}`: the mismatch it reports gives both)"
        )
    if "distinct_states" in pins and expected_inv and tlc.workers > 1:
        raise RegistryError(
            f"{where}: distinct_states is pinned, but TLC stops at the first violation and with {tlc.workers} workers "
            "how far it got varies from run to run: set tlc.workers = 1"
        )
    if pins.get("distinct_states", QUICK_JIT_STATES + 1) <= QUICK_JIT_STATES:
        tlc = attrs.evolve(tlc, quick_jit=True)
    task = CheckTask(
        name=name,
        spec_file=spec_file,
        constants=constants,
        invariants=invariants,
        parts={inv: parts for inv in invariants if (parts := named_parts(spec_file, inv)) != (inv,)},
        init=init,
        next=nxt,
        specification=specification,
        properties=properties,
        tlc=tlc,
        apalache=apalache,
        timeout=float(timeout),
    )
    return Model(name=name, task=task, expect=expect, note=note, line=line, witness=witness, trace_hide=trace_hide,
                 diagram=diagram,
                 tier=tier, tour=tour, registry=path, distinct_states=pins.get("distinct_states"), depth=pins.get("depth"))


def _is_liveness(spec_file: Path, name: str) -> bool:
    """Is property ``name`` a liveness property (TLC checks it after the search, reporting no
    depth), rather than a box of an action (checked on each step, like an invariant)? Read from
    its definition: a leads-to or an eventually."""
    for module in [spec_file, *spec_file.parent.glob("*.tla")]:
        text = COMMENT.sub("", module.read_text(encoding="utf-8"))
        match = re.search(rf"^\s*{re.escape(name)}\s*==(.*?)(?=^\S|\Z)", text, re.MULTILINE | re.DOTALL)
        if match:
            body = match.group(1).replace("<<", "").replace(">>", "")  # tuples, not <> (eventually)
            return "~>" in body or "<>" in body
    return True


def _unprefixed(name: str) -> str:
    """NoTransactionCommits -> TransactionCommits: the run a witness shows, for a suggested name."""
    return name[2:] if name.startswith("No") and name[2:3].isupper() else name


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


def _optional_name(where: str, key: str, value: Any) -> str | None:
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
