"""Fuzz: generated .feature files in every Gherkin language gherkin-official ships, with hostile
tags, titles and steps. The reader refuses with InputError only, `bddgen validate` ends with exit
0 or 2 and a message, and every file bddgen writes reads back to what it wrote."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import get_args

import pytest
from fuzz_strategies import gherkin_dialects, hostile_id, hostile_text, languages, terminal_controls
from hypothesis import given
from hypothesis import strategies as st
from robustness_project import invoke

from bddgen.errors import InputError
from bddgen.expectations import Relation
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.features.vocabulary import quote
from bddgen.features.writer import write_feature
from bddgen.specs import CANNOT_ANSWER, Conversation, QueryType, Spec, Turn

STEP_TEXTS = [
    'the user asks "{}"', 'the answer should agree with "{}"', "the assistant should say it cannot answer",
    'the answer should contain "{}"', "the conversation should satisfy the spec", "{}",
]


@st.composite
def feature_text(draw: st.DrawFn) -> str:
    """A feature file: real structure in a random language, random content, sometimes broken."""
    language = draw(languages)
    words = gherkin_dialects()[language]

    def keyword(kind: str) -> str:
        return draw(st.sampled_from(words[kind])).strip() or "*"

    lines = [f"# language: {language}"] if draw(st.booleans()) or language != "en" else []
    tags = draw(st.lists(hostile_text.map(lambda t: "@" + t), max_size=3))
    lines += [" ".join(tags), f"{keyword('feature')}: {draw(hostile_text)}"]
    for _ in range(draw(st.integers(0, 2))):
        lines.append(f"  {keyword('rule')}: {draw(hostile_text)}")
        for kind in draw(st.lists(st.sampled_from(["given", "when", "then", "and", "but"]), max_size=4)):
            lines.append(f"    {keyword(kind)} {draw(hostile_text)}")
    for _ in range(draw(st.integers(0, 3))):
        tag_line = draw(st.sampled_from(["", "@conversation @conv:c1", "@conversation @conv:c2", "@docs:a,b @locked"]))
        lines += [f"    {tag_line}", f"    {keyword('scenario')}: {draw(hostile_text)}"]
        for _ in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["given", "when", "then", "and"]))
            step = draw(st.sampled_from(STEP_TEXTS)).format(draw(hostile_text))
            if draw(st.booleans()):
                lines.append(f"      # turn 1 | {draw(st.sampled_from([q.value for q in QueryType]))} | docs: {draw(hostile_text)}")
            lines.append(f"      {keyword(kind)} {step}")
    text = "\n".join(lines) + "\n"
    if draw(st.booleans()):  # damage: cut it, or splice in hostile text
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(hostile_text) + text[cut:]
    return text


@given(text=feature_text())
def test_the_reader_refuses_bad_feature_files_only_with_an_input_error(text: str) -> None:
    try:
        document = read_feature_text(text, "fuzz.feature")
    except InputError as exc:
        assert exc.problems and all(p.location.startswith("fuzz.feature") for p in exc.problems)
    else:
        assert document.spec.given and document.spec.when and document.spec.then
        assert len({c.id for c in document.conversations}) == len(document.conversations)


@given(text=feature_text(), encoding=st.sampled_from(["utf-8", "utf-16", "latin-1"]))
def test_validate_ends_with_exit_0_or_2_and_a_message(text: str, encoding: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.feature"
        path.write_bytes(text.encode(encoding, errors="replace"))
        code, output = invoke(Path(folder), "validate", str(path))
        assert code in (0, 2) and output.strip(), output
        assert not terminal_controls.search(output), output


line = hostile_text.filter(lambda t: quote(t) != "")
doc_ids = st.lists(hostile_text.filter(lambda t: t.strip() != ""), max_size=3)


@st.composite
def documents(draw: st.DrawFn) -> FeatureDocument:
    spec = Spec.create(draw(line), draw(st.lists(line, min_size=1, max_size=2)), draw(st.lists(line, min_size=1, max_size=2)),
                       draw(st.lists(line, min_size=1, max_size=2)), source=draw(st.sampled_from(["generated", "hand-written"])))
    spec = spec.model_copy(update={"id": draw(hostile_id)}) if draw(st.booleans()) else spec
    conversations = []
    for number in range(draw(st.integers(0, 3))):
        turns = [
            Turn(question=draw(line), answer=draw(st.one_of(line, st.just(CANNOT_ANSWER))),
                 query_type=draw(st.sampled_from(list(QueryType))), doc_ids=draw(doc_ids))
            for _ in range(draw(st.integers(1, 3)))
        ]
        conversations.append(Conversation(
            id=f"{draw(hostile_id)}{number}", title=draw(line), turns=turns, chain=draw(doc_ids), locked=draw(st.booleans()),
            hand_written=draw(st.booleans()),
        ))
    return FeatureDocument(spec=spec, conversations=conversations)


@given(document=documents())
def test_every_feature_file_bddgen_writes_reads_back(document: FeatureDocument) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "written.feature"
        write_feature(path, document)
        read = read_feature(path)
    assert (read.spec.given, read.spec.when, read.spec.then) == tuple(
        [quote(part) for part in parts] for parts in (document.spec.given, document.spec.when, document.spec.then)
    )
    assert read.spec.id == document.spec.id and read.spec.source == document.spec.source and not read.edited
    assert [c.id for c in read.conversations] == [c.id for c in document.conversations]
    for written, back in zip(document.conversations, read.conversations):
        assert back.chain == written.chain and back.locked == written.locked and back.hand_written == written.hand_written
        assert [t.question for t in back.turns] == [quote(t.question) for t in written.turns]
        assert [t.doc_ids for t in back.turns] == [t.doc_ids for t in written.turns]
        assert [t.query_type for t in back.turns] == [t.query_type for t in written.turns]


RELATIONS: tuple[str, ...] = get_args(Relation)
plain = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_.", min_size=1, max_size=10)
condition = st.tuples(plain, st.sampled_from(RELATIONS), plain)
relation_like = st.one_of(st.sampled_from(RELATIONS), st.from_regex(r"[a-z]{1,10}( [a-z]{1,6})?", fullmatch=True))


@given(before=st.lists(condition, max_size=2), odd=st.tuples(plain, relation_like, plain), after=st.lists(condition, max_size=2),
       returns=st.booleans())
def test_a_condition_is_read_with_its_relation_or_refused_naming_its_line(
    before: list[tuple[str, str, str]], odd: tuple[str, str, str], after: list[tuple[str, str, str]], returns: bool
) -> None:
    """Every condition of a step is read with one of the relations, never as part of the value before it: a step whose
    conditions all have one reads back as written; one with any other word there is refused at its line, naming it."""
    conditions = [*before, odd, *after]
    written = " and ".join(f'"{name}" {relation} "{value}"' for name, relation, value in conditions)
    step = f'the tool "search" should return a result with {written}' if returns else f'the agent should call "search" with {written}'
    text = f'Feature: Flights\n  Scenario: A search\n    When the user asks "Where to?"\n    Then {step}\n'
    if odd[1] in RELATIONS:
        (conversation,) = read_feature_text(text, "fuzz.feature").conversations
        (expectation,) = conversation.turns[0].trajectory
        assert [(a.name, a.relation, a.value) for a in expectation.arguments] == conditions
        return
    with pytest.raises(InputError) as refused:
        read_feature_text(text, "fuzz.feature")
    (problem,) = refused.value.problems
    assert problem.location == "fuzz.feature:4" and f"{odd[1]!r} is no relation" in problem.message
