"""Reading a project's suite for the report: spec titles and the coverage certificate's inputs."""

from __future__ import annotations

from pathlib import Path

from bddgen.corpus import holds_documents, load_corpus
from bddgen.console import console
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import feature_files, read_feature
from bddgen.implement.chains import Hop
from bddgen.implement.linking import LINKING_FILE, LinkingRecord, linking_path, read_linking
from bddgen.implement.provenance import provenance_path, read_provenance
from bddgen.models import Corpus
from bddgen.project import Project
from bddgen.report.coverage import ConversationKey, coverage_certificate
from bddgen.report.coverage_model import CoverageCertificate

NOT_RECORDED = (
    f"no record: the project's features were implemented by an older bddgen version (or not here), so "
    f"{{state}}/implement/{LINKING_FILE} is missing; run `bddgen implement` to record them (implemented specs keep "
    "their conversations)"
)


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


def suite_coverage(project: Project) -> CoverageCertificate | None:
    """The certificate of the project's features over its corpus, linking entities as the implement stage recorded them;
    None when the corpus folder holds no document (a project testing an agent, made by `bddgen init` without `--corpus`,
    its system.yaml and maybe its agents.yaml there)."""
    if not holds_documents(project.corpus_path):
        return None
    corpus = load_corpus(project.corpus_path)
    features, problems = readable_suite(project.features_path)
    for problem in problems:
        console.print(f"warning: left out of coverage: {problem} (see `bddgen validate`)", style="yellow", markup=False, soft_wrap=True)
    record = read_linking(linking_path(project.state_path))
    bridging = bridging_entities(project.features_path)
    if record is None:
        source = NOT_RECORDED.format(state=project.settings.state_dir)
        console.print(f"warning: linking entities left out of coverage: {source}", style="yellow", markup=False, soft_wrap=True)
        return coverage_certificate(corpus, features, {}, bridging=bridging, entity_source=source)
    return coverage_certificate(
        corpus, features, record.holders(), bridging=bridging, entity_source=_recorded_source(record, corpus, bool(bridging))
    )


def _recorded_source(record: LinkingRecord, corpus: Corpus, bridging: bool) -> str:
    source = f"the implement stage's document graph ({record.recognizer} recogniser)"
    if record.corpus_digest != corpus.digest():
        source += ", recorded before the corpus last changed (run `bddgen implement` to record it again)"
    return source + (", bridges as the implement stage recorded them" if bridging else "")
