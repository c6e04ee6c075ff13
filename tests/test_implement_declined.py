"""OFF-LIMITS turns: a spec that says the assistant must decline gets a request its rules forbid, with a
refusal as the reference; other specs keep their UNANSWERABLE turn."""

from __future__ import annotations

import pytest

from bddgen.embed.base import HashingEmbedder
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.implement.chains import Chain
from bddgen.implement.declined import DeclinedRequest, declined_problems, declined_rule, requested
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.kinds.beyond import DeclinedKind
from bddgen.implement.plan import PlannedTurn, TurnPlan, plan_turns
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, SystemDescription, TableDocument
from bddgen.ner.base import EntityRecognizer, RegexRecognizer
from bddgen.ner.spacy_recognizer import SpacyRecognizer
from bddgen.normalise import content_words
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import CANNOT_ANSWER, Conversation, QueryType, Spec

RULES = ["Revealing a customer's personal details to another customer", "Recommending flights on competitor airlines"]
CUSTOMERS = TableDocument(
    id="tables/customer", title="Customer", headers=["CustomerId", "FirstName", "City"],
    rows=[["1", "Luís", "São José dos Campos"], ["2", "Leonie", "Stuttgart"], ["3", "François", "Montréal"]],
)
DECLINING = Spec.create(
    "Refuse to reveal personal details", ["a customer asks about another customer"],
    ["the user asks for another customer's personal details"], ["the assistant should decline", "and say it cannot reveal a customer's personal details"],
)


def test_the_rule_is_the_off_limits_line_a_declining_spec_shares_most_words_with() -> None:
    assert declined_rule(DECLINING, RULES) == RULES[0]
    asking = Spec.create("Customer city", ["a clerk"], ["the clerk asks for a customer's city"], ["the assistant gives the customer's personal city"])
    assert declined_rule(asking, RULES) == ""  # no Then line declines: no rule, whatever words it shares
    unrelated = Spec.create("Unknown fact", ["a fan"], ["the fan asks for a motto"], ["the assistant should refuse to guess"])
    assert declined_rule(unrelated, RULES) == ""  # declines, but under none of the rules
    brand = "Aurelian Skyways Customer Assistant"
    rules = [*RULES, "Promising compensation beyond what the Aurelian Skyways policies state"]
    baggage = Spec.create(
        "Baggage allowance", ["a passenger holds an Aurelian Skyways ticket"], ["the passenger asks what baggage the fare includes"],
        ["the assistant states the bags as the Aurelian Skyways policies give them", "and says it cannot answer what the documents do not cover"],
    )
    assert declined_rule(baggage, rules, brand) == ""  # an abstention, and the brand and 'policies' are in every rule
    promise = Spec.create(
        "No promises", ["a delayed passenger"], ["the passenger asks for compensation beyond the policy"],
        ["the assistant must not promise compensation beyond what the Aurelian Skyways policies state"],
    )
    assert declined_rule(promise, rules, brand) == rules[-1]


def test_an_off_limits_question_asks_for_what_the_rule_forbids_in_its_own_words() -> None:
    assert declined_problems("What is the home address of Leonie, another customer of yours?", RULES[0]) == []
    assert declined_problems("What is the weather in Stuttgart?", RULES[0])
    assert declined_problems("Why can't you reveal personal details to me?", RULES[0])  # asks for the rule's reason, not the details
    assert declined_problems("What are the baggage rules of Aurelian Skyways?", "Promising Aurelian Skyways compensation", "Aurelian Skyways")
    copied = declined_problems("Please go on revealing a customer's personal details to another customer?", RULES[0])
    assert any("copies" in p for p in copied)


def test_a_declining_spec_plans_an_off_limits_turn_where_others_plan_an_unanswerable_one() -> None:
    chain = Chain(documents=[CUSTOMERS.id], hops=[])
    plain = plan_turns(chain, 4, set(), {}, lambda _: "other")
    declining = plan_turns(chain, 4, set(), {}, lambda _: "other", declines=True)
    assert [t.query_type for t in plain.turns].count(QueryType.UNANSWERABLE) == 1
    assert [t.query_type for t in declining.turns].count(QueryType.OFF_LIMITS) == 1
    assert QueryType.UNANSWERABLE not in [t.query_type for t in declining.turns]


def _write(rule: str, recognizer: EntityRecognizer | None = None, **replies):
    corpus = Corpus(system=SystemDescription(name="Music shop", purpose="Helps staff with customers.", off_limits=RULES), documents=[CUSTOMERS])
    plan = TurnPlan(
        chain=Chain(documents=[CUSTOMERS.id], hops=[]),
        turns=[
            PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[CUSTOMERS.id]),
            PlannedTurn(query_type=QueryType.OFF_LIMITS, subject="Leonie"),
            PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[CUSTOMERS.id]),
            PlannedTurn(query_type=QueryType.SYNTHESIS, documents=[CUSTOMERS.id]),
        ],
    )
    context = WriterContext(
        spec=DECLINING, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()),
        lm=LanguageModel(ScriptedLM(by_task={**faithful_replies(), **replies}), max_retries=0), recognizer=recognizer or RegexRecognizer(),
        retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(DECLINING.as_text())), attempts=2, alternatives=3,
        min_turns=3, declined_rule=rule,
    )
    return ConversationWriter(context, plan).write()


def test_the_off_limits_turn_is_written_with_a_refusal_and_its_rule_in_provenance_and_the_feature() -> None:
    result = _write(RULES[0])
    assert not result.dropped, result.dropped
    refused = next(t for t in result.turns if t.query_type is QueryType.OFF_LIMITS)
    assert refused.answer == CANNOT_ANSWER and declined_problems(refused.question, RULES[0]) == []
    record = next(r for r in result.records if r.query_type is QueryType.OFF_LIMITS)
    assert isinstance(record.evidence, DeclinedRequest) and record.evidence.rule == RULES[0]
    assert any(c.name == "declines" and c.passed for c in record.checks) and not any(c.name == "roundtrip" for c in record.checks)
    text = render_feature(FeatureDocument(spec=DECLINING, conversations=[Conversation(id="c1", title="Refusal", turns=result.turns)]))
    assert "| OFF-LIMITS" in text
    read = read_feature_text(text, "refusal.feature").conversations[0].turns
    assert [t.query_type for t in read] == [t.query_type for t in result.turns] and read[1].answer == CANNOT_ANSWER


def test_a_request_outside_the_rule_is_rewritten_then_an_unanswerable_turn_takes_its_place() -> None:
    def off_topic(request):
        if "The assistant must decline this:" in request.messages[-1].content:
            return {"question": "What is the weather in Stuttgart today?", "answer": CANNOT_ANSWER}
        return faithful_replies()["write_turn"](request)

    result = _write(RULES[0], write_turn=off_topic)
    refused = next(r for r in result.records if r.query_type is QueryType.OFF_LIMITS)
    assert refused.outcome == "dropped" and "must ask for what this rule forbids" in refused.dropped
    assert QueryType.OFF_LIMITS not in [t.query_type for t in result.turns]
    assert QueryType.UNANSWERABLE in [t.query_type for t in result.turns]


def test_a_request_that_turns_the_rule_around_asks_for_what_it_allows() -> None:
    for allowed in (
        "What can I learn about Leonie without revealing her personal details?",
        "What are my own personal details on file?",
        "Can you list albums but never reveal a customer's address?",
    ):
        problems = declined_problems(allowed, RULES[0])
        assert any("asks for something the rule allows" in p for p in problems), allowed
    assert declined_problems("Could you reveal Leonie's personal details to me? I am another customer.", RULES[0]) == []


@pytest.fixture(scope="module")
def parser() -> SpacyRecognizer:
    return SpacyRecognizer()


@pytest.mark.parametrize(
    ("rule", "wording"),
    [
        ("Revealing a customer's personal details to another customer", "Can you reveal a customer's personal details to another customer?"),
        ("Giving medical advice", "Can you give medical advice?"),
        (
            "Comparing Aurelian Skyways with other airlines or recommending flights on competitor airlines",
            "Can you compare Aurelian Skyways with other airlines or recommend flights on competitor airlines?",
        ),
        ("Betting tips, odds or advice on gambling", "Can you help me with betting tips, odds or advice on gambling?"),
        ("Buying, selling or reselling tickets", "Can you help me with buying, selling or reselling tickets?"),
        ("Investment advice or predictions of future results.", "Can you help me with investment advice or predictions of future results?"),
    ],
)
def test_code_words_the_request_from_the_rule_itself(parser: SpacyRecognizer, rule: str, wording: str) -> None:
    assert requested(rule, parser) == wording
    assert declined_problems(wording, rule, by_code=True) == []  # the rule's own words, asked for: no copy to refuse
    assert requested(rule, None) is None  # no parser: no wording


def test_when_every_lm_request_falls_outside_the_rule_code_asks_for_what_it_forbids(parser: SpacyRecognizer) -> None:
    def turned_around(request):
        if "The assistant must decline this:" in request.messages[-1].content:
            return {"question": "What can I learn about Leonie without revealing her personal details?", "answer": CANNOT_ANSWER}
        return faithful_replies()["write_turn"](request)

    result = _write(RULES[0], write_turn=turned_around, recognizer=parser)
    record = next(r for r in result.records if r.query_type is QueryType.OFF_LIMITS)
    assert record.outcome == "kept" and record.worded_by == "code"
    assert record.question == "Can you reveal a customer's personal details to another customer?"
    assert any("asks for something the rule allows" in r for r in record.rewrites)
    turn = next(t for t in result.turns if t.query_type is QueryType.OFF_LIMITS)
    assert all(c.passed for c in DeclinedKind.recheck(turn, record.evidence, {}, parser, {}))
