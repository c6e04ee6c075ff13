"""behave hooks of a bddgen project; the project's environment.py is `from bddgen.run.behave_environment import *`.

Under plain behave this module is where a run starts, so it opens the run on the composition root (`Models`) as
`bddgen run` does; the layers test places it with the entry points.

Settings come from bddgen.toml and behave userdata: `behave -D assistant=NAME -D jobs=4 -D limit=10
-D run_id=ID -D repeat=1 -D results_dir=runs`. `bddgen run` hands over its own prepared run instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bddgen.errors import ConfigError
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.run.behave_runner import RUNNER_SETTING, announced_features, announced_files
from bddgen.run.planning import conversation_id, feature_key, plan_features
from bddgen.run.scenario import unchecked_turns
from bddgen.run.suite import FailedStep, SuiteRun, active_suite, options_from_userdata

__all__ = ["before_all", "before_scenario", "after_scenario", "after_all"]


def before_all(context: Any) -> None:
    """Open the run (its folder, assistant, judge) and plan which conversations behave will run.
    `behave --dry-run` runs no step, so it opens no run."""
    if context.config.dry_run:
        return
    suite = active_suite()
    try:
        if suite is None:  # plain behave: the run starts here
            from bddgen.pipeline import Models, stages

            project = Project.discover(Path(context.config.base_dir), require_corpus=False)
            acquire_project_lock(project, "behave")
            tags = str(context.config.tag_expression) if context.config.tags else ""
            suite = stages.open_run(Models(project), options_from_userdata(project, context.config.userdata, tags), parsed=announced_files())
        context.bddgen = suite
        # behave has parsed every feature and applies its own selection (tags, names, file:line) to
        # the scenarios; its runner announces them all before this hook.
        features = announced_features()
        if features is None:
            raise ConfigError(f"behave runs without bddgen's runner: add `{RUNNER_SETTING}` under [behave] in behave.ini")
        plans = plan_features(features, context.config, suite.project.root, suite.options.limit, read=suite.parsed.document)
        suite.start(plans)
    except BaseException as exc:
        if suite is not None:
            suite.startup_error = exc
        raise


def before_scenario(context: Any, scenario: Any) -> None:
    """Attach the scenario's conversation, with the turns no Then step checks; scenarios that are no conversation are
    skipped."""
    suite: SuiteRun = context.bddgen
    run = suite.scenario(feature_key(scenario.filename, suite.project.root), conversation_id(scenario))
    if run is None:
        scenario.skip("not a conversation bddgen runs (a spec, or past --limit)")
        return
    scenario.continue_after_failed_step = True
    run.unchecked = unchecked_turns([step.name for step in scenario.steps])
    context.bddgen_scenario = run


def failed_steps(scenario: Any, root: Path) -> list[FailedStep]:
    """The steps of a scenario behave ran that did not pass, each with why: its exception's message (an assertion's
    expected and actual), or that no step definition matches it."""
    found = []
    for step in scenario.steps:
        if step.status.has_failed():
            exception = getattr(step, "exception", None)
            why = str(exception) if exception is not None else (step.error_message or "no step definition matches it")
            status = {"failed": "FAIL"}.get(step.status.name, step.status.name.upper())
            where = f"{feature_key(step.filename, root)}:{step.line}"
            found.append(FailedStep(where, scenario.name, f"{step.keyword} {step.name}", status, why.strip()))
    return found


def after_scenario(context: Any, scenario: Any) -> None:
    """Write the conversation's records once all of its turns are judged; note why when they are not. Keep the steps
    that did not pass for the run's summary."""
    run = getattr(context, "bddgen_scenario", None)
    if run is not None:
        context.bddgen.failed_steps += failed_steps(scenario, context.bddgen.project.root)
    if run is not None and not run.finish() and not context.aborted:
        reasons = [step.error_message for step in scenario.steps if step.error_message]
        reason = reasons[0].strip().splitlines()[-1] if reasons else "its steps did not all run"
        context.bddgen.unfinished.append(f"{scenario.filename}:{scenario.line}: {reason}")


def after_all(context: Any) -> None:
    suite: SuiteRun | None = getattr(context, "bddgen", None)
    if suite is not None and suite.startup_error is None:
        suite.summary = suite.finish(interrupted=bool(context.aborted))
