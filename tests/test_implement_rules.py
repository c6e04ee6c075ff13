"""A rule applied to a row: a fact of a policy sentence asked of a table row that is the case the rule names,
never naming the case, so that the assistant must read the row and then the rule."""

from __future__ import annotations

import pytest

from bddgen.embed.base import HashingEmbedder
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.implement.chains import Chain
from bddgen.implement.evidence import SentenceEvidence
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.kinds import Conversation, Kinds, kind_of
from bddgen.implement.kinds.rule import RuleKind, cases_named
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.provenance import TurnProvenance
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, PolicyDocument, SystemDescription, TableDocument
from bddgen.ner.spacy_recognizer import SpacyRecognizer
from bddgen.normalise import content_words
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import Conversation as Dialogue
from bddgen.specs import QueryType, Spec

CHANGES = PolicyDocument(id="policies/changes", title="Changes to bookings", passage=(
    "Saver tickets cannot be changed at all. Standard tickets can be changed for a fee of 70 EUR per passenger. "
    "Business Saver tickets can be changed for 120 EUR and Business tickets for 60 EUR. Flex tickets can be changed without a fee."
))
BOOKINGS = TableDocument(
    id="tables/bookings", title="Passenger bookings", headers=["booking_reference", "passenger_name", "fare_class"],
    rows=[
        ["3ULYBB", "Oskar Duarte", "Flex"], ["T67L8S", "Oskar Baumann", "Standard"], ["6Y6VK2", "Chiara Kelleher", "Saver"],
        ["8KVVKK", "Finn Eriksen", "Standard"], ["Q2W3E4", "Ana Lima", "Business Saver"], ["Z9X8C7", "Lea Moreau", "Saver"],
        ["M4N5B6", "Ivo Petrov", "Flex"], ["K1L2J3", "Rui Costa", "Standard"],
    ],
)
FARES = TableDocument(
    id="tables/fare_classes", title="Fare classes", headers=["fare_class", "change_fee_eur"],
    rows=[["Saver", ""], ["Standard", "70"], ["Business Saver", "120"], ["Business", "60"], ["Flex", "0"]],
)
SPEC = Spec.create(
    "Change fees by fare class", ["a passenger holds a booking"], ["the passenger asks what changing it costs"],
    ["the assistant states the change fee of the booking's fare class"],
)


@pytest.fixture(scope="module")
def parser() -> SpacyRecognizer:
    return SpacyRecognizer()


def _context(parser: SpacyRecognizer, policy: PolicyDocument = CHANGES, *, rules_on_rows: bool = True, **replies) -> WriterContext:
    corpus = Corpus(system=SystemDescription(name="Skyways assistant", purpose="Helps passengers."), documents=[policy, BOOKINGS, FARES])
    return WriterContext(
        spec=SPEC, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()),
        lm=LanguageModel(ScriptedLM(by_task={**faithful_replies(), **replies}), max_retries=0), recognizer=parser,
        retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(SPEC.as_text())), attempts=2, alternatives=2,
        min_turns=1, rules_on_rows=rules_on_rows,
    )


def _plan(policy: PolicyDocument = CHANGES) -> TurnPlan:
    return TurnPlan(chain=Chain(documents=[policy.id], hops=[]), turns=[PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[policy.id])])


def test_a_sentence_names_a_case_alone_or_in_one_list_and_never_two_cases_apart() -> None:
    tables = [BOOKINGS, FARES]
    assert cases_named("Standard tickets can be changed for a fee of 70 EUR.", BOOKINGS, tables) == [("fare_class", ["Standard"])]
    assert cases_named("Flex and Standard tickets include one bag.", BOOKINGS, tables) == [("fare_class", ["Flex", "Standard"])]
    assert cases_named("Saver, Standard or Flex tickets include one bag.", BOOKINGS, tables) == [("fare_class", ["Saver", "Standard", "Flex"])]
    # two cases apart state two rules: 120 EUR is Business Saver's, 60 EUR Business's (a case of the fare classes, no booking's)
    apart = "Business Saver tickets can be changed for 120 EUR and Business tickets for 60 EUR."
    assert cases_named(apart, BOOKINGS, tables) == []
    assert cases_named("Flex tickets may be changed for free, while Saver tickets may not.", BOOKINGS, tables) == []
    # a value is matched whole and as written: "Saver" is not named by "Business Saver", nor "standard" by "a standard seat"
    assert cases_named("Business Saver tickets can be changed for 120 EUR.", BOOKINGS, tables) == [("fare_class", ["Business Saver"])]
    assert cases_named("Every passenger gets a standard seat.", BOOKINGS, tables) == []
    # a column whose values identify rows (a key, a name) holds no cases
    assert cases_named("Oskar Duarte flies on 3ULYBB.", BOOKINGS, tables) == []


def test_a_policy_turn_asks_a_rule_of_a_row_of_its_case_without_naming_the_case(parser: SpacyRecognizer) -> None:
    result = ConversationWriter(_context(parser), _plan()).write()
    assert not result.dropped, result.dropped
    turn, record = result.turns[0], result.records[0]
    evidence = record.evidence
    assert isinstance(evidence, SentenceEvidence) and evidence.case is not None
    case = evidence.case
    # the row is the case the sentence states, and the fact is the sentence's for it
    assert BOOKINGS.rows[case.row][2] == case.value and case.value in evidence.text and evidence.answer == "70"
    assert case.filter == {"booking_reference": BOOKINGS.rows[case.row][0]}
    assert case.filter["booking_reference"] in turn.question and case.value not in turn.question
    assert "70" in turn.answer and turn.doc_ids == [CHANGES.id, BOOKINGS.id]
    assert any(c.name == "roundtrip" and c.passed for c in record.checks)
    # provenance keeps the row; read back, the rule's kind rechecks it
    read = TurnProvenance.model_validate_json(record.model_dump_json())
    assert isinstance(read.evidence, SentenceEvidence) and read.evidence.case == case and kind_of(read.evidence) is RuleKind
    assert all(c.passed for c in RuleKind.recheck(turn, read.evidence, _context(parser).documents, parser, {}))
    text = render_feature(FeatureDocument(spec=SPEC, conversations=[Dialogue(id="c1", title="Change fee", turns=result.turns)]))
    assert read_feature_text(text, "rules.feature").conversations[0].turns[0].doc_ids == [CHANGES.id, BOOKINGS.id]


def test_a_question_for_the_case_is_asked_of_the_row_and_one_that_asks_no_rule_is_refused(parser: SpacyRecognizer) -> None:
    context = _context(parser)
    conversation = Conversation(context, _plan())
    kinds = Kinds(conversation)
    planned = _plan().turns[0]
    evidence = next(kinds.candidates(planned, QueryType.SINGLE_DOC))
    assert isinstance(evidence, SentenceEvidence) and evidence.case is not None
    reference = evidence.case.filter["booking_reference"]
    # the LM asks the rule for the case the sentence names; code asks it of the row, which never says the case
    for_case = kinds.rule.check(planned, QueryType.SINGLE_DOC, evidence, "What is the change fee for Standard tickets?", "70 EUR", False)
    assert for_case.turn.question == f"What is the change fee for booking {reference}?" and for_case.problems == []
    lower = kinds.rule.check(planned, QueryType.SINGLE_DOC, evidence, "What is the change fee for standard tickets?", "70 EUR", False)
    assert lower.turn.question == f"What is the change fee for booking {reference}?"
    both = kinds.rule.check(planned, QueryType.SINGLE_DOC, evidence, f"How much is it to change Standard booking {reference}?", "70", False)
    assert both.turn.question == f"How much is it to change booking {reference}?" and both.problems == []
    vague = kinds.rule.check(planned, QueryType.SINGLE_DOC, evidence, f"What does the rule say for booking {reference}?", "70 EUR", False)
    assert any("must ask what the rule says" in p for p in vague.problems)
    unnamed = kinds.rule.check(planned, QueryType.SINGLE_DOC, evidence, "What is the change fee per passenger?", "70 EUR", False)
    assert any('must name "Standard" as the sentence does' in p for p in unnamed.problems)


def test_a_sentence_stating_two_cases_apart_is_asked_as_a_sentence(parser: SpacyRecognizer) -> None:
    apart = PolicyDocument(id="policies/changes", title="Changes to bookings", passage=(
        "Business Saver tickets can be changed for 120 EUR and Business tickets for 60 EUR."
    ))
    conversation = Conversation(_context(parser, apart), _plan(apart))
    candidates = list(Kinds(conversation).candidates(_plan(apart).turns[0], QueryType.SINGLE_DOC))
    assert candidates and all(isinstance(e, SentenceEvidence) and e.case is None for e in candidates)


def test_switched_off_a_policy_turn_asks_the_sentence_itself(parser: SpacyRecognizer) -> None:
    conversation = Conversation(_context(parser, rules_on_rows=False), _plan())
    candidates = list(Kinds(conversation).candidates(_plan().turns[0], QueryType.SINGLE_DOC))
    assert candidates and all(isinstance(e, SentenceEvidence) and e.case is None for e in candidates)


def test_a_row_no_longer_of_the_case_fails_its_recheck(parser: SpacyRecognizer) -> None:
    result = ConversationWriter(_context(parser), _plan()).write()
    evidence = result.records[0].evidence
    assert isinstance(evidence, SentenceEvidence) and evidence.case is not None
    rows = [list(r) for r in BOOKINGS.rows]
    rows[evidence.case.row][2] = "Flex"  # the booking was upgraded since the suite was written
    changed = {**_context(parser).documents, BOOKINGS.id: BOOKINGS.model_copy(update={"rows": rows})}
    checks = RuleKind.recheck(result.turns[0], evidence, changed, parser, {})
    assert any(c.name == "exact" and not c.passed and "Flex" in c.detail for c in checks)
