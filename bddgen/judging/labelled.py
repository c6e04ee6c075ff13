"""Labelled answers: an assistant's answers a person marked right or wrong, one JSON object a line (a `.jsonl` file)
or a JSON array (a `.json` file). `bddgen judge label` appends to such a file; `bddgen judge check --labelled` grades
every answer with the run's judge and counts how often it agrees with the person."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.errors import InputError, Problem
from bddgen.lm.base import Message
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Turn

LABELLED_FORMAT = "labelled.jsonl"
"""The format's name in schemas/ (`labelled.jsonl.schema.json`: the schema of one answer, a line of the file)."""

Label = Literal["right", "wrong"]
LabelKey = tuple[str, str, str, int, int]
"""A run's turn: run id, feature, conversation id, turn number, repeat."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EarlierMessage(_Strict):
    """A message of the conversation before the labelled answer's question."""

    role: Literal["user", "assistant"]
    content: str


class LabelOrigin(_Strict):
    """The turn of a run the answer comes from (written by `bddgen judge label`, which skips a turn already labelled)."""

    run_id: str = Field(min_length=1)
    feature: str = Field(min_length=1, description="Path of the .feature file, relative to the project root.")
    conversation_id: str
    turn: int = Field(ge=1)
    repeat: int = Field(default=1, ge=1)

    @property
    def key(self) -> LabelKey:
        return self.run_id, self.feature, self.conversation_id, self.turn, self.repeat


class LabelledAnswer(_Strict):
    """One answer of an assistant, the person's label of it, and what the judge needs to grade it."""

    question: str = Field(min_length=1, description="The question the assistant answered.")
    reference: str = Field(min_length=1, description=f"The reference answer, or {CANNOT_ANSWER} when the documents do not answer the question.")
    answer: str = Field(description="The assistant's answer.")
    label: Label = Field(description="The person's verdict: right (the judge should pass it) or wrong (it should fail it).")
    reason: str = Field(pattern=r"^[^\r\n]*\S[^\r\n]*$", description="Why the answer is right or wrong, in one line.")
    source: str = Field(min_length=1, description="Which assistant (and model) gave the answer.")
    query_type: QueryType = Field(description="What the question asks: SINGLE-DOC, SYNTHESIS, UNANSWERABLE, ...")
    passage: str = Field(
        default="", description="The evidence: the passage the reference answer was written from (its true details are no error)."
    )
    used: list[str] = Field(
        default_factory=list,
        description="The documents the assistant reported it used, as text: an answer to an open question ('some of the clubs') "
        "may be right by them where it gives other examples than the reference.",
    )
    exact: str | None = Field(default=None, min_length=1, description="A value the answer must state (`Then the answer should contain`).")
    earlier: list[EarlierMessage] = Field(
        default_factory=list, description="The conversation before the question, which tells what 'it' or 'they' refer to."
    )
    origin: LabelOrigin | None = Field(default=None, description="The run's turn the answer comes from (`bddgen judge label`).")

    def turn(self, doc_id: str) -> Turn:
        """The answer's question as a turn of a conversation; it cites `doc_id` (the passage's id) when it has a passage."""
        exact = ExactExpectation(table_id="", operation="lookup", value=self.exact) if self.exact else None
        return Turn(question=self.question, answer=self.reference, query_type=self.query_type,
                    doc_ids=[doc_id] if self.passage.strip() else [], exact=exact)

    def history(self) -> list[Message]:
        return [Message(m.role, m.content) for m in self.earlier]


@dataclass(frozen=True)
class LabelledLine:
    """A labelled answer and the line of the file it starts on."""

    line: int
    answer: LabelledAnswer


def _problem(exc: ValidationError) -> str:
    """What is wrong with a record, field by field, and where the format is described."""
    found = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "missing":
            found.append(f"missing field {where!r}")
        elif error["type"] == "extra_forbidden":
            found.append(f"unknown field {where!r}")
        else:
            found.append(f"{where or 'the line'}: {error['msg']}")
    required = ", ".join(name for name, field in LabelledAnswer.model_fields.items() if field.is_required())
    return f"{'; '.join(found)} (a labelled answer has {required}; see schemas/{LABELLED_FORMAT}.schema.json)"


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


Found = tuple[list[tuple[int, Any]], list[tuple[int, str]]]
"""JSON values and problems, each with the line it is on."""


def _json_lines(text: str) -> Found:
    """Each non-blank line's JSON value with its line number, and the lines that are not JSON."""
    values: list[tuple[int, Any]] = []
    problems: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):  # not splitlines: U+2028 may stand inside a JSON string
        if not line.strip():
            continue
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as exc:
            problems.append((number, f"not valid JSON ({exc.msg}, column {exc.colno}): one labelled answer a line"))
        except RecursionError:
            problems.append((number, "not a labelled answer: JSON nested too deeply"))
    return values, problems


def _skip_space(text: str, index: int) -> int:
    while index < len(text) and text[index] in " \t\r\n":
        index += 1
    return index


def _json_array(text: str) -> Found:
    """Each item of a JSON array with the line it starts on; the first syntax error ends the reading."""
    decoder = json.JSONDecoder()
    index = _skip_space(text, 0)
    if not text.startswith("[", index):
        return [], [(_line_of(text, index), "expected a JSON array of labelled answers ([{...}, ...])")]
    values: list[tuple[int, Any]] = []
    index = _skip_space(text, index + 1)
    closed = text.startswith("]", index)
    while not closed:
        try:
            value, end = decoder.raw_decode(text, index)
        except json.JSONDecodeError as exc:
            return values, [(exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno})")]
        except RecursionError:
            return values, [(_line_of(text, index), "not a labelled answer: JSON nested too deeply")]
        values.append((_line_of(text, index), value))
        index = _skip_space(text, end)
        if text.startswith(",", index):
            index = _skip_space(text, index + 1)
        elif text.startswith("]", index):
            closed = True
        else:
            return values, [(_line_of(text, index), "expected ',' or ']' after a labelled answer")]
    if _skip_space(text, index + 1) < len(text):
        return values, [(_line_of(text, index + 1), "text after the array's closing ']'")]
    return values, []


def read_labelled(path: Path) -> list[LabelledLine]:
    """The labelled answers of `path` (`.json`: an array; any other name: JSON Lines). InputError names the file and
    line of every bad record: not JSON, a missing or unknown field, a bad value."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(Problem(str(path), "not UTF-8 text: save the labelled answers as UTF-8 JSON Lines"), title="invalid labelled answers") from None
    except OSError as exc:
        raise InputError(Problem(str(path), f"cannot read it ({exc.strerror or exc})"), title="invalid labelled answers") from None
    values, problems = _json_array(text) if path.suffix.lower() == ".json" else _json_lines(text)
    found: list[LabelledLine] = []
    for number, value in values:
        try:
            found.append(LabelledLine(number, LabelledAnswer.model_validate(value)))
        except ValidationError as exc:
            problems.append((number, _problem(exc)))
    if problems:
        raise InputError([Problem(f"{path}:{number}", why) for number, why in sorted(problems)], title="invalid labelled answers")
    if not found:
        raise InputError(Problem(str(path), "no labelled answers: one JSON object a line (`bddgen judge label` writes them)"),
                         title="invalid labelled answers")
    return found


def append_labelled(path: Path, answer: LabelledAnswer) -> None:
    """Add `answer` as the last line of the JSON Lines file `path` (made, with its folder, when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    ends_open = False
    if path.is_file() and path.stat().st_size:
        with path.open("rb") as existing:
            existing.seek(-1, 2)
            ends_open = existing.read(1) != b"\n"
    with path.open("a", encoding="utf-8") as file:
        file.write(("\n" if ends_open else "") + answer.model_dump_json(exclude_defaults=True) + "\n")
