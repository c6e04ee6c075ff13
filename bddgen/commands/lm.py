"""`bddgen lm PROMPT`: one call through the configured LM; `bddgen costs`: what the calls cost."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import click
import jsonschema
from rich.console import Console
from rich.table import Table

from bddgen.console import console
from bddgen.errors import InputError, Problem
from bddgen.lm.base import Message
from bddgen.lm.factory import build_language_model
from bddgen.lm.store import CallStore, UsageRow
from bddgen.project import Project


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


@click.command()
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
def lm(prompt: str, schema_file: Path | None, system: str | None, temperature: float | None) -> None:
    """Send PROMPT to the configured LM ([lm] in bddgen.toml) and print the reply.

    The call is cached and logged like every pipeline call (see `bddgen costs`).

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
    language_model = build_language_model(Project.discover(require_corpus=False))
    started = time.perf_counter()
    response = language_model.complete(_messages(prompt, system, schema), schema, temperature=temperature)
    elapsed = time.perf_counter() - started
    click.echo(json.dumps(response.data, indent=2, ensure_ascii=False) if schema is not None else response.text)
    note = (
        f"{response.model} · {response.usage.prompt_tokens} prompt + {response.usage.completion_tokens} completion tokens"
        f" · {elapsed:.1f}s{' (cache hit)' if response.cached else ''}"
    )
    Console(stderr=True, highlight=False).print(note, style="dim", markup=False, soft_wrap=True)


@dataclass(frozen=True)
class UsageTotals:
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    retries: int
    failures: int
    latency: float
    truncated: int


def usage_totals(rows: list[UsageRow]) -> UsageTotals:
    return UsageTotals(
        calls=sum(r.calls for r in rows),
        cache_hits=sum(r.cache_hits for r in rows),
        prompt_tokens=sum(r.prompt_tokens for r in rows),
        completion_tokens=sum(r.completion_tokens for r in rows),
        retries=sum(r.retries for r in rows),
        failures=sum(r.failures for r in rows),
        latency=sum(r.latency for r in rows),
        truncated=sum(r.truncated or 0 for r in rows),
    )


def _usage_rows(db: Path) -> list[UsageRow]:
    if not db.is_file():
        return []
    store = CallStore(db)
    try:
        return store.usage()
    finally:
        store.close()


@click.command()
@click.option("--json", "as_json", is_flag=True, help='Print {"rows": [...], "totals": {...}} as JSON.')
def costs(as_json: bool) -> None:
    """LM calls, cache hits, tokens, retries, failures, latency and replies cut at the token limit per stage and task."""
    project = Project.discover(require_corpus=False)
    rows = _usage_rows(project.lm_db)
    totals = usage_totals(rows)
    if as_json:
        rounded = [{**asdict(item), "latency": round(item.latency, 3)} for item in (*rows, totals)]
        click.echo(json.dumps({"rows": rounded[:-1], "totals": rounded[-1]}, indent=2))
        return
    if not rows:
        console.print(f"no LM calls logged yet in {project.lm_db}", markup=False, soft_wrap=True)
        return
    table = Table(title=f"LM usage ({project.lm_db})")
    for column in ("stage", "task"):
        table.add_column(column)
    for column in (
        "calls",
        "cache hits",
        "prompt tokens",
        "completion tokens",
        "retries",
        "failures",
        "cut at limit",
        "latency s",
        "s/call",
    ):
        table.add_column(column, justify="right")

    def cells(item: UsageRow | UsageTotals) -> list[str]:
        per_call = item.latency / item.calls if item.calls else 0.0
        numbers = (item.calls, item.cache_hits, item.prompt_tokens, item.completion_tokens, item.retries, item.failures, item.truncated or 0)
        return [f"{n:,}" for n in numbers] + [f"{item.latency:.1f}", f"{per_call:.2f}"]

    for row in rows:
        table.add_row(row.stage, row.task, *cells(row))
    table.add_section()
    table.add_row("total", "", *cells(totals), style="bold")
    console.print(table)
