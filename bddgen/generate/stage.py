"""The generate stage: the LM writes m candidate specs, one per call, `[generate] jobs` at a time, checked and saved as it goes."""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from pydantic import ValidationError

from bddgen.config import GenerateSettings
from bddgen.embed.base import Embedder
from bddgen.errors import InputError, LMOutputError, Problem
from bddgen.files import atomic_write
from bddgen.generate.checks import CleanDraft, Rejection, RejectionReason, check_asks_something, check_novelty, check_text
from bddgen.generate.focus import Material, MaterialChooser, focus_kind
from bddgen.generate.grounding import CorpusView, check_concrete, check_corpus, check_focus, check_then_facts
from bddgen.generate.summary import CorpusSummary
from bddgen.generate.tasks import WRITE_SPEC, SpecDraft
from bddgen.lm.client import LanguageModel
from bddgen.lm.jobs import InOrder
from bddgen.models import Corpus, SystemDescription
from bddgen.retrieval.base import Retriever
from bddgen.specs import CandidateSet, Spec, slugify
from bddgen.table_keys import identifier_headers

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


def _titles_shown(candidates: Sequence[Spec], focus: str) -> str:
    """The titles the model must not repeat: all same-focus ones (up to the limit), then the most recent others."""
    same = [c.title for c in candidates if c.focus == focus]
    others = [c.title for c in candidates if c.focus != focus]
    shown = same[-MAX_TITLES_SHOWN:]
    room = MAX_TITLES_SHOWN - len(shown)
    shown = (others[-room:] if room else []) + shown
    return "\n".join(f"- {title}" for title in shown) or "(none yet)"


@dataclass(frozen=True)
class _Known:
    """What a draft is written against: the candidates kept before its window (their titles as slugs and their
    embeddings), the focuses given up on, and how many drafts were rejected so far."""

    candidates: tuple[Spec, ...]
    titles: frozenset[str]
    vectors: np.ndarray
    unserved: frozenset[str]
    rejected: int


@dataclass(frozen=True)
class _Drafted:
    """What one slot's drafts came to: a spec that passed every check (with its embedding), or why its focus was
    given up; and the reasons of the drafts rejected on the way, in order."""

    focus: str
    rejections: list[str]
    spec: Spec | None = None
    vector: np.ndarray | None = None
    unserved: str = ""


class _Generator:
    """Drafts one candidate per slot against what was kept before the slot's window, and keeps the slots' results in
    slot order, counting every rejected draft by reason."""

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
        self.identifiers = identifier_headers(corpus.tables)
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

    def known(self) -> _Known:
        """What is kept now; LMOutputError when no focus is left to serve."""
        if all(focus in self.candidates.unserved for focus in self.served):
            raise self._nothing_left()
        return _Known(
            tuple(self.candidates.candidates), frozenset(self.titles), self.vectors, frozenset(self.candidates.unserved),
            sum(self.candidates.rejections.values()),
        )

    def _ask(self, focus: str, titles: str, material: Material, feedback: dict[str, str]) -> SpecDraft:
        return self.lm.run(
            WRITE_SPEC, stage=STAGE, what_the_assistant_does=self.summary.purpose,
            what_it_can_do=self.summary.what_it_can_do, what_it_must_refuse=self.summary.what_it_must_refuse,
            tools=self.summary.tools, data=self.summary.data, titles_already_written=titles, focus=focus,
            subject=material.subject, material=material.text, **feedback,
        )

    def _judge(self, draft: SpecDraft, focus: str, material: Material, known: _Known) -> tuple[Spec, np.ndarray] | Rejection:
        """The spec and its embedding, or why the draft is rejected."""
        clean = CleanDraft.of(draft)
        rejection = (
            check_text(clean, known.titles, self.assistant, self.focuses, material.must_name)
            or check_asks_something(clean, self.identifiers)
            or check_concrete(clean, self.view)
            or check_focus(clean, material)
            or check_corpus(clean, material, self.retriever, self.view, self.settings.cover_top_k, self.settings.min_title_cover)
            or (check_then_facts(clean, self.corpus, self.retriever) if self.settings.check_then_facts else None)
        )
        if rejection is not None:
            return rejection
        spec = Spec.create(clean.title, clean.given, clean.when, clean.then, source="generated", focus=focus)
        vector = self.embedder.embed([spec.as_text()])[0]
        titles = [c.title for c in known.candidates]
        return check_novelty(vector, known.vectors, titles, self.settings.near_duplicate_threshold) or (spec, vector)

    def _other_material(self, focus: str, rng: random.Random, tried: set[str]) -> Material:
        """Material about a subject not tried yet for this candidate, when a few draws find one."""
        for _ in range(MATERIAL_DRAWS):
            material = self.chooser.choose(focus_kind(focus), rng)
            if material.subject not in tried:
                break
        return material

    def draft(self, slot: int, known: _Known) -> _Drafted:
        """Draft until one passes every check against `known`; when every draft is rejected, the slot's focus is given
        up (with why). Runs on a worker thread: it reads only `known` and what never changes."""
        serving = [f for f in self.served if f not in known.unserved]
        focus = serving[slot % len(serving)]
        titles = _titles_shown(known.candidates, focus)
        feedback: dict[str, str] = {}
        rejections: list[str] = []
        # Code chooses the material once per candidate, so every retry is told how to fix the same draft.
        material = self.chooser.choose(focus_kind(focus), random.Random(f"{self.seed}:{slot}"))
        repeated, tried = False, set()
        for attempt in range(self.settings.max_attempts_per_spec):
            if repeated or (attempt and attempt % self.settings.drafts_per_material == 0):
                # Other material after a few failed fixes, or when the same fix would be asked again
                # (the same prompt gets the same cached reply). Seeded by the drafts rejected so far,
                # so a rerun after a failure asks anew instead of replaying the cached rejected replies.
                rng = random.Random(f"{self.seed}:{slot}:{known.rejected + len(rejections)}")
                material, feedback = self._other_material(focus, rng, tried), {}
            tried.add(material.subject)
            try:
                draft = self._ask(focus, titles, material, feedback)
            except LMOutputError as exc:
                raw, outcome = exc.raw_text, _INVALID_OUTPUT
            else:
                raw, outcome = draft.model_dump_json(), self._judge(draft, focus, material, known)
            if not isinstance(outcome, Rejection):
                spec, vector = outcome
                return _Drafted(focus, rejections, spec, vector)
            rejections.append(outcome.reason.value)
            repeated = feedback.get("problem_with_your_last_draft") == outcome.feedback
            feedback = {"problem_with_your_last_draft": outcome.feedback}
        why = (
            f"all {self.settings.max_attempts_per_spec} drafts of candidate {slot + 1} were rejected, the last for "
            f"{outcome.reason.value}: {outcome.feedback} Last reply: {raw[:300]}"
        )
        return _Drafted(focus, rejections, unserved=why)

    def keep(self, drafted: _Drafted) -> None:
        """Count the slot's rejections and keep its spec, unless it repeats one kept within its window (checked
        here, in slot order); record a focus given up on. Saved at once."""
        reasons = list(drafted.rejections)
        if drafted.spec is not None and drafted.vector is not None:
            repeat = self._repeat(drafted.spec, drafted.vector)
            if repeat is None:
                self.candidates.candidates.append(drafted.spec)
                self.vectors = np.vstack([self.vectors, drafted.vector[None, :]])
                self.titles.add(slugify(drafted.spec.title))
            else:
                reasons.append(repeat.value)
        for key in reasons:
            self.candidates.rejections[key] = self.candidates.rejections.get(key, 0) + 1
        if drafted.unserved and drafted.focus not in self.candidates.unserved:
            self.candidates.unserved[drafted.focus] = drafted.unserved
        save_candidates(self.out, self.candidates)

    def _repeat(self, spec: Spec, vector: np.ndarray) -> RejectionReason | None:
        """Why `spec` repeats a kept candidate (its title, or nearly all of it), or None."""
        if slugify(spec.title) in self.titles:
            return RejectionReason.REPEATED_TITLE
        titles = [c.title for c in self.candidates.candidates]
        near = check_novelty(vector, self.vectors, titles, self.settings.near_duplicate_threshold)
        return near.reason if near is not None else None

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

    Slots (one candidate each, unless every draft of it is rejected or it repeats one kept within its window) are
    drafted `settings.jobs` at a time and kept in slot order; a slot is started once the one `settings.window` before
    it was kept, seeing what was kept then. So the candidates do not depend on the number of jobs. Each kept
    candidate is saved at once (atomic write), so an interrupted run loses nothing.
    """
    candidates = load_candidates(out)
    candidates.target = settings.m
    generator = _Generator(system, corpus, lm, embedder, retriever, settings, candidates, out, seed)

    def report() -> None:
        if on_progress is not None:
            on_progress(len(candidates.candidates), settings.m)

    report()
    slot = len(candidates.candidates)
    drafts: InOrder[_Drafted] = InOrder(settings.jobs, "bddgen-generate", halt=lm.activity.halted)
    with drafts:
        while len(candidates.candidates) < settings.m:
            known = generator.known()
            while len(drafts) < settings.window and len(candidates.candidates) + len(drafts) < settings.m:
                drafts.start(partial(generator.draft, slot, known))
                slot += 1
            generator.keep(drafts.take(on_wait=report))
            report()
    return candidates
