"""An assistant's answer as a run keeps it: at most `[run] max_answer_chars` characters in
results.jsonl, judge prompts (so the LM log) and reports, cut with a marker that says so; the whole
of a longer answer is kept once, in the run's full-answers.jsonl, so one runaway assistant cannot
fill a disk with copies of it."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from pydantic import BaseModel, ConfigDict, ValidationError

from bddgen.errors import InputError, Problem

FULL_ANSWERS_FILE = "full-answers.jsonl"
CUT_MARKER = "[… answer cut here by bddgen: {kept:,} of its {total:,} characters are shown; the whole answer is in {file}]"


class FullAnswer(BaseModel):
    """One line of full-answers.jsonl: the whole answer of a turn whose record holds a cut one."""

    model_config = ConfigDict(extra="forbid")

    feature: str
    conversation_id: str
    repeat: int
    turn: int
    answer: str


def cut_answer(answer: str, limit: int) -> str:
    """`answer` itself when it has at most `limit` characters, else its first `limit` and the marker."""
    if len(answer) <= limit:
        return answer
    return answer[:limit] + "\n" + CUT_MARKER.format(kept=limit, total=len(answer), file=FULL_ANSWERS_FILE)


def full_answer_lines(answers: Iterable[FullAnswer]) -> bytes:
    return "".join(answer.model_dump_json() + "\n" for answer in answers).encode("utf-8")


def read_full_answers(run_dir: Path) -> dict[tuple[str, str, int, int], str]:
    """(feature, conversation id, repeat, turn) -> the whole answer, from the run's full-answers.jsonl
    ({} when no answer was cut); a conversation run again after an interruption keeps its last line."""
    path = run_dir / FULL_ANSWERS_FILE
    if not path.is_file():
        return {}
    found: dict[tuple[str, str, int, int], str] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith("\n"):
                break  # cut off by a kill: its conversation is run again
            try:
                answer = FullAnswer.model_validate_json(line)
            except ValidationError as exc:
                raise InputError(Problem(f"{path}:{number}", f"not a full answer: {exc.errors()[0]['msg']}")) from exc
            found[(answer.feature, answer.conversation_id, answer.repeat, answer.turn)] = answer.answer
    return found
