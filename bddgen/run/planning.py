"""Map the scenarios behave is about to run to conversations of the parsed .feature files."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable

from bddgen.outcomes import TALKS, TASK_TAG_PREFIX
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.vocabulary import ASK, SATISFY, decode_tag_value
from bddgen.evaluation.session import ConversationPlan

CONVERSATION_TAG = "conv:"


def feature_key(path: str | Path, root: Path) -> str:
    """A feature's path as results record it: relative to the project root when inside it."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(root.resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def conversation_id(scenario: Any) -> str:
    """The `@conv:<id>` tag, else a task's `@task-<id>` tag, else `line-<N>` as the reader names an untagged conversation."""
    for tag in scenario.tags:
        if str(tag).startswith(CONVERSATION_TAG):
            return decode_tag_value(str(tag)[len(CONVERSATION_TAG):])
    task_tag = TASK_TAG_PREFIX[1:]
    return next((str(t)[len(task_tag):] for t in scenario.tags if str(t).startswith(task_tag)), f"line-{scenario.line}")


def is_conversation(scenario: Any) -> bool:
    """True for a scenario with a 'When the user asks' step or a simulated user (a spec written as a Scenario has neither)."""
    return any(ASK.match(step.name.strip()) or TALKS.match(step.name.strip()) for step in scenario.steps)


def plan_features(
    features: Iterable[Any], config: Any, root: Path, limit: int | None, read: Callable[[Path], FeatureDocument] = read_feature
) -> list[ConversationPlan]:
    """Plans for the conversations behave will run, in file order, at most `limit`; every other
    scenario (spec scenarios, conversations past the limit) is marked skipped so behave passes over it.
    `read` reads a file's conversations (the run's `FeatureCache`: a file the lint parsed is not parsed again)."""
    plans: list[ConversationPlan] = []
    problems: list[Problem] = []
    for feature in features:
        document: FeatureDocument | None = None
        for scenario in feature.walk_scenarios():
            if not scenario.should_run(config):
                continue
            if not is_conversation(scenario) or (limit is not None and len(plans) >= limit):
                scenario.mark_skipped()
                continue
            if document is None:
                document = read(Path(feature.filename))
            identifier = conversation_id(scenario)
            conversation = document.conversation(identifier)
            location = f"{feature.filename}:{scenario.line}"
            if conversation is None:
                problems.append(Problem(location, f"no conversation {identifier!r} in the file"))
                continue
            plans.append(
                ConversationPlan(
                    feature=feature_key(feature.filename, root),
                    spec=document.spec,
                    conversation=conversation,
                    scenario=scenario.name,
                    judge_spec=any(SATISFY.match(step.name.strip()) for step in scenario.steps),
                )
            )
    if problems:
        raise InputError(problems, title="scenarios bddgen cannot map to conversations")
    return plans
