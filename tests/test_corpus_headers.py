"""Column names that are years, as financial tables are written: read as names when the rows below show
the first row is a header, or when the table's .yaml declares it; a CSV of data without a header row is
still refused with the same clear error. The development corpora, when present, load unchanged."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.corpus import load_corpus
from bddgen.corpus.readers import header_problems, years_are_column_names
from bddgen.errors import InputError
from bddgen.models import TableDocument

DEVSETS = Path(__file__).resolve().parents[2] / "shared" / "devsets"
SYSTEM_YAML = "name: Report analyst\npurpose: Answers questions about annual reports.\n"
WIDE = 'item,2019,2018\nFixed Price,"$ 1,452.4","$ 1,146.2"\nOther,44.1,56.7\nTotal sales,"$1,496.5","$1,202.9"\n'


def corpus_with(tmp_path: Path, csv_text: str, sidecar: str | None = None) -> Path:
    root = tmp_path / "corpus"
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    (root / "tables" / "sales.csv").write_text(csv_text, encoding="utf-8")
    if sidecar is not None:
        (root / "tables" / "sales.yaml").write_text(sidecar, encoding="utf-8")
    return root


def problems_of(root: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        load_corpus(root)
    return [str(p) for p in caught.value.problems]


def test_years_over_amounts_beside_a_label_column_are_column_names(tmp_path: Path) -> None:
    table = load_corpus(corpus_with(tmp_path, WIDE)).documents[0]
    assert isinstance(table, TableDocument)
    assert table.headers == ["item", "2019", "2018"] and table.rows[1] == ["Other", "44.1", "56.7"]


def test_a_csv_of_data_without_a_header_row_is_still_refused(tmp_path: Path) -> None:
    for data in ("Ashvale,1899,12\nKorrin,1901,5\n", "1,2.5,3\n4,5,6\n", "Ashvale,1899\nKorrin,1901\n", "2019,2018\n1.5,2.5\n"):
        problems = problems_of(corpus_with(tmp_path / str(abs(hash(data))), data))
        assert len(problems) == 1 and problems[0].startswith("tables/sales.csv:1: the first row holds"), problems
        assert "add a header row naming the columns" in problems[0] and "header: true" in problems[0]


def test_the_sidecar_declares_numeric_column_names(tmp_path: Path) -> None:
    data = "code,2019,2018\nA1,2017,2016\nB2,2015,2014\n"  # years over years: the rows cannot tell
    assert problems_of(corpus_with(tmp_path / "undeclared", data, "title: Codes\n"))[0].startswith("tables/sales.csv:1: the first row holds '2019'")
    table = load_corpus(corpus_with(tmp_path / "declared", data, "title: Codes\nheader: true\n")).documents[0]
    assert isinstance(table, TableDocument) and table.headers == ["code", "2019", "2018"]


def test_the_sidecar_header_field_is_a_boolean(tmp_path: Path) -> None:
    problems = problems_of(corpus_with(tmp_path, WIDE, "title: Sales\nheader: sometimes\n"))
    assert problems and all(p.startswith("tables/sales.yaml") for p in problems) and "/header" in problems[0]


def test_what_the_rows_below_must_show() -> None:
    rows = [["Fixed Price", "$ 1,452.4", "$ 1,146.2"], ["Other", "44.1", "—"]]
    assert years_are_column_names(["item", "2019", "2018"], rows)
    assert years_are_column_names(["", "2019", "2018"], rows)  # an empty corner cell
    assert not years_are_column_names(["item", "2019", "2019"], rows)  # one year twice
    assert not years_are_column_names(["item", "2019", "12"], rows)  # 12 is no year
    assert not years_are_column_names(["item", "2019", "2018"], [])  # nothing below
    assert not years_are_column_names(["item", "2019", "2018"], [["7", "1.5", "2.5"]])  # no label column
    assert not years_are_column_names(["item", "2019"], [["Ann", "2004"], ["Bo", "2011"]])  # years over years
    # a unit beside the year makes a name already; blank and repeated names are still reported
    assert header_problems(["item", "2019 €m", "2018 €m"]) == []
    assert header_problems(["item", "", "2018"], rows) == ["column 2 has no name"]


def test_json_tables_follow_the_same_rule(tmp_path: Path) -> None:
    root = corpus_with(tmp_path, WIDE)
    (root / "tables" / "sales.csv").unlink()
    (root / "tables" / "wide.json").write_text(
        '{"title": "Wide", "headers": ["item", "2019", "2018"], "rows": [["Other", "44.1", "56.7"]]}', encoding="utf-8"
    )
    (root / "tables" / "data.json").write_text('{"title": "Data", "headers": ["1", "2"], "rows": [["3", "4"]]}', encoding="utf-8")
    assert problems_of(root) == ["tables/data.json: /headers: " + header_problems(["1", "2"])[0]]


@pytest.mark.skipif(not (DEVSETS / "tatqa" / "corpus").is_dir(), reason="the development corpora are not next to this checkout")
@pytest.mark.parametrize("name", ["tatqa", "chinook"])
def test_the_development_corpora_validate_as_they_are(name: str) -> None:
    result = CliRunner().invoke(cli, ["corpus", "validate", str(DEVSETS / name / "corpus")])
    assert result.exit_code == 0, result.output
    if name == "tatqa":
        tables = [d for d in load_corpus(DEVSETS / name / "corpus").documents if isinstance(d, TableDocument)]
        assert len(tables) == 30 and sum("2019" in t.headers for t in tables) >= 10
