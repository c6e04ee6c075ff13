"""Ids as file and folder names: the one place that turns any id into a safe file name, and that
refuses a user-given folder name which would leave its parent folder."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from bddgen.errors import ConfigError

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
MAX_NAME = 80  # not a setting: the form of a file name


def safe_file_name(identifier: str) -> str:
    """`identifier` as a file name without a suffix: letters, digits, '.', '-', '_' only, never
    hidden, never '..'. An id that had to change gets a short hash of itself, so two ids never
    share a name."""
    cleaned = _UNSAFE.sub("-", identifier).strip(".-")[:MAX_NAME]
    if cleaned == identifier and cleaned:
        return cleaned
    digest = hashlib.sha256(identifier.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{cleaned}-{digest}" if cleaned else f"id-{digest}"


MAX_NAME_BYTES = 255
"""The longest file or folder name most file systems hold, in bytes."""


def child_folder(parent: Path, name: str, what: str) -> Path:
    """`parent / name` for a folder name a person chose (a run id); ConfigError when the name is
    empty, '.', '..', holds a path separator or a control character, so nothing lands outside `parent`,
    or is longer than MAX_NAME characters (or MAX_NAME_BYTES bytes), so the folder can be made."""
    size = len(name.encode("utf-8", "surrogatepass"))
    if len(name) > MAX_NAME or size > MAX_NAME_BYTES:
        raise ConfigError(
            f"{what} is too long for a folder name ({len(name)} characters, {size} bytes in UTF-8): "
            f"use at most {MAX_NAME} characters; it names a folder inside {parent}"
        )
    bad = (
        not name.strip()
        or name in (".", "..")
        or any(separator in name for separator in ("/", "\\"))
        or any(ord(char) < 32 or ord(char) == 127 for char in name)
    )
    if bad:
        raise ConfigError(
            f"{what} {name!r} is not a plain folder name: use letters, digits, '.', '-' and '_' "
            f"(no '/', '..' or control characters); it names a folder inside {parent}"
        )
    return parent / name
