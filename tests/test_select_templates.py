"""Selection diverse in what specs test: near-duplicates of one template wait, every focus is represented."""

from __future__ import annotations

import numpy as np

from bddgen.config import SelectSettings
from bddgen.select.pool import SpecPool
from bddgen.select.stage import select_specs
from bddgen.select.templates import NearDuplicates, template
from bddgen.specs import Spec


def _spec(title: str, focus: str, then: str = "the assistant should give the value") -> Spec:
    return Spec.create(title, ["a user of the assistant"], ["the user asks"], [then], focus=focus)


def _pool(specs: list[Spec], embeddings: np.ndarray, documents: list[list[str]]) -> SpecPool:
    unit = embeddings / np.linalg.norm(embeddings, axis=1, keepdims=True)
    return SpecPool(specs=specs, embeddings=unit.astype(np.float32), documents=documents, preselected=0)


def test_a_template_masks_names_numbers_and_quoted_values() -> None:
    assert template(_spec("What is the city of Miami?", "f")) == template(_spec("What is the city of Seattle?", "f"))
    assert template(_spec("Fare 'Saver' allows 2 bags", "f")) == template(_spec("Fare 'Flex' allows 3 bags", "f"))
    assert template(_spec("What is the city of Miami?", "f")) != template(_spec("What is the country of Miami?", "f"))


def test_near_duplicates_by_template_overlap_and_by_embedding() -> None:
    specs = [
        _spec("What is the city of Miami?", "f"),
        _spec("What is the city of Seattle?", "f"),
        _spec("Baggage allowance of Saver fares", "g"),
        _spec("Refunds after a cancelled flight", "h"),
    ]
    embeddings = np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0], [0, 0.05, 1.0]])
    duplicates = NearDuplicates(specs, embeddings, max_cosine=0.99, min_template_overlap=0.8)
    assert duplicates.reason(0, 1).startswith("same template")
    assert duplicates.reason(2, 3).startswith("embedding cosine")
    assert duplicates.reason(0, 2) == ""
    assert [(a, b) for a, b, _ in duplicates.pairs([0, 1, 2, 3])] == [(0, 1), (2, 3)]
    assert duplicates.of(0).tolist() == [True, True, False, False]


def test_a_second_spec_of_one_template_waits_while_another_focus_is_missing() -> None:
    # rows 0 and 1 are far apart in embedding space and cover the most documents, so plain greedy takes both
    specs = [
        _spec("What is the city of Miami?", "airports"),
        _spec("What is the city of Seattle?", "airports"),
        _spec("Checked bags of a Saver fare", "policies"),
    ]
    embeddings = np.array([[1.0, 0, 0], [0, 1.0, 0], [0.9, 0.1, 0.4]])
    documents = [["a", "b", "c"], ["d", "e", "f"], ["a"]]
    pool = _pool(specs, embeddings, documents)
    chosen = select_specs(pool, 2, SelectSettings(), seed=0)
    titles = [s.spec.title for s in chosen.selected]
    assert "Checked bags of a Saver fare" in titles and len(titles) == 2
    plain = select_specs(pool, 2, SelectSettings(near_duplicates=False, cover_focuses=False), seed=0)
    assert {s.spec.title for s in plain.selected} == {"What is the city of Miami?", "What is the city of Seattle?"}


def test_every_focus_is_represented_when_k_allows() -> None:
    focuses = ["tables", "tables", "tables", "policies", "refusals"]
    specs = [_spec(f"Distinct subject number {word}", focus) for word, focus in zip(["one", "two", "three", "four", "five"], focuses)]
    embeddings = np.eye(5)
    documents = [["a", "b", "c", "d"], ["e", "f", "g", "h"], ["i", "j", "k", "l"], ["m"], ["n"]]
    pool = _pool(specs, embeddings, documents)
    chosen = select_specs(pool, 3, SelectSettings(), seed=0)
    assert sorted(s.spec.focus for s in chosen.selected) == ["policies", "refusals", "tables"]
    unconstrained = select_specs(pool, 3, SelectSettings(cover_focuses=False), seed=0)
    assert [s.spec.focus for s in unconstrained.selected] == ["tables", "tables", "tables"]


def test_near_duplicates_are_still_taken_when_nothing_else_is_left() -> None:
    specs = [_spec(f"What is the city of {city}?", "airports") for city in ("Miami", "Seattle", "Denver")]
    pool = _pool(specs, np.eye(3), [["a"], ["b"], ["c"]])
    chosen = select_specs(pool, 3, SelectSettings(), seed=0)
    assert len(chosen.selected) == 3


def test_a_spec_is_mapped_to_the_documents_holding_its_subject_first() -> None:
    from pathlib import Path

    from bddgen.corpus import load_corpus
    from bddgen.embed.base import HashingEmbedder
    from bddgen.implement.subject import SubjectReader
    from bddgen.retrieval.memory import MemoryIndex
    from bddgen.select.pool import relevant_documents

    corpus = load_corpus(Path(__file__).resolve().parents[1] / "corpora" / "airline")
    index = MemoryIndex(HashingEmbedder(), corpus)
    spec = Spec.create("Schedule of flight XV104", ["a passenger"], ["the user asks when flight XV104 departs and arrives"],
                       ["the assistant should give the scheduled departure and arrival times"])
    mapped = relevant_documents(index, spec, 5, 0.0, SubjectReader(corpus, index))
    assert mapped[0] in ("tables/flights", "tables/bookings") and len(mapped) <= 5  # the rows that hold XV104
    assert all("XV104" in corpus.by_id()[d].as_text() for d in mapped[:2])


def test_values_the_corpus_holds_are_masked_like_names_capitalised_or_not() -> None:
    from bddgen.models import Corpus, SystemDescription, TableDocument
    from bddgen.select.templates import corpus_values

    media = TableDocument(id="tables/media", title="MediaType", headers=["MediaTypeId", "Name"],
                          rows=[["1", "MPEG audio file"], ["2", "Protected AAC audio file"], ["3", "Protected MPEG-4 video file"], ["4", "flown"]])
    values = corpus_values(Corpus(system=SystemDescription(name="Music store", purpose="Sells music."), documents=[media]))
    assert "protected aac audio file" in values and "flown" not in values  # one lower-case word is too often a plain word
    aac = _spec("What is the name of the protected AAC audio file?", "f")
    mpeg = _spec("What is the name of the protected MPEG-4 video file?", "f")
    assert template(aac) != template(mpeg)  # capitals alone leave "audio" and "video"
    assert template(aac, values) == template(mpeg, values)
    duplicates = NearDuplicates([aac, mpeg], np.array([[1.0, 0], [0, 1.0]]), max_cosine=0.99, min_template_overlap=0.8, values=values)
    assert duplicates.reason(0, 1).startswith("same template")
    assert template(_spec("What is the price of a protected AAC audio file?", "f"), values) != template(aac, values)
