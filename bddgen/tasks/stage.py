"""The tasks stage on a project: read the manifest and corpus, keep the locked scenarios, write the
scenarios and their provenance (`features/tasks/tasks.feature` and `tasks.json`)."""

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
from bddgen.tasks.feature import read_locked, write_tasks
from bddgen.tasks.generate import generate_tasks
from bddgen.tasks.model import TaskFile
from bddgen.tasks.world import AgentWorld

FOLDER = "tasks"
FEATURE_FILE = "tasks.feature"
SIDECAR_FILE = "tasks.json"


def _manifest_file(project: Project) -> Path:
    configured = project.settings.tasks.manifest
    if configured:
        path = Path(configured)
        return path if path.is_absolute() else project.root / path
    found = manifest_path(project)
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
