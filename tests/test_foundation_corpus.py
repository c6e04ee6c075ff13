"""Corpus loading and validation: the demo corpora, every kind of problem, JSONL import, stats."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bddgen.cli import cli
from bddgen.corpus import demo_corpus_path, load_corpus, resolve_corpus_arg
from bddgen.corpus.stats import corpus_stats
from bddgen.errors import ConfigError, InputError
from bddgen.models import TableDocument

SYSTEM_YAML = "name: Test Assistant\npurpose: Answers questions about the test documents.\n"


def bddgen(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def problem_lines(output: str) -> list[str]:
    """The problem lines of `bddgen corpus validate` output (indented under the title)."""
    return [line.strip() for line in output.splitlines() if line.startswith("  ")]


def problems_of(path: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_corpus(path)
    return [str(p) for p in caught.value.problems]


@pytest.fixture
def tiny_corpus(tmp_path: Path) -> Path:
    """A valid corpus with one document of each kind, for tests to break."""
    root = tmp_path / "tiny"
    for folder in ("text", "tables", "policies"):
        (root / folder).mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    (root / "text" / "harbour.md").write_text("# The Harbour\n\nThe harbour opened in 1901.\n", encoding="utf-8")
    (root / "tables" / "award_winners.csv").write_text("year,player\n2001,Ann Lee\n2002,\n", encoding="utf-8")
    (root / "policies" / "refunds.md").write_text("# Refunds\n\nRefunds take 7 days.\n", encoding="utf-8")
    return root


@pytest.mark.parametrize("name", ["sports", "airline"])
def test_demo_corpora_load_with_stable_ids_and_sources(name: str, sports_corpus: Path, airline_corpus: Path) -> None:
    corpus = load_corpus({"sports": sports_corpus, "airline": airline_corpus}[name])
    assert corpus.system.name and corpus.system.purpose
    ids = [d.id for d in corpus.documents]
    assert len(ids) == len(set(ids))
    for document in corpus.documents:
        folder = {"text": "text", "table": "tables", "policy": "policies"}[document.kind]
        assert document.id.startswith(f"{folder}/")
        assert document.source.startswith(f"{document.id}.")
        assert (Path(corpus.root) / document.source).is_file()
    assert [d.hash for d in corpus.documents] == [d.hash for d in load_corpus(Path(corpus.root)).documents]


def test_empty_table_cells_are_allowed(airline_corpus: Path) -> None:
    corpus = load_corpus(airline_corpus)
    assert any("" in row for table in corpus.tables for row in table.rows)


@pytest.mark.parametrize("name", ["sports", "airline"])
def test_validate_passes_on_demo_corpora(name: str, sports_corpus: Path, airline_corpus: Path) -> None:
    result = bddgen("corpus", "validate", str({"sports": sports_corpus, "airline": airline_corpus}[name]))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: ")


def test_stats_json_counts_of_demo_corpora(sports_corpus: Path, airline_corpus: Path) -> None:
    airline = json.loads(bddgen("corpus", "stats", str(airline_corpus), "--json").output)
    sports = json.loads(bddgen("corpus", "stats", str(sports_corpus), "--json").output)
    for counts in (airline, sports):
        assert {key: type(counts[key]) for key in ("text", "table", "policy", "table_rows", "words")} == dict.fromkeys(
            ("text", "table", "policy", "table_rows", "words"), int
        )
    assert airline["table"] >= 8 and airline["policy"] >= 8
    assert sports["text"] >= 60 and sports["table"] >= 10
    assert sports["table_rows"] == sum(t["rows"] for t in sports["tables"])


def test_stats_table_output_names_every_table(airline_corpus: Path) -> None:
    result = bddgen("corpus", "stats", str(airline_corpus))
    assert result.exit_code == 0
    for table in load_corpus(airline_corpus).tables:
        assert table.id in result.output


def test_broken_copy_gives_one_message_per_problem(copy_corpus) -> None:
    root: Path = copy_corpus("sports")
    texts = sorted((root / "text").glob("*.md"))
    latin1, untitled = texts[0], texts[1]
    original = latin1.read_bytes()
    latin1.write_bytes(original + "\nCaf\u00e9 au lait.\n".encode("latin-1"))
    bad_offset = len(original) + len(b"\nCaf")
    bad_line = original.count(b"\n") + 2
    untitled.write_text("An opening sentence without a heading.\n\nMore text.\n", encoding="utf-8")
    ragged = root / "tables" / "golden_boot.csv"
    header_columns = len(ragged.read_text(encoding="utf-8").splitlines()[0].split(","))
    ragged_line = len(ragged.read_text(encoding="utf-8").splitlines()) + 1
    with ragged.open("a", encoding="utf-8") as handle:
        handle.write("2025,Someone\n")
    (root / "tables" / "venues.yaml").write_text("title: [Football venues\ndescription: x\n", encoding="utf-8")

    result = bddgen("corpus", "validate", str(root))

    assert result.exit_code == 2
    lines = problem_lines(result.output)
    assert len(lines) == 4, result.output
    by_file = {line.split(":", 1)[0]: line for line in lines}
    assert set(by_file) == {
        f"text/{latin1.name}",
        f"text/{untitled.name}",
        "tables/golden_boot.csv",
        "tables/venues.yaml",
    }
    assert by_file[f"text/{latin1.name}"].startswith(f"text/{latin1.name}:{bad_line}: not UTF-8: byte 0xE9 at byte offset {bad_offset}")
    assert by_file[f"text/{untitled.name}"].startswith(f"text/{untitled.name}:1: missing title")
    assert by_file["tables/golden_boot.csv"] == (
        f"tables/golden_boot.csv:{ragged_line}: expected {header_columns} columns as in the header row, got 2"
    )
    assert by_file["tables/venues.yaml"].startswith("tables/venues.yaml:2: invalid YAML")


def test_duplicate_ids_name_both_sources(tiny_corpus: Path) -> None:
    record = {"kind": "text", "id": "text/harbour", "title": "Harbour again", "passage": "A second harbour text."}
    (tiny_corpus / "extra.jsonl").write_text(json.dumps(record) + "\n", encoding="utf-8")
    (tiny_corpus / "tables" / "award_winners.json").write_text(
        json.dumps({"title": "Awards", "headers": ["year"], "rows": [["2001"]]}), encoding="utf-8"
    )
    assert sorted(problems_of(tiny_corpus)) == [
        "extra.jsonl:1: duplicate document id 'text/harbour', also in text/harbour.md; rename one of them",
        "tables/award_winners.json: duplicate document id 'tables/award_winners', also in tables/award_winners.csv; rename one of them",
    ]


def test_jsonl_import_loads_records_with_their_own_ids(tiny_corpus: Path) -> None:
    records = [
        {"kind": "text", "id": "wiki-17", "title": "Lighthouse", "passage": "The lighthouse was built in 1850."},
        {"kind": "table", "id": "t-ferries", "title": "Ferries", "headers": ["route", "minutes"], "rows": [["A-B", ""]]},
        {"kind": "policy", "id": "p-pets", "title": "Pets", "passage": "Dogs travel free."},
    ]
    (tiny_corpus / "bulk.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n\n", encoding="utf-8")
    corpus = load_corpus(tiny_corpus)
    by_id = corpus.by_id()
    assert by_id["wiki-17"].source == "bulk.jsonl:1"
    assert by_id["p-pets"].source == "bulk.jsonl:3"
    assert isinstance(by_id["t-ferries"], TableDocument) and by_id["t-ferries"].rows == [["A-B", ""]]
    assert corpus_stats(corpus).model_dump(include={"text", "table", "policy"}) == {"text": 2, "table": 2, "policy": 2}


def test_jsonl_problems_name_line_and_pointer(tiny_corpus: Path) -> None:
    lines = [
        '{"kind": "text", "id": "ok-1", "title": "Fine", "passage": "A good line."}',
        '{"kind": "text", "id": "broken"',
        '{"id": "no-kind", "title": "x", "passage": "y"}',
        '{"kind": "text", "id": "t1", "titel": "Typo", "passage": "y"}',
        '{"kind": "table", "id": "t2", "title": "T", "headers": ["a", "b"], "rows": [["1", "2"], ["3"]]}',
        '["not", "an", "object"]',
    ]
    (tiny_corpus / "bulk.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    problems = problems_of(tiny_corpus)
    assert len(problems) == 6, problems
    assert problems[0].startswith("bulk.jsonl:2: invalid JSON")
    assert problems[1].startswith("bulk.jsonl:3: /kind: required")
    assert "bulk.jsonl:4: /title: required" in problems
    assert "bulk.jsonl:4: /titel: unknown key; did you mean 'title'?" in problems
    assert "bulk.jsonl:5: /rows/1: expected 2 cells as in headers, got 1" in problems
    assert problems[5].startswith("bulk.jsonl:6: /: expected a JSON object")


def test_json_table_file_and_title_from_file_name(tiny_corpus: Path) -> None:
    table = {"title": "Ferry times", "description": "Crossing times.", "headers": ["route", "minutes"], "rows": [["A-B", "25"]]}
    (tiny_corpus / "tables" / "ferries.json").write_text(json.dumps(table), encoding="utf-8")
    by_id = load_corpus(tiny_corpus).by_id()
    assert by_id["tables/award_winners"].title == "Award winners"
    ferries = by_id["tables/ferries"]
    assert isinstance(ferries, TableDocument)
    assert (ferries.title, ferries.description, ferries.rows, ferries.source) == (
        "Ferry times", "Crossing times.", [["A-B", "25"]], "tables/ferries.json"
    )


def test_json_table_schema_violations_are_pointers(tiny_corpus: Path) -> None:
    (tiny_corpus / "tables" / "ferries.json").write_text(
        json.dumps({"title": "Ferries", "headers": ["route"], "rows": [["A-B", 7]]}), encoding="utf-8"
    )
    assert problems_of(tiny_corpus) == ["tables/ferries.json: /rows/0/1: 7 is not of type 'string'"]


def test_system_yaml_violations_are_json_pointers(tiny_corpus: Path) -> None:
    (tiny_corpus / "system.yaml").write_text(
        SYSTEM_YAML + "capabilites: [x]\ntools:\n  - description: Finds orders.\n", encoding="utf-8"
    )
    assert problems_of(tiny_corpus) == [
        "system.yaml: /capabilites: unknown key; did you mean 'capabilities'?",
        "system.yaml: /tools/0/name: required",
    ]


def test_empty_and_missing_everything(tmp_path: Path) -> None:
    assert problems_of(tmp_path) == [
        "system.yaml: missing: describe the assistant (name, purpose, ...) in system.yaml; `bddgen init` writes a template",
        f"{tmp_path}: no documents: add text/*.md, tables/*.csv or *.json, policies/*.md, or *.jsonl files",
    ]


def test_empty_documents_and_unread_files_are_reported(tiny_corpus: Path) -> None:
    (tiny_corpus / "text" / "blank.md").write_text("\n  \n", encoding="utf-8")
    (tiny_corpus / "policies" / "title_only.md").write_text("# Only a title\n", encoding="utf-8")
    (tiny_corpus / "tables" / "header_only.csv").write_text("a,b\n", encoding="utf-8")
    (tiny_corpus / "text" / "notes.rtf").write_text("stray", encoding="utf-8")
    problems = problems_of(tiny_corpus)
    assert len(problems) == 4, problems
    assert problems[0] == "text/notes.rtf: not read: text/ holds *.md, *.pdf, *.docx, *.pptx, *.html, *.htm, *.txt files"
    assert any(p.startswith("text/blank.md: empty document") for p in problems)
    assert any(p.startswith("policies/title_only.md:1: empty document") for p in problems)
    assert "tables/header_only.csv: empty table: a header row but no data rows" in problems


def test_demo_corpus_names_resolve_when_no_such_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_corpus_arg("sports") == demo_corpus_path("sports")
    assert load_corpus(demo_corpus_path("airline")).system.name
    (tmp_path / "sports").mkdir()
    assert resolve_corpus_arg("sports") == Path("sports")
    with pytest.raises(ConfigError, match="airline, sports"):
        resolve_corpus_arg("tennis")
    with pytest.raises(ConfigError, match="no demo corpus named 'tennis'"):
        demo_corpus_path("tennis")


def test_validate_accepts_a_demo_corpus_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = bddgen("corpus", "validate", "airline")
    assert result.exit_code == 0 and "ok: " in result.output


def test_a_corpus_file_instead_of_folder(tmp_path: Path) -> None:
    shutil.copy(Path(__file__), tmp_path / "file.py")
    assert problems_of(tmp_path / "file.py") == [f"{tmp_path / 'file.py'}: no such folder: give the folder holding system.yaml"]
