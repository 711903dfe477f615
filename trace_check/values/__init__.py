"""TLA+ values in Python: one model (``tla``) for every engine, and TLC's printed values (``tlc``).
ITF JSON, the trace format Apalache writes and txconform emits, is read into counterexamples by
``trace_check.models.itf``."""
