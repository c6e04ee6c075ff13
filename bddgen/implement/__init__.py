"""Implement: turn specs into grounded, verified multi-turn conversations (entity graph, chains,
conversation drafting, verification, exact table answers)."""

from bddgen.implement.pipeline import FeatureReport, ImplementReport, ProgressEvent, implement_feature

__all__ = ["FeatureReport", "ImplementReport", "ProgressEvent", "implement_feature"]
