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
from dataclasses import dataclass, field
from typing import Callable, Iterator

from bddgen.manifest.workflow import WorkflowManifest
from bddgen.state_diff import DiffRow
from bddgen.config import TasksSettings
from bddgen.errors import ConfigError
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus, TableDocument
from bddgen.tasks.candidates import Evaluated, Scratch, identity_facts, implemented_tools, propose, with_diffs
from bddgen.tasks.evidence import STAGE, PolicyIndex, choose_evidence, evidence_strength
from bddgen.tasks.instruction import Vocabulary, fact_sentence, fact_value, instruction_problems
from bddgen.tasks.model import Action, DroppedTask, Fact, OutcomeTask
from bddgen.tasks.oracle import code_round_trip, model_round_trip
from bddgen.tasks.rules import Requirement
from bddgen.tasks.targets import identifying_facts, key_columns, target_of
from bddgen.tasks.tasks import USER_INSTRUCTION
from bddgen.tasks.world import AgentWorld

TARGET_TABLE = "tables/bookings"
WANTED = {"new_flight_number": "new_flight_number", "weight_kg": "bag_weight_kg"}
"""Tool argument -> the fact name under which the user knows the value they want."""


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
    table: TableDocument
    policies: PolicyIndex
    vocabulary: Vocabulary
    cabins: dict[str, str]
    dropped: list[DroppedTask] = field(default_factory=list)

    def booking(self, item: Evaluated) -> dict[str, str]:
        return dict(zip(self.table.headers, self.table.rows[item.call.target_row]))

    def requirements(self, item: Evaluated) -> list[Requirement]:
        """What the policy sentence for this call must name (ValueError when code knows no rule for it)."""
        booking = self.booking(item)
        return self.scratch.world.required_by(item, booking, list(self.cabins), self.cabins.get(booking["fare_class"], ""))


def _table(corpus: Corpus, table_id: str) -> TableDocument:
    for table in corpus.tables:
        if table.id == table_id:
            return table
    raise ConfigError(f"outcome tasks need the table {table_id} of the airline corpus; point the project's corpus at it (`bddgen init --corpus airline`)")


def _title(chain: list[Evaluated], fare: str) -> str:
    parts = []
    for step in chain:
        args = step.call.arguments
        if step.call.tool == "cancel_booking":
            parts.append(f"cancel booking {args['booking_reference']}")
        elif step.call.tool == "change_flight":
            parts.append(f"move booking {args['booking_reference']} to flight {args['new_flight_number']}")
        else:
            parts.append(f"add a {fact_value(args['weight_kg'])} kg bag to booking {args['booking_reference']}")
    text = ", then ".join(parts)
    return f"{text[0].upper()}{text[1:]} ({fare} fare)"


def _goal(chain: list[Evaluated]) -> str:
    parts = []
    for step in chain:
        args = step.call.arguments
        if step.call.tool == "cancel_booking":
            parts.append(f"cancel your booking {args['booking_reference']}")
        elif step.call.tool == "change_flight":
            parts.append(f"move your booking {args['booking_reference']} to flight {args['new_flight_number']}")
        else:
            parts.append(f"add one extra checked bag of {fact_value(args['weight_kg'])} kg to your booking {args['booking_reference']}")
    return ", then ".join(parts)


def _will_not_accept(chain: list[Evaluated]) -> str:
    tools = [step.call.tool for step in chain]
    if "change_flight" in tools:
        return "any flight other than the one you asked for"
    if "add_checked_bag" in tools:
        return "a different bag weight or more than one extra bag"
    return "keeping the booking"


def _task_id(chain: list[Evaluated]) -> str:
    calls = json.dumps([[s.call.tool, s.call.arguments] for s in chain], sort_keys=True)
    short = {"cancel_booking": "cancel", "change_flight": "change", "add_checked_bag": "bag"}
    kinds = "-".join(short.get(s.call.tool, s.call.tool) for s in chain)
    reference = str(chain[0].call.arguments.get("booking_reference", "")).lower()
    return f"{kinds}-{reference}-{hashlib.sha256(calls.encode()).hexdigest()[:6]}"


def build_task(ctx: Context, chain: list[Evaluated], expected: list[DiffRow]) -> OutcomeTask | DroppedTask:
    """One task from a chain of evaluated calls on one target, or the reason it was dropped."""
    row_number = chain[0].call.target_row
    booking = ctx.booking(chain[0])
    title = _title(chain, booking.get("fare_class", ""))
    rewrites: list[str] = []
    try:
        facts, added = identifying_facts(ctx.table, row_number, identity_facts(booking))  # type: ignore[arg-type]
    except ValueError as exc:
        return DroppedTask(title=title, reason=str(exc))
    rewrites += added
    for step in chain:
        for argument, name in WANTED.items():
            if argument in step.call.arguments:
                repeats = sum(f.name.startswith(name) for f in facts)
                facts.append(Fact(name=f"{name}_{repeats + 1}" if repeats else name, value=fact_value(step.call.arguments[argument])))
    actions = []
    for step in chain:
        try:
            requirements = ctx.requirements(step)
        except ValueError as exc:
            return DroppedTask(title=title, reason=f"no policy rule is known for '{step.call.situation}': {exc}")
        evidence, rejected = choose_evidence(
            ctx.lm, ctx.policies, step, ctx.scratch.world.tools[step.call.tool].description, requirements,
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
    task = OutcomeTask(
        id=_task_id(chain), title=title, target=target_of(ctx.table, ctx.table.rows[row_number]), actions=actions,
        decision=decision, persona=booking["passenger_name"], goal=_goal(chain), will_not_accept=_will_not_accept(chain),
        facts=facts, instruction="", expected_diff=expected, oracle="model" if len(chain) > 1 else "code",
        max_turns=ctx.settings.max_turns, rewrites=rewrites,
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
            facts="\n".join(f"- {fact_sentence(f)}" for f in task.facts),
            will_not_accept=task.will_not_accept,
            earlier_instruction=written or "(none)",
            earlier_problems="\n".join(problems) or "(none)",
        ).instruction
        written = " ".join(written.split())
        candidate = task.model_copy(update={"instruction": written})
        problems = instruction_problems(written, task.facts, task.persona, ctx.vocabulary)
        if not problems:
            problems = (
                code_round_trip(candidate, ctx.table, ctx.vocabulary)
                if task.oracle == "code"
                else model_round_trip(candidate, ctx.lm, ctx.scratch)
            )
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


def _chains(ctx: Context, allowed: list[Evaluated], rng: random.Random) -> Iterator[tuple[list[Evaluated], list[DiffRow]]]:
    """Compound chains on one booking: a flight change, then one or two extra bags, all allowed in sequence."""
    changes = [e for e in allowed if e.call.tool == "change_flight"]
    bags = [e for e in allowed if e.call.tool == "add_checked_bag"]
    rng.shuffle(changes)
    for change in changes:
        mine = sorted((b for b in bags if b.call.target_row == change.call.target_row), key=lambda b: b.call.arguments["weight_kg"])
        if not mine:
            continue
        chain = [change, *mine[: rng.choice((1, 2))]]
        results, expected = ctx.scratch.run([(e.call.tool, e.call.arguments) for e in chain])
        if all("error" not in result for result in results):
            steps = [Evaluated(e.call, "allowed", r, []) for e, r in zip(chain, results)]
            yield steps, expected


def _fill(ctx: Context, wanted: int, chains: Iterator[tuple[list[Evaluated], list[DiffRow]]], used: set[int]) -> list[OutcomeTask]:
    made: list[OutcomeTask] = []
    for chain, expected in chains:
        if len(made) == wanted:
            break
        if chain[0].call.target_row in used:
            continue
        built = build_task(ctx, chain, expected)
        if isinstance(built, DroppedTask):
            ctx.dropped.append(built)
            continue
        used.add(chain[0].call.target_row)
        made.append(built)
    return made


def generate_tasks(
    corpus: Corpus, manifest: WorkflowManifest, manifest_location: str, lm: LanguageModel, settings: TasksSettings, *, world: AgentWorld,
    n: int, seed: int, skip: frozenset[str] = frozenset(),
) -> tuple[list[OutcomeTask], list[DroppedTask]]:
    """`n` tasks for the agent of `world` (fewer when the candidates run out) and the dropped candidates; ids in
    `skip` are not made."""
    tools = implemented_tools(manifest, manifest_location, world.tools)
    table = _table(corpus, TARGET_TABLE)
    key_columns(table)
    scratch = Scratch(world, corpus)
    cabins = {str(row[0]): str(row[1]) for row in scratch.template.execute("SELECT fare_class, cabin FROM fare_classes")}
    ctx = Context(lm, settings, scratch, table, PolicyIndex(corpus.policies, corpus.language or "en"), Vocabulary.of(scratch.template), cabins)
    evaluated = propose(scratch, tools)
    rng = random.Random(seed)
    plan = Plan.of(n, settings)
    used: set[int] = set()

    def plain(item: Evaluated) -> int:
        """0 when the best policy sentence plainly states the rule behind the decision, else 1 (tried later)."""
        try:
            requirements = ctx.requirements(item)
        except ValueError:
            return 1
        return 0 if evidence_strength(ctx.policies, item, world.tools[item.call.tool].description, requirements) >= settings.evidence_overlap else 1

    def singles(decision: str) -> Iterator[tuple[list[Evaluated], list[DiffRow]]]:
        for item in _round_robin([e for e in evaluated if e.decision == decision], rng, plain):
            complete = with_diffs(scratch, item) if _task_id([item]) not in skip else None
            if complete is not None:
                yield [complete], complete.diff

    chains = ((c, d) for c, d in _chains(ctx, [e for e in evaluated if e.decision == "allowed"], rng) if _task_id(c) not in skip)
    tasks = _fill(ctx, plan.forbidden, singles("forbidden"), used)
    tasks += _fill(ctx, plan.compound, chains, used)
    tasks += _fill(ctx, n - len(tasks), singles("allowed"), used)
    return tasks, ctx.dropped
