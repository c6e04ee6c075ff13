"""Parse .feature files (gherkin-official) into FeatureDocuments, reporting problems by file:line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from gherkin.errors import CompositeParserException, ParserError
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS, SATISFY
from bddgen.features.writer import is_edited, read_header
from bddgen.specs import CANNOT_ANSWER, Conversation, ExactExpectation, QueryType, Spec, Turn

_TURN_COMMENT = re.compile(r"^\s*#\s*turn\s+\d+\s*\|(?P<fields>.*)$")
_KEYWORD_LINE = re.compile(r"^\s*(Given|When|Then|And|But)\s+(?P<text>.+?)\s*$")
_EXACT_OPS = {"lookup", "count", "max", "min", "sum", "compare"}


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


def _spec_from_lines(title: str, lines: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Group (keyword, text) pairs into given/when/then, folding And/But into the previous part."""
    parts: dict[str, list[str]] = {"given": [], "when": [], "then": []}
    current = ""
    for keyword, text in lines:
        key = keyword.strip().lower()
        if key in parts:
            current = key
        if current:
            parts[current].append(text.strip())
    return parts


def _turn_metadata(comments: dict[int, str], line: int) -> tuple[QueryType | None, list[str], str | None]:
    """Query type, documents and exact operation from the `# turn N | ...` comment above `line`."""
    comment = comments.get(line - 1, "")
    match = _TURN_COMMENT.match(comment)
    if not match:
        return None, [], None
    query_type: QueryType | None = None
    docs: list[str] = []
    exact: str | None = None
    for field in (f.strip() for f in match.group("fields").split("|")):
        if field.startswith("docs:"):
            docs = [d.strip() for d in field[5:].split(",") if d.strip()]
        elif field.startswith("exact:"):
            exact = field[6:].strip()
        elif field in {q.value for q in QueryType}:
            query_type = QueryType(field)
    return query_type, docs, exact


def _conversation(scenario: dict[str, Any], comments: dict[int, str], source: str) -> Conversation:
    tags = [t["name"] for t in scenario.get("tags", [])]
    conv_id = next((t.split(":", 1)[1] for t in tags if t.startswith("@conv:")), f"line-{scenario['location']['line']}")
    chain = next((t.split(":", 1)[1].split(",") for t in tags if t.startswith("@docs:")), [])
    extra_tags = [
        t for t in tags if t != "@conversation" and t != "@locked" and not t.startswith(("@conv:", "@docs:", "@chain-length:"))
    ]
    turns: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for step in scenario.get("steps", []):
        text, line = step["text"].strip(), step["location"]["line"]
        if (m := ASK.match(text)) is not None:
            query_type, docs, exact = _turn_metadata(comments, line)
            turns.append({"question": m.group("question"), "answer": "", "query_type": query_type, "doc_ids": docs, "exact_op": exact})
        elif not turns and not SATISFY.match(text):
            problems.append(Problem(f"{source}:{line}", f"step {text!r} comes before the first 'When the user asks'"))
        elif (m := AGREE.match(text)) is not None:
            turns[-1]["answer"] = m.group("answer")
        elif ABSTAIN.match(text):
            turns[-1]["answer"] = CANNOT_ANSWER
        elif (m := CONTAINS.match(text)) is not None:
            turns[-1]["exact_value"] = m.group("value")
        elif not SATISFY.match(text):
            problems.append(Problem(f"{source}:{line}", f"unknown step {text!r} (see `bddgen validate`)"))
    if problems:
        raise InputError(problems, title="invalid conversation")
    return Conversation(
        id=conv_id,
        title=scenario["name"] or conv_id,
        turns=[_turn(t, source, scenario["location"]["line"]) for t in turns],
        chain=chain,
        locked="@locked" in tags,
        tags=extra_tags,
    )


def _turn(raw: dict[str, Any], source: str, line: int) -> Turn:
    answer = raw["answer"] or CANNOT_ANSWER
    query_type = raw["query_type"] or (QueryType.UNANSWERABLE if answer == CANNOT_ANSWER else QueryType.SINGLE_DOC)
    exact = None
    if "exact_value" in raw:
        op, _, table = (raw["exact_op"] or "lookup").partition(" ")
        exact = ExactExpectation(
            table_id=table or (raw["doc_ids"][0] if raw["doc_ids"] else ""),
            operation=op if op in _EXACT_OPS else "lookup",
            value=raw["exact_value"],
        )
    return Turn(question=raw["question"], answer=answer, query_type=query_type, doc_ids=raw["doc_ids"], exact=exact)


def _is_conversation(scenario: dict[str, Any]) -> bool:
    tags = {t["name"] for t in scenario.get("tags", [])}
    return "@conversation" in tags or any(ASK.match(s["text"].strip()) for s in scenario.get("steps", []))


def read_feature_text(text: str, source: str) -> FeatureDocument:
    """Parse one feature file's text. Raises InputError naming `source` and lines."""
    ast = parse_gherkin(text, source)
    feature = ast.get("feature")
    if not feature:
        raise InputError(Problem(f"{source}:1", "no Feature: line; a spec file needs one Feature"), title="invalid spec")
    comments = {c["location"]["line"]: c["text"] for c in ast.get("comments", [])}
    header = read_header(text)
    tags = [t["name"] for t in feature.get("tags", [])]
    spec_parts: dict[str, list[str]] | None = None
    spec_title = feature["name"]
    form = "rule"
    conversations: list[Conversation] = []
    problems: list[Problem] = []
    scenarios: list[dict[str, Any]] = []
    for child in feature.get("children", []):
        if "rule" in child:
            rule = child["rule"]
            described = [(m.group(1), m.group("text")) for m in map(_KEYWORD_LINE.match, rule.get("description", "").splitlines()) if m]
            if described and spec_parts is None:
                spec_parts, spec_title = _spec_from_lines(rule["name"], described), rule["name"] or spec_title
            scenarios += [c["scenario"] for c in rule.get("children", []) if "scenario" in c]
        elif "scenario" in child:
            scenarios.append(child["scenario"])
    for scenario in scenarios:
        if _is_conversation(scenario):
            try:
                conversations.append(_conversation(scenario, comments, source))
            except InputError as exc:
                problems += exc.problems
        elif spec_parts is None:
            steps = [(s["keyword"], s["text"]) for s in scenario.get("steps", [])]
            spec_parts, spec_title, form = _spec_from_lines(scenario["name"], steps), scenario["name"] or spec_title, "scenario"
        else:
            problems.append(Problem(f"{source}:{scenario['location']['line']}", "a second spec in one file; put each spec in its own .feature file"))
    if spec_parts is None:
        problems.append(Problem(f"{source}:{feature['location']['line']}", "no spec found: add a Rule whose description has Given/When/Then lines, or a Scenario with Given/When/Then steps"))
    else:
        for part in ("given", "when", "then"):
            if not spec_parts[part]:
                problems.append(Problem(f"{source}:{feature['location']['line']}", f"the spec has no {part.capitalize()} line"))
    if problems or spec_parts is None:
        raise InputError(problems, title="invalid spec file")
    source_kind = "generated" if header.get("source") == "generated" or "@generated" in tags else "hand-written"
    spec_id = header.get("spec") or Spec.make_id(spec_title, spec_parts["given"], spec_parts["when"], spec_parts["then"])
    spec = Spec(id=spec_id, title=spec_title, source=source_kind, **spec_parts)
    return FeatureDocument(
        spec=spec,
        rationale=[line.strip() for line in (feature.get("description") or "").splitlines() if line.strip()],
        tags=[t for t in tags if t not in ("@spec", "@generated", "@hand-written")],
        conversations=conversations,
        path=source,
        edited=is_edited(text),
        form=form,
    )


def read_feature(path: Path) -> FeatureDocument:
    """Parse one .feature file; non-UTF-8 content is reported as an InputError."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), f"not UTF-8 (byte {exc.start}); re-save the file as UTF-8")) from exc
    return read_feature_text(text, str(path))


def feature_files(paths: Iterable[Path]) -> list[Path]:
    """Every .feature file under the given files or folders, sorted; examples/ included."""
    found: list[Path] = []
    for path in paths:
        if path.is_dir():
            found += sorted(path.rglob("*.feature"))
        elif path.suffix == ".feature":
            found.append(path)
    return found
