"""The model checkers: TLC and Apalache run as child processes, one working directory per run.

``runner`` picks an engine and runs a ``CheckTask``; ``tlc`` and ``apalache`` start each engine and
read what it says; ``process`` holds what both need (a private copy of the spec, a clean kill).
"""
