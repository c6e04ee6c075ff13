"""Labelled answers: the file format and its reader, `bddgen judge check --labelled` (the judge's agreement with people)
and `bddgen judge label` (labelling a run's answers from the terminal, resumable)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Sequence

import pytest
from click.testing import CliRunner
from fuzz_strategies import encoded_text, hostile_text
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from bddgen.cli import cli, main
from bddgen.errors import InputError
from bddgen.judging.agreement import grade_labelled, summarise_labelled
from bddgen.judging.labelled import LabelledAnswer, LabelledLine, append_labelled, read_labelled
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.results import Judgement, RunMetadata, TurnResult, Verdict
from bddgen.evaluation.judge import Judge
from bddgen.schemas import expected_schemas
from bddgen.specs import QueryType, Turn
from conftest import SCRIPTED_JUDGE, SCRIPTED_JUDGE_SETTINGS

COACH = "Piet Varley coached the team during the 1995 cup run"
PASSAGE = "Piet Varley joined from Korrin Sporting in 1993 and coached the team during the 1995 cup run."


def _record(**changes: object) -> dict:
    record = {"question": "Which club won the 2022 final?", "reference": "Eastquay Olympic", "answer": "Eastquay Olympic won it.",
              "label": "right", "reason": "names the winner", "source": "dense-rag", "query_type": "SINGLE-DOC"}
    return {**record, **changes}


def _jsonl(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_a_jsonl_file_and_a_json_array_read_alike_with_the_line_of_each_answer(tmp_path: Path) -> None:
    records = [_record(), _record(label="wrong", answer="Redmarsh Rovers.", passage=PASSAGE, exact="Eastquay",
                                  earlier=[{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello"}])]
    lines = tmp_path / "labels.jsonl"
    lines.write_text("\n" + _jsonl(*records), encoding="utf-8")
    array = tmp_path / "labels.json"
    array.write_text(json.dumps(records, indent=1), encoding="utf-8")
    read, from_array = read_labelled(lines), read_labelled(array)
    assert [r.answer for r in read] == [r.answer for r in from_array] == [LabelledAnswer.model_validate(r) for r in records]
    assert [r.line for r in read] == [2, 3]
    assert [r.line for r in from_array] == [2, 11]  # where each object starts
    second = read[1].answer
    assert second.turn("labelled/3").doc_ids == ["labelled/3"] and second.turn("labelled/3").exact.value == "Eastquay"  # type: ignore[union-attr]
    assert second.history() == [Message("user", "Hi"), Message("assistant", "Hello")]


def test_the_published_schema_accepts_a_labelled_answer_and_refuses_one_without_a_label() -> None:
    validator = Draft202012Validator(expected_schemas()["labelled.jsonl.schema.json"])
    validator.validate(_record(passage=PASSAGE, origin={"run_id": "r1", "feature": "features/cup.feature", "conversation_id": "c", "turn": 2}))
    record = _record()
    del record["label"]
    assert not validator.is_valid(record)


@pytest.mark.parametrize("text, location, message", [
    (_jsonl(_record()) + '{"question": "Who?",\n', ":2", "not valid JSON"),
    (_jsonl(_record()) + _jsonl({k: v for k, v in _record().items() if k != "reason"}), ":2", "missing field 'reason'"),
    (_jsonl(_record(lable="right")), ":1", "unknown field 'lable'"),
    (_jsonl(_record(label="correct")), ":1", "label: Input should be 'right' or 'wrong'"),
    (_jsonl(_record(reason="two\nlines")), ":1", "reason: String should match pattern"),
    (_jsonl(_record(query_type="LOOKUP")), ":1", "query_type: Input should be"),
    ("[1, 2]\n", ":1", "Input should be a valid dictionary"),
])
def test_a_bad_line_is_named_by_file_and_line(tmp_path: Path, text: str, location: str, message: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_labelled(path)
    assert [p.location for p in raised.value.problems] == [f"{path}{location}"]
    assert message in raised.value.problems[0].message


def test_a_json_array_names_the_line_of_the_bad_answer(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps([_record(), {k: v for k, v in _record().items() if k != "source"}], indent=1), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_labelled(path)
    expected = (f"{path}:11: missing field 'source' (a labelled answer has question, reference, answer, label, reason, source, "
                "query_type; see schemas/labelled.jsonl.schema.json)")
    assert [str(p) for p in raised.value.problems] == [expected]


def test_a_missing_or_empty_file_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty.jsonl").write_text("\n\n", encoding="utf-8")
    for name, message in (("none.jsonl", "cannot read it"), ("empty.jsonl", "no labelled answers")):
        with pytest.raises(InputError, match=message):
            read_labelled(tmp_path / name)


@given(content=st.one_of(encoded_text(), hostile_text.map(lambda t: t.encode("utf-8", "replace")),
                         st.lists(st.one_of(st.just(_record()), st.dictionaries(hostile_text, hostile_text, max_size=3)), max_size=3)
                         .map(lambda records: json.dumps(records).encode())),
       suffix=st.sampled_from([".jsonl", ".json", ".txt"]))
def test_the_reader_reads_answers_or_raises_an_input_error_naming_the_file(content: bytes, suffix: str) -> None:
    """Whatever the file holds, the reader returns labelled answers or raises one InputError whose every problem names the file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"labels{suffix}"
        path.write_bytes(content)
        try:
            found = read_labelled(path)
        except InputError as exc:
            assert exc.exit_code == 2 and exc.problems and all(p.location.startswith(str(path)) for p in exc.problems)
        else:
            assert found and all(isinstance(entry.answer, LabelledAnswer) for entry in found)


labelled_answers = st.builds(
    LabelledAnswer,
    question=hostile_text.filter(str.strip), reference=hostile_text.filter(str.strip), answer=hostile_text,
    label=st.sampled_from(["right", "wrong"]), reason=hostile_text.filter(lambda t: t.strip() and "\n" not in t and "\r" not in t),
    source=hostile_text.filter(str.strip), query_type=st.sampled_from(list(QueryType)), passage=hostile_text,
    used=st.lists(hostile_text, max_size=3),
)


@given(answers=st.lists(labelled_answers, min_size=1, max_size=4), ragged=st.booleans())
def test_appended_answers_read_back_unchanged(answers: list[LabelledAnswer], ragged: bool) -> None:
    """`bddgen judge label` appends; the reader gives back each answer as written, also after a last line without its newline."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "labels.jsonl"
        if ragged:
            path.write_text(json.dumps(answers[0].model_dump(mode="json")), encoding="utf-8")
        for answer in answers[ragged:]:
            append_labelled(path, answer)
        assert [entry.answer for entry in read_labelled(path)] == answers


def _no_model() -> LanguageModel:
    raise AssertionError("this judge grades without a model")


class _Wrong(Judge):
    """Passes every answer but the one whose answer says 'Redmarsh' (fails it), and cannot grade 'garbled'."""

    def __init__(self) -> None:
        super().__init__(_no_model)

    def judge_turn(self, turn: Turn, answer: str, history: list[Message], used: Sequence[str] = ()) -> Judgement:
        if "garbled" in answer:
            return Judgement(Verdict.ERROR, "unusable", error_category="judge")
        return Judgement(Verdict.FAIL if "Redmarsh" in answer else Verdict.PASS, "scripted", score=5 if "model" in answer else None)


def test_the_figures_match_hand_computed_values_overall_per_source_type_and_length() -> None:
    long_reference = f"{COACH}, after joining from Korrin Sporting in 1993."
    records = [
        _record(),  # right, passed: agrees
        _record(answer="Redmarsh Rovers won.", label="wrong", reason="another club"),  # wrong, failed: agrees
        _record(answer="Harbour City by model.", label="wrong", reason="another club"),  # wrong, passed: a false pass
        _record(answer="Redmarsh, said the model.", source="react-rag", reason="x"),  # right, failed: a false fail
        _record(answer="garbled", source="react-rag", query_type="FILLER", reference=long_reference),  # right, error: a false fail
        _record(answer=COACH, source="react-rag", query_type="FILLER", reference=long_reference),  # right, passed
    ]
    answers = [LabelledLine(n, LabelledAnswer.model_validate(r)) for n, r in enumerate(records, start=1)]
    check = summarise_labelled(grade_labelled(_Wrong(), answers), file="labels.jsonl", judge_model="scripted", method="rubric")
    assert (check.labelled, check.right, check.wrong, check.sources, check.errors, check.by_model) == (6, 4, 2, 2, 1, 2)
    assert (check.agreement, check.false_fail_rate, check.false_pass_rate) == (0.5, 0.5, 0.5)
    assert check.false_fail_interval == pytest.approx((0.1500, 0.8500), abs=1e-4)  # Wilson 2/4
    assert check.false_pass_interval == pytest.approx((0.0945, 0.9055), abs=1e-4)  # Wilson 1/2
    dense, react = check.per_source["dense-rag"], check.per_source["react-rag"]
    assert (dense.labelled, dense.agreement, dense.false_fail_rate, dense.false_pass_rate) == (3, 2 / 3, 0.0, 0.5)
    assert (react.labelled, react.agreement, react.false_fail_rate, react.false_pass_rate) == (3, 1 / 3, 2 / 3, None)
    assert check.per_query_type["FILLER"].labelled == 2 and check.per_query_type["SINGLE-DOC"].labelled == 4
    assert list(check.per_reference_length) == ["short", "long"]
    assert (check.per_reference_length["long"].labelled, check.per_reference_length["long"].false_fail_rate) == (2, 0.5)
    assert [d.line for d in check.disagreements] == [3, 4, 5]


def _project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project judged by SCRIPTED_JUDGE (every graded answer passes), as the working directory."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "judge_ci.py").write_text(SCRIPTED_JUDGE)
    (root / "bddgen.toml").write_text(SCRIPTED_JUDGE_SETTINGS)
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    return root


def test_the_command_prints_the_figures_as_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path / "p", monkeypatch)
    (project / "labels.jsonl").write_text(_jsonl(
        _record(), _record(answer="Redmarsh Rovers won it.", label="wrong", reason="another club", source="react-rag"),
        _record(question="Who coached them in 1995?", reference=COACH, answer="Piet Varley, who had come from Korrin Sporting.",
                query_type="FILLER", passage=PASSAGE, reason="the coach; true detail from the passage"),
    ), encoding="utf-8")
    result = CliRunner().invoke(cli, ["judge", "check", "--labelled", "labels.jsonl", "--json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    figures = json.loads(result.output)
    assert {k: figures[k] for k in ("agreement", "false_fail_rate", "false_pass_rate", "labelled", "sources")} == {
        "agreement": 1.0, "false_fail_rate": 0.0, "false_pass_rate": 0.0, "labelled": 3, "sources": 2}
    assert set(figures["per_source"]) == {"dense-rag", "react-rag"} and set(figures["per_reference_length"]) == {"short", "long"}
    assert figures["method"] == "claims" and figures["by_model"] == 1  # the passage answer went to the (scripted) model
    assert not (project / ".bddgen" / "judge-check.json").exists()  # the candidates' check record is untouched
    table = CliRunner().invoke(cli, ["judge", "check", "--labelled", "labels.jsonl"], catch_exceptions=False)
    assert "3 labelled answers from 2 sources" in table.output and "reference >8 words" in table.output


def test_bad_input_ends_the_command_with_one_error_and_exit_code_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    project = _project(tmp_path / "p", monkeypatch)
    (project / "labels.jsonl").write_text(_jsonl(_record()) + "{not json}\n", encoding="utf-8")
    with pytest.raises(SystemExit) as ended:
        main(["judge", "check", "--labelled", "labels.jsonl"])
    assert ended.value.code == 2
    assert "labels.jsonl:2: not valid JSON" in capsys.readouterr().err
    usage = CliRunner().invoke(cli, ["judge", "check", "--labelled", "labels.jsonl", "--n", "3"])
    assert usage.exit_code == 2 and "--n" in usage.output


FEATURE = f'''@spec @hand-written
Feature: Orlanmouth Wanderers

  Rule: Orlanmouth Wanderers
    Given a fan of Orlanmouth Wanderers
    When the fan asks about the club's history
    Then the assistant answers from the club's history

    @conversation @conv:history @docs:text/club
    Scenario: The club's history
      # turn 1 | SINGLE-DOC | docs: text/club
      When the user asks "When was Orlanmouth Wanderers founded?"
      Then the answer should agree with "1899"
      # turn 2 | FILLER | docs: text/club
      When the user asks "Who coached them in 1995?"
      Then the answer should agree with "{COACH}"
      # turn 3 | UNANSWERABLE | docs: text/club
      When the user asks "Who refereed the 1995 final?"
      Then the assistant should say it cannot answer
'''


def _run_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a corpus, a .feature file and run r1 of it (three judged turns and the spec check)."""
    project = _project(root, monkeypatch)
    (project / "corpus" / "text").mkdir(parents=True)
    (project / "corpus" / "system.yaml").write_text("name: Club history\npurpose: Answers fans' questions about the club.\n")
    (project / "corpus" / "text" / "club.md").write_text(f"# Orlanmouth Wanderers\n\nOrlanmouth Wanderers was founded in 1899. {PASSAGE}\n")
    (project / "features").mkdir()
    (project / "features" / "club.feature").write_text(FEATURE)
    run = project / "runs" / "r1"
    run.mkdir(parents=True)
    (run / "run.json").write_text(RunMetadata(run_id="r1", assistant="dense-rag", assistant_kind="dense-rag", started="2025-01-01T00:00:00Z").model_dump_json())
    common = {"run_id": "r1", "feature": "features/club.feature", "spec_id": "s", "scenario": "The club's history", "conversation_id": "history"}
    results = [
        TurnResult(**common, turn=1, query_type=QueryType.SINGLE_DOC, question="When was Orlanmouth Wanderers founded?", expected="1899",
                   answer="In 1899.", verdict=Verdict.PASS, feedback="the answer states '1899'", contexts=["text/club#1", "table/fixtures#2"]),
        TurnResult(**common, turn=2, query_type=QueryType.FILLER, question="Who coached them in 1995?", expected=COACH,
                   answer="Piet Varley, who came from Korrin Sporting.", verdict=Verdict.FAIL, feedback="judge score 4: misses the cup run"),
        TurnResult(**common, turn=3, query_type=QueryType.UNANSWERABLE, question="Who refereed the 1995 final?", expected="CANNOTANSWER",
                   answer="I cannot tell from the documents.", verdict=Verdict.PASS, feedback="declined"),
        TurnResult(**common, turn=0, verdict=Verdict.PASS, feedback="spec met"),
    ]
    (run / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in results))
    return project


def test_label_shows_each_turn_adds_each_label_at_once_and_goes_on_where_it_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _run_project(tmp_path / "p", monkeypatch)
    runner = CliRunner()
    first = runner.invoke(cli, ["judge", "label", "--out", "labels.jsonl", "--n", "2"], input="r\n  \nright year\ns\n", catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "added 1 label to labels.jsonl" in first.output and "say in a few words" in first.output  # a blank reason is asked again
    labelled = read_labelled(project / "labels.jsonl")
    assert len(labelled) == 1
    shown = [line.split(" · ")[2] for line in first.output.splitlines() if " · " in line]
    assert len(shown) == 2 and first.output.count("  judge:     ") == 2  # each turn with the judge's verdict

    second = runner.invoke(cli, ["judge", "label", "r1", "--out", "labels.jsonl"], input="w\nthe club is right, the cup run left out\nq\n",
                           catch_exceptions=False)
    assert second.exit_code == 0, second.output
    again = [line.split(" · ")[2] for line in second.output.splitlines() if " · " in line]
    assert again[0] == shown[1] and shown[0] not in again  # the labelled turn is skipped, the skipped one comes first
    records = [entry.answer for entry in read_labelled(project / "labels.jsonl")]
    assert len(records) == 2 and {r.origin.turn for r in records if r.origin} == {int(t.split()[1]) for t in shown}
    by_turn = {r.origin.turn: r for r in records if r.origin}
    for turn, record in by_turn.items():
        assert record.source == "dense-rag" and PASSAGE in record.passage  # the passage of the document the turn cites
        assert len(record.earlier) == 2 * (turn - 1)
        # what the assistant reported it used: the chunk's document, titled; a table's id is no text
        assert record.used == ([f"Orlanmouth Wanderers\nOrlanmouth Wanderers was founded in 1899. {PASSAGE}"] if turn == 1 else [])
    assert [r.label for r in records] == ["right", "wrong"]

    check = runner.invoke(cli, ["judge", "check", "--labelled", "labels.jsonl", "--json"], catch_exceptions=False)
    assert check.exit_code == 0 and json.loads(check.output)["labelled"] == 2


def test_label_says_so_when_every_turn_is_labelled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _run_project(tmp_path / "p", monkeypatch)
    Path("labelled.jsonl").touch()  # an empty file is a file with no labels yet
    runner = CliRunner()
    assert runner.invoke(cli, ["judge", "label"], input="r\nok\n" * 3, catch_exceptions=False).exit_code == 0
    done = runner.invoke(cli, ["judge", "label"], catch_exceptions=False)
    assert "every judged turn of run r1 is labelled in labelled.jsonl" in done.output
    assert len(read_labelled(Path("labelled.jsonl"))) == 3
    assert runner.invoke(cli, ["judge", "label", "--out", "labels.json"]).exit_code == 2
