"""The reference Kafka broker: the spec specs/kafka/KafkaTxn.tla in Python, component by component.

Every spec action is a guard and an effect named after it (``TcEndTxn`` is ``tc_end_txn_enabled``
and ``tc_end_txn``); the effect emits one trace event with the action's name. ``state`` holds the
spec's variables; ``client``, ``coordinator``, ``leader``, ``group`` and ``network`` hold the
actions of each component, which ``cluster.Cluster`` combines; ``actions.ACTIONS`` is the table of
them all; ``api`` is the Producer/Consumer library applications use.
"""
