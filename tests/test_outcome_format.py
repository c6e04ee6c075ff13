"""Task scenarios in .feature files: every task bddgen writes reads back to what it wrote, and a malformed
task is refused with an InputError naming the line and the fix."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.expectations import TrajectoryExpectation
from bddgen.outcomes import OutcomeExpectation, UserTask
from bddgen.state_diff import DiffRow
from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.specs import Conversation, Spec

# Table cells and step arguments may hold pipes, backslashes, '#', '@' and non-ASCII text.
_CHARACTERS = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters='"`')
word = st.text(_CHARACTERS, min_size=1, max_size=12).filter(lambda t: t == t.strip() and " " not in t)
cell = st.text(_CHARACTERS, max_size=12).map(lambda t: " ".join(t.split()))
instruction = st.lists(st.text(_CHARACTERS, min_size=1, max_size=30).map(str.strip).filter(bool), min_size=1, max_size=3).map("\n".join)


@st.composite
def tasks(draw: st.DrawFn) -> UserTask:
    outcomes = [draw(st.sampled_from([
        OutcomeExpectation(kind="unchanged"),
        OutcomeExpectation(kind="diff", rows=[DiffRow(table=draw(word), key=draw(word), column=draw(word), before=draw(cell), after=draw(cell))]),
    ]))]
    outcomes += [OutcomeExpectation(kind="cell", table=draw(word), key=draw(word), column=draw(word), value=draw(cell))]
    return UserTask(
        instruction=draw(instruction),
        facts=draw(st.dictionaries(word, cell, max_size=3)),
        max_turns=draw(st.integers(1, 20)),
        outcomes=outcomes,
        trajectory=draw(st.lists(st.just(TrajectoryExpectation(kind="refuses")), max_size=1)),
        comment=draw(st.sampled_from(["", 'Policy (policies/refunds.md): "Saver tickets are non-refundable."'])),
    )


def _document(task: UserTask, tags: list[str]) -> FeatureDocument:
    spec = Spec.create("Bookings", ["a booking"], ["the user asks"], ["the policy holds"], source="generated")
    return FeatureDocument(spec=spec, conversations=[Conversation(id="t1", title="A task", task=task, tags=tags)])


@given(task=tasks(), named_by_tag=st.booleans())
def test_every_task_bddgen_writes_reads_back(task: UserTask, named_by_tag: bool) -> None:
    tags = ["@task", "@task-t1", "@policy-forbidden"] if named_by_tag else ["@task"]
    text = render_feature(_document(task, tags))
    (back,) = read_feature_text(text, "written.feature").conversations
    assert back.id == "t1" and back.task == task and back.tags == tags
    assert ("@conv:" in text) != named_by_tag


def _feature(steps: str) -> str:
    return (
        "Feature: F\n  Rule: F\n    Given a booking\n    When asked\n    Then it holds\n\n"
        f"    @task @task-x\n    Scenario: S\n{steps}"
    )


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ("      When the simulated user talks with the assistant for at most 3 turns\n", "has no instruction"),
        ("      Given the user's instruction:\n      When the simulated user talks with the assistant for at most 3 turns\n",
         "needs the instruction as a docstring"),
        ('      Given the user\'s instruction:\n        """\n        Hi\n        """\n      Then the database should be unchanged\n',
         "comes before 'When the simulated user talks"),
        ('      Given the user\'s instruction:\n        """\n        Hi\n        """\n'
         "      When the simulated user talks with the assistant for at most 3 turns\n"
         "      Then the database should differ from the start exactly by:\n        | table | key |\n        | a | b |\n",
         "header should be | table | key | column | before | after |"),
        ('      Given the user\'s instruction:\n        """\n        Hi\n        """\n'
         "      When the simulated user talks with the assistant for at most 3 turns\n      Then the database should be unchanged\n"
         "      And the database should differ from the start exactly by:\n"
         "        | table | key | column | before | after |\n        | a | b | c | d | e |\n",
         "states its whole expected diff at most once"),
        ('      Given the user\'s instruction:\n        """\n        Hi\n        """\n'
         "      When the simulated user talks with the assistant for at most 3 turns\n      Then the answer looks fine\n",
         "unknown step 'the answer looks fine' in a task scenario"),
    ],
)
def test_a_malformed_task_is_an_input_error_naming_the_line(steps: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        read_feature_text(_feature(steps), "tasks.feature")
    assert message in str(caught.value) and "tasks.feature:" in str(caught.value)
