"""Resharding (specs/resharding/, docs/resharding.md): a spec with no reference engine or trace
format; only how its runs are drawn (``diagram``)."""
