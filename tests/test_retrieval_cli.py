"""`bddgen ingest` and `bddgen search` on the sports demo corpus (hashing embedder: fast, offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli


@pytest.fixture
def runner(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BDDGEN_EMBEDDER__BACKEND", "hashing")
    return CliRunner()


def test_ingest_then_search_an_explicit_corpus(runner: CliRunner, sports_corpus: Path, tmp_path: Path) -> None:
    ingested = runner.invoke(cli, ["ingest", str(sports_corpus)])
    assert ingested.exit_code == 0, ingested.output
    assert "added" in ingested.output and "0 updated" in ingested.output
    assert (tmp_path / ".bddgen" / "index").is_dir()

    found = runner.invoke(cli, ["search", str(sports_corpus), "which stadium hosted the cup final", "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.output)
    assert len(hits) == 5 and [hit["rank"] for hit in hits] == [1, 2, 3, 4, 5]
    assert {"doc_id", "kind", "title", "score", "snippet"} <= set(hits[0])
    assert hits[0]["score"] >= hits[-1]["score"]

    again = runner.invoke(cli, ["ingest", str(sports_corpus)])
    assert "0 added, 0 updated, 0 removed" in again.output


def test_search_prints_a_table_and_filters_kinds(runner: CliRunner, sports_corpus: Path) -> None:
    result = runner.invoke(cli, ["search", str(sports_corpus), "top scorers goals", "--kind", "table", "--top-k", "3"])
    assert result.exit_code == 0, result.output
    assert "table" in result.output and "tables/" in result.output
    hits = json.loads(runner.invoke(cli, ["search", str(sports_corpus), "goals", "--kind", "table", "--json"]).output)
    assert hits and all(hit["kind"] == "table" for hit in hits)


def test_search_inside_a_project_uses_its_corpus(runner: CliRunner, sports_corpus: Path, tmp_path: Path) -> None:
    (tmp_path / "bddgen.toml").write_text(f'corpus = "{sports_corpus.as_posix()}"\n[retrieval]\ntop_k = 2\n')
    result = runner.invoke(cli, ["search", "Varen Cup final", "--json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.output)) == 2


def test_search_without_a_project_or_corpus_explains_the_fix(runner: CliRunner) -> None:
    result = runner.invoke(cli, ["search", "anything"])
    assert result.exit_code != 0
    assert "bddgen init" in str(result.exception)
