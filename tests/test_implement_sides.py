"""A spec that names two things or more (a comparison, a list) gets a turn on each: a SINGLE-DOC turn whose
evidence holds it, or the PRE-FILLER of a move from its row to a table whose rows the spec counts."""

from __future__ import annotations

from bddgen.embed.base import HashingEmbedder
from bddgen.implement.chains import Chain, Hop
from bddgen.implement.evidence import sentence_candidates, table_candidates
from bddgen.implement.graph import Bridge
from bddgen.implement.grounding import DocumentTexts, mentions
from bddgen.implement.plan import Sides, plan_turns
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.subject import spec_sides, spec_subject
from bddgen.implement.turns import ConversationWriter, WriterContext, WrittenConversation
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.normalise import content_words
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import QueryType, Spec

Q = QueryType
MEDIA = TableDocument(
    id="tables/media", title="MediaType", headers=["MediaTypeId", "Name"],
    rows=[["1", "MPEG audio file"], ["2", "Protected AAC audio file"], ["3", "Protected MPEG-4 video file"]],
)
TRACKS = TableDocument(
    id="tables/track", title="Track", headers=["TrackId", "Name", "MediaTypeId", "Milliseconds"],
    rows=[[str(n), f"Song {n}", "1" if n % 3 else "2", str(1000 * n)] for n in range(1, 13)] + [["13", "Lone", "3", "9000"], ["14", "Other", "3", "8000"]],
)
RENTALS = TableDocument(
    id="tables/rentals", title="Car rental offers", headers=["OfferId", "Airport", "PricePerDay"],
    rows=[["CR001", "AMS", "154.35"], ["CR013", "AMS", "98.10"], ["CR023", "LIS", "61.20"]],
)
CITIES = TableDocument(id="tables/cities", title="Destinations", headers=["Airport", "City"], rows=[["AMS", "Amsterdam"], ["LIS", "Lisbon"]])
MEDIA_HOP = Hop(
    source=MEDIA.id, target=TRACKS.id,
    bridges=[Bridge(kind="field", value="MediaTypeId", columns={MEDIA.id: "MediaTypeId", TRACKS.id: "MediaTypeId"}, examples=["1", "2", "3"], specificity=0.5)],
)
RENTAL_HOP = Hop(
    source=RENTALS.id, target=CITIES.id,
    bridges=[Bridge(kind="field", value="Airport", columns={RENTALS.id: "Airport", CITIES.id: "Airport"}, examples=["AMS", "LIS"], specificity=0.5)],
)
COMPARE_TRACKS = Spec.create(
    "Protected AAC against Protected MPEG-4", ["a music fan compares media types"],
    ["the fan asks whether Protected AAC audio file or Protected MPEG-4 video file has more tracks"],
    ["the assistant should count the tracks of each media type", "and name the media type with more tracks"],
)
COMPARE_PRICES = Spec.create(
    "Comparison of car rental prices", ["a traveller compares two offers"], ["the traveller asks which offer costs less per day"],
    ["the assistant should list CR023 and CR001 with their prices per day", "and name the cheaper offer"],
)


def _corpus(*documents: TableDocument | TextDocument) -> Corpus:
    return Corpus(system=SystemDescription(name="Shop", purpose="Answers questions about the shop."), documents=list(documents))


def _sides(spec: Spec, corpus: Corpus) -> Sides:
    subject = spec_subject(spec, corpus, MemoryIndex(HashingEmbedder(), corpus))
    return spec_sides(subject, spec, corpus.by_id())


def test_the_sides_of_a_spec_are_the_things_it_names_their_rows_and_the_tables_it_counts() -> None:
    sides = _sides(COMPARE_TRACKS, _corpus(MEDIA, TRACKS))
    assert set(sides.names) == {"Protected AAC", "Protected MPEG-4"}  # what its capitals name, found inside the rows' names
    assert sides.rows[(MEDIA.id, "Protected MPEG-4")]["MediaTypeId"] == "3"
    assert sides.counted == frozenset({TRACKS.id})  # "more tracks": the rows of the track table, not of media types
    single = Spec.create("AAC tracks", ["a fan"], ["the fan asks how many tracks are Protected AAC audio file"], ["the assistant counts them"])
    assert _sides(single, _corpus(MEDIA, TRACKS)) == Sides()  # one thing named: nothing to compare


def test_a_comparison_asks_each_side_on_the_rows_that_hold_it() -> None:
    sides = _sides(COMPARE_PRICES, _corpus(RENTALS, CITIES))
    plan = plan_turns(Chain(documents=[RENTALS.id, CITIES.id], hops=[RENTAL_HOP]), 5, set(), {}, lambda _: "other", sides=sides)
    asked = [(t.query_type, t.side) for t in plan.turns]
    assert asked[:2] == [(Q.SINGLE_DOC, "CR023"), (Q.SINGLE_DOC, "CR001")]
    assert [t.query_type for t in plan.turns][-2:] == [Q.UNANSWERABLE, Q.SYNTHESIS] and len(plan.turns) == 5
    assert plan.chain.documents == [RENTALS.id, CITIES.id]  # the document no move reaches gets a turn of its own
    assert plan.turns[2].documents == [CITIES.id]
    for side in ("CR023", "CR001"):
        found = next(table_candidates(RENTALS, {"price", "day"}, side=side))
        assert found.filter == {"OfferId": side} and found.column == "PricePerDay"  # the question names the side


def test_a_side_whose_row_leads_to_the_counted_table_is_asked_by_the_move_there() -> None:
    sides = _sides(COMPARE_TRACKS, _corpus(MEDIA, TRACKS))
    plan = plan_turns(Chain(documents=[MEDIA.id, TRACKS.id], hops=[MEDIA_HOP]), 5, set(), {}, lambda _: "other", sides=sides)
    types = [t.query_type for t in plan.turns]
    assert types == [Q.SINGLE_DOC, Q.PRE_FILLER, Q.FILLER, Q.UNANSWERABLE, Q.SYNTHESIS]
    first, pre = plan.turns[0], plan.turns[1]
    value = {"Protected AAC": "2", "Protected MPEG-4": "3"}
    other = next(name for name in sides.names if name != first.side)
    assert pre.bridge == value[other] and plan.turns[2].proxy == "that media type"


def test_a_spec_naming_one_thing_gets_the_plan_it_always_had() -> None:
    chain = Chain(documents=[MEDIA.id, TRACKS.id], hops=[MEDIA_HOP])
    for turns in (4, 5, 7):
        plain = plan_turns(chain, turns, set(), {}, lambda _: "other")
        assert plain == plan_turns(chain, turns, set(), {}, lambda _: "other", sides=Sides(names=("MPEG audio file",)))
        assert all(t.side == "" for t in plain.turns)


def test_a_side_on_a_page_of_its_own_is_asked_from_any_sentence_elsewhere_from_one_naming_it() -> None:
    other = TextDocument(
        id="t/league", title="The league",
        passage="The Millgate Ground holds 18,750 people on match days. The Crownfield Stadium was opened by the league in 1931.",
    )
    found = [e.text for e in sentence_candidates(other, set(), RegexRecognizer(), must="Crownfield Stadium")]
    assert found and all("Crownfield Stadium" in text for text in found)


def _context(spec: Spec, corpus: Corpus, sides: Sides) -> WriterContext:
    return WriterContext(
        spec=spec, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()), lm=LanguageModel(ScriptedLM(by_task=faithful_replies()), max_retries=0),
        recognizer=RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(spec.as_text())),
        attempts=2, alternatives=4, min_turns=3, sides=sides,
    )


def _written_comparison() -> WrittenConversation:
    corpus = _corpus(RENTALS, CITIES)
    sides = _sides(COMPARE_PRICES, corpus)
    plan = plan_turns(Chain(documents=[RENTALS.id, CITIES.id], hops=[RENTAL_HOP]), 5, set(), {}, lambda _: "other", sides=sides)
    return ConversationWriter(_context(COMPARE_PRICES, corpus, sides), plan).write()


def test_the_written_comparison_asks_about_both_sides_with_their_values() -> None:
    result = _written_comparison()
    assert not result.dropped, result.dropped
    answered = {t.answer for t in result.turns}
    assert {"61.20", "154.35"} <= answered  # each side's price per day
    assert all(any(mentions(t.question, side) for t in result.turns) for side in ("CR023", "CR001"))


def test_a_side_no_one_row_holds_is_asked_on_its_own_and_the_other_takes_the_move() -> None:
    media = MEDIA.model_copy(update={"rows": [*MEDIA.rows, ["5", "AAC audio file"]]})
    spec = Spec.create(
        "AAC against Protected MPEG-4", ["a music fan"], ["the fan asks whether AAC or Protected MPEG-4 has more tracks"],
        ["the assistant should count the tracks of each media type"],
    )
    sides = _sides(spec, _corpus(media, TRACKS))
    assert sides.names == ("AAC", "Protected MPEG-4") and (media.id, "AAC") not in sides.rows  # two rows hold "AAC"
    plan = plan_turns(Chain(documents=[media.id, TRACKS.id], hops=[MEDIA_HOP]), 5, set(), {}, lambda _: "other", sides=sides)
    assert [(t.query_type, t.side, t.bridge) for t in plan.turns[:3]] == [(Q.SINGLE_DOC, "AAC", ""), (Q.PRE_FILLER, "", "3"), (Q.FILLER, "", "3")]


def test_the_synthesis_of_a_comparison_asks_for_its_sides_together() -> None:
    result = _written_comparison()
    synthesis = next(t for t in result.turns if t.query_type is Q.SYNTHESIS)
    assert synthesis.answer == "61.20; 154.35" and mentions(synthesis.question, "CR023") and mentions(synthesis.question, "CR001")


def test_a_side_is_asked_where_the_rows_are_that_thing_not_where_a_row_points_to_it() -> None:
    clubs = TableDocument(
        id="tables/clubs", title="Club honours", headers=["club", "home_venue", "cups"],
        rows=[["Orlanmouth Wanderers", "Seagate Park", "6"], ["Harbour City FC", "Quayside Park", "24"]],
    )
    venues = TableDocument(
        id="tables/venues", title="Football venues", headers=["venue", "capacity"], rows=[["Seagate Park", "22900"], ["Quayside Park", "48200"]]
    )
    spec = Spec.create(
        "Orlanmouth Wanderers and Seagate Park", ["a fan"], ["the fan asks about Orlanmouth Wanderers and its ground Seagate Park"],
        ["the assistant should give the cups of Orlanmouth Wanderers and the capacity of Seagate Park"],
    )
    sides = _sides(spec, _corpus(clubs, venues))
    assert sides.about[clubs.id] == {"Orlanmouth Wanderers"} and sides.about[venues.id] == {"Seagate Park"}
    assert not list(table_candidates(clubs, set(), side="Seagate Park"))  # a club's home venue: the row is the club
    found = next(table_candidates(venues, {"capacity"}, side="Seagate Park"))
    assert (found.filter, found.column, found.value) == ({"venue": "Seagate Park"}, "capacity", "22900")


def test_a_sides_own_figure_is_asked_before_a_computation_on_it() -> None:
    report = TableDocument(
        id="tables/report-21", title="Report 21 table", headers=["(Dollars in Millions)", "2019", "2018"],
        rows=[["Revenues", "$1,073.3", "$1,095.0"], ["Net Income", "$106.4", "$70.5"]],
    )
    spec = Spec.create(
        "Revenues and Net Income", ["an analyst"], ["the analyst compares the revenues and net income of 2019"],
        ["the assistant should compute the changes and percentage changes of both"],
    )
    corpus = _corpus(report)
    sides = _sides(spec, corpus)
    plan = plan_turns(Chain(documents=[report.id]), 5, set(), {}, lambda _: "other", sides=sides)
    first = next(ConversationWriter(_context(spec, corpus, sides), plan).kinds.candidates(plan.turns[0], Q.SINGLE_DOC))
    assert first.op == "lookup" and first.filter == {"(Dollars in Millions)": plan.turns[0].side}
