"""The tasks stage on a project: read the manifest and corpus, keep the locked scenarios, write the
scenarios and their provenance (`features/tasks/tasks.feature` and `tasks.json`); and add outcome tasks to the specs
`bddgen implement` read as an agent's action."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from bddgen.manifest.workflow import WorkflowManifest, read_manifest
from bddgen.manifest.project import manifest_path
from bddgen.corpus import load_corpus
from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write, read_json_file
from bddgen.lm.client import LanguageModel
from bddgen.project import Project
from bddgen.features.reader import read_feature
from bddgen.features.writer import write_feature
from bddgen.implement.provenance import provenance_path, read_provenance
from bddgen.tasks.feature import read_locked, task_conversation, write_tasks
from bddgen.tasks.for_spec import spec_tasks
from bddgen.tasks.generate import generate_tasks
from bddgen.tasks.model import DroppedTask, TaskFile
from bddgen.tasks.world import AgentWorld

FOLDER = "tasks"
FEATURE_FILE = "tasks.feature"
SIDECAR_FILE = "tasks.json"


def _manifest_location(project: Project) -> Path | None:
    """[tasks] manifest (relative to the project root), else the project's agents.yaml; None when there is none."""
    configured = project.settings.tasks.manifest
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else project.root / path
    return manifest_path(project)


def _manifest_file(project: Project) -> Path:
    found = _manifest_location(project)
    if found is None:
        raise InputError(
            Problem(str(project.root), "no workflow manifest: tasks are chosen from the tools of agents.yaml; add one to the "
                    "project root or the corpus folder, or set [tasks] manifest"),
            title="no manifest",
        )
    return found


def implementing(worlds: Sequence[AgentWorld], manifest: WorkflowManifest) -> AgentWorld:
    """The world that implements most tools of the manifest (the first of equals)."""
    return max(worlds, key=lambda world: sum(tool.name in world.tools for tool in manifest.tools))


def tasks_stage(
    project: Project, lm: LanguageModel, worlds: Sequence[AgentWorld], *, n: int, seed: int, force: bool = False
) -> tuple[TaskFile, Path]:
    """Generate `n` tasks into the project's features folder for the agent among `worlds` that implements the project's
    manifest; (their provenance, the feature file)."""
    location = _manifest_file(project)
    manifest = read_manifest(location)
    world = implementing(worlds, manifest)
    folder = project.features_path / FOLDER
    feature, sidecar = folder / FEATURE_FILE, folder / SIDECAR_FILE
    locked = read_locked(feature, force=force)
    earlier = read_json_file(sidecar, TaskFile, "tasks file", "delete it and run `bddgen tasks generate` again")
    locked_ids = frozenset(c.id for c in locked)
    kept = [task for task in (earlier.tasks if earlier else []) if task.id in locked_ids]
    corpus = load_corpus(project.corpus_path)
    tasks, dropped = generate_tasks(
        corpus, manifest, str(location), lm, project.settings.tasks, world=world, n=n, seed=seed, skip=locked_ids
    )
    relative = feature.relative_to(project.root).as_posix() if feature.is_relative_to(project.root) else str(feature)
    tasks = [task.model_copy(update={"file": relative}) for task in tasks]
    write_tasks(feature, tasks, locked)
    provenance = TaskFile(seed=seed, requested=n, tasks=kept + tasks, dropped=dropped)
    atomic_write(sidecar, provenance.model_dump_json(indent=2) + "\n")
    return provenance, feature


def action_spec_tasks(
    project: Project, lm: LanguageModel, worlds: Sequence[AgentWorld], features: Sequence[Path],
) -> dict[Path, tuple[list[str], list[DroppedTask]]]:
    """For each spec `bddgen implement` read as an agent's action (its provenance says so), up to `[tasks]
    per_action_spec` outcome tasks on the rows it names, added to its own .feature file; by file, the ids of the tasks
    it holds and the candidates dropped. Nothing when the project describes no agent with tools (no manifest, or no
    agent implements one of its tools)."""
    settings = project.settings.tasks
    location = _manifest_location(project)
    if not settings.per_action_spec or location is None or not location.is_file():
        return {}
    manifest = read_manifest(location)
    world = implementing(worlds, manifest)
    if not any(tool.name in world.tools for tool in manifest.tools):
        return {}
    corpus = load_corpus(project.corpus_path)
    added: dict[Path, tuple[list[str], list[DroppedTask]]] = {}
    for path in features:
        provenance = read_provenance(provenance_path(path))
        if provenance is None or provenance.reading is None or not provenance.reading.action:
            continue
        doc = read_feature(path)
        held = [c.id for c in doc.conversations if c.task is not None]
        if held:  # written by an earlier run (or kept by a reviewer): not made again
            added[path] = (held, [])
            continue
        tasks, dropped = spec_tasks(corpus, manifest, str(location), lm, settings, world=world, spec=doc.spec, n=settings.per_action_spec)
        relative = path.relative_to(project.root).as_posix() if path.is_relative_to(project.root) else str(path)
        doc.conversations += [task_conversation(task.model_copy(update={"file": relative})) for task in tasks]
        if tasks:
            write_feature(path, doc, allow_edited=True)
        added[path] = ([task.id for task in tasks], dropped)
    return added
