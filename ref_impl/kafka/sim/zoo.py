"""The bug zoo: switchable bugs of the reference broker, each with the workload and faults that
can expose it, the buggy spec model it matches, and what the checker must say about its traces.

A bug flag makes the broker deviate from the protocol, so the correct spec rejects its traces.
``tv1_late_endtxn`` is no flag: it is Kafka's own TV1 protocol (KAFKA-17754), so its traces are
behaviours of the spec, and the checker must find the invariant they break.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class ZooBug:
    name: str
    bugs: tuple[str, ...]  # the broker's bug flags
    workload: str
    faults: str
    model: str  # the registry model of the same bug
    detection: str  # "rejected" or "violates <Invariant>[|<Invariant>]"
    what: str
    fault_kinds: tuple[str, ...] = ()  # what hypothesis schedules to expose it
    fault_types: tuple[str, ...] = ("",)
    horizon: int = 80  # faults are scheduled from an event in 0..horizon
    # a bound on a run's events, for a bug that livelocks the run (it would go on to the simulator's limit)
    max_events: int = 100_000

    def detected(self, status: str, invariant: str | None) -> bool:
        if self.detection == "rejected":
            return status == "rejected"
        wanted = self.detection.split(" ", 1)[1].split("|")
        return status == "violates" and invariant in wanted


ZOO: tuple[ZooBug, ...] = (
    ZooBug("no_epoch_bump", ("no_epoch_bump",), "transfer:version=TV1", "hangs=1", "kafka_no_fencing", "rejected",
           "InitProducerId hands the new instance the old epoch, so the zombie is not fenced",
           ("hang", "resume")),
    ZooBug("no_idempotence", ("no_idempotence",), "transfer:version=TV1", "late=Produce,retries=2", "kafka_no_idempotence",
           "rejected", "leaders append a retried batch again instead of answering it as a duplicate",
           ("delay", "retry"), ("Produce",)),
    ZooBug("tv1_late_endtxn", (), "transfer:version=TV1,txns=3", "late=EndTxn,retries=2", "kafka_tv1_late_endtxn",
           "violates MarkerSafety|Atomicity", "KAFKA-17754: a late EndTxn of TV1 completes the next transaction",
           ("delay", "retry"), ("EndTxn",), 30),
    ZooBug("no_generation_check", ("no_generation_check",), "ctp:ids=2,instances=1,input=2,txns=1", "hangs=1", "kafka_no_group_fencing",
           "rejected", "TxnOffsetCommit is not checked against the group generation (before Kafka 3.7)",
           ("hang", "resume"), ("", "AddOffsetsToTxn", "TxnOffsetCommit"), 40),
    ZooBug("lso_inclusive", ("lso_inclusive",), "transfer", "none", "kafka_lso_inclusive", "rejected",
           "read_committed treats the LSO as inclusive (Redpanda 2022): a record of an open transaction is read",
           ()),
    ZooBug("no_pending_check", ("no_pending_check",), "transfer:version=TV1", "hangs=1",
           "kafka_no_pending_check", "rejected", "the coordinator starts a transition while another is pending",
           ("delay", "hang", "resume"), ("", "InitProducerId"), 20),
)
ZOO = (
    *ZOO,
    ZooBug("tv2_endtxn_before_4_0", ("tv2_endtxn_before_4_0",), "transfer:version=TV2", "late=Produce,retries=2,timeouts",
           "kafka_tv2_abort_empty_old_rule", "rejected",
           "KAFKA-14563: TV2 before Kafka 4.0 answers an abort with no transaction open INVALID_TXN_STATE instead of bumping the epoch",
           ("timeout", "delay"), ("Produce", ""), 40),
    ZooBug("early_producer_expiry", ("early_producer_expiry",), "transfer:version=TV1,partitions=1", "failovers=1,expiry",
           "kafka_early_producer_expiry", "rejected",
           "KAFKA-9144: a leader forgets a producer while markers for it are still under way, and then takes a stale one",
           ("failover", "expire", "delay"), ("", "WriteTxnMarkers"), 60),
    ZooBug("append_fail_keeps_pending", ("append_fail_keeps_pending",), "transfer", "append-fails=1",
           "kafka_append_fail_keeps_pending", "rejected",
           "KAFKA-5351: a failed append to __transaction_state leaves the transition pending: CONCURRENT_TRANSACTIONS for ever",
           ("append-fail",), ("",), 40, max_events=300),
    ZooBug("tv2_overflow_wrong_pid", ("tv2_overflow_wrong_pid",), "transfer:version=TV2,partitions=1,txns=3,max_epoch=2",
           "none", "kafka_tv2_overflow_wrong_pid", "rejected",
           "KAFKA-18660: the TV2 EndTxn that exhausts the epoch answers the old producer id at Short.MaxValue",
           ()),
    ZooBug("fence_no_rotation", ("fence_no_rotation",), "transfer:version=TV2,partitions=1,txns=3,aborts=true,max_epoch=2",
           "txn-timeouts", "kafka_fence_no_rotation", "rejected",
           "KAFKA-20090: a timeout that fences the epoch up to Short.MaxValue completes without a new producer id",
           ("txn-timeout",), ("",), 60),
    ZooBug("fence_bump_on_failed_append", ("fence_bump_on_failed_append",), "transfer:version=TV2,partitions=1,txns=1,max_epoch=2",
           "hangs=1,append-fails=1", "kafka_fence_bump_on_failed_append", "rejected",
           "KAFKA-9666: a fence whose append fails keeps its epoch bump, until the epoch cannot be fenced any more",
           ("hang", "append-fail"), ("",), 25),
    ZooBug("verify_checks_pending", ("verify_checks_pending", "no_lowest_sequence"),
           "ctp:instances=1,input=1,txns=1,version=TV1V,in_flight=2,batches=2", "none", "kafka_tv1v_verify_pending", "rejected",
           "KAFKA-14904: verification refuses a batch while the coordinator writes another transition, and the batch "
           "behind it overtakes it at a leader with no state for the producer",
           ()),
    ZooBug("no_lowest_sequence", ("no_lowest_sequence",), "transfer:version=TV2,txns=1,instances=1,in_flight=2,batches=2",
           "none", "kafka_tv2_no_lowest_sequence", "rejected",
           "KAFKA-14920: with no lowest sequence under verification, a batch overtakes one whose verification was refused",
           ()),
)
ZOO_BY_NAME = {b.name: b for b in ZOO}
