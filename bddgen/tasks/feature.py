"""Outcome-verified tasks as Gherkin scenarios, written so that `@locked` scenarios survive regeneration.

One file holds the spec (a Rule with Given/When/Then lines) and one scenario per task: the cited
policy sentences as comments, the instruction as a docstring, the user's facts as a table, the
conversation step, and the expected outcome as outcome steps. A scenario a person tagged `@locked`
is carried over word for word, and no new task takes its id.
"""

from __future__ import annotations

from pathlib import Path

from bddgen.agents.state import DIFF_HEADER, DiffRow
from bddgen.errors import InputError, Problem
from bddgen.features.reader import parse_gherkin
from bddgen.features.vocabulary import quote
from bddgen.features.writer import HEADER_PREFIX, body_hash, is_edited
from bddgen.files import atomic_write
from bddgen.tasks.model import OutcomeTask

SPEC_ID = "outcome-tasks"
TASK_TAG = "@task"
TASK_ID_TAG = "@task-"
LOCKED_TAG = "@locked"
FEATURE_TITLE = "Outcome-verified tasks"
PREAMBLE = (
    f"@spec @generated @tasks\nFeature: {FEATURE_TITLE}\n"
    "  Each scenario is a task chosen by code: a simulated user with an instruction, and the database end state\n"
    "  the tools reach when they do what the user wants within the policies (computed on a scratch copy).\n\n"
    f"  Rule: {FEATURE_TITLE}\n"
    "    Given a customer who wants a booking changed, cancelled or a bag added\n"
    "    When the customer talks with the assistant\n"
    "    Then the database ends exactly as the tools and the policies say\n"
)


def table_cell(text: str) -> str:
    """Text safe in a Gherkin table cell: backslash, pipe and newline escaped."""
    return quote(text).replace("\\", "\\\\").replace("|", "\\|")


def _table(rows: list[tuple[str, ...]], indent: str) -> list[str]:
    cells = [[table_cell(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(cells[0]))]
    return [indent + "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in cells]


def _docstring(text: str, indent: str) -> list[str]:
    body = [indent + line.strip() for line in text.replace('"""', "'''").splitlines() if line.strip()]
    return [indent + '"""', *body, indent + '"""']


def outcome_steps(task: OutcomeTask) -> list[str]:
    """The Then steps: the exact diff (or unchanged), and a refusal when an action is forbidden."""
    lines: list[str] = []
    if task.expected_diff:
        lines.append("      Then the database should differ from the start exactly by:")
        lines += _table([DIFF_HEADER, *(row.cells() for row in task.expected_diff)], "        ")
    else:
        lines.append("      Then the database should be unchanged")
    if task.decision == "forbidden":
        lines.append("      And the assistant should refuse")
    return lines


def scenario_lines(task: OutcomeTask) -> list[str]:
    tags = [TASK_TAG, f"{TASK_ID_TAG}{task.id}", f"@policy-{task.decision}"] + (["@compound"] if task.compound else [])
    lines = ["", f"    {' '.join(tags)}", f"    Scenario: {quote(task.title)}"]
    for action in task.actions:
        if action.evidence is not None:
            lines.append(f"      # Policy ({action.evidence.file}): \"{quote(action.evidence.sentence)}\"")
    lines.append("      Given the user's instruction:")
    lines += _docstring(task.instruction, "        ")
    lines.append("      And the user knows:")
    lines += _table([("fact", "value"), *((f.name, f.value) for f in task.facts)], "        ")
    lines.append(f"      When the simulated user talks with the assistant for at most {task.max_turns} turns")
    return lines + outcome_steps(task)


def locked_scenarios(text: str, source: str) -> dict[str, str]:
    """task id -> the scenario's text, word for word, for every `@locked` task scenario of a file."""
    ast = parse_gherkin(text, source)
    lines = text.split("\n")
    scenarios = []
    for child in (ast.get("feature") or {}).get("children", []):
        for inner in child["rule"].get("children", []) if "rule" in child else [child]:
            if "scenario" in inner:
                scenarios.append(inner["scenario"])
    starts = [min([t["location"]["line"] for t in s.get("tags", [])] + [s["location"]["line"]]) for s in scenarios]
    kept: dict[str, str] = {}
    for number, scenario in enumerate(scenarios):
        tags = [t["name"] for t in scenario.get("tags", [])]
        task_id = next((t[len(TASK_ID_TAG):] for t in tags if t.startswith(TASK_ID_TAG)), None)
        if LOCKED_TAG not in tags or task_id is None:
            continue
        end = starts[number + 1] - 1 if number + 1 < len(starts) else len(lines)
        kept[task_id] = "\n".join(lines[starts[number] - 1 : end]).rstrip()
    return kept


def read_locked(path: Path, *, force: bool) -> dict[str, str]:
    """The locked scenarios of the file at `path` ({} when there is none).

    A file a person edited without locking any scenario is refused unless `force` (its edits would be lost)."""
    if not path.is_file():
        return {}
    text = path.read_text(encoding="utf-8")
    kept = locked_scenarios(text, str(path))
    if is_edited(text) and not kept and not force:
        raise InputError(
            Problem(str(path), "edited by a person since bddgen wrote it, with no @locked scenario; tag the scenarios to keep "
                    "with @locked, or use --force to replace the file"),
            title="refusing to overwrite",
        )
    return kept


def render_tasks(tasks: list[OutcomeTask], locked: dict[str, str]) -> str:
    """The whole file: header, spec, the locked scenarios as they were, then the new tasks."""
    body_lines = [PREAMBLE.rstrip("\n")]
    for text in locked.values():
        body_lines += ["", text]
    for task in tasks:
        if task.id not in locked:
            body_lines += scenario_lines(task)
    body = "\n".join(body_lines) + "\n"
    return f"{HEADER_PREFIX} spec={SPEC_ID} source=generated hash={body_hash(body)}\n{body}"


def write_tasks(path: Path, tasks: list[OutcomeTask], locked: dict[str, str]) -> None:
    atomic_write(path, render_tasks(tasks, locked))


def diff_rows_text(rows: list[DiffRow]) -> str:
    """The expected diff as one line per change (for messages and the benchmark's table)."""
    return "; ".join(f"{r.table} {r.key} {r.column}: {r.before!r} -> {r.after!r}" for r in rows) or "unchanged"
