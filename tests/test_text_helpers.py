"""The shared text helpers: the word splitters, normalisers and ways of finding a value in a text (each variant
beside the others in its one module), one packing of pieces into chunks, one atomic write."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bddgen.files import atomic_write
from bddgen.normalise import content_words, content_words_as_written, normalise, normalise_punctuated, normalise_unquoted
from bddgen.numbers import number_tokens
from bddgen.text import pack, stem, stems, words
from bddgen.values import mentions_as_phrase_or_number, mentions_as_phrase_or_tokens


def test_words_are_case_folded_and_split_at_punctuation_and_underscores() -> None:
    assert words("Flight_Number XV104: 70 EUR, Straße!") == ["flight", "number", "xv104", "70", "eur", "strasse"]


@given(st.text())
def test_words_hold_only_word_characters_in_folded_form(text: str) -> None:
    for word in words(text):
        assert word and word == word.casefold() and "_" not in word and all(c.isalnum() for c in word)


def test_the_one_splitter_keeps_the_characters_it_is_asked_to_keep_and_only_folds_by_default() -> None:
    text = "Don't miss FC’s well-known Straße, max_turns XV104"
    assert words(text) == ["don", "t", "miss", "fc", "s", "well", "known", "strasse", "max", "turns", "xv104"]
    assert words(text, keep="'’", fold=False) == ["Don't", "miss", "FC’s", "well", "known", "Straße", "max", "turns", "XV104"]
    assert words(text, keep="_-") == ["don", "t", "miss", "fc", "s", "well-known", "strasse", "max_turns", "xv104"]
    assert words(text, digits=False) == ["don", "t", "miss", "fc", "s", "well", "known", "strasse", "max", "turns", "xv"]


@given(st.text(alphabet=st.characters(max_codepoint=127, blacklist_characters="'")))
def test_keeping_apostrophes_changes_nothing_in_a_text_without_them(text: str) -> None:
    assert words(text, keep="'") == words(text)


def test_the_one_stemmer_reads_the_language_of_the_corpus() -> None:
    assert stem("founded") == stem("founding") == "found"
    assert stems("chevaux", "fr") == stems("cheval", "fr") and stems("chevaux") != stems("cheval")
    assert stems("Flight_Numbers") == ["flight", "number"]


def test_the_normalisers_keep_what_their_users_compare() -> None:
    text = "The “Big” 61,811 – F.C.’s"
    assert normalise(text) == "big 61 811 fcs"
    assert normalise_punctuated(text) == "the \"big\" 61811 - f.c.'s"
    assert normalise_unquoted(text) == "the big 61,811 – f.c.s"


def test_content_words_as_written_keep_identifiers_and_apostrophes() -> None:
    text = "Set max_turns, don't retry the Café"
    assert content_words_as_written(text) == {"set", "max_turns", "don't", "retry", "café"}
    assert content_words(text) == {"set", "max", "turns", "don", "retry", "cafe"}


def test_number_tokens_are_whole_and_canonical() -> None:
    assert number_tokens("At 06:45 on 2025-06-11, XV104 cost $1,250.00") == {"06:45", "2025-06-11", "xv104", "1250"}
    assert "00" not in number_tokens("at 06:00")


def test_a_number_is_mentioned_as_a_whole_token_or_as_any_number_written() -> None:
    assert mentions_as_phrase_or_tokens("the bag weighs 20.0 kg", "20") and mentions_as_phrase_or_number("the bag weighs 20.0 kg", "20")
    assert mentions_as_phrase_or_number("flight XV7", "7") and not mentions_as_phrase_or_tokens("flight XV7", "7")
    assert mentions_as_phrase_or_tokens("founded by F.C. Varen", "fc varen") and mentions_as_phrase_or_number("founded by F.C. Varen", "fc varen")


@given(st.lists(st.text(alphabet="ab ", min_size=1), max_size=30), st.integers(min_value=1, max_value=12))
def test_pack_keeps_every_piece_in_order_within_the_budget(pieces: list[str], budget: int) -> None:
    groups = pack(pieces, budget)
    assert [piece for group in groups for piece in group] == pieces
    for group in groups:
        assert group and (len(group) == 1 or sum(len(p.split()) for p in group) <= budget)


def test_atomic_write_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "file.json"
    atomic_write(target, "first\n")
    atomic_write(target, b"second\n")
    assert target.read_text() == "second\n"
    assert [p.name for p in target.parent.iterdir()] == ["file.json"]


def test_column_identifiers_are_said_as_people_say_them() -> None:
    from bddgen.text import spoken_name

    assert spoken_name("UnitPrice") == "unit price" and spoken_name("BillingPostalCode") == "billing postal code"
    assert spoken_name("checked_bags") == "checked bags" and spoken_name("CustomerId") == "customer id"
    assert spoken_name("ISBN") == "ISBN" and spoken_name("HTTPStatus") == "HTTP status"
    assert spoken_name("Fee (EUR)") == "Fee (EUR)" and spoken_name("2019") == "2019"
    # a unit the identifier ends with is said as a unit: "price per day in EUR", not "price per day eur"
    assert spoken_name("price_per_day_eur") == "price per day in EUR" and spoken_name("distance_to_airport_km") == "distance to airport in km"
    assert spoken_name("eur") == "eur" and spoken_name("Europe") == "europe"  # a unit alone, or a word that starts like one, is not


def test_a_table_row_is_named_by_its_short_title_in_the_singular() -> None:
    from bddgen.text import row_noun, singular

    assert row_noun("Genre") == "genre" and row_noun("MediaType") == "media type" and row_noun("InvoiceLine") == "invoice line"
    assert row_noun("Fare classes") == "fare class" and row_noun("Branch libraries") == "branch library" and row_noun("Flights") == "flight"
    assert row_noun("Fare classes and their conditions") == "fare class" and row_noun("Airports served by Aurelian Skyways") == "airport"
    assert row_noun("Car rental offers at destination airports") == "car rental offer"
    assert row_noun("Partner hotels near Aurelian Skyways destinations") == "partner hotel"
    assert row_noun("Varen Cup finals, 1995-2024") == "Varen Cup final" and row_noun("Club honours in Velorian football") == "club honour"
    assert row_noun("Report 07: Deferred charges and other assets") == ""  # a caption names no row
    assert singular("status") == "status" and singular("bus") == "bus" and singular("boxes") == "box"


def test_a_key_column_is_said_as_the_thing_it_identifies() -> None:
    from bddgen.text import key_of

    assert key_of("MediaTypeId") == "media type" and key_of("rental_id") == "rental" and key_of("id") == ""
    assert key_of("iata_code") is None and key_of("Name") is None
