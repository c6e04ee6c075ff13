"""The judge's tolerances are settings ([run] unit_tolerance, part_max_words, part_other_words): their defaults are
the values the deterministic checks always had, and changing one changes what they decide."""

from __future__ import annotations

from pathlib import Path

from bddgen.config import RunSettings, Settings, default_of, load_settings
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.pipeline import ModelBuilders, Models
from bddgen.project import Project
from bddgen.results import Verdict
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.quantities import Quantity, quantities, states
from bddgen.evaluation.reference_match import DEFAULT_TOLERANCES, Tolerances, match_reference
from bddgen.run.suite import RunOptions, SuiteRun
from bddgen.specs import QueryType, Turn


def _judge(settings: Settings) -> tuple[Judge, ScriptedLM]:
    """A judge with the settings' tolerances, and its model (which grades 2 by the rubric: a turn the model grades fails)."""
    backend = ScriptedLM(default={"feedback": "graded by the model", "score": 2, "error_category": "none"})
    return Judge(lambda: LanguageModel(backend), tolerances=Tolerances.of(settings.run), method="rubric"), backend


def _turn(answer: str, query_type: QueryType = QueryType.SINGLE_DOC) -> Turn:
    return Turn(question="How long is the route?", answer=answer, query_type=query_type)


def test_the_defaults_are_the_values_the_checks_always_used() -> None:
    assert (default_of(RunSettings, "unit_tolerance"), default_of(RunSettings, "part_max_words"), default_of(RunSettings, "part_other_words")) == (
        0.005, 8, 2,
    )
    assert Tolerances.of(Settings().run) == DEFAULT_TOLERANCES == Tolerances(0.005, 8, 2)


def test_unit_tolerance_decides_how_far_converted_units_may_differ() -> None:
    (five_km,) = quantities("5 km")
    assert states("3.1 miles", five_km) and not states("3 miles", five_km)  # 0.2 % and 3.4 % off
    assert states("3 miles", five_km, tolerance=0.05)
    judge, backend = _judge(Settings())
    default = judge.judge_turn(_turn("5 km"), "It is 3 miles long.", [])
    assert default.verdict is Verdict.FAIL and "'3 miles' where the reference says '5 km'" in default.feedback
    judge, backend = _judge(Settings(run={"unit_tolerance": 0.05}))
    loose = judge.judge_turn(_turn("5 km"), "It is 3 miles long.", [])
    assert loose.verdict is Verdict.PASS and backend.tasks_seen() == []
    assert not Quantity(5000.0, "length").matches(Quantity(5100.0, "length"), tolerance=0.0)


def test_part_max_words_decides_which_parts_the_checks_read() -> None:
    reference = "The founder of the club was Anton Brisk, a local baker"  # 11 words
    assert match_reference("It was Piet Varley.", reference, QueryType.SINGLE_DOC, "") is None  # a sentence: the model judges
    longer = Tolerances(part_max_words=12)
    decided = match_reference("It was Piet Varley.", reference, QueryType.SINGLE_DOC, "", longer)
    assert decided is not None and not decided.passed
    judge, backend = _judge(Settings())
    assert judge.judge_turn(_turn(reference), "It was Piet Varley.", []).feedback == "graded by the model"
    judge, backend = _judge(Settings(run={"part_max_words": 12}))
    judged = judge.judge_turn(_turn(reference), "It was Piet Varley.", [])
    assert judged.verdict is Verdict.FAIL and "states nothing of" in judged.feedback and backend.tasks_seen() == []


def test_part_other_words_decides_when_a_stated_part_passes_without_the_model() -> None:
    reference = "61,811 paying spectators"  # two words besides its number
    answer = "The attendance was 61,811."
    decided = match_reference(answer, reference, QueryType.SINGLE_DOC, "")
    assert decided is not None and decided.passed
    assert match_reference(answer, reference, QueryType.SINGLE_DOC, "", Tolerances(other_words_max=1)) is None
    judge, backend = _judge(Settings())
    assert judge.judge_turn(_turn(reference), answer, []).verdict is Verdict.PASS and backend.tasks_seen() == []
    judge, backend = _judge(Settings(run={"part_other_words": 1}))
    assert judge.judge_turn(_turn(reference), answer, []).feedback == "graded by the model" and backend.tasks_seen()


def test_a_run_judges_with_the_project_settings(tmp_path: Path) -> None:
    (tmp_path / "bddgen.toml").write_text(
        '[run]\nunit_tolerance = 0.05\npart_max_words = 12\npart_other_words = 0\n\n[assistants.fake]\nkind = "fake"\nscript = "fake.yaml"\n'
    )
    (tmp_path / "fake.yaml").write_text("replies: []\n")
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    models = Models(project, ModelBuilders(language_model=lambda project, settings: LanguageModel(ScriptedLM(default={}))))
    suite = SuiteRun(models, RunOptions(assistant="fake", run_dir=tmp_path / "runs" / "r1"))
    assert suite.judge.tolerances == Tolerances(0.05, 12, 0)
