"""Where each conversation and turn of a .feature file is, line by line, and edits of those lines
that leave every other line (comments, blank lines, indentation, the spec) exactly as it was."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from bddgen.errors import InputError, Problem
from bddgen.features.languages import phrases
from bddgen.features.reader import parse_gherkin
from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS, decode_tag_value, quote
from bddgen.specs import TURN_MARKS

_TURN_COMMENT = re.compile(r"^(?P<indent>\s*)#\s*turn\s+(?P<number>\d+)\s*\|(?P<fields>.*)$")


def version(text: str) -> str:
    """The version a page saw: a hash of the whole file (any change by anyone makes a new one)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class Step:
    line: int  # 0-based index into the file's lines
    column: int  # 1-based column of the keyword (gherkin's)
    keyword: str


@dataclass
class TurnLines:
    number: int  # from the `# turn N` comment, else the position in the scenario
    ask: Step
    comment: int | None = None
    answer: Step | None = None
    contains: Step | None = None

    @property
    def last(self) -> int:
        return max(s.line for s in (self.ask, self.answer, self.contains) if s is not None)


@dataclass
class ScenarioLines:
    conversation_id: str
    scenario: int
    tags: list[tuple[int, int, str]] = field(default_factory=list)  # (line, column, name)
    turns: list[TurnLines] = field(default_factory=list)

    @property
    def first(self) -> int:
        return min([self.scenario, *(line for line, _, _ in self.tags)])

    def turn(self, number: int) -> TurnLines:
        found = next((t for t in self.turns if t.number == number), None)
        if found is None:
            raise InputError(Problem(self.conversation_id, f"no turn {number} in this conversation (reload the page)"))
        return found


@dataclass
class FileLines:
    """The lines of one .feature file and where its conversations are."""

    lines: list[str]
    language: str
    scenarios: dict[str, ScenarioLines]

    @property
    def text(self) -> str:
        return "".join(self.lines)

    def scenario(self, conversation_id: str) -> ScenarioLines:
        if conversation_id not in self.scenarios:
            raise InputError(Problem(conversation_id, "no such conversation in the file (reload the page)"))
        return self.scenarios[conversation_id]


def _step(step: dict[str, Any]) -> Step:
    return Step(line=step["location"]["line"] - 1, column=step["location"]["column"], keyword=step["keyword"])


def _scenarios(feature: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for child in feature.get("children", []):
        if "rule" in child:
            found += [c["scenario"] for c in child["rule"].get("children", []) if "scenario" in c]
        elif "scenario" in child:
            found.append(child["scenario"])
    return found


def locate(text: str, source: str) -> FileLines:
    """Parse `text` and find every conversation's tag, scenario and turn lines."""
    ast = parse_gherkin(text, source)
    feature = ast.get("feature") or {}
    lines = text.splitlines(keepends=True)
    scenarios: dict[str, ScenarioLines] = {}
    for scenario in _scenarios(feature):
        steps = scenario.get("steps", [])
        if not any(ASK.match(s["text"].strip()) for s in steps):
            continue
        tags = [(t["location"]["line"] - 1, t["location"]["column"], t["name"]) for t in scenario.get("tags", [])]
        conv_id = next(
            (decode_tag_value(name.split(":", 1)[1]) for _, _, name in tags if name.startswith("@conv:")), f"line-{scenario['location']['line']}"
        )
        found = ScenarioLines(conversation_id=conv_id, scenario=scenario["location"]["line"] - 1, tags=tags)
        for step in steps:
            text_ = step["text"].strip()
            if ASK.match(text_):
                at = _step(step)
                comment = _TURN_COMMENT.match(lines[at.line - 1].rstrip("\r\n")) if at.line > 0 else None
                number = int(comment.group("number")) if comment else len(found.turns) + 1
                found.turns.append(TurnLines(number=number, ask=at, comment=at.line - 1 if comment else None))
            elif found.turns and (AGREE.match(text_) or ABSTAIN.match(text_)):
                found.turns[-1].answer = _step(step)
            elif found.turns and CONTAINS.match(text_):
                found.turns[-1].contains = _step(step)
        scenarios[conv_id] = found
    return FileLines(lines=lines, language=feature.get("language") or "en", scenarios=scenarios)


def _ending(line: str) -> str:
    return line[len(line.rstrip("\r\n")):] or "\n"


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _replace_step(lines: list[str], step: Step, text: str) -> None:
    old = lines[step.line]
    lines[step.line] = old[: step.column - 1] + step.keyword + text + _ending(old)


def set_question(file: FileLines, conversation_id: str, number: int, question: str) -> None:
    turn = file.scenario(conversation_id).turn(number)
    _replace_step(file.lines, turn.ask, phrases(file.language).ask.format(question=quote(question)))


def set_answer(file: FileLines, conversation_id: str, number: int, answer: str) -> None:
    turn = file.scenario(conversation_id).turn(number)
    if turn.answer is None or ABSTAIN.match(file.lines[turn.answer.line][turn.answer.column - 1 + len(turn.answer.keyword):].strip()):
        raise InputError(Problem(f"turn {number}", "an unanswerable turn has no reference answer to edit; reject it instead"))
    _replace_step(file.lines, turn.answer, phrases(file.language).agree.format(answer=quote(answer)))


def set_marks(file: FileLines, conversation_id: str, number: int, add: tuple[str, ...] = (), remove: tuple[str, ...] = ()) -> None:
    """Add or remove review marks in the turn's `# turn N | ...` comment (written when it has none)."""
    turn = file.scenario(conversation_id).turn(number)
    if turn.comment is None:
        indent = _indent(file.lines[turn.ask.line])
        file.lines.insert(turn.ask.line, f"{indent}# turn {number} |{_ending(file.lines[turn.ask.line])}")
        _shift(file, turn.ask.line, 1)
        turn.comment = turn.ask.line - 1
    old = file.lines[turn.comment]
    match = _TURN_COMMENT.match(old.rstrip("\r\n"))
    assert match is not None
    fields = [f.strip() for f in match.group("fields").split("|") if f.strip()]
    kept = [f for f in fields if f not in TURN_MARKS]
    marks = [m for m in TURN_MARKS if (m in fields or m in add) and m not in remove]
    file.lines[turn.comment] = f"{match.group('indent')}# turn {match.group('number')} | {' | '.join([*kept, *marks])}{_ending(old)}"


def add_tag(file: FileLines, conversation_id: str, tag: str) -> None:
    scenario = file.scenario(conversation_id)
    if any(name == tag for _, _, name in scenario.tags):
        return
    if scenario.tags:
        line = max(line for line, _, _ in scenario.tags)
        old = file.lines[line]
        file.lines[line] = old.rstrip("\r\n").rstrip() + f" {tag}" + _ending(old)
        return
    indent = _indent(file.lines[scenario.scenario])
    file.lines.insert(scenario.scenario, f"{indent}{tag}{_ending(file.lines[scenario.scenario])}")
    _shift(file, scenario.scenario, 1)


def remove_tag(file: FileLines, conversation_id: str, tag: str) -> None:
    for line, _, name in file.scenario(conversation_id).tags:
        if name == tag:
            old = file.lines[line]
            file.lines[line] = re.sub(rf"(?<!\S){re.escape(tag)}(?!\S)[ \t]*", "", old.rstrip("\r\n")).rstrip() + _ending(old)


def add_comment(file: FileLines, conversation_id: str, comment: str) -> None:
    """A `# ...` line above the conversation's tags."""
    scenario = file.scenario(conversation_id)
    at = scenario.first
    file.lines.insert(at, f"{_indent(file.lines[at])}# {quote(comment)}{_ending(file.lines[at])}")
    _shift(file, at, 1)


def remove_turn(file: FileLines, conversation_id: str, number: int, note: str) -> None:
    """Delete the turn's comment and steps, leaving a `# ...` note in their place."""
    scenario = file.scenario(conversation_id)
    if len(scenario.turns) == 1:
        raise InputError(Problem(conversation_id, "the conversation's only turn; reject the conversation instead"))
    turn = scenario.turn(number)
    start = turn.comment if turn.comment is not None else turn.ask.line
    indent = _indent(file.lines[turn.ask.line])
    removed = turn.last - start + 1
    file.lines[start : turn.last + 1] = [f"{indent}# {quote(note)}{_ending(file.lines[start])}"]
    scenario.turns.remove(turn)
    _shift(file, start + 1, 1 - removed)


def _shift(file: FileLines, at: int, by: int) -> None:
    """Move every recorded line index at or after `at` by `by` (after an insertion or deletion)."""

    def moved(line: int) -> int:
        return line + by if line >= at else line

    for scenario in file.scenarios.values():
        scenario.scenario = moved(scenario.scenario)
        scenario.tags = [(moved(line), column, name) for line, column, name in scenario.tags]
        for turn in scenario.turns:
            turn.comment = None if turn.comment is None else moved(turn.comment)
            turn.ask = Step(moved(turn.ask.line), turn.ask.column, turn.ask.keyword)
            if turn.answer is not None:
                turn.answer = Step(moved(turn.answer.line), turn.answer.column, turn.answer.keyword)
            if turn.contains is not None:
                turn.contains = Step(moved(turn.contains.line), turn.contains.column, turn.contains.keyword)
