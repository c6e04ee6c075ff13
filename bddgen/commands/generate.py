"""`bddgen generate`: the LM writes candidate specs into specs/candidates.json."""

from __future__ import annotations

import click

from bddgen.console import console, progress_bar
from bddgen.generate import load_candidates
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock


@click.command()
@click.option("--m", "m", type=click.IntRange(min=1), default=None, help="Candidates to write [default: [generate] m, 300].")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Candidates drafted at once [default: [generate] jobs, 1].")
@click.option("--restart", is_flag=True, help="Discard the candidates already written and start over.")
def generate(m: int | None, jobs: int | None, restart: bool) -> None:
    """Write m candidate specs from the system description and a summary of the corpus.

    An interrupted run resumes: run the same command again and it continues up to m. With
    --jobs N, N drafts are written at once; the candidates are the same as with one.
    """
    section = {key: value for key, value in (("m", m), ("jobs", jobs)) if value is not None}
    project = Project.discover(overrides={"generate": section} if section else None)
    acquire_project_lock(project, "generate")
    out = project.candidates_file
    if restart:
        out.unlink(missing_ok=True)
    before = len(load_candidates(out).candidates)
    with progress_bar("writing candidate specs") as on_progress:
        result = stages.generate(Models(project), on_progress)
    rejected = sum(result.rejections.values())
    reasons = ", ".join(f"{reason} {count}" for reason, count in sorted(result.rejections.items(), key=lambda kv: -kv[1]))
    new = len(result.candidates) - before
    console.print(
        f"wrote {new} new candidate spec{'' if new == 1 else 's'} ({len(result.candidates)} in all) to {out}",
        markup=False, soft_wrap=True,
    )
    console.print(f"rejected drafts: {rejected}" + (f" ({reasons})" if reasons else ""), markup=False, soft_wrap=True)
    for focus, why in result.unserved.items():
        console.print(f"focus not served on this corpus: {focus}: {why}", style="yellow", markup=False, soft_wrap=True)
    console.print("next: `bddgen select` picks a diverse, covering subset", markup=False)
