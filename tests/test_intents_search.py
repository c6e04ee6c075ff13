"""The budgeted search: intent check, surrogate ranking, memory, the broken agent caught, regressions written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bddgen.evaluation.assistant import AssistantCallError, AssistantReply
from bddgen.intents.memory import StrategyMemory
from bddgen.intents.model import Attempt, Cell, Intent, SeedFile, SeedTask
from bddgen.intents.partition import build_partition
from bddgen.intents.regression import write_regressions
from bddgen.intents.search import BASELINE, FULL, SearchContext, SearchSettings, run_search, search_baseline, search_full
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.results import Verdict
from intents_doubles import TODAY, BookingAgent, manifest, scripted_lm

LEFT_OUT = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
VALID_DATE = Cell(tool="book_flight", parameter="date", intent=Intent.VALID, class_name="calendar-date")
SEED_LEFT_OUT = SeedTask(cell=LEFT_OUT, request="Book me economy to Lisbon, please.", arguments={"cabin": "economy"}, checked_by="code")
SEED_VALID = SeedTask(
    cell=VALID_DATE, request="Book economy to Lisbon on March 22.", arguments={"date": "2026-03-22", "cabin": "economy"}, checked_by="code"
)


class FixedScorer:
    """Log-likelihoods given per request (the test states the order the agent must see)."""

    def __init__(self, scores: dict[str, float]) -> None:
        self.scores = scores

    def continuation_logprob(self, prompt: str, continuation: str) -> float:
        request = prompt.split("User: ")[1].split("\n")[0]
        return self.scores[request]


def _context(agent: BookingAgent, lm: object, *, scorer: object = None, memory: StrategyMemory | None = None, budget: int = 5, top_k: int = 2) -> SearchContext:
    model = LanguageModel(lm)  # type: ignore[arg-type]
    table = build_partition(manifest(), "agents.yaml", TODAY, None)
    return SearchContext(manifest(), table, agent, model, model, scorer, memory, SearchSettings(budget, 4, top_k, 3, 0))  # type: ignore[arg-type]


def test_the_broken_agent_is_caught_in_underspec_and_the_correct_one_is_not() -> None:
    broken = search_full(_context(BookingAgent(guess_missing_date=True), scripted_lm()), SEED_LEFT_OUT)
    assert broken.first_failure == 1
    assert "guessed date ('2026-03-01')" in broken.attempts[0].feedback
    correct = search_full(_context(BookingAgent(), scripted_lm()), SEED_LEFT_OUT)
    assert correct.first_failure is None
    assert "the answer asks for the date ('Which date would you like to fly?')" in correct.attempts[0].feedback and not correct.attempts[0].by_judge


def test_a_drifted_variant_is_rejected_and_never_reaches_the_agent() -> None:
    variants = [
        {"strategy": "tone", "note": "curt", "request": "Economy. Lisbon. March 22. Go."},
        {"strategy": "distractor", "note": "other day", "request": "Not March 21 — book economy to Lisbon on March 23."},
    ]
    agent = BookingAgent()
    outcome = search_full(_context(agent, scripted_lm(variants, drifted=("March 23",))), SEED_VALID)
    assert outcome.rejected >= 1
    assert all("March 23" not in q for q in agent.questions)
    assert "Economy. Lisbon. March 22. Go." in agent.questions


def test_a_variant_stating_the_value_meant_to_be_left_out_is_rejected_by_code() -> None:
    variants = [{"strategy": "tone", "note": "adds a date", "request": "Economy to Lisbon on March 22, please."}]
    lm = scripted_lm(variants)
    agent = BookingAgent()
    outcome = search_full(_context(agent, lm), SEED_LEFT_OUT)
    assert outcome.rejected >= 1 and "Economy to Lisbon on March 22, please." not in agent.questions
    assert "intents-keeps-intent" not in lm.tasks_seen()  # code settled it before the LM was asked


def test_variants_run_hardest_first_and_only_the_top_k() -> None:
    variants = [
        {"strategy": "tone", "note": "a", "request": "A: economy to Lisbon, March 22."},
        {"strategy": "split", "note": "b", "request": "B: economy to Lisbon. The date: March 22."},
        {"strategy": "hesitation", "note": "c", "request": "C: economy, hmm, yes economy to Lisbon on March 22."},
    ]
    scores = {"A: economy to Lisbon, March 22.": -1.0, "B: economy to Lisbon. The date: March 22.": -9.0, "C: economy, hmm, yes economy to Lisbon on March 22.": -5.0}
    agent = BookingAgent()
    outcome = search_full(_context(agent, scripted_lm(variants), scorer=FixedScorer(scores), top_k=2), SEED_VALID)
    assert [a.request[:1] for a in outcome.attempts[1:]] == ["B", "C"]
    assert [a.loglikelihood for a in outcome.attempts[1:]] == [-9.0, -5.0]
    assert "A: economy to Lisbon, March 22." not in agent.questions


def test_the_full_method_records_strategies_and_reads_them_back(tmp_path: Path) -> None:
    memory = StrategyMemory(tmp_path / "m.sqlite")
    variants = [{"strategy": "indirection", "note": "weekday for the date", "request": "Economy to Lisbon the Sunday three weeks from now."}]
    outcome = search_full(_context(BookingAgent(), scripted_lm(variants), memory=memory), SEED_VALID)
    assert outcome.first_failure == 2  # the rule-based agent cannot read an indirect date
    [learnt] = memory.retrieve("date", "VALID", 3)
    assert (learnt.strategy, learnt.note, learnt.successes) == ("indirection", "weekday for the date", 1)


def test_the_baseline_reflects_within_the_budget_and_both_methods_are_summarized(tmp_path: Path) -> None:
    ctx = _context(BookingAgent(), scripted_lm(), memory=StrategyMemory(tmp_path / "m.sqlite"), budget=3)
    outcome = search_baseline(ctx, SEED_LEFT_OUT)
    assert outcome.queries == 3 and outcome.generated == 2 and outcome.first_failure is None
    seeds = SeedFile(partition="p", reference_date=TODAY.isoformat(), tasks=[SEED_LEFT_OUT])
    result = run_search(_context(BookingAgent(guess_missing_date=True), scripted_lm(), budget=3), seeds, [FULL, BASELINE])
    assert [s.method for s in result.summaries] == [FULL, BASELINE]
    assert all(s.eesr["UNDERSPEC"] == 1.0 and s.aqff == 1.0 for s in result.summaries)


def test_an_exposing_task_becomes_a_scenario_with_trajectory_steps(tmp_path: Path) -> None:
    ctx = _context(BookingAgent(guess_missing_date=True), scripted_lm())
    outcome = search_full(ctx, SEED_LEFT_OUT)
    [path] = write_regressions(ctx.table, [outcome], tmp_path)
    text = path.read_text(encoding="utf-8")
    assert 'When the user asks "Book me economy to Lisbon, please."' in text
    assert 'Then the agent should not call "book_flight"' in text
    assert "@intent:UNDERSPEC" in text


def test_a_variant_naming_another_option_in_place_of_the_intended_one_is_rejected_by_code() -> None:
    business = Cell(tool="book_flight", parameter="cabin", intent=Intent.VALID, class_name="member-business")
    seed = SeedTask(cell=business, request="Business to Lisbon on March 22.", arguments={"cabin": "business", "date": "2026-03-22"}, checked_by="code")
    variants = [{"strategy": "tone", "note": "curt", "request": "Economy. Lisbon. March 22."}]
    lm = scripted_lm(variants)
    agent = BookingAgent()
    outcome = search_full(_context(agent, lm), seed)
    assert outcome.rejected >= 1 and "Economy. Lisbon. March 22." not in agent.questions
    assert "intents-keeps-intent" not in lm.tasks_seen()


def test_the_same_request_found_by_both_methods_is_one_scenario(tmp_path: Path) -> None:
    seeds = SeedFile(partition="p", reference_date=TODAY.isoformat(), tasks=[SEED_LEFT_OUT])
    ctx = _context(BookingAgent(guess_missing_date=True), scripted_lm(), budget=2)
    result = run_search(ctx, seeds, [FULL, BASELINE])
    [path] = write_regressions(ctx.table, result.outcomes, tmp_path)
    assert path.read_text(encoding="utf-8").count("Scenario:") == 1


def test_the_project_report_gets_a_partition_grid_section() -> None:
    from bddgen.intents.model import IntentsReport
    from bddgen.report.analysis import build_report
    from bddgen.report.render.html_page import render_html, render_intents_html
    from tests.test_report_outputs import SPECS, synthetic_run

    ctx = _context(BookingAgent(guess_missing_date=True), scripted_lm(), budget=2)
    result = run_search(ctx, SeedFile(partition="p", reference_date=TODAY.isoformat(), tasks=[SEED_LEFT_OUT, SEED_VALID]), [FULL, BASELINE])
    report = build_report([synthetic_run("r", "dense-rag", 7, 1)], spec_titles=SPECS, generated="2025-05-01T11:00:00+00:00")
    intents = IntentsReport(partition=ctx.table, search=result.model_copy(update={"assistant": "<booking & co>"}))
    page = render_html(report.model_copy(update={"intents": intents}))
    assert "<a href=#intents>Intent integrity</a>" in page and "Partition grid" in page
    assert '<span class="cls exposed" title="called book_flight with a guessed date' in page
    assert '<span class="cls not-exposed"' in page and '<span class="cls not-searched"' in page
    assert "<code>&lt;booking &amp; co&gt;</code>" in page
    standalone = render_intents_html(intents)  # the page of `bddgen intents report`: the same section on its own
    section = standalone[standalone.index('<section id="intents"') : standalone.index("</section>") + len("</section>")]
    assert standalone.startswith("<!DOCTYPE html>") and section in page


def test_a_variant_differing_only_in_spacing_or_final_punctuation_is_a_repeat() -> None:
    variants = [{"strategy": "tone", "note": "same", "request": "  book me ECONOMY to Lisbon, please"}]
    agent = BookingAgent()
    outcome = search_full(_context(agent, scripted_lm(variants)), SEED_LEFT_OUT)
    assert outcome.queries == 1 and outcome.rejected >= 1


def test_a_strategy_reported_with_its_description_is_recorded_under_its_name(tmp_path: Path) -> None:
    memory = StrategyMemory(tmp_path / "m.sqlite")
    written = "indirection: refer to a value indirectly (a weekday or an event for a date, a description for an option) so it must be worked out"
    variants = [{"strategy": written, "note": "weekday for the date", "request": "Economy to Lisbon the Sunday three weeks from now."}]
    outcome = search_full(_context(BookingAgent(), scripted_lm(variants), memory=memory), SEED_VALID)
    assert outcome.attempts[1].strategy == "indirection"
    assert [s.strategy for s in memory.retrieve("date", "VALID", 3)] == ["indirection"]


def _copies_until_told(new_request: str) -> Any:
    """A mutation that copies the seed until the prompt lists a rejected rewording, then writes `new_request`."""

    def write(request: Any) -> dict[str, Any]:
        content = request.messages[-1].content
        told = "## Rejected Rewordings\nnone" not in content and "repeats an earlier request" in content
        message = content.split("## Message\n", 1)[1].split("\n\n## ", 1)[0]
        variant = {"strategy": "tone", "note": "n", "request": new_request if told else message}
        return {"variants": [variant]} if request.messages[0].content.startswith("Rewrite") else {"analysis": "a", "variant": variant}

    return write


def test_a_rejected_variant_and_its_reason_reach_the_next_mutation_prompt() -> None:
    lm = scripted_lm()
    lm.by_task["intents-mutate"] = _copies_until_told("Economy to Lisbon, please, I need a seat.")
    agent = BookingAgent()
    outcome = search_full(_context(agent, lm, budget=2), SEED_LEFT_OUT)
    assert [(r.request, r.reason) for r in outcome.rejected_variants] == [(SEED_LEFT_OUT.request, "repeats an earlier request")]
    assert outcome.queries == 2 and agent.questions[-1] == "Economy to Lisbon, please, I need a seat."


def test_the_baseline_sees_its_rejected_variants_so_a_retry_is_not_the_same_prompt() -> None:
    lm = scripted_lm()
    lm.by_task["intents-reflect"] = _copies_until_told("Economy to Lisbon please, whenever suits.")
    agent = BookingAgent()
    outcome = search_baseline(_context(agent, lm, budget=2), SEED_LEFT_OUT)
    assert outcome.rejected == 1 and outcome.rejected_variants[0].reason == "repeats an earlier request"
    assert outcome.queries == 2 and agent.questions[-1] == "Economy to Lisbon please, whenever suits."


class FailsFirst:
    """The broken booking agent behind a connection that fails its first `failures` requests."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.agent = BookingAgent(guess_missing_date=True)

    @property
    def name(self) -> str:
        return self.agent.name

    def respond(self, messages: list[Message]) -> AssistantReply:
        if self.failures:
            self.failures -= 1
            raise AssistantCallError("connection refused")
        return self.agent.respond(messages)


def test_a_query_the_assistant_failed_is_no_verdict_spends_its_query_and_teaches_the_memory_nothing(tmp_path: Path) -> None:
    variants = [
        {"strategy": "tone", "note": "curt", "request": "Economy to Lisbon. Book it."},
        {"strategy": "split", "note": "two parts", "request": "Lisbon, please. Economy."},
    ]
    memory = StrategyMemory(tmp_path / "m.sqlite")
    outcome = search_full(_context(FailsFirst(2), scripted_lm(variants), memory=memory, top_k=2), SEED_LEFT_OUT)  # type: ignore[arg-type]
    seed, failed, exposing = outcome.attempts
    assert [a.verdict for a in outcome.attempts] == [Verdict.ERROR, Verdict.ERROR, Verdict.FAIL]
    assert seed.error_category == "transport" and seed.feedback.startswith("the assistant failed") and not seed.exposed
    assert failed.strategy != exposing.strategy and outcome.first_failure == 3 and exposing.checks == ["tool calls"]
    assert [(s.strategy, s.trials, s.successes) for s in memory.all()] == [(exposing.strategy, 1, 1)]
    result = run_search(_context(FailsFirst(1), scripted_lm(), budget=1), SeedFile(partition="p", reference_date=TODAY.isoformat(), tasks=[SEED_LEFT_OUT]), [FULL])
    assert result.summaries[0].errors == 1 and result.summaries[0].eesr["all"] == 0.0


def test_a_search_file_written_before_attempts_held_a_verdict_still_reads() -> None:
    earlier = [
        {"request": "r", "strategy": "seed", "exposed": True, "reason": "called book_flight with a guessed date", "by_judge": False},
        {"request": "r", "strategy": "seed", "exposed": False, "reason": "no call; the answer asks for the date ('When?')", "by_judge": False},
        {"request": "r", "strategy": "seed", "exposed": True, "reason": "no call, and the answer does not do what is expected: x", "by_judge": True},
        {"request": "r", "strategy": "seed", "exposed": False, "reason": "not judged (the judge's reply was unusable: x)", "by_judge": True},
        {"request": "r", "strategy": "seed", "exposed": False, "reason": "the assistant failed: timeout"},
    ]
    read = [Attempt.model_validate(a) for a in earlier]
    assert [(a.verdict, a.checks, a.error_category) for a in read] == [
        (Verdict.FAIL, ["tool calls"], ""),
        (Verdict.PASS, ["asks for the value"], ""),
        (Verdict.FAIL, [], ""),
        (Verdict.ERROR, [], "judge"),
        (Verdict.ERROR, [], ""),
    ]
    assert [a.exposed for a in read] == [True, False, True, False, False] and read[2].by_judge
