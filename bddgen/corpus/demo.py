"""The demo corpora shipped inside the package, and turning a --corpus argument into a folder."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from bddgen.errors import ConfigError


def demo_corpora_root() -> Path:
    """The folder holding the shipped demo corpora (bddgen/data/corpora)."""
    return Path(str(resources.files("bddgen") / "data" / "corpora"))


def demo_corpus_names() -> list[str]:
    root = demo_corpora_root()
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if (p / "system.yaml").is_file())


def demo_corpus_path(name: str) -> Path:
    """The folder of the shipped demo corpus `name` (e.g. "sports", "airline")."""
    names = demo_corpus_names()
    if name not in names:
        shipped = ", ".join(names) or "none (the package data is missing: reinstall bddgen)"
        raise ConfigError(f"no demo corpus named {name!r}; shipped demo corpora: {shipped}")
    return demo_corpora_root() / name


def demo_name_of(path: Path) -> str | None:
    """The demo corpus name when `path` is (a link to) a shipped demo corpus, else None."""
    resolved = path.resolve()
    root = demo_corpora_root().resolve()
    return resolved.name if resolved.parent == root and resolved.name in demo_corpus_names() else None


def resolve_corpus_arg(value: str) -> Path:
    """A corpus folder from a command-line value: a path, or a demo corpus name when no such path exists."""
    path = Path(value).expanduser()
    if path.exists():
        return path
    if value in demo_corpus_names():
        return demo_corpus_path(value)
    demos = ", ".join(demo_corpus_names()) or "none installed"
    raise ConfigError(
        f"no corpus folder {value!r} (relative to {Path.cwd()}) and no demo corpus of that name; "
        f"give a corpus folder or a demo corpus name ({demos})"
    )
