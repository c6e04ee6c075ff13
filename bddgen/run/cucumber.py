"""A run as Cucumber Messages (`messages.ndjson`) and Cucumber JSON (`cucumber.json`), for the tools teams use for
BDD results (Cucumber's HTML formatter and report services, Allure, CI dashboards): the scenarios the run
recorded, every step with its status, and on each turn's step its verdict, question, reference, answer and the
judge's feedback attached.

Each repeat of a conversation is one test case attempt; every step gets its own status (bddgen judges every turn,
so a failed turn does not skip the turns after it)."""

from __future__ import annotations

import base64
import json
import platform
import sys
from dataclasses import dataclass
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
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.answer_checks import contains_exact
from bddgen.run.feature_cache import FeatureCache

MESSAGES_FILE = "messages.ndjson"
CUCUMBER_JSON = "cucumber.json"
PROTOCOL_VERSION = version("cucumber-messages")
"""The Cucumber Messages protocol these messages are written in: the version of the cucumber-messages package."""
STEP_LIBRARY = "bddgen/run/behave_steps.py"
_CONVERSATION_TAG = "@conv:"


@dataclass(frozen=True)
class StepOutcome:
    """A step's status, its failure message and the text attached to it."""

    status: str  # PASSED, FAILED
    message: str = ""
    attachment: str = ""
    seconds: float = 0.0


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
    started = _time(metadata.started)
    messages = _Messages(started)
    json_features = []
    for feature, conversations in recorded.items():
        path = root / feature
        if path.is_file():
            json_features.append(messages.feature(feature, *parsed.gherkin(path), conversations))
    messages.finish(all(r.verdict == Verdict.PASS for r in records))
    ndjson = run_dir / MESSAGES_FILE
    atomic_write(ndjson, "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages.envelopes))
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
    return {"seconds": whole, "nanos": int(round((seconds - whole) * 1e9)) % 1_000_000_000}


def _duration(seconds: float) -> dict[str, int]:
    return _timestamp(max(seconds, 0.0))


class _Messages:
    """The envelopes of one run, in protocol order, each checked against the cucumber-messages model."""

    def __init__(self, started: float) -> None:
        self.ids = IdGenerator()
        self.clock = started
        self.envelopes: list[dict[str, Any]] = []
        self.run_id = self.ids.get_next_id()
        self.definition = self.ids.get_next_id()
        self._emit(meta={
            "protocolVersion": PROTOCOL_VERSION, "implementation": {"name": "bddgen", "version": __version__},
            "runtime": {"name": platform.python_implementation(), "version": platform.python_version()},
            "os": {"name": sys.platform}, "cpu": {"name": platform.machine() or "unknown"},
        })
        self._emit(stepDefinition={
            "id": self.definition, "pattern": {"source": "(a bddgen step)", "type": "CUCUMBER_EXPRESSION"},
            "sourceReference": {"uri": STEP_LIBRARY},
        })
        self._emit(testRunStarted={"timestamp": _timestamp(self.clock), "id": self.run_id})

    def _emit(self, **message: Any) -> None:
        envelope = message_converter.to_dict(message_converter.from_dict(message, Envelope))
        self.envelopes.append(envelope)

    def feature(
        self, uri: str, text: str, ast: dict[str, Any], conversations: dict[tuple[str, int], dict[int, TurnResult]]
    ) -> dict[str, Any]:
        """The feature's source, document, pickles and test cases; its Cucumber JSON element. `ast`: the text parsed on
        its own (`FeatureCache.gherkin`), given this run's ids here."""
        document = _with_ids(ast, self.ids)
        document["uri"] = uri
        self._emit(source={"uri": uri, "data": text, "mediaType": "text/x.cucumber.gherkin+plain"})
        self._emit(gherkinDocument=document)
        scenarios = {s["id"]: s for s in _scenarios(document.get("feature") or {})}
        elements = []
        for pickle in Compiler(self.ids).compile(document):
            conversation = _conversation_id(pickle)
            runs = sorted((repeat, turns) for (cid, repeat), turns in conversations.items() if cid == conversation)
            if not runs:
                continue
            self._emit(pickle=pickle)
            steps = [(s, self.ids.get_next_id()) for s in pickle["steps"]]
            case = self.ids.get_next_id()
            self._emit(testCase={
                "id": case, "pickleId": pickle["id"], "testRunStartedId": self.run_id,
                "testSteps": [{"id": sid, "pickleStepId": s["id"], "stepDefinitionIds": [self.definition],
                               "stepMatchArgumentsLists": [{"stepMatchArguments": []}]} for s, sid in steps],
            })
            scenario = scenarios.get(pickle["astNodeIds"][0], {})
            for repeat, turns in runs:
                outcomes = list(_outcomes([s["text"] for s, _ in steps], turns))
                self._attempt(case, steps, outcomes, repeat)
                elements.append(_json_scenario(uri, document, scenario, pickle, outcomes, repeat, len(runs) > 1))
        feature = document.get("feature") or {}
        return {
            "uri": uri, "id": _slug(feature.get("name", uri)), "keyword": feature.get("keyword", "Feature"),
            "name": feature.get("name", ""), "description": feature.get("description", ""),
            "line": feature.get("location", {}).get("line", 1),
            "tags": [{"name": t["name"], "line": t["location"]["line"]} for t in feature.get("tags", [])],
            "elements": elements,
        }

    def _attempt(self, case: str, steps: list[tuple[dict[str, Any], str]], outcomes: list[StepOutcome], repeat: int) -> None:
        started = self.ids.get_next_id()
        self._emit(testCaseStarted={"id": started, "testCaseId": case, "attempt": repeat - 1, "timestamp": _timestamp(self.clock)})
        for (_, step_id), outcome in zip(steps, outcomes):
            self._emit(testStepStarted={"testCaseStartedId": started, "testStepId": step_id, "timestamp": _timestamp(self.clock)})
            if outcome.attachment:
                self._emit(attachment={
                    "testCaseStartedId": started, "testStepId": step_id, "body": outcome.attachment,
                    "contentEncoding": "IDENTITY", "mediaType": "text/plain", "timestamp": _timestamp(self.clock),
                })
            self.clock += outcome.seconds
            result: dict[str, Any] = {"status": outcome.status, "duration": _duration(outcome.seconds)}
            if outcome.message:
                result["message"] = outcome.message
            self._emit(testStepFinished={
                "testCaseStartedId": started, "testStepId": step_id, "testStepResult": result, "timestamp": _timestamp(self.clock),
            })
        self._emit(testCaseFinished={"testCaseStartedId": started, "timestamp": _timestamp(self.clock), "willBeRetried": False})

    def finish(self, success: bool) -> None:
        self._emit(testRunFinished={"testRunStartedId": self.run_id, "success": success, "timestamp": _timestamp(self.clock)})


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


def _conversation_id(pickle: dict[str, Any]) -> str:
    tags = [t["name"] for t in pickle.get("tags", []) if t["name"].startswith(_CONVERSATION_TAG)]
    return decode_tag_value(tags[-1][len(_CONVERSATION_TAG):]) if tags else ""


def _outcomes(texts: list[str], turns: dict[int, TurnResult]) -> Iterator[StepOutcome]:
    """Each step's outcome from the turn records: an ask passes unless the assistant could not be asked; a Then step
    of a turn carries its verdict (a `contain` step its exact value), the spec step the conversation check's; a
    task's steps the outcome record's."""
    if not any(ASK.match(text) for text in texts):
        yield from _task_outcomes(texts, turns.get(0))
        return
    number = 0
    for text in texts:
        if ASK.match(text):
            number += 1
            record = turns.get(number)
            yield _status(record, "") if record is not None and record.verdict == Verdict.ERROR else StepOutcome(
                "PASSED", seconds=record.latency if record is not None else 0.0)
            continue
        record = turns.get(0 if SATISFY.match(text) else number)
        if record is None:
            yield StepOutcome("PASSED")  # a Given step before the first question (a fault injected)
            continue
        contains = CONTAINS.match(text)
        if contains:
            value = contains.group("value")
            stated = record.verdict != Verdict.ERROR and contains_exact(record.answer, value)
            yield StepOutcome("PASSED") if stated else StepOutcome("FAILED", f"{value!r} not in the answer {record.answer!r}")
        elif AGREE.match(text) or ABSTAIN.match(text) or SATISFY.match(text):
            yield _status(record, _attachment(record))
        else:
            yield _step_failure(text, record, record.trajectory_failures)


def _task_outcomes(texts: list[str], record: TurnResult | None) -> Iterator[StepOutcome]:
    for index, text in enumerate(texts):
        if record is None:
            yield StepOutcome("PASSED")
        elif index == len(texts) - 1:
            yield _status(record, _attachment(record))
        else:
            yield _step_failure(text, record, record.outcome_failures + record.trajectory_failures)


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
    uri: str, document: dict[str, Any], scenario: dict[str, Any], pickle: dict[str, Any], outcomes: list[StepOutcome],
    repeat: int, repeated: bool,
) -> dict[str, Any]:
    """One scenario run (one repeat) as a Cucumber JSON element."""
    lines = {s["id"]: s for s in _all_steps(document.get("feature") or {})}
    steps = []
    for step, outcome in zip(pickle["steps"], outcomes):
        source = lines.get(step["astNodeIds"][0], {})
        result: dict[str, Any] = {"status": outcome.status.lower(), "duration": int(outcome.seconds * 1e9)}
        if outcome.message:
            result["error_message"] = outcome.message
        entry: dict[str, Any] = {
            "keyword": source.get("keyword", ""), "name": step["text"], "line": source.get("location", {}).get("line", 0),
            "match": {"location": STEP_LIBRARY}, "result": result,
        }
        if outcome.attachment:
            entry["embeddings"] = [{"mime_type": "text/plain", "data": base64.b64encode(outcome.attachment.encode()).decode("ascii")}]
            entry["output"] = [outcome.attachment]
        steps.append(entry)
    name = pickle["name"] + (f" (repeat {repeat})" if repeated else "")
    return {
        "id": f"{_slug((document.get('feature') or {}).get('name', uri))};{_slug(name)}", "keyword": scenario.get("keyword", "Scenario"),
        "name": name, "description": scenario.get("description", ""), "line": scenario.get("location", {}).get("line", 0),
        "type": "scenario", "tags": [{"name": t["name"], "line": t["location"]["line"]} for t in scenario.get("tags", [])],
        "steps": steps,
    }


def _all_steps(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for child in node.get("children", []):
        for kind in ("scenario", "background"):
            if kind in child:
                yield from child[kind].get("steps", [])
        if "rule" in child:
            yield from _all_steps(child["rule"])


def _slug(text: str) -> str:
    return "-".join("".join(ch if ch.isalnum() else " " for ch in text.lower()).split()) or "feature"
