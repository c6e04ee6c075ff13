"""Every reply model of the intent and outcome-task prompts, and of the judge of an expectation they use, forbids fields it
does not declare."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from bddgen.evaluation.tasks import JUDGE_EXPECTATION
from bddgen.intents import tasks as intent_tasks
from bddgen.lm.tasks import PromptTask
from bddgen.tasks import tasks as outcome_tasks
from bddgen.lm.tasks import StrictReply

TASKS = [value for module in (intent_tasks, outcome_tasks) for value in vars(module).values() if isinstance(value, PromptTask)] + [JUDGE_EXPECTATION]


@pytest.mark.parametrize("task", TASKS, ids=lambda task: task.name)
def test_a_reply_with_an_undeclared_field_is_refused(task: PromptTask) -> None:
    assert issubclass(task.output, StrictReply)
    assert task.schema["additionalProperties"] is False
    with pytest.raises(ValidationError, match="extra_forbidden|Extra inputs"):
        task.output.model_validate({"undeclared": 1})


def test_both_modules_have_their_tasks() -> None:
    assert {task.name for task in TASKS} >= {"intents-seed", "judge-expectation", "task-policy-evidence", "task-call-plan"}
