"""TLA+ values in Python: one model (``tla``) for every engine, TLC's printed values (``tlc``) and
ITF JSON (``itf``), the trace format Apalache writes and txconform emits."""
