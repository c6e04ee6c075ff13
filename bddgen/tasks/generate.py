"""`bddgen tasks generate`: choose tasks by code, compute their expected end states, let the LM phrase the
user's side, and keep only tasks whose round trip holds.

The order of work for one task: a candidate call (or chain of calls) evaluated on a scratch copy; the
facts that select its target; the verbatim policy evidence of each call; the instruction, rewritten
with the reasons while it misses a fact, names what the user does not know, or fails the round trip.
A candidate that cannot be kept is dropped with the reason, and the next one of its kind is tried.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from dataclasses import dataclass, field
from typing import Callable, Iterator

from bddgen.config import TasksSettings
from bddgen.lm.client import LanguageModel
from bddgen.manifest.workflow import WorkflowManifest
from bddgen.models import Corpus
from bddgen.state_diff import DiffRow
from bddgen.tasks.actions import ActionSpace, goal_of, said
from bddgen.tasks.candidates import Evaluated, Scratch, implemented_tools, propose, with_diffs
from bddgen.tasks.evidence import STAGE, PolicyIndex, choose_evidence, evidence_strength
from bddgen.tasks.instruction import Vocabulary, fact_sentence, instruction_problems
from bddgen.tasks.model import Action, DroppedTask, Fact, OutcomeTask
from bddgen.tasks.oracle import code_round_trip, model_round_trip
from bddgen.tasks.rules import Requirement
from bddgen.tasks.targets import identifying_facts, key_columns, target_of
from bddgen.tasks.tasks import USER_INSTRUCTION
from bddgen.tasks.world import AgentWorld

ANYTHING_ELSE = "anything other than what you asked for"
"""What the user will not accept when no effect of the task's tools says."""


@dataclass
class Plan:
    """How many policy-forbidden and compound tasks to write (the rest are allowed single actions)."""

    forbidden: int
    compound: int

    @classmethod
    def of(cls, n: int, settings: TasksSettings) -> Plan:
        compound = min(n, round(n * settings.compound_share))
        forbidden = min(n - compound, round(n * settings.forbidden_share))
        return cls(forbidden=forbidden, compound=compound)


@dataclass
class Context:
    """What every task of one run is built from."""

    lm: LanguageModel
    settings: TasksSettings
    scratch: Scratch
    space: ActionSpace
    policies: PolicyIndex
    vocabulary: Vocabulary
    phrases: dict[str, str]
    dropped: list[DroppedTask] = field(default_factory=list)

    def target(self, item: Evaluated) -> dict[str, str]:
        return self.space.target(item.call.tool, item.call.target_row)

    def requirements(self, item: Evaluated) -> list[Requirement]:
        """What the policy sentence for this call must name (ValueError when the agent knows no rule for it)."""
        return self.scratch.world.required_by(item, self.target(item), self.scratch.template)


def _goal(ctx: Context, chain: list[Evaluated]) -> str:
    return ", then ".join(goal_of(ctx.space.tools[step.call.tool], step.call.arguments) for step in chain)


def _title(ctx: Context, chain: list[Evaluated]) -> str:
    text = _goal(ctx, chain)
    return f"{text[0].upper()}{text[1:]}"


def _will_not_accept(ctx: Context, chain: list[Evaluated]) -> str:
    said_by_effects = [ctx.space.effect(step.call.tool).will_not_accept for step in chain]
    return next((text for text in said_by_effects if text), ANYTHING_ELSE)


def _task_id(ctx: Context, chain: list[Evaluated]) -> str:
    calls = json.dumps([[s.call.tool, s.call.arguments] for s in chain], sort_keys=True)
    kinds = "-".join(s.call.tool.replace("-", "_").split("_")[0] for s in chain)
    first = chain[0].call
    view = ctx.space.views[ctx.space.effect(first.tool).acts_on]
    key = target_of(view, view.rows[first.target_row]).key
    return f"{kinds}-{re.sub(r'[^a-z0-9]+', '-', key.lower()).strip('-')}-{hashlib.sha256(calls.encode()).hexdigest()[:6]}"


def _facts(ctx: Context, chain: list[Evaluated]) -> tuple[list[Fact], list[str]]:
    """(the facts the user knows: their own values, selecting only the target row, then the values they want; why
    facts were added to tell the target apart). ValueError when no facts can."""
    first = chain[0].call
    effect = ctx.space.effect(first.tool)
    own = [
        Fact(name=name, value=said(first.arguments[name]), column=source.column, part=source.part)
        for name, source in effect.arguments.items()
        if source.column and name in first.arguments
    ]
    facts, rewrites = identifying_facts(ctx.space.views[effect.acts_on], first.target_row, own)
    for step in chain:
        for name in ctx.space.wanted(step.call.tool):
            if name in step.call.arguments:
                repeats = sum(re.sub(r"_\d+$", "", f.name) == name for f in facts)
                facts.append(Fact(name=f"{name}_{repeats + 1}" if repeats else name, value=said(step.call.arguments[name])))
    return facts, rewrites


def build_task(ctx: Context, chain: list[Evaluated], expected: list[DiffRow]) -> OutcomeTask | DroppedTask:
    """One task from a chain of evaluated calls on one target, or the reason it was dropped."""
    first = chain[0].call
    title = _title(ctx, chain)
    try:
        facts, rewrites = _facts(ctx, chain)
    except ValueError as exc:
        return DroppedTask(title=title, reason=str(exc))
    actions = []
    for step in chain:
        try:
            requirements = ctx.requirements(step)
        except ValueError as exc:
            return DroppedTask(title=title, reason=f"no policy rule is known for '{step.call.situation}': {exc}")
        evidence, rejected = choose_evidence(
            ctx.lm, ctx.policies, step, ctx.space.tools[step.call.tool].description, requirements,
            k=ctx.settings.policy_candidates, attempts=ctx.settings.attempts,
        )
        rewrites += [f"policy quote: {reason}" for reason in rejected]
        if evidence is None:
            return DroppedTask(title=title, reason=f"no verbatim policy sentence for '{step.call.situation}': {'; '.join(rejected)}")
        actions.append(
            Action(
                tool=step.call.tool, arguments=step.call.arguments, situation=step.call.situation, decision=step.decision,
                result=step.result, unchecked_diff=step.unchecked_diff, evidence=evidence,
            )
        )
    decision = "forbidden" if any(step.decision == "forbidden" for step in chain) else "allowed"
    view = ctx.space.views[ctx.space.effect(first.tool).acts_on]
    task = OutcomeTask(
        id=_task_id(ctx, chain), title=title, target=target_of(view, view.rows[first.target_row]), actions=actions,
        decision=decision, persona=ctx.space.persona(first.tool, first.target_row), goal=_goal(ctx, chain),
        will_not_accept=_will_not_accept(ctx, chain), facts=facts, instruction="", expected_diff=expected,
        oracle="model" if len(chain) > 1 else "code", max_turns=ctx.settings.max_turns, rewrites=rewrites,
    )
    return _phrase(ctx, task)


def _phrase(ctx: Context, task: OutcomeTask) -> OutcomeTask | DroppedTask:
    """The task with an instruction that passes its checks and its round trip, or the reason there is none."""
    problems: list[str] = []
    written = ""
    for _ in range(ctx.settings.attempts):
        written = ctx.lm.run(
            USER_INSTRUCTION,
            stage=STAGE,
            persona=task.persona,
            goal=task.goal,
            facts="\n".join(f"- {fact_sentence(f, ctx.phrases)}" for f in task.facts),
            will_not_accept=task.will_not_accept,
            earlier_instruction=written or "(none)",
            earlier_problems="\n".join(problems) or "(none)",
        ).instruction
        written = " ".join(written.split())
        candidate = task.model_copy(update={"instruction": written})
        problems = instruction_problems(written, task.facts, task.persona, ctx.vocabulary, ctx.phrases)
        if not problems:
            problems = code_round_trip(candidate, ctx.space) if task.oracle == "code" else model_round_trip(candidate, ctx.lm, ctx.scratch, ctx.space)
        if not problems:
            return candidate
        task = task.model_copy(update={"rewrites": [*task.rewrites, f"instruction: {'; '.join(problems)}"]})
    return DroppedTask(title=task.title, reason=f"no instruction passed its checks in {ctx.settings.attempts} tries: {'; '.join(problems)}")


def _round_robin(pool: list[Evaluated], rng: random.Random, tier: Callable[[Evaluated], int] = lambda _: 0) -> Iterator[Evaluated]:
    """The pool's calls, one group (tool, decision, kind of reply) after another: groups of a lower tier
    first, in a seeded order within each tier."""
    groups: dict[str, list[Evaluated]] = {}
    for item in pool:
        groups.setdefault(item.group, []).append(item)
    names = sorted(groups)
    rng.shuffle(names)
    names.sort(key=lambda name: tier(groups[name][0]))
    for name in names:
        rng.shuffle(groups[name])
    while any(groups[name] for name in names):
        for name in names:
            if groups[name]:
                yield groups[name].pop()


def _target(ctx: Context, item: Evaluated) -> tuple[str, int]:
    """The table and row a call acts on."""
    return ctx.space.effect(item.call.tool).acts_on, item.call.target_row


def _chains(ctx: Context, allowed: list[Evaluated], rng: random.Random) -> Iterator[tuple[list[Evaluated], list[DiffRow]]]:
    """Compound chains on one target: a call, then one or two calls of another tool that adds to the target without
    changing its own table (its effect writes other tables), all allowed in sequence."""
    adding = {name for name, tool in ctx.space.tools.items() if tool.effect is not None and tool.effect.acts_on not in tool.effect.writes}
    firsts = list(allowed)
    rng.shuffle(firsts)
    for first in firsts:
        followers = sorted(
            (e for e in allowed if e.call.tool in adding and e.call.tool != first.call.tool and _target(ctx, e) == _target(ctx, first)),
            key=lambda e: (e.call.tool, json.dumps(e.call.arguments, sort_keys=True)),
        )
        if not followers:
            continue
        tool = rng.choice(sorted({e.call.tool for e in followers}))
        mine = [e for e in followers if e.call.tool == tool]
        chain = [first, *mine[: rng.choice((1, 2))]]
        results, expected = ctx.scratch.run([(e.call.tool, e.call.arguments) for e in chain])
        if all("error" not in result for result in results):
            steps = [Evaluated(e.call, "allowed", r, []) for e, r in zip(chain, results)]
            yield steps, expected


def _fill(ctx: Context, wanted: int, chains: Iterator[tuple[list[Evaluated], list[DiffRow]]], used: set[tuple[str, int]]) -> list[OutcomeTask]:
    made: list[OutcomeTask] = []
    for chain, expected in chains:
        if len(made) == wanted:
            break
        if _target(ctx, chain[0]) in used:
            continue
        built = build_task(ctx, chain, expected)
        if isinstance(built, DroppedTask):
            ctx.dropped.append(built)
            continue
        used.add(_target(ctx, chain[0]))
        made.append(built)
    return made


def task_context(
    corpus: Corpus, manifest: WorkflowManifest, manifest_location: str, lm: LanguageModel, settings: TasksSettings, world: AgentWorld,
) -> Context:
    """What tasks for the agent of `world` are built from."""
    implemented_tools(manifest, manifest_location, world.tools)
    scratch = Scratch(world, corpus)
    space = ActionSpace(manifest, manifest_location, scratch.template, scratch.keys, settings.choices)
    for view in space.views.values():
        key_columns(view)
    ctx = Context(
        lm, settings, scratch, space, PolicyIndex(corpus.policies, corpus.language or "en"), Vocabulary.of(space), manifest.argument_phrases()
    )
    return ctx


def generate_tasks(
    corpus: Corpus, manifest: WorkflowManifest, manifest_location: str, lm: LanguageModel, settings: TasksSettings, *, world: AgentWorld,
    n: int, seed: int, skip: frozenset[str] = frozenset(),
) -> tuple[list[OutcomeTask], list[DroppedTask]]:
    """`n` tasks for the agent of `world` (fewer when the candidates run out) and the dropped candidates; ids in
    `skip` are not made."""
    ctx = task_context(corpus, manifest, manifest_location, lm, settings, world)
    scratch, space = ctx.scratch, ctx.space
    evaluated = propose(scratch, space)
    rng = random.Random(seed)
    plan = Plan.of(n, settings)
    used: set[tuple[str, int]] = set()

    def plain(item: Evaluated) -> int:
        """0 when the best policy sentence plainly states the rule behind the decision, else 1 (tried later)."""
        try:
            requirements = ctx.requirements(item)
        except ValueError:
            return 1
        strength = evidence_strength(ctx.policies, item, space.tools[item.call.tool].description, requirements)
        return 0 if strength >= settings.evidence_overlap else 1

    def singles(decision: str) -> Iterator[tuple[list[Evaluated], list[DiffRow]]]:
        for item in _round_robin([e for e in evaluated if e.decision == decision], rng, plain):
            complete = with_diffs(scratch, item) if _task_id(ctx, [item]) not in skip else None
            if complete is not None:
                yield [complete], complete.diff

    chains = ((c, d) for c, d in _chains(ctx, [e for e in evaluated if e.decision == "allowed"], rng) if _task_id(ctx, c) not in skip)
    tasks = _fill(ctx, plan.forbidden, singles("forbidden"), used)
    tasks += _fill(ctx, plan.compound, chains, used)
    tasks += _fill(ctx, n - len(tasks), singles("allowed"), used)
    return tasks, ctx.dropped
