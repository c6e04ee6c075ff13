"""Render a FeatureDocument as Gherkin and write it without clobbering a person's edits."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Sequence

from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write
from bddgen.features.document import FeatureDocument
from bddgen.features.languages import DEFAULT_LANGUAGE, KEYWORDS, Keywords, keywords, phrases, writing_language
from bddgen.features.vocabulary import decode_tag_value, encode_tag_value, quote
from bddgen.outcomes import FACT_HEADER, TASK_TAG_PREFIX, UserTask
from bddgen.state_diff import DIFF_HEADER
from bddgen.specs import CANNOT_ANSWER, JUDGED_AS_A_WHOLE, TRAJECTORY_ONLY, Conversation, QueryType, Spec

HEADER_PREFIX = "# bddgen:"


def body_hash(body: str) -> str:
    """Hash of everything below the header line, ignoring trailing whitespace."""
    return hashlib.sha256(body.rstrip().encode("utf-8")).hexdigest()[:12]


def _spec_lines(spec: Spec, indent: str, words: Keywords = KEYWORDS[DEFAULT_LANGUAGE]) -> list[str]:
    lines: list[str] = []
    for keyword, parts in ((words.given, spec.given), (words.when, spec.when), (words.then, spec.then)):
        for i, part in enumerate(parts):
            lines.append(f"{indent}{keyword if i == 0 else words.and_} {quote(part)}")
    return lines


def _turn_comment(number: int, turn_type: QueryType, doc_ids: list[str], exact_op: str | None, marks: Sequence[str] = ()) -> str:
    fields = [f"turn {number}", turn_type.value]
    if doc_ids:
        fields.append("docs: " + ", ".join(map(encode_tag_value, doc_ids)))
    if exact_op:
        fields.append(f"exact: {exact_op}")
    return " | ".join([*fields, *marks])


def _conversation_lines(conv: Conversation, language: str = DEFAULT_LANGUAGE) -> list[str]:
    words, steps = keywords(language), phrases(language)
    named_by_task = conv.task is not None and f"{TASK_TAG_PREFIX}{conv.id}" in conv.tags
    tags = [] if named_by_task or conv.hand_written else ["@conversation"]
    if not named_by_task:
        tags.append(f"@conv:{encode_tag_value(conv.id)}")
    if conv.chain:
        tags += [f"@docs:{','.join(map(encode_tag_value, conv.chain))}", f"@chain-length:{len(conv.chain)}"]
    if conv.locked:
        tags.append("@locked")
    tags += [t for t in conv.tags if t not in tags]
    lines = ["", f"    {' '.join(tags)}", f"    {words.scenario}: {quote(conv.title)}"]
    if conv.task is not None:
        return lines + _task_lines(conv, conv.task, words)
    for number, fault in enumerate(conv.faults):
        lines.append(f"      {words.given if number == 0 else words.and_} {fault.step_text()}")
    for number, turn in enumerate(conv.turns, start=1):
        exact_op = f"{turn.exact.operation} {turn.exact.table_id}" if turn.exact else None
        lines.append(f"      # {_turn_comment(number, turn.query_type, turn.doc_ids, exact_op, turn.marks)}")
        lines.append(f"      {words.when} {steps.ask.format(question=quote(turn.question))}")
        then = []
        if turn.answer.strip() == CANNOT_ANSWER:
            then.append(steps.abstain)
        elif turn.answer.strip() != TRAJECTORY_ONLY and not (turn.exact is not None and turn.exact.alone):
            then.append(steps.agree.format(answer=quote(turn.answer)))
        if turn.exact is not None:
            then.append(steps.contains.format(value=quote(turn.exact.value)))
        then += [expectation.step for expectation in turn.trajectory]
        lines += [f"      {words.then if i == 0 else words.and_} {step}" for i, step in enumerate(then)]
    # a trajectory-only scenario has no answer to judge, unless it is judged as a whole
    if JUDGED_AS_A_WHOLE in conv.tags or any(turn.answer != TRAJECTORY_ONLY for turn in conv.turns):
        lines.append(f"      {words.then} {steps.satisfy}")
    return lines


def _cell(text: str) -> str:
    """Text safe inside a Gherkin table cell."""
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", "\\n")


def _table_lines(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str) -> list[str]:
    cells = [[_cell(c) for c in row] for row in [header, *rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    return [indent + "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in cells]


def _docstring_lines(text: str, indent: str) -> list[str]:
    fence = '```' if '"""' in text else '"""'
    return [f"{indent}{fence}", *(f"{indent}{line}".rstrip() for line in text.splitlines()), f"{indent}{fence}"]


def _task_lines(conv: Conversation, task: UserTask, words: Keywords) -> list[str]:
    """A task scenario: the instruction, the user's facts, the simulated dialogue, then its outcome and trajectory steps."""
    lines = [f"      # {line}" for line in task.comment.splitlines() if line.strip()]
    given = [fault.step_text() for fault in conv.faults]
    for number, text in enumerate(given):
        lines.append(f"      {words.given if number == 0 else words.and_} {text}")
    lines.append(f"      {words.and_ if given else words.given} the user's instruction:")
    lines += _docstring_lines(task.instruction, "        ")
    if task.facts:
        lines.append(f"      {words.and_} the user knows:")
        lines += _table_lines(FACT_HEADER, list(task.facts.items()), "        ")
    lines.append(f"      {words.when} the simulated user talks with the assistant for at most {task.max_turns} turns")
    keyword = words.then
    for outcome in task.outcomes:
        lines.append(f"      {keyword} {outcome.step}")
        keyword = words.and_
        if outcome.kind == "diff":
            lines += _table_lines(DIFF_HEADER, [row.cells() for row in outcome.rows], "        ")
    for expectation in task.trajectory:
        lines.append(f"      {keyword} {expectation.step}")
        keyword = words.and_
    return lines


def render_body(doc: FeatureDocument) -> str:
    """The Gherkin below the header line; a file without a spec gets no @spec tag and no Rule, only its scenarios."""
    source_tag = "@generated" if doc.spec.source == "generated" else "@hand-written"
    tags = (["@spec"] if doc.has_spec else []) + [source_tag] + [t for t in doc.tags if t not in ("@spec", "@generated", "@hand-written")]
    language = writing_language(doc.language)
    words = keywords(language)
    lines = [f"# language: {language}"] if language != DEFAULT_LANGUAGE else []
    lines += [" ".join(tags), f"{words.feature}: {quote(doc.spec.title)}"]
    lines += [f"  {quote(line)}" for line in doc.rationale if line.strip()]
    if doc.has_spec:
        lines += ["", f"  {words.rule}: {quote(doc.spec.title)}"]
        lines += _spec_lines(doc.spec, "    ", words)
    for conv in doc.conversations:
        lines += _conversation_lines(conv, language)
    return "\n".join(lines) + "\n"


def render_feature(doc: FeatureDocument) -> str:
    """The whole file: a header line carrying spec id, source and the body's hash, then the body.

    The id is percent-encoded like a tag value, so no newline, space or `key=` in it can end the
    header line or add a field to it."""
    body = render_body(doc)
    header = f"{HEADER_PREFIX} spec={encode_tag_value(doc.spec.id)} source={doc.spec.source} hash={body_hash(body)}"
    return f"{header}\n{body}"


def read_header(text: str) -> dict[str, str]:
    """key=value pairs of the header line ({} when there is none), values percent-decoded."""
    first = text.split("\n", 1)[0]
    if not first.startswith(HEADER_PREFIX):
        return {}
    pairs = (item.split("=", 1) for item in first[len(HEADER_PREFIX):].split() if "=" in item)
    return {k: decode_tag_value(v) for k, v in pairs}


def is_edited(text: str) -> bool:
    """True when the file has no bddgen header or its body changed since bddgen wrote it."""
    header = read_header(text)
    if "hash" not in header:
        return True
    body = text.split("\n", 1)[1] if "\n" in text else ""
    return body_hash(body) != header["hash"]


def write_feature(path: Path, doc: FeatureDocument, *, force: bool = False, allow_edited: bool = False) -> None:
    """Write `doc` to `path`. A file a person edited is refused unless `force` or `allow_edited`.

    `allow_edited` is for stages that read the file first and carry its edits into `doc`.
    """
    if path.exists() and not (force or allow_edited) and is_edited(path.read_text(encoding="utf-8")):
        raise InputError(
            Problem(str(path), "edited by a person since bddgen wrote it; not overwritten (use --force to replace it)"),
            title="refusing to overwrite",
        )
    atomic_write(path, render_feature(doc))
