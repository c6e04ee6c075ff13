"""Writing files so an interruption never leaves half of one, and reading back the JSON files bddgen writes."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from bddgen.errors import InputError, Problem

Model = TypeVar("Model", bound=BaseModel)

# The mode a plain `open(path, "w")` gives a new file (mkstemp creates files readable by the owner only).
_umask = os.umask(0)
os.umask(_umask)
CREATE_MODE = 0o666 & ~_umask


def atomic_write(path: Path, content: str | bytes) -> None:
    """Write `content` (text as UTF-8) via a temporary file in the same folder and rename it into
    place: readers see the old file or the new one, never a part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.chmod(tmp, CREATE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def output_folder(path: Path, what: str, option: str) -> Path:
    """`path` as a folder bddgen can write `what` into, created with its parents; an InputError naming
    the folder, why and the option to change when it cannot be (a file in the way, no permission,
    a read-only or virtual file system). Checked before any work whose result would go there."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        reason = exc.strerror or str(exc)
        if isinstance(exc, (FileExistsError, NotADirectoryError)):
            reason = "a file is in the way of the folder"
        raise InputError(
            Problem(str(path), f"cannot write {what} here ({reason}); choose another folder with {option}"), title="output folder"
        ) from exc
    return path


def read_json_file(path: Path, model: type[Model], what: str, fix: str) -> Model | None:
    """The JSON file at `path` as `model`, or None when there is none; a damaged one is an InputError
    naming the file, that it is not a valid `what`, and `fix`."""
    if not path.is_file():
        return None
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        raise InputError(Problem(str(path), f"not a valid {what} ({str(exc).splitlines()[0]}); {fix}")) from exc
