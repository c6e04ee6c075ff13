"""A run as Cucumber Messages (`messages.ndjson`) and Cucumber JSON (`cucumber.json`), for the tools teams use for
BDD results (Cucumber's HTML formatter and report services, Allure, CI dashboards): the scenarios the run
recorded, every step with its status, and on each turn's step its verdict, question, reference, answer and the
judge's feedback attached.

Each repeat of a conversation is one attempt of its test case (attempt 0, 1, ...; each but the last will be retried,
as Cucumber marks a retry); every step gets its own status (bddgen judges every turn, so a failed turn does not skip
the turns after it), its step definition in bddgen's step library, and the times the run recorded."""

from __future__ import annotations

import base64
import json
import platform
import re
import sys
from dataclasses import dataclass, replace
from importlib.metadata import version
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

from cucumber_messages import Envelope, message_converter
from gherkin.pickles.compiler import Compiler
from gherkin.stream.id_generator import IdGenerator

from bddgen import __version__
from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS, SATISFY, decode_tag_value
from bddgen.files import atomic_write
from bddgen.outcomes import TASK_TAG_PREFIX
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.answer_checks import contains_exact
from bddgen.run.feature_cache import FeatureCache
from bddgen.run.step_library import StepDefinition, find_step

MESSAGES_FILE = "messages.ndjson"
CUCUMBER_JSON = "cucumber.json"
PROTOCOL_VERSION = version("cucumber-messages")
"""The Cucumber Messages protocol these messages are written in: the version of the cucumber-messages package."""
_CONVERSATION_TAG = "@conv:"


@dataclass(frozen=True)
class StepOutcome:
    """A step's status, its failure message, the text attached to it, and the record whose time it took (None: none;
    `asks`: the assistant's latency of that turn, else from the step before it until the record's verdict)."""

    status: str  # PASSED, FAILED
    message: str = ""
    attachment: str = ""
    turn: int | None = None
    asks: bool = False


@dataclass(frozen=True)
class TimedStep:
    """A step's outcome and when it began and ended (seconds since the epoch)."""

    outcome: StepOutcome
    started: float
    finished: float


def write_cucumber(
    run_dir: Path, root: Path, metadata: RunMetadata, records: list[TurnResult], parsed: FeatureCache | None = None
) -> list[Path]:
    """Write both files for the recorded conversations; nothing when none was recorded. `parsed`: the run's parsed
    .feature files (a file it has not parsed yet is parsed into it)."""
    if not records:
        return []
    parsed = parsed or FeatureCache()
    recorded: dict[str, dict[tuple[str, int], dict[int, TurnResult]]] = {}
    for record in records:
        recorded.setdefault(record.feature, {}).setdefault((record.conversation_id, record.repeat), {})[record.turn] = record
    messages = _Messages(_time(metadata.started))
    json_features = []
    for feature, conversations in recorded.items():
        path = root / feature
        if path.is_file():
            json_features.append(messages.feature(feature, *parsed.gherkin(path), conversations))
    finished = _time(metadata.finished) if metadata.finished else messages.run_started
    ndjson = run_dir / MESSAGES_FILE
    envelopes = messages.envelopes(all(r.verdict == Verdict.PASS for r in records), finished)
    atomic_write(ndjson, "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in envelopes))
    cucumber = run_dir / CUCUMBER_JSON
    atomic_write(cucumber, json.dumps(json_features, indent=2, ensure_ascii=False) + "\n")
    return [ndjson, cucumber]


def _time(stamp: str) -> float:
    try:
        return datetime.fromisoformat(stamp).timestamp()
    except ValueError:
        return datetime.now(timezone.utc).timestamp()


def _timestamp(seconds: float) -> dict[str, int]:
    whole = int(seconds)
    nanos = int(round((seconds - whole) * 1e9))
    return {"seconds": whole + nanos // 1_000_000_000, "nanos": nanos % 1_000_000_000}


def _duration(seconds: float) -> dict[str, int]:
    return _timestamp(max(seconds, 0.0))


class _Messages:
    """The envelopes of one run, in protocol order (sources, documents and pickles; the step definitions the steps
    matched; the run, its test cases and their attempts), each checked against the cucumber-messages model."""

    def __init__(self, started: float) -> None:
        """`started`: when the run began (a record that holds no times is taken to run from then on)."""
        self.ids = IdGenerator()
        self.run_started = started
        self.started = started
        self.ended = started
        self.run_id = self.ids.get_next_id()
        self._documents: list[dict[str, Any]] = []
        self._definitions: dict[StepDefinition, str] = {}
        self._test_cases: list[dict[str, Any]] = []
        self._attempts: list[dict[str, Any]] = []

    def feature(
        self, uri: str, text: str, ast: dict[str, Any], conversations: dict[tuple[str, int], dict[int, TurnResult]]
    ) -> dict[str, Any]:
        """The feature's source, document, pickles and test cases; its Cucumber JSON element. `ast`: the text parsed on
        its own (`FeatureCache.gherkin`), given this run's ids here."""
        document = _with_ids(ast, self.ids)
        document["uri"] = uri
        self._documents += [
            {"source": {"uri": uri, "data": text, "mediaType": "text/x.cucumber.gherkin+plain"}}, {"gherkinDocument": document},
        ]
        scenarios = {s["id"]: s for s in _scenarios(document.get("feature") or {})}
        elements = []
        for pickle in Compiler(self.ids).compile(document):
            scenario = scenarios.get(pickle["astNodeIds"][0], {})
            conversation = _conversation_id(pickle, scenario)
            runs = sorted((repeat, turns) for (cid, repeat), turns in conversations.items() if cid == conversation)
            if not runs:
                continue
            self._documents.append({"pickle": pickle})
            matches = [find_step(s["text"]) for s in pickle["steps"]]
            steps = [(s, self.ids.get_next_id()) for s in pickle["steps"]]
            case = self.ids.get_next_id()
            self._test_cases.append({"testCase": {
                "id": case, "pickleId": pickle["id"], "testRunStartedId": self.run_id,
                "testSteps": [self._test_step(step, step_id, match) for (step, step_id), match in zip(steps, matches)],
            }})
            for attempt, (repeat, turns) in enumerate(runs):
                timed = _timed(list(_outcomes(pickle["steps"], turns)), turns, self.run_started)
                self._attempt(case, steps, timed, attempt, retried=attempt < len(runs) - 1)
                elements.append(_json_scenario(uri, document, scenario, pickle, timed, matches, repeat, len(runs) > 1))
        feature = document.get("feature") or {}
        return {
            "uri": uri, "id": _slug(feature.get("name", uri)), "keyword": feature.get("keyword", "Feature"),
            "name": feature.get("name", ""), "description": feature.get("description", ""),
            "line": feature.get("location", {}).get("line", 1),
            "tags": [{"name": t["name"], "line": t["location"]["line"]} for t in feature.get("tags", [])],
            "elements": elements,
        }

    def _test_step(self, step: dict[str, Any], step_id: str, match: tuple[StepDefinition, re.Match[str]] | None) -> dict[str, Any]:
        """A test step naming the step definition the step matched and the match's arguments (none: undefined)."""
        if match is None:
            return {"id": step_id, "pickleStepId": step["id"], "stepDefinitionIds": []}
        definition, found = match
        if definition not in self._definitions:
            self._definitions[definition] = self.ids.get_next_id()
        groups = [(found.start(i), found.group(i)) for i in range(1, found.re.groups + 1)]
        arguments = [{"group": {"start": start, "value": value, "children": []} if value is not None else {"children": []}} for start, value in groups]
        return {"id": step_id, "pickleStepId": step["id"], "stepDefinitionIds": [self._definitions[definition]],
                "stepMatchArgumentsLists": [{"stepMatchArguments": arguments}]}

    def _attempt(self, case: str, steps: list[tuple[dict[str, Any], str]], timed: list[TimedStep], attempt: int, retried: bool) -> None:
        """One attempt of a test case (a repeat of its conversation): every step's start, attachment and result."""
        started = self.ids.get_next_id()
        begin = timed[0].started if timed else self.started
        end = timed[-1].finished if timed else begin
        self.started, self.ended = min(self.started, begin), max(self.ended, end)
        messages: list[dict[str, Any]] = [
            {"testCaseStarted": {"id": started, "testCaseId": case, "attempt": attempt, "timestamp": _timestamp(begin)}},
        ]
        for (_, step_id), step in zip(steps, timed):
            outcome = step.outcome
            messages.append({"testStepStarted": {
                "testCaseStartedId": started, "testStepId": step_id, "timestamp": _timestamp(step.started),
            }})
            if outcome.attachment:
                messages.append({"attachment": {
                    "testCaseStartedId": started, "testStepId": step_id, "body": outcome.attachment,
                    "contentEncoding": "IDENTITY", "mediaType": "text/plain", "timestamp": _timestamp(step.finished),
                }})
            result: dict[str, Any] = {"status": outcome.status, "duration": _duration(step.finished - step.started)}
            if outcome.message:
                result["message"] = outcome.message
            messages.append({"testStepFinished": {
                "testCaseStartedId": started, "testStepId": step_id, "testStepResult": result, "timestamp": _timestamp(step.finished),
            }})
        messages.append({"testCaseFinished": {"testCaseStartedId": started, "timestamp": _timestamp(end), "willBeRetried": retried}})
        self._attempts += messages

    def envelopes(self, success: bool, finished: float) -> list[dict[str, Any]]:
        """Every message of the run; it ends at `finished` or when its last test case did, whichever is later."""
        meta = {"meta": {
            "protocolVersion": PROTOCOL_VERSION, "implementation": {"name": "bddgen", "version": __version__},
            "runtime": {"name": platform.python_implementation(), "version": platform.python_version()},
            "os": {"name": sys.platform}, "cpu": {"name": platform.machine() or "unknown"},
        }}
        definitions = [
            {"stepDefinition": {
                "id": definition_id, "pattern": {"source": definition.pattern.pattern, "type": "REGULAR_EXPRESSION"},
                "sourceReference": {"uri": definition.uri, "location": {"line": definition.line}},
            }}
            for definition, definition_id in self._definitions.items()
        ]
        started = {"testRunStarted": {"timestamp": _timestamp(self.started), "id": self.run_id}}
        ended = {"testRunFinished": {
            "testRunStartedId": self.run_id, "success": success, "timestamp": _timestamp(max(finished, self.ended)),
        }}
        messages = [meta, *self._documents, *definitions, started, *self._test_cases, *self._attempts, ended]
        return [message_converter.to_dict(message_converter.from_dict(m, Envelope)) for m in messages]


def _with_ids(ast: dict[str, Any], ids: IdGenerator) -> dict[str, Any]:
    """A copy of a gherkin AST parsed on its own, its ids ("0", "1", ...: one per node, in the order the parser made
    them) drawn from `ids` in that order instead: the document a parse with `ids` gives, without parsing again."""
    found: list[int] = []

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            found.extend([int(node["id"])] if "id" in node else [])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(ast)
    drawn = [ids.get_next_id() for _ in range(max(found, default=-1) + 1)]

    def copy(node: Any) -> Any:
        if isinstance(node, dict):
            return {key: drawn[int(value)] if key == "id" else copy(value) for key, value in node.items()}
        if isinstance(node, list):
            return [copy(value) for value in node]
        return node

    return copy(ast)


def _scenarios(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for child in node.get("children", []):
        if "scenario" in child:
            yield child["scenario"]
        elif "rule" in child:
            yield from _scenarios(child["rule"])


def _conversation_id(pickle: dict[str, Any], scenario: dict[str, Any]) -> str:
    """The conversation a pickle runs, named as the run names it (`planning.conversation_id`): its `@conv:<id>` tag,
    else a task's `@task-<id>` tag, else `line-<N>` of its scenario's line."""
    tags = [t["name"] for t in pickle.get("tags", [])]
    conversation = [t for t in tags if t.startswith(_CONVERSATION_TAG)]
    if conversation:
        return decode_tag_value(conversation[-1][len(_CONVERSATION_TAG):])
    task = [t for t in tags if t.startswith(TASK_TAG_PREFIX)]
    return task[-1][len(TASK_TAG_PREFIX):] if task else f"line-{scenario.get('location', {}).get('line', 0)}"


def _outcomes(steps: list[dict[str, Any]], turns: dict[int, TurnResult]) -> Iterator[StepOutcome]:
    """Each step's outcome from the turn records: an ask passes unless the assistant could not be asked; a Then step
    of a turn carries its verdict (a `contain` step its exact value), the spec step the conversation check's; a
    task's steps the outcome record's."""
    texts = [step["text"] for step in steps]
    if not any(ASK.match(text) for text in texts):
        yield from _task_outcomes(steps, turns.get(0))
        return
    number = 0
    for text in texts:
        if ASK.match(text):
            number += 1
            record = turns.get(number)
            outcome = _status(record, "") if record is not None and record.verdict == Verdict.ERROR else StepOutcome("PASSED")
            yield replace(outcome, turn=number, asks=True)
            continue
        turn = 0 if SATISFY.match(text) else number
        record = turns.get(turn)
        if record is None:
            yield StepOutcome("PASSED")  # a Given step before the first question (a fault injected)
            continue
        contains = CONTAINS.match(text)
        if contains:
            value = contains.group("value")
            stated = record.verdict != Verdict.ERROR and contains_exact(record.answer, value)
            outcome = StepOutcome("PASSED") if stated else StepOutcome("FAILED", f"{value!r} not in the answer {record.answer!r}")
        elif AGREE.match(text) or ABSTAIN.match(text) or SATISFY.match(text):
            outcome = _status(record, _attachment(record))
        else:
            outcome = _step_failure(text, record, record.trajectory_failures)
        yield replace(outcome, turn=turn)


def _task_outcomes(steps: list[dict[str, Any]], record: TurnResult | None) -> Iterator[StepOutcome]:
    """A task's steps: its Given steps take no time, the first step after them the whole dialogue."""
    for index, step in enumerate(steps):
        if record is None:
            outcome = StepOutcome("PASSED")
        elif index == len(steps) - 1:
            outcome = _status(record, _attachment(record))
        else:
            outcome = _step_failure(step["text"], record, record.outcome_failures + record.trajectory_failures)
        yield outcome if step.get("type") == "Context" else replace(outcome, turn=0)


def _step_failure(text: str, record: TurnResult, failures: list[str]) -> StepOutcome:
    mine = [f for f in failures if f.startswith(text)]
    if record.verdict == Verdict.ERROR:
        return StepOutcome("FAILED", f"ERROR: {record.feedback}")
    return StepOutcome("FAILED", "\n".join(mine)) if mine else StepOutcome("PASSED")


def _status(record: TurnResult, attachment: str) -> StepOutcome:
    if record.verdict == Verdict.PASS:
        return StepOutcome("PASSED", attachment=attachment)
    prefix = "ERROR: " if record.verdict == Verdict.ERROR else ""
    return StepOutcome("FAILED", f"{prefix}{record.feedback}", attachment=attachment)


def _timed(outcomes: list[StepOutcome], turns: dict[int, TurnResult], run_started: float) -> list[TimedStep]:
    """When each step ran, from the records' times: an ask step from when its turn began for the assistant's latency,
    a step reporting a record from the step before it until the record's verdict, a step of no record at once. A
    record that holds no times (written by an older bddgen) is taken to begin where the step before it ended."""
    spans: dict[int, tuple[float, float]] = {}

    def span(turn: int, clock: float) -> tuple[float, float]:
        if turn not in spans:
            record = turns[turn]
            began = _time(record.started) if record.started else clock
            spans[turn] = (began, _time(record.finished) if record.finished else began + record.latency)
        return spans[turn]

    first = next((o.turn for o in outcomes if o.turn in turns), None)
    clock = span(first, run_started)[0] if first is not None else run_started
    timed = []
    for outcome in outcomes:
        if outcome.turn not in turns:
            timed.append(TimedStep(outcome, clock, clock))
            continue
        began, ended = span(outcome.turn, clock)
        if outcome.asks:
            step = TimedStep(outcome, began, began + turns[outcome.turn].latency)
        else:
            step = TimedStep(outcome, clock, max(clock, ended))
        timed.append(step)
        clock = step.finished
    return timed


def _attachment(record: TurnResult) -> str:
    """The turn as a person reads it: verdict, question, reference, answer and the judge's feedback."""
    where = "the whole conversation" if record.turn == 0 else f"turn {record.turn}" + (f" ({record.query_type.value})" if record.query_type else "")
    score = f", score {record.score}" if record.score is not None else ""
    checks = f" [checks: {', '.join(record.checks)}]" if record.checks else ""
    lines = [f"{where}: {record.verdict.value}{score}{checks}"]
    lines += [f"question: {record.question}"] if record.question else []
    lines += [f"reference: {record.expected}", f"answer: {record.answer}", f"judge: {record.feedback}"]
    if record.error_category:
        lines.append(f"error category: {record.error_category}")
    return "\n".join(lines)


def _json_scenario(
    uri: str, document: dict[str, Any], scenario: dict[str, Any], pickle: dict[str, Any], timed: list[TimedStep],
    matches: list[tuple[StepDefinition, re.Match[str]] | None], repeat: int, repeated: bool,
) -> dict[str, Any]:
    """One scenario run (one repeat) as a Cucumber JSON element."""
    lines = {s["id"]: s for s in _all_steps(document.get("feature") or {})}
    steps = []
    for step, timed_step, match in zip(pickle["steps"], timed, matches):
        source, outcome = lines.get(step["astNodeIds"][0], {}), timed_step.outcome
        result: dict[str, Any] = {"status": outcome.status.lower(), "duration": round((timed_step.finished - timed_step.started) * 1e9)}
        if outcome.message:
            result["error_message"] = outcome.message
        entry: dict[str, Any] = {
            "keyword": source.get("keyword", ""), "name": step["text"], "line": source.get("location", {}).get("line", 0), "result": result,
        }
        if match is not None:
            definition, found = match
            groups = [(found.group(i), found.start(i)) for i in range(1, found.re.groups + 1)]
            arguments = [{"val": value, "offset": offset} for value, offset in groups if value is not None]
            entry["match"] = {"location": f"{definition.uri}:{definition.line}", "arguments": arguments}
        if outcome.attachment:
            entry["embeddings"] = [{"mime_type": "text/plain", "data": base64.b64encode(outcome.attachment.encode()).decode("ascii")}]
            entry["output"] = [outcome.attachment]
        steps.append(entry)
    name = pickle["name"] + (f" (repeat {repeat})" if repeated else "")
    element: dict[str, Any] = {
        "id": f"{_slug((document.get('feature') or {}).get('name', uri))};{_slug(name)}", "keyword": scenario.get("keyword", "Scenario"),
        "name": name, "description": scenario.get("description", ""), "line": scenario.get("location", {}).get("line", 0),
        "type": "scenario", "tags": [{"name": t["name"], "line": t["location"]["line"]} for t in scenario.get("tags", [])],
        "steps": steps,
    }
    if timed:
        element["start_timestamp"] = datetime.fromtimestamp(timed[0].started, timezone.utc).isoformat().replace("+00:00", "Z")
    return element


def _all_steps(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for child in node.get("children", []):
        for kind in ("scenario", "background"):
            if kind in child:
                yield from child[kind].get("steps", [])
        if "rule" in child:
            yield from _all_steps(child["rule"])


def _slug(text: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split()) or "feature"
