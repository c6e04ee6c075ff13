"""Answer-first turns: evidence chosen by code, checks against the turn's own evidence, the round trip,
and turn-level repair (scripted LM, no model)."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from bddgen.config import TurnCheckSettings
from bddgen.embed.base import HashingEmbedder
from bddgen.features.document import FeatureDocument
from bddgen.features.lint import lint_features
from bddgen.features.writer import render_feature
from bddgen.implement.chains import Chain
from bddgen.implement.checks import COPIED_WORDS, grounding_problems, longest_copied_run, question_problems, unsupported_words
from bddgen.implement.evidence import TableEvidence, table_candidates, unique_filter
from bddgen.implement.grounding import DocumentTexts, answer_facts, missing_facts
from bddgen.normalise import content_words
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.scripted import answer_from_documents, faithful_replies, write_turn
from bddgen.lm.scripted import section
from bddgen.implement.tables import matching_rows
from bddgen.implement.tasks import ANSWER_FROM_DOCUMENTS, WRITE_TURN
from bddgen.implement.turns import ConversationWriter, WriterContext, WrittenConversation
from bddgen.implement.unanswerable import ATTRIBUTES, absent_subjects
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer, RegexRecognizer
from bddgen.ner.spacy_recognizer import SpacyRecognizer
from bddgen.implement.checks import left_out_problems
from bddgen.implement.questions import one_of_several, question_for
from bddgen.implement.context import sentences
from bddgen.implement.evidence import sentence_candidates
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import CANNOT_ANSWER, Conversation, QueryType, Spec, Turn

Q = QueryType
TRANSFERS = TableDocument(
    id="t1", title="Transfer records", headers=["player", "from_club", "to_club", "fee_million", "year"],
    rows=[
        ["Rasmus Kaldor", "Brennick Town", "Redmarsh Rovers", "5.8", "2006"],
        ["Jonah Petrakis", "Orlanmouth Wanderers", "Westerholm Athletic", "2.1", "1999"],
        ["Rasmus Kaldor", "Redmarsh Rovers", "Korrin Sporting", "3.4", "2011"],
    ],
)
FINAL = TextDocument(
    id="d1", title="2004 Varen Cup Final",
    passage="Rasmus Kaldor scored both goals as Brennick Town beat Korrin Sporting 2-1 in the 2004 Varen Cup Final at Crownfield Stadium. "
    "The Varen Cup was first run in 1903 and is the oldest cup in Veloria.",
)
CORPUS = Corpus(system=SystemDescription(name="Football", purpose="Answers questions about Velorian football."), documents=[TRANSFERS, FINAL])
SPEC = Spec.create("Cup final heroes", ["a fan of cup finals"], ["the fan asks who decided a final"], ["the assistant names the hero"])
PLAN = TurnPlan(
    chain=Chain(documents=["t1", "d1"], hops=[]),
    turns=[
        PlannedTurn(query_type=Q.SINGLE_DOC, documents=["t1"]),
        PlannedTurn(query_type=Q.SINGLE_DOC, documents=["d1"]),
        PlannedTurn(query_type=Q.UNANSWERABLE, subject="Rasmus Kaldor"),
        PlannedTurn(query_type=Q.SYNTHESIS, documents=["t1", "d1"]),
    ],
)


def _writer(
    replies: dict[str, Any], corpus: Corpus = CORPUS, attempts: int = 3, alternatives: int = 2, recognizer: EntityRecognizer | None = None
) -> tuple[ConversationWriter, ScriptedLM]:
    backend = ScriptedLM(by_task={**faithful_replies(), **replies})
    context = WriterContext(
        spec=SPEC, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()), lm=LanguageModel(backend, max_retries=0),
        recognizer=recognizer or RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(SPEC.as_text())),
        attempts=attempts, alternatives=alternatives, min_turns=3,
        question_frames=False,  # the turns these tests script are worded by write_turn (frames: test_implement_frames.py)
    )
    return ConversationWriter(context, PLAN), backend


def _write(replies: dict[str, Any], **options: Any) -> tuple[WrittenConversation, ScriptedLM]:
    writer, backend = _writer(replies, **options)
    return writer.write(), backend


def _then_faithful(first: list[Any], faithful: Any) -> Any:
    """Replies `first` in order (callables get the request), then the faithful reply."""
    queue = list(first)

    def reply(request: LMRequest) -> Any:
        if queue:
            head = queue.pop(0)
            return head(request) if callable(head) else head
        return faithful(request)

    return reply


def test_a_faithful_conversation_keeps_every_turn_with_evidence_checks_and_an_exact_table_value() -> None:
    result, _ = _write({})
    assert not result.dropped and [t.query_type for t in result.turns] == [Q.SINGLE_DOC, Q.SINGLE_DOC, Q.UNANSWERABLE, Q.SYNTHESIS]
    table_turn, table_record = result.turns[0], result.records[0]
    evidence = table_record.evidence
    assert evidence is not None and evidence.kind == "table"
    assert table_turn.exact is not None and table_turn.exact.value == TRANSFERS.rows[evidence.row][TRANSFERS.headers.index(evidence.column)]
    assert matching_rows(TRANSFERS, evidence.filter) == [evidence.row]
    assert all(c.passed for r in result.records for c in r.checks)
    assert {c.name for c in table_record.checks} >= {"well-formed", "question", "names", "exact", "roundtrip"}
    assert result.records[2].evidence is not None and result.records[2].evidence.kind == "absent"
    synthesis = result.turns[-1]
    assert all(t.answer.rstrip(".") in synthesis.answer for t in result.turns[:2])


def test_an_answer_taken_from_another_row_of_the_same_table_is_rejected() -> None:
    own_row, other_row = TRANSFERS.row_text(1), TRANSFERS.row_text(0)
    assert grounding_problems("Jonah Petrakis moved to Westerholm Athletic in 1999.", own_row, RegexRecognizer())[1] == []
    assert grounding_problems("Jonah Petrakis moved to Redmarsh Rovers in 2006.", own_row, RegexRecognizer())[1]  # both values are in the table
    assert grounding_problems("Rasmus Kaldor moved to Redmarsh Rovers in 2006.", other_row, RegexRecognizer())[1] == []

    other_rows_value = {"answer": "Orlanmouth Wanderers"}  # the round trip reads another row
    result, _ = _write({"answer_from_documents": _then_faithful([other_rows_value], answer_from_documents)})
    first = result.records[0]
    assert first.outcome == "kept" and not first.roundtrip_first_try and "Orlanmouth Wanderers" in first.rewrites[0]
    assert first.evidence is not None and first.evidence.kind == "table"
    assert result.turns[0].answer != "Orlanmouth Wanderers" and result.turns[0].exact is not None
    assert result.turns[0].exact.value == TRANSFERS.rows[first.evidence.row][TRANSFERS.headers.index(first.evidence.column)]


def test_a_check_switched_off_lets_its_turn_through_and_records_what_it_would_have_refused() -> None:
    """[implement.checks] roundtrip = false: the round trip still runs, its disagreement no longer refuses the
    turn, and the kept turn's provenance says what the check found; every other check still refuses."""
    other_rows_value = {"answer": "Orlanmouth Wanderers"}  # the first round trip reads another row
    writer, _ = _writer({"answer_from_documents": _then_faithful([other_rows_value], answer_from_documents)})
    unchecked = ConversationWriter(replace(writer.context, checks=TurnCheckSettings(roundtrip=False)), PLAN).write()
    first = unchecked.records[0]
    assert first.outcome == "kept" and first.roundtrip_first_try and first.rewrites == []
    assert len(first.waived) == 1 and first.waived[0].startswith("roundtrip: ") and "Orlanmouth Wanderers" in first.waived[0]
    assert all(not r.waived for r in unchecked.records[1:])  # the faithful turns after it: nothing waived

    def copying(request: LMRequest) -> dict[str, Any]:  # the text turn's question pastes its sentence
        reply = write_turn(request)
        return {**reply, "question": "Who scored both goals as Brennick Town beat Korrin Sporting 2-1?"} if "2004 Varen Cup" in request.messages[-1].content else reply

    def scorer(request: LMRequest) -> dict[str, Any]:  # the documents name the scorer
        return {"answer": "Rasmus Kaldor"} if "scored both goals" in request.messages[-1].content else answer_from_documents(request)

    copied, _ = _writer({"write_turn": copying, "answer_from_documents": scorer}, attempts=1, alternatives=1)
    refused = ConversationWriter(copied.context, PLAN).write().records[1]
    assert refused.outcome == "dropped" or refused.worded_by == "code"
    let_through = ConversationWriter(replace(copied.context, checks=TurnCheckSettings(copied_words=False)), PLAN).write().records[1]
    assert let_through.outcome == "kept" and let_through.worded_by == "lm" and let_through.question.startswith("Who scored both goals")
    assert [w.partition(":")[0] for w in let_through.waived] == ["copied_words"]


def test_the_lm_cannot_put_another_rows_value_into_a_table_turns_reference() -> None:
    def wrong_row(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        return {**reply, "answer": "Westerholm Athletic"} if "Transfer records" in request.messages[-1].content else reply

    result, _ = _write({"write_turn": wrong_row})
    record = result.records[0]
    assert record.evidence is not None and record.evidence.kind == "table"
    value = TRANSFERS.rows[record.evidence.row][TRANSFERS.headers.index(record.evidence.column)]
    assert result.turns[0].answer == value != "Westerholm Athletic"


def test_a_number_fragment_does_not_ground_a_number() -> None:
    recognizer = RegexRecognizer()
    assert missing_facts(answer_facts("It leaves at 00 past the hour.", recognizer), "Flight XV104 departs at 06:00.") == ["00"]
    assert missing_facts(answer_facts("It departs at 06:45.", recognizer), "departs at 06:45 from CPH") == []
    assert missing_facts(answer_facts("It departs at 6:45.", recognizer), "departs at 06:45 from CPH") == ["6:45"]
    assert missing_facts(answer_facts("The fee was 1,250.00 EUR.", recognizer), "fee: 1250") == []
    assert missing_facts(answer_facts("It was first run in 1995.", recognizer), FINAL.passage) == ["1995"]

    def wrong_year(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        return {**reply, "answer": "It was first run in 1995."} if "1903" in request.messages[-1].content else reply

    result, _ = _write({"write_turn": _then_faithful([wrong_year, wrong_year], write_turn)})
    assert all("1995" not in t.answer for t in result.turns)


def test_a_filter_that_selects_two_rows_is_rewritten_to_select_one() -> None:
    assert matching_rows(TRANSFERS, {"player": "Rasmus Kaldor"}) == [0, 2]
    rewritten = unique_filter(TRANSFERS, 2, exclude=["to_club"], start={"player": "Rasmus Kaldor"})
    assert rewritten is not None and rewritten["player"] == "Rasmus Kaldor" and len(rewritten) == 2
    assert matching_rows(TRANSFERS, rewritten) == [2]
    twins = TRANSFERS.model_copy(update={"rows": [["A", "B", "C", "1", "2000"], ["A", "B", "D", "1", "2000"]]})
    assert unique_filter(twins, 0, exclude=["to_club"]) is None  # nothing but the answer tells them apart: another row is chosen
    for evidence in table_candidates(TRANSFERS, set(), about="Rasmus Kaldor"):
        assert matching_rows(TRANSFERS, evidence.filter) == [evidence.row] and evidence.referred == "player"


def test_a_duplicated_phrase_is_rejected_by_verification_and_by_validate(tmp_path: Path) -> None:
    mangled = "Which club did (that player) (that player) join in 2011?"
    assert any("written twice" in p for p in question_problems(mangled, ""))
    result, _ = _write({"write_turn": _then_faithful([{"question": mangled, "answer": "Korrin Sporting"}], write_turn)})
    first = result.records[0]
    assert first.outcome == "kept" and "written twice" in first.rewrites[0] and mangled not in [t.question for t in result.turns]

    turn = Turn(question=mangled, answer="Korrin Sporting", query_type=Q.SINGLE_DOC, doc_ids=["t1"])
    feature = tmp_path / "mangled.feature"
    feature.write_text(render_feature(FeatureDocument(spec=SPEC, conversations=[Conversation(id="c1", title="Transfers", turns=[turn])])))
    _, problems = lint_features([feature])
    assert any("turn 1" in p.message and "written twice" in p.message for p in problems)


def test_a_pasted_table_row_as_question_is_rejected() -> None:
    assert any("pastes a table row" in p for p in question_problems("player: Rasmus Kaldor; to_club: Redmarsh Rovers", ""))
    assert question_problems("Which club did Rasmus Kaldor join in 2006?", TRANSFERS.row_text(0)) == []
    copied = FINAL.passage.split(". ")[0] + "?"
    assert any("copies the document" in p for p in question_problems(copied, FINAL.passage))
    # a title with a colon said twice is one key, not a row of two columns
    assert question_problems("What do Pets on board: Cabin and Pets on board: Hold say about carriers?", "") == []


def test_a_turn_failing_twice_then_succeeding_keeps_its_conversation() -> None:
    pasted = {"question": "player: Rasmus Kaldor; year: 2006", "answer": "Redmarsh Rovers"}
    result, backend = _write({"write_turn": _then_faithful([pasted, pasted], write_turn)})
    assert not result.dropped and len(result.turns) == 4
    first = result.records[0]
    assert first.outcome == "kept" and first.attempts == 3 and len(first.rewrites) == 2 and first.evidence_tried == 1
    assert all("pastes a table row" in r for r in first.rewrites)
    retries = [r for r in backend.requests if r.task == "write_turn"][:3]
    assert "## Problems" not in retries[0].messages[-1].content and "pastes a table row" in retries[1].messages[-1].content


def test_a_table_turn_whose_wordings_all_fail_gets_the_question_worded_by_code() -> None:
    pasted = {"question": "player: Rasmus Kaldor; year: 2006", "answer": "x"}
    result, _ = _write({"write_turn": _then_faithful([pasted] * 3, write_turn)})
    first = result.records[0]
    assert first.outcome == "kept" and first.worded_by == "code" and first.evidence_tried == 1 and len(first.rewrites) == 3
    evidence = first.evidence
    assert isinstance(evidence, TableEvidence)
    # asked of the row's own entity, as a person names it from the table's title, not 'In "Transfer records", ... where ...'
    assert first.question.startswith("What is the ") and first.question.endswith("?") and 'In "' not in first.question
    assert all(value in first.question for value in evidence.filter.values()) and first.answer == evidence.value
    assert {c.name: c.passed for c in first.checks}["roundtrip"]
    assert not result.dropped


class ParsingRecognizer(RegexRecognizer):
    """The test recogniser, with spaCy's English parser for the questions code words from a sentence."""

    parser = SpacyRecognizer()

    def parse(self, text: str) -> Any:
        return self.parser.parse(text)


def test_a_question_worded_by_code_never_copies_its_sentence() -> None:
    # every LM wording fails; the sentence's whole clause would copy 15 of its words, so code offers its lean
    # form (subject, verb, object), which names nothing of the final and fails too: the turn moves on
    pasted = {"question": "Rasmus Kaldor; 2004: Varen Cup Final", "answer": "x"}
    result, backend = _write({"write_turn": _then_faithful([write_turn] + [pasted] * 3, write_turn)}, recognizer=ParsingRecognizer())
    text_turn = result.records[1]
    whole = "Who scored both goals as Brennick Town beat Korrin Sporting 2-1 in the 2004 Varen Cup Final at Crownfield Stadium?"
    assert text_turn.question != whole
    assert any(r.startswith("worded by code") for r in text_turn.rewrites)
    for record in result.records:
        evidence = record.evidence
        if record.outcome == "kept" and evidence is not None and evidence.kind == "sentence":
            assert longest_copied_run(record.question, evidence.text) < COPIED_WORDS
    # the LM was shown the lean form as the plain question to phrase, not the copied clause
    asked = [r for r in backend.requests if r.task == "write_turn"][1].messages[-1].content
    assert "Plainly: Who scored both goals?" in asked and whole not in asked


def test_a_text_question_that_leaves_out_a_name_of_its_sentences_clause_is_rewritten_naming_it() -> None:
    # without "Brennick Town" and "Korrin Sporting" the question could be about another final's two goals
    shortened = {"question": "Who scored both goals in the 2004 Varen Cup Final?", "answer": "Rasmus Kaldor"}
    named = {"question": "Which player scored both of Brennick Town's goals when they beat Korrin Sporting 2-1 at Crownfield Stadium in the 2004 Varen Cup Final?",
             "answer": "Rasmus Kaldor"}
    result, _ = _write({"write_turn": _then_faithful([write_turn, shortened, named], write_turn)}, recognizer=ParsingRecognizer())
    text_turn = result.records[1]
    assert text_turn.outcome == "kept" and text_turn.attempts == 2 and text_turn.question == named["question"]
    left_out = text_turn.rewrites[0]
    assert all(f'leaves out "{name}"' in left_out for name in ("Brennick Town", "Korrin Sporting", "Crownfield Stadium"))
    assert 'leaves out "2004' not in left_out  # what the question already says is not asked for again


def test_only_the_names_and_numbers_of_the_clause_code_keeps_are_required() -> None:
    sentence = "Marek Halvorsen won twice with Calderford United, the second time in the 2003 Varen Cup Final."
    clause = question_for(sentence, "Marek Halvorsen", ParsingRecognizer.parser)
    assert clause == "Who won twice with Calderford United?"  # the comma aside is not part of the clause
    recognizer = RegexRecognizer()
    assert left_out_problems("Who won the Hallam Medal twice?", clause, sentence, "Marek Halvorsen", recognizer) == [
        'the question leaves out "Calderford United", which its sentence says, so other answers may fit; name "Calderford United"'
    ]
    assert left_out_problems("Who won the Hallam Medal twice with Calderford United?", clause, sentence, "Marek Halvorsen", recognizer) == []
    assert left_out_problems("Who won the Hallam Medal twice?", None, sentence, "Marek Halvorsen", recognizer) == []  # no clause: no demand


def test_a_filler_says_its_proxy_in_place_of_the_name_and_the_words_that_introduce_it() -> None:
    from bddgen.implement.kinds import refer_to

    assert refer_to("What is the passenger name of the flight number XV104?", "XV104", "that flight number") == (
        "What is the passenger name of that flight number?"
    )
    assert refer_to("How many points did the Ashvale Rangers get?", "Ashvale Rangers", "that club") == "How many points did that club get?"
    assert refer_to("Who coached Ashvale Rangers in 2017?", "Ashvale Rangers", "that club") == "Who coached that club in 2017?"
    # a row the name identifies is referred to whole: "the album with ID 1" is "that album", not "the album with ID that album"
    assert refer_to("What is the title of the album with ID 1?", "1", "that album") == "What is the title of that album?"
    assert refer_to("What is the name of the genre whose genre id is 1?", "1", "that genre") == "What is the name of that genre?"
    assert refer_to("For media type 1, what is the name of the track with ID 61?", "1", "that media type") == (
        "For that media type, what is the name of the track with ID 61?"  # another row's ID is left as it is
    )
    # a word describing the proxy's noun goes with it: "the billing address X" is "that address", not "the billing that address"
    assert refer_to("What is the company of the customer with the billing address 1 Quay Road?", "1 Quay Road", "that address") == (
        "What is the company of the customer with that address?"
    )
    assert refer_to("Which customer lives at 1 Quay Road?", "1 Quay Road", "that address") == "Which customer lives at that address?"


def test_a_text_turn_worded_by_code_still_needs_its_round_trip() -> None:
    pasted = {"question": "Rasmus Kaldor; 2004: Varen Cup Final", "answer": "x"}
    wrong = {"answer": "Korrin Sporting"}
    result, _ = _write(
        {"write_turn": _then_faithful([write_turn] + [pasted] * 6, write_turn), "answer_from_documents": _then_faithful([answer_from_documents] + [wrong] * 8, answer_from_documents)},
        recognizer=ParsingRecognizer(),
    )
    text_turn = result.records[1]
    assert text_turn.worded_by != "code" and any(r.startswith("worded by code: answering") for r in text_turn.rewrites)


def test_a_text_turn_that_keeps_failing_moves_to_other_evidence_and_the_plan_adds_a_turn_before_synthesis() -> None:
    pasted = {"question": "Rasmus Kaldor; 2004: Varen Cup Final", "answer": "x"}
    result, _ = _write({"write_turn": _then_faithful([write_turn] + [pasted] * 6, write_turn)})
    text_turn = result.records[1]
    assert text_turn.outcome == "dropped" and text_turn.evidence_tried == 2 and text_turn.attempts == 6 and "pastes a table row" in text_turn.dropped
    added = [r for r in result.records if r.added]
    # the text document comes first (no turn of it was kept), but both its sentences failed as SINGLE-DOC
    # turns and are not asked again: that added turn has nothing to ask, the table gets the next one
    assert [(r.outcome, r.attempts, r.dropped) for r in added][0] == ("dropped", 0, "no evidence to ask about")
    assert [r.outcome for r in added] == ["dropped", "kept"]
    assert added[1].query_type is Q.SINGLE_DOC and added[1].evidence is not None and added[1].evidence.kind == "table"
    assert result.records.index(added[-1]) == len(result.records) - 2  # just before SYNTHESIS
    assert not result.dropped and result.turns[-1].query_type is Q.SYNTHESIS


def test_a_sentence_every_wording_failed_on_is_not_asked_again_by_a_turn_of_the_same_kind() -> None:
    pasted = {"question": "Rasmus Kaldor; 2004: Varen Cup Final", "answer": "x"}
    writer, _ = _writer({"write_turn": _then_faithful([write_turn] + [pasted] * 3, write_turn)}, alternatives=1)
    result = writer.write()
    failed = result.records[1].evidence
    assert result.records[1].outcome == "dropped" and failed is not None and failed.kind == "sentence"
    retried = [r for r in result.records[2:] if r.evidence is not None and r.evidence.kind == "sentence" and r.query_type is Q.SINGLE_DOC]
    assert [r.evidence.sentence for r in retried] == [1 - failed.sentence]  # type: ignore[union-attr]  # the document's other sentence


def test_an_unanswerable_turn_whose_wordings_all_fail_is_worded_by_code_from_its_absent_subject() -> None:
    pasted = {"question": "mascot: none; entity: Rasmus Kaldor", "answer": "x"}
    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn] + [pasted] * 3, write_turn)})
    unanswerable = result.records[2]
    assert unanswerable.outcome == "kept" and unanswerable.worded_by == "code" and unanswerable.answer == CANNOT_ANSWER
    evidence = unanswerable.evidence
    assert evidence is not None and evidence.kind == "absent" and unanswerable.question == f"What is the {evidence.attribute} of {evidence.entity}?"


def test_every_lm_wording_failing_leaves_table_unanswerable_and_synthesis_turns_worded_by_code() -> None:
    pasted = {"question": "Rasmus Kaldor; 2004: Varen Cup Final", "answer": "x"}
    result, _ = _write({"write_turn": pasted})
    assert not result.dropped and [t.query_type for t in result.turns] == [Q.SINGLE_DOC, Q.UNANSWERABLE, Q.SINGLE_DOC, Q.SYNTHESIS]
    kept = [r for r in result.records if r.outcome == "kept"]
    assert all(r.worded_by == "code" for r in kept) and all(r.evidence is not None and r.evidence.kind != "sentence" for r in kept)
    synthesis = result.turns[-1]
    assert synthesis.question.startswith("To sum up, ") and all(t.answer in synthesis.answer for t in (result.turns[0], result.turns[2]))


def test_a_conversation_is_dropped_naming_its_synthesis_turn_when_no_round_trip_agrees() -> None:
    result, _ = _write({"answer_from_documents": {"answer": "The documents do not say."}})
    assert result.dropped.startswith("turn ") and "(SYNTHESIS)" in result.dropped and not result.turns
    assert all(r.outcome == "dropped" for r in result.records if r.query_type not in (Q.UNANSWERABLE,))


def test_the_static_prompt_prefix_is_byte_identical_across_calls() -> None:
    _, backend = _write({})
    for task in (WRITE_TURN, ANSWER_FROM_DOCUMENTS):
        requests = [r for r in backend.requests if r.task == task.name]
        assert len(requests) >= 3
        systems = {r.messages[0].content.encode() for r in requests}
        assert [r.messages[0].role for r in requests] == ["system"] * len(requests) and len(systems) == 1
        assert len({r.messages[-1].content for r in requests}) == len(requests)  # only the user message varies


def test_an_unanswerable_subject_found_in_the_corpus_is_replaced() -> None:
    covered = TextDocument(id="d2", title="Rasmus Kaldor", passage=f"Rasmus Kaldor's {ATTRIBUTES[0]} was the Hammer of Brennick.")
    corpus = Corpus(system=CORPUS.system, documents=[TRANSFERS, FINAL, covered])
    subjects = absent_subjects("Rasmus Kaldor", DocumentTexts(corpus.by_id()), MemoryIndex(HashingEmbedder(), corpus))
    first = next(subjects)
    assert first.attribute != ATTRIBUTES[0] and first.entity == "Rasmus Kaldor"
    assert not list(absent_subjects(" ", DocumentTexts(corpus.by_id()), MemoryIndex(HashingEmbedder(), corpus)))  # nothing named

    result, _ = _write({}, corpus=corpus)
    unanswerable = result.records[2]
    assert unanswerable.outcome == "kept" and unanswerable.evidence is not None and unanswerable.evidence.kind == "absent"
    assert ATTRIBUTES[0] not in result.turns[2].question and result.turns[2].answer == CANNOT_ANSWER


def test_an_unanswerable_subject_fits_the_kind_of_entity_it_is_about() -> None:
    from bddgen.implement.unanswerable import ATTRIBUTES_BY_KIND, entity_kind
    from bddgen.ner.entity import Entity

    class Labelled:
        name = "labelled"
        labels = {"Rasmus Kaldor": "PERSON", "Brennick Town": "ORG", "Crownfield Stadium": "FAC", "Orlanmouth": "GPE"}

        def extract(self, text: str) -> list[Entity]:
            return [Entity(text, self.labels[text], 0, len(text))] if text in self.labels else []

        def extract_many(self, texts: list[str]) -> list[list[Entity]]:
            return [self.extract(t) for t in texts]

    kinds = {name: entity_kind(name, Labelled()) for name in ("Rasmus Kaldor", "Brennick Town", "Crownfield Stadium", "Orlanmouth", "XV104")}
    assert kinds == {"Rasmus Kaldor": "person", "Brennick Town": "organisation", "Crownfield Stadium": "place", "Orlanmouth": "region",
                     "XV104": "other"}
    texts, index = DocumentTexts(CORPUS.by_id()), MemoryIndex(HashingEmbedder(), CORPUS)
    for name, kind in kinds.items():
        asked = {s.attribute for s in absent_subjects(name, texts, index, kind=kind)}
        assert asked and asked <= set(ATTRIBUTES_BY_KIND[kind])
    assert "mascot" not in ATTRIBUTES_BY_KIND["person"] and "blood type" not in ATTRIBUTES_BY_KIND["organisation"]
    assert "opening hours" in ATTRIBUTES_BY_KIND["place"] and "opening hours" not in ATTRIBUTES_BY_KIND["region"]  # not of a city


def test_an_unanswerable_turn_asks_about_a_known_person_organisation_or_place_before_a_fragment() -> None:
    from bddgen.implement.unanswerable import entity_kind
    from bddgen.ner.entity import Entity

    class KnowsKaldor(RegexRecognizer):
        def extract(self, text: str) -> list[Entity]:
            return [Entity(text, "PERSON", 0, len(text))] if text == "Rasmus Kaldor" else super().extract(text)

    fragment = PLAN.model_copy(update={"turns": [t if t.query_type is not Q.UNANSWERABLE else PlannedTurn(query_type=Q.UNANSWERABLE, subject="Year award") for t in PLAN.turns]})
    writer, _ = _writer({}, recognizer=KnowsKaldor())
    result = ConversationWriter(writer.context, fragment).write()
    evidence = result.records[2].evidence
    assert evidence is not None and evidence.kind == "absent" and evidence.entity != "Year award"
    assert entity_kind(evidence.entity, KnowsKaldor(), writer.context.texts) != "other"
    # with no name the recogniser or a table column knows, the plan's subject is kept
    unnamed_columns = TRANSFERS.model_copy(update={"headers": ["who", "left", "joined", "fee_million", "year"]})
    writer, _ = _writer({}, corpus=Corpus(system=CORPUS.system, documents=[unnamed_columns, FINAL]))
    result = ConversationWriter(writer.context, fragment).write()
    assert result.records[2].evidence is not None and result.records[2].evidence.entity == "Year award"


def test_an_unanswerable_question_the_corpus_covers_is_rewritten() -> None:
    def covered_first(request: LMRequest) -> Any:
        reply = write_turn(request)
        return {"question": "What was the score of the 2004 Varen Cup Final?", "answer": CANNOT_ANSWER} if reply["answer"] == CANNOT_ANSWER else reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, covered_first], write_turn)})
    record = result.records[2]
    assert record.outcome == "kept" and record.rewrites and "ask for the" in record.rewrites[0]


def test_an_unanswerable_question_that_misspells_its_entity_is_rewritten() -> None:
    def misspelt_first(request: LMRequest) -> Any:
        reply = write_turn(request)
        if reply["answer"] != CANNOT_ANSWER:
            return reply
        entity = re.search(r"Ask for the .+? of (.+?)\. No document", section(request, "What To Ask"))
        assert entity is not None
        return {**reply, "question": reply["question"].replace(entity.group(1), entity.group(1).replace("a", "e", 1) + "x")}

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, misspelt_first], write_turn)})
    record = result.records[2]
    assert record.outcome == "kept" and record.rewrites and "as the documents write it" in record.rewrites[0]


def test_a_table_turn_asks_about_a_row_named_by_its_key_not_for_the_key() -> None:
    fares = TableDocument(
        id="t2", title="Fare classes", headers=["fare_class", "cabin", "checked_bags", "changeable"],
        rows=[["Saver", "economy", "0", "no"], ["Flex", "economy", "1", "yes"], ["Business", "business", "2", "yes"]],
    )
    first = next(table_candidates(fares, set()))
    assert first.column != "fare_class" and first.filter == {"fare_class": fares.rows[first.row][0]}


def test_a_row_is_named_by_what_people_use_never_by_a_running_number() -> None:
    """A database's running numbers ("song 169") name no row a person knows: a row is picked by its name, a table
    without one by its other cells, and the row's own name is asked last (a person asks about a thing they name)."""
    from bddgen.models import ForeignKey

    songs = TableDocument(
        id="t5", title="Song", headers=["SongId", "Title", "RecordId", "Writer", "Seconds"], key="SongId",
        foreign_keys=[ForeignKey(column="RecordId", table="Record", references="RecordId")],
        rows=[["1", "Low Tide", "1", "Ann Reyes", "201"], ["2", "Salt Road", "1", "Ann Reyes", "187"], ["3", "Harbour Lights", "2", "Tom Ishii", "243"]],
    )
    from bddgen.implement.kinds.table import row_question

    asked = list(table_candidates(songs, set()))
    assert asked and all(set(c.filter) == {"Title"} for c in asked if c.column != "Title")
    assert all("SongId" not in c.filter and "RecordId" not in c.filter for c in asked)
    assert asked[0].column != "Title"  # the song's writer or length, of the song it names
    bills = TableDocument(
        id="t6", title="Bill", headers=["BillId", "PatronId", "BillDate", "City", "Amount"], key="BillId",
        rows=[["1", "4", "2021-01-01", "Lyon", "3.96"], ["2", "4", "2021-02-11", "Lyon", "5.94"], ["3", "7", "2021-02-11", "Porto", "0.99"]],
    )
    assert all(not {"BillId", "PatronId"} & set(c.filter) for c in table_candidates(bills, set()))
    patrons = TableDocument(
        id="t8", title="Patron", headers=["PatronId", "LastName", "FirstName", "City"], key="PatronId",
        rows=[["1", "Reyes", "Ann", "Lyon"], ["2", "Ishii", "Tom", "Lyon"], ["3", "Moreau", "Lea", "Porto"]],
    )
    city = next(c for c in table_candidates(patrons, set()) if c.column == "City")
    assert list(city.filter) == ["FirstName", "LastName"]  # a name given in parts is said whole, the first name first
    assert row_question("patron", city, "") == f"What is the city of {city.filter['FirstName']} {city.filter['LastName']}?"
    table = TableDocument(
        id="t7", title="Northern League final table, 2021", headers=["position", "club", "played", "points"],
        rows=[["1", "Ashby Town", "30", "70"], ["2", "Kelso Rovers", "30", "64"], ["3", "Marlow United", "30", "51"]],
    )
    points = next(c for c in table_candidates(table, set()) if c.column == "points")
    assert points.filter == {"club": table.rows[points.row][1]}  # the club's points, not "the points of position 1"


def test_a_table_cell_whose_value_its_filter_names_is_never_asked_for() -> None:
    """A question names its filter, so a filter value holding the answer gives the answer away: "Where does
    Ashvale Rangers play?" for "Ashvale" (a PRE-FILLER bridging on the city wrote it four times in the demo)."""
    clubs = TableDocument(
        id="t3", title="Clubs", headers=["club", "city", "founded"],
        rows=[["Ashvale Rangers", "Ashvale", "1901"], ["Korrin Sporting", "Korrin", "1931"], ["Millgate Athletic", "Ashvale", "1922"]],
    )
    bridging = list(table_candidates(clubs, set(), names="Ashvale"))
    assert [(c.row, c.column, c.filter) for c in bridging] == [(2, "city", {"club": "Millgate Athletic"})]
    asked = {(c.row, c.column) for c in table_candidates(clubs, set())}
    assert (0, "city") not in asked and (1, "city") not in asked and (2, "city") in asked and (0, "founded") in asked


def test_a_question_that_repeats_an_earlier_one_is_rewritten() -> None:
    def repeat_the_first(request: LMRequest) -> Any:
        history = request.messages[-1].content.split("## Conversation So Far\n", 1)[1]
        earlier = next((line[len("User: "):] for line in history.splitlines() if line.startswith("User: ")), "")
        reply = write_turn(request)
        return {**reply, "question": earlier} if earlier and reply["answer"] != CANNOT_ANSWER else reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, repeat_the_first], write_turn)})
    second = result.records[1]
    assert second.outcome == "kept" and "repeats an earlier one" in second.rewrites[0]
    assert len({t.question for t in result.turns}) == len(result.turns)


def test_a_text_answer_may_not_add_words_its_sentence_lacks() -> None:
    sentence = "The 2023 Varen Cup Final was played on 19 November 2023 at Crownfield Stadium."
    assert unsupported_words("It was played from March to November 2023.", sentence, "When was the 2023 final played?") == ["march"]
    assert unsupported_words("On 19 November 2023, at Crownfield Stadium.", sentence, "When was the 2023 final played?") == []


def test_a_sentence_opening_with_a_reference_is_asked_about_after_self_contained_ones() -> None:
    from bddgen.implement.evidence import sentence_candidates

    cup = TextDocument(
        id="d2", title="Crown Shield",
        passage="It runs alongside the league and offers smaller clubs a route to silverware since 1985. "
        "The Crown Shield is a knockout competition for the clubs of the top two divisions, first played in 1985.",
    )
    order = [e.sentence for e in sentence_candidates(cup, set(), RegexRecognizer())]
    assert order == [1, 0]


def test_code_chooses_the_fact_a_text_turn_asks_for_leaving_out_its_title_and_the_referred_entity() -> None:
    from bddgen.implement.evidence import answer_spans

    sentence = "Redmarsh Rovers have won the Crown Shield nine times, most recently in 2019 against Harbour City FC."
    spans = answer_spans(sentence, "Crown Shield", RegexRecognizer())
    assert spans[0] == "Redmarsh Rovers" and "Crown Shield" not in spans and "2019" in spans
    assert answer_spans(sentence, "Crown Shield", RegexRecognizer(), skip="Redmarsh Rovers")[0] == "Harbour City FC"


def test_a_day_or_year_of_a_written_date_is_asked_as_the_whole_date() -> None:
    from bddgen.implement.evidence import answer_spans

    spans = answer_spans("None of these PSUs were vested as of December 31, 2019, and 375,000 PSUs were granted.", "Report 24", RegexRecognizer())
    assert "December 31, 2019" in spans and "31" not in spans and "375,000" in spans
    final = answer_spans("The 2023 Varen Cup Final was played on 19 November 2023 at the Greyhollow Bowl.", "Varen Cup", RegexRecognizer())
    assert "19 November 2023" in final and "2023" in final and "19" not in final  # the year standing alone stays a fact


def test_with_a_parser_a_sentence_is_asked_for_the_first_fact_code_can_word_a_question_for() -> None:
    from bddgen.implement.evidence import sentence_candidates

    shield = TextDocument(id="d2", title="Crown Shield", passage="Redmarsh Rovers have won the Crown Shield nine times, most recently in 2019 against Harbour City FC.")
    # the best fact is a name, but with "Redmarsh Rovers" as the referred entity the next name, "Harbour City FC", is
    # behind "against", where no wh-word fits; the year is the first fact code can ask for
    plain = next(sentence_candidates(shield, set(), RegexRecognizer(), must="Redmarsh Rovers"))
    assert plain.answer == "Harbour City FC"
    parser = ParsingRecognizer.parser
    ranked = next(sentence_candidates(shield, set(), RegexRecognizer(), must="Redmarsh Rovers", rank=lambda s, f: 0 if question_for(s, f, parser) else 1))
    assert ranked.answer == "2019"


def test_a_fact_that_is_one_of_several_coordinated_ones_is_never_an_answer() -> None:
    both = TextDocument(
        id="d2", title="Crown Shield",
        passage="Elias Marwood of Korrin Sporting and Idris Calloway of Ashvale Rangers both scored their first senior goals in the competition. "
        "Pellham Forest won it in 2013 while rebuilding after relegation.",
    )
    writer, _ = _writer({}, recognizer=ParsingRecognizer())
    rank = writer.conversation.fact_rank()
    assert rank is not None
    assert one_of_several(both.passage, "Elias Marwood", ParsingRecognizer.parser)
    assert rank(sentences(both.passage)[0], "Elias Marwood") is None and rank(sentences(both.passage)[0], "Idris Calloway") is None
    chosen = [(e.sentence, e.answer) for e in sentence_candidates(both, set(), RegexRecognizer(), rank=rank)]
    assert chosen and all(answer not in ("Elias Marwood", "Idris Calloway") for _, answer in chosen)


def test_a_text_turn_keeps_the_fact_code_chose_when_the_lm_answer_adds_what_its_sentence_lacks() -> None:
    def embellished(request: LMRequest) -> Any:
        reply = write_turn(request)
        return {**reply, "answer": "Rasmus Kaldor, the greatest striker of his generation."} if "Varen Cup Final" in reply["question"] else reply

    result, _ = _write({"write_turn": embellished})
    text = result.records[1]
    assert text.outcome == "kept" and text.evidence is not None and text.evidence.kind == "sentence"
    assert text.answer == text.value == text.evidence.answer and text.value in text.evidence.text


def test_a_text_question_that_contains_its_own_answer_is_rewritten() -> None:
    def giveaway(request: LMRequest) -> Any:
        reply = write_turn(request)
        span = re.search(r'answers with "([^"]+)"', section(request, "What To Ask"))
        return {**reply, "question": f"Did {span.group(1)} feature in it?"} if span else reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, giveaway], write_turn)})
    assert result.records[1].outcome == "kept" and "gives away its answer" in result.records[1].rewrites[0]


def test_a_synthesis_worded_by_code_names_what_a_filler_referred_to_and_passes_its_own_round_trip() -> None:
    plan = TurnPlan(
        chain=Chain(documents=["t1", "d1"], hops=[]),
        turns=[
            PlannedTurn(query_type=Q.PRE_FILLER, documents=["t1"], bridge="Rasmus Kaldor"),
            PlannedTurn(query_type=Q.FILLER, documents=["d1"], bridge="Rasmus Kaldor", proxy="that player"),
            PlannedTurn(query_type=Q.UNANSWERABLE, subject="Rasmus Kaldor"),
            PlannedTurn(query_type=Q.SYNTHESIS, documents=["t1", "d1"]),
        ],
    )

    def no_synthesis(request: LMRequest) -> Any:
        if section(request, "What To Ask").startswith("Ask one question"):
            return {"question": "player: Rasmus Kaldor; goals: 2", "answer": "x"}
        return write_turn(request)

    writer, backend = _writer({"write_turn": no_synthesis})
    result = ConversationWriter(writer.context, plan).write()
    assert not result.dropped and [t.query_type for t in result.turns] == [Q.PRE_FILLER, Q.FILLER, Q.UNANSWERABLE, Q.SYNTHESIS]
    synthesis, record = result.turns[-1], result.records[-1]
    assert record.worded_by == "code" and "that player" in result.turns[1].question
    assert "that player" not in synthesis.question and "Rasmus Kaldor" in synthesis.question
    assert {c.name: c.passed for c in record.checks}["roundtrip"]
    assert synthesis.answer == "; ".join(t.answer.rstrip(". ") for t in result.turns[:2])  # each answer as its turn gave it, joined
    # the combined question was answered from the documents like any other
    asked = [r for r in backend.requests if r.task == "answer_from_documents"][-1]
    assert section(asked, "Question") == synthesis.question and section(asked, "Documents").startswith("[t1]")


def test_a_synthesis_that_stops_asking_what_a_combined_turn_asked_is_rewritten() -> None:
    def vague_synthesis(request: LMRequest) -> Any:
        reply = write_turn(request)
        if section(request, "What To Ask").startswith("Ask one question"):
            return {**reply, "question": "What do you know about Rasmus Kaldor and the 2004 Varen Cup Final, in short?"}
        return reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, write_turn, vague_synthesis], write_turn)})
    synthesis = result.records[-1]
    assert synthesis.query_type is Q.SYNTHESIS and synthesis.outcome == "kept"
    assert synthesis.rewrites and "must ask for the" in synthesis.rewrites[0]
    table_column = result.records[0].evidence.column  # type: ignore[union-attr]
    assert table_column.replace("_", " ").split()[0] in result.turns[-1].question.lower()


def test_a_synthesis_worded_by_code_whose_round_trip_misses_a_part_is_not_kept() -> None:
    def no_synthesis(request: LMRequest) -> Any:
        if section(request, "What To Ask").startswith("Ask one question"):
            return {"question": "player: Rasmus Kaldor; goals: 2", "answer": "x"}
        return write_turn(request)

    def half(request: LMRequest) -> Any:
        return {"answer": "Redmarsh Rovers"} if "sum up" in section(request, "Question").lower() else answer_from_documents(request)

    result, _ = _write({"write_turn": no_synthesis, "answer_from_documents": half})
    assert result.dropped.startswith("turn ") and "(SYNTHESIS)" in result.dropped


def test_a_synthesis_asks_for_a_column_in_the_words_its_turn_used() -> None:
    from bddgen.implement.checks import dropped_relations

    part = ("What is the change fee in euros for the Standard fare class?", "change_fee_eur", "Standard")
    assert dropped_relations("To sum up, what is the change fee in euros for the Standard fare class, and who flies on XV104?", [part]) == []
    assert dropped_relations("To sum up, what is the fee for the Standard fare class?", [part])  # "change" is left out
    league = ("How many league meetings have they had?", "league_meetings", "")
    assert dropped_relations("How many league titles have they won?", [league])
    artist = ("What is the artist ID of the artist named AC/DC?", "ArtistId", "AC/DC")  # a column named in camel case, asked in words
    assert dropped_relations("To sum up, what is the artist ID of the artist named AC/DC?", [artist]) == []
    assert dropped_relations("To sum up, what is the name of the artist AC/DC?", [artist])


def test_a_synthesis_that_leaves_out_a_name_a_combined_turn_named_is_rewritten() -> None:
    faithful, _ = _write({})
    table = faithful.records[0].evidence
    assert isinstance(table, TableEvidence)
    names = [v for v in table.filter.values() if v.strip()]

    def nameless(request: LMRequest) -> Any:
        reply = write_turn(request)
        if "## What To Ask" in request.messages[-1].content and "Ask one question that asks again" in request.messages[-1].content:
            question = reply["question"]
            for name in names:
                question = question.replace(name, "them")
            return {**reply, "question": question}
        return reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, write_turn, nameless], write_turn)})
    synthesis = result.records[-1]
    assert synthesis.query_type is Q.SYNTHESIS and synthesis.outcome == "kept" and synthesis.attempts == 2
    assert f'must name "{names[0]}" again, as turn 1 did' in synthesis.rewrites[0]
    assert all(name in synthesis.question for name in names)


def test_a_synthesis_worded_by_code_may_be_longer_than_an_lm_question() -> None:
    polite = ", if you would be so kind as to give a short and precise answer taken from the records that you keep, thank you very much indeed, my dear and very kind friend"

    def long_questions(request: LMRequest) -> Any:
        if section(request, "What To Ask").startswith("Ask one question"):
            return {"question": "player: Rasmus Kaldor; goals: 2", "answer": "x"}
        reply = write_turn(request)
        return {**reply, "question": reply["question"].rstrip("?") + polite + "?"} if reply["answer"] != CANNOT_ANSWER else reply

    result, _ = _write({"write_turn": long_questions})
    assert not result.dropped and result.records[-1].worded_by == "code"
    assert len(result.turns[-1].question) > 240


def test_a_question_naming_what_its_evidence_does_not_say_is_rewritten() -> None:
    from bddgen.implement.checks import unstated_names

    golden_boot = "year: 2004; player: Callum Rook; club: Harbour City FC; goals: 25; award: Velorian Golden Boot; Velorian Golden Boot winners"
    assert unstated_names("In which club did that player win the Velorian Player of the Year in 2004?", golden_boot)
    assert unstated_names("Which club did Callum Rook play for when he won the Velorian Golden Boot in 2004?", golden_boot) == []
    assert unstated_names("Harbour City FC won what in June 2004?", golden_boot) == []  # the first word and month names are no names
    assert unstated_names("What did I win with Korrin Sporting?", golden_boot) != []

    def other_award(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        if " -> " in section(request, "Evidence"):  # the table turn ("from club = … -> player = …")
            return {**reply, "question": reply["question"].rstrip("?") + " after the Hallam Medal?"}
        return reply

    result, _ = _write({"write_turn": _then_faithful([other_award], write_turn)})
    first = result.records[0]
    assert first.outcome == "kept" and any("Hallam Medal" in r for r in first.rewrites)
    assert "Hallam Medal" not in result.turns[0].question


def test_an_entitys_kind_is_read_in_the_columns_and_sentences_that_hold_it() -> None:
    from bddgen.implement.unanswerable import entity_kind
    from bddgen.ner.entity import Entity

    class ReadsClubsAsPeople:
        """Labels a club a person when its name stands alone (and "Orlanmouth Wanderers" a person anywhere),
        as small NER models do."""

        name = "reads-clubs-as-people"

        def extract(self, text: str) -> list[Entity]:
            found = []
            for club in ("Orlanmouth Wanderers", "Ashvale Rangers"):
                if club in text:
                    start = text.index(club)
                    label = "ORG" if text != club and club == "Ashvale Rangers" else "PERSON"
                    found.append(Entity(club, label, start, start + len(club)))
            return found

        def extract_many(self, texts: list[str]) -> list[list[Entity]]:
            return [self.extract(t) for t in texts]

    club = TextDocument(id="d2", title="Ashvale Rangers", passage="Ashvale Rangers won the Varen Cup six times. They play at Seagate Park.")
    texts = DocumentTexts(Corpus(system=CORPUS.system, documents=[*CORPUS.documents, club]).by_id())
    recognizer = ReadsClubsAsPeople()
    assert entity_kind("Ashvale Rangers", recognizer) == "person"
    assert entity_kind("Ashvale Rangers", recognizer, texts) == "organisation"  # read in its sentence
    assert entity_kind("Orlanmouth Wanderers", recognizer) == "person"
    assert entity_kind("Orlanmouth Wanderers", recognizer, texts) == "organisation"  # a cell of the from_club column


def test_a_name_column_says_its_rows_kind() -> None:
    """A last name in an Employee table is a person's (asked a salary, not a launch date); a media type's name
    is no person, place or organisation."""
    from bddgen.implement.unanswerable import entity_kind

    employees = TableDocument(id="t-emp", title="Employee", headers=["EmployeeId", "LastName", "Title"], rows=[["1", "Edwards", "Sales Manager"]])
    media = TableDocument(id="t-media", title="MediaType", headers=["MediaTypeId", "Name"], rows=[["2", "Protected AAC audio file"]])
    texts = DocumentTexts({d.id: d for d in (employees, media)})
    assert entity_kind("Edwards", RegexRecognizer(), texts) == "person"
    assert entity_kind("Sales Manager", RegexRecognizer(), texts) != "person"  # a title column says nothing of its rows
    assert entity_kind("Protected AAC audio file", RegexRecognizer(), texts) == "other"
    invoices = TableDocument(id="t-inv", title="Invoice", headers=["InvoiceId", "BillingCity", "Airport"], rows=[["7", "Cupertino", "SJC"]])
    texts = DocumentTexts({invoices.id: invoices})
    assert entity_kind("Cupertino", RegexRecognizer(), texts) == "region"  # a city is asked its time zone, not its opening hours
    assert entity_kind("SJC", RegexRecognizer(), texts) == "place"


def test_a_fact_inside_a_longer_name_of_its_sentence_is_never_asked_for() -> None:
    club = TextDocument(id="d3", title="Ashvale Rangers", passage="Ashvale Rangers play their home games in Ashvale, a market town. The club was founded in 1902 by miners.")
    bridged = list(sentence_candidates(club, set(), RegexRecognizer(), must="Ashvale", answer_is_must=True))
    assert bridged == []  # "Where do Ashvale Rangers play?" would give "Ashvale" away
    facts = [c.answer for c in sentence_candidates(club, set(), RegexRecognizer())]
    assert "Ashvale" not in facts and "1902" in facts


def test_a_question_that_asks_for_another_fact_of_its_sentence_keeps_that_fact() -> None:
    club = TextDocument(id="d4", title="Orlanmouth Wanderers", passage="Orlanmouth Wanderers, founded in 1899, is one of the oldest clubs in Veloria.")
    corpus = Corpus(system=CORPUS.system, documents=[TRANSFERS, club])
    plan = PLAN.model_copy(update={
        "chain": Chain(documents=["t1", "d4"], hops=[]),
        "turns": [t.model_copy(update={"documents": ["d4"] if t.documents == ["d1"] else ["t1", "d4"] if len(t.documents) == 2 else t.documents}) for t in PLAN.turns],
    })

    def founded(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        return {"question": "When was Orlanmouth Wanderers founded?", "answer": "Veloria"} if "founded in 1899" in request.messages[-1].content else reply

    def from_documents(answer: str) -> Any:
        def reply(request: LMRequest) -> dict[str, Any]:
            return {"answer": answer} if section(request, "Question") == "When was Orlanmouth Wanderers founded?" else answer_from_documents(request)
        return reply

    writer, backend = _writer({"write_turn": founded, "answer_from_documents": from_documents("It was founded in 1899.")}, corpus=corpus)
    result = ConversationWriter(writer.context, plan).write()
    record = result.records[1]
    assert record.outcome == "kept" and record.evidence is not None and record.evidence.kind == "sentence"
    assert record.asked_instead_of == "Veloria" and record.evidence.answer == record.value == "1899"
    assert result.turns[1].answer == "1899" and record.attempts == 1 and not record.rewrites
    # a reply that states no other fact of the sentence is a failed round trip, rewritten as before
    writer, _ = _writer({"write_turn": founded, "answer_from_documents": from_documents("In 1903.")}, corpus=corpus)
    result = ConversationWriter(writer.context, plan).write()
    assert result.records[1].asked_instead_of == "" and result.records[1].rewrites and "1903" in result.records[1].rewrites[0]


def test_a_question_that_states_no_relation_of_its_sentence_never_takes_another_fact() -> None:
    from bddgen.implement.checks import shared_relation

    derby = "Seagate Park hosts the Coast Derby between Orlanmouth Wanderers and Saltmere Albion."
    assert not shared_relation("Where is Orlanmouth Wanderers located?", derby, RegexRecognizer())
    assert shared_relation("Which ground hosts the Coast Derby?", derby, RegexRecognizer())
    assert shared_relation("When was Orlanmouth Wanderers founded?", "Orlanmouth Wanderers, founded in 1899, is old.", RegexRecognizer()) == {"found"}


def test_any_question_may_name_the_assistant_itself() -> None:
    def branded(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        if " -> " in section(request, "Evidence"):  # the table turn ("from club = … -> player = …")
            return {**reply, "question": reply["question"].rstrip("?") + ", says Velorian Football Desk?"}
        return reply


    writer, _ = _writer({"write_turn": branded})
    record = ConversationWriter(replace(writer.context, system_name="Velorian Football Desk"), PLAN).write().records[0]
    assert record.outcome == "kept" and record.attempts == 1 and "Velorian Football Desk" in record.question
    writer, _ = _writer({"write_turn": _then_faithful([branded], write_turn)})
    assert any("Velorian Football Desk" in r for r in writer.write().records[0].rewrites)  # a name no evidence says


def test_a_question_that_asks_for_the_noun_its_answer_completes_is_rewritten() -> None:
    from bddgen.implement.questions import asks_for_its_governor

    parser = ParsingRecognizer.parser
    sentence = "The Crown Shield is the league cup of Veloria, a knockout competition first played in 1985."
    assert asks_for_its_governor("What is the name of the league cup that Crown Shield is?", sentence, "Veloria", parser) == "cup of"
    assert asks_for_its_governor("Which league cup is the Crown Shield?", sentence, "Veloria", parser) == "cup of"
    assert asks_for_its_governor("Which country is the Crown Shield the league cup of?", sentence, "Veloria", parser) is None
    assert asks_for_its_governor("The Crown Shield is the league cup of which country?", sentence, "Veloria", parser) is None
    assert asks_for_its_governor("When was the Crown Shield first played?", sentence, "1985", parser) is None

    cup = TextDocument(id="d5", title="Crown Shield", passage=sentence)
    corpus = Corpus(system=CORPUS.system, documents=[TRANSFERS, cup])
    plan = PLAN.model_copy(update={
        "chain": Chain(documents=["t1", "d5"], hops=[]),
        "turns": [t.model_copy(update={"documents": ["d5"] if t.documents == ["d1"] else ["t1", "d5"] if len(t.documents) == 2 else t.documents}) for t in PLAN.turns],
    })

    def muddled(request: LMRequest) -> dict[str, Any]:
        if 'with "Veloria"' in request.messages[-1].content:
            return {"question": "What is the name of the league cup that Crown Shield is?", "answer": "Veloria"}
        return write_turn(request)

    writer, _ = _writer({"write_turn": _then_faithful([write_turn, muddled], write_turn)}, corpus=corpus, recognizer=ParsingRecognizer())
    record = ConversationWriter(writer.context, plan).write().records[1]
    assert record.value == "Veloria" and "asks for the cup itself" in record.rewrites[0]
    assert record.question != "What is the name of the league cup that Crown Shield is?"


def test_a_piece_of_a_longer_name_or_what_a_number_counts_is_never_the_fact_a_turn_asks_for() -> None:
    from bddgen.implement.evidence import askable_facts

    marwood = "Elias Marwood won the Velorian Young Player of the Year award in 2014 and joined Redmarsh Rovers in 2017."
    kept = askable_facts(["the Velorian Young Player", "the Year award", "Redmarsh Rovers", "2014"], marwood, RegexRecognizer())
    assert kept == ["Redmarsh Rovers", "2014"]
    honours = "The club won five national championships, the last of them in 1990, and has six Varen Cups."
    assert askable_facts(["Varen Cups", "1990"], honours, RegexRecognizer()) == ["1990"]
    club = TextDocument(id="d9", title="Orlanmouth Wanderers", passage=honours)
    assert [e.answer for e in sentence_candidates(club, set(), RegexRecognizer())] == ["1990"]


def test_the_first_name_of_a_pair_is_one_of_several_but_a_side_of_a_match_between_two_is_not() -> None:
    parser = ParsingRecognizer.parser
    reserves = "Redmarsh Rovers have won the Crown Shield most often, while Harbour City FC and Calderford United have often fielded reserve players."
    assert one_of_several(reserves, "Harbour City FC", parser) and one_of_several(reserves, "Calderford United", parser)
    assert not one_of_several(reserves, "Redmarsh Rovers", parser)
    derby = "Seagate Park hosts the Coast Derby between Orlanmouth Wanderers and Saltmere Albion, with visiting fans arriving by ferry."
    assert not one_of_several(derby, "Orlanmouth Wanderers", parser) and not one_of_several(derby, "Saltmere Albion", parser)
    pets = "Aurelian Skyways does not carry pets on flights to or from Reykjavik (KEF) or Dubai (DXB)."
    assert one_of_several(pets, "Reykjavik", parser) and one_of_several(pets, "Dubai", parser)  # two places, no route
    regions = "Sales of $10.2 million in the OEM channel in the EMEA and APAC regions also contributed to the increase."
    assert one_of_several(regions, "APAC", parser) and one_of_several(regions, "EMEA", parser)


def test_a_pre_filler_never_asks_its_document_for_the_thing_its_title_names() -> None:
    shield = TextDocument(
        id="d2", title="Crown Shield",
        passage="Redmarsh Rovers have won the Crown Shield more often than any other club, with nine titles in all.",
    )
    assert list(sentence_candidates(shield, set(), RegexRecognizer(), must="the Crown Shield", answer_is_must=True)) == []
    assert [e.answer for e in sentence_candidates(shield, set(), RegexRecognizer(), must="Redmarsh Rovers", answer_is_must=True)] == ["Redmarsh Rovers"]


def test_the_plan_crosses_a_hop_by_a_bridge_the_source_title_does_not_name() -> None:
    from bddgen.implement.chains import Hop
    from bddgen.implement.graph import Bridge
    from bddgen.implement.plan import plan_turns

    bridges = [
        Bridge(kind="entity", value="the Crown Shield", label="EVENT", specificity=0.4),
        Bridge(kind="entity", value="Greyhollow Bowl", label="FAC", specificity=0.3),
    ]
    chain = Chain(documents=["shield", "greyhollow"], hops=[Hop(source="shield", target="greyhollow", bridges=bridges)])
    planned = plan_turns(chain, 5, set(), {"shield": "Crown Shield", "greyhollow": "Greyhollow City"}, lambda name: "place")
    assert [t.bridge for t in planned.turns if t.query_type is Q.PRE_FILLER] == ["Greyhollow Bowl"]
    # the other way round, the most specific bridge is askable of its source
    reverse = Chain(documents=["greyhollow", "shield"], hops=[Hop(source="greyhollow", target="shield", bridges=bridges)])
    planned = plan_turns(reverse, 5, set(), {"shield": "Crown Shield", "greyhollow": "Greyhollow City"}, lambda name: "other")
    assert [t.bridge for t in planned.turns if t.query_type is Q.PRE_FILLER] == ["the Crown Shield"]


def test_a_filler_refers_to_a_bridge_by_the_kind_the_corpus_gives_it() -> None:
    from bddgen.implement.chains import Hop
    from bddgen.implement.graph import Bridge
    from bddgen.implement.plan import plan_turns

    # one sentence made the recogniser call the coach a place; the corpus says he is a person
    varley = [Bridge(kind="entity", value="Piet Varley", label="GPE", specificity=0.5)]
    chain = Chain(documents=["club", "ground"], hops=[Hop(source="club", target="ground", bridges=varley)])
    titles = {"club": "Orlanmouth Wanderers", "ground": "Seagate Park"}
    filler = next(t for t in plan_turns(chain, 5, set(), titles, lambda name: "person").turns if t.query_type is Q.FILLER)
    assert filler.proxy == "that person"
    filler = next(t for t in plan_turns(chain, 5, set(), titles, lambda name: "other").turns if t.query_type is Q.FILLER)
    assert filler.proxy == "that place"


def test_a_round_trip_that_pastes_the_sentence_back_does_not_confirm_a_text_turn() -> None:
    def pasted(request: LMRequest) -> dict[str, Any]:
        shown = section(request, "Documents")
        best = next((line for line in shown.splitlines() if "Varen Cup Final" in line and not line.startswith("[")), "")
        return {"answer": best} if best else answer_from_documents(request)

    result, _ = _write({"answer_from_documents": pasted})
    text = result.records[1]
    # every wording about the Kaldor sentence failed its round trip; the turn moved on to the next sentence
    assert len(text.rewrites) == 3 and all("answering your question" in r for r in text.rewrites)
    assert text.evidence is not None and text.evidence.kind == "sentence" and text.evidence.sentence == 1
    result, _ = _write({})
    assert result.records[1].outcome == "kept" and result.records[1].rewrites == []


def test_a_possessive_cut_short_is_no_well_formed_question() -> None:
    """Sports: "What was that club' points in the 2017 Velorian Premier Division final table?" was kept."""
    from bddgen.implement.checks import form_problems

    assert any("club's" in p for p in form_problems("What was that club' points in the 2017 final table?"))
    assert form_problems("What was that club's points in 2017?") == []
    assert form_problems("How many goals did the Rovers' striker score?") == []  # a plural's possessive
    assert form_problems("Which club is called 'Big Red' by its fans?") == []  # a quotation


def test_a_where_or_who_question_answered_by_a_bare_number_is_rewritten() -> None:
    from bddgen.implement.checks import answer_kind_problems

    assert answer_kind_problems("Where did that person coach the club?", "1995")
    assert answer_kind_problems("Who was the top scorer?", "19")
    assert not answer_kind_problems("When did that person coach the club?", "1995")
    assert not answer_kind_problems("Where was the final played?", "Crownfield Stadium")
    # a number of other units than the question asks for (seen on the airline policy: "24" of "within 24 hours")
    rule = "Bookings can be cancelled free of charge within 24 hours of purchase if the flight departs at least 7 days later."
    assert answer_kind_problems("How many days after purchase can a booking be cancelled for free?", "24", rule)
    assert not answer_kind_problems("How many hours after purchase can a booking be cancelled for free?", "24", rule)
    assert not answer_kind_problems("How many days later must the flight depart?", "7", rule)
    assert answer_kind_problems("How many minutes is the walk?", "20 hours")
    assert not answer_kind_problems("How many goals did he score?", "19", "He scored 19 goals in 124 matches.")
    assert not answer_kind_problems("How many days did it take?", "4", "It took 124 hours over 4 days.")
    # a fee asked, no amount answered (seen on the airline: "What are the pet policy's fees?" -> a sentence on refunds)
    refunds = "Pet fees are refunded only if the airline cancels the flight; they are not refunded when the passenger cancels."
    assert answer_kind_problems("What are the pet policy's fees?", refunds, refunds)
    assert not answer_kind_problems("What are the pet policy's fees?", "55 EUR per pet per flight")
    assert not answer_kind_problems("What does the change fee cost on a Flex ticket?", "It is free of charge")
    assert not answer_kind_problems("What does the fee policy say about refunds?", refunds)
    assert not answer_kind_problems("What is the Fixed Price segment?", "contracts sold at an agreed sum")  # a line item's name
    assert not answer_kind_problems("What are the ticket prices of Ashvale Rangers?", CANNOT_ANSWER)  # an unanswerable turn
    # "how long" of a delay or a wait is a duration (seen on the airline: "How long was my flight delayed?" -> "Up to 1,500 km")
    assert answer_kind_problems("How long was my flight delayed or cancelled?", "Up to 1,500 km")
    assert answer_kind_problems("How long did the delay last?", "The airline pays 250 EUR")
    assert not answer_kind_problems("How long was my flight delayed?", "3 hours")
    assert not answer_kind_problems("How long before departure must I check in?", "60 minutes")
    assert not answer_kind_problems("How long is the runway?", "3,200 m")  # a length asked
    # a statement asked, a name answered (seen on TAT-QA: "What does the document state about Report 04 notes: …?" -> "Group")
    assert answer_kind_problems("What does the document state about Report 04 notes: 24. Post employment benefits?", "Group")
    assert answer_kind_problems("What do the notes say about the change?", "Net debt")
    assert not answer_kind_problems("What does the document state about net debt?", "The components of net debt are disclosed in Note 24.")
    assert not answer_kind_problems("What does the notes say about this change?", CANNOT_ANSWER)
    # a year asked, an amount answered (seen on TAT-QA: "What years did Adjusted operating profit change from 2018 to 2019?")
    assert answer_kind_problems("What years did Adjusted operating profit change from 2018 to 2019?", "15.8 million USD")
    assert not answer_kind_problems("In what year was the club founded?", "1905")
    assert not answer_kind_problems("Which years does the change cover?", "From 2018 to 2019")


def test_a_question_on_an_encyclopedic_text_must_name_its_subject_not_only_say_the_club() -> None:
    greyhollow = TextDocument(
        id="d7", title="Greyhollow City",
        passage="Greyhollow City is a club from the hill city of Greyhollow. The club won its only league championship in 1971, and later lost two cup finals.",
    )
    corpus = Corpus(system=CORPUS.system, documents=[TRANSFERS, greyhollow])
    plan = TurnPlan(
        chain=Chain(documents=["t1", "d7"], hops=[]),
        turns=[
            PlannedTurn(query_type=Q.SINGLE_DOC, documents=["t1"]),
            PlannedTurn(query_type=Q.SINGLE_DOC, documents=["d7"]),
            PlannedTurn(query_type=Q.UNANSWERABLE, subject="Rasmus Kaldor"),
            PlannedTurn(query_type=Q.SYNTHESIS, documents=["t1", "d7"]),
        ],
    )

    def vague(request: LMRequest) -> dict[str, Any]:
        if 'answers with "1971"' in section(request, "What To Ask"):
            return {"question": "When did the club win its only league championship?", "answer": "1971"}
        return write_turn(request)

    writer, _ = _writer({"write_turn": _then_faithful([write_turn, vague], write_turn)}, corpus=corpus)
    record = ConversationWriter(writer.context, plan).write().records[1]
    assert 'must name "Greyhollow City"' in record.rewrites[0]


def test_unanswerable_turns_ask_what_users_ask_first_and_a_project_can_name_its_own() -> None:
    from bddgen.implement.unanswerable import VOCABULARY

    texts, index = DocumentTexts(CORPUS.by_id()), MemoryIndex(HashingEmbedder(), CORPUS)
    asked, fallback = VOCABULARY["organisation"]
    first = [s.attribute for s in absent_subjects("Brennick Town", texts, index, kind="organisation", start=3)]
    assert first[: len(asked)] == [*asked[3:], *asked[:3]] and first[len(asked):] == list(fallback)
    assert "mascot" not in asked and "wifi password" not in asked  # no question a user of the assistant asks
    own = [s.attribute for s in absent_subjects("Brennick Town", texts, index, kind="organisation", vocabulary={"organisation": ["youth academy"]})]
    assert own == ["youth academy"]


def test_a_table_turn_asks_for_a_column_as_people_say_it() -> None:
    tracks = TableDocument(id="t1", title="Track", headers=["TrackId", "Name", "UnitPrice"],
                           rows=[["1", "For Those About To Rock", "0.99"], ["2", "Balls to the Wall", "1.99"]])
    corpus = Corpus(system=CORPUS.system, documents=[tracks, FINAL])
    _, backend = _write({}, corpus=corpus)
    asked = [r.messages[-1].content for r in backend.requests if r.task == "write_turn"][0]
    assert "unit price" in asked and "UnitPrice" not in asked.split("## Evidence")[0]


def test_a_round_trip_states_a_negative_value_negative_or_as_a_fall() -> None:
    from bddgen.implement.checks import agrees
    from bddgen.implement.grounding import Facts

    none = Facts(entities=(), numbers=())  # a table turn's reference is its exact value

    assert agrees(none, "-94", "The change was -94 million EUR.")
    assert agrees(none, "-94", "Capital additions decreased by 94 million.")
    assert not agrees(none, "-94", "The change was 94 million.")  # the sign lost
    assert agrees(none, "94", "The change was 94 million.")


def test_the_assistants_own_name_is_never_the_answer_a_turn_asks_for() -> None:
    """'Who carries cats in the cabin?' -> the airline the user is talking to: a question nobody asks of it."""

    from bddgen.models import PolicyDocument

    pets = PolicyDocument(id="p1", title="Travelling with pets",
                          passage="Aurelian Skyways carries cats and dogs in the cabin on flights of up to 3,500 km. The fee is 55 EUR per pet per flight.")
    corpus = Corpus(system=SystemDescription(name="Aurelian Skyways assistant", purpose="Answers passengers."), documents=[pets])
    plan = TurnPlan(chain=Chain(documents=["p1"], hops=[]), turns=[PlannedTurn(query_type=Q.SINGLE_DOC, documents=["p1"])])
    writer, _ = _writer({}, corpus=corpus)
    branded = ConversationWriter(replace(writer.context, system_name="Aurelian Skyways assistant"), plan)
    asked = [e.answer for e in branded.kinds.candidates(plan.turns[0], Q.SINGLE_DOC)]
    assert asked and all("Aurelian" not in a for a in asked), asked
    unbranded = ConversationWriter(replace(writer.context, system_name=""), plan)
    assert any("Aurelian" in e.answer for e in unbranded.kinds.candidates(plan.turns[0], Q.SINGLE_DOC))  # the rule, not the sentence, removed it
    # nor the thing an UNANSWERABLE turn asks about ("What is the salary of Aurelian Skyways?")
    asked_about, _ = branded.conversation.asked_about(PlannedTurn(query_type=Q.UNANSWERABLE, subject="Aurelian Skyways"))
    assert "Aurelian" not in asked_about


def test_an_unanswerable_turn_never_asks_about_a_tables_title() -> None:
    """Chinook's "When was the launch date of Track?": a conversation that names nothing but its tables or policies asks no
    such turn."""
    tracks = TableDocument(id="t-track", title="Track", headers=["TrackId", "Milliseconds"], rows=[["1", "343719"], ["2", "342562"]])
    corpus = Corpus(system=CORPUS.system, documents=[tracks])
    plan = TurnPlan(chain=Chain(documents=[tracks.id], hops=[]), turns=[PlannedTurn(query_type=Q.UNANSWERABLE, documents=[tracks.id])])
    writer, _ = _writer({}, corpus=corpus)
    tables_only = ConversationWriter(writer.context, plan)
    assert tables_only.conversation.asked_about(plan.turns[0]) == ("", "other")
    assert not list(tables_only.kinds.candidates(plan.turns[0], Q.UNANSWERABLE))
    # nor a policy's title (the airline's "What is the launch date of Baggage Allowance?")
    from bddgen.models import PolicyDocument

    baggage = PolicyDocument(id="p-bags", title="Baggage Allowance", passage="Each ticket includes one cabin bag of up to 8 kg.")
    corpus = Corpus(system=CORPUS.system, documents=[baggage])
    plan = TurnPlan(chain=Chain(documents=[baggage.id], hops=[]), turns=[PlannedTurn(query_type=Q.UNANSWERABLE, documents=[baggage.id])])
    writer, _ = _writer({}, corpus=corpus)
    assert ConversationWriter(writer.context, plan).conversation.asked_about(plan.turns[0]) == ("", "other")


def test_a_question_may_name_a_long_title_by_its_source() -> None:
    from bddgen.implement.checks import title_names, unnamed_subject

    title = "Report 25 notes: 16. Restructuring and other exit costs, net"
    assert title_names(title) == [title, "Report 25 notes", "Report 25"]
    assert unnamed_subject("Who approved the restructuring plan in Report 25?", title_names(title)) == []
    # a heading alone ("Net sales") is in many reports: the question would have many answers
    assert unnamed_subject("What did the restructuring and other exit costs, net include?", title_names(title))
    assert unnamed_subject("Who approved the plan?", title_names(title))  # names nothing it is about
    assert title_names("Korrin Sporting") == ["Korrin Sporting"] and title_names("2023 Varen Cup Final") == ["2023 Varen Cup Final"]
    assert "The" not in title_names("The following table shows: a. Totals")  # a lone capitalised word is no name


def test_a_question_worded_by_code_on_a_report_names_its_source() -> None:
    """'Who approved the plan?' has one answer per report in a corpus of many: code asks it in the report named."""

    from bddgen.implement.evidence import SentenceEvidence

    note = TextDocument(id="r25", title="Report 25 notes: 16. Restructuring and other exit costs, net",
                        passage="The restructuring plan was approved by the Board of Directors in March 2019.")
    club = TextDocument(id="k", title="Korrin Sporting", passage="The club was founded in 1931 by a local athletics society.")
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="Answers questions on reports."), documents=[note, club])
    writer, _ = _writer({}, corpus=corpus)
    writer = ConversationWriter(replace(writer.context, documents=corpus.by_id()), PLAN)
    on_note = SentenceEvidence(document="r25", sentence=0, text=note.passage, answer="the Board of Directors")
    assert writer.kinds.sentence.with_source("Who approved the restructuring plan?", on_note) == "In Report 25, who approved the restructuring plan?"
    assert writer.kinds.sentence.with_source("Who approved the plan in Report 25?", on_note) == "Who approved the plan in Report 25?"  # named already
    on_club = SentenceEvidence(document="k", sentence=0, text=club.passage, answer="1931")
    assert writer.kinds.sentence.with_source("When was the club founded?", on_club) == "When was the club founded?"  # a title without a source


def test_a_table_question_worded_by_code_names_the_row_entity_and_a_key_by_what_it_identifies() -> None:
    from bddgen.implement.kinds.table import row_question

    track = TableEvidence(table="tables/track", row=168, column="Composer", filter={"Name": "Body Count"}, value="Ice-T")
    assert row_question("track", track, "") == "What is the composer of Body Count?"  # a row its name picks is that thing
    customer = TableEvidence(
        table="tables/customer", row=1, column="Address", filter={"Country": "Germany", "FirstName": "Leonie", "LastName": "Köhler"},
        referred="Country", value="Theodor-Heuss-Straße 34",
    )
    # the address is the customer's, not the country's; a first and a last name are one person's name
    assert row_question("customer", customer, "that country") == "For that country, what is the address of Leonie Köhler?"
    lives = TableEvidence(table="tables/customer", row=1, column="Phone", filter={"Address": "1 Infinite Loop"}, referred="Address", value="+1 (408) 996-1010")
    # an address has no phone: the customer with that address has
    assert row_question("customer", lives, "that address") == "What is the phone of the customer with that address?"
    who = lives.model_copy(update={"column": "FirstName", "value": "Tim"})
    assert row_question("customer", who, "that address") == "Which customer has that address?"
    standing = TableEvidence(table="tables/standings", row=15, column="club", filter={"position": "16"}, value="Ashvale Rangers")
    assert row_question("club", standing, "") == "Which club has position 16?"  # the row's own name, asked as which one
    fare = TableEvidence(table="tables/fares", row=0, column="checked_bags", filter={"fare_class": "Saver"}, referred="fare_class", value="1")
    assert row_question("fare class", fare, "that fare class") == "What is the checked bags of that fare class?"
    rental = TableEvidence(table="tables/cars", row=12, column="company", filter={"city": "Amsterdam", "rental_id": "CR013"}, referred="city", value="Compass")
    assert row_question("car rental offer", rental, "that city") == "For that city, what is the company of car rental offer CR013?"
    airport = TableEvidence(table="tables/airports", row=6, column="city", filter={"iata_code": "AMS"}, value="Amsterdam")
    assert row_question("airport", airport, "") == "What is the city of the airport with iata code AMS?"
    final = TableEvidence(table="tables/finals", row=4, column="winner", filter={"year": "1995"}, value="Orlanmouth Wanderers")
    assert row_question("Varen Cup final", final, "") == "What is the winner of the 1995 Varen Cup final?"  # a row a year picks
    honours = TableEvidence(table="tables/honours", row=0, column="league_titles", filter={"club": "Harbour City FC"}, value="4")
    assert row_question("club honour", honours, "") == "What is the league titles of Harbour City FC?"  # the row a name picks is that thing


def test_a_filler_across_a_key_column_refers_to_the_thing_the_key_identifies() -> None:
    from bddgen.implement.chains import Hop
    from bddgen.implement.graph import Bridge
    from bddgen.implement.plan import plan_turns

    key = [Bridge(kind="field", value="MediaTypeId", columns={"media": "MediaTypeId", "track": "MediaTypeId"}, examples=["1"], specificity=0.5)]
    chain = Chain(documents=["media", "track"], hops=[Hop(source="media", target="track", bridges=key)])
    filler = next(t for t in plan_turns(chain, 5, set(), {"media": "MediaType", "track": "Track"}, lambda name: "other").turns if t.query_type is Q.FILLER)
    assert filler.proxy == "that media type"  # not "that mediatypeid"


def test_a_question_may_call_a_texts_subject_what_its_first_sentence_calls_it() -> None:
    from bddgen.implement.evidence import SentenceEvidence

    shield = TextDocument(
        id="d2", title="Crown Shield",
        passage="The Crown Shield is the league cup of Veloria, a knockout competition first played in 1985. "
        "Redmarsh Rovers have won the Crown Shield nine times, more often than any other club.",
    )
    corpus = Corpus(system=CORPUS.system, documents=[TRANSFERS, shield])
    writer, _ = _writer({}, corpus=corpus, recognizer=ParsingRecognizer())
    evidence = SentenceEvidence(document="d2", sentence=1, text=sentences(shield.passage)[1], answer="Redmarsh Rovers")
    planned = PlannedTurn(query_type=Q.SINGLE_DOC, documents=["d2"])

    def question_check(question: str) -> list[str]:
        draft = writer.kinds.sentence.check(planned, Q.SINGLE_DOC, evidence, question, "Redmarsh Rovers", False)
        return [p for p in draft.problems if "names" in p]

    assert question_check("Which club has won the league cup of Veloria most often?") == []


def test_a_synthesis_names_a_number_bridged_by_its_proxys_noun() -> None:
    from bddgen.implement.kinds import Kept, standalone

    filler = Turn(question="For that media type, what is the name of the track with ID 61?", answer="I Know Somethin", query_type=Q.FILLER, doc_ids=["t"])
    kept = Kept(turn=filler, record=None, facts=None, refers=("that media type", "1"))  # type: ignore[arg-type]
    assert standalone(kept) == "For media type 1, what is the name of the track with ID 61?"
    named = Kept(turn=Turn(question="How many points did that club get?", answer="71", query_type=Q.FILLER, doc_ids=["t"]),
                  record=None, facts=None, refers=("that club", "Ashvale Rangers"))  # type: ignore[arg-type]
    assert standalone(named) == "How many points did Ashvale Rangers get?"


def test_a_question_naming_another_line_item_is_no_repeat_but_the_same_question_reworded_is() -> None:
    from bddgen.implement.checks import repeats_problems

    earlier = ["In Report 19, what was the change in APAC net sales from 2017 to 2018?"]
    assert repeats_problems("In Report 19, what was the change in EMEA net sales from 2017 to 2018?", earlier) == []
    assert repeats_problems("In Report 19, what was the change of APAC net sales from 2017 to 2018?", earlier) != []


def test_an_unanswerable_turn_never_asks_for_what_a_camel_case_column_holds() -> None:
    tracks = TableDocument(
        id="tables/track", title="Track", headers=["TrackId", "Name", "UnitPrice"], rows=[["1", "Medo De Escuro", "0.99"], ["2", "Balls", "0.99"]]
    )
    corpus = Corpus(system=SystemDescription(name="Shop", purpose="Answers questions on tracks."), documents=[tracks])
    asked = [s.attribute for s in absent_subjects("Medo De Escuro", DocumentTexts(corpus.by_id()), MemoryIndex(HashingEmbedder(), corpus), kind="other")]
    assert asked and "price" not in asked  # "UnitPrice" is a price the table gives


def test_a_synthesis_reference_is_its_parts_answers_joined_not_the_lms_sentence_relating_them() -> None:
    def relating(request: LMRequest) -> Any:
        reply = write_turn(request)
        if section(request, "What To Ask").startswith("Ask one question"):
            # states every part's answer, and a relation between them no document gives
            return {**reply, "answer": "It happened because of " + str(reply["answer"]).replace("; ", ", which caused ") + "."}
        return reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, write_turn, relating], write_turn)})
    synthesis = result.turns[-1]
    assert result.records[-1].query_type is Q.SYNTHESIS and result.records[-1].outcome == "kept"
    combined = [result.turns[p - 1] for p in result.records[-1].evidence.turns]  # type: ignore[union-attr]
    assert synthesis.answer == "; ".join(t.answer.rstrip(". ") for t in combined)
    assert "caused" not in synthesis.answer


def test_a_synthesis_that_is_an_earlier_question_word_for_word_is_rewritten() -> None:
    plain, _ = _write({})
    earlier = plain.turns[1].question

    def repeating(request: LMRequest) -> Any:
        reply = write_turn(request)
        return {**reply, "question": earlier} if section(request, "What To Ask").startswith("Ask one question") else reply

    result, _ = _write({"write_turn": _then_faithful([write_turn, write_turn, write_turn, repeating], write_turn)})
    synthesis = result.records[-1]
    assert synthesis.query_type is Q.SYNTHESIS
    assert synthesis.rewrites and "an earlier one again" in synthesis.rewrites[0]
    assert result.turns[-1].question != earlier


def test_a_synthesis_the_lm_writes_as_two_questions_is_kept_as_one_in_its_words() -> None:
    """The 1.5B, asked to combine earlier questions, mostly writes them one after the other ("…? And …?"); joined, they
    are one question a person asks, in the LM's words, instead of a failed turn and the code's "To sum up, …"."""
    def two_questions(request: LMRequest) -> dict[str, Any]:
        reply = write_turn(request)
        if section(request, "What To Ask").startswith("Ask one question"):
            asked = [q.rstrip(" ?") for q in re.findall(r'"([^"]+)"', section(request, "What To Ask"))]
            reply = {**reply, "question": "? And ".join(asked) + "?"}
        return reply

    result, _ = _write({"write_turn": two_questions})
    synthesis = result.records[-1]
    assert synthesis.outcome == "kept" and synthesis.worded_by == "lm" and synthesis.attempts == 1, synthesis.rewrites
    assert synthesis.question.count("?") == 1 and ", and " in synthesis.question and not synthesis.question.startswith("To sum up")


def test_a_name_written_over_two_columns_is_one_the_row_states() -> None:
    """Chinook's "When was Michael Mitchell hired?" on Michael Mitchell's own row was refused ten times as naming what
    its evidence does not say: the row writes "Michael" and "Mitchell" in two columns."""
    staff = TableDocument(id="tables/staff", title="Employee", headers=["EmployeeId", "LastName", "FirstName", "HireDate"], key="EmployeeId",
                          rows=[["1", "Adams", "Andrew", "2002-08-14"], ["6", "Mitchell", "Michael", "2003-10-17"]])
    corpus = Corpus(system=CORPUS.system, documents=[staff])
    writer, _ = _writer({}, corpus=corpus)
    evidence = TableEvidence(table="tables/staff", row=1, column="HireDate", filter={"FirstName": "Michael", "LastName": "Mitchell"}, value="2003-10-17")
    planned = PlannedTurn(query_type=Q.SINGLE_DOC, documents=["tables/staff"])

    def unstated(question: str) -> list[str]:
        draft = writer.kinds.cell.check(planned, Q.SINGLE_DOC, evidence, question, "2003-10-17", False)
        return [p for p in draft.problems if "does not say" in p]

    assert unstated("When was Michael Mitchell hired?") == []
    assert unstated("When was Mitchell Michael hired?") == []
    assert unstated("When was Andrew Adams hired?") != []  # another row's name
