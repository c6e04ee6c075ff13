"""The data of a probe: the code graph, the interview, the weakness list, dialogues, judgements and threads."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.evaluation.rubric import RubricScores
from bddgen.results import Judgement


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CodeNode(_Strict):
    """One thing the static scan found in the assistant's source."""

    kind: Literal["agent", "tool", "prompt", "state"]
    name: str
    module: str
    line: int = Field(ge=1)
    parameters: list[str] = Field(default_factory=list, description="tool: its parameters (self and cls left out).")
    detail: str = Field(default="", description="prompt: the start of its text; state: what is read or written.")


class FunctionShape(_Strict):
    """The branches and exception handlers of one function or method."""

    name: str
    module: str
    line: int = Field(ge=1)
    branches: int = Field(ge=0, description="if / elif / conditional expressions / match cases.")
    handlers: list[str] = Field(default_factory=list, description="The exception types caught, one per handler ('' = bare except).")
    calls: list[str] = Field(default_factory=list, description="Names of the tools and agents it calls.")


class CodeGraph(_Strict):
    """What the planner reads of the assistant's code: its nodes and the functions' shapes, and call edges."""

    package: str
    modules: int = 0
    nodes: list[CodeNode] = Field(default_factory=list)
    functions: list[FunctionShape] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="Files that could not be parsed, with the reason.")

    def of_kind(self, kind: str) -> list[CodeNode]:
        return [n for n in self.nodes if n.kind == kind]


class InterviewAnswer(_Strict):
    """One question put to the developer, the answer and where it came from."""

    question_id: str
    question: str
    answer: str
    source: Literal["terminal", "file", "default"]
    novelty: float = Field(ge=0, le=1, description="Share of the answer's content words not heard before.")


class Interview(_Strict):
    answers: list[InterviewAnswer] = Field(default_factory=list)
    stopped_because: str = ""


class Evidence(_Strict):
    """Why a weakness is suspected: a known failure mode, a place in the code, an answer or a document."""

    kind: Literal["knowledge", "code", "interview", "corpus", "description"]
    text: str
    source: str = Field(default="", description="Citation, file:line, question id or document id.")


class Weakness(_Strict):
    """One hypothesis of where the assistant fails, ranked by the plan; the user may edit or drop it."""

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    rank: int = Field(ge=1)
    score: float = Field(description="How strongly the evidence points to it (higher first).")
    rationale: str = ""
    persona_hint: str = Field(default="", description="What kind of user would expose it.")
    evidence: list[Evidence] = Field(default_factory=list)


class WeaknessList(_Strict):
    """weaknesses.yaml: the ranked hypotheses `bddgen probe` tests; confirmed = accepted by the user."""

    assistant_description: str = ""
    confirmed: bool = False
    weaknesses: list[Weakness] = Field(default_factory=list)


class Persona(_Strict):
    """The simulated user of one dialogue: the traits code chose for the difficulty, and what the LM phrased."""

    name: str = Field(min_length=1)
    attitude: str = Field(min_length=1, description="Attitude and tone.")
    goal: str = Field(min_length=1)
    requirements: list[str] = Field(default_factory=list)
    traits: list[str] = Field(default_factory=list, description="Behaviours chosen by code for the difficulty.")
    opening: str = Field(min_length=1, description="The first request.")


class DialogueTurn(_Strict):
    user: str
    assistant: str
    error: str = Field(default="", description="Why the assistant gave no answer, when it failed.")


class Dialogue(_Strict):
    """One round of a thread: persona, transcript, verdict and scores at difficulty `difficulty`."""

    id: str
    round: int = Field(ge=1)
    difficulty: float = Field(ge=1, le=10)
    turn_limit: int = Field(ge=1)
    persona: Persona
    turns: list[DialogueTurn] = Field(default_factory=list)
    goal_met: bool = False
    judgement: Judgement = Field(description="The rubric judge's verdict: FAIL when the overall score is below [probe] failure_score.")
    scores: RubricScores = Field(description="The rubric judge's scores and observations behind the verdict.")
    seconds: float = 0.0


class Thread(_Strict):
    """The dialogues of one weakness against one assistant and the difficulty trajectory they produced."""

    assistant: str
    weakness: Weakness
    dialogues: list[Dialogue] = Field(default_factory=list)
    trajectory: list[float] = Field(default_factory=list, description="d_1, d_2, ...: the difficulty before each round and after the last.")
    finished: bool = False
    error: str = Field(default="", description="Why the thread stopped before its last round, when it did.")

    @property
    def key(self) -> str:
        return f"{self.assistant}/{self.weakness.id}"

    @property
    def final_difficulty(self) -> float:
        return self.trajectory[-1] if self.trajectory else 0.0


class ProbeState(_Strict):
    """probe/state.json: everything a probe has found so far; a run resumes from it."""

    code: CodeGraph | None = None
    interview: Interview | None = None
    threads: list[Thread] = Field(default_factory=list)
