"""Candidate spec generation: the LM writes m specs, one per call, each checked mechanically."""

from bddgen.generate.stage import generate_candidates, load_candidates, save_candidates

__all__ = ["generate_candidates", "load_candidates", "save_candidates"]
