"""The coverage certificate on a small hand-made project."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.corpus import load_corpus
from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import render_feature
from bddgen.implement.entities import EntityCache
from bddgen.implement.linking import LinkingEntity, LinkingRecord, linking_entities, linking_path, record_linking
from bddgen.ner.base import RegexRecognizer
from bddgen.project import Project
from bddgen.report.coverage import coverage_certificate
from bddgen.report.suite import suite_coverage
from bddgen.specs import Conversation, QueryType, Spec, Turn

TEXTS = {
    "harbour": ("Harbour City FC", "founded long ago, Harbour City FC plays at Seaview Arena. Tomas Okafor scored for Harbour City FC for years."),
    "okafor": ("Tomas Okafor", "a striker, Tomas Okafor joined Redmarsh Rovers after leaving Harbour City FC."),
    "redmarsh": ("Redmarsh Rovers", "a club that won the Varen Cup at Crownfield Stadium."),
    "lonely": ("Weather in Veloria", "rain falls often in the northern valleys."),
}
TABLE = "player,club,goals\nTomas Okafor,Harbour City FC,248\nElias Marwood,Korrin Sporting,221\n"


def make_project(root: Path, conversations: list[Conversation], *, implemented: bool = True) -> Project:
    """A project with one spec; `implemented`: with the linking entities `bddgen implement` records."""
    corpus = root / "corpus"
    (corpus / "text").mkdir(parents=True)
    (corpus / "tables").mkdir()
    (corpus / "system.yaml").write_text("name: Sports assistant\npurpose: Answers questions about Velorian football.\n")
    for stem, (title, passage) in TEXTS.items():
        (corpus / "text" / f"{stem}.md").write_text(f"# {title}\n\n{passage}\n")
    (corpus / "tables" / "scorers.csv").write_text(TABLE)
    (root / "bddgen.toml").write_text('corpus = "corpus"\n[ner]\nbackend = "regex"\n')
    spec = Spec.create("Club histories", ["a fan"], ["the fan asks about clubs"], ["the assistant answers from the articles"])
    document = FeatureDocument(spec=spec, conversations=conversations)
    (root / "features").mkdir()
    (root / "features" / "club-histories.feature").write_text(render_feature(document))
    project = Project.discover(root)
    if implemented:
        record_linking(load_corpus(project.corpus_path), EntityCache(RegexRecognizer()), linking_path(project.state_path))
    return project


def conversation(cid: str, chain: list[str], extra_docs: list[str]) -> Conversation:
    return Conversation(
        id=cid,
        title=f"Conversation {cid}",
        chain=chain,
        turns=[
            Turn(question="Where does Harbour City FC play?", answer="Seaview Arena", query_type=QueryType.SINGLE_DOC, doc_ids=chain[:1]),
            Turn(question="Who scored most?", answer="Tomas Okafor", query_type=QueryType.MULTI_DOC, doc_ids=extra_docs),
        ],
    )


def test_certificate_lists_touched_and_untouched_documents_and_entities(tmp_path: Path) -> None:
    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], ["tables/scorers"])])
    certificate = suite_coverage(project)
    assert (certificate.features, certificate.conversations) == (1, 1)
    documents = certificate.group("all documents")
    assert {i.id for i in documents.touched} == {"text/harbour", "text/okafor", "tables/scorers"}
    assert {i.id for i in documents.untouched} == {"text/redmarsh", "text/lonely"}
    assert documents.fraction == pytest.approx(3 / 5)
    assert certificate.group("tables").fraction == 1.0
    assert certificate.group("text documents").covered == 2
    entities = certificate.group("linking entities")
    touched = {i.id for i in entities.touched}
    assert "Tomas Okafor" in touched and "Harbour City FC" in touched
    # Redmarsh Rovers links okafor and redmarsh, but no conversation holds both.
    assert "Redmarsh Rovers" in {i.id for i in entities.untouched}
    assert all(i.specs == [certificate_spec(project)] for i in entities.touched)
    assert "policies" not in {g.name for g in certificate.groups}  # the corpus has none


def certificate_spec(project: Project) -> str:
    from bddgen.features.reader import read_feature

    return read_feature(project.features_path / "club-histories.feature").spec.id


def test_bridging_entities_from_provenance_win_over_shared_documents(tmp_path: Path) -> None:
    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], [])])
    corpus = load_corpus(project.corpus_path)
    from bddgen.report.suite import read_suite

    features = read_suite(project.features_path)
    linking = {"Tomas Okafor": {"text/harbour", "text/okafor"}, "Harbour City FC": {"text/harbour", "text/okafor"}}
    spec_id = features[0].spec.id
    certificate = coverage_certificate(corpus, features, linking, bridging={(spec_id, "c1"): {"tomas okafor"}})
    assert [i.id for i in certificate.group("linking entities").touched] == ["Tomas Okafor"]
    without = coverage_certificate(corpus, features, linking)
    assert len(without.group("linking entities").touched) == 2


def test_linking_entities_skip_weak_bridges(tmp_path: Path) -> None:
    import networkx as nx

    from bddgen.implement.graph import Bridge

    graph = nx.Graph()
    graph.add_edge("a", "b", weight=1.0, bridges=[Bridge(kind="entity", value="Okafor", specificity=1.0), Bridge(kind="entity", value="1995", specificity=0.1, weak=True)])
    graph.add_edge("b", "c", weight=1.0, bridges=[Bridge(kind="entity", value="okafor", specificity=1.0)])
    assert linking_entities(graph) == {"Okafor": {"a", "b", "c"}}


def test_empty_suite_touches_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path, [])
    certificate = suite_coverage(project)
    assert certificate.conversations == 0
    assert all(g.covered == 0 for g in certificate.groups)


def test_implement_sidecars_name_the_bridging_entities(tmp_path: Path) -> None:
    from bddgen.implement.chains import Hop
    from bddgen.implement.graph import Bridge
    from bddgen.implement.provenance import ConversationProvenance, FeatureProvenance, provenance_path, write_provenance

    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], ["tables/scorers"])])
    feature = project.features_path / "club-histories.feature"
    hop = Hop(
        source="text/harbour",
        target="tables/scorers",
        bridges=[Bridge(kind="entity", value="1995", specificity=0.9, weak=True), Bridge(kind="value", value="Tomas Okafor", specificity=0.6)],
    )
    sidecar = FeatureProvenance(
        spec_id=certificate_spec(project),
        feature=feature.name,
        conversations=[ConversationProvenance(conversation_id="c1", chain=["text/harbour", "tables/scorers"], hops=[hop], model="m", prompt_hash="h", created="2025")],
    )
    write_provenance(provenance_path(feature), sidecar)
    certificate = suite_coverage(project)
    assert [i.id for i in certificate.group("linking entities").touched] == ["Tomas Okafor"]
    assert "implement stage" in certificate.entity_source


def _fail(*args: object, **kwargs: object) -> None:
    raise AssertionError("the report rebuilt the document graph")


def test_the_report_reads_the_recorded_entities_and_never_rebuilds_the_graph(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], ["tables/scorers"])])
    path = linking_path(project.state_path)
    record = LinkingRecord.model_validate_json(path.read_text())
    assert {e.name for e in record.entities} >= {"Tomas Okafor", "Harbour City FC", "Redmarsh Rovers"}
    # A record that disagrees with the graph: the report must show what was recorded, not what a rebuild finds.
    edited = record.model_copy(
        update={"entities": [LinkingEntity(name="Seaview Arena", documents=["text/harbour", "text/okafor"]),
                             LinkingEntity(name="Crownfield Stadium", documents=["text/lonely", "text/redmarsh"])]}
    )
    path.write_text(edited.model_dump_json())
    for module in ("bddgen.implement.graph", "bddgen.implement.linking"):
        monkeypatch.setattr(f"{module}.build_document_graph", _fail)
    monkeypatch.setattr(EntityCache, "entities", _fail)
    monkeypatch.setattr(RegexRecognizer, "extract_many", _fail)
    certificate = suite_coverage(project)
    entities = certificate.group("linking entities")
    assert [i.id for i in entities.touched] == ["Seaview Arena"] and [i.id for i in entities.untouched] == ["Crownfield Stadium"]
    assert "implement stage's document graph (regex recogniser)" in certificate.entity_source


def test_a_project_implemented_without_the_record_says_so_and_how_to_fix_it(tmp_path: Path) -> None:
    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], [])], implemented=False)
    certificate = suite_coverage(project)
    assert "linking entities" not in {g.name for g in certificate.groups}
    assert certificate.group("all documents").covered == 2  # documents are still certified
    assert "older bddgen version" in certificate.entity_source and "run `bddgen implement`" in certificate.entity_source
    assert ".bddgen/implement/linking-entities.json" in certificate.entity_source


def test_a_record_of_an_earlier_corpus_is_flagged_and_a_damaged_one_names_the_file(tmp_path: Path) -> None:
    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], [])])
    assert "corpus last changed" not in suite_coverage(project).entity_source
    (project.corpus_path / "text" / "lonely.md").write_text("# Weather in Veloria\n\nsnow falls in the south.\n")
    assert "corpus last changed" in suite_coverage(project).entity_source
    linking_path(project.state_path).write_text('{"entities": 3}')
    with pytest.raises(InputError, match="linking-entities.json.*bddgen implement"):
        suite_coverage(project)


def test_the_coverage_stage_builds_no_entity_recogniser(tmp_path: Path) -> None:
    from bddgen.pipeline import ModelBuilders, Models, stages

    project = make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], ["tables/scorers"])])

    def no_recogniser(*args: object) -> RegexRecognizer:
        raise AssertionError("the report built an entity recogniser")

    certificate = stages.coverage(Models(project, ModelBuilders(recognizer=no_recogniser)))
    assert certificate is not None and "Tomas Okafor" in {i.id for i in certificate.group("linking entities").touched}
