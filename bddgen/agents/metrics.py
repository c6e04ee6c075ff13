"""Trajectory metrics of a run: how the tool calls compare with the expected trajectory, and pass^k.

Expected trajectory of a turn: the tools its longest `in order` step lists (`exactly` or not), then
the calls of its `should call` steps (a step's argument conditions go to the first listed call of
its tool without any, else it is a call of its own). A scenario run's trajectories are its turns' trajectories joined in turn
order, over the turns that have trajectory steps. An actual call matches an expected one when it is
of that tool and its arguments meet the expected call's conditions. Against the actual tool calls:

- exact match: the actual calls match the expected ones one by one;
- in-order match: the expected calls are matched in order by a subsequence of the actual ones (extra calls allowed);
- any-order match: every expected call is matched by some actual call (order and extra calls ignored);
- precision: actual calls matched one-to-one with an expected call / actual calls;
- recall: expected calls matched one-to-one with an actual call / expected calls.

pass^k of a scenario run n times with c passes is C(c, k) / C(n, k): the unbiased estimate of the
chance that k independent trials all pass (pass^1 = pass@1 = c / n); pass@k = 1 - C(n - c, k) / C(n, k)
is the chance that at least one of k passes. A trial passes when every turn of it passes. pass^k is
the assistant's: a failed trial counts when the assistant failed in it (a judged failure, its own
error); a trial failed only by another party (the simulated user, the judge, the expected outcome, the
harness: see `bddgen.results.Party`) is counted apart, by party, and left out of n and c.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from math import comb
from typing import Iterable

from pydantic import BaseModel, ConfigDict, Field

from bddgen.expectations import ArgumentMatch, TrajectoryExpectation
from bddgen.results import Party, TurnResult, Verdict
from bddgen.traces import ToolCall


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TrajectoryScore(_Frozen):
    """One expected trajectory against one actual trajectory."""

    expected: list[str]
    actual: list[str]
    exact: bool
    in_order: bool
    any_order: bool
    precision: float | None = Field(description="None when no tool was called.")
    recall: float | None = Field(description="None when no call was expected.")


class ScenarioTrajectory(_Frozen):
    """The trajectory score of one scenario run (one conversation, one repeat)."""

    feature: str
    conversation_id: str
    scenario: str
    repeat: int
    score: TrajectoryScore


class TrajectorySummary(_Frozen):
    """Means over scenario runs: match rates and mean precision and recall (None when none defined)."""

    key: str = Field(description="'all' or an agent name.")
    scenarios: int
    exact: float
    in_order: float
    any_order: float
    precision: float | None
    recall: float | None


class RunTrajectories(_Frozen):
    """Trajectory metrics of one run: per scenario run, over all of them and per agent."""

    run_id: str
    scenarios: list[ScenarioTrajectory]
    overall: TrajectorySummary
    agents: list[TrajectorySummary] = Field(description="Per agent named by a trajectory step: its expected vs its actual calls.")


class ScenarioReliability(_Frozen):
    """One scenario over the repeats of a run."""

    feature: str
    conversation_id: str
    scenario: str
    trials: int = Field(description="Trials that count for the assistant (those failed by another party left out).")
    passes: int
    pass_hat: dict[int, float] = Field(description="k -> pass^k, for k = 1..trials.")
    pass_at: dict[int, float] = Field(default_factory=dict, description="k -> pass@k, for k = 1..trials.")
    left_out: dict[Party, int] = Field(
        default_factory=dict, description="Trials failed by another party than the assistant, left out of trials and passes, by party."
    )


class RunReliability(_Frozen):
    """pass^k of a run: per scenario, and the mean over scenarios with at least k trials."""

    run_id: str
    scenarios: list[ScenarioReliability]
    pass_hat: dict[int, float] = Field(description="k -> mean pass^k over scenarios with at least k trials.")
    pass_at: dict[int, float] = Field(default_factory=dict, description="k -> mean pass@k over scenarios with at least k trials.")
    left_out: dict[Party, int] = Field(default_factory=dict, description="Trials left out, by the party that failed them, over all scenarios.")


def expected_calls(expectations: Iterable[TrajectoryExpectation]) -> list[TrajectoryExpectation]:
    """The expected calls of a turn, in order, each a `calls` expectation (see the module docstring)."""
    chosen = list(expectations)
    ordered = max((e for e in chosen if e.kind in ("order", "sequence")), key=lambda e: len(e.tools), default=None)
    sequence = [TrajectoryExpectation(kind="calls", tool=tool) for tool in (ordered.tools if ordered else [])]
    for expectation in (e for e in chosen if e.kind == "calls"):
        bare = next((i for i, c in enumerate(sequence) if c.tool == expectation.tool and not c.arguments), None)
        if bare is not None:
            sequence[bare] = sequence[bare].model_copy(update={"arguments": list(expectation.arguments)})
        elif not any(c.tool == expectation.tool and c.arguments == expectation.arguments for c in sequence):
            sequence.append(TrajectoryExpectation(kind="calls", tool=expectation.tool, arguments=list(expectation.arguments)))
    return sequence


def _label(expected: TrajectoryExpectation) -> str:
    """`update_seat` or `update_seat(new_seat equal to 12A)`."""
    return expected.tool + (f"({', '.join(_condition(a) for a in expected.arguments)})" if expected.arguments else "")


def _condition(match: ArgumentMatch) -> str:
    return f"{match.name} {match.relation} {match.value}"


def _in_order(expected: list[TrajectoryExpectation], actual: list[ToolCall]) -> bool:
    """Whether the expected calls are matched in order by a subsequence of the actual ones (the earliest match is best)."""
    remaining = iter(actual)
    return all(any(wanted.matches(call) for call in remaining) for wanted in expected)


def _matched(expected: list[TrajectoryExpectation], actual: list[ToolCall]) -> int:
    """The most expected calls matched one-to-one with actual calls (a maximum bipartite matching)."""
    owner: dict[int, int] = {}  # actual index -> expected index

    def claim(wanted: int, seen: set[int]) -> bool:
        for index, call in enumerate(actual):
            if index not in seen and expected[wanted].matches(call):
                seen.add(index)
                if index not in owner or claim(owner[index], seen):
                    owner[index] = wanted
                    return True
        return False

    return sum(claim(wanted, set()) for wanted in range(len(expected)))


def score_trajectory(expected: list[TrajectoryExpectation], actual: list[ToolCall]) -> TrajectoryScore:
    """Exact, in-order and any-order match, precision and recall of the `actual` calls against the `expected` ones."""
    matched = _matched(expected, actual)
    return TrajectoryScore(
        expected=[_label(e) for e in expected],
        actual=[c.name for c in actual],
        exact=len(expected) == len(actual) and all(e.matches(c) for e, c in zip(expected, actual)),
        in_order=_in_order(expected, actual),
        any_order=all(any(e.matches(c) for c in actual) for e in expected),
        precision=matched / len(actual) if actual else None,
        recall=matched / len(expected) if expected else None,
    )


def _mean(values: list[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


def summarise(key: str, scores: list[TrajectoryScore]) -> TrajectorySummary:
    count = len(scores)
    return TrajectorySummary(
        key=key,
        scenarios=count,
        exact=sum(s.exact for s in scores) / count if count else 0.0,
        in_order=sum(s.in_order for s in scores) / count if count else 0.0,
        any_order=sum(s.any_order for s in scores) / count if count else 0.0,
        precision=_mean([s.precision for s in scores]),
        recall=_mean([s.recall for s in scores]),
    )


def _scenario_runs(results: Iterable[TurnResult]) -> dict[tuple[str, str, int], list[TurnResult]]:
    grouped: dict[tuple[str, str, int], list[TurnResult]] = defaultdict(list)
    for result in results:
        grouped[(result.feature, result.conversation_id, result.repeat)].append(result)
    return {key: sorted(turns, key=lambda t: t.turn) for key, turns in grouped.items()}


def _agent_trajectory(turns: list[TurnResult], agent: str) -> tuple[list[TrajectoryExpectation], list[ToolCall]]:
    """Expected and actual calls of one agent over the turns whose steps name it."""
    expected: list[TrajectoryExpectation] = []
    actual: list[ToolCall] = []
    for turn in turns:
        own = [e for e in turn.expected_trajectory if e.agent == agent]
        if own:
            expected += expected_calls(own)
            actual += [c for c in turn.tool_calls if c.agent == agent]
    return expected, actual


def run_trajectories(run_id: str, results: Iterable[TurnResult]) -> RunTrajectories | None:
    """Trajectory metrics of a run's scenarios with an expected tool call; None when it has none."""
    scored: list[ScenarioTrajectory] = []
    per_agent: dict[str, list[TrajectoryScore]] = defaultdict(list)
    for (feature, conversation_id, repeat), turns in sorted(_scenario_runs(results).items()):
        checked = [t for t in turns if t.turn > 0 and t.expected_trajectory and t.verdict != Verdict.ERROR]
        expected = [call for t in checked for call in expected_calls(t.expected_trajectory)]
        if not expected:
            continue
        actual = [c for t in checked for c in t.tool_calls]
        scored.append(ScenarioTrajectory(
            feature=feature, conversation_id=conversation_id, scenario=turns[0].scenario, repeat=repeat,
            score=score_trajectory(expected, actual),
        ))
        agents = dict.fromkeys(e.agent for t in checked for e in t.expected_trajectory if e.agent is not None)
        for agent in agents:
            agent_expected, agent_actual = _agent_trajectory(checked, agent)
            if agent_expected:
                per_agent[agent].append(score_trajectory(agent_expected, agent_actual))
    if not scored:
        return None
    return RunTrajectories(
        run_id=run_id,
        scenarios=scored,
        overall=summarise("all", [s.score for s in scored]),
        agents=[summarise(agent, scores) for agent, scores in sorted(per_agent.items())],
    )


def pass_hat_k(trials: int, passes: int, k: int) -> float:
    """C(passes, k) / C(trials, k): the chance that k of the trials, drawn without replacement, all passed."""
    if not 1 <= k <= trials or not 0 <= passes <= trials:
        raise ValueError(f"pass^k needs 1 <= k <= trials and 0 <= passes <= trials (k={k}, trials={trials}, passes={passes})")
    return comb(passes, k) / comb(trials, k)


def pass_at_k(trials: int, passes: int, k: int) -> float:
    """1 - C(trials - passes, k) / C(trials, k): the chance that at least one of k trials drawn passed."""
    if not 1 <= k <= trials or not 0 <= passes <= trials:
        raise ValueError(f"pass@k needs 1 <= k <= trials and 0 <= passes <= trials (k={k}, trials={trials}, passes={passes})")
    return 1 - comb(trials - passes, k) / comb(trials, k)


def trial_party(turns: Iterable[TurnResult]) -> Party | None:
    """Who failed a trial (one scenario run): None when every record passed; the assistant when it failed any record;
    else the party of the first record that failed (question turns in order, then the turn-0 check)."""
    failed = sorted((t for t in turns if t.verdict != Verdict.PASS), key=lambda t: (t.turn == 0, t.turn))
    if not failed:
        return None
    parties = [t.failed_by or "assistant" for t in failed]
    return "assistant" if "assistant" in parties else parties[0]


def run_reliability(run_id: str, results: Iterable[TurnResult]) -> RunReliability | None:
    """pass^k and pass@k per scenario and their means per k, over the trials the assistant passed or failed (those
    failed by another party counted apart); None when no scenario ran more than once."""
    parties: dict[tuple[str, str], list[Party | None]] = defaultdict(list)
    names: dict[tuple[str, str], str] = {}
    for (feature, conversation_id, _), turns in sorted(_scenario_runs(results).items()):
        names[(feature, conversation_id)] = turns[0].scenario
        parties[(feature, conversation_id)].append(trial_party(turns))
    if all(len(found) < 2 for found in parties.values()):
        return None
    scenarios = []
    for (feature, conversation_id), found in parties.items():
        counted = [party is None for party in found if party in (None, "assistant")]
        n, c = len(counted), sum(counted)
        scenarios.append(ScenarioReliability(
            feature=feature, conversation_id=conversation_id, scenario=names[(feature, conversation_id)], trials=n, passes=c,
            pass_hat={k: pass_hat_k(n, c, k) for k in range(1, n + 1)}, pass_at={k: pass_at_k(n, c, k) for k in range(1, n + 1)},
            left_out=dict(Counter(party for party in found if party is not None and party != "assistant")),
        ))
    most = max(s.trials for s in scenarios)
    hat, at = {}, {}
    for k in range(1, most + 1):
        counted = [s for s in scenarios if s.trials >= k]
        hat[k] = sum(s.pass_hat[k] for s in counted) / len(counted)
        at[k] = sum(s.pass_at[k] for s in counted) / len(counted)
    left_out = dict(sum((Counter(s.left_out) for s in scenarios), Counter[Party]()))
    return RunReliability(run_id=run_id, scenarios=scenarios, pass_hat=hat, pass_at=at, left_out=left_out)
