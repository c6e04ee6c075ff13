"""Nested JSON/JSONL records as linked tables: scalars to columns, objects flattened with dotted
names, lists of objects into child tables whose rows point back to their parent row.

A small normaliser of our own rather than pandas.json_normalize: json_normalize flattens one
list per call and leaves the keys to the caller, while bddgen needs every list split into its own
table with a declared foreign key, cells as strings, and problems named by file and record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bddgen.corpus.readers import Read, humanize, json_table, parse_json, read_utf8
from bddgen.errors import InputError, Problem
from bddgen.models import ForeignKey, TableDocument
from bddgen.text import singular

LIST_SEPARATOR = "; "
"""Joins a list of scalars in one cell (the graph and table queries split cells on ';')."""
ROW_KEY = "row"
"""The synthesised key column of a table whose records carry no identifying field."""


def is_table_file(data: Any) -> bool:
    """True for the tables/<name>.json table format (an object with headers and rows), not records."""
    return isinstance(data, dict) and ("headers" in data or "rows" in data)


def cell(value: Any) -> str:
    """A scalar as a table cell: null is empty, booleans lower-case, numbers as JSON writes them."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _is_record_list(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(item, dict) for item in value)


@dataclass
class _Table:
    """A table being built: columns in first-seen order, rows as column -> cell."""

    name: str
    parent: "_Table | None" = None
    list_field: str = ""
    link_column: str = ""
    columns: list[str] = field(default_factory=list)
    rows: list[dict[str, str]] = field(default_factory=list)
    children: dict[str, "_Table"] = field(default_factory=dict)
    pending: list[tuple[int, str, list[dict[str, Any]]]] = field(default_factory=list)

    @property
    def short_name(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    def add_record(self, record: dict[str, Any], link: str = "") -> None:
        row: dict[str, str] = {self.link_column: link} if self.link_column else {}
        lists: list[tuple[str, list[dict[str, Any]]]] = []
        _flatten(record, "", row, lists)
        for column in row:
            if column not in self.columns:
                self.columns.append(column)
        self.rows.append(row)
        self.pending += [(len(self.rows) - 1, column, items) for column, items in lists]


def _flatten(record: dict[str, Any], prefix: str, row: dict[str, str], lists: list[tuple[str, list[dict[str, Any]]]]) -> None:
    """Scalars and nested objects of `record` into `row`; lists of objects into `lists`."""
    for name, value in record.items():
        column = f"{prefix}{name}"
        if isinstance(value, dict) and value:
            _flatten(value, f"{column}.", row, lists)
        elif isinstance(value, dict):
            row.setdefault(column, "")
        elif _is_record_list(value):
            lists.append((column, value))
        elif value == []:
            continue  # no items: neither a cell nor child rows (other records say which it is)
        elif isinstance(value, list):
            row[column] = LIST_SEPARATOR.join(json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else cell(v) for v in value)
        else:
            row.setdefault(column, cell(value))


def _choose_key(table: _Table) -> str:
    """The identifying column: `id`, `<name>_id` or another `*id` column with unique, non-empty values."""
    one = singular(table.short_name)
    preferred = ["id", f"{one}_id", f"{one}id", KEY_COLUMN]
    candidates = [c for c in preferred if c in table.columns]
    candidates += [c for c in table.columns if c.lower().endswith("id") and "." not in c and c not in candidates]
    for column in candidates:
        values = [row.get(column, "") for row in table.rows]
        if all(values) and len(set(values)) == len(values):
            return column
    return ""


def _resolve(table: _Table) -> str:
    """The table's key (synthesised when none fits and children need one); pending lists become child tables."""
    key = _choose_key(table)
    if not key and table.pending:
        key = ROW_KEY if ROW_KEY not in table.columns else f"_{ROW_KEY}"
        table.columns.insert(0, key)
        for number, row in enumerate(table.rows, 1):
            row[key] = str(number)
    for index, column, items in table.pending:
        child = table.children.get(column)
        if child is None:
            item_fields = {name for item in items for name in item}
            generic = key in item_fields or key in (ROW_KEY, f"_{ROW_KEY}", "id", KEY_COLUMN)
            link = f"{table.short_name}.{key}" if generic else key
            child = table.children[column] = _Table(name=f"{table.name}.{column}", parent=table, list_field=column, link_column=link)
        for item in items:
            child.add_record(item, table.rows[index][key])
    table.pending.clear()
    return key


def records_to_tables(records: list[dict[str, Any]], name: str, doc_prefix: str, location: str) -> list[TableDocument]:
    """Linked tables of `records`: `<doc_prefix><name>`, then one child table per list-of-objects field."""
    root = _Table(name=name)
    for record in records:
        root.add_record(record)
    if not root.columns:
        raise ValueError("the records have no fields with values")
    documents: list[TableDocument] = []
    queue = [root]
    keys: dict[str, str] = {}
    while queue:
        table = queue.pop(0)
        keys[table.name] = key = _resolve(table)
        foreign = []
        description = ""
        if table.parent is not None:
            parent_id = f"{doc_prefix}{table.parent.name}"
            foreign = [ForeignKey(column=table.link_column, table=parent_id, references=keys[table.parent.name])]
            description = f"The {table.list_field} of each {table.parent.short_name} record ({table.link_column} names the {table.parent.short_name} row)."
        documents.append(
            TableDocument(
                id=f"{doc_prefix}{table.name}",
                title=humanize(table.name.replace(".", " ")),
                description=description,
                headers=list(table.columns),
                rows=[[row.get(column, "") for column in table.columns] for row in table.rows],
                source=location,
                key=key,
                foreign_keys=foreign,
            )
        )
        queue += table.children.values()
    return documents


KEY_COLUMN = "key"
"""The column that keeps the keys of a JSON object of records (`{"HAT001": {...}, ...}`)."""


def _keyed_records(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Records of a JSON object keyed by id; the keys become a column unless every record holds its own."""
    def holds_key(key: str, record: dict[str, Any]) -> bool:
        return any(isinstance(v, (str, int)) and cell(v) == key for v in record.values())

    if all(holds_key(key, record) for key, record in data.items()):
        return list(data.values())
    return [{KEY_COLUMN: key, **record} for key, record in data.items()]


def _json_records(data: Any, location: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    if isinstance(data, list):
        problems = [
            Problem(location, f"/{i}: expected a JSON object (one record), got {type(item).__name__}")
            for i, item in enumerate(data)
            if not isinstance(item, dict)
        ]
        return [item for item in data if isinstance(item, dict)], problems
    if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
        return _keyed_records(data), []
    return [], [
        Problem(
            location,
            "not a table: write a list of JSON objects (records), an object of records keyed by id, "
            "or a table object with 'headers' and 'rows'",
        )
    ]


def _jsonl_records(text: str, location: str) -> tuple[list[dict[str, Any]], list[Problem]]:
    records: list[dict[str, Any]] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = parse_json(line, location, number)
        except InputError as exc:
            problems += exc.problems
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            problems.append(Problem(f"{location}:{number}", f"expected a JSON object (one record), got {type(record).__name__}"))
    return records, problems


def records_file(path: Path, location: str, doc_prefix: str) -> Read:
    """Linked tables of a records file (tables/<name>.json or .jsonl); a file with problems yields none.

    A tables/<name>.json holding `headers` and `rows` is the plain table format and read as such.
    """
    try:
        text = read_utf8(path, location)
    except InputError as exc:
        return [], exc.problems
    if path.suffix == ".jsonl":
        records, problems = _jsonl_records(text, location)
    else:
        try:
            data = parse_json(text, location)
        except InputError as exc:
            return [], exc.problems
        if is_table_file(data):
            return json_table(path, location, f"{doc_prefix}{path.stem}")
        records, problems = _json_records(data, location)
    if not records and not problems:
        problems.append(Problem(location, "empty table: no records; write at least one JSON object"))
    if problems:
        return [], problems
    try:
        return list(records_to_tables(records, path.stem, doc_prefix, location)), []
    except ValueError as exc:
        return [], [Problem(location, f"{exc}: give each record at least one field")]
