"""Read and write the reviewable intent files (YAML) with one clear error per problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from bddgen.corpus.readers import read_yaml
from bddgen.corpus.validation import json_pointer, schema_problems
from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write

Model = TypeVar("Model", bound=BaseModel)


def write_yaml(path: Path, model: BaseModel, header: str) -> None:
    """`model` as YAML under a comment header, written atomically."""
    data: Any = model.model_dump(mode="json", by_alias=True)
    text = "".join(f"# {line}\n" if line else "#\n" for line in header.splitlines())
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=110))


def read_model_yaml(path: Path, model: type[Model], what: str, fix: str) -> Model:
    """The `model` in the YAML file at `path`; InputError naming file and YAML path of each problem."""
    if not path.is_file():
        raise InputError(Problem(str(path), f"no {what} here; {fix}"))
    data = read_yaml(path, str(path))
    problems = schema_problems(model, data, str(path))
    if problems:
        raise InputError(problems, title=f"invalid {what} {path}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        found = [Problem(str(path), f"{json_pointer(list(e['loc']))}: {e['msg']}") for e in exc.errors()]
        raise InputError(found, title=f"invalid {what} {path}") from exc
