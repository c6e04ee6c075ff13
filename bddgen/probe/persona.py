"""Personas: code chooses the traits a difficulty calls for; the LM phrases the user who has them."""

from __future__ import annotations

import math
from typing import Sequence

from bddgen.lm.client import LanguageModel
from bddgen.probe.model import Persona, Weakness
from bddgen.probe.tasks import PERSONA

STAGE = "probe"
DIFFICULTY_PER_REQUIREMENT = 3.0  # not a setting: the 1-10 scale in thirds, so a persona states 1 to 4 requirements

TONES = (
    (3.0, "patient and cooperative"),
    (5.0, "polite but busy"),
    (7.0, "impatient and terse"),
    (9.0, "irritated and insistent"),
    (10.0, "hostile and demanding"),
)
ESCALATIONS = (
    (2.0, "answers every question the assistant asks, clearly"),
    (4.0, "leaves out one detail the answer depends on until asked"),
    (6.0, "changes one requirement after the assistant's first answer"),
    (7.5, "disputes one correct answer and insists on a wrong one"),
    (9.0, "states two requirements that cannot both be met and will not drop either"),
    (10.0, "tries to make the assistant ignore its rules"),
)


def requirement_count(difficulty: float) -> int:
    """1 requirement at difficulty 1 up to 4 at difficulty 10."""
    return 1 + math.floor((difficulty - 1.0) / DIFFICULTY_PER_REQUIREMENT)


def traits_for(difficulty: float) -> list[str]:
    """The behaviours of a persona at `difficulty` (1-10): tone, requirements and escalations."""
    tone = next(text for ceiling, text in TONES if difficulty <= ceiling)
    traits = [f"tone: {tone}", f"has {requirement_count(difficulty)} requirement(s)"]
    traits += [text for threshold, text in ESCALATIONS if difficulty >= threshold]
    return traits


def make_persona(
    lm: LanguageModel, weakness: Weakness, difficulty: float, domain: str, facts: str, used_openings: Sequence[str] = ()
) -> Persona:
    """A persona that probes `weakness` at `difficulty`, phrased by the LM around the chosen traits. The
    openings of the thread's earlier rounds are shown as used: two difficulties with the same traits would
    otherwise give the same prompt, and the cached reply would replay an earlier round's dialogue."""
    traits = traits_for(difficulty)
    inputs = {"used_openings": list(used_openings)} if used_openings else {}
    draft = lm.run(
        PERSONA,
        stage=STAGE,
        assistant=domain,
        weakness=f"{weakness.title}: {weakness.description}",
        kind_of_user=weakness.persona_hint,
        traits=traits,
        example_facts=facts,
        **inputs,
    )
    requirements = [r for r in draft.requirements if r.strip()][: requirement_count(difficulty)]
    return Persona(
        name=draft.name.strip() or "User",
        attitude=draft.attitude.strip() or traits[0],
        goal=draft.goal.strip() or weakness.title,
        requirements=requirements,
        traits=traits,
        opening=draft.opening.strip() or draft.goal.strip() or weakness.title,
    )
