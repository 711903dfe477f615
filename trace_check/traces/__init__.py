"""Traces: the format (``format``), the protocol plug-in contract (``protocol``), reading untrusted
trace files (``reader``), validating them against a spec with a model checker (``validation``) and
mutation testing of that validation (``mutation``)."""
