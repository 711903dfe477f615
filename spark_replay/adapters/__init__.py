"""The inputs of ``txconform replay``, by name (``--input-format NAME``): each an InputFormat that
turns its files into the canonical tables (spark_replay.tables) through a Stager. Without the
flag, each input goes to the first format whose ``sniff`` recognises it, in this order."""

from __future__ import annotations

from spark_replay.adapters.dumplog import DUMP_LOG
from spark_replay.adapters.probe import PROBE
from spark_replay.adapters.segments import SEGMENTS
from spark_replay.adapters.traces import TRACE
from spark_replay.staged import STAGED
from spark_replay.staging import InputFormat

FORMATS: dict[str, InputFormat] = {
    # a directory of tables already staged (``replay --out DIR`` keeps DIR/staged, ``generate-logs`` writes one)
    STAGED.name: STAGED,
    # a txconform probe run (txconform probe --out DIR)
    PROBE.name: PROBE,
    TRACE.name: TRACE,
    DUMP_LOG.name: DUMP_LOG,
    SEGMENTS.name: SEGMENTS,
}

# Jepsen Kafka client histories (history.edn): the writes and reads tables.
from spark_replay.adapters.jepsen import JEPSEN  # noqa: E402

FORMATS[JEPSEN.name] = JEPSEN
