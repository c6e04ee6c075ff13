"""What a turn's trajectory should look like, as the trajectory steps of a .feature file say it,
and the deterministic check of one expectation against the trace the assistant reported.

Each kind has one step phrase (a regular expression behave, the reader and the writer share):

    Then the agent should call "lookup_booking"
    Then the agent "booking" should call "cancel_booking" with "booking_id" equal to "ABC123"
    Then the agent should call "update_seat" with "confirmation_number" equal to "ABC123" and "new_seat" equal to "12A"
    Then the agent should call "search_flights" with "destination" containing "Oslo"
    Then the agent should call "book" with "passenger.name" matching "^Ana\b"
    Then the agent should not call "cancel_booking"
    Then the agent should call "lookup_booking" at most 2 times
    Then the agent should call the tools "lookup_booking, cancel_booking" in order
    Then the agent should call exactly the tools "lookup_booking, cancel_booking" in order
    Then the assistant should hand over to "booking"
    Then the agent "triage" should refuse to call "cancel_booking"
    Then the assistant should refuse
    Then the tool "lookup_booking" should return a result with "status" equal to "confirmed"
    Then the tool "get_weather" called by "travel" should return a result containing "sunny"
    Then the answer should be JSON with "summary" containing "refund" and "pages" equal to "3"
    Then the scenario should take at most 5 seconds
    Then the scenario should use at most 2000 tokens
    Then the agent should achieve the goal "the booking is cancelled and the user is told the refund"

The last three are scenario steps (`SCENARIO_KINDS`): the run checks them on the whole scenario so far (its time,
turns, tokens and cost; its transcript, by the judge), not on one turn's trace.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.answer_checks import declines

ExpectationKind = Literal[
    "calls", "not_calls", "count", "order", "sequence", "handoff", "refuses_tool", "refuses", "returns", "answer_json", "limit",
    "goal",
]
Bound = Literal["at least", "at most", "exactly"]
Measure = Literal["seconds", "turns", "tokens", "usd"]
"""What a `limit` step bounds: the assistant's time (seconds), the turns, the tokens its replies report, their cost (USD)."""
SCENARIO_KINDS = frozenset({"limit", "goal"})
TOOL_RESULT_CHARS = 200  # not a setting: a display width, the start of a tool result shown in a failed expectation
"""Kinds the run checks on the whole scenario so far rather than on one turn's trace."""

_NAME = r'"(?P<{0}>[^"]+)"'
_AGENT = r'(?: "(?P<agent>[^"]+)")?'
_RELATION = r"equal to|containing|matching"
_CONDITION = rf'"[^"]+" (?:{_RELATION}) ".*?"'
_DECIMAL = r"\d+(?:\.\d+)?"
CONDITION = re.compile(rf'"(?P<name>[^"]+)" (?P<relation>{_RELATION}) "(?P<value>.*?)"(?=(?: and {_CONDITION})*$)')
"""One argument condition of a `should call ... with` step."""
PATTERNS: dict[str, re.Pattern[str]] = {
    "calls": re.compile(
        rf"^the agent{_AGENT} should call {_NAME.format('tool')}(?: with (?P<arguments>{_CONDITION}(?: and {_CONDITION})*))?$"
    ),
    "not_calls": re.compile(rf"^the agent{_AGENT} should not call {_NAME.format('tool')}$"),
    "count": re.compile(
        rf"^the agent{_AGENT} should call {_NAME.format('tool')} (?P<bound>at least|at most|exactly) (?P<count>\d+) times?$"
    ),
    "order": re.compile(rf'^the agent{_AGENT} should call the tools "(?P<tools>[^"]+)" in order$'),
    "sequence": re.compile(rf'^the agent{_AGENT} should call exactly the tools "(?P<tools>[^"]+)" in order$'),
    "handoff": re.compile(rf"^the (?:assistant|agent{_AGENT}) should hand over to {_NAME.format('target')}$"),
    "refuses_tool": re.compile(rf"^the agent{_AGENT} should refuse to call {_NAME.format('tool')}$"),
    "refuses": re.compile(r"^the assistant should refuse$"),
    "returns": re.compile(
        rf'^the tool "(?P<tool>[^"]+)"(?: called by "(?P<agent>[^"]+)")? should return a result '
        rf'(?:(?P<result_relation>{_RELATION}) "(?P<result_value>.*)"|with (?P<arguments>{_CONDITION}(?: and {_CONDITION})*))$'
    ),
    "answer_json": re.compile(rf"^the answer should be JSON with (?P<arguments>{_CONDITION}(?: and {_CONDITION})*)$"),
    "limit": re.compile(
        rf"^the scenario should (?:take at most (?P<seconds>{_DECIMAL}) seconds?|take at most (?P<turns>\d+) turns?"
        rf"|use at most (?P<tokens>\d+) tokens?|cost at most (?P<usd>{_DECIMAL}) USD)$"
    ),
    "goal": re.compile(r'^the agent should achieve the goal "(?P<goal>.+)"$'),
}
"""One anchored regex per expectation kind; behave registers the same patterns."""

Relation = Literal["equal to", "containing", "matching"]
_WITH_CONDITIONS = re.compile(
    r'^(?:the agent(?: "[^"]+")? should call "[^"]+"|the tool "[^"]+"(?: called by "[^"]+")? should return a result'
    r'|the answer should be JSON) with (?P<conditions>.+)$'
)
_CONDITION_START = re.compile(r'(?:^|" and )"(?P<name>[^"]+)" (?P<relation>[^"\s]+(?: [^"\s]+){0,2}) "')
RELATION_CUTOFF = 0.6  # not a setting: how close a word must be to a relation to be suggested (difflib's ratio)


def states_conditions(text: str) -> bool:
    """Whether a step line has the shape of a step with argument or result conditions (`... should call "T" with ...`,
    `... should return a result with ...`, `the answer should be JSON with ...`), whatever its conditions say."""
    return _WITH_CONDITIONS.match(" ".join(text.split())) is not None


def misspelt_relation(text: str) -> str | None:
    """Why a condition of a step with conditions has no relation, with the closest one (`"question" matchin "..."`
    would otherwise be read as part of the value before it), or None when every condition has one."""
    found = _WITH_CONDITIONS.match(" ".join(text.split()))
    if found is None:
        return None
    for condition in _CONDITION_START.finditer(found.group("conditions")):
        relation = condition.group("relation")
        if relation not in get_args(Relation):
            close = difflib.get_close_matches(relation, get_args(Relation), n=1, cutoff=RELATION_CUTOFF)
            fix = f"did you mean {close[0]!r}?" if close else "write equal to, containing or matching"
            return (
                f'in "{condition.group("name")}" {relation} "...", {relation!r} is no relation; {fix} '
                '(a condition is "NAME" equal to "VALUE", "NAME" containing "VALUE" or "NAME" matching "PATTERN")'
            )
    return None


class ArgumentMatch(BaseModel):
    """One condition on an argument of a call: `"new_seat" equal to "12A"`; a dotted name reaches into nested
    arguments (`"passenger.name"`, `"segments.0.origin"`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The argument, or a dotted path into it; '' (a `returns` step's whole result): the value itself.")
    relation: Relation
    value: str = Field(description="What the argument should equal or contain, or the regular expression it should match.")

    @model_validator(mode="after")
    def _pattern(self) -> ArgumentMatch:
        if self.relation == "matching":
            try:
                re.compile(self.value)
            except re.error as exc:
                raise ValueError(f"{self.value!r} is not a regular expression ({exc}); escape its special characters") from exc
        return self

    @property
    def text(self) -> str:
        """The condition as a step writes it."""
        return f'"{self.name}" {self.relation} "{self.value}"'

    def holds(self, arguments: Any) -> bool:
        """Whether a call's arguments (or a tool's result, see `result_value`) meet the condition, comparing values (not
        their JSON text)."""
        found, actual = _argument(arguments, self.name)
        if not found:
            return False
        if self.relation == "matching":
            return re.search(self.value, actual if isinstance(actual, str) else json.dumps(actual, ensure_ascii=False)) is not None
        return _equal(actual, self.value) if self.relation == "equal to" else _contains(actual, self.value)


def _argument(arguments: Any, name: str) -> tuple[bool, Any]:
    """Whether the arguments have `name` (itself, else a dotted path through objects and list indices), and its value;
    the name '' is the whole value."""
    if not name:
        return True, arguments
    if isinstance(arguments, dict) and name in arguments:
        return True, arguments[name]
    value: Any = arguments
    for part in name.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return False, None
    return True, value


def _same_text(actual: str, expected: str) -> bool:
    return " ".join(actual.split()).casefold() == " ".join(expected.split()).casefold()


def _equal(actual: Any, expected: str) -> bool:
    """A string equals the text, case and spacing ignored; any other value equals the JSON value the text states."""
    if isinstance(actual, str):
        return _same_text(actual, expected)
    try:
        return bool(json.loads(expected) == actual)
    except json.JSONDecodeError:
        return False


def _contains(actual: Any, expected: str) -> bool:
    """A string contains the text; a list or object contains it in one of its values (never in its keys)."""
    if isinstance(actual, dict):
        return any(_contains(value, expected) for value in actual.values())
    if isinstance(actual, list):
        return any(_contains(item, expected) for item in actual)
    text = actual if isinstance(actual, str) else json.dumps(actual)
    return " ".join(expected.split()).casefold() in " ".join(text.split()).casefold()


def result_value(result: str) -> Any:
    """A tool's result as a value: the JSON value its text holds (an object, a number, ...), else the text itself."""
    try:
        return json.loads(result)
    except json.JSONDecodeError:
        return result


def _amount(number: float) -> str:
    """A limit as a step writes it: `5`, `0.01` (never an exponent)."""
    return f"{number:.10f}".rstrip("0").rstrip(".")


class TrajectoryExpectation(BaseModel):
    """One trajectory step of a turn: which tool calls, handoffs or refusals the turn should show."""

    model_config = ConfigDict(extra="forbid")

    kind: ExpectationKind
    agent: str | None = Field(default=None, description="The agent that should (not) act; any agent when absent.")
    tool: str = Field(default="", description="calls, not_calls, refuses_tool: the tool.")
    arguments: list[ArgumentMatch] = Field(
        default_factory=list,
        description="calls: conditions that one call of the tool meets together; returns: its result; answer_json: the answer.",
    )
    bound: Bound | None = Field(default=None, description="count: how the number of calls compares with `count`.")
    count: int = Field(default=0, ge=0, description="count: the number of calls of the tool.")
    tools: list[str] = Field(default_factory=list, description="order, sequence: tools that should be called in this order.")
    target: str = Field(default="", description="handoff: the agent the conversation should be handed over to.")
    measure: Measure | None = Field(default=None, description="limit: what the step bounds.")
    limit: float = Field(default=0, ge=0, description="limit: the most the scenario may take, use or cost, in the measure's unit.")
    goal: str = Field(default="", description="goal: what the conversation should achieve, as the judge reads it.")

    @model_validator(mode="before")
    @classmethod
    def _one_argument(cls, data: Any) -> Any:
        """A results.jsonl written before several arguments (and a caller that states one) give it as argument/relation/value."""
        if isinstance(data, dict) and "argument" in data:
            data = dict(data)
            name, relation, value = data.pop("argument"), data.pop("relation", ""), data.pop("value", "")
            data["arguments"] = [{"name": name, "relation": relation, "value": value}] if name else []
        return data

    @model_validator(mode="after")
    def _complete(self) -> TrajectoryExpectation:
        if self.kind == "limit" and self.measure is None:
            raise ValueError("a limit step needs its measure: seconds, turns, tokens or usd")
        if self.kind == "goal" and not self.goal.strip():
            raise ValueError("a goal step needs the goal between its double quotes")
        if self.kind == "limit" and self.measure in ("turns", "tokens") and not float(self.limit).is_integer():
            raise ValueError(f"a limit of {self.measure} is a whole number, not {self.limit}")
        return self

    @property
    def step(self) -> str:
        """The step text (without its Gherkin keyword)."""
        agent = f' "{self.agent}"' if self.agent else ""
        if self.kind == "calls":
            condition = " with " + " and ".join(a.text for a in self.arguments) if self.arguments else ""
            return f'the agent{agent} should call "{self.tool}"{condition}'
        if self.kind == "not_calls":
            return f'the agent{agent} should not call "{self.tool}"'
        if self.kind == "count":
            return f'the agent{agent} should call "{self.tool}" {self.bound} {self.count} time{"" if self.count == 1 else "s"}'
        if self.kind in ("order", "sequence"):
            exactly = "exactly " if self.kind == "sequence" else ""
            return f'the agent{agent} should call {exactly}the tools "{", ".join(self.tools)}" in order'
        if self.kind == "handoff":
            who = f"agent{agent}" if self.agent else "assistant"
            return f'the {who} should hand over to "{self.target}"'
        if self.kind == "refuses_tool":
            return f'the agent{agent} should refuse to call "{self.tool}"'
        if self.kind == "returns":
            caller = f' called by "{self.agent}"' if self.agent else ""
            return f'the tool "{self.tool}"{caller} should return a result {self.result_condition}'
        if self.kind == "answer_json":
            return "the answer should be JSON with " + " and ".join(a.text for a in self.arguments)
        if self.kind == "limit":
            return f"the scenario should {self._limit_text}"
        if self.kind == "goal":
            return f'the agent should achieve the goal "{self.goal}"'
        return "the assistant should refuse"

    @property
    def result_condition(self) -> str:
        """returns: the condition on the result as the step writes it (`equal to "..."`, `with "PATH" ... and ...`)."""
        whole = [a for a in self.arguments if not a.name]
        if whole:
            return f'{whole[0].relation} "{whole[0].value}"'
        return "with " + " and ".join(a.text for a in self.arguments)

    @property
    def _limit_text(self) -> str:
        amount = _amount(self.limit)
        if self.measure == "usd":
            return f"cost at most {amount} USD"
        if self.measure == "tokens":
            return f"use at most {amount} token{'' if amount == '1' else 's'}"
        unit = "second" if self.measure == "seconds" else "turn"
        return f"take at most {amount} {unit}{'' if amount == '1' else 's'}"

    def matches(self, call: ToolCall) -> bool:
        """calls: whether one call is of the tool (by the agent) and meets every argument condition together."""
        agent_fits = self.agent is None or call.agent == self.agent
        return agent_fits and call.name == self.tool and all(a.holds(call.arguments) for a in self.arguments)

    def returned(self, call: ToolCall) -> bool:
        """returns: whether one call is of the tool (by the agent) and its result meets every condition together."""
        agent_fits = self.agent is None or call.agent == self.agent
        return agent_fits and call.name == self.tool and all(a.holds(result_value(call.result)) for a in self.arguments)


def expectation_from_groups(kind: str, groups: dict[str, str | None]) -> TrajectoryExpectation:
    """The expectation of a step of `kind` from its pattern's named groups (None: an absent optional part)."""
    found: dict[str, Any] = {key: value for key, value in groups.items() if value is not None}
    if "tools" in found:
        found["tools"] = [t.strip() for t in found["tools"].split(",") if t.strip()]
    if "arguments" in found:
        found["arguments"] = [m.groupdict() for m in CONDITION.finditer(found["arguments"])]
    if "result_relation" in found:
        found["arguments"] = [{"name": "", "relation": found.pop("result_relation"), "value": found.pop("result_value", "")}]
    measure = next((m for m in get_args(Measure) if m in found), None)
    if measure is not None:
        found.update(measure=measure, limit=float(found.pop(measure)))
    return TrajectoryExpectation(kind=kind, **found)  # type: ignore[arg-type]


def parse_expectation(text: str) -> TrajectoryExpectation | None:
    """The expectation a step line states, or None when the line is no trajectory step; ValueError when a condition
    of it has no relation (`misspelt_relation`)."""
    text = " ".join(text.split())
    misspelt = misspelt_relation(text)
    if misspelt is not None:
        raise ValueError(misspelt)
    for kind, pattern in PATTERNS.items():
        match = pattern.match(text)
        if match is not None:
            return expectation_from_groups(kind, match.groupdict())
    return None


@dataclass(frozen=True)
class Trace:
    """What one turn did, as the assistant reported it."""

    tool_calls: list[ToolCall] = field(default_factory=list)
    handoffs: list[Handoff] = field(default_factory=list)
    blocked_calls: list[BlockedCall] = field(default_factory=list)
    refusal: str = ""
    answer: str = ""


def describe_calls(calls: list[ToolCall]) -> str:
    """`agent:tool(args), ...` or 'no tool call'."""
    if not calls:
        return "no tool call"
    return ", ".join(
        f"{c.agent + ':' if c.agent else ''}{c.name}({json.dumps(c.arguments, ensure_ascii=False, sort_keys=True)})" for c in calls
    )


def describe_results(calls: list[ToolCall]) -> str:
    """`agent:tool -> result, ...` (a long result shortened), or 'no call'."""
    if not calls:
        return "no call"
    return ", ".join(
        f"{c.agent + ':' if c.agent else ''}{c.name} -> {_shortened(c.result) if c.result else '(no result recorded)'}" for c in calls
    )


def _shortened(text: str, most: int = TOOL_RESULT_CHARS) -> str:
    return text if len(text) <= most else text[:most] + "…"


def is_subsequence(wanted: list[str], names: list[str]) -> bool:
    """True when `wanted` occurs in `names` in order, other items allowed between."""
    remaining = iter(names)
    return all(any(name == tool for name in remaining) for tool in wanted)


def _check_returns(e: TrajectoryExpectation, calls: list[ToolCall], actual: str) -> str | None:
    """returns: None when a call of the tool returned a result meeting every condition, else why not."""
    mine = [c for c in calls if c.name == e.tool]
    wanted = f"a call of {e.tool!r}{' by ' + repr(e.agent) if e.agent else ''} returning a result {e.result_condition}"
    if not mine:
        return f"expected {wanted}; actual: {actual}"
    if any(e.returned(c) for c in mine):
        return None
    hint = "; the trace records no result of its calls: report each call's result" if not any(c.result for c in mine) else ""
    return f"expected {wanted}; actual results: {describe_results(mine)}{hint}"


def _check_answer_json(e: TrajectoryExpectation, answer: str) -> str | None:
    """answer_json: None when the answer's JSON meets every condition, else why not."""
    wanted = f"expected an answer whose JSON has {' and '.join(a.text for a in e.arguments)}"
    value = result_value(answer)
    if not isinstance(value, (dict, list)):
        return f"{wanted}; the answer is no JSON object or list: {_shortened(answer)!r}"
    return None if all(a.holds(value) for a in e.arguments) else f"{wanted}; actual: {_shortened(answer)!r}"


def check_expectation(expectation: TrajectoryExpectation, trace: Trace) -> str | None:
    """None when the trace meets the expectation, else why not (naming expected and actual). A scenario step
    (`SCENARIO_KINDS`) is no check of one trace: ValueError."""
    e = expectation
    if e.kind in SCENARIO_KINDS:
        raise ValueError(f"{e.step!r} is checked by the run on the whole scenario, not on one turn's trace")
    by_agent = [c for c in trace.tool_calls if e.agent is None or c.agent == e.agent]
    actual = describe_calls(trace.tool_calls)
    if e.kind == "calls":
        if not any(c.name == e.tool for c in by_agent):
            return f"expected a call of {e.tool!r}{' by ' + repr(e.agent) if e.agent else ''}; actual: {actual}"
        if not any(e.matches(c) for c in by_agent):
            return f"expected one call of {e.tool!r} with {' and '.join(a.text for a in e.arguments)}; actual: {actual}"
        return None
    if e.kind == "not_calls":
        calls = [c for c in by_agent if c.name == e.tool]
        return f"expected no call of {e.tool!r}; actual: {actual}" if calls else None
    if e.kind == "count":
        made = sum(c.name == e.tool for c in by_agent)
        fits = {"at least": made >= e.count, "at most": made <= e.count, "exactly": made == e.count}[e.bound or "exactly"]
        by = f" by {e.agent!r}" if e.agent else ""
        return None if fits else f"expected {e.tool!r} called {e.bound} {e.count} time(s){by}, not {made}; actual: {actual}"
    if e.kind == "order":
        if is_subsequence(e.tools, [c.name for c in by_agent]):
            return None
        return f"expected the tools {', '.join(e.tools)} in this order; actual: {actual}"
    if e.kind == "sequence":
        if [c.name for c in by_agent] == e.tools:
            return None
        return f"expected exactly the tools {', '.join(e.tools)} in this order, and no other call; actual: {actual}"
    if e.kind == "handoff":
        if any(h.target == e.target and (e.agent is None or h.source == e.agent) for h in trace.handoffs):
            return None
        seen = ", ".join(f"{h.source} -> {h.target}" for h in trace.handoffs) or "no handoff"
        return f"expected a handoff to {e.target!r}; actual: {seen}"
    if e.kind == "refuses_tool":
        ran = [c for c in by_agent if c.name == e.tool]
        if ran:
            return f"expected {e.tool!r} to be refused, but it ran; actual: {actual}"
        if any(b.tool == e.tool and (e.agent is None or b.agent == e.agent) for b in trace.blocked_calls):
            return None
        return f"expected a refused or blocked attempt to call {e.tool!r}; the trace records none (actual: {actual})"
    if e.kind == "returns":
        return _check_returns(e, by_agent, actual)
    if e.kind == "answer_json":
        return _check_answer_json(e, trace.answer)
    if trace.refusal:
        return None
    # a call the guard blocked is no refusal of the request: another agent may still carry it out
    return None if declines(trace.answer) else f"expected a refusal; the assistant answered {trace.answer[:200]!r}"


@dataclass(frozen=True)
class Permissions:
    """What a workflow manifest lets its agents do, as a closed world: its agents and tools, the allowed and
    restricted (agent, tool) edges and the delegated (source, target) handoffs."""

    agents: frozenset[str]
    tools: frozenset[str]
    allowed: frozenset[tuple[str, str]]
    restricted: frozenset[tuple[str, str]]
    delegations: frozenset[tuple[str, str]]


ViolationKind = Literal["restricted", "unknown tool", "unknown agent", "not allowed", "not delegated"]


class ManifestViolation(BaseModel):
    """A call or handoff the manifest does not allow: a restricted edge, a tool or agent it does not have, a call it
    neither allows nor restricts, a handoff it does not delegate."""

    model_config = ConfigDict(extra="forbid")

    kind: ViolationKind
    agent: str = Field(description="The agent that called or handed over; '' when the call did not say.")
    tool: str = Field(default="", description="The tool called; '' for a handoff.")
    target: str = Field(default="", description="The agent handed over to; '' for a call.")

    @property
    def message(self) -> str:
        """`agent 'triage' called restricted tool 'cancel_booking'`, and the like for each kind."""
        if self.target:
            what = "names an agent the manifest does not have" if self.kind == "unknown agent" else "the manifest does not delegate"
            return f"handoff from {self.agent!r} to {self.target!r}, which {what}"
        who = f"agent {self.agent!r}" if self.agent else "an agent"
        return {
            "restricted": f"{who} called restricted tool {self.tool!r}",
            "unknown tool": f"{who} called {self.tool!r}, a tool the manifest does not have",
            "unknown agent": f"{self.agent!r}, an agent the manifest does not have, called {self.tool!r}",
            "not allowed": f"{who} called {self.tool!r}, which the manifest neither allows nor restricts for it",
        }[self.kind]

    @property
    def failure(self) -> str:
        """The violation as a turn's trajectory failure."""
        return f"VIOLATION: {self.message}"


def _call_violation(call: ToolCall, permissions: Permissions) -> ViolationKind | None:
    if call.name not in permissions.tools:
        return "unknown tool"
    if call.agent is None:  # who called is not known: only the tool can be checked
        return None
    if call.agent not in permissions.agents:
        return "unknown agent"
    if (call.agent, call.name) in permissions.restricted:
        return "restricted"
    return None if (call.agent, call.name) in permissions.allowed else "not allowed"


def violations(trace: Trace, permissions: Permissions | None) -> list[ManifestViolation]:
    """Every call and handoff of the trace outside the manifest, in order (none without a manifest)."""
    if permissions is None:
        return []
    found = []
    for call in trace.tool_calls:
        kind = _call_violation(call, permissions)
        if kind is not None:
            found.append(ManifestViolation(kind=kind, agent=call.agent or "", tool=call.name))
    for handoff in trace.handoffs:
        if not {handoff.source, handoff.target} <= permissions.agents:
            found.append(ManifestViolation(kind="unknown agent", agent=handoff.source, target=handoff.target))
        elif (handoff.source, handoff.target) not in permissions.delegations:
            found.append(ManifestViolation(kind="not delegated", agent=handoff.source, target=handoff.target))
    return found
