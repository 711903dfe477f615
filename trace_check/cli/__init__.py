"""The ``txconform`` command line: ``main`` parses and dispatches; ``model_check`` and ``traces``
hold the subcommands."""
