"""Every output format of `bddgen report`, HTML escaping, and the page in headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bddgen.lm.base import LMResponse, TokenUsage
from bddgen.lm.records import CallRecord, Usage
from bddgen.lm.store import CallStore
from bddgen.report.analysis import build_report
from bddgen.report.costs import usage_costs
from bddgen.report.coverage_model import CoverageCertificate, CoverageGroup, CoverageItem
from bddgen.report.model import Report
from bddgen.report.render.csv_table import COLUMNS
from bddgen.report.render.html_page import render_html
from bddgen.report.render.markdown import render_markdown
from bddgen.report.runs import RunData
from bddgen.report.write import FILE_FORMATS, write_report
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.specs import QueryType

SCRIPT_ANSWER = '<script>alert("pwned")</script> & <b>bold</b>'
TYPES = [QueryType.SINGLE_DOC, QueryType.PRE_FILLER, QueryType.MULTI_DOC, QueryType.FILLER, QueryType.UNANSWERABLE, QueryType.SYNTHESIS]
SPECS = {
    "award-history-1a2b3c": "History of a sports award",
    "club-transfers-4d5e6f": "Transfers between football clubs",
    "stadium-capacity-7a8b9c": "Stadium capacity comparisons <with> tags",
}
FEEDBACK = [
    "The answer mixes up the two players: a coreference error on 'he'.",
    "Only the first document was used; multi-document synthesis failed.",
    "Retrieval missed the table with the attendance figures.",
    "Incorrect year given.",
]


def synthetic_run(run_id: str, assistant: str, fail_every: int, repeats: int = 1) -> RunData:
    """A deterministic, realistic run: 3 specs × 2 conversations × 6 turns + spec checks."""
    results: list[TurnResult] = []
    for s_index, spec_id in enumerate(SPECS):
        for c_index in range(2):
            conversation = f"{spec_id[:5]}-c{c_index}"
            documents = [f"d{s_index}{k}" for k in range(2 + c_index)] + ([f"t{s_index}"] if c_index else [])
            for repeat in range(1, repeats + 1):
                any_fail = False
                for number, query_type in enumerate(TYPES, start=1):
                    position = (s_index * 2 + c_index) * len(TYPES) + number
                    verdict = Verdict.PASS
                    if position % fail_every == 0 or (repeats > 1 and repeat == 2 and number == 3 and c_index == 0):
                        verdict = Verdict.FAIL
                    if position % 17 == 0:
                        verdict = Verdict.ERROR
                    any_fail |= verdict == Verdict.FAIL
                    results.append(
                        TurnResult(
                            run_id=run_id,
                            feature=f"features/{spec_id}.feature",
                            spec_id=spec_id,
                            scenario=f"{SPECS[spec_id]}, conversation {c_index + 1}",
                            conversation_id=conversation,
                            turn=number,
                            query_type=query_type,
                            question=f"Question {number} about <{spec_id}>?",
                            expected="CANNOTANSWER" if query_type == QueryType.UNANSWERABLE else f"Reference answer {number}",
                            answer=SCRIPT_ANSWER if number == 2 else f"Answer {number} from {assistant}",
                            verdict=verdict,
                            feedback=FEEDBACK[position % len(FEEDBACK)] if verdict == Verdict.FAIL else "",
                            score=2 if verdict == Verdict.FAIL else (None if verdict == Verdict.ERROR else 5),
                            latency=0.4 + number / 10,
                            documents=documents,
                            repeat=repeat,
                        )
                    )
                results.append(
                    TurnResult(
                        run_id=run_id, feature=f"features/{spec_id}.feature", spec_id=spec_id,
                        scenario=f"{SPECS[spec_id]}, conversation {c_index + 1}", conversation_id=conversation, turn=0,
                        verdict=Verdict.FAIL if any_fail and c_index else Verdict.PASS,
                        feedback="The conversation drifts off the spec." if any_fail and c_index else "", documents=documents, repeat=repeat,
                    )
                )
    meta = RunMetadata(run_id=run_id, assistant=assistant, assistant_kind=assistant, lm_model="qwen2.5-coder-0.5b",
                       judge_model="qwen2.5-coder-0.5b", started="2025-05-01T10:00:00", repeat=repeats)
    return RunData(path=Path("runs") / run_id, metadata=meta, results=results)


def synthetic_report(repeats: int = 1) -> Report:
    coverage = CoverageCertificate(
        corpus="sports",
        features=3,
        conversations=6,
        entity_source="implement provenance",
        groups=[
            CoverageGroup(name="text documents", items=[CoverageItem(id="d00", specs=["award-history-1a2b3c"]), CoverageItem(id="d99", title="<i>x</i>")]),
            CoverageGroup(name="linking entities", items=[CoverageItem(id="Ballon d'Or", specs=["award-history-1a2b3c"])]),
        ],
    )
    costs = [Usage(stage="generate", task="write_spec", calls=12, cache_hits=2, prompt_tokens=9000, completion_tokens=1800, retries=1, failures=0, seconds=95.0)]
    return build_report(
        [synthetic_run("20250501-dense", "dense-rag", 7, repeats), synthetic_run("20250501-react", "react-rag", 4, repeats)],
        spec_titles=SPECS, coverage=coverage, costs=costs, generated="2025-05-01T11:00:00+00:00",
    )


def test_every_format_is_written_and_readable(tmp_path: Path) -> None:
    report = synthetic_report()
    written = write_report(report, tmp_path / "out")
    assert set(written) == set(FILE_FORMATS)
    data = json.loads(written["json"].read_text())
    assert [r["label"] for r in data["runs"]] == ["dense-rag", "react-rag"]
    assert data["runs"][0]["turns"]["judged"] == report.runs[0].turns.judged
    assert len(data["turns"]) == len(report.turns)
    assert Report.model_validate_json(written["json"].read_text()) == report
    rows = list(csv.DictReader(io.StringIO(written["csv"].read_text())))
    assert list(rows[0]) == COLUMNS
    spec_rows = [r for r in rows if r["section"] == "spec:turns"]
    assert len(spec_rows) == 3 * 2
    first = report.specs[0].cells["20250501-dense"].turns
    match = next(r for r in spec_rows if r["key"] == report.specs[0].spec_id and r["run_id"] == "20250501-dense")
    assert int(match["failed"]) == first.failed and float(match["failure_rate"]) == pytest.approx(first.rate, abs=1e-4)
    assert {r["section"] for r in rows} >= {"run:turns", "query_type", "chain_documents", "turn_position", "error_category"}
    markdown = written["md"].read_text()
    assert "## Failure rate per spec" in markdown and "| History of a sports award |" in markdown
    assert "react-rag compared with dense-rag" in markdown
    assert written["html"].read_text().startswith("<!DOCTYPE html>")


def test_only_requested_formats_are_written(tmp_path: Path) -> None:
    written = write_report(synthetic_report(), tmp_path, ["csv"])
    assert list(written) == ["csv"] and sorted(p.name for p in tmp_path.iterdir()) == ["report.csv"]


def test_html_escapes_every_text_and_is_self_contained() -> None:
    page = render_html(synthetic_report())
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in page
    assert "Stadium capacity comparisons &lt;with&gt; tags" in page and "<with>" not in page
    assert "&lt;i&gt;x&lt;/i&gt;" not in page or "<i>x</i>" not in page
    # Only our own two inline scripts, no external resource of any kind.
    assert len(re.findall(r"<script>", page)) == 2
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert page.count("<svg") >= 3  # per-spec chart, query-type chart, coverage meters
    assert page.count('<details class="spec') == 3 and page.count('<details class="conv') == 6


def test_markdown_escapes_pipes_and_tags() -> None:
    markdown = render_markdown(synthetic_report())
    assert "&lt;with&gt;" in markdown and "<with>" not in markdown


def test_repeats_and_flaky_scenarios_appear_in_every_format(tmp_path: Path) -> None:
    report = synthetic_report(repeats=3)
    assert report.flaky
    written = write_report(report, tmp_path)
    assert "Scenarios over repeats" in written["md"].read_text()
    assert "FLAKY" in written["html"].read_text()
    assert any(r["section"] == "scenario_repeats" for r in csv.DictReader(io.StringIO(written["csv"].read_text())))


def test_costs_come_from_the_call_log(tmp_path: Path) -> None:
    assert usage_costs(tmp_path / "missing.sqlite") == []
    assert not (tmp_path / "missing.sqlite").exists()
    store = CallStore(tmp_path / "lm.sqlite")
    store.put("k", LMResponse(text="{}", model="m", usage=TokenUsage(10, 5)))
    for cache_hit in (False, True):
        store.log(CallRecord("generate", "write_spec", "m", 100, 20, 1.5, cache_hit, 0, False))
    store.log(CallRecord("run", "judge_turn", "m", 50, 10, 0.5, False, 1, False))
    store.close()
    costs = {(c.stage, c.task): c for c in usage_costs(tmp_path / "lm.sqlite")}
    assert costs[("generate", "write_spec")].calls == 2 and costs[("generate", "write_spec")].cache_hits == 1
    assert costs[("generate", "write_spec")].prompt_tokens == 100
    assert costs[("run", "judge_turn")].retries == 1


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def chromium_check(html: Path, screenshot: Path, profile: Path, fragment: str = "") -> str:
    """Open the page headless (at `#fragment` when given), save a screenshot and return the DOM after its scripts ran."""
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--window-size=1280,2000",
    ]
    address = html.as_uri() + (f"#{fragment}" if fragment else "")
    subprocess.run([CHROMIUM, *flags, f"--screenshot={screenshot}", address], check=True, capture_output=True, timeout=120)
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", address], check=True, capture_output=True, text=True, timeout=120)
    return dom.stdout


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_html_renders_in_headless_chromium_without_page_errors(tmp_path: Path) -> None:
    written = write_report(synthetic_report(repeats=2), tmp_path / "report", ["html"])
    dom = chromium_check(written["html"], tmp_path / "report.png", tmp_path / "profile")
    assert 'data-page-errors="0"' in dom, re.findall(r'<pre id="page-errors"[^>]*>(.*?)</pre>', dom, re.S)
    assert "<script>alert" not in dom and "&lt;script&gt;alert" in dom  # the answer stays text
    assert (tmp_path / "report.png").stat().st_size > 10_000
