"""Import a user's `module:attribute` (an assistant function, a scripted LM factory) from the project or site-packages."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, Callable

from bddgen.errors import ConfigError


def import_callable(reference: str, project_root: Path, where: str) -> Callable[..., Any]:
    """Import `module:attribute`, which must be callable (see `import_attribute`)."""
    target = import_attribute(reference, project_root, where)
    if not callable(target):
        module_name, _, attribute = reference.partition(":")
        raise ConfigError(f"{where}: {module_name} has no callable {attribute!r}")
    return target


def import_attribute(reference: str, project_root: Path, where: str) -> Any:
    """Import `module:attribute`; a module in the project folder wins over one of the same name
    imported earlier from elsewhere (another project in the same process)."""
    module_name, _, attribute = reference.partition(":")
    if not module_name or not attribute:
        raise ConfigError(f"{where}: {reference!r} is not 'module:attribute'")
    root = str(project_root.resolve())
    if root in sys.path:
        sys.path.remove(root)
    sys.path.insert(0, root)
    local = project_root.resolve() / (module_name.replace(".", "/") + ".py")
    loaded = sys.modules.get(module_name)
    if loaded is not None and local.is_file() and Path(getattr(loaded, "__file__", "") or "").resolve() != local:
        del sys.modules[module_name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{where}: cannot import {module_name!r} ({exc}); is it in the project folder or installed?") from exc
    if not hasattr(module, attribute):
        raise ConfigError(f"{where}: {module_name} has no attribute {attribute!r}")
    return getattr(module, attribute)
