"""Fuzz: generated assistant answers (control characters, markup, formulas, huge, JSON-like) pass
through a conversation, the results file, the JUnit report and `bddgen report` intact: every
record reads back, the XML parses, report.csv starts no formula, and `bddgen report` ends with
exit 0 or 2 and a message, leaving the run's files as they were."""

from __future__ import annotations

import csv
import io
import tempfile
import threading
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from xml.sax.saxutils import quoteattr

from fuzz_strategies import hostile_text, output_folders, terminal_controls
from hypothesis import given
from hypothesis import strategies as st
from robustness_project import invoke

from bddgen.config import Settings
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import RunMetadata, Verdict
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.answers import cut_answer, read_full_answers
from bddgen.run.launcher import readable_junit
from bddgen.evaluation.session import ConversationPlan, ConversationSession
from bddgen.evaluation.store import RunStore
from bddgen.specs import Conversation, QueryType, Spec, Turn

SPEC = Spec.create("Fuzzed answers", ["a user"], ["they ask"], ["the assistant answers"])
answers = st.one_of(
    hostile_text,
    st.text(max_size=2000),
    st.integers(1000, 8000).map(lambda n: "long " * n),
    st.sampled_from(['{"answer": 1}', "<failure/>]]>", "&#0;&#x1b;", "=HYPERLINK(\"http://x\")", "\x00" * 10]),
)


class _Answering:
    name = "fuzz"

    def __init__(self, answer: str) -> None:
        self.answer = answer

    def respond(self, messages: list[Message]) -> AssistantReply:
        return AssistantReply(answer=self.answer, contexts=[self.answer[:50]])


def _records(answer: str, run_id: str = "fuzz") -> list:
    turns = [Turn(question=q, answer="Lisbon", query_type=QueryType.SINGLE_DOC) for q in ("Where?", "And then?")]
    plan = ConversationPlan("features/f.feature", SPEC, Conversation(id="c1", title="C", turns=turns), "C", judge_spec=True)
    judge = Judge(lambda: LanguageModel(ScriptedLM(default={"feedback": "graded", "score": 2, "error_category": "none"})))
    written: list = []
    session = ConversationSession(plan, 1, run_id, lambda: _Answering(answer), judge, written.extend)
    session.run_all(threading.Event())
    return written


@given(answer=answers)
def test_any_answer_is_recorded_and_read_back_unchanged(answer: str) -> None:
    """Up to [run] max_answer_chars an answer is recorded exactly; a longer one is recorded cut, with a
    marker, and read back whole from full-answers.jsonl."""
    records = _records(answer)
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder))
        store.append(records)
        loaded = [r for rs in store.load().values() for r in rs]
        whole = read_full_answers(Path(folder))
    limit = Settings().run.max_answer_chars
    assert [r.answer for r in loaded if r.turn] == [cut_answer(answer, limit)] * 2
    assert list(whole.values()) == ([answer] * 2 if len(answer) > limit else [])
    assert all(r.verdict in (Verdict.PASS, Verdict.FAIL, Verdict.ERROR) for r in loaded)


@given(answer=answers)
def test_a_junit_report_holding_any_answer_parses(answer: str) -> None:
    # behave escapes markup in attributes and CDATA but writes control characters as they are
    text = (
        f'<testsuite name="f" tests="1" failures="1"><testcase name="C" status="failed">'
        f'<failure message={quoteattr("answer: " + answer)}><![CDATA[{answer.replace("]]>", "]]]]><![CDATA[>")}]]></failure>'
        "</testcase></testsuite>"
    )
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "TESTS-f.xml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        root = readable_junit(path)
        assert root is not None and root.find("testcase/failure") is not None
        ElementTree.parse(path)  # the file itself is now readable by any XML tool


@given(answer=answers, garbage=st.lists(hostile_text, max_size=2))
def test_bddgen_report_of_any_answers_ends_with_exit_0_or_2(answer: str, garbage: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "bddgen.toml").write_text('corpus = "corpus"\n')
        run_dir = root / "runs" / "r1"
        run_dir.mkdir(parents=True)
        metadata = RunMetadata(run_id="r1", assistant=answer[:40] or "a", assistant_kind="fake", started="2026-01-01T00:00:00+00:00")
        (run_dir / "run.json").write_text(metadata.model_dump_json())
        lines = [r.model_dump_json() for r in _records(answer, "r1")] + [g.replace("\n", " ") for g in garbage if g.strip()]
        (run_dir / "results.jsonl").write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        before = {p.name: p.read_bytes() for p in run_dir.iterdir()}
        code, output = invoke(root, "report", "--no-coverage", "--format", "csv", "--format", "html")
        assert code in (0, 2) and output.strip(), output
        assert not terminal_controls.search(output), output  # the assistant's name is printed with its controls visible
        assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == before
        if code == 0:
            report = (root / "reports" / "r1" / "report.csv").read_text(encoding="utf-8")
            cells = [cell for row in csv.reader(io.StringIO(report)) for cell in row]
            assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r") or (c[:1] == "-" and not c[1:2].isdigit())]


@given(out=output_folders)
def test_bddgen_report_into_any_output_folder_ends_with_exit_0_or_2_before_printing(out: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "bddgen.toml").write_text('corpus = "corpus"\n')
        (root / "afile").write_text("a file, not a folder\n")
        run_dir = root / "runs" / "r1"
        run_dir.mkdir(parents=True)
        (run_dir / "run.json").write_text(RunMetadata(run_id="r1", assistant="a", assistant_kind="fake", started="2026-01-01T00:00:00+00:00").model_dump_json())
        (run_dir / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in _records("Lisbon", "r1")), encoding="utf-8")
        code, output = invoke(root, "report", "--no-coverage", "--format", "json", "--out", out)
        assert code in (0, 2) and output.strip(), output
        if code == 2:
            assert output.startswith("error:") or "Usage:" in output, output  # nothing of the report is printed first
        else:
            assert (root / out / "report.json").is_file()


@given(hostile_text, hostile_text)
def test_the_names_an_answer_invents_are_its_own_capitalised_words_the_context_never_says(answer: str, context: str) -> None:
    from bddgen.answer_checks import new_names

    invented = new_names(answer, context)
    assert len(invented) == len(set(invented))
    assert all(name and name[0].isupper() and name in answer for name in invented)
    assert new_names(answer, f"{context} {answer}") == []  # said before, nothing is invented
