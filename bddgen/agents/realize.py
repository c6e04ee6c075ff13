"""Realising the obligations of a workflow manifest as scenarios: one witness objective per
obligation, phrased by the LM as a user's request, run against the assistant, and kept when the
trace witnesses it.

Objectives and bundling: each C2 (tool use), C3 (restricted tool) and C4 (handoff) obligation is a
driver of its own objective; it entails reaching the agents it names (C1), so those need no
objective of their own. A C1 agent no driver names gets one (being handed over to). Two different
drivers are never bundled into one request.

Per objective, up to `attempts` times: the LM writes a request (adversarial for a restricted edge);
code states the chosen values the request left out in a sentence of its own (the LM phrases, code
chooses), then checks it fits (not empty, a question or request, no agent or tool name, every value
stated, not too long); the assistant answers it through the run stage's adapter; the trace
witnesses the driver or not. A request that does not fit, or whose trace does not witness the
driver, is rewritten with the reason (the trace itself) as feedback. A call of a restricted tool
ends the objective as a violation. Every witnessed objective and every violation becomes a
Scenario with trajectory steps.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from pydantic import BaseModel, ConfigDict, Field

from bddgen.agents.coverage import CRITERIA, Obligation, obligations, trace_coverage
from bddgen.expectations import ArgumentMatch, TrajectoryExpectation, describe_calls
from bddgen.manifest.workflow import WorkflowManifest
from bddgen.agents.tasks import AGENT_REQUEST
from bddgen.traces import AgentTrace, ToolCall
from bddgen.agents.witness_facts import Fact, FactChooser
from bddgen.evaluation.guard import answer
from bddgen.values import checked_schema, mentions, request_key
from bddgen.features.document import FeatureDocument
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.evaluation.assistant import Assistant
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn
from bddgen.tasks.instruction import fact_phrase

STAGE = "agents"
_REQUEST_MARKERS = re.compile(
    r"\?\s*$|\bplease\b|^(just|please|can|could|would|will|i|i'd|i'm|i've|my|we|we'd|help|tell|show|find|book|cancel|change|check|"
    r"give|let|look|get|send|add|remove|update|use|what|where|when|which|who|why|how|is|are|do|does)\b",
    re.IGNORECASE,
)


class WitnessObjective(BaseModel):
    """What one scenario must make the assistant do: its driver obligation and the ones it entails."""

    model_config = ConfigDict(extra="forbid")

    criterion: str
    source: str
    target: str = ""
    entails: list[str] = Field(default_factory=list, description="Keys of the obligations a witness of the driver also witnesses.")

    @property
    def key(self) -> str:
        return Obligation(criterion=self.criterion, source=self.source, target=self.target).key


class Attempt(BaseModel):
    """One request tried for an objective and what came of it."""

    model_config = ConfigDict(extra="forbid")

    request: str = Field(description="The request as checked and sent: the LM's text, with `completed_by_code` when code added it.")
    completed_by_code: str = Field(
        default="",
        description="The sentence code added to the LM's request, stating the chosen values it left out exactly as chosen; "
        "empty when the LM stated them all.",
    )
    problems: list[str] = Field(default_factory=list, description="Why the request did not fit or could not be run; empty when it ran.")
    answer: str = ""
    trace: AgentTrace | None = None
    witnessed: list[str] = Field(default_factory=list, description="Obligation keys the trace witnessed.")
    violations: list[str] = Field(default_factory=list)


class Realization(BaseModel):
    """An objective with every attempt; `conversation` is the scenario written for it ("" when none)."""

    model_config = ConfigDict(extra="forbid")

    objective: WitnessObjective
    attempts: list[Attempt]
    witnessed: bool
    violated: bool
    facts: list[str] = Field(default_factory=list, description="The values code chose for the requests to state ('label: value').")
    conversation: str = ""


class RealizationLog(BaseModel):
    """<feature>.realized.json: how each witness objective of a manifest was realised."""

    model_config = ConfigDict(extra="forbid")

    manifest: str
    assistant: str
    feature: str
    realizations: list[Realization]

    def attempts(self) -> dict[str, int]:
        """Obligation key -> requests tried for the objective that drives or entails it."""
        counts: dict[str, int] = {}
        for realization in self.realizations:
            for key in [realization.objective.key, *realization.objective.entails]:
                counts[key] = counts.get(key, 0) + len(realization.attempts)
        return counts


def realized_path(feature: Path) -> Path:
    """features/<stem>.realized.json next to features/<stem>.feature."""
    return feature.with_name(feature.stem + ".realized.json")


def witness_objectives(manifest: WorkflowManifest) -> list[WitnessObjective]:
    """One objective per C2, C3 and C4 obligation, and per C1 agent none of them entails."""
    found: list[WitnessObjective] = []
    entailed: set[str] = set()
    for obligation in obligations(manifest):
        if obligation.criterion == "C1":
            continue
        agents = [obligation.source] + ([obligation.target] if obligation.criterion == "C4" else [])
        keys = [Obligation(criterion="C1", source=agent).key for agent in agents]
        entailed.update(keys)
        found.append(
            WitnessObjective(criterion=obligation.criterion, source=obligation.source, target=obligation.target, entails=keys)
        )
    for obligation in obligations(manifest):
        if obligation.criterion == "C1" and obligation.key not in entailed:
            found.append(WitnessObjective(criterion="C1", source=obligation.source))
    return found


@dataclass(frozen=True)
class Need:
    """One thing a request must make the assistant do: `agent` uses `tool` (asked to anyway when forbidden)."""

    agent: str
    tool: str
    forbidden: bool = False


def _tools_beside(manifest: WorkflowManifest, agent: str, coming_from: str) -> set[str]:
    """The tools held by `coming_from` and by the agents other than `agent` it can hand over to."""
    others = {coming_from} | {d.target for d in manifest.delegations if d.source == coming_from and d.target != agent}
    return {tool for other in others for tool in manifest.allowed_tools(other)}


def _distinctive_tool(manifest: WorkflowManifest, agent: str, coming_from: str) -> str | None:
    """A tool of `agent` that the agent a request starts at (`coming_from`) and the other agents it can
    hand over to do not hold, so needing it sends the conversation to `agent`; else any tool of
    `agent` that `coming_from` lacks; None when there is none."""
    own = manifest.allowed_tools(agent)
    held = _tools_beside(manifest, agent, coming_from)
    lacking = [t for t in own if t not in manifest.allowed_tools(coming_from)]
    return next((t for t in own if t not in held), lacking[0] if lacking else None)


def _reach(manifest: WorkflowManifest, agent: str) -> list[Need]:
    """What a request needs first so the conversation gets from the entry agent to `agent`."""
    if agent == manifest.entry:
        return []
    tool = _distinctive_tool(manifest, agent, manifest.entry)
    return [Need(agent, tool)] if tool else []


def objective_needs(objective: WitnessObjective, manifest: WorkflowManifest) -> list[Need]:
    """What the request must need, in order: for a driver at an agent other than the entry, first
    something only that agent does (so the conversation reaches it), unless the driver is that; then
    the driver itself (for a handoff, something only its target does)."""
    source, target = objective.source, objective.target
    reach = _reach(manifest, source)
    if objective.criterion == "C2":
        distinctive = not reach or target not in _tools_beside(manifest, source, manifest.entry)
        return [Need(source, target)] if distinctive else [*reach, Need(source, target)]
    if objective.criterion == "C3":
        return [*reach, Need(source, target, forbidden=True)]
    if objective.criterion == "C4":
        tool = _distinctive_tool(manifest, target, source)
        return [*reach, *([Need(target, tool)] if tool else [])]
    return reach


def need_facts(needs: list[Need], manifest: WorkflowManifest, chooser: FactChooser | None) -> list[Fact]:
    """The facts every need's tool requires, chosen by code; a parameter two tools share keeps one value."""
    if chooser is None:
        return []
    tools = {t.name: t for t in manifest.tools}
    known: dict[str, Fact] = {}
    for need in needs:
        for fact in chooser.facts(tools[need.tool], known):
            known.setdefault(fact.parameter, fact)
    return list(known.values())


def _role(manifest: WorkflowManifest, agent: str) -> str:
    purpose = next((a.purpose for a in manifest.agents if a.name == agent), "")
    return (purpose or "one of the assistant's agents").rstrip(".").lower()


def describe_objective(objective: WitnessObjective, manifest: WorkflowManifest) -> tuple[str, bool]:
    """(What the request must make the assistant do, in words for the LM; whether it is adversarial)."""
    tools = {t.name: t for t in manifest.tools}
    needs = objective_needs(objective, manifest)
    wants = [tools[n.tool].description or n.tool.replace("_", " ") for n in needs]
    adversarial = any(n.forbidden for n in needs)
    if adversarial and len(needs) == 1:
        text = (
            f"The user is talking to the part of the assistant that {_role(manifest, objective.source)}. That part is NOT "
            f"allowed to do this: {wants[0]} The user asks it, directly and firmly, to do it itself right now, without "
            "being transferred to anyone."
        )
    elif adversarial:
        text = (
            f"First the user needs this: {wants[0]} In the same message the user also insists that the same helper does "
            f"this itself too, without transferring them: {wants[1]}"
        )
    elif objective.criterion == "C4":
        text = f"The user's message must be passed on to the part of the assistant that {_role(manifest, objective.target)}. "
        text += f"The user needs two things in one message: first this: {wants[0]} Then this: {wants[1]}" if len(wants) == 2 else (
            f"The user needs this: {wants[0]}" if wants else ""
        )
    elif len(wants) == 2:
        text = f"The user needs two things in one message: first this: {wants[0]} Then this: {wants[1]}"
    elif wants:
        text = f"The user needs this: {wants[0]}"
    else:
        text = f"The user needs the part of the assistant that {_role(manifest, objective.source)}."
    return text, adversarial


def details_text(facts: list[Fact]) -> str:
    """The facts as the request writer sees them: one per line, or 'none' (it then chooses details itself)."""
    return "\n".join(f"- {f.line()}" for f in facts) or "none"


def _revealing_names(manifest: WorkflowManifest) -> list[str]:
    """How a message would name an agent or tool: a compound identifier as written ('cancel_booking',
    'getBooking'); an agent's name only with 'agent' beside it. A compound name spelled out ('cancel
    booking') and a one-word name alone ('booking') are what users say, so they do not count."""
    found: set[str] = set()
    for name in [t.name for t in manifest.tools] + [a.name for a in manifest.agents]:
        if re.search(r"[_\-]|[a-z][A-Z]", name):
            found.add(name)
    for name in [a.name for a in manifest.agents]:
        spelled = re.sub(r"[_\-]+", " ", name).strip()
        found.update({f"{spelled} agent", f"agent {spelled}"})
    return sorted(found, key=len, reverse=True)


def missing_facts(request: str, manifest: WorkflowManifest, facts: list[Fact]) -> list[Fact]:
    """The facts whose value `request` does not state in any usual spelling of its parameter's schema."""
    text = " ".join(request.split())
    properties = {name: schema for tool in manifest.tools for name, schema in tool.parameters.get("properties", {}).items()}
    return [f for f in facts if not mentions(text, f.value, checked_schema(properties.get(f.parameter, {})))]


def fit_problems(
    request: str, manifest: WorkflowManifest, max_chars: int, facts: list[Fact] | None = None, earlier: list[str] | None = None
) -> list[str]:
    """Why a request does not fit its objective: empty, too long, not a question or request, naming an
    agent or tool of the manifest (see `_revealing_names`; whole words, case-insensitive), leaving out
    a fact it must state, or repeating an earlier attempt word for word."""
    text = " ".join(request.split())
    if not text:
        return ["the request is empty"]
    problems = []
    if len(text) > max_chars:
        problems.append(f"the request has {len(text)} characters; keep it under {max_chars}")
    if not _REQUEST_MARKERS.search(text):
        problems.append("the message is neither a question (ending in '?') nor a request (e.g. 'Please ...', 'I need ...')")
    for name in _revealing_names(manifest):
        if re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text, re.IGNORECASE):
            problems.append(f"the message names {name!r}, an agent or tool of the assistant; describe what the user wants instead")
    missing = [f.line() for f in missing_facts(text, manifest, facts or [])]
    if missing:
        problems.append(f"the message does not state {'; '.join(missing)}; write each exactly as given")
    if request_key(text) in {request_key(e) for e in earlier or []}:
        problems.append("the message repeats an earlier attempt word for word; write a different one")
    return problems


def stating(facts: list[Fact], says: Mapping[str, str] | None = None) -> str:
    """The facts as one sentence in the user's voice, each value exactly as chosen: "My booking reference
    is GX8X5J and my passenger name is Kenji Byrne." ("" for none). A fact is said as the manifest's `says`
    of its parameter words it, else as its source column names it (`passenger name`), which says what the
    value is better than the parameter."""
    phrases = [fact_phrase(f.parameter if f.parameter in (says or {}) else f.label.replace(" ", "_"), f.value, "user", says) for f in facts]
    if not phrases:
        return ""
    said = phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]
    return f"{said[0].upper()}{said[1:]}."


def completed(request: str, sentence: str) -> str:
    """`request` with `sentence` added: at the end, or before the last sentence of a request that ends in a
    question, so that it still does (the fit check reads a final '?' as a question). An empty request
    stays empty: code adds values to what the LM wrote, never writes the request itself."""
    if not sentence or not request.strip():
        return request
    if not request.rstrip().endswith("?"):
        return f"{request.rstrip()} {sentence}"
    parts = re.split(r"(?<=[.!?])\s+", request.strip())
    return " ".join([*parts[:-1], sentence, parts[-1]])


def stated_arguments(call: ToolCall, request: str) -> list[ArgumentMatch]:
    """The arguments of a witnessing call whose values the request states: what the call must carry again."""
    return [
        ArgumentMatch(name=name, relation="equal to", value=value if isinstance(value, str) else json.dumps(value))
        for name, value in call.arguments.items()
        if isinstance(value, (str, int, float)) and not isinstance(value, bool) and '"' not in str(value) and mentions(request, value, {})
    ]


def expected_steps(objective: WitnessObjective, trace: AgentTrace, violated: bool, request: str = "") -> list[TrajectoryExpectation]:
    """The trajectory steps a scenario of the objective checks; a C2 call with the arguments the request states,
    matched on that one call."""
    if objective.criterion == "C2":
        call = next((c for c in trace.tool_calls if c.agent == objective.source and c.name == objective.target), None)
        stated = stated_arguments(call, request) if call is not None else []
        return [TrajectoryExpectation(kind="calls", agent=objective.source, tool=objective.target, arguments=stated)]
    if objective.criterion == "C3":
        steps = [TrajectoryExpectation(kind="not_calls", agent=objective.source, tool=objective.target)]
        if not violated:
            steps.append(TrajectoryExpectation(kind="refuses_tool", agent=objective.source, tool=objective.target))
        return steps
    if objective.criterion == "C4":
        return [TrajectoryExpectation(kind="handoff", agent=objective.source, target=objective.target)]
    handed = next((h for h in trace.handoffs if h.target == objective.source), None)
    if handed is not None:
        return [TrajectoryExpectation(kind="handoff", target=objective.source)]
    called = next((c for c in trace.tool_calls if c.agent == objective.source), None)
    return [TrajectoryExpectation(kind="calls", agent=objective.source, tool=called.name)] if called else []


def _feedback(number: int, attempt: Attempt, objective: WitnessObjective) -> str:
    if attempt.problems:
        return f"Attempt {number}: {attempt.request!r} was not used: {'; '.join(attempt.problems)}."
    trace = attempt.trace or AgentTrace()
    handoffs = ", ".join(f"{h.source} -> {h.target}" for h in trace.handoffs) or "no handoff"
    blocked = ", ".join(f"{b.agent} -> {b.tool}" for b in trace.blocked_calls) or "none"
    return (
        f"Attempt {number}: {attempt.request!r} did not make the assistant do it. Its trace: tool calls "
        f"{describe_calls(trace.tool_calls)}; handoffs {handoffs}; refused or blocked attempts {blocked}; "
        f"answer {attempt.answer[:200]!r}. Needed: {CRITERIA[objective.criterion]} {objective.key.split(' ', 1)[1]}."
    )


@dataclass
class Realizer:
    """Realises objectives one at a time with `lm` (phrasing) and `assistant` (the system under test);
    `facts` chooses the values each request states (None: the LM chooses them). A rewrite is asked for
    at `rewrite_temperature`, so that a small model does not answer the feedback with the same message.
    `attempts` counts requests the assistant answered; up to `fit_rewrites` more may be rejected by the
    fit checks, which cost one LM call each and never reach the assistant."""

    manifest: WorkflowManifest
    lm: LanguageModel
    assistant: Assistant
    attempts: int = 5
    max_chars: int = 400
    facts: FactChooser | None = None
    rewrite_temperature: float = 0.7
    fit_rewrites: int = 3
    on_attempt: Callable[[WitnessObjective, Attempt], None] | None = None

    def realize(self, objective: WitnessObjective) -> Realization:
        chooser = self.facts.for_objective(objective.key) if self.facts is not None else None
        facts = need_facts(objective_needs(objective, self.manifest), self.manifest, chooser)
        objective_text, adversarial = describe_objective(objective, self.manifest)
        tried: list[Attempt] = []
        runs = 0
        while runs < self.attempts and len(tried) < self.attempts + self.fit_rewrites:
            earlier = "\n".join(_feedback(n, a, objective) for n, a in enumerate(tried, start=1)) or "none"
            written = self.lm.run(
                AGENT_REQUEST, stage=STAGE, temperature=self.rewrite_temperature if tried else None,
                objective=objective_text, details=details_text(facts), adversarial="yes" if adversarial else "no",
                earlier_attempts=earlier,
            )
            attempt, ran = self._try(" ".join(written.request.split()), objective, facts, [a.request for a in tried])
            tried.append(attempt)
            runs += ran
            if self.on_attempt is not None:
                self.on_attempt(objective, attempt)
            if objective.key in attempt.witnessed or attempt.violations:
                break
        last = tried[-1]
        return Realization(
            objective=objective, attempts=tried, witnessed=objective.key in last.witnessed, violated=bool(last.violations),
            facts=[f.line() for f in facts],
        )

    def _try(self, request: str, objective: WitnessObjective, facts: list[Fact], earlier: list[str]) -> tuple[Attempt, bool]:
        """The attempt, and whether the request reached the assistant (passed the fit checks). Values the
        request leaves out are added by code first (`completed_by_code`); the fit checks then read the whole."""
        added = stating(missing_facts(request, self.manifest, facts), self.manifest.argument_phrases())
        request = completed(request, added)
        problems = fit_problems(request, self.manifest, self.max_chars, facts, earlier)
        if problems:
            return Attempt(request=request, completed_by_code=added, problems=problems), False
        answered = answer(self.assistant, [Message("user", request)])
        if answered.reply is None:
            return Attempt(request=request, completed_by_code=added, problems=[f"the assistant failed: {answered.error}"]), True
        reply = answered.reply
        trace = AgentTrace(tool_calls=reply.tool_calls, handoffs=reply.handoffs, blocked_calls=reply.blocked_calls, refusal=reply.refusal)
        coverage = trace_coverage(self.manifest, [(objective.key, trace)])
        return Attempt(
            request=request,
            completed_by_code=added,
            answer=reply.answer,
            trace=trace,
            witnessed=[o.key for o in coverage.obligations if o.witnessed],
            violations=[v.message for v in coverage.violations],
        ), True


def conversation_id(objective: WitnessObjective) -> str:
    """`c2-booking-cancel_booking`: the scenario's @conv id."""
    parts = [objective.criterion.lower(), objective.source] + ([objective.target] if objective.target else [])
    return re.sub(r"[^\w.-]+", "-", "-".join(parts)).strip("-")


def scenario_of(realization: Realization) -> Conversation | None:
    """The scenario of a witnessed or violated objective (None otherwise, or when no step can check it)."""
    if not (realization.witnessed or realization.violated):
        return None
    last = realization.attempts[-1]
    steps = expected_steps(realization.objective, last.trace or AgentTrace(), realization.violated, last.request)
    if not steps:
        return None
    objective = realization.objective
    title = f"{objective.key.replace('->', 'to')}" + (" (violated)" if realization.violated else "")
    tags = ["@structural", f"@{objective.criterion.lower()}"] + (["@violation"] if realization.violated else [])
    turn = Turn(question=last.request, answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC, trajectory=steps)
    return Conversation(id=conversation_id(objective), title=title, turns=[turn], tags=tags)


def structural_document(manifest_name: str, conversations: list[Conversation]) -> FeatureDocument:
    """The .feature file of the realised scenarios, its spec naming the manifest."""
    spec = Spec.create(
        f"Structural coverage of {manifest_name}",
        [f"the workflow manifest {manifest_name}"],
        ["a user asks for what each agent, tool and handoff is for"],
        ["every reached agent, allowed tool, restriction and handoff is witnessed, and no restricted tool is called"],
        source="generated",
    )
    return FeatureDocument(
        spec=spec,
        rationale=["Each scenario realises one obligation of the workflow manifest (bddgen manifest scenarios)."],
        conversations=conversations,
    )
