"""Reading a project's suite for the report: spec titles and the coverage certificate's inputs."""

from __future__ import annotations

from pathlib import Path

from bddgen.corpus import load_corpus
from bddgen.console import console
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import feature_files, read_feature
from bddgen.implement.chains import Hop
from bddgen.implement.entities import EntityCache
from bddgen.implement.graph import build_document_graph
from bddgen.implement.provenance import provenance_path, read_provenance
from bddgen.ner.base import EntityRecognizer
from bddgen.project import Project
from bddgen.report.coverage import ConversationKey, coverage_certificate, linking_entities
from bddgen.report.coverage_model import CoverageCertificate


def readable_suite(features_path: Path) -> tuple[list[FeatureDocument], list[Problem]]:
    """Every readable .feature file under the folder, and the problems of the others."""
    documents: list[FeatureDocument] = []
    problems: list[Problem] = []
    for path in feature_files([features_path]):
        try:
            documents.append(read_feature(path))
        except InputError as exc:
            problems += exc.problems
    return documents, problems


def read_suite(features_path: Path) -> list[FeatureDocument]:
    """Every .feature file under the folder; InputError lists the problems of every bad file."""
    documents, problems = readable_suite(features_path)
    if problems:
        raise InputError(problems, title="invalid feature files (see `bddgen validate`)")
    return documents


def spec_titles(features_path: Path) -> dict[str, str]:
    """Spec id -> title from the readable feature files (unreadable ones are skipped)."""
    titles: dict[str, str] = {}
    for path in feature_files([features_path]):
        try:
            document = read_feature(path)
        except InputError:
            continue
        titles[document.spec.id] = document.spec.title
    return titles


def hop_entities(hops: list[Hop]) -> set[str]:
    """The entity each hop crosses by: its most specific bridge that links on its own."""
    found: set[str] = set()
    for hop in hops:
        strong = [b for b in hop.bridges if not b.weak and b.kind != "field"]
        if strong:
            found.add(strong[0].entity)
    return found


def bridging_entities(features_path: Path) -> dict[ConversationKey, set[str]]:
    """(spec id, conversation id) -> the entities its chain crosses by, from the implement sidecars."""
    bridging: dict[ConversationKey, set[str]] = {}
    for path in feature_files([features_path]):
        provenance = read_provenance(provenance_path(path))
        if provenance is None:
            continue
        for conversation in provenance.conversations:
            bridging[(provenance.spec_id, conversation.conversation_id)] = hop_entities(conversation.hops)
    return bridging


def suite_coverage(project: Project, recognizer: EntityRecognizer) -> CoverageCertificate:
    """The certificate of the project's features over its corpus, entities by `recognizer`."""
    corpus = load_corpus(project.corpus_path)
    features, problems = readable_suite(project.features_path)
    for problem in problems:
        console.print(f"warning: left out of coverage: {problem} (see `bddgen validate`)", style="yellow", markup=False, soft_wrap=True)
    cache = EntityCache(recognizer, project.ensure_state() / "implement")  # shared with `bddgen implement`
    entities = dict(zip([d.id for d in corpus.texts], cache.entities([d.as_text() for d in corpus.texts])))
    graph = build_document_graph(corpus.texts, corpus.tables, entities)
    bridging = bridging_entities(project.features_path)
    source = f"the document graph ({recognizer.name} recogniser)"
    return coverage_certificate(
        corpus,
        features,
        linking_entities(graph),
        bridging=bridging,
        entity_source=source + (", bridges as the implement stage recorded them" if bridging else ""),
    )
