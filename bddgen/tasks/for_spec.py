"""Outcome tasks for a spec that has the agent act ("refund Leonie Köhler's latest invoice", "cancel reservation
3FRNFB"): the tool its action uses, read by the LM and checked against the manifest; the rows the spec names, chosen
by code (an identifier of the row said in the spec); and the values it wants, those the spec says when it says any. Each
candidate call is run on a scratch copy, so the expected end state is computed by code, and becomes a task as
`bddgen tasks generate` makes one (facts, verbatim policy evidence, an instruction and its round trip).
"""

from __future__ import annotations

from typing import Any

from bddgen.config import TasksSettings
from bddgen.lm.client import LanguageModel
from bddgen.manifest.workflow import WorkflowManifest
from bddgen.models import Corpus
from bddgen.specs import Spec
from bddgen.tasks.actions import ActionSpace
from bddgen.tasks.candidates import evaluate, with_diffs
from bddgen.tasks.evidence import STAGE
from bddgen.tasks.generate import build_task, task_context
from bddgen.tasks.targets import key_columns
from bddgen.tasks.instruction import code_like, has_code
from bddgen.tasks.model import DroppedTask, OutcomeTask
from bddgen.tasks.tasks import SPEC_ACTION_TOOL
from bddgen.tasks.world import AgentWorld
from bddgen.values import mentions


def spec_text(spec: Spec) -> str:
    """The spec's title and steps, as the reader and the row check see them."""
    return "\n".join([spec.title, *spec.given, *spec.when, *spec.then])


def action_tool(lm: LanguageModel, spec: Spec, space: ActionSpace) -> str | None:
    """The data-changing tool the spec's action uses (None when the LM names none, or a tool the agent has not)."""
    listed = "\n".join(f"- {name}: {tool.description}" for name, tool in space.tools.items())
    reply = lm.run(SPEC_ACTION_TOOL, stage=STAGE, specification=spec_text(spec), tools=listed)
    return reply.tool if reply.tool in space.tools else None


def names_row(space: ActionSpace, tool: str, row: int, text: str) -> bool:
    """Whether the spec names the tool's target row: it says one of the row's own identifiers (a cell of its key, or of
    a column the tool's own arguments come from, written as a code: a reservation number, a user id). A value the row
    only refers to (another table's code it holds) names that other row, not this one."""
    target = space.target(tool, row)
    effect = space.effect(tool)
    view = space.views[effect.acts_on]
    own = {*key_columns(view), *(source.column for source in effect.arguments.values() if source.column)}
    return any(code_like(target.get(column, "")) and has_code(text, target[column]) for column in own if target.get(column))


def said_options(space: ActionSpace, tool: str, row: int, text: str) -> dict[str, list[Any]]:
    """The values tried on the row: for each value the user wants, the ones the spec says when it says any (the
    product or date it asks for), else those the tool tries on every row."""
    options = space.options(tool, space.target(tool, row))
    schema = space.tools[tool].parameters.get("properties", {})
    for name in space.wanted(tool):
        said = [value for value in space.possible_values(tool, name) if mentions(text, value, schema.get(name, {}))]
        if said:
            options[name] = said
    return options


def spec_tasks(
    corpus: Corpus, manifest: WorkflowManifest, manifest_location: str, lm: LanguageModel, settings: TasksSettings, *,
    world: AgentWorld, spec: Spec, n: int,
) -> tuple[list[OutcomeTask], list[DroppedTask]]:
    """Up to `n` tasks doing what the spec's action asks, on the rows it names, with the values it says, and the
    candidates dropped (with why; the reason alone when no candidate fits: no tool does the action, or the spec names
    no row it acts on)."""
    ctx = task_context(corpus, manifest, manifest_location, lm, settings, world)
    space = ctx.space
    tool = action_tool(lm, spec, space)
    if tool is None:
        return [], [DroppedTask(title=spec.title, reason="none of the agent's data-changing tools does the spec's action")]
    text = spec_text(spec)
    rows = [row for row in range(len(space.views[space.effect(tool).acts_on].rows)) if names_row(space, tool, row, text)]
    if not rows:
        return [], [DroppedTask(title=spec.title, reason=f"the spec names no row that {tool} acts on (say its identifier)")]
    tasks: list[OutcomeTask] = []
    for row in rows:
        for call in space.calls(tool, row, said_options(space, tool, row, text)):
            complete = with_diffs(ctx.scratch, evaluate(ctx.scratch, call))
            if complete is None:
                continue
            built = build_task(ctx, [complete], complete.diff)
            if isinstance(built, DroppedTask):
                ctx.dropped.append(built)
                continue
            tasks.append(built)
            if len(tasks) == n:
                return tasks, ctx.dropped
    return tasks, ctx.dropped
