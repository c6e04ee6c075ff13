"""The rubric a probe's dialogues are judged by: the user's YAML, or the rubric judge's shipped default."""

from __future__ import annotations

from pathlib import Path

from bddgen.evaluation.rubric import Rubric, default_rubric
from bddgen.intents.files import read_model_yaml


def load_rubric(path: Path | None) -> Rubric:
    """The rubric at `path`, or the shipped default when `path` is None."""
    if path is None:
        return default_rubric()
    return read_model_yaml(path, Rubric, "rubric", "write one (see the default in the documentation of bddgen probe) or unset [probe] rubric")
