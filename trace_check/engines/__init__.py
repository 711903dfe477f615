"""The model checkers: TLC and Apalache run as child processes, one working directory per run.

``runner`` picks an engine and runs a ``CheckTask``; ``tlc`` and ``apalache`` start each engine and
read what it says; ``process`` holds what both need (a private copy of the spec, a clean kill).
TLC's run is in parts beside ``tlc``: ``tlc_tools`` (the Java, the jar, the JVM options),
``tlc_workdir`` (the work folder, the ``.cfg``, checkpoints), ``tlc_cache`` (the run cache) and
``tlc_output`` (TLC's messages read into a ``CheckResult``); ``tlc_java`` is txconform's Java for TLC.
"""
