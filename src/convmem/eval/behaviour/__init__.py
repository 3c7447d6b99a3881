"""``convmem eval behaviour``: does the memory behave — recall, non-recall, isolation, correction,
compaction fidelity, deletion, injection resistance and never-store, case by case on a real
database.

``cases`` loads the versioned case files, ``drivers`` (and ``http``) are the surfaces they are
played through, ``runner`` plays one case, ``suite`` runs them all and reports.
"""

from convmem.eval.behaviour.cases import KINDS, Case, load
from convmem.eval.behaviour.drivers import Driver, EngineDriver
from convmem.eval.behaviour.suite import plot, run_suite, table

__all__ = ["KINDS", "Case", "Driver", "EngineDriver", "load", "plot", "run_suite", "table"]
