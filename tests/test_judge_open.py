"""Questions asking for some of a kind ("the names of some of the clubs"): a reference names a few examples, so an
answer the reference fails is judged again by the documents the turn cites and the assistant used."""

from __future__ import annotations

import threading

import pytest
from fuzz_strategies import hostile_text
from hypothesis import given
from hypothesis import strategies as st

from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.judge import Judge, used_passages
from bddgen.evaluation.open_answer import asks_for_some, listed_names
from bddgen.evaluation.session import ConversationPlan, ConversationSession
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import TurnResult, Verdict
from bddgen.specs import CANNOT_ANSWER, Conversation, QueryType, Spec, Turn

NO = {"quote": "", "says": "no"}
CLEAN = {"contradiction": "", "contradicts": "no"}
CLUBS = {
    "text/harbour": "Harbour City Football Club is a professional football club of the Korrin league, based in Orlanmouth.",
    "text/eastquay": "Eastquay Olympic (Korrin: Olimpik Istki) is a Korrin league football club founded in 1921 in Eastquay.",
    "text/league": "The Korrin league is a football league. Its most successful clubs include Redmarsh Rovers and Piet Varley Athletic.",
    "text/player": "Tomas Brenner is a Korrin footballer who played for Northgate United, a club of the Korrin league.",
}
QUESTION = "Great, thank you! Can you give me the names of some of the clubs?"
EARLIER = [Message("user", "Do you know much about Korrin league football clubs?"), Message("assistant", "Yes: Harbour City FC is one.")]
CLUBS_TURN = Turn(question=QUESTION, answer="Yes indeed, some of the most successful are Redmarsh Rovers and Piet Varley Athletic.",
                  query_type=QueryType.FILLER, doc_ids=["text/league"])
OTHERS = "Sure, here are some: Harbour City FC, Eastquay Olympic (founded 1921)."
USED = ["text/harbour#1", "text/eastquay"]


def _judge(method: str = "claims") -> tuple[Judge, ScriptedLM]:
    backend = ScriptedLM(by_task={
        "judge-claim": NO, "judge-contradiction": CLEAN,
        "judge-turn": {"feedback": "other clubs than the reference's", "score": 2, "error_category": "none"},
    })
    judge = Judge(lambda: LanguageModel(backend, max_retries=0), cited=lambda doc_id: CLUBS.get(doc_id, ""), method=method)  # type: ignore[arg-type]
    return judge, backend


@pytest.mark.parametrize(("question", "kind"), [
    (QUESTION, "clubs"), ("Can you provide me with the names of any of these films?", "films"), ("who are some of the winners ?", "winners"),
    ("can you name some of the russian medallists at the games?", "medallists"), ("Are there any films by her?", "films"),
    ("Can you tell me a few names of men who have won this award?", "men"),
])
def test_a_question_asking_for_some_of_a_kind_names_the_kind(question: str, kind: str) -> None:
    found = asks_for_some(question)
    assert found is not None and found.kind == kind


@pytest.mark.parametrize("question", [
    "Who coached Orlanmouth Wanderers during the 1995 cup run?", "How many clubs play in the Korrin league?",
    "In report 17, what was the change in revenue from 2018 to 2019?", "What can you tell me about the Korrin league?",
])
def test_a_question_with_one_answer_asks_for_no_kind(question: str) -> None:
    assert asks_for_some(question) is None


@pytest.mark.parametrize(("answer", "names"), [
    ("Sure, here are some popular Indian films: Hum Aapke Hain Koun..!, Aan, Konkani cinema", ["Hum Aapke Hain Koun", "Aan", "Konkani cinema"]),
    ("Shahrdari Tabriz Cultural and Athletic Club (Persian: club, Tabriz), Petroshimi Tabriz FSC and Ferdosi Mashhad FSC.",
     ["Shahrdari Tabriz Cultural and Athletic Club", "Petroshimi Tabriz FSC and Ferdosi Mashhad FSC"]),
    ("The Rajya Sabha has 245 members from Tamil Nadu, Karnataka, and West Bengal.", None),
    ("All Star Mr & Mrs features celebrities and their real-life partners playing to win.", None),
])
def test_an_answer_lists_names_or_is_prose(answer: str, names: list[str] | None) -> None:
    assert listed_names(answer) == names


@pytest.mark.parametrize("method", ["claims", "rubric"])
def test_other_names_the_documents_call_of_the_kind_pass(method: str) -> None:
    judge, _ = _judge(method)
    result = judge.judge_turn(CLUBS_TURN, OTHERS, EARLIER, USED)
    assert result.verdict == Verdict.PASS and "open-question" in result.checks and "Eastquay Olympic" in result.feedback
    assert judge.judge_turn(CLUBS_TURN, "Harbour City FC and Eastquay Olympic", EARLIER, USED).verdict == Verdict.PASS


def test_the_documents_the_turn_cites_count_too() -> None:
    judge, _ = _judge()
    turn = Turn(question=QUESTION, answer=CLUBS_TURN.answer, query_type=QueryType.FILLER, doc_ids=["text/league", "text/harbour"])
    assert judge.judge_turn(turn, "Harbour City FC", EARLIER).verdict == Verdict.PASS
    assert judge.judge_turn(turn, "Eastquay Olympic", EARLIER).verdict == Verdict.FAIL  # no document it cites or used holds it


def test_a_name_no_document_opens_with_as_one_of_the_kind_fails() -> None:
    judge, _ = _judge()
    mentioned = judge.judge_turn(CLUBS_TURN, "Harbour City FC, Northgate United", EARLIER, [*USED, "text/player"])
    assert mentioned.verdict == Verdict.FAIL and "Northgate United" in mentioned.feedback  # named by a player's page, not its own
    player = judge.judge_turn(CLUBS_TURN, "Tomas Brenner", EARLIER, ["text/player"])
    assert player.verdict == Verdict.FAIL  # his page opens with him, but as a footballer


def test_the_users_own_words_or_prose_are_no_names_of_the_kind() -> None:
    judge, _ = _judge()
    assert judge.judge_turn(CLUBS_TURN, "Korrin League Football Club, Korrin League Football Club", EARLIER, USED).verdict == Verdict.FAIL
    prose = "Harbour City FC is based in Orlanmouth and Eastquay Olympic was founded in 1921 by its supporters."
    assert judge.judge_turn(CLUBS_TURN, prose, EARLIER, USED).verdict == Verdict.FAIL


def test_a_name_the_assistant_said_before_may_be_named_again() -> None:
    judge, _ = _judge()
    assert judge.judge_turn(CLUBS_TURN, "Harbour City FC", EARLIER, USED).verdict == Verdict.PASS


def test_a_question_with_one_answer_is_not_judged_by_the_documents() -> None:
    judge, _ = _judge()
    turn = Turn(question="Which clubs are the league's most successful?", answer=CLUBS_TURN.answer, query_type=QueryType.FILLER,
                doc_ids=["text/league"])
    assert judge.judge_turn(turn, OTHERS, EARLIER, USED).verdict == Verdict.FAIL


def test_a_refusal_and_an_unanswerable_turn_keep_their_verdicts() -> None:
    judge, _ = _judge()
    assert judge.judge_turn(CLUBS_TURN, "I cannot answer that from the documents I have.", EARLIER, USED).verdict == Verdict.FAIL
    unanswerable = Turn(question="Can you name some of the clubs' mascots?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE)
    assert judge.judge_turn(unanswerable, "Harbour City FC, Eastquay Olympic", EARLIER, USED).verdict == Verdict.FAIL


def test_contexts_are_read_as_documents_chunks_or_text() -> None:
    snippet = "Redmarsh Rovers won the Korrin league title in 1998 and 2004."
    found = used_passages(lambda doc_id: CLUBS.get(doc_id, ""), ["text/harbour#2", "text/harbour", "table/fixtures#1", "row 7", snippet])
    assert found == [CLUBS["text/harbour"], snippet]  # a chunk is its document's passage, once; a table or a short id is nothing
    assert used_passages(None, [snippet, "text/harbour"]) == [snippet]


class _UsingClubPages:
    name = "clubs"

    def respond(self, messages: list[Message]) -> AssistantReply:
        return AssistantReply(answer=OTHERS, contexts=["text/harbour#1", "text/eastquay#1"])


def test_a_run_judges_an_open_question_by_the_documents_the_assistant_reports() -> None:
    spec = Spec.create("League clubs", ["a fan of the Korrin league"], ["they ask for some of its clubs"], ["the assistant names some"])
    plan = ConversationPlan("features/clubs.feature", spec, Conversation(id="c1", title="Clubs", turns=[CLUBS_TURN]), "Clubs",
                            judge_spec=False)
    judge, backend = _judge()
    written: list[TurnResult] = []
    ConversationSession(plan, 1, "open", _UsingClubPages, judge, written.extend).run_all(threading.Event())
    [record] = [r for r in written if r.turn == 1]
    assert record.verdict == Verdict.PASS and record.contexts == ["text/harbour#1", "text/eastquay#1"]
    assert not backend.tasks_seen()  # decided by code: the claims method found no claim said, so no model call is made



@given(question=hostile_text, answer=hostile_text, documents=st.lists(hostile_text, max_size=3))
def test_any_question_answer_and_documents_are_read_without_error(question: str, answer: str, documents: list[str]) -> None:
    """What an assistant answers and reports is anybody's text: the check reads it, and passes only a list of names."""
    kind = asks_for_some(question)
    assert kind is None or kind.kind.strip()
    names = listed_names(answer)
    assert names is None or (names and all(n.strip() == n and n for n in names))
    judge, _ = _judge()
    turn = Turn(question=question or "?", answer="Redmarsh Rovers", query_type=QueryType.FILLER)
    verdict = judge.judge_turn(turn, answer, [], documents).verdict
    assert verdict in (Verdict.PASS, Verdict.FAIL, Verdict.ERROR)
    if verdict == Verdict.PASS and "open-question" in judge.judge_turn(turn, answer, [], documents).checks:
        assert names
