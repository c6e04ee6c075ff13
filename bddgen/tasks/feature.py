"""Outcome-verified tasks as Gherkin scenarios, through the project's feature writer and reader.

One file holds the spec and one task scenario per task: the cited policy sentences as a comment,
the instruction as a docstring, the user's facts as a table, the dialogue step, and the expected
outcome (the exact diff, or unchanged plus a refusal). A scenario a person tagged `@locked` is read
back and carried over, and no new task takes its id.
"""

from __future__ import annotations

from pathlib import Path

from bddgen.expectations import TrajectoryExpectation
from bddgen.outcomes import TASK_TAG_PREFIX, OutcomeExpectation, UserTask
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.vocabulary import quote
from bddgen.features.writer import render_feature, write_feature
from bddgen.specs import Conversation, Spec
from bddgen.tasks.model import OutcomeTask

TASK_TAG = "@task"
SPEC = Spec.create(
    "Outcome-verified tasks",
    ["a customer who wants the assistant to change something for them"],
    ["the customer talks with the assistant"],
    ["the database ends exactly as the tools and the policies say"],
)
RATIONALE = [
    "Each scenario is a task chosen by code: a simulated user with an instruction, and the database end state",
    "the tools reach when they do what the user wants within the policies (computed on a scratch copy).",
]


def task_conversation(task: OutcomeTask) -> Conversation:
    """The scenario of one task."""
    comment = "\n".join(
        f'Policy ({action.evidence.file}): "{quote(action.evidence.sentence)}"' for action in task.actions if action.evidence is not None
    )
    outcome = OutcomeExpectation(kind="diff", rows=task.expected_diff) if task.expected_diff else OutcomeExpectation(kind="unchanged")
    refusal = [TrajectoryExpectation(kind="refuses")] if task.decision == "forbidden" else []
    user = UserTask(
        instruction=task.instruction, facts={f.name: f.value for f in task.facts}, max_turns=task.max_turns, comment=comment,
        outcomes=[outcome], trajectory=refusal,
    )
    tags = [TASK_TAG, f"{TASK_TAG_PREFIX}{task.id}", f"@policy-{task.decision}"] + (["@compound"] if task.compound else [])
    return Conversation(id=task.id, title=quote(task.title), tags=tags, task=user)


def tasks_document(tasks: list[OutcomeTask], locked: list[Conversation]) -> FeatureDocument:
    """The file's document: the locked scenarios as they were read, then the new tasks."""
    taken = {c.id for c in locked}
    fresh = [task_conversation(task) for task in tasks if task.id not in taken]
    return FeatureDocument(spec=SPEC, rationale=RATIONALE, tags=["@tasks"], conversations=[*locked, *fresh])


def render_tasks(tasks: list[OutcomeTask], locked: list[Conversation]) -> str:
    return render_feature(tasks_document(tasks, locked))


def read_locked(path: Path, *, force: bool) -> list[Conversation]:
    """The locked scenarios of the file at `path` ([] when there is none).

    A file a person edited without locking any scenario is refused unless `force` (its edits would be lost)."""
    if not path.is_file():
        return []
    document = read_feature(path)
    locked = [c for c in document.conversations if c.locked]
    if document.edited and not locked and not force:
        raise InputError(
            Problem(str(path), "edited by a person since bddgen wrote it, with no @locked scenario; tag the scenarios to keep "
                    "with @locked, or use --force to replace the file"),
            title="refusing to overwrite",
        )
    return locked


def write_tasks(path: Path, tasks: list[OutcomeTask], locked: list[Conversation]) -> None:
    write_feature(path, tasks_document(tasks, locked), allow_edited=True)
