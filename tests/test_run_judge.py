"""The run judge: deterministic checks decide first, then a scripted model grades by the rubric method (PASS only at 5);
the claims method's grading is tested in test_judge_claims.py."""

from __future__ import annotations

from pathlib import Path

from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import Verdict
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.tasks import ABSTENTION_REFERENCE
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Spec, Turn


def _turn(answer: str, exact: str | None = None, query_type: QueryType = QueryType.SINGLE_DOC) -> Turn:
    expectation = ExactExpectation(table_id="tables/fare_classes", operation="lookup", value=exact) if exact else None
    return Turn(question="What is the change fee for Standard?", answer=answer, query_type=query_type, exact=expectation)


def _no_model() -> LanguageModel:
    raise AssertionError("the judge asked for a model although a deterministic check decides")


def _judge(grade: dict | str) -> tuple[Judge, ScriptedLM]:
    backend = ScriptedLM(by_task={"judge-turn": [grade], "judge-conversation": [grade]})
    return Judge(lambda: LanguageModel(backend, max_retries=0), method="rubric"), backend


def test_exact_value_decides_without_a_model() -> None:
    judge = Judge(_no_model)
    passed = judge.judge_turn(_turn("70 EUR", exact="70"), "It costs 70 EUR per direction.", [])
    failed = judge.judge_turn(_turn("70 EUR", exact="70"), "It costs 35 EUR.", [])
    assert (passed.verdict, passed.checks) == (Verdict.PASS, ("exact",))
    assert (failed.verdict, failed.checks) == (Verdict.FAIL, ("exact",))
    assert "70" in failed.feedback


def test_a_value_without_a_reference_answer_decides_alone_a_written_reference_still_counts() -> None:
    """A turn whose only answer step is `should contain "XV104"` is a containment check; a reference answer that is
    the value itself (`agree with "XV104"` beside it) still fails a denial of it."""
    judge = Judge(_no_model)
    alone = Turn(question="Which flight is booked?", answer="XV104", query_type=QueryType.SINGLE_DOC,
                 exact=ExactExpectation(table_id="", operation="lookup", value="XV104", alone=True))
    written = alone.model_copy(update={"exact": ExactExpectation(table_id="tables/bookings", operation="lookup", value="XV104")})
    for answer in ("Your flight is XV104.", "XV104 is false."):
        result = judge.judge_turn(alone, answer, [])
        assert (result.verdict, result.checks) == (Verdict.PASS, ("exact",))
    assert judge.judge_turn(alone, "Your flight is XV105.", []).verdict == Verdict.FAIL
    assert judge.judge_turn(written, "XV104 is false.", []).verdict == Verdict.FAIL


def test_abstention_detected_passes_without_a_model() -> None:
    result = Judge(_no_model).judge_turn(_turn(CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE), "I cannot answer that.", [])
    assert (result.verdict, result.checks) == (Verdict.PASS, ("abstention",))


def test_refusing_an_answerable_question_fails_as_retrieval() -> None:
    result = Judge(_no_model).judge_turn(_turn("70 EUR per direction"), "I don't have that information.", [])
    assert (result.verdict, result.error_category) == (Verdict.FAIL, "retrieval")


def test_missing_key_entity_fails_without_a_model() -> None:
    result = Judge(_no_model).judge_turn(_turn("70 EUR"), "The fee is 35 euro.", [])
    assert result.verdict == Verdict.FAIL
    assert "reference-parts" in result.checks


def test_a_model_score_of_five_passes_and_four_fails_with_its_category() -> None:
    judge, backend = _judge({"feedback": "Matches the reference.", "score": 5, "error_category": "none"})
    history = [Message("user", "Hello"), Message("assistant", "Hi")]
    passed = judge.judge_turn(_turn("Standard tickets can be changed for a fee of 70 EUR."), "A fee of 70 EUR applies.", history)
    assert (passed.verdict, passed.score, passed.error_category) == (Verdict.PASS, 5, "")
    prompt = backend.requests[0].messages[-1].content
    assert "## Reference Answer\nStandard tickets can be changed" in prompt
    assert "User: Hello" in prompt and "## Score Rubric" in prompt
    # what repeats from call to call comes first, so the prompt cache keeps it: the rubric, then the conversation
    assert prompt.startswith("## Score Rubric\n") and prompt.index("User: Hello") < prompt.index("## Reference Answer")

    judge, _ = _judge({"feedback": "Misses that a fare difference applies.", "score": 4, "error_category": "multi-document"})
    failed = judge.judge_turn(_turn("Standard tickets can be changed for a fee of 70 EUR."), "A fee of 70 EUR applies.", [])
    assert (failed.verdict, failed.score, failed.error_category) == (Verdict.FAIL, 4, "multi-document")


def test_an_answer_to_an_unanswerable_turn_is_graded_against_abstention() -> None:
    def grade(request: LMRequest) -> dict:
        assert ABSTENTION_REFERENCE in request.messages[-1].content
        return {"feedback": "It invents a name.", "score": 1, "error_category": "none"}

    judge, _ = _judge(grade)  # type: ignore[arg-type]
    unanswerable = _turn(CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE)
    result = judge.judge_turn(unanswerable, "The captain is probably the longest-serving player.", [])
    assert (result.verdict, result.score, result.checks) == (Verdict.FAIL, 1, ("abstention",))


def test_a_name_given_for_an_unanswerable_turn_fails_without_a_model() -> None:
    mascot = Turn(question="What is the mascot of Korrin Sporting?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE)
    history = [Message("user", "Who won the Crown Shield in 2019?"), Message("assistant", "Korrin Sporting.")]
    result = Judge(_no_model).judge_turn(mascot, "Korrin Sporting's mascot is Sparky the Lion.", history)
    assert (result.verdict, result.checks) == (Verdict.FAIL, ("abstention",))
    assert result.feedback.endswith("the assistant states Sparky, Lion")  # Korrin Sporting came from the question
    assert Judge(_no_model).judge_turn(mascot, "The documents do not mention a mascot.", history).verdict is Verdict.PASS


def test_a_figure_given_for_an_unanswerable_turn_fails_without_a_model() -> None:
    unanswerable = Turn(question="How many yellow cards did they get in 2023?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE)
    history = [Message("user", "Who won the 2023 league?"), Message("assistant", "Eastquay Olympic, with 72 points.")]
    result = Judge(_no_model).judge_turn(unanswerable, "They received 47 yellow cards in 72 matches.", history)
    assert (result.verdict, result.checks) == (Verdict.FAIL, ("abstention",))
    assert result.feedback.endswith("the assistant states 47")  # 2023 and 72 came from the conversation


def test_the_reference_answer_itself_passes_without_a_model() -> None:
    result = Judge(_no_model).judge_turn(_turn("Henrik Dahl."), "henrik  dahl", [])
    assert (result.verdict, result.checks) == (Verdict.PASS, ("abstention", "same-answer"))


def test_an_unusable_judge_reply_is_an_error_not_a_failure() -> None:
    judge, _ = _judge("this is not JSON")
    result = judge.judge_turn(_turn("Standard tickets can be changed for a fee of 70 EUR."), "70 EUR.", [])
    assert (result.verdict, result.error_category) == (Verdict.ERROR, "judge")


def test_conversation_is_graded_against_the_spec() -> None:
    spec = Spec.create("Fees", ["a passenger"], ["they ask about fees"], ["the assistant quotes the fee table"])
    judge, backend = _judge({"feedback": "Quotes the table.", "score": 5})
    result = judge.judge_conversation(spec, [("What is the fee?", "70 EUR."), ("And for Flex?", "No fee.")])
    assert (result.verdict, result.score) == (Verdict.PASS, 5)
    prompt = backend.requests[0].messages[-1].content
    assert "Then the assistant quotes the fee table" in prompt and "User: And for Flex?\nAssistant: No fee." in prompt
    assert prompt.startswith("## Score Rubric\n") and prompt.index("## Specification") < prompt.index("## Response")


def test_the_demo_synthesis_answer_passes_because_every_part_is_stated() -> None:
    """The demo's one wrong verdict: a right SYNTHESIS answer failed by the model."""
    synthesis = Turn(
        question="When was Orlanmouth Wanderers founded, and who coached them during the 1995 cup run?",
        answer="1899; Piet Varley",
        query_type=QueryType.SYNTHESIS,
    )
    answer = "Orlanmouth Wanderers was founded in 1899 and Piet Varley coached him during the 1995 cup run."
    result = Judge(_no_model).judge_turn(synthesis, answer, [])
    assert result.verdict is Verdict.PASS and result.checks[0] == "abstention"  # both parts stated (quoted, in fact)
    reordered = Judge(_no_model).judge_turn(synthesis, "Piet Varley coached them in the 1995 cup run; the club dates from 1899.", [])
    assert reordered.verdict is Verdict.PASS
    wrong = Judge(_no_model).judge_turn(synthesis, "It was founded in 1899 and Anton Brisk coached them.", [])
    assert wrong.verdict is Verdict.FAIL and "Piet Varley" in wrong.feedback


def test_numbers_compare_as_numbers_whatever_their_format_or_unit() -> None:
    judge = Judge(_no_model)
    spectators = Turn(question="How many spectators watched that final?", answer="61,811 spectators.", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(spectators, "About 61811 people watched it.", []).verdict is Verdict.PASS
    assert judge.judge_turn(spectators, "It drew 61,812 spectators.", []).verdict is Verdict.FAIL
    distance = Turn(question="How long is the route?", answer="5 km", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(distance, "The route is 5,000 metres long.", []).verdict is Verdict.PASS
    fee = Turn(question="What is the fee?", answer="€35", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(fee, "The fee is 35 euros.", []).verdict is Verdict.PASS
    minute = Turn(question="Who scored the winning goal?", answer="Elias Marwood, in the 117th minute.", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(minute, "Elias Marwood scored it in minute 117.", []).verdict is Verdict.PASS


def test_a_negated_or_extra_numbered_answer_goes_to_the_model() -> None:
    judge, backend = _judge({"feedback": "Contradicts the reference.", "score": 1, "error_category": "none"})
    founded = Turn(question="When was the club founded?", answer="1899", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(founded, "It was not founded in 1899.", []).verdict is Verdict.FAIL
    assert len(backend.requests) == 1


def test_the_judge_is_given_the_turn_it_grades_never_an_earlier_one() -> None:
    judge, backend = _judge({"feedback": "Right.", "score": 5, "error_category": "none"})
    history = [Message("user", "What is the official motto of Korrin Sporting?"), Message("assistant", "Ever forward.")]
    turn = Turn(question="Which season was it their tenth in the league?", answer="The 2009 season, the tenth season of the Korea National League, played by eight clubs.",
                query_type=QueryType.SINGLE_DOC)
    judge.judge_turn(turn, "It was the 2009 season, the tenth of the Korean National League for them.", history)
    prompt = backend.requests[0].messages[-1].content
    sections = {part.split("\n", 1)[0]: part.split("\n", 1)[1].strip() for part in prompt.split("## ")[1:]}
    assert sections["Question"] == turn.question
    assert sections["Reference Answer"] == turn.answer
    assert sections["Response"] == "It was the 2009 season, the tenth of the Korean National League for them."
    assert "motto" in sections["Earlier Conversation"] and "motto" not in prompt[prompt.index("## Question"):]
    assert "never an earlier turn" in backend.requests[0].messages[0].content


def test_tool_categories_only_for_an_assistant_with_tools() -> None:
    grade = {"feedback": "Used the wrong tool.", "score": 2, "error_category": "wrong tool or order"}
    long_reference = Turn(question="What does the fee cover?", answer="The fee covers a change of date and a change of route.",
                          query_type=QueryType.SINGLE_DOC)
    without = Judge(lambda: LanguageModel(ScriptedLM(by_task={"judge-turn": [grade] * 3}), max_retries=0), method="rubric")
    assert without.judge_turn(long_reference, "It covers seats.", []).error_category == ""  # dropped: the assistant has no tools
    backend = ScriptedLM(by_task={"judge-turn": [grade]})
    with_tools = Judge(lambda: LanguageModel(backend, max_retries=0), tools=True, method="rubric")
    assert with_tools.judge_turn(long_reference, "It covers seats.", []).error_category == "wrong tool or order"
    assert "wrong tool or order (it used" in backend.requests[0].messages[0].content
    no_tools = ScriptedLM(by_task={"judge-turn": [{"feedback": "Wrong.", "score": 2, "error_category": "retrieval"}]})
    Judge(lambda: LanguageModel(no_tools, max_retries=0), method="rubric").judge_turn(long_reference, "It covers seats.", [])
    assert "wrong tool or order (it used" not in no_tools.requests[0].messages[0].content


def test_a_conversation_that_never_touches_its_spec_fails_without_a_model() -> None:
    spec = Spec.create("Fees", ["a passenger"], ["they ask about change fees"], ["the assistant quotes the fee table"])
    result = Judge(_no_model).judge_conversation(spec, [("Who founded the club?", "Piet Varley.")], ["Piet Varley"])
    assert (result.verdict, result.checks) == (Verdict.FAIL, ("spec-coverage",))
    judge, backend = _judge({"feedback": "Meets the criteria.", "score": 5})
    assert judge.judge_conversation(spec, [("Who founded the club?", "Piet Varley.")], [""]).verdict is Verdict.PASS  # judged as a whole
    judge, backend = _judge({"feedback": "Quotes the fee.", "score": 5})
    judge.judge_conversation(spec, [("What is the change fee?", "70 EUR.")], ["70 EUR"])
    assert "User: What is the change fee?\nReference answer: 70 EUR\nAssistant: 70 EUR." in backend.requests[0].messages[-1].content


def test_an_answer_quoting_the_whole_reference_passes_unless_it_adds_a_claim() -> None:
    long_reference = Turn(question="What does the fee cover?", answer="The fee covers a change of date and a change of route.",
                          query_type=QueryType.SINGLE_DOC)
    quoted = Judge(_no_model).judge_turn(long_reference, "According to the documents, the fee covers a change of date and a change of route.", [])
    assert (quoted.verdict, quoted.checks) == (Verdict.PASS, ("abstention", "quotes-reference"))
    denied = Judge(_no_model).judge_turn(long_reference, "It is not true that the fee covers a change of date and a change of route.", [])
    assert (denied.verdict, denied.checks) == (Verdict.FAIL, ("abstention", "quotes-reference"))
    judge, backend = _judge({"feedback": "The price is not in the reference.", "score": 3, "error_category": "none"})
    priced = judge.judge_turn(long_reference, "The fee covers a change of date and a change of route, for 45 EUR.", [])
    assert priced.verdict is Verdict.FAIL and len(backend.requests) == 1  # a number the reference does not state


def test_on_an_exact_turn_the_value_does_not_excuse_another_name_or_a_denial() -> None:
    final = Turn(question="Who won the 2023 final?", answer="Harbour City FC, who beat Eastquay Olympic 3-2 after extra time.",
                 query_type=QueryType.SINGLE_DOC, exact=ExactExpectation(table_id="tables/finals", operation="lookup", value="3-2"))
    swapped = Judge(_no_model).judge_turn(final, "Redmarsh Rovers, who beat Eastquay Olympic 3-2 after extra time.", [])
    denied = Judge(_no_model).judge_turn(final, "It is not true that Harbour City FC, who beat Eastquay Olympic 3-2 after extra time, won.", [])
    assert [swapped.verdict, denied.verdict] == [Verdict.FAIL, Verdict.FAIL]
    assert swapped.checks == denied.checks == ("exact", "quotes-reference")


def test_true_detail_from_the_cited_document_is_no_added_claim(tmp_path: Path) -> None:
    from bddgen.corpus import load_corpus
    from bddgen.evaluation.judge import CitedPassages

    corpus = tmp_path / "corpus"
    (corpus / "text").mkdir(parents=True)
    (corpus / "system.yaml").write_text("name: Football desk\npurpose: Answers questions about football.\n", encoding="utf-8")
    (corpus / "text" / "season.md").write_text(
        "# 2023 season\n\nCoached by Soren Vey, Eastquay Olympic conceded only 20 goals, and goalkeeper Oskar Thale won the Velorian Golden Glove.\n",
        encoding="utf-8",
    )
    turn = Turn(question="Who won the Velorian Golden Glove in 2023?", answer="Oskar Thale", query_type=QueryType.SINGLE_DOC, doc_ids=["text/season"])
    detailed = "Oskar Thale. Eastquay Olympic conceded only 20 goals, and goalkeeper Oskar Thale won the Velorian Golden Glove."
    grounded = Judge(_no_model, cited=CitedPassages(lambda: load_corpus(corpus).documents)).judge_turn(turn, detailed, [])
    assert (grounded.verdict, grounded.checks) == (Verdict.PASS, ("abstention", "quotes-reference"))
    # a number the cited document does not state is still a claim for the model to grade
    judge, backend = _judge({"feedback": "Invents a number.", "score": 2, "error_category": "retrieval"})
    invented = Judge(judge._lm_provider, cited=CitedPassages(lambda: load_corpus(corpus).documents), method="rubric").judge_turn(turn, detailed.replace("20 goals", "12 goals"), [])
    assert invented.verdict == Verdict.FAIL and len(backend.requests) == 1
    # without the cited passages, the same true detail goes to the model
    judge, backend = _judge({"feedback": "Adds claims.", "score": 3, "error_category": "retrieval"})
    assert judge.judge_turn(turn, detailed, []).verdict == Verdict.FAIL and len(backend.requests) == 1


def test_a_number_with_thousands_separators_is_one_part_not_a_list() -> None:
    """'$34,105' is one amount: the judge never asks for '$34' and '105' apart."""
    from bddgen.evaluation.reference_match import reference_parts

    assert [p.text for p in reference_parts("$34,105", QueryType.SINGLE_DOC)] == ["$34,105"]
    assert [p.text for p in reference_parts("12, 15 and 18", QueryType.SINGLE_DOC)] == ["12", "15", "18"]
    turn = _turn("$34,105", exact="$34,105")
    for right in ("According to the documents, $34,105.", "34105.", "$34,105 (the row of the statutory federal income tax)."):
        assert Judge(_no_model).judge_turn(turn, right, []).verdict == Verdict.PASS, right
    assert Judge(_no_model).judge_turn(turn, "$34,015.", []).verdict == Verdict.FAIL


def test_a_number_without_a_scale_word_matches_it_with_one() -> None:
    """A table in thousands gives the reference '9,254'; '$9,254 thousand' states it. A changed number still fails."""
    turn = _turn("9,254", exact="9,254")
    assert Judge(_no_model).judge_turn(turn, "It is $9,254 thousand.", []).verdict == Verdict.PASS
    assert Judge(_no_model).judge_turn(turn, "They were $9,245 thousand.", []).verdict == Verdict.FAIL
    from bddgen.evaluation.quantities import quantities

    thousand, million = quantities("9,254 thousand")[0], quantities("9,254 million")[0]
    assert not thousand.matches(million)  # two scale words: two values
