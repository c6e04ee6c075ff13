"""The turn plan and every mechanically checkable conversation constraint, on scripted LM output."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bddgen.errors import LMOutputError
from bddgen.implement.chains import Chain, Hop
from bddgen.implement.constraints import plan_violations, structure_violations
from bddgen.implement.draft import write_draft
from bddgen.implement.graph import Bridge
from bddgen.implement.plan import TurnPlan, chain_length_for_turns, plan_turns
from bddgen.implement.tasks import ConversationDraft, write_conversation_task
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import TableDocument, TextDocument
from bddgen.specs import CANNOT_ANSWER, QueryType, Spec

Q = QueryType
SPEC = Spec.create("Cup final heroes", ["a fan of cup finals"], ["the fan asks who decided a final"], ["the assistant names the hero"])
CHAIN = Chain(
    documents=["d1", "t1", "d2"],
    hops=[
        Hop(source="d1", target="t1", bridges=[Bridge(kind="value", value="Rasmus Kaldor", columns={"t1": "player"}, specificity=0.6)]),
        Hop(source="t1", target="d2", bridges=[Bridge(kind="value", value="Redmarsh Rovers", columns={"t1": "club"}, specificity=0.5)]),
    ],
)
ALLOWED = ["d1", "t1", "d2", "p1"]
TABLES = {"t1"}
DOCUMENTS = {
    "d1": TextDocument(
        id="d1", title="2004 Varen Cup Final",
        passage="Brennick Town beat Korrin Sporting 2-1 in the 2004 final. Rasmus Kaldor scored both goals for the winners.",
    ),
    "t1": TableDocument(
        id="t1", title="Transfers", headers=["player", "club", "year"],
        rows=[["Jonah Petrakis", "Westerholm Athletic", "1999"], ["Rasmus Kaldor", "Redmarsh Rovers", "2006"]],
    ),
    "d2": TextDocument(
        id="d2", title="Redmarsh Rovers", passage="Redmarsh Rovers play at Redmarsh Stadium. Redmarsh Rovers were founded in 1894.",
    ),
}


def _plan(turns: int = 7) -> TurnPlan:
    return plan_turns(CHAIN, turns, set(), DOCUMENTS)


def _valid_turns(plan: TurnPlan) -> list[dict[str, Any]]:
    answers = {
        Q.SINGLE_DOC: "Brennick Town won the 2004 final.",
        Q.UNANSWERABLE: CANNOT_ANSWER,
        Q.SYNTHESIS: "Kaldor won the final for Brennick Town, then joined Redmarsh Rovers.",
        Q.MULTI_DOC: "Both mention the final.",
    }
    turns = []
    for number, planned in enumerate(plan.turns, start=1):
        answer = planned.bridge if planned.query_type is Q.PRE_FILLER else answers.get(planned.query_type, "In 2006.")
        question = f"Question {number} about that player?" if planned.query_type is Q.FILLER else f"Question {number}?"
        turns.append({"type": planned.query_type.value, "docs": planned.documents, "question": question, "answer": answer, "theme": "heroes"})
    return turns


def _draft(turns: list[dict[str, Any]]) -> ConversationDraft:
    return ConversationDraft.model_validate({"title": "Heroes", "turns": turns})


def _codes(turns: list[dict[str, Any]], plan: TurnPlan | None = None) -> set[str]:
    return {v.code for v in plan_violations(_draft(turns), plan or _plan(), ALLOWED, TABLES)}


def test_plan_for_seven_turns_walks_three_documents_through_bridges() -> None:
    plan = _plan()
    assert [t.query_type for t in plan.turns] == [Q.SINGLE_DOC, Q.PRE_FILLER, Q.FILLER, Q.UNANSWERABLE, Q.PRE_FILLER, Q.FILLER, Q.SYNTHESIS]
    assert [t.documents for t in plan.turns] == [["d1"], ["d1"], ["t1"], [], ["t1"], ["d2"], ["d1", "t1", "d2"]]
    assert [t.bridge for t in plan.turns if t.bridge] == ["Rasmus Kaldor"] * 2 + ["Redmarsh Rovers"] * 2
    assert [t.proxy for t in plan.turns if t.query_type is Q.FILLER] == ["that player", "that club"]
    skeleton = json.loads(plan.skeleton())
    assert [t["type"] for t in skeleton["turns"]] == [t.query_type.value for t in plan.turns]


def test_turn_budget_decides_how_many_documents_a_conversation_walks() -> None:
    assert [chain_length_for_turns(n) for n in (3, 4, 5, 7, 11)] == [1, 1, 2, 3, 5]
    short = _plan(5)
    assert short.chain.documents == ["d1", "t1"]
    assert [t.query_type for t in short.turns] == [Q.SINGLE_DOC, Q.PRE_FILLER, Q.FILLER, Q.UNANSWERABLE, Q.SYNTHESIS]
    longer = _plan(9)
    assert [t.query_type for t in longer.turns].count(Q.MULTI_DOC) == 2 and longer.turns[-1].query_type is Q.SYNTHESIS


def test_a_draft_that_follows_its_plan_has_no_violations() -> None:
    assert _codes(_valid_turns(_plan())) == set()


@pytest.mark.parametrize(
    ("change", "code"),
    [
        (lambda t: t.__setitem__(3, {**t[3], "type": "SINGLE-DOC", "answer": "Sunny.", "docs": ["d1"]}), "no-unanswerable"),
        (lambda t: t.__setitem__(6, {**t[6], "type": "MULTI-DOC"}), "last-not-synthesis"),
        (lambda t: t.__setitem__(2, {**t[2], "type": "SINGLE-DOC"}), "pre-filler-alone"),
        (lambda t: t.__setitem__(1, {**t[1], "type": "SINGLE-DOC"}), "filler-alone"),
        (lambda t: t.__setitem__(3, {**t[3], "answer": "It rained."}), "unanswerable-answered"),
        (lambda t: t.__setitem__(0, {**t[0], "answer": CANNOT_ANSWER}), "answerable-unanswered"),
        (lambda t: t.__setitem__(0, {**t[0], "docs": ["d9"]}), "docs-outside"),
        (lambda t: t.__setitem__(0, {**t[0], "docs": []}), "docs-missing"),
        (lambda t: t.__setitem__(1, {**t[1], "answer": "A striker."}), "bridge-not-named"),
        (lambda t: t.__setitem__(2, {**t[2], "question": "Where did Rasmus Kaldor go next?"}), "bridge-named"),
        (lambda t: t.__setitem__(4, {**t[4], "question": t[0]["question"]}), "repeated-question"),
        (lambda t: t.__setitem__(6, {**t[6], "docs": ["d1"]}), "synthesis-docs"),
        (lambda t: t.pop(5), "turn-count"),
        (lambda t: t.__setitem__(0, {**t[0], "table": {"table": "t1", "op": "count"}}), "table-outside"),
    ],
)
def test_each_broken_constraint_is_reported(change, code: str) -> None:
    turns = _valid_turns(_plan())
    change(turns)
    assert code in _codes(turns)


def test_policy_documents_may_be_cited() -> None:
    turns = _valid_turns(_plan())
    turns[0]["docs"] = ["d1", "p1"]
    assert _codes(turns) == set()


def test_structure_check_applies_to_any_conversation() -> None:
    from bddgen.implement.constraints import draft_turns

    turns = draft_turns(_draft(_valid_turns(_plan())))
    assert structure_violations(turns, ALLOWED) == []
    assert {v.code for v in structure_violations(turns[:-1], ALLOWED)} == {"last-not-synthesis"}


def _lm(*replies: Any) -> tuple[LanguageModel, ScriptedLM]:
    backend = ScriptedLM(by_task={"write_conversation": list(replies)})
    return LanguageModel(backend, max_retries=1), backend


def test_violations_are_sent_back_and_the_fixed_reply_is_used() -> None:
    plan = _plan()
    broken = _valid_turns(plan)
    broken[4] = {**broken[4], "question": "Question 1?"}
    lm, backend = _lm({"title": "Heroes", "turns": broken}, {"title": "Heroes", "turns": _valid_turns(plan)})
    result = write_draft(lm, SPEC, plan, "[d1] ...", ALLOWED, TABLES)
    assert result.attempts == 2 and not result.repaired
    assert backend.requests[1].temperature > backend.requests[0].temperature  # a retry is not answered from the cache
    retry = backend.requests[1].messages[-1].content
    assert "## Fix These Problems" in retry and "turn 5: ask something new (same question as turn 1)" in retry
    assert "## Previous Reply" in retry and '"Question 1?"' in retry


def test_constraints_still_broken_after_the_bounded_retries_are_reported() -> None:
    plan = _plan()
    broken = _valid_turns(plan)
    broken[4] = {**broken[4], "question": "Question 1?"}
    lm, backend = _lm(*[{"title": "Heroes", "turns": broken}] * 3)
    with pytest.raises(LMOutputError, match="ask something new"):
        write_draft(lm, SPEC, plan, "[d1] ...", ALLOWED, TABLES, max_attempts=3)
    assert len(backend.requests) == 3


def test_repairable_violations_are_fixed_in_code_without_asking_again() -> None:
    plan = _plan()
    turns = _valid_turns(plan)
    turns[6]["docs"] = ["d1"]
    turns[2] = {**turns[2], "docs": ["d1"], "table": {"table": "t1", "op": "count"}, "question": "Where did rasmus kaldor go next?"}
    lm, backend = _lm({"title": "Heroes", "turns": turns})
    result = write_draft(lm, SPEC, plan, "[d1] ...", ALLOWED, TABLES)
    assert len(backend.requests) == 1
    assert {v.code for v in result.repaired} == {"synthesis-docs", "table-outside", "bridge-named"}
    assert result.draft.turns[6].docs == ["d1", "t1", "d2"] and result.draft.turns[2].table is None
    assert result.draft.turns[2].question == "Where did that player go next?"


def test_the_reply_schema_is_narrowed_to_the_plan() -> None:
    schema = write_conversation_task(_plan(), ALLOWED, TABLES).schema
    turns = schema["properties"]["turns"]
    assert "items" not in turns and turns["minItems"] == turns["maxItems"] == 7  # llama.cpp reads prefixItems only without items
    assert [t["properties"]["type"]["const"] for t in turns["prefixItems"]] == [t.query_type.value for t in _plan().turns]
    unanswerable = turns["prefixItems"][3]["properties"]
    assert unanswerable["answer"] == {"const": CANNOT_ANSWER} and unanswerable["docs"]["maxItems"] == 0
    assert "table" in turns["prefixItems"][2]["properties"] and "table" not in turns["prefixItems"][0]["properties"]
    assert schema["$defs"]["TableQuery"]["properties"]["table"]["enum"] == ["t1"]


@pytest.mark.parametrize(
    "change",
    [
        lambda t: t.pop(),  # too few turns
        lambda t: t.__setitem__(0, {**t[0], "type": "MULTI-DOC"}),
        lambda t: t.__setitem__(3, {**t[3], "answer": "It rained."}),
        lambda t: t.__setitem__(0, {**t[0], "docs": ["d9"]}),
        lambda t: t.__setitem__(0, {**t[0], "answer": ""}),
        lambda t: t.__setitem__(1, {**t[1], "answer": "A young striker."}),  # a PRE-FILLER answer names its entity
    ],
)
def test_replies_outside_the_narrowed_schema_are_retried_with_the_error(change) -> None:
    plan = _plan()
    turns = _valid_turns(plan)
    change(turns)
    lm, backend = _lm({"title": "Heroes", "turns": turns}, {"title": "Heroes", "turns": _valid_turns(plan)})
    write_draft(lm, SPEC, plan, "[d1] ...", ALLOWED, TABLES)
    assert "does not match the schema" in backend.requests[1].messages[-1].content


def test_a_reply_that_is_not_json_is_retried_with_the_validation_error() -> None:
    plan = _plan()
    lm, backend = _lm("Sure! Here is the conversation:", {"title": "Heroes", "turns": _valid_turns(plan)})
    result = write_draft(lm, SPEC, plan, "[d1] ...", ALLOWED, TABLES)
    assert result.attempts == 1 and len(backend.requests) == 2
    assert "That reply was invalid" in backend.requests[1].messages[-1].content


def test_a_reply_that_stays_invalid_is_reported() -> None:
    lm, _ = _lm("not json", "still not json")
    with pytest.raises(LMOutputError, match="not valid JSON"):
        write_draft(lm, SPEC, _plan(), "[d1] ...", ALLOWED, TABLES)


def test_each_hop_names_a_new_bridging_entity_when_it_has_one() -> None:
    shared = Bridge(kind="value", value="Redmarsh Rovers", columns={"t1": "club"}, specificity=0.9)
    other = Bridge(kind="value", value="Ivo Stenmark", columns={"t1": "player"}, specificity=0.4)
    chain = Chain(
        documents=["d1", "t1", "d2"],
        hops=[Hop(source="d1", target="t1", bridges=[shared]), Hop(source="t1", target="d2", bridges=[shared, other])],
    )
    plan = plan_turns(chain, 7, set(), DOCUMENTS)
    assert [t.bridge for t in plan.turns if t.query_type is Q.PRE_FILLER] == ["Redmarsh Rovers", "Ivo Stenmark"]


def test_field_bridges_name_the_shared_value_closest_to_the_spec() -> None:
    field = Bridge(kind="field", value="club", columns={"t1": "club", "t2": "club"}, examples=["Brennick Town", "Harbour City FC"], specificity=1.0)
    chain = Chain(documents=["t1", "t2"], hops=[Hop(source="t1", target="t2", bridges=[field])])
    documents = {**DOCUMENTS, "t2": DOCUMENTS["t1"].model_copy(update={"id": "t2"})}
    assert plan_turns(chain, 5, set(), documents).turns[1].bridge == "Brennick Town"
    assert plan_turns(chain, 5, {"harbour"}, documents).turns[1].bridge == "Harbour City FC"


def test_each_answerable_turn_is_built_on_a_statement_of_its_documents() -> None:
    plan = _plan()
    facts = [t.facts for t in plan.turns]
    assert facts[0] == ["Brennick Town beat Korrin Sporting 2-1 in the 2004 final."]
    assert facts[1] == ["Rasmus Kaldor scored both goals for the winners."]  # names the bridge
    assert facts[2] == ["player: Rasmus Kaldor; club: Redmarsh Rovers; year: 2006"]
    assert facts[3] == [] and plan.turns[3].subject == "Rasmus Kaldor"
    assert facts[5] == ["Redmarsh Rovers play at Redmarsh Stadium."]
    assert facts[6] == [facts[0][0], facts[2][0], facts[5][0]]  # one statement of each document
    assert plan.turns[6].builds_on == [1, 3, 6] and "turns 1, 3, 6" in plan.render().splitlines()[6]
    assert f'"{facts[1][0]}"' in plan.render().splitlines()[1]


def test_statements_closest_to_the_spec_are_preferred() -> None:
    plan = plan_turns(CHAIN, 7, {"founded"}, DOCUMENTS)
    assert plan.turns[5].facts == ["Redmarsh Rovers were founded in 1894."]


@pytest.mark.parametrize(
    ("bridge", "proxy"),
    [
        (Bridge(kind="entity", value="Ivo Stenmark", label="PERSON", specificity=0.6), "that person"),
        (Bridge(kind="value", value="Jesper Vaal", label="PERSON", columns={"t1": "hallam_medal"}, specificity=0.6), "that person"),
        (Bridge(kind="field", value="club_a/club", columns={"d1": "club", "t1": "club_a"}, examples=["Brennick Town"], specificity=1.0), "that club"),
        (Bridge(kind="entity", value="Quayside Park", label="FAC", specificity=0.6), "that place"),
        (Bridge(kind="entity", value="Harbour Derby", label="ENTITY", specificity=0.6), "it"),
    ],
)
def test_filler_questions_get_a_descriptive_proxy_for_the_entity(bridge: Bridge, proxy: str) -> None:
    chain = Chain(documents=["d1", "t1"], hops=[Hop(source="d1", target="t1", bridges=[bridge])])
    filler = plan_turns(chain, 5, set(), DOCUMENTS).turns[2]
    assert filler.query_type is Q.FILLER and filler.proxy == proxy
    assert f'call it "{proxy}"' in filler.instruction()


def test_the_conversation_task_caps_its_reply_by_the_number_of_turns() -> None:
    from bddgen.implement.tasks import CONVERSATION_TOKENS, TURN_TOKENS

    caps = [write_conversation_task(_plan(turns), ALLOWED, TABLES).max_tokens for turns in (5, 9)]
    assert caps == [CONVERSATION_TOKENS + TURN_TOKENS * 5, CONVERSATION_TOKENS + TURN_TOKENS * 9]


def test_a_question_copied_from_the_prompt_example_must_be_rewritten() -> None:
    from bddgen.implement.tasks import EXAMPLE_QUESTIONS

    plan = _plan()
    turns = _valid_turns(plan)
    turns[1]["question"] = EXAMPLE_QUESTIONS[1].upper()
    violations = plan_violations(ConversationDraft.model_validate({"title": "Copied", "turns": turns}), plan, ALLOWED, TABLES)
    assert [(v.turn, v.code, v.repairable) for v in violations if v.code == "example-copied"] == [(2, "example-copied", False)]
