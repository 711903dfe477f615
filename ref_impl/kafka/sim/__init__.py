"""Deterministic simulation of the reference broker: a seeded scheduler picks, step by step, one
enabled action of the cluster (a message delivered, an append, a fault), so the same seed and
workload always give the same run and the same trace, byte for byte."""
