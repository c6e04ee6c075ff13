"""Validity of whole suites on the demo corpora and on real development corpora, measured by code.

The corpora: `sports` and `airline` (shipped in the package), and `tatqa`, `chinook` and `wikidialog` read from
the development corpora's folder (`--devsets`, each `<name>/corpus`; TAT-QA's human questions beside it in
`human_questions.jsonl`, HybriDialogue's in `wikidialog/human_turns.jsonl`).

For each corpus: a fresh project (`bddgen init --corpus`, the shipped example specs kept with their
conversations removed), `bddgen generate --m M`, `bddgen select --k K` and `bddgen implement --n N
--turns L` with the project's default models (the embedded 1.5B). Then, per corpus, from the files the
project holds (selection, `.feature` files, provenance, LM log):

- `selected`, `focuses`: the selected specs and their generation focuses;
- `near_duplicate_pairs`: pairs among the selected that share a template (names and numbers masked) or
  whose embeddings are closer than the project's `[select] near_duplicate_cosine`;
- `contradicting_specs`: selected specs with a Then fact (a number or a name) that the documents found
  for that line do not state (`bddgen.implement.spec_facts`);
- `on_spec_share`: conversations with at least one answerable turn whose evidence holds the spec's
  subject (a name the spec gives, else one of the documents its title and Then are about); for a spec that
  says the assistant must decline, conversations with an OFF-LIMITS turn;
- `every_name_share`, `one_sided`: of the conversations of specs that name two things or more (a comparison
  of two clubs), those whose answerable turns ask about every one of them, and the specs of the others;
- `max_copied_words`: the longest run of words any question shares with its own evidence;
- `glued_syntheses`: SYNTHESIS questions that are two questions glued ("?;", "; ", two question marks);
- `code_worded_share`: turns whose question code worded;
- `table_turns`, `table_recomputed_agree`: table turns, and how many references an independent path
  (SQL over the original CSV or SQLite file, not the code that chose them) gives again;
- `arithmetic_turns`: turns whose reference is computed (change, percentage change, average, ratio…);
- `count_turns`: turns whose reference is a count of rows (how many tracks of one media type), recomputed like a cell;
- `rule_turns`, `rule_recomputed_agree`: turns asking a policy's rule of a table row that is the case the rule names
  (a booking whose fare class the rule is about), and how many rows the original file shows to be that case, the
  sentence naming it;
- `off_limits_turns`: requests the assistant's rules make it decline, written for specs that say it must
  (such a spec's conversation is on-spec when it has one);
- `turns`, `waived_turns` (per check switched off: kept turns it would have refused), `drops` (by reason),
  `seconds_per_written`, `tokens_per_turn`.

The spec-first measures, beside those:

- `asks_spec_share`, `asks_spec_off`: of the conversations written, those whose first answerable turn (kept, not
  UNANSWERABLE, OFF-LIMITS or SYNTHESIS) asks the spec's own need, and the spec titles of the others. A turn asks it
  (a) when its provenance record's `need` is an integer the feature provenance's `reading` lists, or (b) by its own
  words (`asks_spec_attribute`): the question, its document's title or the table columns it reads holds one of the
  spec's subject names (`spec_subject`; a spec naming nothing passes), and a noun the spec's When line asks for
  (`asked_nouns`, from spaCy's parse; none: passes) has its stem among the question's words or those columns';
- `identifier_questions`, `identifier_examples`: questions (every kept turn) that name a column as an identifier (a
  table header in snake_case, CamelCase or ending in Id/_id/" ID", verbatim), ask for a key by its spoken name ("the
  genre id of track 1393"), pick a row as a query does ("whose", "with ID") or name a row by a key that is a running
  number ("track 1393": a table whose key cells are all digits), and up to 10 of them;
- `written_share`: selected specs (`.feature` files with a spec) whose provenance holds a conversation, over all;
- `repeated_questions`, `repeated_examples`: questions asked again in the suite, lower case without punctuation or
  extra spaces: twice in one conversation or in two (each repeat counted once);
- `plan_turns`, `plan_recomputed_agree`, `plan_not_recomputable`: need turns whose reference a query plan computed, how
  many references the plan gives again as SQL over the original CSV or SQLite files (`plan_sql`: joins by declared
  foreign keys else a column of the same name, `=` folded as bddgen compares cells, numbers compared as numbers; a
  report table's change, percentage change, average or ratio by plain arithmetic; numbers to 2 decimals, a list as the
  values its answer lists), and the plans that SQL cannot express (a table or column it cannot find, a number it
  cannot read). None of it runs bddgen's plan code;
- `tokens_per_written_conversation`, `seconds_per_written_conversation`: the implement stage's LM tokens (its
  calls the cache did not answer, from the LM log) and seconds, per written conversation;
- `human_auc`, `human_telling_words` (corpora kept with human questions: tatqa, wikidialog): the ROC AUC, over 5
  stratified folds seeded with the project's seed, of a bag-of-words logistic regression telling the project's
  questions (every kept turn's) from the human ones (0.5: it cannot), and the 10 words weighing most for each side,
  what it still tells apart (None when a side has fewer than 5 questions). Classes are balanced by weight
  (class_weight="balanced"), not by sampling. Needs scikit-learn: pip install -e .[bench].

`--ablate NAME` (a boolean setting such as `select.near_duplicates`) measures each corpus a second time
with that setting off and prints both. With `--measure PROJECT …`, a `select.*` switch reruns `select` and an
`implement.*` switch (`implement.start_from_subject`, `implement.checks.roundtrip`, …) reruns `implement` on a
copy of each project (its LM cache kept), and prints the figures with and without it; a check switched off
still runs, so `waived_turns` counts the kept turns it would have refused. The hand audit is printed separately from these figures: the
10 first answerable turns per corpus with their evidence, to read against the data (`--audit`).

    python benchmarks/bench_validity.py [--corpus sports airline tatqa chinook wikidialog] [--devsets ../shared/devsets]
        [--m 6] [--k 4] [--n 1] [--turns 5] [--ablate select.near_duplicates] [--keep DIR] [--audit] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_yield import CommandFailed, lm_tokens  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO = ("sports", "airline")
DEVSETS = ("tatqa", "chinook", "wikidialog")
ARITHMETIC = ("change", "percent_change", "average", "ratio", "sum", "difference")
GENERIC_NOUNS = frozenset({"user", "assistant", "question", "information", "detail", "document", "passage"})  # lemmas
NOT_ANSWERABLE = ("UNANSWERABLE", "OFF-LIMITS", "SYNTHESIS")
_ROW_PICKING = re.compile(r"\bwhose\b|\bwith ID\b", re.IGNORECASE)
HUMAN_FILES = ("human_questions.jsonl", "human_turns.jsonl")  # beside a development corpus: TAT-QA's, HybriDialogue's
FOLDS = 5
TELLING_WORDS = 10
EXAMPLES = 10


def bddgen(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    """Run this tree's bddgen CLI in `cwd` with `env` added; seconds taken."""
    started = time.perf_counter()
    done = subprocess_run(args, cwd, env)
    if done.returncode not in (0, 1):
        raise CommandFailed(f"bddgen {' '.join(args)} failed in {cwd} (exit {done.returncode}): {(done.stdout + done.stderr)[-800:].strip()}")
    return time.perf_counter() - started


def subprocess_run(args: list[str], cwd: Path, env: dict[str, str]) -> Any:
    import subprocess

    return subprocess.run(
        [sys.executable, "-c", "from bddgen.cli import main; main()", *args], cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env}, capture_output=True, text=True,
    )


def corpus_path(name: str, devsets: Path) -> str:
    if name in DEMO:
        return name
    folder = devsets / name / "corpus"
    if not folder.is_dir():
        raise SystemExit(f"no development corpus {folder}: pass --devsets DIR (the folder holding tatqa/, chinook/ and wikidialog/)")
    return str(folder.resolve())


def strip_conversations(project: Path) -> None:
    """The project's .feature files with their specs only, so that implement writes every conversation anew."""
    from bddgen.features.reader import read_feature
    from bddgen.features.writer import write_feature

    for target in sorted((project / "features").rglob("*.feature")):
        document = read_feature(target)
        document.conversations = []
        write_feature(target, document, allow_edited=True)


def build(
    name: str, corpus: str, folder: Path, options: argparse.Namespace, env: dict[str, str], reuse: Path | None = None
) -> tuple[Path, dict[str, float]]:
    """A project on the corpus with generated, selected and implemented specs; seconds per stage. With `reuse`
    (the project of the same corpus without the ablation), its candidates and LM call cache are copied first, so
    an ablated run selects from the same candidates and pays only for what the switch changes."""
    project = folder / name
    shutil.rmtree(project, ignore_errors=True)
    folder.mkdir(parents=True, exist_ok=True)
    seconds: dict[str, float] = {}
    seconds["init"] = bddgen(["init", str(project), "--corpus", corpus], folder, env)
    strip_conversations(project)  # init copied the shipped examples with theirs
    if reuse is not None:
        (project / "specs").mkdir(exist_ok=True)
        shutil.copy2(reuse / "specs" / "candidates.json", project / "specs" / "candidates.json")
        (project / ".bddgen").mkdir(exist_ok=True)
        for cache in ("lm.sqlite", "lm.sqlite-wal", "embeddings.sqlite", "embeddings.sqlite-wal"):  # a WAL may hold the last writes
            if (reuse / ".bddgen" / cache).is_file():
                shutil.copy2(reuse / ".bddgen" / cache, project / ".bddgen" / cache)
    seconds["generate"] = bddgen(["generate", "--m", str(options.m)], project, env)
    seconds["select"] = bddgen(["select", "--k", str(options.k)], project, env)
    seconds["implement"] = bddgen(["implement", "--n", str(options.n), "--turns", str(options.turns)], project, env)
    return project, seconds


# --- what the figures read ------------------------------------------------------------------------------


def _evidence_text(evidence: dict[str, Any], documents: dict[str, Any]) -> str:
    """The sentence or row a turn was asked on."""
    if evidence.get("kind") == "sentence":
        return str(evidence.get("text", ""))
    table = documents.get(str(evidence.get("table", "")))
    if table is not None and 0 <= int(evidence.get("row", -1)) < len(table.rows):
        return " ".join(table.rows[int(evidence["row"])])
    return " ".join(str(v) for v in (evidence.get("filter") or {}).values())


def _norm(value: str) -> str:
    return " ".join(str(value).lower().replace("’", "'").split()).strip(" .")


class Recomputer:
    """Table references recomputed from the original files, with the csv and sqlite3 modules only."""

    def __init__(self, corpus_folder: Path, documents: dict[str, Any]) -> None:
        self.folder = corpus_folder
        self.documents = documents
        self._database: sqlite3.Connection | None = None
        self._loaded: dict[str, SourceTable] = {}

    def rows(self, table_id: str) -> tuple[list[str], list[list[str]]]:
        document = self.documents[table_id]
        source = self.folder / str(document.source).split("#")[0]
        if source.suffix.lower() == ".csv":
            with source.open(encoding="utf-8-sig", newline="") as handle:
                table = [row for row in csv.reader(handle)]
            return table[0], table[1:]
        name = table_id.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
        with sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True) as connection:
            cursor = connection.execute(f'SELECT * FROM "{name}"')
            headers = [d[0] for d in cursor.description]
            return headers, [["" if v is None else (str(v) if not isinstance(v, float) or not v.is_integer() else str(int(v))) for v in row]
                             for row in cursor.fetchall()]

    def foreign_keys(self, table_id: str) -> tuple[tuple[str, str, str], ...]:
        """The links the original file declares for a table: a SQLite database's FOREIGN KEY clauses (to its tables the
        corpus reads; a key naming no column points at the primary key), or `foreign_keys` ({column, table: id,
        references}) in a CSV's sidecar when it has them."""
        file, _, name = str(self.documents[table_id].source).partition("#")
        source = self.folder / file
        if source.suffix.lower() == ".csv":
            import yaml

            sidecar = source.with_suffix(".yaml")
            try:
                meta = yaml.safe_load(sidecar.read_text(encoding="utf-8")) if sidecar.is_file() else None
            except yaml.YAMLError:
                meta = None  # a sidecar bddgen would refuse too
            keys = meta.get("foreign_keys") if isinstance(meta, dict) else None
            return tuple((str(k["column"]), str(k["table"]), str(k["references"])) for k in keys or [] if isinstance(k, dict))
        name = name or table_id.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
        read = {str(d.source).partition("#")[2]: i for i, d in self.documents.items() if str(getattr(d, "source", "")).partition("#")[0] == file}
        found: list[tuple[str, str, str]] = []
        connection = sqlite3.connect(f"{source.resolve().as_uri()}?mode=ro", uri=True)
        try:
            for row in connection.execute(f'PRAGMA foreign_key_list("{name}")').fetchall():
                target, column, references = str(row[2]), str(row[3]), row[4]
                if not references:
                    primary = [r[1] for r in connection.execute(f'PRAGMA table_info("{target}")') if r[5]]
                    references = primary[0] if len(primary) == 1 else None
                if target in read and references:
                    found.append((column, read[target], str(references)))
        finally:
            connection.close()
        return tuple(found)

    def source_table(self, table_id: str) -> SourceTable:
        """The table loaded (once) into the in-memory database the plans' SQL runs on."""
        if self._database is None:
            self._database = plan_database()
        if table_id not in self._loaded:
            headers, rows = self.rows(table_id)
            table = SourceTable(table_id, str(self.documents[table_id].title), f"t_{len(self._loaded)}", tuple(headers), self.foreign_keys(table_id))
            load_table(self._database, table, rows)
            self._loaded[table_id] = table
        return self._loaded[table_id]

    def plan_agrees(self, evidence: dict[str, Any], value: str, answer: str) -> bool | None:
        """Whether a need's query plan, run as SQL over the tables it read (`evidence["tables"]`, loaded from the original
        files), gives the reference `value` (or the values its `answer` lists); None when the SQL cannot express it."""
        plan, ids = evidence.get("plan"), [str(i) for i in evidence.get("tables") or []]
        if not isinstance(plan, dict) or not ids or any(i not in self.documents for i in ids):
            return None
        try:
            query = plan_sql(plan, [self.source_table(i) for i in ids])
            assert self._database is not None
            found = run_plan_sql(self._database, query)
        except (ValueError, KeyError, TypeError, OSError, sqlite3.Error):  # NotExpressible is a ValueError
            return None
        return None if found is None else recomputed_agrees(found, value, answer)

    def agrees(self, evidence: dict[str, Any], reference: str) -> bool | None:
        """Whether the rows the filter selects in the original file give `reference`; None when it cannot say."""
        table_id = str(evidence.get("table", ""))
        if table_id not in self.documents:
            return None
        try:
            headers, rows = self.rows(table_id)
        except (OSError, sqlite3.Error, UnicodeDecodeError):
            return None
        position = {_norm(h): i for i, h in enumerate(headers)}
        conditions = [(position.get(_norm(c)), _norm(v)) for c, v in (evidence.get("filter") or {}).items()]
        column = position.get(_norm(str(evidence.get("column", ""))))
        if column is None or any(i is None for i, _ in conditions):
            return None
        rows = _in_section(headers, rows, str(evidence.get("section", "")))
        selected = [row for row in rows if all(i is not None and i < len(row) and _norm(row[i]) == v for i, v in conditions)]
        if evidence.get("op") == "count":
            return _norm(reference) == str(len(selected))
        if evidence.get("op", "lookup") != "lookup":
            return _computed_agrees(evidence, reference, rows, position)
        values = {_norm(row[column]) for row in selected if column < len(row)}
        return len(values) == 1 and _norm(reference) in values


def _in_section(headers: list[str], rows: list[list[str]], section: str) -> list[list[str]]:
    """The rows under the section row named `section` (a row with one cell holding letters; the first column's
    name when it ends with ':' names the first section); every row when `section` is ''."""
    if not section:
        return rows
    current, kept = (headers[0].rstrip().rstrip(":") if headers[0].rstrip().endswith(":") else ""), []
    for row in rows:
        filled = [c for c in row if c.strip()]
        if len(filled) == 1 and any(ch.isalpha() for ch in filled[0]) and len(row) > 1:
            current = filled[0].strip().rstrip(":")
        if _norm(current) == _norm(section):
            kept.append(row)
    return kept


def _amount(cell: str) -> float | None:
    """'$ 1,452.4' -> 1452.4, '(3.2)' -> -3.2, '4.5%' -> 4.5; None for anything else (a dash)."""
    text = re.sub(r"[$€£¥,%\s]", "", cell)
    negative = text.startswith("(") and text.endswith(")")
    try:
        value = float(text.strip("()"))
    except ValueError:
        return None
    return -value if negative else value


def _computed_agrees(evidence: dict[str, Any], reference: str, rows: list[list[str]], position: dict[str, int]) -> bool | None:
    """Whether the change, percentage change, average or ratio of the cells the evidence names, computed here
    from the original rows, is the reference's number (rounded to 2 decimals)."""
    label_column, label = next(iter((evidence.get("filter") or {}).items()))
    label_at = position.get(_norm(label_column))

    def cell(row_label: str, column: str) -> float | None:
        found = [row for row in rows if label_at is not None and _norm(row[label_at]) == _norm(row_label)]
        at = position.get(_norm(column))
        return _amount(found[0][at]) if len(found) == 1 and at is not None else None

    values = evidence.get("values") or []
    numbers = [cell(v, str(evidence.get("column"))) for v in values] if values else [cell(label, c) for c in evidence.get("columns") or []]
    if len(numbers) < 2 or any(n is None for n in numbers):
        return None
    a, b = numbers[0], numbers[-1]
    op = evidence.get("op")
    results = {"change": lambda: b - a, "percent_change": lambda: (b - a) / a * 100, "average": lambda: sum(numbers) / len(numbers),
               "ratio": lambda: a / b}
    if op not in results or (op in ("percent_change", "ratio") and (a if op == "percent_change" else b) == 0):
        return None
    stated = re.search(r"-?\d+(?:\.\d+)?", reference.replace(",", ""))
    return stated is not None and abs(float(stated.group(0)) - round(results[op](), 2)) < 0.006


# --- need turns with a query plan: the plan translated to SQL over the original files -------------------


class NotExpressible(ValueError):
    """A query plan this translation cannot express: a table or column it cannot find, two tables nothing links."""


@dataclass(frozen=True)
class SourceTable:
    """A corpus table as its original file holds it, loaded into the in-memory database as `sql` (columns c0, c1, …
    in header order and `_row`, its place in the file); `foreign_keys` are (column, id of the table it points to, that
    table's column)."""

    id: str
    title: str
    sql: str
    headers: tuple[str, ...]
    foreign_keys: tuple[tuple[str, str, str], ...] = ()

    @property
    def short(self) -> str:
        """The name a plan gives it: its id's last part ("tables/chinook.Track" -> "Track")."""
        return self.id.rsplit("/", 1)[-1].rsplit(".", 1)[-1]


@dataclass(frozen=True)
class PlanSQL:
    """A plan as one SQL statement, its parameters and how its rows read: `number` (one row: the number, the count of
    cells it read that are not numbers), `groups` (a group's value, its number, its cells that are not numbers; best
    first), `values` (the answering cells, in order) or `cells` (the one row's year cells `compute` works on)."""

    sql: str
    params: tuple[str, ...]
    shape: Literal["number", "groups", "values", "cells"]
    limit: int = 0
    compute: str = ""
    indexes: tuple[tuple[str, str], ...] = ()  # (table, column) a join compares by fold(): indexed on that expression


PLAN_COMPARISONS = ("<", "<=", ">", ">=")
PLAN_AGGREGATES = {"sum": "SUM", "average": "AVG", "min": "MIN", "max": "MAX"}
PLAN_COMPUTED = ("change", "percent_change", "average", "ratio")
_YEAR_HEADER = re.compile(r"(?<!\d)(?:19|20|21)\d\d(?!\d)")


def _fold(text: str) -> str:
    """Text as `=` compares it: lower case, accents and punctuation aside (bddgen's normaliser, text folding only)."""
    from bddgen.normalise import normalise

    return normalise(str(text))


def _same(cell: str | None, value: str | None) -> bool:
    """A cell meets `= value`: folded alike, whole or one of its ';'-separated parts."""
    cell, wanted = str(cell or ""), _fold(str(value or ""))
    return _fold(cell) == wanted or any(_fold(part) == wanted for part in cell.split(";"))


def _sql_number(cell: str | None) -> float | None:
    return _amount(str(cell or ""))


def plan_database() -> sqlite3.Connection:
    """An in-memory database with the functions the plans' SQL calls: fold(text), same(cell, value), num(cell)."""
    connection = sqlite3.connect(":memory:")
    connection.create_function("fold", 1, _fold, deterministic=True)
    connection.create_function("same", 2, _same, deterministic=True)
    connection.create_function("num", 1, _sql_number, deterministic=True)
    return connection


def load_table(connection: sqlite3.Connection, table: SourceTable, rows: Iterable[Sequence[str]]) -> None:
    """`rows` (blank lines left out, each cut or padded to the headers) as table `table.sql`."""
    width = len(table.headers)
    columns = ", ".join(f"c{i} TEXT" for i in range(width))
    connection.execute(f'CREATE TABLE "{table.sql}" ({columns}, _row INTEGER)')
    filled = (row for row in rows if any(cell.strip() for cell in row))
    kept = [[*row[:width], *[""] * (width - len(row)), n] for n, row in enumerate(filled)]
    connection.executemany(f'INSERT INTO "{table.sql}" VALUES ({", ".join("?" * (width + 1))})', kept)


def _report_table(table: SourceTable) -> bool:
    """A report table: a column of line items, then two columns or more named by a year ('2019', 'Fiscal 2018')."""
    return sum(len(set(_YEAR_HEADER.findall(h))) == 1 for h in table.headers[1:]) >= 2


class _PlanTables:
    """The tables a plan reads, each under an alias (t0 its own table, t1… those it joins), and the columns it names."""

    def __init__(self, tables: Sequence[SourceTable]) -> None:
        self.tables = list(tables)
        self.read: list[SourceTable] = []
        self.linked: set[tuple[str, str]] = set()  # (table id, header) a join matched on

    def find(self, name: str) -> SourceTable:
        wanted = _fold(name)
        for table in self.tables:
            if wanted in (_fold(table.id), _fold(table.short), _fold(table.title)):
                return table
        raise NotExpressible(f"no table {name!r}")

    def alias(self, table: SourceTable) -> str:
        return f"t{[t.id for t in self.read].index(table.id)}"

    def link(self, other: SourceTable) -> tuple[SourceTable, str, str]:
        """(a table already read, its column, the column of `other`) a join matches: a declared foreign key either way,
        else the first column of the same name."""
        for table in self.read:
            for column, target, references in table.foreign_keys:
                if target == other.id:
                    return table, column, references
            for column, target, references in other.foreign_keys:
                if target == table.id:
                    return table, references, column
        for table in self.read:
            shared = [h for h in table.headers if h in other.headers]
            if shared:
                return table, shared[0], shared[0]
        raise NotExpressible(f"nothing links {other.id} to {', '.join(t.id for t in self.read)}")

    def column(self, name: str) -> tuple[SourceTable, str]:
        """(table, header) a plan's column means: "Table.Column" or a bare "Column" that one table read has (or a
        join's key, which every joined row holds alike)."""
        wanted = _fold(name)
        found = [(t, h) for t in self.read for h in t.headers if wanted in (_fold(f"{t.short}.{h}"), _fold(h), _fold(f"{t.id}.{h}"))]
        if len(found) == 1:
            return found[0]
        keys = [(t, h) for t, h in found if (t.id, h) in self.linked]
        if keys and len(keys) == len(found):
            return keys[0]
        raise NotExpressible(f"column {name!r} is in {len(found)} of the tables read")

    def sql(self, name: str) -> str:
        table, header = self.column(name)
        return f"{self.alias(table)}.c{table.headers.index(header)}"


def _joined(plan: dict[str, Any], tables: _PlanTables) -> list[str]:
    """The table names a plan's `join` gives: names, or both sides' tables of a condition ("Invoice.CustomerId =
    Customer.CustomerId"); a bare column name (a key named where a table was meant) joins nothing."""
    names: list[str] = []
    columns = {_fold(h) for t in tables.tables for h in t.headers}
    table_names = {_fold(t.short) for t in tables.tables}
    for entry in plan.get("join") or []:
        entry = str(entry)
        if "=" not in entry:
            if not (_fold(entry) in columns and _fold(entry) not in table_names):
                names.append(entry)
            continue
        names += [side.strip().rpartition(".")[0] for side in entry.split("=") if side.strip().rpartition(".")[0]]
    return list(dict.fromkeys(names))


def plan_sql(plan: dict[str, Any], tables: Sequence[SourceTable]) -> PlanSQL:
    """A QueryPlan (its JSON) as SQL over `tables` loaded by `load_table`: joins by declared foreign keys else a column of
    the same name (cells folded alike), `where` conditions (`=` by `same()`, numbers compared as numbers when both cells
    parse), an aggregate (count, sum, average, min, max; per `group_by` group, best first), rows ranked by `order_by`,
    or a report table's one row read for `compute`. NotExpressible when the plan names what the tables do not hold."""
    plan = dict(plan)
    if str(plan.get("select", "")).replace(" ", "").upper() in ("COUNT(*)", "COUNT"):
        plan.update(select="", aggregate="count")
    read = _PlanTables(tables)
    main = read.find(str(plan.get("table", "")))
    read.read.append(main)
    where = [c for c in plan.get("where") or [] if isinstance(c, dict)]
    if plan.get("compute") and _report_table(main):
        return _compute_sql(plan, read, main, where)
    sources: list[str] = [f'"{main.sql}" AS t0']
    indexes: list[tuple[str, str]] = []
    for name in _joined(plan, read):
        other = read.find(name)
        if other.id in {t.id for t in read.read}:
            continue
        table, left, right = read.link(other)
        read.read.append(other)
        right_at = other.headers.index(right)
        sources.append(f'JOIN "{other.sql}" AS {read.alias(other)} ON fold({read.alias(table)}.c{table.headers.index(left)}) = '
                       f"fold({read.alias(other)}.c{right_at})")
        indexes.append((other.sql, f"c{right_at}"))
        read.linked |= {(table.id, left), (other.id, right)}
    conditions: list[str] = []
    params: list[str] = []
    for condition in where:
        cell, op, value = read.sql(str(condition.get("column", ""))), str(condition.get("op", "=")), str(condition.get("value", ""))
        if op == "=":
            conditions.append(f"same({cell}, ?)")
        elif op == "!=":
            conditions.append(f"NOT same({cell}, ?)")
        elif op == "contains":
            conditions.append(f"instr(fold({cell}), fold(?)) > 0")
        elif op in PLAN_COMPARISONS:
            conditions.append(f"(CASE WHEN num({cell}) IS NOT NULL AND num(?) IS NOT NULL THEN num({cell}) {op} num(?) "
                              f"ELSE trim({cell}) {op} trim(?) END)")
            params += [value, value]
        else:
            raise NotExpressible(f"condition op {op!r}")
        params.append(value)
    source = " ".join(sources)
    aggregate, limit = str(plan.get("aggregate") or "none"), int(plan.get("limit") or 0)
    row_order = ", ".join(f"t{n}._row" for n in range(len(read.read)))
    if aggregate != "none":
        if aggregate == "count":
            number, unread = "COUNT(*)", "0"
        elif aggregate in PLAN_AGGREGATES and plan.get("select"):
            cell = read.sql(str(plan["select"]))
            number, unread = f"{PLAN_AGGREGATES[aggregate]}(num({cell}))", f"SUM(trim({cell}) <> '' AND num({cell}) IS NULL)"
        else:
            raise NotExpressible(f"aggregate {aggregate!r} of {plan.get('select')!r}")
        if not plan.get("group_by"):
            sql = f"SELECT {number}, {unread} FROM {source}" + (f" WHERE {' AND '.join(conditions)}" if conditions else "")
            return PlanSQL(sql, tuple(params), "number", indexes=tuple(indexes))
        group = read.sql(str(plan["group_by"]))
        conditions.append(f"trim({group}) <> ''")
        direction = "ASC" if plan.get("order") == "asc" else "DESC"
        sql = (f"SELECT {group}, {number}, {unread} FROM {source} WHERE {' AND '.join(conditions)} GROUP BY {group} "
               f"ORDER BY 2 {direction}, MIN(t0._row)")
        return PlanSQL(sql, tuple(params), "groups", limit=limit, indexes=tuple(indexes))
    if not plan.get("select"):
        raise NotExpressible("neither a column nor an aggregate")
    cell = read.sql(str(plan["select"]))
    conditions.append(f"trim({cell}) <> ''")
    order = row_order
    if plan.get("order_by"):
        ranked = read.sql(str(plan["order_by"]))
        way = " DESC" if plan.get("order") == "desc" else ""  # numbers first, then text folded; ties in file order
        order = (f"num({ranked}) IS NULL{way}, num({ranked}){way}, CASE WHEN num({ranked}) IS NULL THEN fold({ranked}) ELSE '' END{way}, "
                 f"{row_order}")
    sql = f"SELECT {cell} FROM {source} WHERE {' AND '.join(conditions)} ORDER BY {order}"
    return PlanSQL(sql, tuple(params), "values", limit=limit, indexes=tuple(indexes))


def _compute_sql(plan: dict[str, Any], read: _PlanTables, main: SourceTable, where: list[dict[str, Any]]) -> PlanSQL:
    """A report table's one row (picked by its one '=' condition, on its line items when the condition names no column),
    its year `columns` read."""
    picked = [c for c in where if c.get("op", "=") == "="]
    columns = [str(c) for c in plan.get("columns") or []]
    if len(picked) != 1 or len(columns) < 2 or plan.get("compute") not in PLAN_COMPUTED:
        raise NotExpressible("a computation reads one row ('=' on its label) and two year columns or more")
    label = read.sql(str(picked[0]["column"])) if picked[0].get("column") else "t0.c0"
    cells = ", ".join(read.sql(c) for c in columns)
    return PlanSQL(f'SELECT {cells} FROM "{main.sql}" AS t0 WHERE same({label}, ?)', (str(picked[0].get("value", "")),), "cells",
                   compute=str(plan["compute"]))


Recomputed = tuple[Literal["number", "value", "values", "groups", "none"], Any]
"""What a plan's SQL gives: ("number", float), ("value", a cell), ("values", [cells]), ("groups", [(name, number)]),
or ("none", why) when it has no single answer (a tie for the top group, no such row)."""


def run_plan_sql(connection: sqlite3.Connection, query: PlanSQL) -> Recomputed | None:
    """The plan's result from its SQL; None when a cell it reads is no number this bench parses (a scale word)."""
    for table, column in query.indexes:
        connection.execute(f'CREATE INDEX IF NOT EXISTS "{table}_{column}_folded" ON "{table}" (fold({column}))')
    rows = connection.execute(query.sql, query.params).fetchall()
    if query.shape == "number":
        number, unread = rows[0]
        if unread:
            return None
        return ("none", "no number") if number is None else ("number", float(number))
    if query.shape == "groups":
        if any(unread for _, _, unread in rows):
            return None
        scored = [(str(name), float(number)) for name, number, _ in rows if number is not None]
        top = scored[: query.limit or 1]
        if not top or (len(scored) > len(top) and scored[len(top)][1] == top[-1][1]):
            return ("none", "a tie for the top group" if top else "no group")
        return ("value", top[0][0]) if len(top) == 1 else ("groups", top)
    if query.shape == "values":
        values = list(dict.fromkeys(str(value) for (value,) in rows))[: query.limit or None]
        return ("none", "no row") if not values else ("value", values[0]) if len(values) == 1 else ("values", values)
    if len(rows) != 1:
        return ("none", f"{len(rows)} rows")
    read = [_amount(str(cell or "")) for cell in rows[0]]
    numbers = [n for n in read if n is not None]
    if len(numbers) != len(read):
        return None
    a, b = numbers[0], numbers[-1]
    if query.compute == "average":
        return ("number", sum(numbers) / len(numbers))
    if len(numbers) != 2 or (query.compute == "percent_change" and a == 0) or (query.compute == "ratio" and b == 0):
        return ("none", "not two cells, or a division by zero")
    return ("number", {"change": lambda: b - a, "percent_change": lambda: (b - a) / a * 100, "ratio": lambda: a / b}[query.compute]())


def _stated_number(text: str) -> float | None:
    found = re.search(r"-?\d+(?:\.\d+)?", text.replace(",", ""))
    return float(found.group(0)) if found else None


def _close(a: float, b: float) -> bool:
    return abs(round(a, 2) - round(b, 2)) < 0.006


def _same_value(mine: str, stated: str) -> bool:
    """One value given again: folded alike, or the same number."""
    a, b = _amount(mine), _amount(stated)
    return _fold(mine) == _fold(stated) or (a is not None and b is not None and _close(a, b))


def _lists(answer: str, items: Sequence[Any], same: Callable[[Any, str], bool]) -> bool:
    """Whether `answer` lists exactly `items`, in any order, joined by ', ' (an item may hold a comma itself)."""
    pieces = answer.split(", ")

    def fits(start: int, left: tuple[Any, ...]) -> bool:
        if start == len(pieces) or not left:
            return start == len(pieces) and not left
        return any(same(item, ", ".join(pieces[start:end])) and fits(end, left[:n] + left[n + 1:])
                   for end in range(start + 1, len(pieces) + 1) for n, item in enumerate(left))

    return fits(0, tuple(items))


def _group_item(item: tuple[str, float], stated: str) -> bool:
    """A listed group, "name (number)", is `item`."""
    found = re.fullmatch(r"(.*) \(([^()]*)\)", stated.strip())
    number = _amount(found.group(2)) if found else None
    return found is not None and _fold(found.group(1)) == _fold(item[0]) and number is not None and _close(number, item[1])


def recomputed_agrees(found: Recomputed, value: str, answer: str) -> bool:
    """Whether the independent result is the turn's reference: its value (a number to 2 decimals, a cell folded), or
    for a list, the values its answer lists."""
    kind, result = found
    if kind == "number":
        stated = _stated_number(value or answer)
        return stated is not None and _close(result, stated)
    if kind == "value":
        return _same_value(str(result), value or answer)
    if kind == "values":
        return _lists(answer, result, _same_value)
    if kind == "groups":
        return _lists(answer, result, _group_item)
    return False


# --- the spec-first measures: pure functions ------------------------------------------------------------


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def _stems(words: Iterable[str]) -> set[str]:
    import snowballstemmer

    stemmer = snowballstemmer.stemmer("english")
    return {stemmer.stemWord(word) for word in words}


def asked_nouns(doc: Any, names: Sequence[str]) -> list[str]:
    """The nouns a spec's When line (`doc`, a spaCy parse) asks for: those under its verb "ask" (its object, "for …",
    "about …", a clause "what … costs") but the asker's; with no "ask", those of its noun chunks but the subject's
    (the user). Words of the spec's subject `names` and generic words (`GENERIC_NOUNS`) are left out."""
    named = {word for name in names for word in _words(name)}
    asks = [t for t in doc if t.lemma_.lower() == "ask" and t.pos_ in ("VERB", "AUX")]
    heads = asks or [t for t in doc if t.dep_ == "ROOT"]
    askers = {a.i for head in heads for child in head.children if child.dep_.startswith("nsubj") for a in child.subtree}
    tokens = [t for head in asks for t in head.subtree] if asks else [t for chunk in doc.noun_chunks for t in chunk]
    nouns = [t.text.lower() for t in tokens if t.pos_ == "NOUN" and t.i not in askers and t.lemma_.lower() not in GENERIC_NOUNS]
    return list(dict.fromkeys(noun for noun in nouns if noun not in named))


def asks_spec_attribute(question: str, title: str, columns: Sequence[str], names: Sequence[str], asked: Sequence[str]) -> bool:
    """Whether a turn asks its spec's need by its own words: the question, its evidence's document `title` or the table
    `columns` it reads holds one of the spec's subject `names` (a spec naming nothing passes), and one of the nouns the
    spec's When asks for (`asked`; none: any question passes) has its stem among the question's words or the words of
    those columns ("price_per_day_eur": price, per, day, eur)."""
    from bddgen.implement.grounding import mentions
    from bddgen.text import spoken_name

    if names and not any(mentions(" ".join([question, title, *columns]), name) for name in names):
        return False
    said = _stems(_words(question)) | _stems(word for column in columns for word in _words(spoken_name(column)))
    return not asked or bool(_stems(noun.lower() for noun in asked) & said)


def claims_spec_need(turn: dict[str, Any], reading: Any) -> bool:
    """Whether implement recorded that the turn asks one of the spec's needs: its `need` is an integer, the place of a
    need in the feature provenance's `reading` (`{"needs": [...]}`; both absent from older files)."""
    need, needs = turn.get("need"), reading.get("needs") if isinstance(reading, dict) else None
    return isinstance(need, int) and not isinstance(need, bool) and isinstance(needs, list) and 0 <= need < len(needs)


def first_answerable(turns: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """A conversation's first kept turn that is neither UNANSWERABLE, OFF-LIMITS nor SYNTHESIS."""
    return next((t for t in turns if t.get("outcome") == "kept" and t.get("query_type") not in NOT_ANSWERABLE), None)


def identifier_headers(headers: Iterable[str]) -> set[str]:
    """Table headers written as identifiers: snake_case (`flight_number`), CamelCase (`MediaTypeId`), or ending in
    `Id`, `_id` or ` ID`."""
    return {h for h in headers if "_" in h or re.search(r"[a-z][A-Z]", h) or h.endswith(("Id", "_id", " ID"))}


def numbered_nouns(tables: Iterable[Any]) -> set[str]:
    """The nouns of tables whose key is a running number (`TrackId` 1, 2, 3 …): a row such a number names ("track 1393")
    is named by its key, which no user of the assistant sees; a code a person reads off a ticket (`HAT184`) is not one."""
    nouns = set()
    for table in tables:
        if not table.key or table.key not in table.headers:
            continue
        position = table.headers.index(table.key)
        cells = [row[position] for row in table.rows if position < len(row) and row[position].strip()]
        if cells and all(cell.strip().isdigit() for cell in cells):
            nouns.add(table.title.split(".")[-1].split()[-1].lower())
    return nouns


def identifier_question(question: str, identifiers: Iterable[str], numbered: Iterable[str] = ()) -> bool:
    """Whether a question names a column as its identifier (one of `identifiers`, verbatim), asks for a key by its
    spoken name ("the genre id of track 1393": `GenreId` said in words), picks a row as a query does ("whose", so
    also "of the … whose"; "with ID"), or names a row by its running-number key ("track 1393", `numbered` nouns)."""
    headers = list(identifiers)
    keys = [" ".join(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", h).replace("_", " ").lower().split()) for h in headers if re.search(r"(?:^|[_ a-z])(?:id|Id|ID)$", h)]
    return (bool(_ROW_PICKING.search(question)) or any(re.search(rf"(?<!\w){re.escape(h)}(?!\w)", question) for h in headers)
            or any(re.search(rf"(?<!\w){re.escape(k)}(?!\w)", question, re.IGNORECASE) for k in keys if " " in k)
            or any(re.search(rf"\b{re.escape(n)}s? (?:number |no\.? |#)?\d+\b", question, re.IGNORECASE) for n in numbered))


def normalised_question(question: str) -> str:
    """Lower case, punctuation removed, spaces collapsed."""
    return " ".join(re.sub(r"[^\w\s]", "", question.lower()).split())


def repeated_questions(questions: Iterable[str]) -> list[str]:
    """Every question of a suite asked again, normalised: a second time in one conversation or in another."""
    seen: set[str] = set()
    repeats = []
    for question in questions:
        key = normalised_question(question)
        if key and key in seen:
            repeats.append(question)
        seen.add(key)
    return repeats


def human_auc(generated: list[str], human: list[str], seed: int) -> dict[str, Any]:
    """How well a bag-of-words logistic regression tells `generated` questions from `human` ones: its ROC AUC over 5
    stratified folds shuffled with `seed` (0.5: it cannot tell them apart; 1.0: always), and the words that weigh most
    for each side once fitted on all of them. The classes are balanced by weight (class_weight="balanced"), so every
    question is used. `auc` is None when a side has fewer questions than folds. Needs scikit-learn (the bench extra)."""
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.pipeline import make_pipeline

    figures: dict[str, Any] = {"auc": None, "generated": len(generated), "human": len(human), "generated_words": [], "human_words": []}
    if min(len(generated), len(human)) < FOLDS:
        return figures
    texts, labels = [*generated, *human], [1] * len(generated) + [0] * len(human)
    model = make_pipeline(CountVectorizer(), LogisticRegression(class_weight="balanced", max_iter=1000))
    folds = StratifiedKFold(n_splits=FOLDS, shuffle=True, random_state=seed)
    figures["auc"] = round(float(cross_val_score(model, texts, labels, cv=folds, scoring="roc_auc").mean()), 3)
    model.fit(texts, labels)
    words, weights = model[0].get_feature_names_out(), model[1].coef_[0]
    order = weights.argsort()
    figures["generated_words"] = [str(words[i]) for i in order[::-1][:TELLING_WORDS] if weights[i] > 0]
    figures["human_words"] = [str(words[i]) for i in order[:TELLING_WORDS] if weights[i] < 0]
    return figures


def human_questions(corpus_folder: Path) -> list[str]:
    """The human questions kept beside a development corpus (`HUMAN_FILES` in its folder's parent); [] for any other."""
    for name in HUMAN_FILES:
        path = corpus_folder.parent / name
        if path.is_file():
            return [str(json.loads(line)["question"]) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return []


def project_models(project: Path) -> Any:
    """The models and corpus of the project in `project`, built on first use."""
    from bddgen.pipeline.models import Models
    from bddgen.project import Project

    return Models(Project.discover(project))


def selection_figures(project: Path, models: Any) -> dict[str, Any]:
    """What the selection of one project chose: its specs and focuses, near-duplicate pairs and corpus-contradicting specs."""
    import numpy as np

    from bddgen.features.reader import read_feature
    from bddgen.implement.spec_facts import unsupported_then_facts
    from bddgen.select.templates import NearDuplicates, corpus_values

    corpus = models.corpus
    selection = json.loads((project / "specs" / "selection.json").read_text(encoding="utf-8"))
    spec_list = [read_feature(path).spec for path in sorted((project / "features").rglob("*.feature"))]
    settings = models.project.settings.select
    embeddings = models.embedder.embed([spec.as_text() for spec in spec_list]) if spec_list else []
    duplicates = NearDuplicates(spec_list, np.asarray(embeddings), max_cosine=settings.near_duplicate_cosine,
                                min_template_overlap=settings.near_duplicate_overlap, values=corpus_values(corpus))
    return {
        "selected": len(selection.get("selected", [])),
        "focuses": sorted({s["spec"].get("focus") or "(hand-written)" for s in selection.get("selected", [])}),
        "specs": [s.title for s in spec_list],
        "near_duplicate_pairs": [(spec_list[a].title, spec_list[b].title, why) for a, b, why in duplicates.pairs(list(range(len(spec_list))))],
        "contradicting_specs": {spec.title: found for spec in spec_list if (found := unsupported_then_facts(spec, corpus, models.index))},
    }


def measure(project: Path, seconds: dict[str, float]) -> dict[str, Any]:
    """Every figure of one corpus's project."""
    from bddgen.features.reader import read_feature
    from bddgen.implement.checks import glued_questions, longest_copied_run
    from bddgen.implement.declined import declined_rule
    from bddgen.implement.grounding import mentions
    from bddgen.implement.subject import spec_subject
    from bddgen.ner.spacy_recognizer import SpacyRecognizer

    models = project_models(project)
    parser = SpacyRecognizer(models.project.settings.ner.spacy_model)  # parses each spec's When lines
    corpus_folder = models.project.corpus_path
    corpus = models.corpus
    documents = corpus.by_id()
    specs = [read_feature(path) for path in sorted((project / "features").rglob("*.feature"))]
    recompute = Recomputer(corpus_folder, documents)
    figures: Counter[str] = Counter()
    copied: list[tuple[int, str]] = []
    drops: Counter[str] = Counter()
    waived: Counter[str] = Counter()
    every_name: list[tuple[str, bool]] = []
    conversations_on_spec: list[tuple[str, bool]] = []
    conversations_asking_spec: list[tuple[str, bool]] = []
    identifiers = identifier_headers(h for d in corpus.documents if d.kind == "table" for h in d.headers)
    numbered = numbered_nouns(d for d in corpus.documents if d.kind == "table")
    questions: list[str] = []  # every kept turn's, in suite order
    audit: list[dict[str, Any]] = []
    for document in specs:
        figures["selected_specs"] += document.form != "none"
        path = Path(document.path) if document.path else None
        sidecar = path.with_name(path.stem + ".provenance.json") if path else None
        if sidecar is None or not sidecar.is_file():
            continue
        provenance = json.loads(sidecar.read_text(encoding="utf-8"))
        figures["written_specs"] += document.form != "none" and bool(provenance.get("conversations"))
        subject = spec_subject(document.spec, corpus, models.index)
        asked = list(dict.fromkeys(noun for line in document.spec.when if (doc := parser.parse(line)) is not None
                                   for noun in asked_nouns(doc, subject.names)))
        declines = bool(declined_rule(document.spec, corpus.system.off_limits, corpus.system.name))
        for rejected in provenance.get("rejected", []):
            drops[re.sub(r"\d+", "N", str(rejected.get("reason", "?")))[:140]] += 1
        for conversation in provenance.get("conversations", []):
            figures["written"] += 1
            on_spec = False
            named: set[str] = set()  # the spec's names its answerable turns ask about (both sides of a comparison)
            kept = [t for t in conversation.get("turns", []) if t.get("outcome") == "kept"]
            questions += [str(t.get("question", "")) for t in kept]
            first = first_answerable(kept)
            conversations_asking_spec.append((document.spec.title, first is not None and (
                claims_spec_need(first, provenance.get("reading")) or _asks_by_words(first, documents, subject.names, asked))))
            for turn in kept:
                figures["turns"] += 1
                waived.update({str(w).partition(":")[0] for w in turn.get("waived", [])})  # a check switched off would have refused it
                kind = turn.get("query_type")
                evidence = turn.get("evidence") or {}
                question = str(turn.get("question", ""))
                figures["code_worded"] += turn.get("worded_by") == "code"
                if kind == "SYNTHESIS":
                    figures["syntheses"] += 1
                    figures["glued_syntheses"] += glued_questions(question)
                if kind == "OFF-LIMITS":
                    figures["off_limits_turns"] += 1
                if kind in ("UNANSWERABLE", "OFF-LIMITS", "SYNTHESIS"):
                    continue
                text = _evidence_text(evidence, documents)
                copied.append((longest_copied_run(question, text), question))
                source = documents.get(_evidence_document(evidence))
                # evidence is about the subject when it, the title of the document it is from, or (a table's) the columns it
                # reads names it: a spec about "the MediaTypeId with more tracks" is tested by a count over that column
                read = _columns_read(evidence) if evidence.get("kind") == "table" else []
                about = " ".join([f"{source.title}:" if source is not None else "", text, *read]).strip()
                on_spec = on_spec or subject.held_by(about, _evidence_document(evidence))
                named |= {name for name in subject.names if mentions(f"{about} {question}", name)}
                if evidence.get("kind") == "table":
                    figures["table_turns"] += 1
                    verdict = recompute.agrees(evidence, str(turn.get("value") or turn.get("answer", "")))
                    figures["table_recomputed_agree"] += verdict is True
                    figures["table_not_recomputable"] += verdict is None
                if evidence.get("kind") == "need" and evidence.get("plan"):  # a spec's own question answered by a query plan
                    figures["plan_turns"] += 1
                    verdict = recompute.plan_agrees(evidence, str(turn.get("value") or evidence.get("value") or ""),
                                                    str(evidence.get("answer") or turn.get("answer") or ""))
                    figures["plan_recomputed_agree"] += verdict is True
                    figures["plan_not_recomputable"] += verdict is None
                case = evidence.get("case") if evidence.get("kind") == "sentence" else None
                if case:  # a rule applied to a row: the row is the case its sentence names, read again from the original file
                    figures["rule_turns"] += 1
                    named_case = re.search(rf"(?<!\w){re.escape(str(case.get('value', '')))}(?!\w)", text) is not None
                    figures["rule_recomputed_agree"] += named_case and recompute.agrees(case, str(case.get("value", ""))) is True
                if str(evidence.get("op", "")) in ARITHMETIC or evidence.get("kind") == "computed":
                    figures["arithmetic_turns"] += 1
                figures["count_turns"] += evidence.get("op") == "count"
                if len(audit) < 10 * max(1, len(specs)):
                    audit.append({"spec": document.spec.title, "type": kind, "question": question, "answer": turn.get("answer"),
                                  "evidence": text[:300], "document": _evidence_document(evidence)})
            if declines:  # a spec that says the assistant must decline is tested by a request its rule forbids
                on_spec = any(t.get("outcome") == "kept" and t.get("query_type") == "OFF-LIMITS" for t in conversation.get("turns", []))
            conversations_on_spec.append((document.spec.title, on_spec))
            if len(subject.names) >= 2:
                every_name.append((document.spec.title, named == set(subject.names)))
    written = figures["written"]
    tokens = lm_tokens(project)
    identifier_asked = [q for q in questions if identifier_question(q, identifiers, numbered)]
    repeats = repeated_questions(questions)
    seconds_per_written = round(seconds["implement"] / written, 1) if written and "implement" in seconds else None
    return {
        **selection_figures(project, models),
        "on_spec_share": round(sum(ok for _, ok in conversations_on_spec) / len(conversations_on_spec), 3) if conversations_on_spec else None,
        "off_spec": [title for title, ok in conversations_on_spec if not ok],
        "every_name_share": round(sum(ok for _, ok in every_name) / len(every_name), 3) if every_name else None,
        "one_sided": [title for title, ok in every_name if not ok],
        "max_copied_words": max((n for n, _ in copied), default=0),
        "most_copied_question": max(copied, default=(0, ""))[1],
        "glued_syntheses": figures["glued_syntheses"],
        "code_worded_share": round(figures["code_worded"] / figures["turns"], 3) if figures["turns"] else None,
        "table_turns": figures["table_turns"],
        "table_recomputed_agree": figures["table_recomputed_agree"],
        "table_not_recomputable": figures["table_not_recomputable"],
        "plan_turns": figures["plan_turns"],
        "plan_recomputed_agree": figures["plan_recomputed_agree"],
        "plan_not_recomputable": figures["plan_not_recomputable"],
        "arithmetic_turns": figures["arithmetic_turns"],
        "count_turns": figures["count_turns"],
        "rule_turns": figures["rule_turns"],
        "rule_recomputed_agree": figures["rule_recomputed_agree"],
        "off_limits_turns": figures["off_limits_turns"],
        "written": written,
        "turns": figures["turns"],
        "waived_turns": dict(waived.most_common()),
        "drops": dict(drops.most_common()),
        "seconds": {k: round(v, 1) for k, v in seconds.items()},
        "seconds_per_written": seconds_per_written,
        "tokens_per_turn": round(tokens / figures["turns"]) if figures["turns"] else None,
        "asks_spec_share": _share(conversations_asking_spec),
        "asks_spec_off": [title for title, ok in conversations_asking_spec if not ok],
        "identifier_questions": len(identifier_asked),
        "identifier_examples": identifier_asked[:EXAMPLES],
        "written_share": round(figures["written_specs"] / figures["selected_specs"], 3) if figures["selected_specs"] else None,
        "repeated_questions": len(repeats),
        "repeated_examples": repeats[:EXAMPLES],
        "tokens_per_written_conversation": round(tokens / written) if written else None,
        "seconds_per_written_conversation": seconds_per_written,
        **human_figures(questions, corpus_folder, models.project.settings.seed),
        "audit": audit,
    }


def human_figures(generated: list[str], corpus_folder: Path, seed: int) -> dict[str, Any]:
    """`human_auc` and `human_telling_words` of a corpus kept with human questions (None and {} for any other)."""
    human = human_questions(corpus_folder)
    if not human:
        return {"human_auc": None, "human_telling_words": {}}
    try:
        found = human_auc(generated, human, seed)
    except ImportError:
        print("human_auc needs scikit-learn: pip install -e .[bench]", file=sys.stderr)
        return {"human_auc": None, "human_telling_words": {}, "human_auc_missing": "scikit-learn: pip install -e .[bench]"}
    return {"human_auc": found["auc"], "human_telling_words": {"generated": found["generated_words"], "human": found["human_words"]}}


def _evidence_document(evidence: dict[str, Any]) -> str:
    return str(evidence.get("table") or evidence.get("document") or "")


def _columns_read(evidence: dict[str, Any]) -> list[str]:
    """The columns a turn reads: a table turn's answer, computation and filter columns; a need's query plan's (its
    selected, grouping, ranking, computed and condition columns, without their table); none for a sentence."""
    if evidence.get("kind") == "table":
        return [str(evidence.get("column", "")), *(evidence.get("columns") or []), *(evidence.get("filter") or {})]
    plan = evidence.get("plan") or {}  # only a need has one
    read = [plan.get("select", ""), plan.get("group_by", ""), plan.get("order_by", ""), *(plan.get("columns") or []),
            *(c.get("column", "") for c in plan.get("where") or [])]
    return [str(column).rsplit(".", 1)[-1] for column in read if column]


def _share(verdicts: list[tuple[str, bool]]) -> float | None:
    return round(sum(ok for _, ok in verdicts) / len(verdicts), 3) if verdicts else None


def _asks_by_words(turn: dict[str, Any], documents: dict[str, Any], names: Sequence[str], asked: Sequence[str]) -> bool:
    """Route (b) of `asks_spec_share` on a turn's provenance record."""
    evidence = turn.get("evidence") or {}
    return asks_spec_attribute(str(turn.get("question", "")), _evidence_titles(evidence, documents), _columns_read(evidence), names, asked)


def _evidence_titles(evidence: dict[str, Any], documents: dict[str, Any]) -> str:
    """The titles of the documents a turn's evidence is from (a need's plan may read several tables)."""
    ids = [evidence.get("table"), evidence.get("document"), *(evidence.get("tables") or [])]
    return " ".join(documents[i].title for i in dict.fromkeys(str(i) for i in ids if i) if i in documents)


def ablation_env(name: str) -> dict[str, str]:
    """BDDGEN_SECTION__KEY=false for a setting `section.key` (`implement.checks.roundtrip`: BDDGEN_IMPLEMENT__CHECKS__ROUNDTRIP)."""
    if "." not in name:
        raise SystemExit(f"--ablate takes a boolean setting as section.key (e.g. select.near_duplicates), not {name!r}")
    return {"BDDGEN_" + name.upper().replace(".", "__"): "false"}


SHOWN = ("selected", "focuses", "near_duplicate_pairs", "contradicting_specs", "on_spec_share", "every_name_share", "max_copied_words", "glued_syntheses",
         "code_worded_share", "table_turns", "table_recomputed_agree", "arithmetic_turns", "count_turns", "rule_turns", "rule_recomputed_agree", "off_limits_turns", "plan_turns",
         "plan_recomputed_agree", "plan_not_recomputable", "written", "turns",
         "seconds_per_written", "tokens_per_turn", "asks_spec_share", "identifier_questions", "written_share", "repeated_questions",
         "tokens_per_written_conversation", "seconds_per_written_conversation", "human_auc")


def _shown(figures: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in figures.items() if k != "audit"}


def print_table(results: dict[str, dict[str, Any]]) -> None:
    names = list(results)
    print(f"{'':34}" + "".join(f"{n[:24]:>26}" for n in names))
    for row in SHOWN:
        cells = []
        for n in names:
            value = results[n].get(row)
            shown = len(value) if isinstance(value, (list, dict)) and row != "focuses" else value
            cells.append(f"{str(shown)[:24]:>26}")
        print(f"{row:34}" + "".join(cells))
    for n in names:
        figures = results[n]
        print(f"\n== {n}")
        for title, other, why in figures["near_duplicate_pairs"]:
            print(f"  near-duplicate: {title!r} ~ {other!r} ({why})")
        for title, found in figures["contradicting_specs"].items():
            print(f"  Then not supported: {title!r}: {found}")
        for title in figures["off_spec"]:
            print(f"  off-spec conversation: {title!r}")
        print(f"  most copied question ({figures['max_copied_words']} words): {figures['most_copied_question']!r}")
        for reason, count in figures["drops"].items():
            print(f"  dropped {count} x {reason}")
        for title in figures.get("asks_spec_off", []):
            print(f"  first answerable turn not asking its spec: {title!r}")
        for question in figures.get("identifier_examples", []):
            print(f"  identifier question: {question!r}")
        for question in figures.get("repeated_examples", []):
            print(f"  asked again: {question!r}")
        for side, words in figures.get("human_telling_words", {}).items():
            if words:
                print(f"  words telling {side} questions apart: {', '.join(words)}")
        if "human_auc_missing" in figures:
            print(f"  human_auc not measured: {figures['human_auc_missing']}")


def print_audit(results: dict[str, dict[str, Any]]) -> None:
    for name, figures in results.items():
        print(f"\n== hand audit: {name} (read each against its row or sentence)")
        for number, turn in enumerate([t for t in figures["audit"] if t["type"] != "UNANSWERABLE"][:10], start=1):
            print(f"{number:>2}. [{turn['type']}] {turn['spec']}\n    Q: {turn['question']}\n    A: {turn['answer']}\n"
                  f"    evidence ({turn['document']}): {turn['evidence']}")


def ablated_selection(project: Path, options: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """The project's selection figures, and those of `select` rerun on a copy with the `--ablate` switch off
    (same candidates, same k): what a selection rule changes, without implementing again."""
    k = json.loads((project / "specs" / "selection.json").read_text(encoding="utf-8"))["k"]
    with tempfile.TemporaryDirectory(prefix="bench-ablate-") as folder:
        copy = Path(folder) / project.name
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns("project.lock*"))
        env = {"BDDGEN_RETRIEVAL__MAX_INDEXED_ROWS": str(options.max_indexed_rows), **ablation_env(options.ablate)}
        bddgen(["select", "--k", str(k)], copy, env)
        return selection_figures(project, project_models(project)), selection_figures(copy, project_models(copy))


def ablated_implementation(project: Path, options: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """The project's figures, and those of `implement` rerun on a copy (its conversations removed, its LM cache
    kept) with the `--ablate` switch off: what an implement rule changes on the same selected specs. The copy's
    turns record what a check switched off would have refused (`waived_turns`)."""
    with tempfile.TemporaryDirectory(prefix="bench-ablate-") as folder:
        copy = (options.keep or Path(folder)) / f"{project.name}-without-{options.ablate}"  # --keep: kept to read by hand
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(project, copy, ignore=shutil.ignore_patterns("project.lock*", "*.provenance.json", "runs"))
        strip_conversations(copy)
        env = {"BDDGEN_RETRIEVAL__MAX_INDEXED_ROWS": str(options.max_indexed_rows), **ablation_env(options.ablate)}
        seconds = {"implement": bddgen(["implement", "--n", str(options.n), "--turns", str(options.turns)], copy, env)}
        return measure(project, {}), measure(copy, seconds)


ABLATED = ("written", "turns", "on_spec_share", "table_recomputed_agree", "max_copied_words", "glued_syntheses", "code_worded_share")


def print_implementation_ablation(name: str, results: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    print(f"{'':14}" + "".join(f"{k[:22]:>24}" for k in ABLATED) + f"   (with the check -> without {name})")
    for corpus, (on, off) in results.items():
        print(f"{corpus[:14]:14}" + "".join(f"{f'{on[k]} -> {off[k]}':>24}" for k in ABLATED))
        print(f"{'':14}kept turns the check would have refused: {off['waived_turns'] or 'none'}")


def print_selection_ablation(results: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    print(f"{'':14}{'near-duplicate pairs':>24}{'focuses':>10}{'contradicting':>15}   (with the rule -> without)")
    for name, (on, off) in results.items():
        cells = [f"{len(on[key])} -> {len(off[key])}" for key in ("near_duplicate_pairs", "focuses", "contradicting_specs")]
        print(f"{name[:14]:14}{cells[0]:>24}{cells[1]:>10}{cells[2]:>15}")
        for title, other, why in off["near_duplicate_pairs"]:
            print(f"    without: {title!r} ~ {other!r} ({why})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", nargs="+", default=[*DEMO, *DEVSETS], choices=[*DEMO, *DEVSETS])
    parser.add_argument("--devsets", type=Path, default=ROOT.parent / "shared" / "devsets", help="folder holding tatqa/, chinook/ and wikidialog/")
    parser.add_argument("--m", type=int, default=6, help="candidate specs generated per corpus")
    parser.add_argument("--k", type=int, default=4, help="specs selected per corpus (the demo corpora's examples included)")
    parser.add_argument("--n", type=int, default=1, help="conversations per spec")
    parser.add_argument("--turns", type=int, default=5, help="turns per conversation")
    parser.add_argument("--max-indexed-rows", type=int, default=300,
                        help="[retrieval] max_indexed_rows: rows of a table embedded for search (answers still use every row; "
                             "the Chinook database's 15,607 rows would take hours to embed on 2 cores)")
    parser.add_argument("--ablate", default="", help="also measure with this boolean setting (section.key) off; with --measure, "
                        "select (a select.* switch) or implement (an implement.* switch, e.g. implement.checks.roundtrip) is rerun on a "
                        "copy of each project and the two compared")
    parser.add_argument("--keep", type=Path, default=None, help="keep the projects in this folder (with --measure and --ablate: the ablated copies)")
    parser.add_argument("--audit", action="store_true", help="print 10 answerable turns per corpus with their evidence")
    parser.add_argument("--json", action="store_true", help="print one JSON object: corpus -> figures")
    parser.add_argument("--measure", type=Path, nargs="+", default=[], metavar="PROJECT",
                        help="only measure these existing projects (built by an earlier --keep run, or your own)")
    options = parser.parse_args()
    if options.measure and options.ablate.startswith("implement."):
        ablated = {project.name: ablated_implementation(project.resolve(), options) for project in options.measure}
        if options.json:
            print(json.dumps({n: {"with": _shown(on), "without": _shown(off)} for n, (on, off) in ablated.items()}, indent=1))
        else:
            print_implementation_ablation(options.ablate, ablated)
        return
    if options.measure and options.ablate:
        print_selection_ablation({project.name: ablated_selection(project.resolve(), options) for project in options.measure})
        return
    if options.measure:
        # seconds per stage, when whoever built the project wrote them to seconds.json ({"implement": 812, ...})
        seconds_of = {p: json.loads((p / "seconds.json").read_text()) if (p / "seconds.json").is_file() else {} for p in options.measure}
        measured = {project.name: measure(project.resolve(), seconds_of[project]) for project in options.measure}
        print(json.dumps({n: {k: v for k, v in f.items() if k != "audit"} for n, f in measured.items()}, indent=1) if options.json else "")
        if not options.json:
            print_table(measured)
        if options.audit:
            print_audit(measured)
        return
    folder = options.keep or Path(tempfile.mkdtemp(prefix="bench-validity-"))
    base = {"BDDGEN_RETRIEVAL__MAX_INDEXED_ROWS": str(options.max_indexed_rows)}
    runs: list[tuple[str, dict[str, str]]] = [("", base)] + (
        [(f" (without {options.ablate})", {**base, **ablation_env(options.ablate)})] if options.ablate else []
    )
    results: dict[str, dict[str, Any]] = {}
    try:
        for name in options.corpus:
            corpus = corpus_path(name, options.devsets)
            first: Path | None = None
            for label, env in runs:
                try:
                    project, seconds = build(name + label.replace(" ", "_").replace("(", "").replace(")", ""), corpus, folder, options, env, first)
                    first = first or project
                    results[name + label] = measure(project, seconds)
                except CommandFailed as error:
                    results[name + label] = {"failed": str(error), **{k: None for k in SHOWN}, "near_duplicate_pairs": [], "contradicting_specs": {},
                                             "off_spec": [], "most_copied_question": "", "drops": {}, "audit": []}
                print(f"{name}{label}: " + json.dumps({k: v for k, v in results[name + label].items() if k != "audit"}), file=sys.stderr, flush=True)
    finally:
        if options.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    if options.json:
        print(json.dumps({n: {k: v for k, v in f.items() if k != "audit"} for n, f in results.items()}, indent=1))
    else:
        print_table(results)
    if options.audit:
        print_audit(results)


if __name__ == "__main__":
    main()
