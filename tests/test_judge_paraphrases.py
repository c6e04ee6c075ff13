"""`bddgen judge check`'s paraphrases: written by the LM, kept as right candidates only when the checks find the reference
in them and in their round trip (the question answered from the paraphrase alone), dropped and counted otherwise."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.judging.candidates import VerifiedTurn
from bddgen.judging.paraphrases import ParaphraseWriter
from bddgen.judging.qualify import grade, summarise
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import Reply, ScriptedLM
from bddgen.results import Verdict
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.scripted import scripted_judge
from bddgen.evaluation.reference_match import DEFAULT_TOLERANCES
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Turn

WRITE, READ_BACK = "paraphrase-candidate", "answer_from_documents"
HISTORY = [Message("user", "Which club won the 1995 cup?"), Message("assistant", "Orlanmouth Wanderers won the 1995 cup.")]
CLUBS = "Harbour City FC, Eastquay Olympic and Redmarsh Rovers"


def _verified(question: str, answer: str, kind: QueryType = QueryType.SINGLE_DOC, exact: str | None = None) -> VerifiedTurn:
    expectation = ExactExpectation(table_id="tables/finals", operation="lookup", value=exact) if exact else None
    return VerifiedTurn("features/club.feature", "history", 2, Turn(question=question, answer=answer, query_type=kind, exact=expectation), list(HISTORY))


COACH = _verified("Who coached them during that cup run?", "Piet Varley coached the team during the 1995 cup run")
SEMIS = _verified("Which clubs reached the semi-finals?", CLUBS)


def _section(request: LMRequest, heading: str) -> str:
    return request.messages[-1].content.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0].strip()


def _documents(request: LMRequest) -> dict[str, str]:
    """The round trip reads the paraphrase back as it is (a faithful reader)."""
    return {"answer": _section(request, "Documents")}


def _writer(paraphrases: Reply | list[Reply], read_back: Reply | list[Reply] = _documents, count: int = 2) -> tuple[ParaphraseWriter, ScriptedLM]:
    backend = ScriptedLM(by_task={WRITE: paraphrases, READ_BACK: read_back})
    lm = LanguageModel(backend, max_retries=0)
    return ParaphraseWriter(lambda: lm, count, DEFAULT_TOLERANCES), backend


def test_a_paraphrase_its_round_trip_reads_the_reference_back_from_is_a_right_candidate() -> None:
    """The round trip names the coach; the year is the conversation's, not what the question asks for."""
    paraphrase = "During the cup run of 1995 the side was coached by Varley."
    writer, backend = _writer({"paraphrases": [paraphrase]}, read_back={"answer": "Varley."})
    kept, record = writer.candidates([COACH])
    assert [(c.kind, c.answer, c.should_pass, c.source) for c in kept] == [("paraphrase", paraphrase, True, COACH)]
    assert (record.kept, record.dropped, record.unreadable_turns, record.unusable_turns) == (1, [], 0, 0)
    written = next(r for r in backend.requests if r.task == WRITE)
    assert _section(written, "Reference Answer") == COACH.turn.answer and _section(written, "Number Of Replies") == "2"
    round_trip = next(r for r in backend.requests if r.task == READ_BACK)
    assert _section(round_trip, "Documents") == paraphrase and _section(round_trip, "Question") == COACH.turn.question
    assert _section(round_trip, "Conversation So Far") == "user: Which club won the 1995 cup?"  # the earlier question, not its answer


def test_a_paraphrase_whose_round_trip_leaves_out_a_list_item_is_dropped_with_what_it_read_back() -> None:
    paraphrase = "Redmarsh Rovers got there, as did Eastquay Olympic and Harbour City FC."
    writer, _ = _writer({"paraphrases": [paraphrase]}, read_back={"answer": "Harbour City FC and Eastquay Olympic"})
    kept, record = writer.candidates([SEMIS])
    assert kept == [] and record.kept == 0
    [dropped] = record.dropped
    assert (dropped.paraphrase, dropped.read_back, dropped.question, dropped.turn) == (paraphrase, "Harbour City FC and Eastquay Olympic", SEMIS.turn.question, 2)
    assert dropped.reason == "its round trip reads back 'Harbour City FC and Eastquay Olympic': it does not state 'Redmarsh Rovers'"


@pytest.mark.parametrize("paraphrase, reason", [
    ("Piet Varley coached the team during the 1996 cup run.", "it states '1996' where the reference says '1995'"),
    ("Piet Varley did not coach the team during the 1995 cup run.", "it negates or states a number the reference and the conversation do not"),
    ("It is not true that Piet Varley coached the team during the 1995 cup run.", "it says the reference answer is not true"),
    ("Soren Vey and Piet Varley coached the team during the 1995 cup run.", "it names 'Soren Vey', which the reference and the conversation do not"),
    ("The coach in 1995 was a former player.", "it does not state 'Piet Varley coached the team during the 1995 cup run'"),
    ("I cannot answer that from the documents.", "it says it cannot answer"),
    ("Piet Varley coached the team during the 1995 cup run.", "it is the reference itself"),
])
def test_a_paraphrase_the_checks_find_wrong_is_dropped_before_its_round_trip(paraphrase: str, reason: str) -> None:
    writer, backend = _writer({"paraphrases": [paraphrase]})
    kept, record = writer.candidates([COACH])
    assert kept == [] and [d.reason for d in record.dropped] == [reason] and record.dropped[0].read_back == ""
    assert backend.tasks_seen() == [WRITE]  # no round trip for a paraphrase already wrong


def test_a_paraphrase_without_the_turn_s_exact_value_is_dropped() -> None:
    moved = _verified("Which final did roof works move?", "The 2020 final, which roof works moved to Redmarsh Stadium", exact="Redmarsh Stadium")
    right, other = "Roof works moved the 2020 final to Redmarsh Stadium.", "Roof works moved the 2020 final to another stadium."
    writer, _ = _writer({"paraphrases": [right, other]})
    kept, record = writer.candidates([moved])
    assert [c.answer for c in kept] == [right]
    assert [d.reason for d in record.dropped] == ["it does not state the exact value 'Redmarsh Stadium'"]  # 'stadium' alone satisfies the parts


def test_only_count_paraphrases_a_turn_are_read_back_each_once() -> None:
    said = ["Varley coached the team in the 1995 cup run.", "Varley coached the team in the 1995 cup run.", "In 1995 Piet Varley led them.", "Varley, 1995."]
    writer, backend = _writer({"paraphrases": said}, count=2)
    kept, _ = writer.candidates([COACH])
    assert [c.answer for c in kept] == [said[0]]  # the first two, one of them twice
    assert backend.tasks_seen() == [WRITE, READ_BACK]


def test_turns_no_round_trip_can_read_back_and_unanswerable_turns_get_no_paraphrase() -> None:
    extinct = _verified("When does a language become extinct?", "A language becomes extinct when its final fluent speaker dies")
    asked = _verified("Did Piet Varley coach them in 1995?", "Yes, Piet Varley coached them in 1995")  # nothing the question does not say
    referee = _verified("Who refereed the final?", CANNOT_ANSWER, QueryType.UNANSWERABLE)
    ground = _verified("When were they founded, and where did they first play?", "1899; on a converted dockside warehouse", QueryType.SYNTHESIS)
    writer, backend = _writer({"paraphrases": ["unused"]})
    kept, record = writer.candidates([extinct, referee, ground, asked])
    assert (kept, record.unreadable_turns, record.unusable_turns) == ([], 3, 0)
    assert backend.requests == []


def test_an_unusable_reply_is_counted_never_kept() -> None:
    writer, _ = _writer("no JSON here")
    kept, record = writer.candidates([COACH])
    assert (kept, record.unusable_turns, record.dropped) == ([], 1, [])
    writer, _ = _writer({"paraphrases": ["Varley coached the team in the 1995 cup run."]}, read_back="no JSON here")
    kept, record = writer.candidates([COACH])
    assert kept == [] and record.dropped[0].reason.startswith("its round trip's reply was unusable")


def test_kept_paraphrases_are_a_right_kind_of_the_figures_and_the_record_counts_the_dropped() -> None:
    writer, _ = _writer({"paraphrases": ["The 1995 cup run's coach was Varley.", "Piet Varley coached the team during the 1996 cup run."]})
    kept, record = writer.candidates([COACH])
    fails_paraphrases = Judge(lambda: LanguageModel(scripted_judge(lambda response, expected: False, failing_score=4)))
    check = summarise(grade(fails_paraphrases, kept), turns=1, judge_model="scripted", seed=0, paraphrases=record)
    paraphrase = check.per_kind["paraphrase"]
    assert (paraphrase.candidates, paraphrase.right, paraphrase.false_fail_rate, paraphrase.by_model) == (1, 1, 1.0, 1)
    assert check.disagreements[0].verdict == Verdict.FAIL and check.disagreements[0].should_pass
    assert check.paraphrases is not None and (check.paraphrases.kept, len(check.paraphrases.dropped)) == (1, 1)


WRITER_CI = '''
from bddgen.lm.scripted import ScriptedLM


def section(request, heading):
    return request.messages[-1].content.split(f"## {heading}\\n", 1)[1].split("\\n## ", 1)[0].strip()


def writer():
    """A paraphrase that states the reference and a refusal; the round trip reads the paraphrase back as it is."""
    return ScriptedLM(by_task={
        "paraphrase-candidate": lambda r: {"paraphrases": [f"Here is what I found: {section(r, 'Reference Answer')}", "I cannot say."]},
        "answer_from_documents": lambda r: {"answer": section(r, "Documents")},
    })
'''


def test_the_command_reports_the_paraphrases_kept_and_dropped(judged_sports_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (judged_sports_project / "writer_ci.py").write_text(WRITER_CI)
    monkeypatch.setenv("BDDGEN_JUDGE_CHECK__PARAPHRASES", "2")
    monkeypatch.setenv("BDDGEN_LM__BACKEND", "scripted")
    monkeypatch.setenv("BDDGEN_LM__MODEL", "writer_ci:writer")
    result = CliRunner().invoke(cli, ["judge", "check", "--n", "6", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    kept, dropped = figures["paraphrases"]["kept"], figures["paraphrases"]["dropped"]
    assert kept > 0 and figures["per_kind"]["paraphrase"]["candidates"] == kept == figures["per_kind"]["paraphrase"]["right"]
    assert len(dropped) == kept and {d["reason"] for d in dropped} == {"it says it cannot answer"}  # each turn's refusal
    table = CliRunner().invoke(cli, ["judge", "check", "--n", "6"], catch_exceptions=False)
    assert f"paraphrases: {kept} kept as right candidates, {kept} dropped by their checks or round trip" in " ".join(table.output.split())
