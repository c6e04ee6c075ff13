"""Failing dialogues become Scenarios judged as a whole; the reader reads them back as written, and a
turn without a Then step outside such a scenario is still an abstention; every dialogue is a line of the results log."""

from __future__ import annotations

from pathlib import Path

from bddgen.features.reader import read_feature
from bddgen.evaluation.rubric import RubricScores, default_rubric
from bddgen.evaluation.store import RunStore
from bddgen.probe.model import Dialogue, DialogueTurn, Persona, ProbeState, Thread, Weakness
from bddgen.probe.regression import write_failures
from bddgen.probe.state import Outputs, ProbeStore, run_folder
from bddgen.results import Judgement, TurnResult, Verdict
from bddgen.specs import CANNOT_ANSWER, JUDGED_AS_A_WHOLE, TRAJECTORY_ONLY

WEAKNESS = Weakness(id="change-of-mind", title="Changes of mind", description="Forgets the change.", rank=1, score=2.0, persona_hint="A user who changes a requirement.")


def _dialogue(number: int, score: float) -> Dialogue:
    """A dialogue the judge scored `score`, failed below 5.5."""
    persona = Persona(name="Ana", attitude="impatient", goal="the 2009 table", opening="Top of the 2009 table?")
    turns = [DialogueTurn(user='Top of the "2009" table?', assistant="Corvane."), DialogueTurn(user="No, make it 2017.", assistant="Corvane.")]
    return Dialogue(id=f"dense-rag-change-of-mind-r{number}", round=number, difficulty=5.5, turn_limit=2, persona=persona, turns=turns,
                    judgement=Judgement(Verdict.FAIL if score < 5.5 else Verdict.PASS, f"overall {score}"), scores=RubricScores(overall=score))


def test_only_dialogues_below_the_threshold_are_written_and_read_back_judged_as_a_whole(tmp_path: Path) -> None:
    thread = Thread(assistant="dense-rag", weakness=WEAKNESS, dialogues=[_dialogue(1, 3.0), _dialogue(2, 7.0)], trajectory=[5.5, 4.0, 5.0])
    [path] = write_failures([thread], default_rubric(), tmp_path)
    document = read_feature(path)
    [conversation] = document.conversations
    assert conversation.id == "dense-rag-change-of-mind-r1" and JUDGED_AS_A_WHOLE in conversation.tags
    assert [t.question for t in conversation.turns] == ["Top of the '2009' table?", "No, make it 2017."]
    assert all(t.answer == TRAJECTORY_ONLY for t in conversation.turns)
    assert len(document.spec.then) == len(default_rubric().criteria)
    assert path.read_text(encoding="utf-8").rstrip().endswith("Then the conversation should satisfy the spec")


def test_nothing_is_written_when_every_dialogue_passes(tmp_path: Path) -> None:
    thread = Thread(assistant="dense-rag", weakness=WEAKNESS, dialogues=[_dialogue(1, 6.0)], trajectory=[5.5, 5.7])
    assert write_failures([thread], default_rubric(), tmp_path) == []


def test_without_the_tag_a_turn_without_a_then_step_is_an_abstention(tmp_path: Path) -> None:
    path = tmp_path / "hand.feature"
    path.write_text(
        "Feature: Hand\n  Rule: Hand\n    Given a user\n    When the user asks\n    Then it answers\n\n"
        "    @conversation @conv:c1\n    Scenario: one\n      When the user asks \"What is the capital?\"\n"
        "      Then the conversation should satisfy the spec\n",
        encoding="utf-8",
    )
    [conversation] = read_feature(path).conversations
    assert conversation.turns[0].answer == CANNOT_ANSWER


def test_the_results_log_holds_each_dialogue_of_the_state_once(tmp_path: Path) -> None:
    thread = Thread(assistant="dense-rag", weakness=WEAKNESS, dialogues=[_dialogue(1, 3.0), _dialogue(2, 7.0)], trajectory=[5.5, 4.0, 5.0])
    outputs = Outputs(tmp_path, tmp_path / "probe", tmp_path / "reports", tmp_path / "features", default_rubric(), lambda *_: "<html>", "probe")
    stale = TurnResult(run_id="probe-x", feature="f", spec_id="s", scenario="gone", conversation_id="x-gone-r1", turn=0, verdict=Verdict.PASS)
    RunStore(run_folder(outputs.folder, "dense-rag")).append([stale])  # a dialogue of an earlier state that is not in this one
    store = ProbeStore(ProbeState(threads=[thread]), outputs)
    store.save()
    store.update(thread)
    run = RunStore(run_folder(outputs.folder, "dense-rag"))
    records = [r for rs in run.load().values() for r in rs]
    metadata = run.read_metadata()
    assert metadata is not None and metadata.run_id == "probe-dense-rag" and metadata.assistant == "dense-rag"
    assert [(r.conversation_id, r.verdict) for r in records] == [("dense-rag-change-of-mind-r1", Verdict.FAIL), ("dense-rag-change-of-mind-r2", Verdict.PASS)]
    assert records[0].feature == "features/probe-change-of-mind.feature" and records[0].answer.startswith('User: Top of the "2009" table?')
