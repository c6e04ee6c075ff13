"""Load a corpus folder: system.yaml, text/*.md, tables/*.csv|json, policies/*.md, *.jsonl."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from bddgen.corpus.documents import DOCUMENT_SUFFIXES, document_file
from bddgen.corpus.language import detect_language
from bddgen.corpus.readers import AnyDocument, Read, csv_table, jsonl_documents, markdown_document, read_model, read_yaml
from bddgen.corpus.records import records_file
from bddgen.corpus.sqlite import DATABASE_SUFFIXES, database_tables
from bddgen.errors import InputError, Problem
from bddgen.models import Corpus, SystemDescription
from bddgen.project import Project
from bddgen.retrieval.units import DEFAULT_MAX_INDEXED_ROWS

SYSTEM_FILE = "system.yaml"
FOLDER_SUFFIXES: dict[str, tuple[str, ...]] = {
    "text": (".md", *DOCUMENT_SUFFIXES),
    "tables": (".csv", ".json", ".jsonl", *DATABASE_SUFFIXES, ".yaml"),
    "policies": (".md", *DOCUMENT_SUFFIXES),
}
"""Sub-folder -> the file types it may hold (a .yaml is the sidecar of a .csv or a database)."""


SQLITE_SIDE_SUFFIXES = ("-wal", "-shm", "-journal")
"""SQLite's own files beside a database in use (write-ahead log, its index, rollback journal): the
database is read through SQLite, which reads them too."""
_LOOP = "a symbolic link that leads back to itself (a link loop): remove it or point it at a file"


def _unreadable(entry: Path, root: Path) -> str | None:
    """Why `entry` is not read: a link loop, a link to nothing, a link out of the corpus folder `root`,
    or neither a regular file nor a folder (a named pipe, a socket, a device); None to read it."""
    try:
        target = entry.resolve(strict=True)
    except FileNotFoundError:
        return f"a link to {_link_target(entry)}, which does not exist: restore the file or remove the link"
    except RuntimeError:  # a link loop, before Python 3.13
        return _LOOP
    except OSError as exc:
        return _LOOP if exc.errno == errno.ELOOP else f"cannot be read ({exc.strerror}); check its permissions"
    if not target.is_relative_to(root.resolve()):
        return f"a link to {target}, outside the corpus folder: not followed; copy the file in instead"
    if not (target.is_file() or target.is_dir()):
        return "not a regular file (a named pipe, a socket or a device): only files are read; remove it"
    return None


def _link_target(link: Path) -> str:
    try:
        return os.readlink(link)
    except OSError:
        return str(link)


def _sqlite_side_file(name: str, databases: set[str]) -> bool:
    """True for SQLite's own file (`shop.sqlite-wal`) beside a database (`shop.sqlite`) of the folder."""
    return any(name.endswith(suffix) and name[: -len(suffix)] in databases for suffix in SQLITE_SIDE_SUFFIXES)


def _visible_files(folder: Path, root: Path, problems: list[Problem]) -> list[Path]:
    """Files of a corpus sub-folder in name order; anything bddgen would not read is a problem."""
    if not folder.is_dir():
        return []
    allowed = FOLDER_SUFFIXES[folder.name]
    entries = sorted(folder.iterdir())
    databases = {entry.name for entry in entries if entry.suffix in DATABASE_SUFFIXES}
    files: list[Path] = []
    for entry in entries:
        if entry.name.startswith(".") or _sqlite_side_file(entry.name, databases):
            continue
        location = entry.relative_to(root).as_posix()
        reason = _unreadable(entry, root)
        if reason is not None:
            problems.append(Problem(location, reason))
        elif entry.is_dir():
            problems.append(Problem(location, f"sub-folders are not read; move its files into {folder.name}/"))
        elif entry.suffix not in allowed:
            problems.append(Problem(location, f"not read: {folder.name}/ holds {', '.join('*' + s for s in allowed)} files"))
        else:
            files.append(entry)
    return files


def _read_system(root: Path) -> tuple[SystemDescription | None, list[Problem]]:
    path = root / SYSTEM_FILE
    if not path.is_symlink() and not path.exists():
        return None, [Problem(SYSTEM_FILE, "missing: describe the assistant (name, purpose, ...) in system.yaml; `bddgen init` writes a template")]
    reason = _unreadable(path, root) or ("a folder: system.yaml must be a file" if path.is_dir() else None)
    if reason is not None:
        return None, [Problem(SYSTEM_FILE, reason)]
    try:
        system = read_model(SystemDescription, read_yaml(path, SYSTEM_FILE), SYSTEM_FILE)
    except InputError as exc:
        return None, exc.problems
    return system, []  # type: ignore[return-value]


def _read_documents(root: Path, problems: list[Problem], limits: TableLimits) -> tuple[list[Read], int]:
    """Every document file's result, and how many document files there were."""
    results: list[Read] = []
    count = 0
    for kind, folder in (("text", "text"), ("policy", "policies")):
        for path in _visible_files(root / folder, root, problems):
            count += 1
            location = path.relative_to(root).as_posix()
            if path.suffix == ".md":
                results.append(markdown_document(path, location, f"{folder}/{path.stem}", kind))
            else:
                results.append(document_file(path, location, folder, kind))
    tables = _visible_files(root / "tables", root, problems)
    readable = set(tables)
    stems_with_csv = {p.stem for p in tables if p.suffix == ".csv"}
    stems_with_database = {p.stem for p in tables if p.suffix in DATABASE_SUFFIXES}
    for path in tables:
        location = path.relative_to(root).as_posix()
        if path.suffix == ".yaml":
            if path.stem not in stems_with_csv | stems_with_database:
                problems.append(Problem(location, f"a table sidecar without tables/{path.stem}.csv; rename or remove it"))
            continue
        count += 1
        sidecar = path.with_suffix(".yaml") if path.with_suffix(".yaml") in readable else None
        if path.suffix == ".csv":
            results.append(csv_table(path, location, f"tables/{path.stem}", sidecar, limits.max_rows, limits.store_dir))
        elif path.suffix in DATABASE_SUFFIXES:
            results.append(database_tables(path, location, sidecar, limits.max_rows, limits.store_dir))
        else:
            results.append(records_file(path, location, "tables/"))
    for path in sorted(root.glob("*.jsonl")):
        reason = _unreadable(path, root) or ("a folder: a bulk-import file must be a JSONL file" if path.is_dir() else None)
        if reason is not None:
            problems.append(Problem(path.name, reason))
            continue
        count += 1
        results.append(jsonl_documents(path, path.name))
    return results, count


def _duplicate_problems(documents: list[AnyDocument]) -> list[Problem]:
    first_source: dict[str, str] = {}
    problems: list[Problem] = []
    for document in documents:
        if document.id in first_source:
            problems.append(
                Problem(document.source, f"duplicate document id {document.id!r}, also in {first_source[document.id]}; rename one of them")
            )
        else:
            first_source[document.id] = document.source
    return problems


@dataclass(frozen=True)
class TableLimits:
    """How large tables are read: rows held in memory (a longer table is sampled and kept whole in a
    row store, see `corpus/rowstore.py`) and the folder of those stores (None: a temporary one)."""

    max_rows: int = DEFAULT_MAX_INDEXED_ROWS
    store_dir: Path | None = None


def holds_documents(path: Path) -> bool:
    """Whether the corpus folder holds anything read as documents (an entry of text/, tables/ or policies/, a *.jsonl
    file): the corpus of a project testing an agent (`bddgen init` without `--corpus`) holds none, and needs none."""
    folders = [path / name for name in FOLDER_SUFFIXES if (path / name).is_dir()]
    return any(not entry.name.startswith(".") for folder in folders for entry in folder.iterdir()) or any(path.glob("*.jsonl"))


def load_corpus(path: Path, limits: TableLimits = TableLimits()) -> Corpus:
    """The corpus in folder `path`; InputError listing every problem of every file otherwise."""
    root = Path(path)
    title = f"invalid corpus {path}"
    if not root.is_dir():
        raise InputError(Problem(str(path), "no such folder: give the folder holding system.yaml"), title=title)
    system, problems = _read_system(root)
    results, file_count = _read_documents(root, problems, limits)
    documents = [document for found, _ in results for document in found]
    for _, file_problems in results:
        problems += file_problems
    problems += _duplicate_problems(documents)
    if file_count == 0:
        problems.append(
            Problem(str(path), "no documents: add text/*.md, tables/*.csv or *.json, policies/*.md, or *.jsonl files")
        )
    if problems or system is None:
        raise InputError(problems, title=title)
    language = system.language or detect_language(documents)
    return Corpus(root=str(root.resolve()), language=language, system=system, documents=documents)


def load_project_corpus(project: Project) -> Corpus:
    """The project's corpus as every stage reads it: a big table's rows beyond `[retrieval] max_indexed_rows` in the
    project's row store."""
    limits = TableLimits(max_rows=project.settings.retrieval.max_indexed_rows, store_dir=project.state_path / "tables")
    return load_corpus(project.corpus_path, limits)
