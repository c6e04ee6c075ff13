"""Report math on synthetic results: rates, Wilson intervals, ERROR apart, breakdowns, repeats, comparison."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bddgen.errors import InputError
from bddgen.report.analysis import build_report
from bddgen.report.categories import UNSTATED, categorise
from bddgen.report.compare import compare_runs
from bddgen.report.runs import RunData, load_run, resolve_runs
from bddgen.report.stats import Rate, wilson_interval
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.specs import QueryType

P, F, E = Verdict.PASS, Verdict.FAIL, Verdict.ERROR


def turn(
    run_id: str,
    spec: str,
    conv: str,
    number: int,
    verdict: Verdict,
    *,
    query_type: QueryType | None = QueryType.SINGLE_DOC,
    documents: tuple[str, ...] = ("d1", "d2"),
    repeat: int = 1,
    feedback: str = "",
    error_category: str = "",
) -> TurnResult:
    return TurnResult(
        run_id=run_id,
        feature=f"features/{spec}.feature",
        spec_id=spec,
        scenario=f"Scenario {conv}",
        conversation_id=conv,
        turn=number,
        query_type=None if number == 0 else query_type,
        question=f"Question {number} of {conv}?" if number else "",
        expected="expected",
        answer="answer",
        verdict=verdict,
        feedback=feedback,
        error_category=error_category,
        documents=list(documents),
        repeat=repeat,
    )


def run(run_id: str, results: list[TurnResult], assistant: str = "dense-rag") -> RunData:
    meta = RunMetadata(run_id=run_id, assistant=assistant, assistant_kind=assistant, started=f"2025-01-01T00:00:0{run_id[-1]}")
    return RunData(path=Path(run_id), metadata=meta, results=results)


def test_wilson_interval_matches_the_closed_form() -> None:
    low, high = wilson_interval(3, 10)
    # Known values for 3/10 at 95%: [0.1078, 0.6032].
    assert low == pytest.approx(0.1078, abs=1e-4)
    assert high == pytest.approx(0.6032, abs=1e-4)
    assert wilson_interval(0, 20)[0] == 0.0
    assert wilson_interval(0, 20)[1] == pytest.approx(0.1611, abs=1e-4)
    assert wilson_interval(20, 20)[1] == 1.0
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError):
        wilson_interval(5, 3)


def test_rate_leaves_errors_out_of_the_denominator() -> None:
    rate = Rate.of([P, P, F, E, E])
    assert (rate.failed, rate.passed, rate.errors, rate.judged) == (1, 2, 2, 3)
    assert rate.rate == pytest.approx(1 / 3)
    assert rate.low is not None and rate.high is not None and rate.low < 1 / 3 < rate.high
    only_errors = Rate.of([E, E])
    assert only_errors.rate is None and only_errors.errors == 2
    assert only_errors.describe() == "— +2 err"
    assert Rate.of([F, P, P, P]).describe().startswith("1/4 25% [")


def test_per_spec_rates_separate_question_turns_from_spec_checks() -> None:
    results = [
        turn("r1", "s1", "c1", 1, P), turn("r1", "s1", "c1", 2, F), turn("r1", "s1", "c1", 3, E), turn("r1", "s1", "c1", 0, F),
        turn("r1", "s2", "c2", 1, P), turn("r1", "s2", "c2", 2, P), turn("r1", "s2", "c2", 0, P),
    ]
    report = build_report([run("r1", results)], spec_titles={"s1": "Spec one"})
    by_id = {row.spec_id: row for row in report.specs}
    s1 = by_id["s1"].cells["r1"]
    assert (s1.turns.failed, s1.turns.passed, s1.turns.errors) == (1, 1, 1)
    assert (s1.conversation_checks.failed, s1.conversation_checks.passed) == (1, 0)
    assert by_id["s1"].title == "Spec one" and by_id["s2"].title == "s2"
    assert by_id["s2"].cells["r1"].turns.rate == 0.0
    summary = report.runs[0]
    assert (summary.turns.failed, summary.turns.judged, summary.turns.errors) == (1, 4, 1)
    assert (summary.scenarios.failed, summary.scenarios.passed) == (1, 1)


def test_scenario_with_only_an_error_is_not_counted_as_failed() -> None:
    results = [turn("r1", "s1", "c1", 1, P), turn("r1", "s1", "c1", 2, E), turn("r1", "s1", "c1", 0, P)]
    summary = build_report([run("r1", results)]).runs[0]
    assert (summary.scenarios.failed, summary.scenarios.passed, summary.scenarios.errors) == (0, 0, 1)


def test_breakdowns_by_query_type_chain_length_and_turn_position() -> None:
    results = [
        turn("r1", "s1", "c1", 1, P, query_type=QueryType.SINGLE_DOC, documents=("a",)),
        turn("r1", "s1", "c1", 2, F, query_type=QueryType.MULTI_DOC, documents=("a",)),
        turn("r1", "s1", "c1", 3, F, query_type=QueryType.MULTI_DOC, documents=("a",)),
        turn("r1", "s1", "c1", 0, F, documents=("a",)),
        turn("r1", "s1", "c2", 1, F, query_type=QueryType.UNANSWERABLE, documents=("a", "b", "c")),
        turn("r1", "s2", "c3", 1, P, query_type=None, documents=("a", "b", "c")),
    ]
    breakdowns = {b.name: b for b in build_report([run("r1", results)]).breakdowns}
    by_type = {row.key: row.cells["r1"] for row in breakdowns["query_type"].rows}
    assert list(by_type) == ["SINGLE-DOC", "MULTI-DOC", "UNANSWERABLE", "untyped"]
    assert (by_type["MULTI-DOC"].failed, by_type["MULTI-DOC"].judged) == (2, 2)
    assert by_type["SINGLE-DOC"].rate == 0.0
    by_docs = {row.key: row.cells["r1"] for row in breakdowns["chain_documents"].rows}
    assert list(by_docs) == ["1 document", "3 documents"]
    assert (by_docs["1 document"].failed, by_docs["1 document"].judged) == (2, 3)
    by_position = {row.key: row.cells["r1"] for row in breakdowns["turn_position"].rows}
    assert by_position["single-turn conversation"].judged == 2
    assert by_position["multi-turn: first turn"].rate == 0.0
    assert (by_position["multi-turn: follow-up turn"].failed, by_position["multi-turn: follow-up turn"].judged) == (2, 2)


def test_error_categories_come_from_the_judge() -> None:
    stated = turn("r", "s", "c", 1, F, error_category="coreference")
    in_feedback = turn("r", "s", "c", 2, F, feedback="The answer ignores the second document: a multi-document synthesis failure.")
    tool = turn("r", "s", "c", 3, F, feedback="It used the wrong tool before searching.")
    several = turn("r", "s", "c", 4, F, feedback="There are multiple correct answers and retrieval missed the table.")
    nothing = turn("r", "s", "c", 5, F, feedback="Incorrect year.")
    unknown = turn("r", "s", "c", 6, F, error_category="Hallucination")
    assert categorise(stated) == ["coreference"]
    assert categorise(in_feedback) == ["multi-document"]
    assert categorise(tool) == ["wrong tool or order"]
    assert set(categorise(several)) == {"retrieval", "multiple correct answers"}
    assert categorise(nothing) == [UNSTATED]
    assert categorise(unknown) == ["hallucination"]
    report = build_report([run("r", [stated, in_feedback, tool, several, nothing, unknown, turn("r", "s", "c", 7, P, error_category="coreference")])])
    counts = {row.category: row.counts.get("r", 0) for row in report.error_categories}
    assert counts["coreference"] == 1  # the passing turn is not counted
    assert sum(counts.values()) == 7


def test_no_tool_category_for_an_assistant_without_tools() -> None:
    tool = turn("r", "s", "c", 1, F, feedback="It used the wrong tool before searching.", error_category="wrong tool or order")
    assert categorise(tool, tools=False) == [UNSTATED]
    counts = {row.category: row.counts.get("r", 0) for row in build_report([run("r", [tool])]).error_categories}
    assert counts == {UNSTATED: 1}  # a dense-rag run: the assistant calls no tools


def test_repeats_give_pass_rates_and_flag_flaky_scenarios() -> None:
    results = []
    # c1: passes in repeats 1 and 3, fails turn 2 in repeat 2 -> flaky.
    for repeat, second in ((1, P), (2, F), (3, P)):
        results += [turn("r1", "s1", "c1", 1, P, repeat=repeat), turn("r1", "s1", "c1", 2, second, repeat=repeat), turn("r1", "s1", "c1", 0, P, repeat=repeat)]
    # c2: fails every repeat -> stable failure.
    for repeat in (1, 2, 3):
        results += [turn("r1", "s1", "c2", 1, F, repeat=repeat), turn("r1", "s1", "c2", 0, P, repeat=repeat)]
    # c3: one ERROR repeat, otherwise passing -> not flaky, undetermined counted apart.
    for repeat, first in ((1, P), (2, E), (3, P)):
        results += [turn("r1", "s2", "c3", 1, first, repeat=repeat)]
    report = build_report([run("r1", results)])
    stability = {s.conversation_id: s for s in report.stability}
    assert stability["c1"].flaky and stability["c1"].pass_rate == pytest.approx(2 / 3)
    assert stability["c1"].varying_turns == [2]
    assert not stability["c2"].flaky and stability["c2"].pass_rate == 0.0
    assert not stability["c3"].flaky and (stability["c3"].passed, stability["c3"].undetermined) == (2, 1)
    assert [s.conversation_id for s in report.flaky] == ["c1"]


def test_no_stability_section_without_repeats() -> None:
    report = build_report([run("r1", [turn("r1", "s1", "c1", 1, P), turn("r1", "s1", "c1", 0, P)])])
    assert report.stability == []


def test_compare_lists_regressed_and_improved_specs_and_turns() -> None:
    base = run("r1", [
        turn("r1", "s1", "c1", 1, P), turn("r1", "s1", "c1", 2, P),
        turn("r1", "s2", "c2", 1, F), turn("r1", "s2", "c2", 2, F),
        turn("r1", "s3", "c3", 1, P), turn("r1", "s3", "c3", 2, E),
        turn("r1", "s4", "c4", 1, P), turn("r1", "s6", "c6", 1, F),
    ], assistant="dense-rag")
    other = run("r2", [
        turn("r2", "s1", "c1", 1, F), turn("r2", "s1", "c1", 2, P),
        turn("r2", "s2", "c2", 1, P), turn("r2", "s2", "c2", 2, P),
        turn("r2", "s3", "c3", 1, P), turn("r2", "s3", "c3", 2, F),
        turn("r2", "s5", "c5", 1, P), turn("r2", "s6", "c6", 1, F),
    ], assistant="react-rag")
    comparison = compare_runs(base, other)
    directions = {s.spec_id: s.direction for s in comparison.specs}
    # s3's spec rate rose from 0/1 to 1/2; its ERROR turn is not comparable turn by turn (below).
    assert directions == {"s1": "regressed", "s2": "improved", "s3": "regressed", "s6": "unchanged"}
    turns = {(t.spec_id, t.turn): t.direction for t in comparison.turns}
    assert turns == {("s1", 1): "regressed", ("s2", 1): "improved", ("s2", 2): "improved"}
    # s3 turn 2 was an ERROR in the base run: not comparable, counted as judged only in the other run.
    assert comparison.only_in_other == 2 and comparison.only_in_base == 1
    report = build_report([base, other])
    assert [r.label for r in report.runs] == ["dense-rag", "react-rag"]
    assert report.comparisons[0].base_run == "r1" and report.comparisons[0].other_run == "r2"


def test_significance_needs_non_overlapping_intervals() -> None:
    base = run("r1", [turn("r1", "s1", f"c{i}", 1, P) for i in range(30)])
    other = run("r2", [turn("r2", "s1", f"c{i}", 1, F) for i in range(30)])
    slight = run("r3", [turn("r3", "s1", f"c{i}", 1, F if i == 0 else P) for i in range(30)])
    assert compare_runs(base, other).specs[0].significant
    change = compare_runs(base, slight).specs[0]
    assert change.direction == "regressed" and not change.significant


def test_same_assistant_twice_gets_distinct_labels() -> None:
    report = build_report([run("r1", [turn("r1", "s", "c", 1, P)]), run("r2", [turn("r2", "s", "c", 1, P)])])
    assert [r.label for r in report.runs] == ["dense-rag · r1", "dense-rag · r2"]


def _write_run(folder: Path, run_id: str, lines: list[str], started: str) -> Path:
    path = folder / run_id
    path.mkdir(parents=True)
    meta = RunMetadata(run_id=run_id, assistant="dense-rag", assistant_kind="dense-rag", started=started)
    (path / "run.json").write_text(meta.model_dump_json())
    (path / "results.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_load_run_keeps_the_last_record_of_a_turn_and_resolves_latest(tmp_path: Path) -> None:
    first = turn("a", "s1", "c1", 1, F).model_dump_json()
    again = turn("a", "s1", "c1", 1, P).model_dump_json()
    _write_run(tmp_path, "a", [first, again], "2025-01-02T00:00:00")
    _write_run(tmp_path, "b", [first], "2025-01-01T00:00:00")
    data = load_run(tmp_path / "a")
    assert [r.verdict for r in data.results] == [P]
    assert resolve_runs(tmp_path, []) == [tmp_path / "a"]
    assert resolve_runs(tmp_path, ["b", str(tmp_path / "a")]) == [(tmp_path / "b").resolve(), (tmp_path / "a").resolve()]


def test_bad_results_name_file_and_line(tmp_path: Path) -> None:
    good = turn("a", "s1", "c1", 1, F).model_dump_json()
    _write_run(tmp_path, "a", [good, '{"run_id": "a", "verdict": "MAYBE"}'], "2025")
    with pytest.raises(InputError) as caught:
        load_run(tmp_path / "a")
    assert f"{tmp_path / 'a' / 'results.jsonl'}:2" in str(caught.value)
    with pytest.raises(InputError, match="no such run"):
        resolve_runs(tmp_path, ["nope"])
    with pytest.raises(InputError, match="bddgen run"):
        resolve_runs(tmp_path / "empty", [])


def test_rates_are_consistent_across_many_synthetic_results() -> None:
    verdicts = [F if (i * 7) % 10 < 3 else P for i in range(200)]
    results = [turn("r1", f"s{i % 4}", f"c{i % 20}", 1 + i // 20, v) for i, v in enumerate(verdicts)]
    report = build_report([run("r1", results)])
    assert sum(row.cells["r1"].turns.failed for row in report.specs) == verdicts.count(F)
    assert report.runs[0].turns.rate == pytest.approx(verdicts.count(F) / 200)
    low, high = report.runs[0].turns.low, report.runs[0].turns.high
    assert low is not None and high is not None and math.isclose(high - low, 0.1269, abs_tol=0.01)
