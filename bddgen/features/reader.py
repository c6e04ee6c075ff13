"""Parse .feature files (gherkin-official) into FeatureDocuments, reporting problems by file:line."""

from __future__ import annotations

import difflib
import re
from functools import cache
from pathlib import Path
from typing import Any, Iterable, get_args

from gherkin.dialect import Dialect
from pydantic import ValidationError
from gherkin.errors import CompositeParserException, ParserError
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from bddgen.faults import BEHAVE_TOOL_ERROR, BEHAVE_TOOL_MALFORMED, ToolFault, read_fault_step
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.languages import STEP_PHRASES
from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS, QUOTED_STEP, SATISFY, decode_tag_value
from bddgen.features.writer import is_edited, read_header
from bddgen.expectations import (
    PATTERNS, ArgumentMatch, Bound, Measure, Relation, TrajectoryExpectation, parse_expectation, states_conditions,
)
from bddgen.outcomes import (
    CELL, EXACT_DIFF, INSTRUCTION, KNOWS, TALKS, TASK_TAG_PREFIX, UNCHANGED, OutcomeExpectation, UserTask, diff_rows_from_table, facts_from_table,
)
from bddgen.specs import (
    CANNOT_ANSWER, JUDGED_AS_A_WHOLE, TRAJECTORY_ONLY, TURN_MARKS, Conversation, ExactExpectation, ExactOperation, QueryType, Spec, Turn, TurnMark,
)

_TURN_COMMENT = re.compile(r"^\s*#\s*turn\s+\d+\s*\|(?P<fields>.*)$")
# gherkin's step keyword types -> the spec part a step belongs to ("" continues the previous part).
_PART_OF_TYPE = {"Context": "given", "Action": "when", "Outcome": "then"}
_EXACT_OPS = set(get_args(ExactOperation))
_QUOTED_OR_PARAMETER = re.compile(r'"[^"]*"|\{[^{}]*\}')
SUGGESTION_CUTOFF = 0.75  # not a setting: how close a line must be to a step to be suggested (difflib's ratio)

NO_SPEC = ("the assistant under test", "each scenario of this file runs as written", "every step of each scenario passes")
"""The Given, When and Then of a file without a spec: an agent test whose scenarios run as written."""


def is_agent_test(spec: Spec) -> bool:
    """Whether `spec` stands for a file without one (an agent test whose scenarios run as written): nothing to implement."""
    return (spec.given, spec.when, spec.then[:1]) == ([NO_SPEC[0]], [NO_SPEC[1]], [NO_SPEC[2]])


@cache
def step_phrases() -> tuple[str, ...]:
    """Every step a scenario may use, as the documentation writes it ("TOOL", "VALUE", N in place of its values), the
    conversation steps in every language bddgen writes."""
    fields = ("ask", "agree", "abstain", "contains", "satisfy")
    phrases = [re.sub(r"\{\w+\}", "...", getattr(language, field)) for language in STEP_PHRASES.values() for field in fields]
    phrases += [BEHAVE_TOOL_ERROR.format(tool="TOOL", message="MESSAGE"), BEHAVE_TOOL_MALFORMED.format(tool="TOOL")]
    phrases += ["the user's instruction:", "the user knows:", "the simulated user talks with the assistant for at most N turns"]
    phrases += [OutcomeExpectation(kind=kind, table="TABLE", key="KEY", column="COLUMN", value="VALUE").step for kind in ("unchanged", "cell", "diff")]
    for agent in (None, "AGENT"):
        examples = [
            TrajectoryExpectation(kind="calls", agent=agent, tool="TOOL"),
            *(TrajectoryExpectation(kind="calls", agent=agent, tool="TOOL", arguments=[ArgumentMatch(name="ARG", relation=relation, value="VALUE")])
              for relation in get_args(Relation)),
            TrajectoryExpectation(kind="not_calls", agent=agent, tool="TOOL"),
            *(TrajectoryExpectation(kind="count", agent=agent, tool="TOOL", bound=bound, count=2) for bound in get_args(Bound)),
            TrajectoryExpectation(kind="order", agent=agent, tools=["T1", "T2"]),
            TrajectoryExpectation(kind="sequence", agent=agent, tools=["T1", "T2"]),
            TrajectoryExpectation(kind="handoff", agent=agent, target="AGENT2"),
            TrajectoryExpectation(kind="refuses_tool", agent=agent, tool="TOOL"),
            *(TrajectoryExpectation(kind="returns", agent=agent, tool="TOOL", arguments=[ArgumentMatch(name=name, relation=relation, value="VALUE")])
              for name in ("", "PATH") for relation in get_args(Relation)),
        ]
        phrases += [e.step.replace(" 2 times", " N times") for e in examples]
    phrases.append(TrajectoryExpectation(kind="refuses").step)
    phrases += [TrajectoryExpectation(kind="limit", measure=m, limit=2).step.replace(" 2 ", " N ") for m in get_args(Measure)]
    phrases.append(TrajectoryExpectation(kind="goal", goal="GOAL").step)
    return tuple(dict.fromkeys(phrases))


def _states_expectation(text: str) -> bool:
    """Whether a line has the shape of a trajectory or scenario step, or of a step with conditions (the values and
    relations it states may still be wrong)."""
    return any(p.match(" ".join(text.split())) for p in PATTERNS.values()) or states_conditions(text)


def read_expectation(text: str) -> TrajectoryExpectation:
    """The trajectory or scenario step a line states (`_states_expectation`); ValueError naming what is wrong with a
    value it states (a regular expression that is none, a goal with nothing in it, a condition without a relation)
    and the fix."""
    try:
        expectation = parse_expectation(text)
    except ValidationError as exc:
        why = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())
        raise ValueError(f"step {text!r}: {why}") from exc
    except ValueError as exc:
        raise ValueError(f"step {text!r}: {exc}") from exc
    if expectation is None:
        raise ValueError(unknown_step(text))
    return expectation


def _shape(text: str) -> str:
    """A step line without its values: quoted texts and parameters as one mark, numbers as n, case and spacing folded."""
    return re.sub(r"\d+", "n", _QUOTED_OR_PARAMETER.sub('"…"', " ".join(text.split())).casefold())


def did_you_mean(text: str, known: Iterable[str] = ()) -> str:
    """"; did you mean '...'?" naming the step phrase (bddgen's, and `known`: behave's registered patterns) closest to
    the unknown step line `text`, or "" when none is close."""
    shapes = {_shape(phrase): phrase for phrase in (*known, *step_phrases())}  # bddgen's phrase wins over its pattern
    close = difflib.get_close_matches(_shape(text), list(shapes), n=1, cutoff=SUGGESTION_CUTOFF)
    return f"; did you mean '{shapes[close[0]]}'?" if close else ""


def unknown_step(text: str, where: str = "") -> str:
    """The problem of a line no step matches, with the closest step."""
    return f"unknown step {text!r}{where}{did_you_mean(text)} (see `bddgen validate`)"


def parse_gherkin(text: str, source: str) -> dict[str, Any]:
    """The gherkin-official AST, or InputError listing every syntax error as file:line."""
    try:
        return Parser().parse(TokenScanner(text))
    except CompositeParserException as exc:
        raise InputError([_syntax_problem(e, source) for e in exc.errors], title="invalid Gherkin") from exc
    except ParserError as exc:
        raise InputError([_syntax_problem(exc, source)], title="invalid Gherkin") from exc


def _syntax_problem(error: Exception, source: str) -> Problem:
    location = getattr(error, "location", None) or {}
    line = location.get("line", "?") if isinstance(location, dict) else "?"
    message = str(error)
    message = re.sub(r"^\(\d+:\d+\):\s*", "", message)
    return Problem(f"{source}:{line}", message)


def _spec_from_lines(lines: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Group (part, text) pairs into given/when/then; a pair whose part is "" (And, But, *)
    continues the previous part."""
    parts: dict[str, list[str]] = {"given": [], "when": [], "then": []}
    current = ""
    for part, text in lines:
        current = part or current
        if current:
            parts[current].append(text.strip())
    return parts


def _described_steps(description: str, language: str) -> list[tuple[str, str]]:
    """(part, text) of the Given/When/Then lines of a Rule's description, in the file's language."""
    dialect = Dialect.for_name(language) or Dialect.for_name("en")
    keywords = sorted(
        [(k.strip(), part) for part, ks in (("given", dialect.given_keywords), ("when", dialect.when_keywords), ("then", dialect.then_keywords)) for k in ks]
        + [(k.strip(), "") for k in dialect.and_keywords + dialect.but_keywords],
        key=lambda pair: -len(pair[0]),
    )
    found: list[tuple[str, str]] = []
    for line in description.splitlines():
        stripped = line.strip()
        for keyword, part in keywords:
            rest = stripped[len(keyword):]
            if keyword and stripped.startswith(keyword) and rest.strip() and (keyword[-1] in "'’" or rest[:1].isspace()):
                found.append((part, rest.strip()))
                break
    return found


def _step_parts(steps: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(_PART_OF_TYPE.get(step.get("keywordType", ""), ""), step["text"]) for step in steps]


def _turn_metadata(comments: dict[int, str], line: int) -> tuple[QueryType | None, list[str], str | None, list[TurnMark]]:
    """Query type, documents, exact operation and review marks from the `# turn N | ...` comment above `line`."""
    comment = comments.get(line - 1, "")
    match = _TURN_COMMENT.match(comment)
    if not match:
        return None, [], None, []
    query_type: QueryType | None = None
    docs: list[str] = []
    exact: str | None = None
    marks: list[TurnMark] = []
    for field in (f.strip() for f in match.group("fields").split("|")):
        if field.startswith("docs:"):
            docs = [decode_tag_value(d.strip()) for d in field[5:].split(",") if d.strip()]
        elif field.startswith("exact:"):
            exact = field[6:].strip()
        elif field in {q.value for q in QueryType}:
            query_type = QueryType(field)
        elif field in TURN_MARKS and field not in marks:
            marks.append(field)  # type: ignore[arg-type]
    return query_type, docs, exact, marks


def _conversation(scenario: dict[str, Any], comments: dict[int, str], source: str, spec_less: bool = False) -> Conversation:
    """The conversation a scenario holds. `spec_less`: its file has no spec (an agent test), so a turn without a Then
    step is asked, not judged, and `should satisfy the spec` has nothing to check."""
    tags = [t["name"] for t in scenario.get("tags", [])]
    task_ids = [t[len(TASK_TAG_PREFIX):] for t in tags if t.startswith(TASK_TAG_PREFIX)]
    fallback = task_ids[0] if task_ids else f"line-{scenario['location']['line']}"
    conv_id = next((decode_tag_value(t.split(":", 1)[1]) for t in tags if t.startswith("@conv:")), fallback)
    chain = next(([decode_tag_value(d) for d in t.split(":", 1)[1].split(",") if d] for t in tags if t.startswith("@docs:")), [])
    extra_tags = [
        t for t in tags if t != "@conversation" and t != "@locked" and not t.startswith(("@conv:", "@docs:", "@chain-length:"))
    ]
    turns: list[dict[str, Any]] = []
    faults: list[ToolFault] = []
    problems: list[Problem] = []
    task: dict[str, Any] = {}
    for step in scenario.get("steps", []):
        text, line = step["text"].strip(), step["location"]["line"]
        if (fault := read_fault_step(text)) is not None:
            faults.append(fault)
        elif _is_task_step(text) or "max_turns" in task:
            try:
                _read_task_step(step, text, task)
            except ValueError as exc:
                problems.append(Problem(f"{source}:{line}", str(exc)))
        elif (m := ASK.match(text)) is not None:
            query_type, docs, exact, marks = _turn_metadata(comments, line)
            turns.append(
                {"question": m.group("question"), "answer": "", "query_type": query_type, "doc_ids": docs, "exact_op": exact, "marks": marks,
                 "trajectory": []}
            )
        elif QUOTED_STEP.match(text) and not any(p.match(text) for p in (ASK, AGREE, CONTAINS)):
            problems.append(Problem(f"{source}:{line}", f"step {text!r}: its double quote closes before the step ends, or never closes; "
                                    "put the whole text between one pair of double quotes (write ' for a quote inside it)"))
            if not turns:  # the steps after it belong to the turn it starts
                turns.append({"question": "", "answer": "", "trajectory": []})
        elif spec_less and SATISFY.match(text):
            problems.append(Problem(f"{source}:{line}", f"step {text!r}: this file has no spec to satisfy; add a Rule whose "
                                    "description has Given/When/Then lines, or remove the step"))
        elif not turns and not SATISFY.match(text):
            known = any(p.match(text) for p in (AGREE, ABSTAIN, CONTAINS)) or _states_expectation(text)
            problems.append(Problem(f"{source}:{line}", f"step {text!r} comes before the first 'When the user asks'" if known else unknown_step(text)))
        elif (m := AGREE.match(text)) is not None:
            turns[-1]["answer"] = m.group("answer")
        elif ABSTAIN.match(text):
            turns[-1]["answer"] = CANNOT_ANSWER
        elif (m := CONTAINS.match(text)) is not None:
            turns[-1]["exact_value"] = m.group("value")
        elif _states_expectation(text):
            try:
                turns[-1]["trajectory"].append(read_expectation(text))
            except ValueError as exc:
                problems.append(Problem(f"{source}:{line}", str(exc)))
        elif not SATISFY.match(text):
            problems.append(Problem(f"{source}:{line}", unknown_step(text)))
    where = f"{source}:{scenario['location']['line']}"
    if task and not problems:
        return _task_conversation(scenario, conv_id, chain, tags, extra_tags, faults, task, comments, where)
    if not turns and not problems:
        problems.append(Problem(where, "a conversation without a 'When the user asks \"...\"' step; add its turns or remove the @conversation tag"))
    if problems:
        raise InputError(problems, title="invalid conversation")
    try:
        return Conversation(
            id=conv_id,
            title=scenario["name"] or conv_id,
            turns=[_turn(t, source, scenario["location"]["line"], spec_less or JUDGED_AS_A_WHOLE in tags) for t in turns],
            chain=chain,
            locked="@locked" in tags,
            hand_written="@conversation" not in tags,
            tags=extra_tags,
            faults=faults,
        )
    except ValidationError as exc:
        raise InputError([Problem(where, f"{'.'.join(map(str, e['loc']))}: {e['msg']}") for e in exc.errors()], title="invalid conversation") from exc


def _is_task_step(text: str) -> bool:
    return any(p.match(text) for p in (INSTRUCTION, KNOWS, TALKS, UNCHANGED, CELL, EXACT_DIFF))


def _table(step: dict[str, Any], what: str) -> tuple[list[str], list[list[str]]]:
    rows = [[cell["value"] for cell in row["cells"]] for row in (step.get("dataTable") or {}).get("rows", [])]
    if not rows:
        raise ValueError(f"{what} needs a table under it")
    return rows[0], rows[1:]


def _read_task_step(step: dict[str, Any], text: str, task: dict[str, Any]) -> None:
    """Add one step of a task scenario to `task`; ValueError saying what is wrong with it."""
    talked = "max_turns" in task
    if INSTRUCTION.match(text) or KNOWS.match(text) or TALKS.match(text):
        if talked:
            raise ValueError(f"step {text!r} comes after 'When the simulated user talks ...'; move it above that step")
        if INSTRUCTION.match(text):
            content = (step.get("docString") or {}).get("content", "").strip()
            if not content:
                raise ValueError('"the user\'s instruction:" needs the instruction as a docstring (between """ lines) under it')
            task["instruction"] = content
        elif KNOWS.match(text):
            task["facts"] = facts_from_table(*_table(step, '"the user knows:"'))
        elif (m := TALKS.match(text)) is not None:
            if "instruction" not in task:
                raise ValueError("the simulated user has no instruction: add \"Given the user's instruction:\" with a docstring above this step")
            task["max_turns"] = int(m.group("turns"))
            task["outcomes"], task["trajectory"] = [], []
        return
    if not talked:
        raise ValueError(f"step {text!r} comes before 'When the simulated user talks with the assistant for at most N turns'")
    if UNCHANGED.match(text):
        task["outcomes"].append(OutcomeExpectation(kind="unchanged"))
    elif (m := CELL.match(text)) is not None:
        task["outcomes"].append(OutcomeExpectation(kind="cell", **m.groupdict()))
    elif EXACT_DIFF.match(text):
        task["outcomes"].append(OutcomeExpectation(kind="diff", rows=diff_rows_from_table(*_table(step, "the expected diff"))))
    elif _states_expectation(text):
        task["trajectory"].append(read_expectation(text))
    else:
        raise ValueError(unknown_step(text, " in a task scenario"))


def _task_conversation(
    scenario: dict[str, Any], conv_id: str, chain: list[str], tags: list[str], extra_tags: list[str], faults: list[ToolFault],
    task: dict[str, Any], comments: dict[int, str], where: str,
) -> Conversation:
    if "max_turns" not in task:
        raise InputError(Problem(where, "a task scenario needs 'When the simulated user talks with the assistant for at most N turns'"), title="invalid task")
    first_step = min((s["location"]["line"] for s in scenario.get("steps", [])), default=scenario["location"]["line"])
    notes = [comments[n].strip().lstrip("#").strip() for n in range(scenario["location"]["line"] + 1, first_step) if n in comments]
    try:
        return Conversation(
            id=conv_id, title=scenario["name"] or conv_id, chain=chain, locked="@locked" in tags, tags=extra_tags, faults=faults,
            task=UserTask(comment="\n".join(notes), **task),
        )
    except ValidationError as exc:
        raise InputError([Problem(where, f"{'.'.join(map(str, e['loc']))}: {e['msg']}") for e in exc.errors()], title="invalid task") from exc


def _turn(raw: dict[str, Any], source: str, line: int, whole: bool = False) -> Turn:
    """A turn whose only answer step is `the answer should contain "X"` has X as its reference answer (the value alone
    decides). A turn without an answer step is an abstention, unless it checks its trajectory only, or (`whole`) its
    conversation is judged as a whole (`@judged-as-a-whole`) or its file has no spec: then it is not judged."""
    answer = raw["answer"] or raw.get("exact_value") or (TRAJECTORY_ONLY if raw["trajectory"] or whole else CANNOT_ANSWER)
    query_type = raw["query_type"] or (QueryType.UNANSWERABLE if answer == CANNOT_ANSWER else QueryType.SINGLE_DOC)
    exact = None
    if "exact_value" in raw:
        op, _, table = (raw["exact_op"] or "lookup").partition(" ")
        exact = ExactExpectation(
            table_id=table or (raw["doc_ids"][0] if raw["doc_ids"] else ""),
            operation=op if op in _EXACT_OPS else "lookup",
            value=raw["exact_value"],
            alone=not raw["answer"],
        )
    return Turn(
        question=raw["question"], answer=answer, query_type=query_type, doc_ids=raw["doc_ids"], exact=exact, marks=raw["marks"],
        trajectory=raw["trajectory"],
    )


def _is_conversation(scenario: dict[str, Any]) -> bool:
    tags = {t["name"] for t in scenario.get("tags", [])}
    return "@conversation" in tags or any(ASK.match(s["text"].strip()) or _is_task_step(s["text"].strip()) for s in scenario.get("steps", []))


def read_feature_text(text: str, source: str, ast: dict[str, Any] | None = None) -> FeatureDocument:
    """Parse one feature file's text. Raises InputError naming `source` and lines. `ast`: the text's gherkin-official
    AST when the caller has parsed it already (`parse_gherkin`; it is read, not changed), so it is not parsed again."""
    ast = parse_gherkin(text, source) if ast is None else ast
    feature = ast.get("feature")
    if not feature:
        raise InputError(Problem(f"{source}:1", "no Feature: line; a spec file needs one Feature"), title="invalid spec")
    comments = {c["location"]["line"]: c["text"] for c in ast.get("comments", [])}
    header = read_header(text)
    tags = [t["name"] for t in feature.get("tags", [])]
    language = feature.get("language") or "en"
    spec_parts: dict[str, list[str]] | None = None
    spec_line = 0
    spec_title = feature["name"]
    form = "rule"
    conversations: list[Conversation] = []
    problems: list[Problem] = []
    scenarios: list[dict[str, Any]] = []

    def second_spec(line: int, what: str) -> Problem:
        return Problem(
            f"{source}:{line}",
            f"{what}: a second spec in this file (the first is at line {spec_line}); bddgen reads one spec per "
            ".feature file, so move it to its own file",
        )

    for child in feature.get("children", []):
        if "rule" in child:
            rule = child["rule"]
            described = _described_steps(rule.get("description", ""), language)
            if described and spec_parts is None:
                spec_parts, spec_title, spec_line = _spec_from_lines(described), rule["name"] or spec_title, rule["location"]["line"]
            elif described:
                problems.append(second_spec(rule["location"]["line"], f"Rule {rule['name']!r}"))
            scenarios += [c["scenario"] for c in rule.get("children", []) if "scenario" in c]
        elif "scenario" in child:
            scenarios.append(child["scenario"])
    spec_less = spec_parts is None and bool(scenarios) and all(_is_conversation(s) for s in scenarios)
    seen_ids: dict[str, int] = {}
    for scenario in scenarios:
        line = scenario["location"]["line"]
        if _is_conversation(scenario):
            try:
                conversation = _conversation(scenario, comments, source, spec_less)
            except InputError as exc:
                problems += exc.problems
                continue
            if conversation.id in seen_ids:
                problems.append(Problem(
                    f"{source}:{line}",
                    f"conversation id {conversation.id!r} is also used at line {seen_ids[conversation.id]}; give each conversation its own @conv: tag",
                ))
            seen_ids.setdefault(conversation.id, line)
            conversations.append(conversation)
        elif spec_parts is None:
            spec_parts, spec_title, form = _spec_from_lines(_step_parts(scenario.get("steps", []))), scenario["name"] or spec_title, "scenario"
            spec_line = line
        else:
            problems.append(second_spec(line, f"Scenario {scenario['name']!r}"))
    if spec_less:  # an agent test: its scenarios run as written
        spec_parts = {"given": [NO_SPEC[0]], "when": [NO_SPEC[1]], "then": [NO_SPEC[2]]}
        spec_title, form = spec_title.strip() or Path(source).stem, "none"
    if spec_parts is None:
        problems.append(Problem(f"{source}:{feature['location']['line']}", "no spec found: add a Rule whose description has Given/When/Then lines, or a Scenario with Given/When/Then steps"))
    else:
        for part in ("given", "when", "then"):
            if not spec_parts[part]:
                problems.append(Problem(f"{source}:{feature['location']['line']}", f"the spec has no {part.capitalize()} line"))
        if not spec_title.strip():
            problems.append(Problem(f"{source}:{spec_line or feature['location']['line']}", "the spec has no title: name its Feature, Rule or Scenario"))
    if problems or spec_parts is None:
        raise InputError(problems, title="invalid spec file")
    source_kind = "generated" if header.get("source") == "generated" or "@generated" in tags else "hand-written"
    then = [*spec_parts["then"], Path(source).stem] if spec_less else spec_parts["then"]  # two agent tests, two ids
    spec_id = header.get("spec") or Spec.make_id(spec_title, spec_parts["given"], spec_parts["when"], then)
    spec = Spec(id=spec_id, title=spec_title, source=source_kind, **spec_parts)
    return FeatureDocument(
        spec=spec,
        rationale=[line.strip() for line in (feature.get("description") or "").splitlines() if line.strip()],
        tags=[t for t in tags if t not in ("@spec", "@generated", "@hand-written")],
        conversations=conversations,
        path=source,
        edited=is_edited(text),
        language=language,
        form=form,
    )


def feature_text(path: Path) -> str:
    """One .feature file's text; InputError when it cannot be read or is not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), f"not UTF-8 (byte {exc.start}); re-save the file as UTF-8")) from exc
    except OSError as exc:
        raise InputError(Problem(str(path), f"cannot read the file: {exc.strerror or exc}")) from exc


def read_feature(path: Path) -> FeatureDocument:
    """Parse one .feature file; non-UTF-8 content is reported as an InputError."""
    return read_feature_text(feature_text(path), str(path))


def feature_files(paths: Iterable[Path]) -> list[Path]:
    """Every .feature file under the given files or folders, sorted; examples/ included."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob("*.feature"))
        elif path.suffix == ".feature":
            found.append(path)
    return found
