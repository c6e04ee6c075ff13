"""File formats of a corpus folder that are not documents themselves: table files and sidecars."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from bddgen.models import PolicyDocument, TableDocument, TextDocument

DOCUMENT_MODELS: dict[str, type[TextDocument | TableDocument | PolicyDocument]] = {
    "text": TextDocument,
    "table": TableDocument,
    "policy": PolicyDocument,
}
"""The model of each document `kind` (the discriminator of JSONL records)."""


def _fields_of(model: type[BaseModel], *names: str) -> dict[str, Any]:
    """The given fields of `model` (type and constraints), to derive a file format from it."""
    return {name: (model.model_fields[name].annotation, model.model_fields[name]) for name in names}


TableFile: type[BaseModel] = create_model(
    "TableFile",
    __config__=ConfigDict(extra="forbid"),
    __doc__="A table stored as tables/<name>.json; its id comes from the file name.",
    **_fields_of(TableDocument, "title", "description", "headers", "rows"),
)

TableSidecar: type[BaseModel] = create_model(
    "TableSidecar",
    __config__=ConfigDict(extra="forbid"),
    __doc__="tables/<name>.yaml next to tables/<name>.csv: the table's title, description and whether its first row is a header.",
    **_fields_of(TableDocument, "title", "description"),
    header=(
        bool,
        Field(
            default=False,
            description="true: the CSV's first row names the columns even where its names are numbers (years such as 2019); "
            "without it, numbers there are read as names only when the rows below show the row is a header.",
        ),
    ),
)


class DatabaseSidecar(BaseModel):
    """tables/<name>.yaml next to a SQLite file tables/<name>.sqlite|.db: which tables to read."""

    model_config = ConfigDict(extra="forbid")

    tables: list[str] = Field(default_factory=list, description="Tables to read; empty or missing: every table.")
