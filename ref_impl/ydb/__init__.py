"""The reference YDB Topics engine: the spec specs/ydb/YdbTopics.tla in Python.

Every spec action is a guard and an effect named after it (``PqCalc`` is ``pq_calc_enabled`` and
``pq_calc``); the effect emits one trace event named as the spec's ``action`` variable names the
step (``PartitionApply`` emits ``PartitionCommit`` or ``PartitionRollback``, ``PqWrite`` emits
``PqWrite``, ``PqWriteSkipped`` or ``PqWriteRefused``). ``state`` holds the spec's variables;
``worker`` (the SDK's steps), ``kqp`` (the session, the coordinator), ``tablet`` (PQ tablets and the datashard) and
``network`` hold the actions, which ``engine.Engine`` combines; ``actions.ACTIONS`` is the table
of them all; ``api`` is the SDK-shaped client library; ``sim`` the seeded scheduler; ``zoo`` the
bugs; ``trace`` and ``protocol`` the plug-in ``txconform`` loads.
"""
