"""Write a new bddgen project: settings, corpus template, behave glue and example features."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from bddgen.config import CONFIG_FILE, Settings
from bddgen.corpus.demo import demo_name_of
from bddgen.errors import ConfigError
from bddgen.templates.settings_toml import render_settings_toml

TEMPLATE_SUFFIX = ".tmpl"
"""Python templates carry this suffix so they are packaged as data, not as modules."""

CORPUS_FOLDERS = ("text", "tables", "policies")


def templates_root() -> Path:
    return Path(str(resources.files("bddgen") / "templates" / "project"))


def examples_root() -> Path:
    """Example .feature files per demo corpus: bddgen/data/examples/<demo name>/."""
    return Path(str(resources.files("bddgen") / "data" / "examples"))


@dataclass
class Scaffold:
    """What `bddgen init` did: files written, existing files left alone, the corpus it points at."""

    root: Path
    corpus: Path
    corpus_setting: str
    demo: str | None
    written: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)

    def write(self, path: Path, content: bytes, force: bool) -> None:
        """Write `path` unless it exists and `force` is off (then it is listed as kept)."""
        if path.exists() and not force:
            self.kept.append(path)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        self.written.append(path)


def corpus_setting(root: Path, corpus: Path) -> str:
    """The corpus as bddgen.toml names it: relative inside the project, else absolute."""
    absolute = Path(os.path.abspath(corpus))
    try:
        return absolute.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


def scaffold_project(root: Path, corpus: Path | None = None, force: bool = False) -> Scaffold:
    """Create the project in `root`; `corpus` None writes an empty corpus/ with a system.yaml template."""
    if (root / CONFIG_FILE).exists() and not force:
        raise ConfigError(f"{root} already has {CONFIG_FILE}: use --force to overwrite the files `bddgen init` writes")
    root.mkdir(parents=True, exist_ok=True)
    corpus_path = corpus if corpus is not None else root / "corpus"
    result = Scaffold(
        root=root,
        corpus=corpus_path,
        corpus_setting=corpus_setting(root, corpus_path),
        demo=demo_name_of(corpus) if corpus is not None else None,
    )
    for template in sorted(templates_root().rglob("*")):
        relative = template.relative_to(templates_root())
        if template.is_dir() or (corpus is not None and relative.parts[0] == "corpus"):
            continue
        target = root / str(relative).removesuffix(TEMPLATE_SUFFIX)
        result.write(target, template.read_bytes(), force)
    if corpus is None:
        for folder in CORPUS_FOLDERS:
            (corpus_path / folder).mkdir(parents=True, exist_ok=True)
    settings = Settings()
    features = root / settings.features_dir
    features.mkdir(parents=True, exist_ok=True)
    if result.demo is not None:
        for example in sorted((examples_root() / result.demo).glob("*.feature")):
            result.write(features / "examples" / example.name, example.read_bytes(), force)
    result.write(root / CONFIG_FILE, render_settings_toml(result.corpus_setting).encode("utf-8"), force)
    ignore = root / ".gitignore"
    if not ignore.exists():
        result.write(ignore, f"{settings.state_dir}/\n/{settings.run.results_dir}/\n".encode("utf-8"), force)
    return result


