"""ragas and DeepEval datasets as hand-written specs that `bddgen implement` turns into conversations.

Read: ragas samples (JSONL from `EvaluationDataset.to_jsonl`, or a JSON list) — single-turn
(`user_input` a string) or multi-turn (`user_input` a list of messages); DeepEval goldens (JSON list
from `save_as(file_type="json")`, or JSONL) — `Golden` (`input`) or `ConversationalGolden` (`scenario`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bddgen.corpus.readers import read_utf8
from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.vocabulary import quote
from bddgen.specs import Spec

DEFAULT_GIVEN = "a user of the assistant"
TITLE_WORDS = 10  # not a setting: the form of an imported spec's title


def read_samples(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(location, sample) of every record of a JSON list or JSONL file; InputError naming line or index."""
    location = path.name
    text = read_utf8(path, location)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(Problem(f"{location}:{exc.lineno}", f"invalid JSON: {exc.msg} (column {exc.colno})")) from exc
        records = [(f"{location}: /{i}", item) for i, item in enumerate(data)]
    else:
        records = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((f"{location}:{number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise InputError(Problem(f"{location}:{number}", f"invalid JSON: {exc.msg} (column {exc.colno})")) from exc
    problems = [Problem(where, "expected a JSON object (one sample or golden)") for where, item in records if not isinstance(item, dict)]
    if problems:
        raise InputError(problems)
    if not records:
        raise InputError(Problem(location, "no samples: the file is empty"))
    return records


def _title(text: str) -> str:
    words = quote(text).split()
    title = " ".join(words[:TITLE_WORDS])
    return title + ("…" if len(words) > TITLE_WORDS else "")


def _messages(messages: list[Any], role_key: str, user_role: str) -> list[str]:
    return [quote(str(m.get("content", ""))) for m in messages if isinstance(m, dict) and m.get(role_key) == user_role and m.get("content")]


def spec_of(sample: dict[str, Any]) -> Spec:
    """The hand-written spec a sample describes; ValueError saying what is missing."""
    if "user_input" in sample:  # ragas
        user_input = sample["user_input"]
        questions = _messages(user_input, "type", "human") if isinstance(user_input, list) else [quote(str(user_input))]
        reference = quote(str(sample.get("reference") or ""))
        given = [DEFAULT_GIVEN]
    elif "scenario" in sample:  # DeepEval ConversationalGolden
        questions = [quote(str(sample["scenario"]))] + _messages(sample.get("turns") or [], "role", "user")
        reference = quote(str(sample.get("expected_outcome") or ""))
        given = [quote(str(sample.get("user_description") or DEFAULT_GIVEN))]
    elif "input" in sample:  # DeepEval Golden
        questions = [quote(str(sample["input"]))]
        reference = quote(str(sample.get("expected_output") or ""))
        given = [DEFAULT_GIVEN]
    else:
        raise ValueError("neither a ragas sample (user_input) nor a DeepEval golden (input or scenario)")
    questions = [q for q in questions if q]
    if not questions:
        raise ValueError("no question: user_input, input or scenario is empty")
    when = [f"the user asks: {q}" for q in questions] if "scenario" not in sample else [questions[0]] + [f"the user asks: {q}" for q in questions[1:]]
    then = [f"the assistant's answer agrees with: {reference}"] if reference else ["the assistant answers from its documents"]
    return Spec.create(_title(questions[0]), given, when, then, source="hand-written")


def specs_from_dataset(path: Path) -> list[Spec]:
    """One hand-written spec per sample or golden; InputError listing every unusable one."""
    specs: list[Spec] = []
    problems: list[Problem] = []
    for where, sample in read_samples(path):
        try:
            specs.append(spec_of(sample))
        except ValueError as exc:
            problems.append(Problem(where, str(exc)))
    if problems:
        raise InputError(problems, title=f"cannot import {path.name}")
    return specs


def feature_document(spec: Spec, dataset: str) -> FeatureDocument:
    return FeatureDocument(spec=spec, rationale=[f"Imported from {dataset}."], tags=["@imported"])
