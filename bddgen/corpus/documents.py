"""PDF, DOCX, PPTX, HTML and plain-text files under text/ or policies/, converted with markitdown.

Each file becomes one document per page (PDF), slide (PPTX) or section (headings of DOCX, HTML,
TXT), its id carrying the anchor a turn cites (`text/manual#page-3`, `policies/pets#cabin`).
Tables found inside a document become table documents (`tables/<name>.table-1`).
"""

from __future__ import annotations

import re
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from bddgen.corpus.formats import DOCUMENT_MODELS
from bddgen.corpus.readers import AnyDocument, Read, humanize, read_utf8
from bddgen.errors import InputError, Problem
from bddgen.models import TableDocument

DOCUMENT_SUFFIXES = (".pdf", ".docx", ".pptx", ".html", ".htm", ".txt")
CONVERTED_SUFFIXES = (".pdf", ".docx", ".pptx", ".html", ".htm")
TITLE_LINE_CHARS = 80  # a one-line paragraph above the first heading this short is a Word document's title
"""Files that need the converter (bddgen[documents]); plain text is read as it is."""

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_SLIDE = re.compile(r"^<!--\s*Slide number:\s*(\d+)\s*-->\s*$", re.M)
_TABLE_SEPARATOR = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


@dataclass(frozen=True)
class Section:
    """A part of a converted document: its anchor (`page-3`, `cabin`; '' for a whole file) and text."""

    anchor: str
    heading: str
    text: str


def slug(text: str) -> str:
    """An anchor from a heading, as Markdown renderers make them: `Cabin bags (EU)` -> `cabin-bags-eu`."""
    return re.sub(r"[^\w]+", "-", text.lower(), flags=re.UNICODE).strip("-_") or "section"


@lru_cache(maxsize=1)
def _converter() -> Any:
    """One markitdown converter per process (it loads a file-type model when built)."""
    from markitdown import MarkItDown

    return MarkItDown(enable_plugins=False)


def convert(path: Path) -> tuple[str, str]:
    """The file as Markdown and its title ('' when the file has none), through markitdown."""
    try:
        converter = _converter()
    except ImportError as exc:
        raise InputError(
            Problem(path.name, "reading PDF, DOCX, PPTX and HTML needs the converter: pip install 'bddgen[documents]'")
        ) from exc
    result = converter.convert(str(path))
    return result.markdown or "", (result.title or "").strip()


def signature_problem(path: Path) -> str:
    """Why the file is not what its extension says ('' when it looks right): the converter would read it as text."""
    head = path.read_bytes()[:5]
    if path.suffix == ".pdf" and not head.startswith(b"%PDF-"):
        return "not a PDF file (it does not start with %PDF-); export it as PDF again"
    if path.suffix in (".docx", ".pptx") and not zipfile.is_zipfile(path):
        return f"not a {path.suffix[1:].upper()} file (not a zip archive); open and save it again in Office format"
    return ""


def pages(markdown: str) -> list[Section]:
    """A PDF's pages (the converter separates them with form feeds)."""
    return [Section(f"page-{n}", f"page {n}", text.strip()) for n, text in enumerate(markdown.split("\f"), 1)]


def slides(markdown: str) -> list[Section]:
    """A presentation's slides (the converter marks each with `<!-- Slide number: N -->`)."""
    parts = _SLIDE.split(markdown)
    return [Section(f"slide-{number}", f"slide {number}", text.strip()) for number, text in zip(parts[1::2], parts[2::2])]


def sections(markdown: str) -> list[Section]:
    """Sections under the Markdown headings; text before the first heading is the `intro`."""
    found: list[Section] = []
    anchor, heading, lines = "", "", []
    used: dict[str, int] = {}

    def close() -> None:
        if "\n".join(lines).strip() or heading:
            found.append(Section(anchor, heading, "\n".join(lines).strip()))

    for line in markdown.splitlines():
        match = _HEADING.match(line)
        if not match:
            lines.append(line)
            continue
        close()
        heading = match.group(2).strip()
        base = slug(heading)
        used[base] = used.get(base, 0) + 1
        anchor = base if used[base] == 1 else f"{base}-{used[base]}"
        lines = []
    close()
    if len(found) > 1 and found[0].anchor == "":
        found[0] = Section("intro", "introduction", found[0].text)
    return found


def _cells(line: str) -> list[str]:
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", inner)]


def _unique_headers(headers: list[str]) -> list[str]:
    named = [header or f"column {i}" for i, header in enumerate(headers, 1)]
    seen: dict[str, int] = {}
    unique = []
    for header in named:
        seen[header] = seen.get(header, 0) + 1
        unique.append(header if seen[header] == 1 else f"{header} ({seen[header]})")
    return unique


def split_tables(text: str) -> tuple[str, list[list[list[str]]]]:
    """The text without its Markdown pipe tables, and each table as rows of cells (header row first)."""
    lines = text.splitlines()
    kept: list[str] = []
    tables: list[list[list[str]]] = []
    i = 0
    while i < len(lines):
        if lines[i].lstrip().startswith("|") and i + 1 < len(lines) and _TABLE_SEPARATOR.match(lines[i + 1].strip()):
            rows = [_cells(lines[i])]
            i += 2
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            tables.append(rows)
            continue
        kept.append(lines[i])
        i += 1
    return "\n".join(kept).strip(), tables


def table_document(rows: list[list[str]], doc_id: str, title: str, source: str) -> TableDocument | None:
    """A table document from a table's rows; an empty header row (as Word tables have) takes the next row."""
    rows = [row for row in rows if any(cell.strip() for cell in row)]
    if rows and len(rows) > 1 and not any(cell.strip() for cell in rows[0]):
        rows = rows[1:]
    if len(rows) < 2:
        return None
    headers = _unique_headers(rows[0])
    body = [(row + [""] * len(headers))[: len(headers)] for row in rows[1:]]
    return TableDocument(id=doc_id, title=title, headers=headers, rows=body, source=source)


def _pdf_tables(path: Path) -> dict[str, list[list[list[str]]]]:
    """Tables of each PDF page (anchor -> tables), found by pdfplumber from ruling lines and text layout."""
    try:
        import pdfplumber
    except ImportError:
        return {}
    with pdfplumber.open(path) as pdf:
        return {
            f"page-{number}": [[[cell or "" for cell in row] for row in table] for table in page.extract_tables()]
            for number, page in enumerate(pdf.pages, 1)
        }


def document_file(path: Path, location: str, folder: str, kind: str) -> Read:
    """The documents (and tables) of one PDF, DOCX, PPTX, HTML or TXT file."""
    damaged = signature_problem(path)
    if damaged:
        return [], [Problem(location, damaged)]
    try:
        if path.suffix in CONVERTED_SUFFIXES:
            markdown, title = convert(path)
        else:
            markdown, title = read_utf8(path, location), ""
    except InputError as exc:
        return [], [Problem(location, p.message) for p in exc.problems]
    except Exception as exc:  # the converter's own errors: a damaged or password-protected file
        return [], [Problem(location, f"could not convert ({type(exc).__name__}: {exc}); open and save the file again, or export it as PDF")]
    if path.suffix == ".pdf":
        parts, extra_tables = pages(markdown), _pdf_tables(path)
    elif path.suffix == ".pptx":
        parts, extra_tables = slides(markdown), {}
    else:
        parts, extra_tables = sections(markdown), {}
        if not title and parts and parts[0].anchor == "intro" and "\n" not in parts[0].text and len(parts[0].text) <= TITLE_LINE_CHARS:
            title, parts = parts[0].text, parts[1:]  # a Word title line above the first heading
    doc_title = title or humanize(path.stem)
    return _documents(parts, extra_tables, doc_title, location, f"{folder}/{path.stem}", path.stem, kind)


def _documents(
    parts: list[Section], extra_tables: dict[str, list[list[list[str]]]], doc_title: str, location: str, doc_id: str, stem: str, kind: str
) -> Read:
    documents: list[AnyDocument] = []
    model = DOCUMENT_MODELS[kind]
    table_number = 0
    for part in parts:
        passage, tables = split_tables(part.text)
        anchor = f"#{part.anchor}" if part.anchor else ""
        title = f"{doc_title}, {part.heading}" if part.anchor.startswith(("page-", "slide-")) else (
            f"{doc_title}: {part.heading}" if part.heading and part.heading != doc_title else doc_title
        )
        if passage:
            documents.append(model(id=f"{doc_id}{anchor}", title=title, passage=passage, source=f"{location}{anchor}"))
        for rows in tables + extra_tables.get(part.anchor, []):
            table_number += 1
            table = table_document(rows, f"tables/{stem}.table-{table_number}", f"{title} (table {table_number})", f"{location}{anchor}")
            if table is not None:
                documents.append(table)
    if not any(d.kind != "table" for d in documents):
        return [], [Problem(location, "no text found: a scanned PDF needs text recognition (OCR) first; or delete the file")]
    return documents, []
