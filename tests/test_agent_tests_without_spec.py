"""A plain Feature/Scenario agent test without a spec Rule runs as written, and an unknown step gets the closest one."""

from __future__ import annotations

import pytest

from bddgen.errors import InputError
from bddgen.features.reader import NO_SPEC, did_you_mean, read_feature_text
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY

AGENT_TEST = '''Feature: Refunds

  Scenario: A refund after a confirmation
    When the user asks "I want a refund for ABC123."
    And the user asks "Yes, refund it."
    Then the agent should call "refund_ticket"
'''

SPEC = '''Feature: Refunds

  Rule: Refunds
    Given a traveller
    When they ask for a refund
    Then the agent refunds the ticket

    Scenario: A refund after a confirmation
      When the user asks "I want a refund for ABC123."
      And the user asks "Yes, refund it."
      Then the agent should call "refund_ticket"
'''


def _problems(text: str) -> list[str]:
    with pytest.raises(InputError) as caught:
        read_feature_text(text, "f.feature")
    return [str(problem) for problem in caught.value.problems]


def test_a_file_without_a_spec_is_an_agent_test_whose_turns_without_a_then_step_are_asked_not_judged() -> None:
    document = read_feature_text(AGENT_TEST, "f.feature")
    assert (document.spec.title, document.spec.given, document.spec.when, document.spec.then) == (
        "Refunds", [NO_SPEC[0]], [NO_SPEC[1]], [NO_SPEC[2]]
    )
    (conversation,) = document.conversations
    assert conversation.hand_written and [t.answer for t in conversation.turns] == [TRAJECTORY_ONLY, TRAJECTORY_ONLY]
    # the same scenario under a spec keeps today's reading: a turn without a Then step expects an abstention
    assert [t.answer for t in read_feature_text(SPEC, "f.feature").conversations[0].turns] == [CANNOT_ANSWER, TRAJECTORY_ONLY]
    untitled = read_feature_text(AGENT_TEST.replace("Feature: Refunds", "Feature:"), "features/refunds.feature")
    assert untitled.spec.title == "refunds"
    assert read_feature_text(AGENT_TEST, "other.feature").spec.id != document.spec.id  # one spec id per file


def test_a_file_without_a_spec_has_none_to_satisfy_and_one_without_scenarios_is_still_refused() -> None:
    assert _problems(AGENT_TEST + "    And the conversation should satisfy the spec\n") == [
        "f.feature:7: step 'the conversation should satisfy the spec': this file has no spec to satisfy; add a Rule whose "
        "description has Given/When/Then lines, or remove the step"
    ]
    assert _problems("Feature: Refunds\n") == [
        "f.feature:1: no spec found: add a Rule whose description has Given/When/Then lines, or a Scenario with Given/When/Then steps"
    ]


def test_an_unknown_step_gets_the_closest_step_wherever_it_stands() -> None:
    typo = AGENT_TEST.replace('Then the agent should call "refund_ticket"', 'Then the agent "booking" shuold call "refund_ticket" at least 2 times')
    assert _problems(typo) == [
        "f.feature:6: unknown step 'the agent \"booking\" shuold call \"refund_ticket\" at least 2 times'; did you mean "
        "'the agent \"AGENT\" should call \"TOOL\" at least N times'? (see `bddgen validate`)"
    ]
    first = AGENT_TEST.replace('When the user asks "I want a refund for ABC123."', 'When the user ask "I want a refund for ABC123."')
    assert _problems(first) == [
        "f.feature:4: unknown step 'the user ask \"I want a refund for ABC123.\"'; did you mean 'the user asks \"...\"'? (see `bddgen validate`)"
    ]
    task = '''Feature: Tasks

  Scenario: Cancel
    Given the user's instruction:
      """
      You are Ana Lopes. You want to cancel booking QX4T2B.
      """
    When the simulated user talks with the assistant for at most 3 turns
    Then the database should be unchaged
'''
    assert _problems(task) == [
        "f.feature:9: unknown step 'the database should be unchaged' in a task scenario; did you mean "
        "'the database should be unchanged'? (see `bddgen validate`)"
    ]
    assert did_you_mean("the weather is nice today") == ""


def test_behave_s_fallback_step_names_the_closest_registered_step_the_project_s_own_too() -> None:
    from behave import step_registry

    from bddgen.run.behave_steps import NotABddgenStep, spec_line

    registry = step_registry.registry  # the one behave uses now (a run in this process makes a new one)
    before = {kind: list(definitions) for kind, definitions in registry.steps.items()}
    registry.add_step_definition("step", 'the invoice "{number}" should be paid', lambda context, number: None)
    try:
        with pytest.raises(NotABddgenStep, match=r"did you mean 'the invoice \"\{number\}\" should be paid'\?"):
            spec_line(None, 'the invoice "F-12" should been paid')
    finally:
        for kind, definitions in before.items():
            registry.steps[kind][:] = definitions
    with pytest.raises(NotABddgenStep, match=r"did you mean 'the agent should call \"TOOL\"'\?"):
        spec_line(None, 'the agent shoud call "x"')
