"""The engine: the spec's variables and every action, component by component."""

from __future__ import annotations

from .kqp import KqpSteps
from .network import NetworkSteps
from .tablet import TabletSteps
from .worker import WorkerSteps


class Engine(WorkerSteps, KqpSteps, TabletSteps, NetworkSteps):
    """YdbTopics in Python: ``x_enabled`` is the guard of spec action X, ``x`` its effect."""
