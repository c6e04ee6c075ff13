"""Read one corpus file into documents; each reader reports every problem of its file.

Readers return `(documents, problems)`: a file with problems yields no document (a JSONL file
still yields its good lines), so the loader can go on and report the problems of every file.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, Sequence, Union

import yaml
from pydantic import BaseModel

from bddgen.corpus.formats import DOCUMENT_MODELS, TableFile, TableSidecar
from bddgen.corpus.nesting import TOO_DEEP, nesting_problem
from bddgen.corpus.validation import json_pointer, schema_problems
from bddgen.errors import InputError, Problem
from bddgen.corpus.rowstore import RowStoreWriter, default_store_dir, existing_store, sample, store_path
from bddgen.numbers import is_quantity, is_year, read_quantity
from bddgen.models import PolicyDocument, RowStore, TableDocument, TextDocument
from bddgen.retrieval.units import DEFAULT_MAX_INDEXED_ROWS

AnyDocument = Union[TextDocument, TableDocument, PolicyDocument]
Read = tuple[list[AnyDocument], list[Problem]]


def read_utf8(path: Path, location: str) -> str:
    """The file's text (a UTF-8 BOM is dropped); InputError naming line and byte offset otherwise."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise InputError(
            Problem(
                f"{location}:{line}",
                f"not UTF-8: byte 0x{raw[exc.start]:02X} at byte offset {exc.start}; "
                "save the file with UTF-8 encoding",
            )
        ) from exc


def read_yaml(path: Path, location: str) -> Any:
    """Parsed YAML; InputError naming the line of a syntax error, or saying the data is nested too
    deep or its aliases expand too far (`corpus/nesting.py`)."""
    text = read_utf8(path, location)
    try:
        data = yaml.safe_load(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{location}:{mark.line + 1}" if mark is not None else location
        column = f" (column {mark.column + 1})" if mark is not None else ""
        raise InputError(Problem(where, f"invalid YAML: {exc.problem or exc.context}{column}")) from exc
    except yaml.YAMLError as exc:
        raise InputError(Problem(location, f"invalid YAML: {exc}")) from exc
    except RecursionError as exc:
        raise InputError(Problem(location, TOO_DEEP)) from exc
    return _shallow(data, location, yaml_aliases=True)


def _shallow(data: Any, location: str, yaml_aliases: bool = False) -> Any:
    """`data` when it is nested at most MAX_NESTING levels (and, from YAML, not an alias bomb);
    InputError otherwise."""
    problem = nesting_problem(data, yaml_aliases)
    if problem is not None:
        raise InputError(Problem(location, problem))
    return data


def read_model(model: type[BaseModel], data: Any, location: str) -> BaseModel:
    """`data` as `model` after checking it against the model's JSON Schema."""
    problems = schema_problems(model, data, location)
    if problems:
        raise InputError(problems)
    return model.model_validate(data)


def humanize(stem: str) -> str:
    """A title from a file name: `award_winners` -> "Award winners" ("Untitled" for a name of only separators)."""
    words = stem.replace("_", " ").replace("-", " ").split()
    text = " ".join(words)
    return text[:1].upper() + text[1:] if text else "Untitled"


def markdown_document(path: Path, location: str, doc_id: str, kind: str) -> Read:
    """A text or policy document: title from the first line `# Title`, passage from the rest."""
    try:
        text = read_utf8(path, location)
    except InputError as exc:
        return [], exc.problems
    lines = text.splitlines()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        return [], [Problem(location, "empty document: write a '# Title' line and the text below it, or delete the file")]
    heading = lines[first].strip()
    title = heading[2:].strip().rstrip("#").strip() if heading.startswith("# ") else ""
    if not title:
        return [], [Problem(f"{location}:{first + 1}", "missing title: the first line must be a '# Title' heading")]
    passage = "\n".join(lines[first + 1 :]).strip()
    if not passage:
        return [], [Problem(f"{location}:{first + 1}", f"empty document: no text below the title {title!r}")]
    model = DOCUMENT_MODELS[kind]
    return [model(id=doc_id, title=title, passage=passage, source=location)], []


def _is_number(name: str) -> bool:
    """A column name that is an amount, a rate or a plain number ('1,250', '$ 35', '12%'); one with a scale
    word is a unit ('2019 €m'), a dash no number."""
    quantity = read_quantity(name)
    return quantity is not None and not quantity.nil and not quantity.scale


def header_problems(headers: list[str], rows: Sequence[Sequence[str]] = (), declared: bool = False) -> list[str]:
    """Blank, repeated or numeric column names (a table's columns are looked up by name; a number
    where a name belongs means the first row is data and the header row is missing)."""
    return number_name_problems(headers, rows, declared) + name_problems(headers)


def number_name_problems(headers: Sequence[str], rows: Sequence[Sequence[str]], declared: bool) -> list[str]:
    """The first number among the column names, unless the table's sidecar declares its first row a header
    (`declared`) or the rows below show it is one (see `years_are_column_names`)."""
    numbers = [name for name in headers if _is_number(name)]
    if not numbers or declared or years_are_column_names(headers, rows):
        return []
    return [
        f"the first row holds {numbers[0]!r}, a number, where column names belong: it looks like data; add a header row "
        "naming the columns (or, when these numbers are the column names, write `header: true` in the table's .yaml)"
    ]


def name_problems(headers: Sequence[str]) -> list[str]:
    """Blank or repeated column names."""
    found = [f"column {i} has no name" for i, name in enumerate(headers, 1) if not name.strip()]
    repeated = sorted({name for name in headers if name.strip() and headers.count(name) > 1})
    return found + [f"column name {name!r} appears more than once" for name in repeated]


def years_are_column_names(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> bool:
    """Whether the rows below show that a first row holding numbers is a header, as financial tables are
    written (`item,2019,2018`): every number in it is a different year, the column under each year holds
    something other than years (amounts, rates, dashes), and a column it does not head with a number
    holds text labels. A row of data (`Ashvale,1899,12`) fails: 12 is no year, or its years sit over years."""
    numbers = [n for n, name in enumerate(headers) if _is_number(name)]
    if not rows or any(not is_year(headers[n]) for n in numbers) or len({headers[n].strip() for n in numbers}) < len(numbers):
        return False

    def column(n: int) -> list[str]:
        return [row[n].strip() for row in rows if n < len(row) and row[n].strip()]

    under_years = all(any(not is_year(cell) for cell in column(n)) for n in numbers)
    labels = any(any(ch.isalpha() for ch in cell) and not is_quantity(cell) for n in range(len(headers)) if n not in numbers for cell in column(n))
    return under_years and labels


MAX_ROW_PROBLEMS = 100  # not a setting: the length of an error message
"""Rows of one CSV file reported one by one; the rest are counted in one more problem."""


def csv_table(
    path: Path, location: str, doc_id: str, sidecar: Path | None, max_rows: int = DEFAULT_MAX_INDEXED_ROWS, store_dir: Path | None = None
) -> Read:
    """A table from a CSV file with a header row; title and description from its YAML sidecar.

    The file is read as a stream. Up to `max_rows` data rows the table is held in memory; a longer
    one goes, in batches, into a row store (`corpus/rowstore.py`) and the document holds an evenly
    spaced sample of `max_rows` rows. An unchanged file is read from its store again."""
    problems: list[Problem] = []
    title, description, declared = humanize(path.stem), "", False
    if sidecar is not None:
        side_location = f"{Path(location).parent.as_posix()}/{sidecar.name}"
        try:
            meta = read_model(TableSidecar, read_yaml(sidecar, side_location), side_location)
            title, description, declared = meta.title, meta.description, meta.header  # type: ignore[attr-defined]
        except InputError as exc:
            problems += exc.problems
    target = store_path(store_dir or default_store_dir(), path)
    stored = existing_store(target)
    if stored is not None and stored[0].rows > max_rows and not problems:
        store, headers = stored
        table = TableDocument(
            id=doc_id, title=title, description=description, headers=headers, rows=sample(store, len(headers), max_rows), source=location, store=store
        )
        return [table], []
    read = _stream_csv(path, location, target, max_rows, declared)
    if isinstance(read, list):
        return [], problems + read
    headers, rows, store = read
    if problems:
        return [], problems
    table = TableDocument(id=doc_id, title=title, description=description, headers=headers, rows=rows, source=location, store=store)
    return [table], []


def _stream_csv(
    path: Path, location: str, target: Path, max_rows: int, declared: bool = False
) -> list[Problem] | tuple[list[str], list[list[str]], RowStore | None]:
    """(headers, rows held, store of all rows or None) of a CSV file, or its problems. Numbers among the
    column names are judged on the first `max_rows` rows below them (`number_name_problems`)."""
    problems: list[Problem] = []
    headers: list[str] | None = None
    header_line = 1
    first_rows: list[list[str]] = []
    held: list[list[str]] = []
    writer: RowStoreWriter | None = None
    body_rows, bad_rows = 0, 0
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle)
            start = 1
            try:
                for row in reader:
                    if any(cell.strip() for cell in row):
                        if headers is None:
                            headers, header_line = row, start
                            problems += [Problem(f"{location}:{start}", message) for message in name_problems(headers)]
                        elif len(row) != len(headers):
                            bad_rows += 1
                            if bad_rows <= MAX_ROW_PROBLEMS:
                                problems.append(Problem(f"{location}:{start}", f"expected {len(headers)} columns as in the header row, got {len(row)}"))
                        else:
                            body_rows += 1
                            if len(first_rows) < max_rows:
                                first_rows.append(row)
                            if writer is not None:
                                writer.add(row)
                            elif not problems:
                                held.append(row)
                                if len(held) > max_rows:
                                    writer = RowStoreWriter(target, headers)
                                    for kept in held:
                                        writer.add(kept)
                                    held = []
                    start = reader.line_num + 1
            except csv.Error as exc:
                problems.append(Problem(f"{location}:{reader.line_num}", f"invalid CSV: {exc}"))
                return _discarded(writer, problems)
    except UnicodeDecodeError:
        try:
            read_utf8(path, location)  # finds the offending byte's line and offset
        except InputError as exc:
            return _discarded(writer, exc.problems)
        raise
    if bad_rows > MAX_ROW_PROBLEMS:
        problems.append(Problem(location, f"{bad_rows - MAX_ROW_PROBLEMS} more rows have a different number of columns than the header row"))
    if headers is None:
        return _discarded(writer, [Problem(location, "empty document: write a header row and at least one data row")])
    problems[:0] = [Problem(f"{location}:{header_line}", message) for message in number_name_problems(headers, first_rows, declared)]
    if not body_rows and not bad_rows:
        problems.append(Problem(location, "empty table: a header row but no data rows"))
    if problems:
        return _discarded(writer, problems)
    if writer is None:
        return headers, held, None
    store = writer.finish()
    return headers, sample(store, len(headers), max_rows), store


def _discarded(writer: RowStoreWriter | None, problems: list[Problem]) -> list[Problem]:
    if writer is not None:
        writer.discard()
    return problems


def _table_shape_problems(table: TableDocument, location: str) -> list[Problem]:
    """Header and row-length problems of a table read from JSON, as JSON pointers."""
    found = [Problem(location, f"/headers: {message}") for message in header_problems(table.headers, table.rows)]
    if not table.rows:
        found.append(Problem(location, "/rows: empty table: add at least one row"))
    found += [
        Problem(location, f"{json_pointer(['rows', i])}: expected {len(table.headers)} cells as in headers, got {len(row)}")
        for i, row in enumerate(table.rows)
        if len(row) != len(table.headers)
    ]
    return found


def parse_json(text: str, location: str, line: int | None = None) -> Any:
    """Parsed JSON (of a file, or of its line `line`); InputError naming the line of a syntax error,
    or saying the data is nested more than MAX_NESTING levels deep."""
    where = location if line is None else f"{location}:{line}"
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(Problem(f"{location}:{line or exc.lineno}", f"invalid JSON: {exc.msg} (column {exc.colno})")) from exc
    except RecursionError as exc:
        raise InputError(Problem(where, TOO_DEEP)) from exc
    return _shallow(data, where)


def json_table(path: Path, location: str, doc_id: str) -> Read:
    """A table from tables/<name>.json: an object with title, description, headers and rows."""
    try:
        data = read_model(TableFile, parse_json(read_utf8(path, location), location), location)
    except InputError as exc:
        return [], exc.problems
    table = TableDocument(id=doc_id, source=location, **data.model_dump())
    problems = _table_shape_problems(table, location)
    return ([], problems) if problems else ([table], [])


def jsonl_documents(path: Path, location: str) -> Read:
    """Documents of a bulk-import JSONL file: one JSON object per line, `kind` says which model."""
    try:
        text = read_utf8(path, location)
    except InputError as exc:
        return [], exc.problems
    documents: list[AnyDocument] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{location}:{number}"
        try:
            record = parse_json(line, location, number)
        except InputError as exc:
            problems += exc.problems
            continue
        if not isinstance(record, dict):
            problems.append(Problem(where, "/: expected a JSON object with a 'kind'"))
            continue
        kind = record.get("kind")
        if kind not in DOCUMENT_MODELS:
            reason = "required" if "kind" not in record else f"unknown kind {kind!r}"
            problems.append(Problem(where, f"/kind: {reason}; one of: {', '.join(DOCUMENT_MODELS)}"))
            continue
        record = {**record, "source": where}
        try:
            document = read_model(DOCUMENT_MODELS[kind], record, where)
        except InputError as exc:
            problems += exc.problems
            continue
        shape = _table_shape_problems(document, where) if isinstance(document, TableDocument) else []
        problems += shape
        if not shape:
            documents.append(document)  # type: ignore[arg-type]
    if not documents and not problems:
        problems.append(Problem(location, "empty document: no records; write one JSON object per line"))
    return documents, problems
