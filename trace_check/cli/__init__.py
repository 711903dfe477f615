"""The ``txconform`` command line: ``main`` parses and dispatches, finding each group of
subcommands by name (``main.COMMANDS``); ``model_check``, ``traces`` and ``serve`` hold
``trace_check``'s own, ``spark_replay.command`` and ``probe.command`` the others."""
