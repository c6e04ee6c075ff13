"""`bddgen lm`: one call through the configured LM (`ask`), the call log (`log`, `show`);
`bddgen costs`: what the calls cost."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import click
import jsonschema
from rich.table import Table

from bddgen.console import VisibleConsole, console, visible
from bddgen.errors import InputError, Problem
from bddgen.lm.base import Message
from bddgen.lm.records import LoggedCall, Usage
from bddgen.lm.store import CallStore
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.report.calls import conversation_calls
from bddgen.report.costs import usage_costs


def load_schema(path: Path) -> dict[str, Any]:
    """A JSON Schema file, with problems named by file:line or file#/pointer."""
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(
            Problem(f"{path}:{exc.lineno}", f"not valid JSON: {exc.msg}"), title="invalid schema file"
        ) from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(Problem(str(path), f"cannot read it: {exc}"), title="invalid schema file") from exc
    if not isinstance(schema, dict):
        raise InputError(Problem(str(path), "a JSON Schema must be a JSON object"), title="invalid schema file")
    try:
        jsonschema.validators.validator_for(schema).check_schema(schema)
    except jsonschema.SchemaError as exc:
        pointer = "/".join(str(part) for part in exc.absolute_path)
        raise InputError(Problem(f"{path}#/{pointer}", exc.message), title="invalid schema file") from exc
    return schema


def _messages(prompt: str, system: str | None, schema: dict[str, Any] | None) -> list[Message]:
    parts = [system.strip()] if system else []
    if schema is not None:
        parts.append(f"Reply with one JSON object only that matches this JSON Schema:\n{json.dumps(schema)}")
    head = [Message("system", "\n\n".join(parts))] if parts else []
    return [*head, Message("user", prompt)]


class _AskByDefault(click.Group):
    """A group whose first argument, when it names no subcommand, is the prompt of `ask`."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] in self.commands:
            return super().resolve_command(ctx, args)
        return "ask", self.commands["ask"], args


@click.group(cls=_AskByDefault, context_settings={"ignore_unknown_options": True})
def lm() -> None:
    """One call through the configured LM, and the log of every call.

    \b
    bddgen lm ask PROMPT      send a prompt (`bddgen lm PROMPT` is short for it)
    bddgen lm log             list the logged calls
    bddgen lm show HASH       print one call's prompt, schema and reply
    """


@lm.command()
@click.argument("prompt")
@click.option(
    "--schema",
    "schema_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="JSON Schema file the reply must match; prints the reply as pretty JSON.",
)
@click.option("--system", default=None, help="System message sent before the prompt.")
@click.option(
    "--temperature",
    type=click.FloatRange(0.0, 2.0),
    default=None,
    help="Sampling temperature (default: [lm] temperature).",
)
def ask(prompt: str, schema_file: Path | None, system: str | None, temperature: float | None) -> None:
    """Send PROMPT to the configured LM ([lm] in bddgen.toml) and print the reply.

    The call is cached and logged like every pipeline call (see `bddgen lm log`
    and `bddgen costs`). `bddgen lm PROMPT` is short for `bddgen lm ask PROMPT`.

    \b
    Choosing the model, in bddgen.toml or the environment:
      [lm] model = "qwen2.5-coder-1.5b"   embedded default (offline)
      [lm] model = "qwen2.5-coder-0.5b"   embedded, faster, weaker
      [lm] model = "/path/to/model.gguf"  any local GGUF chat model
      [lm] backend = "openai", base_url, model, api_key_env
                                          any OpenAI-compatible endpoint
      BDDGEN_LM__BACKEND=openai BDDGEN_LM__MODEL=gpt-4o-mini  (same, per shell)
    """
    schema = load_schema(schema_file) if schema_file else None
    language_model = Models(Project.discover(require_corpus=False)).lm
    started = time.perf_counter()
    response = language_model.complete(_messages(prompt, system, schema), schema, temperature=temperature)
    elapsed = time.perf_counter() - started
    click.echo(json.dumps(response.data, indent=2, ensure_ascii=False) if schema is not None else visible(response.text))
    note = (
        f"{response.model} · {response.usage.prompt_tokens} prompt + {response.usage.completion_tokens} completion tokens"
        f" · {elapsed:.1f}s{' (cache hit)' if response.cached else ''}"
    )
    VisibleConsole(stderr=True, highlight=False).print(note, style="dim", markup=False, soft_wrap=True)




def _open_log(project: Project) -> CallStore | None:
    """The project's call log, or None when no LM call was made yet (no file is created)."""
    return CallStore(project.lm_db) if project.lm_db.is_file() else None


def _conversation_hashes(project: Project, conversation: str) -> list[str]:
    """The prompt hashes the provenance files record for a conversation id (or spec-id/conversation-id)."""
    found = [
        call.prompt_hash
        for call in conversation_calls(project.features_path)
        if conversation in (call.conversation_id, f"{call.spec_id}/{call.conversation_id}")
    ]
    if not found:
        raise InputError(
            Problem(
                conversation,
                f"no provenance file under {project.features_path} records this conversation;"
                " the ids are in the features' *.provenance.json files (run `bddgen implement` to write them)",
            ),
            title="unknown conversation",
        )
    return found


def _log_row(call: LoggedCall) -> dict[str, Any]:
    row = call.model_dump(exclude={"messages", "json_schema", "reply"})
    return {**row, "latency": round(call.latency, 3), "prompt_known": call.prompt_hash is not None}


@lm.command("log")
@click.option("--stage", default=None, help="Only calls of this stage (generate, implement, run ...).")
@click.option("--task", default=None, help="Only calls of this task (e.g. write_conversation).")
@click.option("--conversation", default=None, help="Only the calls that wrote this conversation (id from its provenance file).")
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True, help="The newest N calls.")
@click.option("--json", "as_json", is_flag=True, help='Print {"calls": [...]} as JSON (newest first).')
def log(stage: str | None, task: str | None, conversation: str | None, limit: int, as_json: bool) -> None:
    """List logged LM calls, newest first: time, stage, task, model, tokens, latency, cache hit, prompt hash.

    Open one with `bddgen lm show HASH`.
    """
    project = Project.discover(require_corpus=False)
    hashes = _conversation_hashes(project, conversation) if conversation else None
    store = _open_log(project)
    calls: list[LoggedCall] = []
    if store is not None:
        try:
            calls = store.calls(stage=stage, task=task, prompt_hashes=hashes, limit=limit)
        finally:
            store.close()
    if as_json:
        click.echo(json.dumps({"calls": [_log_row(call) for call in calls]}, indent=2, ensure_ascii=False))
        return
    if not calls:
        console.print(f"no LM calls logged in {project.lm_db} match", markup=False, soft_wrap=True)
        return
    table = Table(title=f"LM calls ({project.lm_db}, newest first)")
    for column in ("time", "stage", "task", "model"):
        table.add_column(column)
    for column in ("prompt tokens", "completion tokens", "latency s"):
        table.add_column(column, justify="right")
    table.add_column("cache")
    table.add_column("prompt hash")
    for call in calls:
        table.add_row(
            call.time.replace("+00:00", "Z"),
            call.stage,
            call.task,
            call.model,
            f"{call.prompt_tokens:,}",
            f"{call.completion_tokens:,}",
            f"{call.latency:.2f}",
            "hit" if call.cache_hit else ("failed" if call.failed else ""),
            call.prompt_hash or "-",
        )
    console.print(table)
    unknown = sum(call.prompt_hash is None for call in calls)
    if unknown:
        console.print(
            f"{unknown} call(s) without a hash were logged before bddgen stored prompts: their counts are kept, their prompt and reply are unknown.",
            markup=False,
            soft_wrap=True,
        )


def _call_line(call: LoggedCall) -> str:
    status = "failed after retries" if call.failed else ("cache hit" if call.cache_hit else "")
    parameters = ", ".join(f"{k}={v}" for k, v in sorted(call.parameters.items()))
    return (
        f"  call {call.id} · {call.time} · {call.stage}/{call.task} · {call.model} · {parameters}"
        f" · {call.prompt_tokens}+{call.completion_tokens} tokens · {call.latency:.2f}s"
        + (f" · {call.retries} retries" if call.retries else "")
        + (f" · {status}" if status else "")
    )


def _show_text(calls: list[LoggedCall]) -> str:
    """The prompt and schema once, every call of it, then each distinct reply with the calls that got it."""
    latest = calls[0]
    lines = [f"prompt {latest.prompt_hash} · {len(calls)} call(s)", ""]
    for message in latest.messages or []:
        lines += [f"── {message.role} ──", message.content, ""]
    if latest.json_schema is not None:
        lines += [f"── schema {latest.schema_hash} ──", json.dumps(latest.json_schema, indent=2, ensure_ascii=False), ""]
    lines += ["── calls (newest first) ──", *(_call_line(call) for call in calls), ""]
    replies: dict[str | None, list[int]] = {}
    for call in calls:
        replies.setdefault(call.reply, []).append(call.id)
    for reply, ids in replies.items():
        lines += [f"── reply of call {', '.join(map(str, ids))} ──", reply if reply is not None else "(reply not recorded)", ""]
    return "\n".join(lines).rstrip() + "\n"


@lm.command("show")
@click.argument("prompt_hash", metavar="HASH")
@click.option("--json", "as_json", is_flag=True, help="Print the calls of this prompt (messages, schema, reply) as JSON.")
def show(prompt_hash: str, as_json: bool) -> None:
    """Print the prompt messages, JSON schema and reply of the call(s) with prompt hash HASH.

    HASH is what `bddgen lm log` lists and what provenance files record as prompt_hash;
    a unique prefix is enough.
    """
    project = Project.discover(require_corpus=False)
    store = _open_log(project)
    if store is None:
        raise InputError(Problem(str(project.lm_db), "no LM call was logged in this project yet"), title="no call log")
    try:
        calls = store.prompt_calls(store.resolve_prompt(prompt_hash))
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps({"calls": [call.model_dump(mode="json") for call in calls]}, indent=2, ensure_ascii=False))
        return
    click.echo(visible(_show_text(calls)), nl=False)


@click.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"rows": [...], "totals": {...}} as JSON.')
def costs(as_json: bool) -> None:
    """LM calls, cache hits, tokens, retries, failures, replies cut at the token limit and seconds per stage and task."""
    project = Project.discover(require_corpus=False)
    rows = usage_costs(project.lm_db)
    totals = Usage.total(rows)
    if as_json:
        rounded = [{**item.model_dump(), "seconds": round(item.seconds, 3)} for item in (*rows, totals)]
        click.echo(json.dumps({"rows": rounded[:-1], "totals": rounded[-1]}, indent=2))
        return
    if not rows:
        console.print(f"no LM calls logged yet in {project.lm_db}", markup=False, soft_wrap=True)
        return
    table = Table(title=f"LM usage ({project.lm_db})")
    for column in ("stage", "task"):
        table.add_column(column)
    show_cut = totals.truncated > 0  # replies cut at the token limit: a column only when there were any
    counts = ["calls", "cache hits", "prompt tokens", "completion tokens", "retries", "failures"] + (["cut at limit"] * show_cut)
    for column in (*counts, "seconds", "s/call"):
        table.add_column(column, justify="right")

    def cells(item: Usage) -> list[str]:
        per_call = item.seconds / item.calls if item.calls else 0.0
        numbers = [item.calls, item.cache_hits, item.prompt_tokens, item.completion_tokens, item.retries, item.failures]
        return [f"{n:,}" for n in numbers + [item.truncated] * show_cut] + [f"{item.seconds:.1f}", f"{per_call:.2f}"]

    for row in rows:
        table.add_row(row.stage, row.task, *cells(row))
    table.add_section()
    table.add_row("total", "", *cells(totals), style="bold")
    console.print(table)
