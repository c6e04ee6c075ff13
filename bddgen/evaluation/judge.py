"""The judge: deterministic checks where they decide, then an LLM grade (PASS from `[run] passing_score`, 5 by default)."""

from __future__ import annotations

import threading
from typing import Callable, Sequence

from bddgen.config import JudgeMethod, RunSettings, default_of
from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import ASSISTANT, USER, Line, render_history, render_transcript
from bddgen.models import Document, PolicyDocument, TextDocument
from bddgen.results import JUDGE_ERROR, Judgement, Verdict
from bddgen.normalise import content_stems
from bddgen.answer_checks import contains_exact, is_refusal, new_names, new_numbers, same_answer
from bddgen.evaluation.claims import CLAIMS_CHECK, verify_claims
from bddgen.evaluation.open_answer import judge_open
from bddgen.evaluation.reference_match import (
    DEFAULT_TOLERANCES, Tolerances, adds_claims, altered_quote, contradicted_number, match_reference, quotes_reference, states_names,
)
from bddgen.evaluation.tasks import (
    ABSTENTION_REFERENCE,
    ABSTENTION_RUBRIC,
    ANSWER_RUBRIC,
    JUDGE_ANSWER,
    JUDGE_CONVERSATION,
    JUDGE_TURN,
    SPEC_RUBRIC,
    TOOL_CATEGORY,
)
from bddgen.specs import CANNOT_ANSWER, Spec, Turn

STAGE = "run"
TOOL_KINDS = ("react-rag", "airline-agent")
"""Built-in assistants that call tools; another assistant has tools when a workflow manifest describes them."""
SNIPPET_MIN_WORDS = 8
"""A context the assistant reports that names no document of the corpus is read as text it used from this many words."""
GOAL_CATEGORY = "goal not achieved"
"""The error category of a conversation the judge finds short of a goal step's goal."""
GOAL_RUBRIC = (
    "[Does the conversation achieve the goal the specification states? Judge what the assistant did and said (its tool "
    "calls and what they returned are shown), not what it promised, and only the goal, not the style.]\n"
    "Score 1: The goal is not achieved, or the conversation works against it.\n"
    "Score 2: A small part of the goal is achieved.\n"
    "Score 3: About half of the goal is achieved.\n"
    "Score 4: The goal is achieved but for a minor part of it.\n"
    "Score 5: The goal is fully achieved."
)


def expects_abstention(turn: Turn) -> bool:
    return turn.answer.strip() == CANNOT_ANSWER


class CitedPassages:
    """The passage of a corpus's text or policy document by id ('' for a table or an unknown id: a whole table's
    numbers would make any number 'stated'), the documents read from `documents` on first need; `titled` gives the
    same with its title on a line before it (what the document is about, which the open-question check reads)."""

    def __init__(self, documents: Callable[[], Sequence[Document]]) -> None:
        self._documents = documents
        self._read: dict[str, tuple[str, str]] | None = None
        self._lock = threading.Lock()

    def _document(self, doc_id: str) -> tuple[str, str] | None:
        with self._lock:
            if self._read is None:
                self._read = {d.id: (d.title, d.passage) for d in self._documents() if isinstance(d, (TextDocument, PolicyDocument))}
        return self._read.get(doc_id)

    def __call__(self, doc_id: str) -> str:
        found = self._document(doc_id)
        return found[1] if found is not None else ""

    def titled(self, doc_id: str) -> str:
        found = self._document(doc_id)
        return f"{found[0]}\n{found[1]}" if found is not None else ""


def used_passages(cited: Callable[[str], str] | None, contexts: Sequence[str]) -> list[str]:
    """What an assistant reports it used (its reply's contexts), as text: a context naming a document of the corpus or
    one of its chunks ('doc-id#2') is the document's text (`cited`: its passage, or its title and passage); one naming
    none, of `SNIPPET_MIN_WORDS` words or more, the text it read; anything else (a table's id, an unknown id) nothing."""
    found = []
    for context in contexts:
        passage = (cited(context) or cited(context.split("#")[0])) if cited is not None else ""
        found.append(passage or (context if len(context.split()) >= SNIPPET_MIN_WORDS else ""))
    return list(dict.fromkeys(text for text in found if text.strip()))


class Judge:
    """Judges turns and conversations. The model is obtained from `lm_provider` on first need only, so a
    suite decided by deterministic checks never loads one."""

    def __init__(
        self,
        lm_provider: Callable[[], LanguageModel],
        *,
        tools: bool = False,
        cited: Callable[[str], str] | None = None,
        titled: Callable[[str], str] | None = None,
        passing_score: int = default_of(RunSettings, "passing_score"),
        tolerances: Tolerances = DEFAULT_TOLERANCES,
        method: JudgeMethod = default_of(RunSettings, "judge_method"),
    ) -> None:
        """`tools`: the assistant calls tools, so 'wrong tool or order' is a category the model may name. `cited`: the
        passage of a document a turn cites (`CitedPassages`), where an answer's claims beyond the reference may be found;
        `titled` the same with the document's title before it (default `cited`), read by the open-question check.
        `passing_score`: the model's score (1-5) from which an answer or conversation passes. `tolerances`: how the
        deterministic checks read a reference (`Tolerances.of(settings.run)`). `method`: how the model grades an answer the
        checks leave to it (`[run] judge_method`: a rubric grade, or the claims of the reference one by one)."""
        self._lm_provider = lm_provider
        self.tools = tools
        self._cited = cited
        self._titled = titled or cited
        self.passing_score = passing_score
        self.tolerances = tolerances
        self.method = method
        self._lm: LanguageModel | None = None
        self._lock = threading.Lock()

    @property
    def lm(self) -> LanguageModel:
        with self._lock:
            if self._lm is None:
                self._lm = self._lm_provider()
            return self._lm

    def judge_turn(self, turn: Turn, answer: str, history: list[Message], used: Sequence[str] = ()) -> Judgement:
        """The verdict against the reference (`_against_reference`); an answer to a question asking for some of a kind
        that fails it is judged again by the documents (`judge_open`): those the turn cites and those the assistant
        reports it `used` (ids of the corpus's documents or chunks, or text)."""
        judgement = self._against_reference(turn, answer, history)
        if judgement.verdict != Verdict.FAIL or turn.exact is not None or expects_abstention(turn) or is_refusal(answer):
            return judgement
        return judge_open(turn.question, answer, history, self._documents(turn, used), judgement)

    def _documents(self, turn: Turn, used: Sequence[str]) -> list[str]:
        """The passages of the documents the turn cites and of those the assistant used (`used_passages`)."""
        cited = [self._titled(doc_id) for doc_id in turn.doc_ids] if self._titled is not None else []
        return list(dict.fromkeys(d for d in [*cited, *used_passages(self._titled, used)] if d.strip()))

    def _against_reference(self, turn: Turn, answer: str, history: list[Message]) -> Judgement:
        """Exact value (see `_judge_exact`) → abstention (a refusal, or an invented number or name where none is expected) → same
        answer (or the whole reference quoted, adding no negation or number) → a number of the reference replaced by another of its kind → reference parts (every part stated,
        or nothing of a part) → LLM grade, stopping at
        the first check that decides."""
        said = " ".join([turn.question, *(m.content for m in history)])
        if turn.exact is not None:
            return self._judge_exact(turn, answer, history, said)
        refused = is_refusal(answer)
        if expects_abstention(turn):
            if refused:
                return Judgement(Verdict.PASS, "the assistant said it cannot answer, as expected", checks=("abstention",))
            guessed = new_numbers(answer, said) or new_names(answer, said)
            if guessed:
                return Judgement(
                    Verdict.FAIL,
                    f"the documents do not answer this, yet the assistant states {', '.join(guessed)}",
                    checks=("abstention",),
                )
            return self._grade(turn.question, answer, ABSTENTION_REFERENCE, ABSTENTION_RUBRIC, history, ("abstention",))
        if refused:
            return Judgement(
                Verdict.FAIL,
                f"the assistant said it cannot answer, but the documents do: {turn.answer}",
                error_category="retrieval",
                checks=("abstention",),
            )
        if same_answer(answer, turn.answer):
            return Judgement(Verdict.PASS, "the answer is the reference answer", checks=("abstention", "same-answer"))
        altered = altered_quote(answer, turn.answer)
        if altered:
            return Judgement(Verdict.FAIL, f"{altered} (reference: {turn.answer})", checks=("abstention", "quotes-reference"))
        if quotes_reference(answer, turn.answer) and not self._adds_claims(turn, answer, said):
            return Judgement(Verdict.PASS, "the answer states every clause of the reference answer", checks=("abstention", "quotes-reference"))
        replaced = contradicted_number(answer, turn.answer, self.tolerances.unit)
        if replaced:
            return Judgement(Verdict.FAIL, f"the answer states {replaced} (reference: {turn.answer})", checks=("abstention", "reference-parts"))
        decided = match_reference(answer, turn.answer, turn.query_type, said, self.tolerances)
        if decided is not None:
            verdict = Verdict.PASS if decided.passed else Verdict.FAIL
            return Judgement(verdict, decided.reason, checks=("abstention", "reference-parts"))
        return self._grade_answer(turn, answer, history, ("abstention", "reference-parts"))

    def _judge_exact(self, turn: Turn, answer: str, history: list[Message], said: str) -> Judgement:
        """The exact value decides, alone when the turn states no reference answer but the value; otherwise unless the
        answer alters a quote of the reference or states nothing of a part of it (FAIL), or
        beside the value leaves out a name of the reference, negates, or adds a number it does not (the model
        grades it)."""
        value = turn.exact.value if turn.exact is not None else ""
        if not contains_exact(answer, value):
            return Judgement(Verdict.FAIL, f"the answer does not state the exact value {value!r}", checks=("exact",))
        if turn.exact is not None and turn.exact.alone:  # no reference answer but the value: a containment check
            return Judgement(Verdict.PASS, f"the answer states the exact value {value!r}", checks=("exact",))
        altered = altered_quote(answer, turn.answer)
        if altered:
            return Judgement(Verdict.FAIL, f"the answer states the exact value {value!r} but {altered}", checks=("exact", "quotes-reference"))
        decided = match_reference(answer, turn.answer, turn.query_type, said, self.tolerances)
        if decided is not None and not decided.passed:
            return Judgement(Verdict.FAIL, f"the answer states the exact value {value!r} but {decided.reason}", checks=("exact", "reference-parts"))
        replaced = contradicted_number(answer, turn.answer, self.tolerances.unit)
        if replaced:
            return Judgement(Verdict.FAIL, f"the answer states the exact value {value!r} but {replaced}", checks=("exact", "reference-parts"))
        if decided is None and (self._adds_claims(turn, answer, said) or not states_names(answer, turn.answer)):
            return self._grade_answer(turn, answer, history, ("exact", "reference-parts"))
        return Judgement(Verdict.PASS, f"the answer states the exact value {value!r}", checks=("exact",))

    def _adds_claims(self, turn: Turn, answer: str, said: str) -> bool:
        """Whether the answer claims more than the reference (a negation, a number) that neither the conversation nor
        the documents the turn cites state: true detail from the turn's own source is no error."""
        if not adds_claims(answer, turn.answer, said, self.tolerances.unit):
            return False
        cited = self._passage(turn)
        return not cited.strip() or adds_claims(answer, turn.answer, f"{said} {cited}", self.tolerances.unit)

    def _passage(self, turn: Turn) -> str:
        """The passages of the documents the turn cites ('' for none, a table or an unknown id)."""
        return " ".join(self._cited(doc_id) for doc_id in turn.doc_ids) if self._cited is not None else ""

    def judge_conversation(self, spec: Spec, exchanges: list[tuple[str, str]], references: list[str] | None = None) -> Judgement:
        """Grade the whole (question, answer) transcript against the spec's Given/When/Then, on what its turns
        cover: a conversation with reference answers whose questions and references share no word with the spec
        fails without a model call (it cannot show the spec's behaviour); otherwise the model sees each turn's
        reference answer (a conversation judged as a whole, with none, is graded on its transcript)."""
        references = references or [""] * len(exchanges)
        asked = content_stems(" ".join(q + " " + r for (q, _), r in zip(exchanges, references)))
        if any(references) and not asked & content_stems(spec.as_text()):  # a conversation without references is judged as a whole
            return Judgement(
                Verdict.FAIL,
                "no turn of this conversation touches the spec: its questions and reference answers share no word with "
                "the spec's Given/When/Then, so it cannot show that behaviour (implement it again, or edit the spec)",
                checks=("spec-coverage",),
            )
        lines: list[Line] = []
        for (question, answer), reference in zip(exchanges, references):
            lines += [(USER, question), *([("Reference answer", reference)] if reference else []), (ASSISTANT, answer)]
        transcript = render_transcript(lines)
        try:
            grade = self.lm.run(  # the rubric first: it is the same on every call, so the prompt cache keeps it
                JUDGE_CONVERSATION, stage=STAGE, score_rubric=SPEC_RUBRIC, specification=spec.as_text(), response=transcript
            )
        except LMOutputError as exc:
            return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR)
        verdict = Verdict.PASS if grade.score >= self.passing_score else Verdict.FAIL
        return Judgement(verdict, grade.feedback, score=grade.score, checks=("spec-coverage",))

    def judge_goal(self, goal: str, transcript: list[Line]) -> Judgement:
        """Whether the conversation (`transcript`: the user's messages, the assistant's tool calls with their results,
        its answers) achieves `goal`, graded like a conversation against its spec, with the goal as the spec's Then
        line: PASS from the passing score, else FAIL with the judge's reason; an unusable reply is the judge's ERROR."""
        try:
            grade = self.lm.run(
                JUDGE_CONVERSATION, stage=STAGE, score_rubric=GOAL_RUBRIC, specification=f"Then the conversation achieves this goal: {goal}",
                response=render_transcript(transcript),
            )
        except LMOutputError as exc:
            return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR, checks=("goal",))
        passed = grade.score >= self.passing_score
        verdict, category = (Verdict.PASS, "") if passed else (Verdict.FAIL, GOAL_CATEGORY)
        return Judgement(verdict, f"judge score {grade.score}: {grade.feedback}", grade.score, category, ("goal",))

    def _grade_answer(self, turn: Turn, answer: str, history: list[Message], checks: tuple[str, ...]) -> Judgement:
        """The model's verdict on an answer to an answerable turn, by `method`: a rubric grade against the reference, or
        the reference's claims one by one (`verify_claims`)."""
        if self.method == "claims":
            return verify_claims(self.lm, turn, answer, self._passage(turn), checks, self.tolerances)
        return self._grade(turn.question, answer, turn.answer, ANSWER_RUBRIC, history, checks)

    def _grade(
        self, question: str, answer: str, reference: str, rubric: str, history: list[Message], checks: tuple[str, ...]
    ) -> Judgement:
        """The model's grade of this turn: its question, reference and answer under their own headings, the earlier
        conversation before them only to resolve what the question refers to."""
        try:
            grade = self.lm.run(  # what repeats from call to call first (the rubric, the conversation), for the prompt cache
                JUDGE_TURN if self.tools else JUDGE_ANSWER, stage=STAGE, score_rubric=rubric,
                earlier_conversation=render_history(history), question=question, reference_answer=reference, response=answer,
            )
        except LMOutputError as exc:
            return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR, checks=checks)
        passed = grade.score >= self.passing_score
        category = "" if passed or grade.error_category == "none" or (grade.error_category == TOOL_CATEGORY and not self.tools) else grade.error_category
        return Judgement(Verdict.PASS if passed else Verdict.FAIL, grade.feedback, grade.score, category, checks)


def run_judge(
    settings: RunSettings, lm_provider: Callable[[], LanguageModel], *, tools: bool, documents: Callable[[], Sequence[Document]]
) -> Judge:
    """The judge `bddgen run` grades with and `bddgen judge check` qualifies: the project's [run] passing_score,
    tolerances and judge_method, the passages of `documents` (read on first need) for a turn's cited documents."""
    cited = CitedPassages(documents)
    return Judge(lm_provider, tools=tools, cited=cited, titled=cited.titled, passing_score=settings.passing_score,
                 tolerances=Tolerances.of(settings), method=settings.judge_method)


def by_model(judgement: Judgement) -> bool:
    """Whether the judge model decided `judgement`: a rubric score, or the claims method's questions (no deterministic
    check decided it)."""
    return judgement.score is not None or CLAIMS_CHECK in judgement.checks
