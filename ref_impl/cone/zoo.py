"""The bug zoo: the spec's Bugs, each switchable in the engine, with a workload and faults that
expose it, a seed whose run does (found by replaying seeds on the correct engine), the registry
model of the same bug, and the action of the event at which ``txconform check`` (which always
checks against the correct design) rejects its trace.

A bug shows in a trace only through what an event logs. ``unlogged_batch`` writes no batchlog
entry, which no event logs: it shows when a failover follows, because the correct design's new
master waits for the batchlog (CoActivate); so does ``local_batchlog``, after the loss of the
coordinator's data centre. ``index_same_ts_tombstone`` and
``index_outside_txn`` show in the number of mutations a commit's batch holds.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class ZooBug:
    name: str  # the spec's bug name and the engine's switch
    workload: str
    faults: str
    seed: int  # a run that exposes it
    model: str  # the registry model (specs/cone/models.toml) of the same bug
    rejected_at: str  # the action of the event the checker rejects
    what: str


_TWO = "album:adders=2,attempts=1"
ZOO = (
    ZooBug("zombie_commit", _TWO, "pause=1", 0, "cone_zombie_commit", "Resume", "a master waking from a GC pause carries on without reading the heartbeats"),
    ZooBug("failover_no_quorum", _TWO, "cut=1", 2, "cone_failover_no_quorum", "DeclareDead", "one backup's missed heartbeats declare the master dead"),
    ZooBug("no_ts_bump", _TWO, "crash=1", 0, "cone_no_ts_bump", "CoActivate", "a new master keeps its own clock"),
    ZooBug("ts_at_begin", _TWO, "none", 0, "cone_ts_at_begin", "CoBegin", "the timestamp is taken at Begin"),
    ZooBug(
        "unlogged_batch",
        _TWO,
        "crash=1,drop=1",
        25,
        "cone_unlogged_batch",
        "CoActivate",
        "the commit is an unlogged batch: nothing for a new master to wait for",
    ),
    ZooBug("early_unlock", _TWO, "none", 11, "cone_early_unlock", "CoRead", "locks released when the batch is sent"),
    ZooBug("commit_cl_one", _TWO, "none", 3, "cone_commit_cl_one", "CoCommitDone", "the commit answered after one replica"),
    ZooBug("read_without_lock", _TWO, "none", 0, "cone_read_without_lock", "CoRead", "the album is read without its lock"),
    ZooBug("no_ryw", _TWO, "none", 0, "cone_no_ryw", "CoRead", "a read of a written key goes to storage"),
    ZooBug("write_through", _TWO, "none", 0, "cone_write_through", "CoWrite", "writes go to storage before commit"),
    ZooBug("index_outside_txn", _TWO, "none", 3, "cone_index_outside_txn", "CoCommit", "index mutations left out of the commit's batch"),
    ZooBug(
        "index_same_ts_tombstone",
        "album:adders=0,retaggers=1,retag_to=0,attempts=1",
        "none",
        1,
        "cone_index_same_ts_tombstone",
        "CoCommit",
        "an unchanged index entry deleted and re-inserted in the batch",
    ),
    ZooBug("failover_no_drain", _TWO, "crash=1", 11, "cone_failover_no_drain", "CoActivate", "a new master serves before the batchlog is drained"),
    ZooBug("timeout_as_abort", _TWO, "none", 0, "cone_timeout_as_abort", "ClientTimeout", "a commit timeout reported as an abort"),
    ZooBug(
        "local_batchlog",
        _TWO,
        "dc=1",
        3,
        "cone_dc_loss_batchlog",
        "CoActivate",
        "the batchlog entry kept in the coordinator's data centre only dies with it",
    ),
)
ZOO_BY_NAME = {b.name: b for b in ZOO}
