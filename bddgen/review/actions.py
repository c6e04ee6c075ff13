"""A reviewer's actions, each written into the .feature file in place: under the project lock,
only when the file is still the version the page saw, atomically, and only if the result still
parses. The review sidecar records rejections (with their reasons) and edits."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from bddgen.errors import BddgenError, InputError, Problem
from bddgen.features.lint import is_lenient, text_checks
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.files import atomic_write
from bddgen.implement.context import Document
from bddgen.implement.provenance import FeatureProvenance, TurnProvenance, provenance_path, read_provenance
from bddgen.ner.base import EntityRecognizer
from bddgen.project import Project
from bddgen.project_lock import project_lock
from bddgen.review import lines as edit
from bddgen.review.checks import disagreements, recheck
from bddgen.review.lines import FileLines, locate, version
from bddgen.review.page import NOT_REVIEWED, SpecView, SuiteView, kept_records, shown_path, spec_view, suite_view
from bddgen.implement.review_record import RejectedConversation, RejectedTurn, ReviewRecord, TurnEdit, now, read_review, write_review
from bddgen.review.state import LOCKED_TAG, REJECTED_TAG, REVIEWED_TAG, ReviewCounts, review_counts
from bddgen.specs import Conversation, Turn

ActionName = Literal[
    "accept-turn", "accept-conversation", "edit-question", "edit-answer", "reject-turn", "reject-conversation", "lock", "unlock"
]


class Action(BaseModel):
    """One change a reviewer asks for, naming the file version it was made on."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The feature file as the page names it.")
    version: str = Field(description="The file version the page showed.")
    action: ActionName
    conversation: str
    turn: int | None = Field(default=None, ge=1)
    text: str = ""
    reason: str = ""


class StaleVersion(BddgenError):
    """The file changed since the page loaded it (another page, an editor, a command)."""


class Reviewer:
    """The suite under review: builds the page's data and applies actions to the files."""

    def __init__(self, project: Project, paths: list[Path], documents: Mapping[str, Document], recognizer: EntityRecognizer) -> None:
        self.project = project
        self.paths = [p.resolve() for p in paths]
        self.documents = documents
        self.recognizer = recognizer
        self._mutex = threading.Lock()  # one change at a time in this process; the project lock covers other processes

    def view(self) -> SuiteView:
        return suite_view(self.paths, self.project.root, self.documents, self.recognizer)

    def counts(self) -> ReviewCounts:
        """The suite's review counts from the files alone (no checks re-run)."""
        return review_counts(c for path in self.paths for c in _readable(path))

    def path_of(self, shown: str) -> Path:
        for path in self.paths:
            if shown_path(path, self.project.root) == shown:
                return path
        raise InputError(Problem(shown, "not a feature file under review"))

    def apply(self, action: Action) -> SpecView:
        path = self.path_of(action.path)
        with self._mutex, project_lock(self.project, "review", again="do it again on the page (nothing was written)"):
            text = path.read_text(encoding="utf-8")
            if version(text) != action.version:
                raise StaleVersion(f"{action.path} changed since this page loaded it (another page or program wrote it); reload to see the change, then try again")
            file = locate(text, action.path)
            document = read_feature_text(text, action.path)
            if not document.has_spec:
                raise InputError(Problem(action.path, NOT_REVIEWED))
            conversation = document.conversation(action.conversation)
            if conversation is None:
                raise InputError(Problem(action.path, f"no conversation {action.conversation!r} (reload the page)"))
            record = read_review(path) or ReviewRecord(spec_id=document.spec.id, feature=path.name)
            _apply(action, file, conversation, record, self._context(path))
            read_feature_text(file.text, action.path)  # the result must still be a valid suite file
            atomic_write(path, file.text)
            if action.action in ("edit-question", "edit-answer", "reject-turn", "reject-conversation"):
                write_review(path, record)
        return spec_view(path, self.project.root, self.documents, self.recognizer)[0]

    def _context(self, path: Path) -> "_Context":
        return _Context(self, read_provenance(provenance_path(path)))


def _readable(path: Path) -> list[Conversation]:
    """The conversations under review in a file: none in one that does not parse or has no spec."""
    try:
        document = read_feature(path)
    except InputError:
        return []
    return document.conversations if document.has_spec else []


@dataclass(frozen=True)
class _Context:
    """What an action looks things up in: the reviewer (corpus, recogniser) and the file's provenance."""

    reviewer: Reviewer
    provenance: FeatureProvenance | None

    def record_of(self, conversation_id: str, number: int) -> TurnProvenance | None:
        conversations = self.provenance.conversations if self.provenance is not None else []
        found = next((c for c in conversations if c.conversation_id == conversation_id), None)
        records = kept_records(found)
        return records[number - 1] if 0 < number <= len(records) else None


def _reason(action: Action) -> str:
    reason = " ".join(action.reason.split())
    if not reason:
        raise InputError(Problem(action.conversation, "a rejection needs a reason (it tells `bddgen implement` and the next reviewer why)"))
    return reason


def _numbered(file: FileLines, conversation: Conversation) -> dict[int, Turn]:
    return {t.number: turn for t, turn in zip(file.scenario(conversation.id).turns, conversation.turns)}


def _apply(action: Action, file: FileLines, conversation: Conversation, record: ReviewRecord, context: _Context) -> None:
    conv = action.conversation
    if action.action == "accept-conversation":
        for turn in file.scenario(conv).turns:
            edit.set_marks(file, conv, turn.number, add=("reviewed",))
        edit.add_tag(file, conv, REVIEWED_TAG)
        return
    if action.action == "reject-conversation":
        reason = _reason(action)
        edit.remove_tag(file, conv, REVIEWED_TAG)
        edit.add_tag(file, conv, REJECTED_TAG)
        edit.add_comment(file, conv, f"rejected: {reason}")
        record.rejected_conversations.append(
            RejectedConversation(conversation_id=conv, title=conversation.title, chain=conversation.chain, reason=reason, time=now())
        )
        return
    if action.action in ("lock", "unlock"):
        (edit.add_tag if action.action == "lock" else edit.remove_tag)(file, conv, LOCKED_TAG)
        return
    if action.turn is None:
        raise InputError(Problem(conv, f"{action.action} needs a turn number"))
    number = action.turn
    turns = _numbered(file, conversation)
    if number not in turns:
        raise InputError(Problem(conv, f"no turn {number} in this conversation (reload the page)"))
    turn = turns[number]
    if action.action == "accept-turn":
        edit.set_marks(file, conv, number, add=("reviewed",))
        if all("reviewed" in t.marks for n, t in turns.items() if n != number):
            edit.add_tag(file, conv, REVIEWED_TAG)
        return
    if action.action == "reject-turn":
        reason = _reason(action)
        provenance = context.record_of(conv, number)
        record.rejected_turns.append(RejectedTurn(
            conversation_id=conv, turn=number, query_type=turn.query_type, question=turn.question, answer=turn.answer,
            evidence=provenance.evidence if provenance else None, reason=reason, time=now(),
        ))
        edit.remove_turn(file, conv, number, f'rejected turn {number} ({turn.query_type.value}) "{turn.question}": {reason}')
        return
    _edit(action, file, conversation, turns, record, context)


def _edit(action: Action, file: FileLines, conversation: Conversation, turns: dict[int, Turn], record: ReviewRecord, context: _Context) -> None:
    conv, number = action.conversation, action.turn
    assert number is not None
    text = " ".join(action.text.split())
    if not text:
        raise InputError(Problem(f"turn {number}", "the new text is empty; reject the turn instead"))
    turn = turns[number]
    field: Literal["question", "answer"] = "question" if action.action == "edit-question" else "answer"
    before = getattr(turn, field)
    if text == before:
        return  # nothing changed: the turn keeps its marks
    refused, _ = text_checks(text, is_lenient(conversation))
    if refused:
        raise InputError([Problem(f"turn {number}", f"the new {field} {problem}; change it, nothing was written") for problem in refused])
    if field == "question":
        edit.set_question(file, conv, number, text)
    else:
        edit.set_answer(file, conv, number, text)
    changed = turn.model_copy(update={field: text})
    checks = recheck(changed, context.record_of(conv, number), context.reviewer.documents, context.reviewer.recognizer, {**turns, number: changed})
    disagree = disagreements(checks)
    problems = [f"{c.name}: {c.detail}" for c in checks if not c.passed]
    edit.set_marks(file, conv, number, add=("edited", *(("disagrees",) if disagree else ())), remove=("reviewed", *(() if disagree else ("disagrees",))))
    edit.remove_tag(file, conv, REVIEWED_TAG)
    record.edits.append(TurnEdit(conversation_id=conv, turn=number, field=field, before=before, after=text, problems=problems, time=now()))
