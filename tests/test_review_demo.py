"""On the demo projects (the whole demo with fakes, both shipped corpora) every turn the review page
lists carries its evidence as the corpus holds it: no turn needs the corpus opened to be judged."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from bddgen.demo import Demo
from bddgen.features.reader import feature_files
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.review.actions import Reviewer
from bddgen.specs import QueryType

from test_demo_pipeline import SIZES, FakeModels, fake_demo_models

EVIDENCE_OF = {
    QueryType.UNANSWERABLE: {"absent"},
    QueryType.SYNTHESIS: {"turns"},
}


@pytest.mark.parametrize("corpus", ["sports", "airline"])
def test_every_demo_turn_shows_its_evidence(tmp_path: Path, corpus: str) -> None:
    fakes = FakeModels()
    Demo(tmp_path / "demo", sizes=SIZES, models=fake_demo_models(fakes), console=Console(record=True), corpus=corpus).run()
    project = Project.discover(tmp_path / "demo")
    models = Models(project, fake_demo_models(fakes))
    suite = Reviewer(project, feature_files([project.features_path]), models.corpus.by_id(), models.recognizer).view()
    turns = [t for s in suite.specs for c in s.conversations for t in c.turns]
    assert turns
    for turn in turns:
        if turn.query_type is QueryType.UNANSWERABLE and not turn.prompt_hash:
            continue  # a hand-written example's unanswerable turn: nothing in the corpus to show
        expected = EVIDENCE_OF.get(turn.query_type, {"table", "sentence", "plan"})  # plan: a spec's own question answered by a query plan
        assert turn.evidence.kind in expected, (turn.query_type, turn.question, turn.evidence)
        if turn.evidence.kind == "plan":
            assert turn.evidence.plan and turn.evidence.note and turn.exact
        if turn.evidence.kind == "table":
            assert turn.evidence.cells[turn.evidence.headers.index(turn.evidence.column)] and turn.evidence.filter
        if turn.evidence.kind == "sentence":
            assert turn.evidence.sentence is not None and 0 <= turn.evidence.sentence < len(turn.evidence.sentences)
        assert not turn.disagrees and all(c.passed for c in turn.recorded)
        assert turn.prompt_hash or turn.evidence.located  # written by the implement stage, or a hand-written example
