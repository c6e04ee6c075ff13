"""Count turns: a spec that asks how many, or which has more, gets turns whose reference is a count of rows,
computed over the whole table, asked as a person asks it, with an exact check in the .feature file."""

from __future__ import annotations

import pytest

from bddgen.config import TurnCheckSettings
from bddgen.embed.base import HashingEmbedder
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.implement.chains import Chain
from bddgen.implement.counts import count_candidates, count_question, counted_things, counts_rows_of, counts_shown
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.tables import group_counts
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, SystemDescription, TableDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.normalise import content_words
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import Conversation, QueryType, Spec
from bddgen.text import plural

MEDIA = TableDocument(
    id="tables/media", title="MediaType", headers=["MediaTypeId", "Name"],
    rows=[["1", "MPEG audio file"], ["2", "Protected AAC audio file"], ["3", "Protected MPEG-4 video file"]],
)
TRACKS = TableDocument(
    id="tables/track", title="Track", headers=["TrackId", "Name", "MediaTypeId", "Status"],
    rows=[[str(n), f"Song {n}", "1" if n % 3 else "2", "Landed" if n % 2 else "Delayed"] for n in range(1, 13)] + [["13", "Lone", "3", "Delayed"]],
)


@pytest.mark.parametrize(
    ("noun", "many"), [("track", "tracks"), ("media type", "media types"), ("country", "countries"), ("fare class", "fare classes"), ("day", "days")]
)
def test_a_row_noun_is_made_plural_by_its_last_word(noun: str, many: str) -> None:
    assert plural(noun) == many


@pytest.mark.parametrize(
    ("text", "table", "counts"),
    [("which media type has more tracks", TRACKS, True), ("the number of landed tracks", TRACKS, True),
     ("how many tracks are MPEG audio files", TRACKS, True), ("how many checked bags does the fare include", TRACKS, False),
     ("which media type has more tracks", MEDIA, False), ("the name of the track", TRACKS, False)],
)
def test_a_spec_counts_a_tables_rows_when_it_asks_how_many_of_what_the_rows_are(text: str, table: TableDocument, counts: bool) -> None:
    assert counts_rows_of(table, counted_things(text)) is counts


def test_a_filler_counts_the_rows_holding_the_value_the_earlier_turn_named() -> None:
    found = list(count_candidates(TRACKS, set(), about="2", holder="MediaTypeId"))
    assert len(found) == 1
    evidence = found[0]
    assert (evidence.op, evidence.filter, evidence.referred, evidence.value) == ("count", {"MediaTypeId": "2"}, "MediaTypeId", "4")
    assert TRACKS.rows[evidence.row][2] == "2"
    # a value one row holds is a look-up, and the table's own key counts nothing
    assert not list(count_candidates(TRACKS, set(), about="3", holder="MediaTypeId"))
    assert not list(count_candidates(TRACKS, set(), about="5", holder="TrackId"))
    assert not list(count_candidates(TRACKS, set(), about="2", holder="MediaTypeId", avoid=[(evidence.row, "MediaTypeId")]))


def test_a_single_turn_counts_a_value_the_spec_names_in_words_only() -> None:
    found = list(count_candidates(TRACKS, {"landed", "tracks"}))
    assert [(e.filter, e.value) for e in found] == [({"Status": "Landed"}, "6")]
    assert not list(count_candidates(TRACKS, {"tracks", "songs"}))  # no value the spec names: no count to ask


def test_count_questions_read_as_a_person_asks_them() -> None:
    referred = TableEvidence(table=TRACKS.id, row=1, column="MediaTypeId", filter={"MediaTypeId": "2"}, referred="MediaTypeId", op="count")
    assert count_question("track", referred, "that media type") == "For that media type, how many tracks are there?"
    by_key = referred.model_copy(update={"referred": ""})
    assert count_question("track", by_key, "") == "How many tracks are there for media type 2?"
    by_words = TableEvidence(table=TRACKS.id, row=0, column="Status", filter={"Status": "Landed"}, op="count")
    assert count_question("track", by_words, "") == "How many tracks have status Landed?"


def test_the_round_trip_shows_several_counts_and_the_asked_one_in_its_place_by_size() -> None:
    evidence = TableEvidence(table=TRACKS.id, row=2, column="MediaTypeId", filter={"MediaTypeId": "3"}, op="count")
    shown = counts_shown(TRACKS, evidence, "For that media type, how many tracks are there?").splitlines()
    assert shown[1:] == ["media type id 1: 8 rows", "media type id 2: 4 rows", "media type id 3: 1 rows"]
    assert group_counts(TRACKS, "MediaTypeId") == [("1", 8), ("2", 4), ("3", 1)]


def _writer(spec: Spec, plan: TurnPlan, checks: TurnCheckSettings = TurnCheckSettings()) -> ConversationWriter:
    corpus = Corpus(system=SystemDescription(name="Music shop", purpose="Answers questions about the shop's catalogue."), documents=[MEDIA, TRACKS])
    context = WriterContext(
        spec=spec, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()), lm=LanguageModel(ScriptedLM(by_task=faithful_replies()), max_retries=0),
        recognizer=RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(spec.as_text())),
        attempts=2, alternatives=4, min_turns=3, checks=checks,
    )
    return ConversationWriter(context, plan)


KEYS_WAIVED = TurnCheckSettings(identifiers=False)  # a bridge over a key: its PRE-FILLER asks the key, which no person asks


def test_a_bridge_whose_pre_filler_asks_a_key_is_not_asked() -> None:
    """"What is the media type id of Protected AAC audio file?" asks a join key: refused, so the bridge is not crossed;
    with the check off, what it would have refused is kept in the turn's record."""
    spec = Spec.create("Media types by tracks", ["a music fan"], ["the fan asks which media type has more tracks"], ["the assistant names it"])
    result = _writer(spec, _bridged_plan()).write()
    pre = result.records[0]
    assert pre.query_type is QueryType.PRE_FILLER and pre.outcome == "dropped" and 'asks for a key ("media type id")' in pre.dropped
    assert QueryType.FILLER not in {t.query_type for t in result.turns}
    waived = _writer(spec, _bridged_plan(), KEYS_WAIVED).write().records[0]
    assert waived.outcome == "kept" and any("media type id" in w for w in waived.waived)


def _bridged_plan() -> TurnPlan:
    columns = {MEDIA.id: "MediaTypeId", TRACKS.id: "MediaTypeId"}
    return TurnPlan(
        chain=Chain(documents=[MEDIA.id, TRACKS.id], hops=[]),
        turns=[
            PlannedTurn(query_type=QueryType.PRE_FILLER, documents=[MEDIA.id], bridge="2", columns=columns),
            PlannedTurn(query_type=QueryType.FILLER, documents=[TRACKS.id], bridge="2", proxy="that media type", columns=columns),
            PlannedTurn(query_type=QueryType.SYNTHESIS, documents=[MEDIA.id, TRACKS.id]),
        ],
    )


def test_a_spec_asking_which_has_more_gets_a_count_turn_with_an_exact_check_in_the_feature() -> None:
    spec = Spec.create("Media types by tracks", ["a music fan"], ["the fan asks which media type has more tracks"], ["the assistant names it"])
    result = _writer(spec, _bridged_plan(), KEYS_WAIVED).write()
    assert not result.dropped, result.dropped
    filler = next(t for t in result.turns if t.query_type is QueryType.FILLER)
    assert filler.question == "How many tracks are there for that media type?"
    assert filler.exact is not None and (filler.exact.operation, filler.exact.value) == ("count", "4")
    assert "rows where MediaTypeId = 2" in filler.exact.detail

    text = render_feature(FeatureDocument(spec=spec, conversations=[Conversation(id="c1", title="Media", turns=result.turns)]))
    assert "| exact: count tables/track" in text and 'the answer should contain "4"' in text
    read = next(t for t in read_feature_text(text, "media.feature").conversations[0].turns if t.query_type is QueryType.FILLER)
    assert read.exact is not None and (read.exact.operation, read.exact.value) == ("count", "4")


def test_a_spec_that_asks_no_count_gets_a_look_up_instead() -> None:
    spec = Spec.create("Media type names", ["a music fan"], ["the fan asks for the name of a track of a media type"], ["the assistant names it"])
    result = _writer(spec, _bridged_plan(), KEYS_WAIVED).write()
    filler = next(t for t in result.turns if t.query_type is QueryType.FILLER)
    assert filler.exact is not None and filler.exact.operation == "lookup"
