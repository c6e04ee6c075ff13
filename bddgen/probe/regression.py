"""Dialogues the rubric judge failed (their overall score below the failure threshold), kept as Scenarios that
`bddgen run` and plain behave replay: the persona in the scenario's title, the user's turns as `When the user asks`
steps, and the rubric's criteria as the spec's Then lines, checked by `Then the conversation should satisfy the spec`."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bddgen.features.document import FeatureDocument
from bddgen.features.writer import write_feature
from bddgen.intents.regression import one_line
from bddgen.evaluation.rubric import Rubric
from bddgen.probe.model import Dialogue, Thread, Weakness
from bddgen.results import Verdict
from bddgen.safe_names import safe_file_name
from bddgen.specs import JUDGED_AS_A_WHOLE, TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn

SPEC_PREFIX = "probe-"


def is_failure(dialogue: Dialogue) -> bool:
    """Whether the dialogue failed and has a user turn to replay."""
    return dialogue.judgement.verdict == Verdict.FAIL and any(t.user.strip() for t in dialogue.turns)


def scenario_title(dialogue: Dialogue) -> str:
    """The dialogue as a scenario's title: the persona, its goal, the score and the difficulty."""
    persona = dialogue.persona
    return one_line(f"{persona.name}, {persona.attitude}, wants: {persona.goal} (scored {dialogue.scores.overall:.1f} at difficulty {dialogue.difficulty:.1f})")


def feature_name(weakness_id: str) -> str:
    """The .feature file of a weakness's failing dialogues."""
    return f"{SPEC_PREFIX}{safe_file_name(weakness_id)}.feature"


def _scenario(assistant: str, dialogue: Dialogue) -> Conversation:
    turns = [Turn(question=one_line(t.user), answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC) for t in dialogue.turns if t.user.strip()]
    title = scenario_title(dialogue)
    tags = [JUDGED_AS_A_WHOLE, "@probe", f"@assistant:{safe_file_name(assistant)}", f"@round:{dialogue.round}"]
    return Conversation(id=safe_file_name(dialogue.id), title=title, turns=turns, tags=tags)


def weakness_document(weakness: Weakness, rubric: Rubric, failures: Sequence[tuple[str, Dialogue]]) -> FeatureDocument:
    """The .feature file of one weakness's failing dialogues (assistant name, dialogue)."""
    spec = Spec.create(
        f"Probe: {weakness.title}",
        [one_line(weakness.persona_hint or f"a user who probes: {weakness.title}")],
        ["the user talks to the assistant as the persona of each scenario"],
        [one_line(f"the assistant meets the criterion '{c.id}': {c.description}") for c in rubric.criteria],
    )
    rationale = [one_line(weakness.description), "Dialogues that scored below the failure threshold in `bddgen probe`, replayed turn by turn."]
    conversations = [_scenario(assistant, dialogue) for assistant, dialogue in failures]
    return FeatureDocument(spec=spec, rationale=rationale, tags=["@probe"], conversations=conversations)


def write_failures(threads: Sequence[Thread], rubric: Rubric, folder: Path) -> list[Path]:
    """One .feature file per weakness with a failed dialogue; rewritten as threads finish (a file a
    person edited is not overwritten: write_feature refuses it)."""
    written: list[Path] = []
    weaknesses = {t.weakness.id: t.weakness for t in threads}
    for weakness_id, weakness in weaknesses.items():
        failures = [(t.assistant, d) for t in threads if t.weakness.id == weakness_id for d in t.dialogues if is_failure(d)]
        if not failures:
            continue
        path = folder / feature_name(weakness_id)
        write_feature(path, weakness_document(weakness, rubric, failures))
        written.append(path)
    return written
