"""The reference Kafka broker: the spec specs/kafka/KafkaTxn.tla in Python, component by component.

Every state change is a method named after the spec action it implements (``TcEndTxn`` is
``tc_end_txn``) and emits one trace event with that name. ``Cluster`` holds the state (the spec's
variables); ``client``, ``coordinator``, ``leader``, ``group`` and ``network`` hold the actions of
each component; ``api`` is the Producer/Consumer library applications use.
"""
