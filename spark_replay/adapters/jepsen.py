"""Jepsen Kafka client histories (``history.edn``) into the ``writes`` and ``reads`` tables.

The ops are those of Jepsen's Kafka workload (jepsen-io/jepsen, ``jepsen/src/jepsen/tests/kafka.clj``).
Jepsen's store writes a history with ``prn``, one op per line: a map, or since Jepsen 0.3 a
``#jepsen.history.Op{...}`` record, with ``:index``, ``:time`` (nanoseconds since the test began),
``:type`` (``:invoke``, ``:ok``, ``:fail``, ``:info``), ``:process``, ``:f`` and ``:value``. Each line is
read with the ``edn_format`` library.

- ``:send``, ``:poll`` and ``:txn`` ops hold a vector of micro-ops. ``[:send k v]`` is invoked and
  completes as ``[:send k [offset v]]`` (the offset may be nil, and a failed or crashed op keeps
  the invoked form). ``[:poll]`` is invoked and completes as ``[:poll {k [[offset v] ...]}]``.
- Each completion (``:ok``, ``:fail``, ``:info``) gives a ``writes`` row per send, its ``outcome``
  the op's type (``committed``: true for ok, false for fail, null for info), and a ``reads`` row per
  record polled, in the order returned (``read_index``), with ``op_type`` and ``op_f``. An op's
  ``:rebalance-log`` (``[{:keys [k ...]} ...]``) sets ``rebalanced`` on the reads of those keys.
- ``:assign`` and ``:subscribe`` ops that completed ``:ok`` or ``:info`` give a ``reads`` row per key
  they name, with a null offset (one row with a null topic for an empty list): from then on the
  process reads only those keys, which the poll-order check needs.
- Invocations and every other op (the nemesis, ``:crash``, ``:debug-topic-partitions``) give nothing.

Keys: an integer key ``k`` is topic ``t(k quot 2)``, partition ``k mod 2``, as Jepsen's Kafka and
Redpanda clients map it (``k->topic``, ``k->partition``, two partitions per topic). Any other key
(keywords and strings, as in Jepsen's own tests) is a topic of its own, partition 0. ``key`` keeps
the key as written, ``value`` the value (an integer as its digits). ``event`` and ``op_index``
are the op's ``:index`` (its position in the file when it has none), ``trace_id`` the file.

The file is read line by line and the rows go to the stager in chunks, so memory stays flat.
Anything that is not such a history raises ReplayInputError ``FILE:LINE: what is wrong; the fix``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import edn_format
from edn_format import Keyword

from spark_replay.adapters.kafka_common import CHUNK_ROWS, TableBuffer
from spark_replay.staging import InputFormat, ReplayInputError, Stager

SOURCE = "jepsen"
HISTORY = "history.edn"
# Jepsen's Kafka and Redpanda clients: (def partition-count 2), k->topic (str "t" (quot k 2)).
PARTITIONS_PER_TOPIC = 2
# Lines handed to edn_format at once (it builds its parser for every call; a line costs ~0.4 ms),
# and rows per Parquet part.
CHUNK_LINES = 2000
ROWS_PER_PART = CHUNK_ROWS

WRITE_COLUMNS = ("process", "op_index", "time", "topic", "partition", "key", "value", "offset", "outcome", "event", "committed")
READ_COLUMNS = ("process", "op_index", "time", "topic", "partition", "offset", "key", "value", "event", "op_type", "op_f", "read_index", "rebalanced")

_TYPES = ("invoke", "ok", "fail", "info")
_HISTORY_OPS = ("send", "poll", "txn")
_ASSIGN_OPS = ("assign", "subscribe")
_FIX = "a history.edn holds one Jepsen op per line, as Jepsen's store writes it"


class _Fail(Exception):
    """What is wrong with the current line, before the file and line are known."""


# The tags a history holds: Jepsen 0.3+ prints each op as a record, and a crashed op's :exception
# may print Java objects. (edn_format keeps its tags in one registry; these only add to it.)
for _tag in ("jepsen.history.Op", "object", "error"):
    edn_format.add_tag(_tag, lambda value: value)


def _name(x: Any) -> str | None:
    """A keyword's name (``:ok`` -> ``ok``), else None."""
    return x.name if isinstance(x, Keyword) else None


def _text(x: Any) -> str | None:
    """A key or value as text: an integer as its digits, a string as itself, anything else as EDN."""
    if x is None:
        return None
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, (int, str)):
        return str(x)
    if isinstance(x, Keyword):
        return f":{x.name}"
    return str(edn_format.dumps(x))


def key_topic_partition(k: Any) -> tuple[str, int]:
    """(topic, partition) of a Jepsen key: t(k quot 2), k mod 2 for an integer; else (the key, 0)."""
    if isinstance(k, int) and not isinstance(k, bool):
        quot = -((-k) // PARTITIONS_PER_TOPIC) if k < 0 else k // PARTITIONS_PER_TOPIC  # Clojure's quot truncates
        return f"t{quot}", k % PARTITIONS_PER_TOPIC
    if isinstance(k, Keyword):
        return k.name, 0
    return str(_text(k)), 0


def _is_vector(x: Any) -> bool:
    """An EDN vector or list (edn_format reads them as ImmutableList and tuple)."""
    return isinstance(x, Sequence) and not isinstance(x, (str, bytes))


def _op_map(value: Any) -> Mapping[Any, Any]:
    if not isinstance(value, Mapping):
        raise _Fail(f"not an op but {type(value).__name__} {str(_text(value))[:60]}")
    return value


def sniff(path: Path) -> bool:
    """A Jepsen store directory (it holds history.edn), or a file whose first line is an op map
    with :type and :f (an empty .edn file too)."""
    if path.is_dir():
        return (path / HISTORY).is_file()
    if not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            first = f.readline(64 * 1024)
    except OSError:
        return False
    if not first.strip():
        return path.suffix == ".edn" and path.stat().st_size == 0
    text = first.decode("utf-8", errors="replace").strip()
    if not (text.startswith("{") or text.startswith("#jepsen.history.Op{")) or ":type" not in text or ":f" not in text:
        return False
    try:
        values = edn_format.loads_all(text)
    except Exception:  # whatever edn_format raises, this is not a history
        return False
    if len(values) != 1 or not isinstance(values[0], Mapping):
        return False
    keys = {_name(k) for k in values[0]}
    return {"type", "f"} <= keys


def _history_file(path: Path) -> Path:
    if path.is_dir():
        history = path / HISTORY
        if not history.is_file():
            raise ReplayInputError(f"{path}: a directory without {HISTORY}; give a Jepsen store directory or its {HISTORY}")
        return history
    return path


def stage(paths: list[Path], stager: Stager) -> None:
    writes = TableBuffer(stager, "writes", WRITE_COLUMNS, ROWS_PER_PART)
    reads = TableBuffer(stager, "reads", READ_COLUMNS, ROWS_PER_PART)
    for given in paths:
        path = _history_file(given)
        writes.constants(source=SOURCE, trace_id=str(path))
        reads.constants(source=SOURCE, trace_id=str(path))
        _HistoryReader(path, writes, reads).read()
    writes.flush()
    reads.flush()


class _HistoryReader:
    def __init__(self, path: Path, writes: TableBuffer, reads: TableBuffer) -> None:
        self.path = path
        self.writes = writes
        self.reads = reads
        self.ops = 0  # ops read so far: the index of an op without :index

    def error(self, lineno: int, what: str, fix: str = _FIX) -> ReplayInputError:
        return ReplayInputError(f"{self.path}:{lineno}: {what}; {fix}")

    def read(self) -> None:
        try:
            f = self.path.open("rb")
        except OSError as e:
            raise ReplayInputError(f"{self.path}: cannot read it ({e.strerror}); give a Jepsen {HISTORY}") from None
        with f:
            chunk: list[tuple[int, str]] = []
            for lineno, raw in enumerate(f, start=1):
                try:
                    line = raw.decode("utf-8").strip()
                except UnicodeDecodeError as e:
                    raise self.error(lineno, f"not UTF-8 text ({e.reason} at byte {e.start})") from None
                if not line:
                    continue
                chunk.append((lineno, line))
                if len(chunk) >= CHUNK_LINES:
                    self._chunk(chunk)
                    chunk = []
            if chunk:
                self._chunk(chunk)

    def _chunk(self, lines: list[tuple[int, str]]) -> None:
        try:
            values = edn_format.loads_all("\n".join(text for _, text in lines))
        except Exception:  # find the bad line below
            values = None
        if values is None or len(values) != len(lines):
            values = [self._parse_line(lineno, text) for lineno, text in lines]
        for (lineno, _), value in zip(lines, values, strict=True):
            try:
                self._op(value)
            except _Fail as e:
                raise self.error(lineno, str(e)) from None

    def _parse_line(self, lineno: int, text: str) -> Any:
        try:
            values = edn_format.loads_all(text)
        except NotImplementedError as e:  # edn_format: an unknown tag
            tag = str(e).rsplit("(", 1)[-1].rstrip(")")
            raise self.error(lineno, f"the EDN tag #{tag} is not one a Jepsen history holds", "give the history.edn Jepsen wrote") from None
        except Exception as e:  # edn_format's errors carry no position we could use
            what = str(e) or type(e).__name__
            raise self.error(lineno, f"not EDN ({what[:80]})") from None
        if len(values) != 1:
            raise self.error(lineno, f"{len(values)} EDN values on one line, not one op")
        return values[0]

    def _op(self, value: Any) -> None:
        op = _op_map(value)
        fields = {_name(k): v for k, v in op.items() if _name(k) is not None}
        index_here = self.ops
        self.ops += 1
        if "type" not in fields or "f" not in fields:
            missing = " and ".join(k for k in (":type", ":f") if k[1:] not in fields)
            raise _Fail(f"an op without {missing}")
        kind = _name(fields["type"])
        if kind not in _TYPES:
            raise _Fail(f":type {_text(fields['type'])} is not :invoke, :ok, :fail or :info")
        f = _name(fields["f"]) or _text(fields["f"])
        if kind == "invoke" or f not in _HISTORY_OPS + _ASSIGN_OPS:
            return
        index = fields.get("index")
        op_index = index if isinstance(index, int) and not isinstance(index, bool) else index_here
        t = fields.get("time")
        time = t if isinstance(t, int) and not isinstance(t, bool) else None
        p = fields.get("process")
        process = _name(p) or _text(p)
        if f in _ASSIGN_OPS:
            if kind == "fail":
                return
            keys: Any = fields.get("value")
            if not _is_vector(keys):
                raise _Fail(f":{f} with value {str(_text(keys))[:60]}, not a vector of keys")
            if not keys:
                self.reads.add(process, op_index, time, None, None, None, None, None, op_index, kind, f, None, None)
            for k in keys:
                topic, partition = key_topic_partition(k)
                self.reads.add(process, op_index, time, topic, partition, None, _text(k), None, op_index, kind, f, None, None)
            return
        mops: Any = fields.get("value")
        if not _is_vector(mops):
            raise _Fail(f":{f} with value {str(_text(mops))[:60]}, not a vector of micro-ops")
        rebalanced: set[str | None] = set()
        for event in fields.get("rebalance-log") or ():
            if isinstance(event, Mapping):
                for k, v in event.items():
                    if _name(k) == "keys" and _is_vector(v):
                        rebalanced.update(_text(x) for x in v)
        committed = {"ok": True, "fail": False}.get(kind)
        read_index = 0
        for mop in mops:
            for row in self._micro_op(mop):
                if row[0] == "send":
                    _, k, offset, v = row
                    topic, partition = key_topic_partition(k)
                    self.writes.add(process, op_index, time, topic, partition, _text(k), _text(v), offset, kind, op_index, committed)
                else:
                    _, k, offset, v = row
                    topic, partition = key_topic_partition(k)
                    key = _text(k)
                    self.reads.add(process, op_index, time, topic, partition, offset, key, _text(v), op_index, kind, f, read_index, key in rebalanced)
                    read_index += 1

    @staticmethod
    def _micro_op(mop: Any) -> Iterator[tuple[str, Any, int | None, Any]]:
        """("send", key, offset, value) for a send, ("poll", key, offset, value) per record polled."""
        if not _is_vector(mop) or not mop:
            raise _Fail(f"micro-op {str(_text(mop))[:60]} is not [:send k v] or [:poll ...]")
        f = _name(mop[0])
        if f == "send":
            if len(mop) != 3:
                raise _Fail(f"micro-op {str(_text(mop))[:60]}: a send is [:send k v] or [:send k [offset v]]")
            k, v = mop[1], mop[2]
            if _is_vector(v) and len(v) == 2:
                yield "send", k, _offset(v[0]), v[1]
            else:
                yield "send", k, None, v
            return
        if f == "poll":
            if len(mop) == 1:  # as invoked: a failed or crashed op that returned nothing
                return
            polled = mop[1]
            if len(mop) != 2 or not isinstance(polled, Mapping):
                raise _Fail(f"micro-op {str(_text(mop))[:60]}: a poll is [:poll {{k [[offset v] ...]}}]")
            for k, pairs in polled.items():
                if not _is_vector(pairs):
                    raise _Fail(f"poll of key {_text(k)}: {str(_text(pairs))[:60]} is not a vector of [offset v] pairs")
                for pair in pairs:
                    if not (_is_vector(pair) and len(pair) == 2):
                        raise _Fail(f"poll of key {_text(k)}: {str(_text(pair))[:60]} is not an [offset v] pair")
                    yield "poll", k, _offset(pair[0]), pair[1]
            return
        raise _Fail(f"micro-op {str(_text(mop))[:60]} is not [:send k v] or [:poll ...]")


def _offset(x: Any) -> int | None:
    if x is None:
        return None
    if isinstance(x, int) and not isinstance(x, bool):
        return x
    raise _Fail(f"offset {str(_text(x))[:40]} is not an integer or nil")


JEPSEN = InputFormat("jepsen", "Jepsen Kafka client histories (history.edn, one op per line)", sniff, stage)
