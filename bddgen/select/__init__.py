"""Spec selection: submodular greedy (log det + coverage), baselines, diversity metrics, writing."""

from bddgen.select.pool import SpecPool, build_pool
from bddgen.select.stage import METHODS, MethodComparison, compare_methods, select_specs
from bddgen.select.suite import Suite, scan_suite
from bddgen.select.writer import WriteReport, write_selected

__all__ = [
    "METHODS",
    "MethodComparison",
    "SpecPool",
    "Suite",
    "WriteReport",
    "build_pool",
    "compare_methods",
    "scan_suite",
    "select_specs",
    "write_selected",
]
