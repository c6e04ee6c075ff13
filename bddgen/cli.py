"""Command-line entry point: parses and dispatches; the work lives in the stage modules.

Commands load lazily so `bddgen --help` stays fast and a missing optional backend only
affects the command that needs it.
"""

from __future__ import annotations

import importlib
import sys

import click

from bddgen import __version__
from bddgen.console import VisibleConsole, console
from bddgen.errors import BddgenError

# command name -> "module:attribute" (a click.Command), in the order of the pipeline.
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("bddgen.commands.init:init", "Scaffold a project for your own assistant."),
    "corpus": ("bddgen.commands.corpus:corpus", "Validate a corpus or print its statistics."),
    "ingest": ("bddgen.commands.retrieval:ingest", "Build the retrieval index of a corpus."),
    "search": ("bddgen.commands.retrieval:search", "Search the retrieval index."),
    "lm": ("bddgen.commands.lm:lm", "One call through the configured LM (ask); the call log (log, show)."),
    "costs": ("bddgen.commands.lm:costs", "LM calls, tokens and cache hits per stage and task."),
    "generate": ("bddgen.commands.generate:generate", "Write candidate specs with the LM."),
    "select": ("bddgen.commands.select:select", "Select a diverse, covering subset of specs."),
    "validate": ("bddgen.commands.validate:validate", "Lint .feature files."),
    "implement": ("bddgen.commands.implement:implement", "Turn specs into grounded conversations."),
    "review": ("bddgen.commands.review:review", "Review the suite beside its evidence on a local page."),
    "run": ("bddgen.commands.run:run", "Run the suites against an assistant."),
    "judge": ("bddgen.commands.judge:judge", "Qualify the judge on answers of known verdict: made from your turns, or labelled by you (check, label)."),
    "report": ("bddgen.commands.report:report", "Failure-rate reports and run comparison."),
    "coverage": ("bddgen.commands.report:coverage", "Which documents and entities the suite covers."),
    "export": ("bddgen.commands.interop:export", "Conversations as a ragas, DeepEval, promptfoo or JSONL dataset."),
    "import": ("bddgen.commands.interop:import_", "ragas or DeepEval datasets as hand-written specs."),
    "manifest": ("bddgen.commands.manifest:manifest", "Check an agent workflow manifest; its structural coverage."),
    "tasks": ("bddgen.commands.tasks:tasks", "Outcome-verified agent tasks: expected end states computed by code (generate)."),
    "intents": ("bddgen.commands.intents:intents", "Find where a tool-using agent misreads users' intents (partition, seed, search, report)."),
    "probe": ("bddgen.commands.probe:probe", "Probe an assistant's likely weaknesses with adaptive personas; keep failures as tests."),
    "demo": ("bddgen.commands.demo:demo", "The whole pipeline offline on a shipped corpus."),
}


class LazyGroup(click.Group):
    """A group whose subcommands are imported only when used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module_name, attribute = COMMANDS[cmd_name][0].split(":")
        return getattr(importlib.import_module(module_name), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, help_text) for name, (_, help_text) in COMMANDS.items()])


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bddgen")
@click.option(
    "-q", "--quiet", is_flag=True,
    help="No progress output (progress bars, a line per item done); errors, warnings, summaries and 'wrote ...' lines still show.",
)
def cli(quiet: bool) -> None:
    """bddgen: behaviour-driven test suites for information-seeking AI assistants.

    Exit codes: 0 ok, 1 tests failed, 2 input, config or usage error.
    """
    console.shows_progress = not quiet


def main(argv: list[str] | None = None) -> None:
    """Console-script entry: turns bddgen errors into a message and an exit code."""
    console = VisibleConsole(stderr=True, soft_wrap=True)
    try:
        cli.main(args=argv, prog_name="bddgen", standalone_mode=False)
    except BddgenError as exc:
        console.print("error:", style="bold red", end=" ")
        console.print(str(exc), highlight=False, markup=False)
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        console.print("interrupted; what was finished is saved — run the same command again to continue")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except KeyboardInterrupt:
        console.print("interrupted; what was finished is saved — run the same command again to continue")
        sys.exit(130)
    sys.exit(0)


if __name__ == "__main__":  # pragma: no cover
    main()
