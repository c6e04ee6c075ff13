"""Where a project keeps the workflow manifest of the assistant under test."""

from __future__ import annotations

from pathlib import Path

from bddgen.expectations import Permissions
from bddgen.manifest.workflow import WorkflowManifest, read_manifest
from bddgen.config import AssistantSettings
from bddgen.project import Project

MANIFEST_FILE = "agents.yaml"


def manifest_path(project: Project, settings: AssistantSettings | None = None) -> Path | None:
    """The assistant's `manifest` setting, else `agents.yaml` in the project root, else in the corpus
    folder; None when there is none (the assistant is not described as agents)."""
    if settings is not None and settings.manifest:
        path = Path(settings.manifest)
        return path if path.is_absolute() else project.root / path
    for folder in (project.root, project.corpus_path):
        if (folder / MANIFEST_FILE).is_file():
            return folder / MANIFEST_FILE
    return None


def project_manifest(project: Project, settings: AssistantSettings | None = None) -> WorkflowManifest | None:
    """The manifest `manifest_path` finds, read and checked (InputError on a bad one)."""
    path = manifest_path(project, settings)
    return read_manifest(path) if path is not None else None


def closed_world(manifest: WorkflowManifest | None) -> Permissions | None:
    """What a run checks every call and handoff against (None without a manifest: nothing is checked)."""
    return manifest.permissions() if manifest is not None else None
