"""The shared text helpers: one word splitter, one packing of pieces into chunks, one atomic write."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from bddgen.files import atomic_write
from bddgen.text import pack, words


def test_words_are_case_folded_and_split_at_punctuation_and_underscores() -> None:
    assert words("Flight_Number XV104: 70 EUR, Straße!") == ["flight", "number", "xv104", "70", "eur", "strasse"]


@given(st.text())
def test_words_hold_only_word_characters_in_folded_form(text: str) -> None:
    for word in words(text):
        assert word and word == word.casefold() and "_" not in word and all(c.isalnum() for c in word)


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


def test_a_table_row_is_named_by_its_short_title_in_the_singular() -> None:
    from bddgen.text import row_noun, singular

    assert row_noun("Genre") == "genre" and row_noun("MediaType") == "media type" and row_noun("InvoiceLine") == "invoice line"
    assert row_noun("Fare classes") == "fare class" and row_noun("Branch libraries") == "branch library" and row_noun("Flights") == "flight"
    assert row_noun("Fare classes and their conditions") == "fare class" and row_noun("Airports served by Aurelian Skyways") == "airport"
    assert row_noun("Car rental offers at destination airports") == "car rental offer"
    assert row_noun("Varen Cup finals, 1995-2024") == "Varen Cup final" and row_noun("Club honours in Velorian football") == "club honour"
    assert row_noun("Report 07: Deferred charges and other assets") == ""  # a caption names no row
    assert singular("status") == "status" and singular("bus") == "bus" and singular("boxes") == "box"
