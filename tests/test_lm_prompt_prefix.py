"""The static part of every prompt comes first and is byte-identical across calls, so llama.cpp's
prompt cache re-reads only what changed (the inputs)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import bddgen
from bddgen.lm.tasks import PromptTask, SharedInput
from bddgen.reference.tasks import RagAnswer


def _package_tasks() -> list[PromptTask]:
    """Every PromptTask defined at module level in a bddgen `tasks` module."""
    found: dict[str, PromptTask] = {}
    for module in pkgutil.walk_packages(bddgen.__path__, "bddgen."):
        if module.name.rsplit(".", 1)[-1] != "tasks":
            continue
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, PromptTask):
                found[f"{module.name}:{value.name}"] = value
    return list(found.values())


TASKS = _package_tasks()


def test_the_package_tasks_are_found() -> None:
    assert {"write_spec", "rag-answer", "judge-turn"} <= {task.name for task in TASKS}


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.name)
def test_a_tasks_system_message_is_byte_identical_whatever_the_inputs(task: PromptTask) -> None:
    first = task.messages(question="Who won the 2011 final?", passages="[1] Ashvale Rangers won 2-1.")
    second = task.messages(question="Where is Brennick Town?", passages="[1] Brennick Town plays at Holm Park.", extra="more")
    assert first[0].role == "system" and first[0].content == second[0].content
    assert all(m.role != "system" for m in first[1:])
    assert first[1:] != second[1:]
    if task.shared is None:  # nothing static comes after an input
        assert "Reply with one JSON object" in first[0].content
    else:  # only the shared input comes before the task's own instruction
        assert first[1].content.split("\n\n## Task\n", 1)[0].startswith(f"## {task.shared.name.title()}\n")


def test_tasks_sharing_an_input_begin_alike_up_to_their_own_instructions() -> None:
    shared = SharedInput(preamble="You answer from the passages.", name="passages")
    grade = PromptTask(name="grade", instruction="Grade the passages.", output=RagAnswer, shared=shared)
    answer = PromptTask(name="answer", instruction="Answer the question.", output=RagAnswer, shared=shared)
    passages = "[1] Brennick Town plays at Holm Park."
    first = grade.messages(question="Where does Brennick Town play?", passages=passages)
    second = answer.messages(passages=passages, conversation="(none)", question="Where does Brennick Town play?")
    assert first[0] == second[0] == first[0].__class__("system", "You answer from the passages.")
    lead = f"## Passages\n{passages}\n\n## Task\n"
    assert first[1].content.startswith(lead + "Grade the passages.") and second[1].content.startswith(lead + "Answer the question.")
    assert first[1].content.endswith("## Question\nWhere does Brennick Town play?")
