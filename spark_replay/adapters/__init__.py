"""Input formats of the replay: each turns its files into the canonical tables (spark_replay.tables).

``FORMATS`` maps each ``--input-format`` name to its ``InputFormat``; without the flag, each input
is given to the first format whose ``sniff`` recognises it.
"""

from __future__ import annotations

from spark_replay.adapters.traces import TRACE
from spark_replay.staging import InputFormat

FORMATS: dict[str, InputFormat] = {
    TRACE.name: TRACE,
}
