"""`bddgen manifest validate`: check the workflow manifest of a tool-using assistant."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.agents.manifest import read_manifest, unreachable_agents
from bddgen.console import console


@click.group()
def manifest() -> None:
    """Check a workflow manifest (agents, tools, permissions, handoffs)."""


@manifest.command()
@click.argument("path", type=click.Path(path_type=Path), metavar="PATH")
def validate(path: Path) -> None:
    """Check the manifest at PATH: list every problem (exit 2) or print a summary (exit 0)."""
    loaded = read_manifest(path)
    for agent in unreachable_agents(loaded):
        console.print(
            f"warning: {path}: agent {agent!r} is not reachable from the entry agent {loaded.entry!r}; "
            "add a delegation to it or remove it",
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"ok: {path}: {len(loaded.agents)} agents, {len(loaded.tools)} tools, {len(loaded.allowed)} allowed and "
        f"{len(loaded.restricted)} restricted tool edges, {len(loaded.delegations)} delegations; entry {loaded.entry!r}",
        markup=False,
        soft_wrap=True,
    )
