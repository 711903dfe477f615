"""Traces: the format (``format``), the protocol plug-in contract (``protocol``), reading untrusted
trace files (``reader``), validating them against a spec with a model checker (``validation``, the
entry; ``verdicts``, ``tla_text``, ``invariants``, ``module_text``, ``records``, ``window_sizes``,
``one_window``, ``windows``, ``handoff``) and mutation testing of that validation (``mutation``)."""
