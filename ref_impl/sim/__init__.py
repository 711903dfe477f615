"""What every protocol's simulator shares: the settings of a run (``settings``) and the seeded
choice of one enabled step at a time (``stepper``). Each protocol's own simulator is in its
package: ``ref_impl/kafka/sim/``, ``ref_impl/ydb/sim.py``, ``ref_impl/cone/sim.py``."""
