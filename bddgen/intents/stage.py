"""The intents stage on a project: where its files live and one function per step (partition, seed, search)."""

from __future__ import annotations

from datetime import date, datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from bddgen.manifest.workflow import WorkflowManifest, read_manifest
from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write
from bddgen.intents.files import read_model_yaml, write_yaml
from bddgen.intents.memory import StrategyMemory
from bddgen.intents.model import CellOutcome, IntentsReport, PartitionTable, SearchResult, SeedFile
from bddgen.intents.partition import build_partition, read_partition
from bddgen.intents.regression import write_regressions
from bddgen.intents.sample import sample_cells
from bddgen.intents.search import SearchContext, SearchSettings, run_search
from bddgen.intents.seeds import write_seeds
from bddgen.intents.surrogate import LikelihoodScorer
from bddgen.lm.client import LanguageModel
from bddgen.project import Project
from bddgen.evaluation.assistant import Assistant
from bddgen.evaluation.store import RunStore
from bddgen.results import RunMetadata, TurnResult
from bddgen.traces import ToolCall

FOLDER = "intents"
PARTITION_FILE = "partition.yaml"
SEEDS_FILE = "seeds.yaml"
SEARCH_FILE = "search.json"
MEMORY_FILE = "strategies.sqlite"
MANIFEST_FILE = "agents.yaml"


def intents_folder(project: Project) -> Path:
    return project.root / FOLDER


def memory_path(project: Project) -> Path:
    return project.state_path / FOLDER / MEMORY_FILE


def manifest_path(project: Project, given: Path | None) -> Path:
    """--manifest, else [intents] manifest, else agents.yaml in the corpus folder, then in the root."""
    if given is not None:
        return given
    configured = project.settings.intents.manifest
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else project.root / path
    for candidate in (project.corpus_path / MANIFEST_FILE, project.root / MANIFEST_FILE):
        if candidate.is_file():
            return candidate
    raise InputError(
        Problem(str(project.root), f"no workflow manifest: pass --manifest PATH, set [intents] manifest, or put {MANIFEST_FILE} in the corpus folder")
    )


def load_manifest(project: Project, given: Path | None) -> tuple[WorkflowManifest, Path]:
    path = manifest_path(project, given)
    return read_manifest(path), path


PARTITION_HEADER = """Partition table of the agent's tool parameters (bddgen intents partition).
Every parameter has classes under VALID (the agent should call the tool with the value), INVALID
(it should refuse or explain) and UNDERSPEC (it should ask). source: schema:<keyword> = derived from
the JSON Schema, lm = added by the LM, user = yours. Edit freely; `bddgen intents seed` reads this file."""


def partition_stage(project: Project, lm: LanguageModel | None, manifest: Path | None, out: Path | None, today: date) -> tuple[PartitionTable, Path]:
    """Derive the table (and the LM's classes when `lm` is given) and write it; returns it and its path."""
    loaded, path = load_manifest(project, manifest)
    table = build_partition(loaded, _relative(project, path), today, lm)
    target = out or intents_folder(project) / PARTITION_FILE
    write_yaml(target, table, PARTITION_HEADER)
    return table, target


def seed_stage(
    project: Project,
    lm: LanguageModel,
    manifest: Path | None,
    partition: Path | None,
    out: Path | None,
    tools: set[str] | None = None,
    per_intent: int | None = None,
) -> tuple[SeedFile, Path]:
    """A seed task per cell (of `tools` only, when given; `per_intent` cells of each intent drawn with
    the project's seed, when given, a dropped cell replaced by the next); written to `out` or intents/seeds.yaml."""
    loaded, _ = load_manifest(project, manifest)
    partition_file = partition or intents_folder(project) / PARTITION_FILE
    table = read_partition(partition_file)
    if tools:
        table = table.model_copy(update={"partitions": [p for p in table.partitions if p.tool in tools]})
    seeds = write_seeds(lm, loaded, table, _relative(project, partition_file), project.settings.intents.seed_attempts, per_intent, project.settings.seed)
    target = out or intents_folder(project) / SEEDS_FILE
    write_yaml(target, seeds, "Seed tasks, one per partition cell (bddgen intents seed). Edit a request freely; keep its values stated.")
    return seeds, target


def turn_results(run_id: str, outcome: CellOutcome) -> list[TurnResult]:
    """One cell's queries by one method as lines of the results log: the cell is the scenario, the cell and method the
    conversation, each query a turn with its verdict and its mutation strategy as trait."""
    cell = outcome.cell
    return [
        TurnResult(
            run_id=run_id, feature="", spec_id=cell.tool, scenario=cell.id, conversation_id=f"{cell.id}.{outcome.method}", turn=number,
            question=attempt.request, answer=attempt.answer, tool_calls=[ToolCall.model_validate(c) for c in attempt.tool_calls],
            verdict=attempt.verdict, feedback=attempt.feedback, error_category=attempt.error_category, checks=attempt.checks,
            traits=[attempt.strategy],
        )
        for number, attempt in enumerate(outcome.attempts, start=1)
    ]


def read_seeds(path: Path) -> SeedFile:
    return read_model_yaml(path, SeedFile, "seed file", "run `bddgen intents seed` first")


def search_stage(
    project: Project,
    manifest: Path | None,
    assistant: Assistant,
    lm: LanguageModel,
    judge: LanguageModel,
    scorer: LikelihoodScorer | None,
    settings: SearchSettings,
    methods: Sequence[str],
    on_outcome: Callable[[CellOutcome], None] | None = None,
    intents: set[str] | None = None,
    tools: set[str] | None = None,
    parameters: set[str] | None = None,
    per_intent: int | None = None,
) -> tuple[SearchResult, list[Path]]:
    """Search every seed task (of the `intents` categories, `tools` and `parameters`, all by default;
    `per_intent` of each intent drawn with the project's seed, when given) by each method; write
    search.json, the results log (intents/ is then a run directory: run.json, and results.jsonl with a `TurnResult` per
    agent query, in place of the last search's; `bddgen report intents` renders it) and the regression features."""
    loaded, _ = load_manifest(project, manifest)
    folder = intents_folder(project)
    table = read_partition(folder / PARTITION_FILE)
    seeds = read_seeds(folder / SEEDS_FILE)
    chosen = [
        t
        for t in seeds.tasks
        if (not intents or t.cell.intent.value in intents) and (not tools or t.cell.tool in tools) and (not parameters or t.cell.parameter in parameters)
    ]
    if per_intent:
        sampled = set(sample_cells([t.cell for t in chosen], per_intent, project.settings.seed))
        chosen = [t for t in chosen if t.cell in sampled]
    seeds = seeds.model_copy(update={"tasks": chosen})
    store = RunStore(folder)
    store.results_path.unlink(missing_ok=True)  # the log holds this search only, as search.json does
    started = datetime.now(timezone.utc)
    run_id = "intents-" + started.strftime("%Y%m%dT%H%M%SZ")
    store.write_metadata(RunMetadata(run_id=run_id, assistant=assistant.name, assistant_kind="", started=started.isoformat(timespec="seconds")))

    def logged(outcome: CellOutcome) -> None:
        store.append(turn_results(run_id, outcome))
        if on_outcome is not None:
            on_outcome(outcome)

    memory = StrategyMemory(memory_path(project))
    try:
        ctx = SearchContext(loaded, table, assistant, lm, judge, scorer, memory, settings)
        result = run_search(ctx, seeds, methods, logged)
    finally:
        memory.close()
    atomic_write(folder / SEARCH_FILE, result.model_dump_json(indent=1) + "\n")
    written = write_regressions(table, result.outcomes, project.features_path)
    return result, written


def read_search(project: Project) -> SearchResult:
    path = intents_folder(project) / SEARCH_FILE
    if not path.is_file():
        raise InputError(Problem(str(path), "no search results; run `bddgen intents search` first"))
    return SearchResult.model_validate_json(path.read_text(encoding="utf-8"))


def intents_report(project: Project) -> IntentsReport | None:
    """The partition table and the last search, when the project has both (for `bddgen report`)."""
    folder = intents_folder(project)
    if not (folder / SEARCH_FILE).is_file() or not (folder / PARTITION_FILE).is_file():
        return None
    return IntentsReport(partition=read_partition(folder / PARTITION_FILE), search=read_search(project))


def _relative(project: Project, path: Path) -> str:
    try:
        return path.resolve().relative_to(project.root.resolve()).as_posix()
    except ValueError:
        return str(path)
