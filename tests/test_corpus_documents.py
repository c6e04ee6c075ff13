"""PDF, DOCX, PPTX, HTML and TXT files become anchored text documents (and tables) that turns cite."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bddgen.corpus import load_corpus
from bddgen.corpus.documents import sections, split_tables
from bddgen.errors import InputError
from bddgen.models import Corpus, TableDocument

pytest.importorskip("markitdown", reason="needs bddgen[documents]")
fpdf = pytest.importorskip("fpdf", reason="fixtures are made with fpdf2 (test extra)")
docx = pytest.importorskip("docx", reason="fixtures are made with python-docx (test extra)")
pptx = pytest.importorskip("pptx", reason="fixtures are made with python-pptx (documents extra)")

SYSTEM_YAML = "name: Airline Assistant\npurpose: Answers questions about baggage, pets and check-in.\n"


def make_pdf(path: Path) -> None:
    """Two pages; the second holds a ruled table of fees."""
    pdf = fpdf.FPDF()
    pdf.set_font("Helvetica", size=12)
    pdf.add_page()
    pdf.cell(text="Baggage policy", new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(0, 8, text="Each passenger may bring one cabin bag of up to 8 kg on board the Aurelian Skyways aircraft.")
    pdf.add_page()
    pdf.cell(text="Fees", new_x="LMARGIN", new_y="NEXT")
    pdf.multi_cell(0, 8, text="A second checked bag costs 45 EUR on routes within Europe.")
    with pdf.table() as table:
        for cells in [("Bag", "Fee EUR"), ("First", "0"), ("Second", "45"), ("Third", "90")]:
            row = table.row()
            for value in cells:
                row.cell(value)
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    document = docx.Document()
    document.add_heading("Pets on board", 0)
    document.add_heading("Cabin", 1)
    document.add_paragraph("Small pets travel in the cabin in a carrier of up to 8 kg with Aurelian Skyways.")
    document.add_heading("Hold", 1)
    document.add_paragraph("Larger pets travel in the hold on routes of up to six hours.")
    table = document.add_table(rows=3, cols=2)
    for i, cells in enumerate([("Animal", "Fee EUR"), ("Cat", "60"), ("Dog", "90")]):
        for j, value in enumerate(cells):
            table.cell(i, j).text = value
    document.save(str(path))


def make_pptx(path: Path) -> None:
    deck = pptx.Presentation()
    for title, body in [("Lounges", "Gold members use every lounge."), ("Upgrades", "Upgrades cost 12,000 points.")]:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))


HTML = """<html><head><title>Help centre</title></head><body>
<h1>Check-in</h1><p>Online check-in opens 30 hours before departure.</p>
<h2>At the airport</h2><p>Desks close 45 minutes before departure.</p>
<table><tr><th>Airport</th><th>Desks open</th></tr><tr><td>CPH</td><td>05:00</td></tr><tr><td>LIS</td><td>04:30</td></tr></table>
</body></html>"""


@pytest.fixture(scope="module")
def documents_corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Made once per module; a test that breaks it works on a copy."""
    root = tmp_path_factory.mktemp("docs") / "airline-docs"
    for folder in ("text", "policies"):
        (root / folder).mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    make_pdf(root / "policies" / "baggage.pdf")
    make_docx(root / "policies" / "pets.docx")
    make_pptx(root / "text" / "loyalty.pptx")
    (root / "text" / "help.html").write_text(HTML, encoding="utf-8")
    (root / "text" / "notes.txt").write_text("Meals are served on flights over two hours.\n", encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def loaded(documents_corpus: Path) -> Corpus:
    return load_corpus(documents_corpus)


def test_each_page_slide_and_section_is_a_document_with_its_anchor(loaded: Corpus) -> None:
    docs = loaded.by_id()
    assert docs["policies/baggage#page-1"].passage.startswith("Baggage policy\nEach passenger may bring one cabin bag")
    assert docs["policies/baggage#page-2"].source == "policies/baggage.pdf#page-2"
    assert docs["policies/pets#cabin"].title == "Pets on board: Cabin"
    assert docs["policies/pets#hold"].passage == "Larger pets travel in the hold on routes of up to six hours."
    assert docs["text/help#check-in"].title == "Help centre: Check-in"
    assert docs["text/help#at-the-airport"].passage == "Desks close 45 minutes before departure."
    assert "Upgrades cost 12,000 points." in docs["text/loyalty#slide-2"].passage
    assert docs["text/notes"].passage == "Meals are served on flights over two hours."
    assert {d.kind for i, d in docs.items() if i.startswith("policies/")} == {"policy"}


def test_tables_inside_documents_become_table_documents(loaded: Corpus) -> None:
    tables = {t.id: t for t in loaded.tables}
    assert tables["tables/baggage.table-1"].headers == ["Bag", "Fee EUR"]
    assert tables["tables/baggage.table-1"].rows == [["First", "0"], ["Second", "45"], ["Third", "90"]]
    assert tables["tables/baggage.table-1"].source == "policies/baggage.pdf#page-2"
    assert tables["tables/pets.table-1"].headers == ["Animal", "Fee EUR"]  # Word's empty header row is skipped
    assert tables["tables/help.table-1"].rows == [["CPH", "05:00"], ["LIS", "04:30"]]
    assert "CPH" not in loaded.by_id()["text/help#at-the-airport"].passage


def test_a_damaged_file_is_one_problem_naming_it(documents_corpus: Path, tmp_path: Path) -> None:
    documents_corpus = Path(shutil.copytree(documents_corpus, tmp_path / "copy"))
    (documents_corpus / "text" / "broken.docx").write_bytes(b"not a zip file")
    (documents_corpus / "text" / "broken.pdf").write_bytes(b"<html>saved from a browser</html>")
    with pytest.raises(InputError) as caught:
        load_corpus(documents_corpus)
    assert [str(p) for p in caught.value.problems] == [
        "text/broken.docx: not a DOCX file (not a zip archive); open and save it again in Office format",
        "text/broken.pdf: not a PDF file (it does not start with %PDF-); export it as PDF again",
    ]


_words = st.text(st.sampled_from("abc XYZ|-#\\"), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_words, st.builds(lambda h, n: "#" * n + " " + h, _words, st.integers(1, 6))), max_size=12))
def test_any_markdown_splits_into_sections_and_tables_without_losing_words(lines: list[str]) -> None:
    markdown = "\n".join(lines)
    found = sections(markdown)
    assert len({s.anchor for s in found}) == len(found)
    for section in found:
        text, tables = split_tables(section.text)
        assert all(rows for rows in tables)
        assert set(text.split()) <= set(section.text.split())


def test_a_table_turn_over_a_document_table_is_exact(loaded: Corpus) -> None:
    from bddgen.implement.tables import TableQuery, evaluate_table_query

    table = next(t for t in loaded.tables if t.id == "tables/baggage.table-1")
    assert isinstance(table, TableDocument)
    answer = evaluate_table_query(TableQuery(table=table.id, op="sum", column="Fee EUR"), table)
    assert answer.value == "135"


def test_an_implemented_turn_cites_a_page_or_section_anchor(loaded: Corpus, tmp_path: Path) -> None:
    from test_implement_pipeline import scripted

    from bddgen.config import ImplementSettings
    from bddgen.embed.base import HashingEmbedder
    from bddgen.features.reader import read_feature
    from bddgen.implement import implement_feature
    from bddgen.ner.base import RegexRecognizer
    from bddgen.retrieval.memory import MemoryIndex

    corpus = loaded
    spec = tmp_path / "pets.feature"
    spec.write_text(
        "Feature: Travelling with a pet\n  Scenario: Travelling with a pet\n    Given a passenger with a cat\n"
        "    When the passenger asks whether the cat may travel in the cabin and what it costs\n"
        "    Then the assistant gives the cabin rule and the fee\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    report = implement_feature(spec, corpus, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), corpus), ImplementSettings(n=1), 0)
    assert report.written == 1, report.features[0].model_dump()
    cited = {d for c in read_feature(spec).conversations for t in c.turns for d in t.doc_ids}
    assert any("#" in d and d.split("#")[0] in ("policies/pets", "policies/baggage", "text/help", "text/loyalty") for d in cited), cited
    assert any("#" in doc_id for c in read_feature(spec).conversations for doc_id in c.chain)
