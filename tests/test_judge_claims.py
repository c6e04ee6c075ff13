"""The judge's claims method ([run] judge_method = "claims"): the reference split into claims by code, one yes/no
question per required claim about the response, one about a contradiction; the deterministic checks stay in front."""

from __future__ import annotations

import pytest

from bddgen.config import RunSettings
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import Reply, ScriptedLM
from bddgen.results import JUDGE_ERROR, Verdict
from bddgen.evaluation.claims import Claim, said_by_code, split_claims
from bddgen.evaluation.judge import Judge, by_model, run_judge
from bddgen.evaluation.reference_match import DEFAULT_TOLERANCES
from bddgen.specs import CANNOT_ANSWER, QueryType, Turn

YES = {"quote": "it says so", "says": "yes"}
NO = {"quote": "", "says": "no"}
CLEAN = {"contradiction": "", "contradicts": "no"}
COACH = "Piet Varley coached the team during the 1995 cup run."
PASSAGE = "Piet Varley joined from Korrin Sporting in 1993 and coached the team during the 1995 cup run."


def _claims_judge(claim: Reply | list[Reply] = YES, contradiction: Reply | list[Reply] = CLEAN, retries: int = 0,
                  passage: str = "") -> tuple[Judge, ScriptedLM]:
    backend = ScriptedLM(by_task={"judge-claim": claim, "judge-contradiction": contradiction})
    judge = Judge(lambda: LanguageModel(backend, max_retries=retries), cited=lambda doc_id: passage, method="claims")
    return judge, backend


def _prompt(backend: ScriptedLM, task: str) -> str:
    return next(r.messages[-1].content for r in backend.requests if r.task == task)


def _section(prompt: str, heading: str) -> str:
    return prompt.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0].strip()


def test_a_list_answer_is_split_into_its_items_every_one_required() -> None:
    claims = split_claims("Harbour City FC, Eastquay Olympic and Redmarsh Rovers", QueryType.SINGLE_DOC, "Which clubs reached the semi-finals?")
    assert claims == [Claim("Harbour City FC", "list item", True), Claim("Eastquay Olympic", "list item", True), Claim("Redmarsh Rovers", "list item", True)]


def test_a_synthesis_reference_is_split_into_its_parts_every_one_required() -> None:
    claims = split_claims("1899; Piet Varley", QueryType.SYNTHESIS, "When was the club founded, and who coached it in 1995?")
    assert claims == [Claim("1899", "synthesis part", True), Claim("Piet Varley", "synthesis part", True)]


def test_sentences_and_clauses_are_claims_the_first_and_those_the_question_asks_about_required() -> None:
    question = "Who coached Orlanmouth Wanderers during the 1995 cup run?"
    reference = f"{COACH} He later managed Korrin Sporting; Orlanmouth Wanderers lost the cup run's final."
    assert split_claims(reference, QueryType.FILLER, question) == [
        Claim(COACH, "sentence", True),
        Claim("He later managed Korrin Sporting", "clause", False),  # the question asks nothing of it (a name is no asked word)
        Claim("Orlanmouth Wanderers lost the cup run's final.", "clause", True),  # shares 'cup' and 'run'
    ]


def test_a_number_claim_is_checked_by_code_as_a_number() -> None:
    claim = Claim("61,811 spectators", "synthesis part", True)
    assert said_by_code(claim, "About 61811 people watched it.", DEFAULT_TOLERANCES) is True
    assert said_by_code(claim, "About 58,102 people watched it.", DEFAULT_TOLERANCES) is False
    assert said_by_code(Claim(COACH, "sentence", True), COACH, DEFAULT_TOLERANCES) is None  # a sentence: the model reads it


def test_each_required_claim_is_one_question_about_the_response_alone() -> None:
    judge, backend = _claims_judge(passage=PASSAGE)
    turn = Turn(question="Who coached Orlanmouth Wanderers during the 1995 cup run?", answer=f"{COACH} He later managed Korrin Sporting.",
                query_type=QueryType.FILLER, doc_ids=["text/club"])
    result = judge.judge_turn(turn, "Their coach in that cup run was Piet Varley.", [])
    assert (result.verdict, result.score, result.checks) == (Verdict.PASS, None, ("abstention", "reference-parts", "claims"))
    assert "does not ask for 'He later managed Korrin Sporting.'" in result.feedback and by_model(result)
    assert backend.tasks_seen() == ["judge-claim", "judge-contradiction"]  # the optional claim is not asked
    claim = _prompt(backend, "judge-claim")
    assert _section(claim, "Claim") == COACH and _section(claim, "Response") == "Their coach in that cup run was Piet Varley."
    assert "Reference" not in claim and "Korrin" not in claim  # the response only: no reference, no passage
    system = next(r.messages[0].content for r in backend.requests if r.task == "judge-claim")
    assert "never from your own knowledge" in system


def test_a_list_item_the_model_does_not_find_fails_naming_it() -> None:
    judge, backend = _claims_judge(claim=[YES, YES, NO])
    turn = Turn(question="Which clubs reached the semi-finals?", answer="Harbour City FC, Eastquay Olympic and Redmarsh Rovers",
                query_type=QueryType.SINGLE_DOC)
    result = judge.judge_turn(turn, "Harbour City, Eastquay Olympic and the Rovers got there.", [])
    assert result.verdict == Verdict.FAIL and "does not say 'Redmarsh Rovers'" in result.feedback
    assert backend.tasks_seen() == ["judge-claim"] * 3  # no contradiction question once a claim is missing


def test_a_synthesis_part_is_checked_the_number_by_code_the_sentence_by_the_model() -> None:
    judge, backend = _claims_judge(claim=NO)
    ground = "the club's first ground was a converted dockside warehouse in Orlanmouth"
    turn = Turn(question="When was Orlanmouth Wanderers founded, and where did they first play?", answer=f"1899; {ground}",
                query_type=QueryType.SYNTHESIS)
    result = judge.judge_turn(turn, "They were founded in 1899 and first played in a town warehouse.", [])
    assert result.verdict == Verdict.FAIL
    assert result.feedback.startswith(f"the answer does not say {ground!r} of the reference")  # the year is said: code found it
    assert backend.tasks_seen() == ["judge-claim"]  # one question: the year needed none


def test_a_sentence_the_model_does_not_find_fails_naming_it() -> None:
    judge, backend = _claims_judge(claim=NO)
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    result = judge.judge_turn(turn, "Piet Varley was their chairman in 1995.", [])
    assert (result.verdict, result.feedback) == (Verdict.FAIL, f"the answer does not say {COACH!r}")
    assert backend.tasks_seen() == ["judge-claim"]


def test_a_number_claim_the_answer_states_in_part_fails_by_code() -> None:
    judge, backend = _claims_judge()  # the model would say every claim is said
    crowds = "61,811 and 60,410 spectators"
    turn = Turn(question="How many watched the 2023 and 2022 finals, and how did the 2023 final end?",
                answer=f"{crowds}; Harbour City FC beat Eastquay Olympic after extra time in front of a full Crownfield Stadium",
                query_type=QueryType.SYNTHESIS)
    result = judge.judge_turn(turn, "61,811 watched the 2023 final, which Harbour City FC won after extra time.", [])
    assert result.verdict == Verdict.FAIL and result.feedback.startswith(f"the answer does not say {crowds!r} of the reference")
    assert backend.tasks_seen() == ["judge-claim"]  # the sentence only: code found 60,410 missing


def test_a_contradiction_fails_naming_it() -> None:
    judge, _ = _claims_judge(contradiction={"contradiction": "he joined from Eastquay Olympic", "contradicts": "yes"}, passage=PASSAGE)
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER, doc_ids=["text/club"])
    result = judge.judge_turn(turn, "Piet Varley, who had joined from Eastquay Olympic, coached them in that cup run.", [])
    assert result.verdict == Verdict.FAIL
    assert "says 'he joined from Eastquay Olympic', which contradicts the reference answer or its passage" in result.feedback


def test_an_answer_right_by_the_passage_beyond_the_reference_passes_with_the_passage_shown() -> None:
    def no_contradiction_when_the_passage_says_it(request: LMRequest) -> dict:
        prompt = request.messages[-1].content
        said = "Korrin Sporting" in _section(prompt, "Passage")
        return CLEAN if said else {"contradiction": "he joined from Korrin Sporting", "contradicts": "yes"}

    judge, backend = _claims_judge(contradiction=no_contradiction_when_the_passage_says_it, passage=PASSAGE)
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER, doc_ids=["text/club"])
    result = judge.judge_turn(turn, "Piet Varley, who had joined from Korrin Sporting, coached the team in that cup run.", [])
    assert result.verdict == Verdict.PASS, result.feedback
    prompt = _prompt(backend, "judge-contradiction")
    assert _section(prompt, "Reference Answer") == COACH and _section(prompt, "Passage") == PASSAGE
    system = next(r.messages[0].content for r in backend.requests if r.task == "judge-contradiction")
    assert "nor is a detail the passage states beyond the reference answer" in system and "never from your own knowledge" in system


def test_a_turn_without_a_passage_asks_against_the_reference_alone() -> None:
    judge, backend = _claims_judge()
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    assert judge.judge_turn(turn, "That was Piet Varley, in the cup run.", []).verdict == Verdict.PASS
    assert "## Passage" not in _prompt(backend, "judge-contradiction")


def test_an_unusable_reply_is_retried_then_reported_as_the_judge_s_error() -> None:
    judge, backend = _claims_judge(claim=["no JSON here", '{"says": "maybe"}'], retries=1)
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    result = judge.judge_turn(turn, "That was Piet Varley, in the cup run.", [])
    assert (result.verdict, result.error_category, result.party) == (Verdict.ERROR, JUDGE_ERROR, "judge")
    assert "unusable" in result.feedback
    assert backend.tasks_seen() == ["judge-claim", "judge-claim"]  # one retry with the validation error, then reported
    assert "That reply was invalid" in backend.requests[1].messages[-1].content


def test_an_unusable_reply_to_the_contradiction_question_is_the_judge_s_error() -> None:
    judge, backend = _claims_judge(contradiction="no JSON here")
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    result = judge.judge_turn(turn, "That was Piet Varley, in the cup run.", [])
    assert (result.verdict, result.error_category) == (Verdict.ERROR, JUDGE_ERROR) and "unusable" in result.feedback
    assert backend.tasks_seen() == ["judge-claim", "judge-contradiction"]


def test_the_deterministic_checks_stay_in_front() -> None:
    def no_model() -> LanguageModel:
        raise AssertionError("a deterministic check decides these")

    judge = Judge(no_model, method="claims")
    finals = Turn(question="How many spectators watched the 2023 final?", answer="61,811 spectators.", query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(finals, "61,811 spectators watched it.", []).verdict == Verdict.PASS
    assert judge.judge_turn(finals, "I cannot answer that.", []).verdict == Verdict.FAIL
    assert judge.judge_turn(finals, "About 58,102 spectators.", []).verdict == Verdict.FAIL


@pytest.mark.parametrize("method, task", [("rubric", "judge-turn"), ("claims", "judge-claim")])
def test_the_method_is_a_run_setting_claims_by_default(method: str, task: str) -> None:
    assert RunSettings().judge_method == "claims" and Judge(lambda: LanguageModel(ScriptedLM())).method == "claims"
    backend = ScriptedLM(default={"feedback": "fine", "score": 5, "error_category": "none"},
                         by_task={"judge-claim": YES, "judge-contradiction": CLEAN})
    judge = run_judge(RunSettings(judge_method=method), lambda: LanguageModel(backend), tools=False, documents=list)
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    assert judge.judge_turn(turn, "That was Piet Varley, in the cup run.", []).verdict == Verdict.PASS
    assert backend.tasks_seen()[0] == task
    unanswerable = Turn(question="Who refereed the final?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE)
    judge.judge_turn(unanswerable, "The referee was well liked.", [])  # declining is graded by its rubric, whatever the method
    assert backend.tasks_seen()[-1] == "judge-turn"


def test_a_contradiction_that_is_the_reference_s_own_words_is_none() -> None:
    """The model named the reference's own number as the contradiction (seen on a labelled answer, #44): no FAIL."""
    reference = "Net sales of $1.2 billion for fiscal year 2018 increased 58.5% from $757.3 million for fiscal year 2017."
    judge, _ = _claims_judge(contradiction={"contradiction": "58.5%", "contradicts": "yes"})
    turn = Turn(question="How much did net sales increase from 2017 to 2018?", answer=reference, query_type=QueryType.SINGLE_DOC)
    assert judge.judge_turn(turn, "Net sales increased by 58.5% in fiscal year 2018.", []).verdict == Verdict.PASS
    judge, _ = _claims_judge(contradiction={"contradiction": "increased 40%", "contradicts": "yes"})
    assert judge.judge_turn(turn, "Net sales increased by 58.5%, or 40% on another basis.", []).verdict == Verdict.FAIL
    judge, _ = _claims_judge(contradiction={"contradiction": "for", "contradicts": "yes"})  # names no statement
    assert judge.judge_turn(turn, "Net sales increased by 58.5% for the year.", []).verdict == Verdict.PASS


def test_a_contradiction_the_response_does_not_state_fails_nothing() -> None:
    """The model's account of a contradiction, or none at all, is no statement of the response (labelled answers, #44):
    "The response states that the billing city is Cupertino, which the passage does not give"."""
    turn = Turn(question="Who coached them in 1995?", answer=COACH, query_type=QueryType.FILLER)
    answer = "Piet Varley coached them; he had joined from Korrin Sporting."
    for named in ("The response says the team was coached by someone the passage calls a chairman, which is false", ""):
        judge, _ = _claims_judge(contradiction={"contradiction": named, "contradicts": "yes"})
        assert judge.judge_turn(turn, answer, []).verdict == Verdict.PASS, named
    judge, _ = _claims_judge(contradiction={"contradiction": "he had joined from Korrin Sporting", "contradicts": "yes"})
    assert judge.judge_turn(turn, answer, []).verdict == Verdict.FAIL


def test_a_date_written_another_way_is_the_reference_s_own_words() -> None:
    reference = "Sweden, Finland, Norway; 12 April 2012"
    judge, _ = _claims_judge(contradiction={"contradiction": "April 12, 2012", "contradicts": "yes"})
    turn = Turn(question="Which countries compete, and when was the schedule released?", answer=reference, query_type=QueryType.SYNTHESIS)
    assert judge.judge_turn(turn, "Sweden, Finland and Norway compete; the schedule came out on April 12, 2012.", []).verdict == Verdict.PASS
    judge, _ = _claims_judge(contradiction={"contradiction": "April 21, 2012", "contradicts": "yes"})
    assert judge.judge_turn(turn, "Sweden, Finland and Norway compete; the schedule came out on April 21, 2012.", []).verdict == Verdict.FAIL


@pytest.mark.parametrize("opening", ["Sure.", "Why yes!", "I sure do!", "Absolutely.", "Yes, I do."])
def test_a_conversational_opener_is_no_claim(opening: str) -> None:
    """A person's reply that opens with "Sure." requires what follows: an answer saying only "yes" says nothing."""
    claims = split_claims(f"{opening} Vladimir Tkachenko won it in 1979.", QueryType.FILLER, "Can you name men who won this award?")
    assert claims == [Claim("Vladimir Tkachenko won it in 1979.", "sentence", True)]
    judge, backend = _claims_judge(claim=NO)
    turn = Turn(question="Can you name men who won this award?", answer=f"{opening} Vladimir Tkachenko won it in 1979.", query_type=QueryType.FILLER)
    assert judge.judge_turn(turn, "Yes, Tkachenko is one.", []).verdict == Verdict.FAIL
    assert "Tkachenko won it in 1979" in _section(_prompt(backend, "judge-claim"), "Claim")


def test_a_reply_that_is_only_yes_keeps_its_yes_as_the_claim() -> None:
    assert split_claims("Yes.", QueryType.SINGLE_DOC, "Did they win the 1995 cup?") == [Claim("Yes.", "sentence", True)]


def test_an_answer_sharing_nothing_with_a_claim_beyond_the_question_does_not_say_it_whatever_the_model_replies() -> None:
    """The 1.5B said yes to "Narendra Jadhav was born later, in 1953, so he is younger" for the answer "Karnataka" (#44)."""
    judge, backend = _claims_judge(claim=YES)
    turn = Turn(question="Which of these two is younger?", answer="Narendra Jadhav was born later, in 1953, so he is younger.",
                query_type=QueryType.FILLER)
    result = judge.judge_turn(turn, "Karnataka", [])
    assert result.verdict == Verdict.FAIL and "does not say" in result.feedback
    assert "judge-claim" not in backend.tasks_seen()
    judge, backend = _claims_judge(claim=YES)  # a paraphrase shares a word beyond the question: the model decides
    assert judge.judge_turn(turn, "Jadhav, who was born later.", []).verdict == Verdict.PASS
    assert backend.tasks_seen()[0] == "judge-claim"


def test_an_answer_naming_other_things_than_the_claim_names_does_not_say_it_whatever_the_model_replies() -> None:
    """The 1.5B said yes to "she's an American actress" for "a British actress", and to a film list without the one film
    the reference names (#44, labelled answers)."""
    biel = Turn(question="Hi. Do you know who Jessica Biel is?", answer="Yes, she's an American actress, model, producer, and singer.",
                query_type=QueryType.FILLER)
    judge, backend = _claims_judge(claim=YES)
    assert judge.judge_turn(biel, "Jessica Biel is a British actress of stage and screen.", []).verdict == Verdict.FAIL
    assert "judge-claim" not in backend.tasks_seen()
    films = Turn(question="Can you list the LGBT-related films of 1994?", answer="It has all the LGBT-related films of 1994 including Bar Girls and so on",
                 query_type=QueryType.FILLER)
    judge, backend = _claims_judge(claim=YES)
    other = "The LGBT-related films of 1994 include 'The Matrix' and 'The Shawshank Redemption' (1994)."
    assert judge.judge_turn(films, other, []).verdict == Verdict.FAIL  # the question's 1994 names none of the claim's films
    judge, backend = _claims_judge(claim=YES)  # one of its names, or an abbreviation of one, leaves it to the model
    assert judge.judge_turn(biel, "She is an actress from the American South.", []).verdict == Verdict.PASS
    west = Turn(question="What can you tell me about the West?", answer="It is the region of the westernmost states of the United States.",
                query_type=QueryType.FILLER)
    assert judge.judge_turn(west, "The westernmost states of the U.S., from the Rockies to the Pacific.", []).verdict == Verdict.PASS
    basin = Turn(question="What geographic feature does Los Angeles lie in?",
                 answer="Adjacent to the Pacific Ocean, Los Angeles lies in a basin in Southern California.", query_type=QueryType.SINGLE_DOC)
    judge, backend = _claims_judge(claim=YES)  # an answer naming nothing else is the model's to read
    assert judge.judge_turn(basin, "a basin", []).verdict == Verdict.PASS and backend.tasks_seen()[0] == "judge-claim"


def test_a_word_the_question_already_says_is_not_one_of_the_claims_names() -> None:
    """The 1.5B said yes to "an American Thoroughbred horse racing honor" for an answer that made the award a horse
    winning other awards: its only word of the claim's names was the question's "American" (#44, labelled answers)."""
    filly = Turn(question="Do you know the American Champion Two-Year-Old Filly?",
                 answer="It is an American Thoroughbred horse racing honor awarded annually to a female horse.", query_type=QueryType.FILLER)
    judge, backend = _claims_judge(claim=YES)
    horse = "Yes, the American Champion Two-Year-Old Filly won two Eclipse Awards as the American Champion Female Sprint Horse."
    assert judge.judge_turn(filly, horse, []).verdict == Verdict.FAIL
    assert "judge-claim" not in backend.tasks_seen()
    judge, backend = _claims_judge(claim=YES)  # the claim's own new word told: the model reads it
    assert judge.judge_turn(filly, "A yearly Thoroughbred racing award for the best two-year-old filly.", []).verdict == Verdict.PASS
    assert backend.tasks_seen()[0] == "judge-claim"


def test_a_word_spelt_another_way_is_no_contradiction_a_different_name_is() -> None:
    turn = Turn(question="What are Dutch ovens made of?", answer="They are made of seasoned cast iron, cast aluminium or ceramic.",
                query_type=QueryType.SINGLE_DOC)
    judge, _ = _claims_judge(contradiction={"contradiction": "aluminum", "contradicts": "yes"})
    assert judge.judge_turn(turn, "They are made of cast iron, aluminum or ceramic.", []).verdict == Verdict.PASS
    turn = Turn(question="Which country hosted it?", answer="It was held in Austria, in Innsbruck.", query_type=QueryType.SINGLE_DOC)
    judge, _ = _claims_judge(contradiction={"contradiction": "Australia", "contradicts": "yes"})
    assert judge.judge_turn(turn, "It was held in Australia, in Innsbruck.", []).verdict == Verdict.FAIL
