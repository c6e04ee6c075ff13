"""airline-agent as an assistant under test: the agent loop of one turn and its trace.

Each step the speaking agent's model call chooses a tool call, a handoff or the answer (see
`steps.py`). A tool the agent may call runs on the conversation's own database copy and is recorded
as a ToolCall; a tool it must never call is blocked by the guard and recorded as a BlockedCall —
unless that restriction is lifted (the unrestricted variant), when it runs and is recorded as a
ToolCall, which structural coverage reports as a violation. A call whose required values the
conversation does not state is not made either (`grounding.py`): the agent is told to ask for them —
unless the variant guesses missing dates, when today's date is filled in (a deliberately broken agent).
A tool refused that way is left out of the agent's choices for the rest of the turn (the 1.5B
guessed airports for search_flights six times in a row). An agent handed the conversation takes a
tool step or answers before it may hand it on (on the
embedded 1.5B, a booking agent handed a flight change passed it straight on to baggage), and a blocked
call's finding names the agent that may make the call.
With `enforce_policy=False` (the no-policy variant) its tools skip their policy checks, so it cancels
or changes any booking it is asked to.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Iterable

from bddgen.reference.airline.conversations import ConversationState, ConversationStore
from bddgen.reference.airline.database import NOW, build_template
from bddgen.reference.airline.grounding import is_date_parameter, unstated_arguments
from bddgen.reference.airline.state import state_keys
from bddgen.reference.airline.tasks import FINAL_ANSWER, Answer, agent_step
from bddgen.reference.airline.tools import apply
from bddgen.reference.tools import ToolArgumentError
from bddgen.reference.airline.workflow import ENTRY, ROLES
from bddgen.faults import ToolFault
from bddgen.state_diff import DatabaseState, snapshot
from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.models import Corpus
from bddgen.evaluation.assistant import AssistantReply, AssistantReplyError
from bddgen.run.messages import last_user_message

STAGE = "run"
RESULT_CHARACTERS = 700  # a tool result as the model and the trace see it (part of the reference agent's fixed prompt)
NO_FINDINGS = "(nothing yet this turn)"
NO_TOOL_CALLED = "(no tool was called)"
NEXT_STEP = "If these findings answer the passenger's message, answer now; otherwise take the one step still missing."


def _shorten(text: str, limit: int = RESULT_CHARACTERS) -> str:
    return text if len(text) <= limit else text[:limit] + " …(cut)"


def parse_restriction(text: str) -> tuple[str, str]:
    """'agent:tool' as (agent, tool); ValueError naming the restricted pairs otherwise."""
    agent, _, tool = text.partition(":")
    if (agent, tool) not in {(role.name, t) for role in ROLES.values() for t in role.restricted}:
        known = ", ".join(f"{role.name}:{t}" for role in ROLES.values() for t in role.restricted)
        raise ValueError(f"{text!r} is no restriction of airline-agent; its restrictions: {known}")
    return agent, tool


def _owners(tool: str) -> str:
    """The agents whose allowed tools include `tool`, as a finding names them ("the booking agent")."""
    return " or ".join(f"the {role.name} agent" for role in ROLES.values() if tool in role.allowed) or "no agent"


def _render(findings: list[str]) -> str:
    return "\n".join([*findings, NEXT_STEP]) if findings else NO_FINDINGS


@dataclass
class TurnTrace:
    """What the agents did in one turn, in order, and what the model sees of it."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    blocked_calls: list[BlockedCall] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)
    seen_calls: set[str] = field(default_factory=set)


class AirlineAgentAssistant:
    """Triage, booking and baggage agents over a per-conversation SQLite copy of the airline tables."""

    supports_faults = True

    def __init__(
        self,
        lm: LanguageModel,
        corpus: Corpus,
        *,
        max_steps: int = 6,
        lifted_restrictions: Iterable[tuple[str, str]] = (),
        guess_missing_dates: bool = False,
        enforce_policy: bool = True,
        name: str = "airline-agent",
    ) -> None:
        self.lm = lm
        self.max_steps = max_steps
        self.lifted = frozenset(lifted_restrictions)
        self.guess_missing_dates = guess_missing_dates
        self.today = NOW.date()
        self.enforce_policy = enforce_policy
        self._name = name
        self.conversations = ConversationStore(build_template(corpus), ENTRY)
        self.state_keys = state_keys(corpus)

    @property
    def name(self) -> str:
        return self._name

    def database_state(self, messages: list[Message]) -> DatabaseState:
        """The state of the conversation's database after `messages` (none: the state every conversation starts from)."""
        if not messages:
            return snapshot(self.conversations.template, self.state_keys)
        database = self.conversations.peek(messages)
        if database is None:
            raise AssistantReplyError(f"{self.name}: no conversation ends with these {len(messages)} messages, so it has no state to read")
        return snapshot(database, self.state_keys)

    def respond(self, messages: list[Message]) -> AssistantReply:
        return self.respond_with_faults(messages, [])

    def respond_with_faults(self, messages: list[Message], faults: list[ToolFault]) -> AssistantReply:
        """Answer the last user message, with `faults` injected into the tools they name."""
        question, earlier = last_user_message(messages)
        state = self.conversations.take(earlier)
        trace = TurnTrace()
        try:
            answer = self._turn(question, earlier, state, trace, {f.tool: f for f in faults})
        except LMOutputError as exc:
            raise AssistantReplyError(f"{self.name}: the {state.agent} agent's model gave no usable step: {exc}") from exc
        self.conversations.keep([*earlier, Message("user", question), Message("assistant", answer)], state)
        return AssistantReply(
            answer=answer,
            contexts=[call.result for call in trace.tool_calls],
            tool_calls=trace.tool_calls,
            handoffs=trace.handoffs,
            blocked_calls=trace.blocked_calls,
        )

    def _turn(
        self, question: str, earlier: list[Message], state: ConversationState, trace: TurnTrace, faults: dict[str, ToolFault]
    ) -> str:
        history = render_history(earlier)
        held = {state.agent}
        received = False  # the speaking agent was handed the conversation and has not acted on it yet
        ungrounded: set[str] = set()  # tools refused this turn for values the passenger has not given
        for _ in range(self.max_steps):
            step = self.lm.run(
                agent_step(state.agent, frozenset(ROLES) if received else frozenset(held), frozenset(ungrounded)),
                stage=STAGE,
                temperature=0.0,
                conversation=history,
                passenger_message=question,
                findings=_render(trace.findings),
            ).step  # type: ignore[attr-defined]
            if isinstance(step, Answer):
                return step.text
            if step.action == "hand_over":
                trace.handoffs.append(Handoff(source=state.agent, target=step.agent))
                trace.findings.append(f"The {state.agent} agent handed the conversation over to the {step.agent} agent.")
                state.agent = step.agent
                held.add(step.agent)
                received = True
                continue
            received = False
            arguments = step.arguments.model_dump()
            signature = json.dumps([state.agent, step.action, arguments], sort_keys=True)
            if signature in trace.seen_calls:
                break  # the same call again would return the same result: answer from what is known
            trace.seen_calls.add(signature)
            stated_text = "\n".join([history, question, *trace.findings])
            if not self._attempt(state, step.action, arguments, trace, faults.get(step.action), stated_text):
                ungrounded.add(step.action)
        return self.lm.run(
            FINAL_ANSWER,
            stage=STAGE,
            temperature=0.0,
            conversation=history,
            passenger_message=question,
            findings="\n".join(trace.findings) or NO_TOOL_CALLED,
        ).text

    def permitted(self, agent: str, tool: str) -> bool:
        """The guard: an agent may run its allowed tools, and a restricted one only when lifted."""
        return tool in ROLES[agent].allowed or (agent, tool) in self.lifted

    def _attempt(
        self,
        state: ConversationState,
        tool: str,
        arguments: dict[str, Any],
        trace: TurnTrace,
        fault: ToolFault | None,
        stated_text: str,
    ) -> bool:
        """Run, block or refuse one call; False when it was refused for values the passenger has not given."""
        agent = state.agent
        if not self.permitted(agent, tool):
            reason = f"the {agent} agent may not call {tool}"
            trace.blocked_calls.append(BlockedCall(agent=agent, tool=tool, reason=reason))
            handover = f"the {agent} agent hands the conversation over to {_owners(tool)}, which may call it"
            trace.findings.append(f"Blocked: {reason}; {handover}.")
            return True
        missing = self._unstated(tool, arguments, stated_text, state.database)
        if missing:
            trace.findings.append(
                f"Not called: {tool} needs the {' and the '.join(m.replace('_', ' ') for m in missing)}, which the "
                "passenger has not given; answer by asking the passenger for it."
            )
            return False
        result = fault.output() if fault is not None else self._run_tool(tool, arguments, state.database, self.enforce_policy)
        trace.tool_calls.append(ToolCall(name=tool, arguments=arguments, result=_shorten(result), agent=agent))
        trace.findings.append(f"The {agent} agent called {tool}({json.dumps(arguments)}) and got: {_shorten(result)}")
        return True

    def _unstated(self, tool: str, arguments: dict[str, Any], text: str, database: sqlite3.Connection) -> list[str]:
        """Required parameters of the call that `text` does not state; the guessing variant first fills
        an unstated date with today's (in `arguments`, so the call runs with it)."""
        missing = unstated_arguments(tool, arguments, text, database, self.today)
        if not self.guess_missing_dates:
            return missing
        for name in [m for m in missing if is_date_parameter(tool, m)]:
            arguments[name] = self.today.isoformat()
            missing.remove(name)
        return missing

    @staticmethod
    def _run_tool(tool: str, arguments: dict[str, Any], database: sqlite3.Connection, enforce_policy: bool) -> str:
        try:
            return json.dumps(apply(tool, arguments, database, enforce_policy=enforce_policy), ensure_ascii=False)
        except ToolArgumentError as exc:
            return json.dumps({"error": str(exc)})
