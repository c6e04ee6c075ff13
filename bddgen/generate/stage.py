"""The generate stage: the LM writes m candidate specs, one per call, checked and saved as it goes."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

import numpy as np
from pydantic import ValidationError

from bddgen.config import GenerateSettings
from bddgen.embed.base import Embedder
from bddgen.errors import InputError, LMOutputError, Problem
from bddgen.files import atomic_write
from bddgen.generate.checks import CleanDraft, Rejection, RejectionReason, check_novelty, check_text
from bddgen.generate.focus import Material, MaterialChooser, focus_kind
from bddgen.generate.grounding import CorpusView, check_concrete, check_corpus, check_focus, check_then_facts
from bddgen.generate.summary import CorpusSummary
from bddgen.generate.tasks import WRITE_SPEC, SpecDraft
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus, SystemDescription
from bddgen.retrieval.base import Retriever
from bddgen.specs import CandidateSet, Spec, slugify

STAGE = "generate"
MAX_TITLES_SHOWN = 40
MATERIAL_DRAWS = 10  # draws for material about a subject not tried yet (a corpus may have only one)
_INVALID_OUTPUT = Rejection(
    RejectionReason.INVALID_OUTPUT, "Your last reply was not one JSON object with title, given, when and then."
)


def load_candidates(path: Path) -> CandidateSet:
    """The candidates file, or an empty set when there is none yet."""
    if not path.exists():
        return CandidateSet()
    try:
        return CandidateSet.model_validate_json(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(Problem(str(path), "not UTF-8; fix it, or delete it to start over")) from exc
    except ValidationError as exc:
        problems = [
            Problem(f"{path}#/{'/'.join(str(part) for part in error['loc'])}", f"{error['msg']}; fix it, or delete the file to start over")
            for error in exc.errors()
        ]
        raise InputError(problems, title="invalid candidates file") from exc


def save_candidates(path: Path, candidates: CandidateSet) -> None:
    atomic_write(path, candidates.model_dump_json(indent=2) + "\n")


def _titles_shown(candidates: list[Spec], focus: str) -> str:
    """The titles the model must not repeat: all same-focus ones (up to the limit), then the most recent others."""
    same = [c.title for c in candidates if c.focus == focus]
    others = [c.title for c in candidates if c.focus != focus]
    shown = same[-MAX_TITLES_SHOWN:]
    room = MAX_TITLES_SHOWN - len(shown)
    shown = (others[-room:] if room else []) + shown
    return "\n".join(f"- {title}" for title in shown) or "(none yet)"


class _Generator:
    """Writes one accepted candidate at a time, counting every rejected draft by reason."""

    def __init__(
        self, system: SystemDescription, corpus: Corpus, lm: LanguageModel, embedder: Embedder, retriever: Retriever, settings: GenerateSettings,
        candidates: CandidateSet, out: Path, seed: int,
    ) -> None:
        self.summary = CorpusSummary.of(system, corpus)
        self.corpus = corpus
        self.lm, self.embedder, self.retriever, self.settings = lm, embedder, retriever, settings
        self.candidates, self.out, self.seed = candidates, out, seed
        self.chooser = MaterialChooser(corpus, system.off_limits, self.summary.names)
        self.view = CorpusView.of(corpus, self.summary.known_words)
        self.served = [focus for focus in settings.focuses if self.chooser.serves(focus_kind(focus))]
        if not self.served:
            raise InputError(
                Problem("[generate] focuses", "the corpus holds no table, policy or document for any focus; add documents to the corpus")
            )
        self.titles = {slugify(c.title) for c in candidates.candidates}
        self.assistant = slugify(self.summary.name)
        self.focuses = {slugify(focus) for focus in settings.focuses}
        existing = [c.as_text() for c in candidates.candidates]
        self.vectors = embedder.embed(existing) if existing else np.zeros((0, embedder.dimension), np.float32)

    def _ask(self, focus: str, titles: str, material: Material, feedback: dict[str, str]) -> SpecDraft:
        return self.lm.run(
            WRITE_SPEC, stage=STAGE, what_the_assistant_does=self.summary.purpose,
            what_it_can_do=self.summary.what_it_can_do, what_it_must_refuse=self.summary.what_it_must_refuse,
            tools=self.summary.tools, data=self.summary.data, titles_already_written=titles, focus=focus,
            subject=material.subject, material=material.text, **feedback,
        )

    def _judge(self, draft: SpecDraft, focus: str, material: Material) -> tuple[Spec, np.ndarray] | Rejection:
        """The spec and its embedding, or why the draft is rejected."""
        clean = CleanDraft.of(draft)
        rejection = (
            check_text(clean, self.titles, self.assistant, self.focuses, material.must_name)
            or check_concrete(clean, self.view)
            or check_focus(clean, material)
            or check_corpus(clean, material, self.retriever, self.view, self.settings.cover_top_k, self.settings.min_title_cover)
            or (check_then_facts(clean, self.corpus, self.retriever) if self.settings.check_then_facts else None)
        )
        if rejection is not None:
            return rejection
        spec = Spec.create(clean.title, clean.given, clean.when, clean.then, source="generated", focus=focus)
        vector = self.embedder.embed([spec.as_text()])[0]
        titles = [c.title for c in self.candidates.candidates]
        return check_novelty(vector, self.vectors, titles, self.settings.near_duplicate_threshold) or (spec, vector)

    def _other_material(self, focus: str, rng: random.Random, tried: set[str]) -> Material:
        """Material about a subject not tried yet for this candidate, when a few draws find one."""
        for _ in range(MATERIAL_DRAWS):
            material = self.chooser.choose(focus_kind(focus), rng)
            if material.subject not in tried:
                break
        return material

    def write_one(self) -> Spec | None:
        """Draft until one passes every check. When every draft of a focus is rejected, the focus is recorded as
        unserved (with why) and None is returned; LMOutputError when no focus is left to serve."""
        index = len(self.candidates.candidates)
        serving = [f for f in self.served if f not in self.candidates.unserved]
        if not serving:
            raise self._nothing_left()
        focus = serving[index % len(serving)]
        titles = _titles_shown(self.candidates.candidates, focus)
        feedback: dict[str, str] = {}
        # Code chooses the material once per candidate, so every retry is told how to fix the same draft.
        material = self.chooser.choose(focus_kind(focus), random.Random(f"{self.seed}:{index}"))
        repeated, tried = False, set()
        for attempt in range(self.settings.max_attempts_per_spec):
            if repeated or (attempt and attempt % self.settings.drafts_per_material == 0):
                # Other material after a few failed fixes, or when the same fix would be asked again
                # (the same prompt gets the same cached reply). Seeded by the drafts rejected so far,
                # so a rerun after a failure asks anew instead of replaying the cached rejected replies.
                rng = random.Random(f"{self.seed}:{index}:{sum(self.candidates.rejections.values())}")
                material, feedback = self._other_material(focus, rng, tried), {}
            tried.add(material.subject)
            try:
                draft = self._ask(focus, titles, material, feedback)
            except LMOutputError as exc:
                raw, outcome = exc.raw_text, _INVALID_OUTPUT
            else:
                raw, outcome = draft.model_dump_json(), self._judge(draft, focus, material)
            if not isinstance(outcome, Rejection):
                spec, vector = outcome
                self.vectors = np.vstack([self.vectors, vector[None, :]])
                self.titles.add(slugify(spec.title))
                return spec
            key = outcome.reason.value
            self.candidates.rejections[key] = self.candidates.rejections.get(key, 0) + 1
            repeated = feedback.get("problem_with_your_last_draft") == outcome.feedback
            feedback = {"problem_with_your_last_draft": outcome.feedback}
        self.candidates.unserved[focus] = (
            f"all {self.settings.max_attempts_per_spec} drafts of candidate {index + 1} were rejected, the last for "
            f"{outcome.reason.value}: {outcome.feedback} Last reply: {raw[:300]}"
        )
        save_candidates(self.out, self.candidates)
        return None

    def _nothing_left(self) -> LMOutputError:
        counts = ", ".join(f"{reason}: {count}" for reason, count in sorted(self.candidates.rejections.items()))
        unserved = "; ".join(f"{focus}: {why}" for focus, why in self.candidates.unserved.items())
        return LMOutputError(
            task=WRITE_SPEC.name,
            raw_text=unserved,
            reason=(
                f"no focus is left that drafts pass for: {unserved}. Rejections so far: {counts}. "
                f"The {len(self.candidates.candidates)} accepted candidates are saved in {self.out}; remove entries of "
                "'unserved' there to try those focuses again, or raise [generate] max_attempts_per_spec"
            ),
            attempts=self.settings.max_attempts_per_spec,
        )


def generate_candidates(
    system: SystemDescription,
    corpus: Corpus,
    lm: LanguageModel,
    embedder: Embedder,
    retriever: Retriever,
    settings: GenerateSettings,
    out: Path,
    seed: int,
    on_progress: Callable[[int, int], None] | None = None,
) -> CandidateSet:
    """Write candidates until `out` holds m of them, resuming from what `out` already holds.

    Each accepted candidate is saved at once (atomic write), so an interrupted run loses nothing.
    """
    candidates = load_candidates(out)
    candidates.target = settings.m
    generator = _Generator(system, corpus, lm, embedder, retriever, settings, candidates, out, seed)
    if on_progress is not None:
        on_progress(len(candidates.candidates), settings.m)
    while len(candidates.candidates) < settings.m:
        spec = generator.write_one()
        if spec is None:
            continue  # its focus is recorded as unserved; the next candidate takes another focus
        candidates.candidates.append(spec)
        save_candidates(out, candidates)
        if on_progress is not None:
            on_progress(len(candidates.candidates), settings.m)
    return candidates
