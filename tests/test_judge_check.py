"""`bddgen judge check`: candidates of known verdict, the judge's figures on them, and where they show."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from conftest import SCRIPTED_JUDGE, SCRIPTED_JUDGE_SETTINGS
from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.implement.unanswerable import AbsentSubject
from bddgen.judging.candidates import RIGHT_KINDS, WRITTEN_BY_LM, WRONG_KINDS, Candidate, CandidateMaker, Kind, VerifiedTurn, name_spans
from bddgen.judging.qualify import grade, summarise
from bddgen.run.judge_check import false_fail_warning, read_check
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.models import TableDocument
from bddgen.results import Judgement, Verdict
from bddgen.evaluation.judge import Judge
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Turn

FINALS = TableDocument(
    id="tables/varen_cup_finals", title="Varen Cup finals", headers=["year", "winner", "attendance"],
    rows=[["2021", "Redmarsh Rovers", "58,102"], ["2022", "Eastquay Olympic", "60,410"], ["2023", "Harbour City FC", "61,811"]],
)
HISTORY = [Message("user", "Who won the 2023 Varen Cup final?"), Message("assistant", "Harbour City FC.")]


def _verified(question: str, answer: str, kind: QueryType = QueryType.SINGLE_DOC, evidence: object = None,
              table: TableDocument | None = None, exact: str | None = None) -> VerifiedTurn:
    expectation = ExactExpectation(table_id=FINALS.id, operation="lookup", value=exact) if exact else None
    turn = Turn(question=question, answer=answer, query_type=kind, exact=expectation)
    return VerifiedTurn("features/cup.feature", "final-2023", len(HISTORY) // 2 + 1, turn, list(HISTORY), evidence, table)  # type: ignore[arg-type]


TURNS = [
    _verified("How many spectators watched the 2023 final?", "61,811 spectators.", evidence=TableEvidence(
        table=FINALS.id, row=2, column="attendance", filter={"year": "2023"}, value="61,811"), table=FINALS),
    _verified("Which club won the 2022 final?", "Eastquay Olympic", evidence=TableEvidence(
        table=FINALS.id, row=1, column="winner", filter={"year": "2022"}, value="Eastquay Olympic"), table=FINALS),
    _verified("Who scored the winner?", "Elias Marwood", evidence=SentenceEvidence(
        document="text/2023-final", sentence=3, text="Elias Marwood scored the winner in the 117th minute.", answer="Elias Marwood")),
    _verified("When was Orlanmouth Wanderers founded, and who coached them during the 1995 cup run?", "1899; Piet Varley",
              QueryType.SYNTHESIS),
    _verified("Which clubs reached the semi-finals?", "Harbour City FC, Eastquay Olympic and Redmarsh Rovers"),
    _verified("Who refereed that final?", CANNOT_ANSWER, QueryType.UNANSWERABLE, AbsentSubject(attribute="referee", entity="the 2023 final")),
]
NAMES = ["Anton Brisk", "Korrin Sporting", "Mateo Varga"]
BY_CODE = set(RIGHT_KINDS + WRONG_KINDS) - set(WRITTEN_BY_LM)


def _candidates() -> list[Candidate]:
    maker = CandidateMaker(NAMES, random.Random(0))
    return [c for t in TURNS for c in maker.of(t)]


def test_every_kind_of_candidate_is_made_from_these_turns() -> None:
    assert {c.kind for c in _candidates()} == BY_CODE


class _ModelNeeded(Exception):
    pass


def _model_needed() -> LanguageModel:
    raise _ModelNeeded


def test_each_kind_gets_its_known_verdict_from_the_deterministic_judge_where_it_applies() -> None:
    """Every candidate a deterministic check decides gets its known verdict; every kind has such candidates here."""
    decided: set[str] = set()
    for candidate in _candidates():
        try:
            judgement = Judge(_model_needed).judge_turn(candidate.source.turn, candidate.answer, candidate.source.history)
        except _ModelNeeded:
            continue
        decided.add(candidate.kind)
        assert judgement.verdict is (Verdict.PASS if candidate.should_pass else Verdict.FAIL), (candidate.kind, candidate.answer, judgement.feedback)
    assert decided == BY_CODE


def test_a_contradiction_negates_or_denies_the_reference() -> None:
    for candidate in (c for c in _candidates() if c.kind == "contradiction"):
        assert " not " in candidate.answer


def test_the_other_row_comes_from_the_same_column_of_the_table() -> None:
    other = [c.answer for c in _candidates() if c.kind == "other-row"]
    assert any(a.startswith(("58,102", "60,410")) for a in other) and any(a.rstrip(".") in ("Redmarsh Rovers", "Harbour City FC") for a in other)


class _ScriptedJudge(Judge):
    """Wrong on purpose: fails the first 'restated' candidate and passes every 'swapped-name' one."""

    def __init__(self) -> None:
        super().__init__(_model_needed)
        self.restated = 0

    def judge_turn(self, turn: Turn, answer: str, history: list[Message]) -> Judgement:
        kind = _KIND_OF[answer]
        if kind == "restated":
            self.restated += 1
            return Judgement(Verdict.FAIL if self.restated == 1 else Verdict.PASS, "scripted")
        if kind == "swapped-name":
            return Judgement(Verdict.PASS, "scripted")
        return Judgement(Verdict.PASS if kind in RIGHT_KINDS else Verdict.FAIL, "scripted")


_KIND_OF: dict[str, str] = {}


def test_the_figures_of_a_judge_wrong_on_purpose_match_hand_computed_values() -> None:
    source = TURNS[1]
    kinds: list[Kind] = ["restated", "restated", "reordered", "other-format", *["changed-number"] * 3, *["swapped-name"] * 3]
    candidates = [Candidate(source, kind, f"answer {i}") for i, kind in enumerate(kinds)]
    _KIND_OF.update({c.answer: c.kind for c in candidates})
    check = summarise(grade(_ScriptedJudge(), candidates), turns=1, judge_model="scripted", seed=0)
    # 10 candidates: 4 right (one failed), 6 wrong (the 3 swapped names passed) -> 6 agree
    assert (check.candidates, check.right, check.wrong) == (10, 4, 6)
    assert (check.agreement, check.false_fail_rate, check.false_pass_rate) == (0.6, 0.25, 0.5)
    assert check.agreement_interval == pytest.approx((0.3127, 0.8318), abs=1e-4)  # Wilson 6/10
    assert check.false_fail_interval == pytest.approx((0.0456, 0.6994), abs=1e-4)  # Wilson 1/4
    assert check.false_pass_interval == pytest.approx((0.1876, 0.8124), abs=1e-4)  # Wilson 3/6
    restated, swapped = check.per_kind["restated"], check.per_kind["swapped-name"]
    assert (restated.agreement, restated.false_fail_rate, restated.false_pass_rate) == (0.5, 0.5, None)
    assert (swapped.agreement, swapped.false_pass_rate) == (0.0, 1.0)
    assert check.per_query_type["SINGLE-DOC"].candidates == 10
    assert list(check.per_kind)[:3] == ["other-format", "reordered", "restated"]  # right kinds first
    assert len(check.disagreements) == 4


def test_run_warns_only_when_this_judge_fails_too_many_right_answers() -> None:
    source = TURNS[1]
    candidates = [Candidate(source, "restated", f"answer {i}") for i in range(2)]
    _KIND_OF.update({c.answer: "restated" for c in candidates})
    check = summarise(grade(_ScriptedJudge(), candidates), turns=1, judge_model="judge-a", seed=0)  # 1 of 2 right failed
    assert "failed 50% of right answers" in false_fail_warning(check, "judge-a", 0.03)
    assert false_fail_warning(check, "judge-b", 0.03) == ""  # a check of another judge says nothing of this one
    assert false_fail_warning(check, "judge-a", 0.6) == ""
    assert false_fail_warning(None, "judge-a", 0.03) == ""




def test_the_command_writes_the_check_and_the_report_shows_it(judged_sports_project: Path) -> None:
    runner = CliRunner()
    project = judged_sports_project
    result = runner.invoke(cli, ["judge", "check", "--n", "6", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)  # the JSON alone
    for key in ("agreement", "false_fail_rate", "false_pass_rate", "candidates"):
        assert key in figures and all(key in per for per in figures["per_kind"].values())
    assert figures["turns"] == 6 and figures["candidates"] > 6
    saved = read_check(project / ".bddgen")
    assert saved is not None and saved.candidates == figures["candidates"]
    assert runner.invoke(cli, ["run", "-a", "fake", "--run-id", "r1"], catch_exceptions=False).exit_code in (0, 1)
    report = runner.invoke(cli, ["report", "--no-coverage", "--format", "json"], catch_exceptions=False)
    assert "Judge (last `bddgen judge check`)" in report.output
    written = json.loads((project / "reports" / "r1" / "report.json").read_text())
    assert written["judge"]["candidates"] == figures["candidates"]


def test_a_swapped_name_replaces_a_name_never_a_word_that_starts_a_sentence() -> None:
    text = "No. Strikes by air traffic control staff are extraordinary; Aurelian Skyways flies to Reykjavik (KEF). Once it lands"
    assert [text[start:end] for start, end in name_spans(text)] == ["Aurelian Skyways", "Reykjavik", "KEF"]


CLUB_FEATURE = '''@spec @hand-written
Feature: Orlanmouth Wanderers

  Rule: Orlanmouth Wanderers
    Given a fan of Orlanmouth Wanderers
    When the fan asks about the club's history
    Then the assistant answers from the club's history

    @conversation @conv:history
    Scenario: The club's history
      When the user asks "Who coached them in 1995?"
      Then the answer should agree with "Piet Varley coached the team during the 1995 cup run"
      When the user asks "How many people watched the 1995 final?"
      Then the answer should agree with "61,811 paying spectators"
      When the user asks "How long is the walk from the station to the ground?"
      Then the answer should agree with "The walk from the station is 5 km long"
'''


@pytest.mark.parametrize("run_settings", [
    {}, {"unit_tolerance": 0.7, "judge_method": "rubric"}, {"part_max_words": 30, "part_other_words": 0}, {"judge_method": "rubric"},
])
def test_judge_check_grades_with_the_judge_and_tolerances_of_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_settings: dict[str, object]
) -> None:
    """`bddgen judge check` qualifies the judge `bddgen run` grades with: the project's [run] tolerances included, so
    every candidate gets the verdict the run's judge gives it (a changed setting changes both the same way)."""
    from bddgen.config import load_settings
    from bddgen.judging.qualify import candidates_of, verified_turns
    from bddgen.pipeline import Models, stages
    from bddgen.project import Project
    from bddgen.run.suite import RunOptions, SuiteRun

    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "club.feature").write_text(CLUB_FEATURE)
    (tmp_path / "judge_ci.py").write_text(SCRIPTED_JUDGE)  # the model passes every answer it grades
    (tmp_path / "fake.yaml").write_text("replies: []\n")
    (tmp_path / "bddgen.toml").write_text(
        SCRIPTED_JUDGE_SETTINGS + '\n[run]\nassistant = "fake"\n\n[assistants.fake]\nkind = "fake"\nscript = "fake.yaml"\n'
        '\n[judge_check]\nparaphrases = 0\n'  # candidates by code only: `candidates_of` makes the same
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    project = Project(root=tmp_path, settings=load_settings(tmp_path, overrides={"run": run_settings}, environ={}))
    check = stages.judge_check(Models(project), 100)

    run_judge = SuiteRun(Models(project), RunOptions(assistant="fake", run_dir=tmp_path / "runs" / "r1")).judge
    sample, candidates = candidates_of(verified_turns([project.features_path], project.root, lambda table_id: None), 100, project.settings.seed)
    by_run = summarise(grade(run_judge, candidates), turns=len(sample), judge_model=check.judge_model, seed=check.seed)
    assert check.model_dump(exclude={"created"}) == by_run.model_dump(exclude={"created"})
    changed_number = check.per_kind["changed-number"]
    if run_settings.get("unit_tolerance"):  # '8 km' for '5 km' is within 70%: the checks let the rubric grade it, which passes it
        assert changed_number.false_pass_rate == pytest.approx(1 / 3) and changed_number.by_model == 1
    else:
        assert changed_number.false_pass_rate == 0.0 and changed_number.by_model == 0


def test_the_check_s_table_fits_80_columns_with_every_kind_named_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    from io import StringIO

    from rich.console import Console

    import bddgen.commands.judge as command
    from bddgen.run.judge_check import Figures, JudgeCheck

    widest = {"candidates": 1200, "right": 600, "wrong": 600, "agreement": 1.0, "agreement_interval": (0.99, 1.0),
              "false_fail_rate": 0.125, "false_fail_interval": (0.1, 1.0), "false_pass_rate": None, "false_pass_interval": (0.0, 1.0)}
    check = JudgeCheck(
        **widest, created="2025-01-01T00:00:00Z", judge_model="qwen2.5-coder-1.5b", seed=0, turns=100,
        per_query_type={kind.value: Figures(**widest) for kind in QueryType},
        per_kind={kind: Figures(**widest) for kind in RIGHT_KINDS + WRONG_KINDS},
    )
    shown = StringIO()
    monkeypatch.setattr(command, "console", Console(file=shown, width=80))
    command._print(check)
    lines = shown.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 80
    names = {line.split("│")[1].strip() for line in lines if line.count("│") > 2}
    assert {*RIGHT_KINDS, *WRONG_KINDS, *(kind.value for kind in QueryType)} <= names
    assert any("100% 99–100" in line for line in lines)
