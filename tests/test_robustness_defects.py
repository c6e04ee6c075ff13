"""One test per defect found by probing bddgen as a new user would: bad input, paths, exit codes.

Each test names the defect's number; each failed before its fix."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import threading
import xml.etree.ElementTree as ElementTree
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Iterator

import pytest
from robustness_project import invoke, write_run_project

from bddgen.config import LMSettings
from bddgen.corpus import TableLimits, load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.embed.openai_compat import OpenAIEmbedder
from bddgen.errors import BddgenError, ConfigError, InputError
from bddgen.features.document import FeatureDocument
from bddgen.models import DocKind
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.features.writer import write_feature
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.openai_compat import OpenAICompatibleLM
from bddgen.retrieval.hybrid import HybridIndex
from bddgen.select.suite import scan_suite
from bddgen.select.writer import write_selected
from bddgen.specs import Conversation, QueryType, Selection, SelectedSpec, Spec, Turn

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


def _results(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]


# 1 -------------------------------------------------------------------------------------------
def test_01_control_characters_in_a_failing_answer_still_give_readable_junit(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p", answer="bad \x1b[31mred\x00 answer \x07")
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 1, output
    run_dir = root / "runs" / "r1"
    combined = ElementTree.parse(run_dir / "junit.xml").getroot()
    assert combined.get("failures") == "2"
    for report in (run_dir / "junit").glob("TESTS-*.xml"):
        ElementTree.parse(report)  # every file a CI tool reads parses
    assert "\\x1b[31mred\\x00" in (run_dir / "junit.xml").read_text(encoding="utf-8")
    assert {r["answer"] for r in _results(run_dir) if r["turn"]} == {"bad \x1b[31mred\x00 answer \x07"}


# 2 -------------------------------------------------------------------------------------------
def test_02_document_ids_with_spaces_and_commas_survive_the_docs_tag(tmp_path: Path) -> None:
    chain = ["text/my file", "tables/a,b", "policies/100% sure #1 @home|x"]
    turn = Turn(question="Q?", answer="A", query_type=QueryType.MULTI_DOC, doc_ids=chain[:2])
    conversation = Conversation(id="c1", title="Chain", turns=[turn], chain=chain)
    spec = Spec.create("Odd names", ["a user"], ["they ask"], ["it answers"])
    path = tmp_path / "odd.feature"
    write_feature(path, FeatureDocument(spec=spec, conversations=[conversation]))
    read = read_feature(path).conversations[0]
    assert read.chain == chain and read.turns[0].doc_ids == chain[:2]


# 3 -------------------------------------------------------------------------------------------
def _big_table_corpus(root: Path, rows: int) -> Path:
    shutil.copytree(CORPORA / "airline", root)
    with (root / "tables" / "log.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["entry", "note"])
        for n in range(rows):  # each row is longer than half a row chunk: one unit per row
            writer.writerow([f"e{n}", " ".join(f"word{n}x{k}" for k in range(45))])
    return root


def test_03_ingest_of_a_table_larger_than_chromas_largest_batch(tmp_path: Path) -> None:
    corpus = load_corpus(_big_table_corpus(tmp_path / "corpus", 5600), TableLimits(max_rows=10_000))  # every row held
    index = HybridIndex(tmp_path / "index", HashingEmbedder())
    report = index.ingest(corpus)
    assert report.keyword_units > 5600 and report.units_embedded < 200  # every row searched, a few embedded
    reopened = HybridIndex(tmp_path / "index", HashingEmbedder())
    assert reopened.unit_count == report.units_embedded and reopened.documents_by_kind()[DocKind.TABLE] == len(corpus.tables)
    assert reopened.search("word5599x7", top_k=1)[0].doc_id == "tables/log"


class _FailingEmbedder(HashingEmbedder):
    """Embeds until `fail_after` calls, then raises (a crash in the middle of an ingest)."""

    def __init__(self, fail_after: int) -> None:
        super().__init__()
        self.calls = 0
        self.fail_after = fail_after

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls > self.fail_after:
            raise RuntimeError("killed")
        return super().embed(texts)


def test_03_a_crash_during_ingest_leaves_the_previous_index_intact(tmp_path: Path) -> None:
    corpus_path = shutil.copytree(CORPORA / "airline", tmp_path / "corpus")
    HybridIndex(tmp_path / "index", HashingEmbedder()).ingest(load_corpus(corpus_path))
    before = HybridIndex(tmp_path / "index", HashingEmbedder()).search("Business fare change fee", top_k=3)
    fares = corpus_path / "tables" / "fare_classes.csv"
    fares.write_text(fares.read_text(encoding="utf-8") + fares.read_text(encoding="utf-8").splitlines()[-1].replace(",", ",9", 1) + "\n")
    with pytest.raises(RuntimeError):
        HybridIndex(tmp_path / "index", _FailingEmbedder(fail_after=0)).ingest(load_corpus(corpus_path))
    reopened = HybridIndex(tmp_path / "index", HashingEmbedder())
    assert reopened.search("Business fare change fee", top_k=3) == before
    assert reopened.documents_by_kind() == HybridIndex(tmp_path / "index", HashingEmbedder()).documents_by_kind()


# 4 -------------------------------------------------------------------------------------------
def test_04_a_run_id_that_escapes_the_runs_folder_is_refused(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    for bad in ("../../escaped", "/tmp/abs", "..", "a/b"):
        code, output = invoke(root, "run", "--run-id", bad)
        assert code == 2 and "not a plain folder name" in output, output
    assert not (tmp_path / "escaped").exists() and not (root / "runs" / "a").exists()


def test_04_spec_ids_from_candidates_never_leave_the_features_folder(tmp_path: Path) -> None:
    from bddgen.safe_names import safe_file_name

    features = tmp_path / "project" / "features"
    features.mkdir(parents=True)
    taken = Spec.create("Taken", ["a"], ["b"], ["c"])
    (features / "taken.feature").write_text(  # a hand-written spec holds the title's file name
        "Feature: Taken\n  Scenario: Taken\n    Given someone\n    When they do something\n    Then it works\n"
    )
    evil = taken.model_copy(update={"id": "../../../escaped"})
    selection = Selection(selected=[SelectedSpec(spec=evil, rank=1, gain=1.0)], pool_size=1, k=1, objective=1.0)
    report = write_selected(selection, scan_suite(features))
    assert [p.parent for p in report.written] == [features]
    assert not (tmp_path / "escaped.feature").exists()
    assert safe_file_name("../../../escaped") != "../../../escaped" and "/" not in safe_file_name("a/../b")


# 5 -------------------------------------------------------------------------------------------
class _RawHandler(BaseHTTPRequestHandler):
    body = b"<html>Welcome to nginx</html>"
    content_type = "text/html"

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RawHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_05_an_endpoint_answering_200_with_html_is_a_clear_error(html_server: str) -> None:
    lm = OpenAICompatibleLM.from_settings(LMSettings(backend="openai", base_url=html_server, model="m", max_retries=0))
    lm.retries, lm.backoff = 1, 0.0
    with pytest.raises(BddgenError) as raised:
        lm.complete(LMRequest(task="t", messages=[Message("user", "hi")]))
    assert raised.value.exit_code == 2 and "not with a chat completion" in str(raised.value)
    with pytest.raises(BddgenError, match="not with embeddings"):
        OpenAIEmbedder("m", html_server).embed(["hello"])


def test_05_bddgen_lm_against_an_html_endpoint_exits_2_with_the_fix(html_server: str, tmp_path: Path) -> None:
    (tmp_path / "bddgen.toml").write_text(f'corpus = "c"\n[lm]\nbackend = "openai"\nbase_url = "{html_server}"\nmodel = "m"\n')
    code, output = invoke(tmp_path, "lm", "hi")
    assert code == 2 and "base_url" in output and "Traceback" not in output, output


# 6: see tests/test_robustness_concurrency.py (two real processes on one project)


# 7 -------------------------------------------------------------------------------------------
def test_07_resume_after_a_feature_file_was_deleted(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    second = root / "features" / "second.feature"
    second.write_text((root / "features" / "bases.feature").read_text().replace("Bases", "Second").replace("spec=bases", "spec=second"))
    assert invoke(root, "run", "--run-id", "r1")[0] == 1
    second.unlink()
    code, output = invoke(root, "run", "--resume", "r1")
    assert code == 1, output
    assert "features/second.feature no longer exists" in output
    keys = Counter((r["feature"], r["conversation_id"], r["turn"]) for r in _results(root / "runs" / "r1"))
    assert max(keys.values()) == 1 and len(keys) == 12  # both files' earlier results kept, none twice


# 8 -------------------------------------------------------------------------------------------
def test_08_run_with_nothing_to_run_exits_2_with_the_reason(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    code, output = invoke(root, "run", "--tags", "@no-such-tag")
    assert code == 2 and "no conversation matches the tags" in output, output
    spec_only = write_run_project(tmp_path / "q", conversations=0)
    code, output = invoke(spec_only, "run")
    assert code == 2 and "bddgen implement" in output, output
    assert not any((root / "runs").iterdir()) and not any((spec_only / "runs").iterdir())  # no empty run left behind


def test_08_implement_writing_no_conversation_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from bddgen.cli import cli
    from bddgen.lm.client import LanguageModel
    from bddgen.lm.scripted import ScriptedLM

    (tmp_path / "bddgen.toml").write_text(
        f'corpus = "{(CORPORA / "airline").as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n'
    )
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "pets.feature").write_text(
        "Feature: Pets\n  Scenario: Pets\n    Given a passenger\n    When they ask about pets\n    Then the assistant explains\n"
    )
    monkeypatch.chdir(tmp_path)
    from bddgen.implement.scripted import faithful_replies

    # every question is a pasted table row: no turn passes its checks, so every conversation is dropped
    dropping = ScriptedLM(by_task={**faithful_replies(), "write_turn": {"question": "player: A; club: B", "answer": "B"}})
    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", lambda project, settings=None, where="[lm]": LanguageModel(dropping, max_retries=0))
    result = CliRunner().invoke(cli, ["implement", "--n", "1", "--turns", "3"])
    assert isinstance(result.exception, BddgenError) and result.exception.exit_code == 2, result.output
    assert "wrote no conversation" in str(result.exception)


# 9 -------------------------------------------------------------------------------------------
def test_09_validate_refuses_duplicate_conversation_ids_as_run_does(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    feature = root / "features" / "bases.feature"
    feature.write_text(feature.read_text().replace("@conv:c1", "@conv:c0"))
    code, output = invoke(root, "validate")
    assert code == 2 and "'c0' is also used at line" in output, output
    code, output = invoke(root, "run")
    assert code == 2 and "'c0' is also used at line" in output, output


# 10 ------------------------------------------------------------------------------------------
FRENCH = """# language: fr
Fonctionnalité: Bagages
  Règle: Franchise bagages
    Soit un passager
    Quand il demande sa franchise
    Alors l'assistant donne la franchise
    Et cite la classe

    @conversation @conv:c1
    Scénario: Une conversation
      Quand the user asks "How many bags?"
      Alors the answer should agree with "Two"
"""


def test_10_a_feature_in_another_gherkin_language_is_read() -> None:
    document = read_feature_text(FRENCH, "bagages.feature")
    assert document.spec.given == ["un passager"] and document.spec.when == ["il demande sa franchise"]
    assert document.spec.then == ["l'assistant donne la franchise", "cite la classe"]
    assert [t.question for t in document.conversations[0].turns] == ["How many bags?"]
    scenario_form = "# language: de\nFunktionalität: X\n  Szenario: Y\n    Angenommen a\n    Wenn b\n    Dann c\n"
    assert read_feature_text(scenario_form, "x.feature").spec.then == ["c"]


# 11 ------------------------------------------------------------------------------------------
def test_11_a_csv_without_a_header_row_is_refused(tmp_path: Path) -> None:
    corpus = shutil.copytree(CORPORA / "airline", tmp_path / "corpus")
    (corpus / "tables" / "numbers.csv").write_text("1,2.5,3\n4,5,6\n")
    with pytest.raises(InputError) as raised:
        load_corpus(corpus)
    assert "tables/numbers.csv:1" in str(raised.value) and "add a header row" in str(raised.value)


# 12 ------------------------------------------------------------------------------------------
def test_12_links_out_of_the_corpus_folder_are_not_followed(tmp_path: Path) -> None:
    corpus = shutil.copytree(CORPORA / "airline", tmp_path / "corpus")
    outside = tmp_path / "secret.csv"
    outside.write_text("name,value\npassword,hunter2\n")
    (corpus / "tables" / "leak.csv").symlink_to(outside)
    (corpus / "tables" / "inside.csv").symlink_to(corpus / "tables" / "aircraft.csv")
    with pytest.raises(InputError) as raised:
        load_corpus(corpus)
    message = str(raised.value)
    assert "tables/leak.csv" in message and "outside the corpus folder" in message and "inside.csv" not in message
    (corpus / "tables" / "leak.csv").unlink()
    assert "tables/inside" in {d.id for d in load_corpus(corpus).tables}


# 13, 14, 16 ----------------------------------------------------------------------------------
def test_13_report_runs_although_an_unrelated_feature_file_is_invalid(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p", corpus=CORPORA / "airline")
    assert invoke(root, "run", "--run-id", "r1")[0] == 1
    (root / "features" / "broken.feature").write_text("Feature: half written\n  Scenario:\n    Given\n  Rule\n")
    code, output = invoke(root, "report")
    assert code == 0, output
    assert "left out of coverage" in output and (root / "reports" / "r1" / "report.csv").is_file()


def test_14_report_csv_cells_never_start_a_formula(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p", title="=HYPERLINK(\"http://x\")")
    assert invoke(root, "run", "--run-id", "r1")[0] == 1
    assert invoke(root, "report", "--format", "csv", "--no-coverage")[0] == 0
    cells = [cell for row in csv.reader(io.StringIO((root / "reports" / "r1" / "report.csv").read_text())) for cell in row]
    assert any("HYPERLINK" in c for c in cells)
    assert not [c for c in cells if c[:1] in ("=", "+", "@") or (c[:1] == "-" and not c[1:2].isdigit())]


def test_16_an_aborted_run_is_not_the_latest_run(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    assert invoke(root, "run", "--run-id", "done")[0] == 1
    aborted = root / "runs" / "zzz-aborted"
    aborted.mkdir()
    (aborted / "run.json").write_text((root / "runs" / "done" / "run.json").read_text().replace('"done"', '"zzz-aborted"'))
    os.utime(aborted / "run.json")
    meta = json.loads((aborted / "run.json").read_text())
    meta["started"] = "2999-01-01T00:00:00+00:00"
    (aborted / "run.json").write_text(json.dumps(meta))
    code, output = invoke(root, "report", "--no-coverage", "--format", "json")
    assert code == 0, output
    assert (root / "reports" / "done").is_dir() and not (root / "reports" / "zzz-aborted").exists()


# 15 ------------------------------------------------------------------------------------------
def test_15_a_key_given_as_api_key_env_is_refused_without_echoing_it(tmp_path: Path) -> None:
    key = "sk-proj-4fT9qLmZ0aB7cD2eF5gH8iJ1kL3mN6oP"
    root = write_run_project(tmp_path / "p")
    with (root / "bddgen.toml").open("a") as handle:
        handle.write(f'\n[lm]\napi_key_env = "{key}"\n')
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 2 and "api_key_env" in output and key not in output, output
    assert not (root / "runs" / "r1").exists()
    with pytest.raises(ConfigError) as raised:
        from bddgen.config import load_settings

        load_settings(None, {"embedder": {"api_key_env": "abcdef0123456789abcdef0123456789"}})
    assert "abcdef0123456789" not in str(raised.value)


# 17 ------------------------------------------------------------------------------------------
TWO_RULES = """Feature: Two specs
  Rule: First
    Given a passenger
    When they ask about bags
    Then the assistant answers

  Rule: Second
    Given a passenger
    When they ask about pets
    Then the assistant explains the pet policy
"""


def test_17_a_second_rule_spec_is_refused_not_dropped(tmp_path: Path) -> None:
    with pytest.raises(InputError) as raised:
        read_feature_text(TWO_RULES, "two.feature")
    assert "two.feature:7" in str(raised.value) and "Rule 'Second'" in str(raised.value)
    root = write_run_project(tmp_path / "p")
    (root / "features" / "two.feature").write_text(TWO_RULES)
    code, output = invoke(root, "validate")
    assert code == 2 and "own file" in output
