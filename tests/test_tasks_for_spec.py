"""Outcome tasks for a spec that has the agent act: the tool its action uses (read by the LM, checked against the
manifest), the rows it names (by code), the values it wants, and the end state computed on a scratch copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.config import TasksSettings
from bddgen.corpus import load_corpus
from bddgen.corpus.demo import demo_corpus_path
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.writer import write_feature
from bddgen.implement.provenance import FeatureProvenance, provenance_path, write_provenance
from bddgen.implement.reading import SpecReading
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.manifest.workflow import read_manifest
from bddgen.models import Corpus
from bddgen.pipeline.models import Models
from bddgen.pipeline.stages import acts_on_a_state
from bddgen.project import Project
from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.reference.worlds import REFERENCE_WORLDS
from bddgen.specs import Spec
from bddgen.tasks.for_spec import spec_tasks
from bddgen.tasks.model import DroppedTask, OutcomeTask
from bddgen.tasks.scripted import faithful_replies
from bddgen.tasks.stage import action_spec_tasks
from bddgen.templates.scaffold import scaffold_project

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(AIRLINE)


def _tasks(corpus: Corpus, spec: Spec, n: int = 1, **replies: object) -> tuple[list[OutcomeTask], list[DroppedTask]]:
    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), **replies}))  # type: ignore[arg-type]
    return spec_tasks(corpus, read_manifest(AIRLINE / "agents.yaml"), "agents.yaml", lm, TasksSettings(), world=AIRLINE_WORLD, spec=spec, n=n)


def test_a_cancellation_spec_becomes_a_task_on_the_booking_it_names_with_the_end_state_code_computes(corpus: Corpus) -> None:
    spec = Spec.create(
        "Cancel a confirmed booking", ["Camille Kelleher holds booking 2YD3ZS"], ["she asks the agent to cancel booking 2YD3ZS"],
        ["the agent cancels it and says what she gets back"], source="hand-written",
    )
    [task], _ = _tasks(corpus, spec)
    assert task.target.key == "2YD3ZS" and [a.tool for a in task.actions] == ["cancel_booking"] and task.decision == "allowed"
    assert task.actions[0].arguments == {"booking_reference": "2YD3ZS", "last_name": "Kelleher"}
    assert [(row.table, row.key, row.column, row.before, row.after) for row in task.expected_diff] == [
        ("bookings", "2YD3ZS", "status", "confirmed", "cancelled")
    ]  # computed on a scratch copy by running the tool
    assert "2YD3ZS" in task.instruction


def test_the_flight_the_spec_moves_to_is_the_one_the_task_asks_for_and_a_refusal_leaves_the_state_unchanged(corpus: Corpus) -> None:
    spec = Spec.create(
        "Move a booking to another flight", ["Camille Kelleher holds booking 2YD3ZS"],
        ["she asks the agent to change booking 2YD3ZS to flight XV217"], ["the agent moves it or says why it cannot"],
        source="hand-written",
    )
    [task], _ = _tasks(corpus, spec)
    assert task.target.key == "2YD3ZS" and task.actions[0].tool == "change_flight"
    assert task.actions[0].arguments["new_flight_number"] == "XV217"  # not one of the flights tried on every booking
    assert task.decision == "forbidden" and task.expected_diff == [] and task.actions[0].evidence is not None


def test_a_spec_naming_a_flight_does_not_name_the_bookings_on_it(corpus: Corpus) -> None:
    spec = Spec.create(
        "Move a booking", ["Marta Wiśniewska holds booking 5VVZ8R"], ["she asks to change booking 5VVZ8R to flight XV410"],
        ["the agent moves it"], source="hand-written",
    )
    tasks, _ = _tasks(corpus, spec, n=5)
    assert tasks and {task.target.key for task in tasks} == {"5VVZ8R"}  # XV410's own bookings are not named by it
    [task] = tasks
    assert task.decision == "allowed" and {row.key for row in task.expected_diff} >= {"5VVZ8R"}


def test_a_spec_that_names_no_row_gets_no_task_and_says_why(corpus: Corpus) -> None:
    spec = Spec.create("Cancel a booking", ["a passenger has a booking"], ["she asks to cancel it"], ["the agent cancels it"], source="hand-written")
    tasks, [dropped] = _tasks(corpus, spec)
    assert tasks == [] and "names no row" in dropped.reason and "cancel_booking" in dropped.reason


def test_an_action_no_tool_does_gets_no_task(corpus: Corpus) -> None:
    spec = Spec.create(
        "Issue a voucher", ["Kwame Aziz holds booking C3GTTT"], ["he asks for a travel voucher for booking C3GTTT"],
        ["the agent issues a voucher"], source="hand-written",
    )
    tasks, [dropped] = _tasks(corpus, spec)
    assert tasks == [] and "none of the agent's data-changing tools" in dropped.reason


def test_a_tool_the_agent_has_not_is_no_answer(corpus: Corpus) -> None:
    spec = Spec.create(
        "Cancel a confirmed booking", ["Kwame Aziz holds booking C3GTTT"], ["he asks the agent to cancel booking C3GTTT"],
        ["the agent cancels it"], source="hand-written",
    )
    tasks, [dropped] = _tasks(corpus, spec, **{"task-spec-action": lambda _request: {"tool": "delete_everything"}})
    assert tasks == [] and "none of the agent's data-changing tools" in dropped.reason


def _action_feature(project: Path, name: str, spec: Spec, action: bool) -> Path:
    """A spec's .feature file with the provenance implement leaves: its reading says whether it is an agent's action."""
    path = project / "features" / f"{name}.feature"
    write_feature(path, FeatureDocument(spec=spec))
    write_provenance(provenance_path(path), FeatureProvenance(spec_id=spec.id, feature=path.name, finished=True, reading=SpecReading(action=action)))
    return path


def test_implement_adds_outcome_tasks_to_an_action_spec_in_its_own_file_once(tmp_path: Path) -> None:
    scaffold_project(tmp_path, demo_corpus_path("airline"))
    project = Project.discover(tmp_path)
    lm = LanguageModel(ScriptedLM(by_task=faithful_replies()))  # type: ignore[arg-type]
    cancel = Spec.create(
        "Cancel a confirmed booking", ["Camille Kelleher holds booking 2YD3ZS"], ["she asks the agent to cancel booking 2YD3ZS"],
        ["the agent cancels it"], source="hand-written",
    )
    acting = _action_feature(tmp_path, "cancel", cancel, action=True)
    asking = _action_feature(tmp_path, "ask", cancel.model_copy(update={"id": "asking"}), action=False)

    added = action_spec_tasks(project, lm, REFERENCE_WORLDS, [acting, asking])
    [task_id], _ = added[acting]
    assert asking not in added  # a spec read as questions gets no task
    [scenario] = read_feature(acting).conversations
    assert scenario.id == task_id and scenario.task is not None and "2YD3ZS" in scenario.task.instruction
    assert read_feature(asking).conversations == []
    checked = CliRunner().invoke(cli, ["validate", str(acting)], catch_exceptions=False)
    assert checked.exit_code == 0, checked.output  # the spec's file with its task scenario is a valid .feature file

    again = action_spec_tasks(project, lm, REFERENCE_WORLDS, [acting])
    assert again[acting] == ([task_id], []) and len(read_feature(acting).conversations) == 1  # not made twice


def test_a_project_with_no_agent_gets_no_tasks(tmp_path: Path) -> None:
    scaffold_project(tmp_path, demo_corpus_path("sports"))
    project = Project.discover(tmp_path)
    spec = Spec.create("Book a ticket", ["a fan wants a ticket"], ["she asks the assistant to book ticket T1"], ["it books it"], source="hand-written")
    path = _action_feature(tmp_path, "book", spec, action=True)
    assert action_spec_tasks(project, LanguageModel(ScriptedLM(by_task=faithful_replies())), REFERENCE_WORLDS, [path]) == {}  # type: ignore[arg-type]


def test_only_an_agent_whose_state_a_run_reads_gets_task_scenarios(tmp_path: Path) -> None:
    scaffold_project(tmp_path, demo_corpus_path("airline"))
    settings = tmp_path / "bddgen.toml"
    assert not acts_on_a_state(Models(Project.discover(tmp_path)))  # a RAG assistant over the agent's corpus: no task runs on it
    settings.write_text(settings.read_text(encoding="utf-8") + '\n[assistants.desk]\nkind = "http"\nurl = "http://127.0.0.1:9/chat"\nstate_url = "http://127.0.0.1:9/state"\n', encoding="utf-8")
    for assistant in ("airline-agent", "desk"):
        project = Project.discover(tmp_path, overrides={"run": {"assistant": assistant}})
        assert acts_on_a_state(Models(project))
