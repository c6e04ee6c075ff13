"""The spec files already in a features folder, sorted into those select keeps and those it owns.

* **kept** — hand-written specs, files a person edited since bddgen wrote them (unless `force`),
  and everything under `<features>/examples/` (shipped examples copied into the project). They
  enter selection as already chosen and are never written or removed.
* **owned** — files bddgen wrote that nobody edited (or every generated file, with `force`).
  They are rewritten when their spec is selected again and removed when it is not.
* **skipped** — files without a spec (agent tests whose scenarios run as written): their placeholder
  spec is no behaviour, so select neither counts it as chosen nor writes or removes the file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bddgen.errors import InputError, Problem
from bddgen.features.document import WITHOUT_SPEC, FeatureDocument
from bddgen.features.reader import feature_files, read_feature
from bddgen.specs import Spec

EXAMPLES_DIR = "examples"
SKIPPED = f"{WITHOUT_SPEC}; select neither counts it among the chosen specs nor writes it"
"""Why select passes over a file without a spec."""


@dataclass(frozen=True)
class SpecFile:
    path: Path
    document: FeatureDocument


@dataclass(frozen=True)
class Suite:
    features_dir: Path
    kept: list[SpecFile]
    owned: list[SpecFile]
    skipped: list[SpecFile] = field(default_factory=list)

    @property
    def chosen_specs(self) -> list[Spec]:
        """The kept files' specs: they enter selection as already chosen."""
        return [f.document.spec for f in self.kept]


def _is_kept(path: Path, document: FeatureDocument, features_dir: Path, force: bool) -> bool:
    if EXAMPLES_DIR in path.relative_to(features_dir).parts[:-1]:
        return True
    return document.spec.source == "hand-written" or (document.edited and not force)


def scan_suite(features_dir: Path, *, force: bool = False) -> Suite:
    """Read every .feature file under `features_dir`; unreadable files are reported all at once."""
    kept: list[SpecFile] = []
    owned: list[SpecFile] = []
    skipped: list[SpecFile] = []
    problems: list[Problem] = []
    for path in feature_files([features_dir]) if features_dir.is_dir() else []:
        try:
            document = read_feature(path)
        except InputError as exc:
            problems += exc.problems
            continue
        if not document.has_spec:
            skipped.append(SpecFile(path, document))
            continue
        (kept if _is_kept(path, document, features_dir, force) else owned).append(SpecFile(path, document))
    first_path: dict[str, Path] = {}
    for spec_file in kept:
        other = first_path.setdefault(spec_file.document.spec.id, spec_file.path)
        if other != spec_file.path:
            problems.append(Problem(str(spec_file.path), f"spec id {spec_file.document.spec.id!r} is also used by {other}: the same spec twice; remove one file or change its title"))
    if problems:
        raise InputError(problems, title="cannot read the specs already in the features folder (see `bddgen validate`)")
    return Suite(features_dir=features_dir, kept=kept, owned=owned, skipped=skipped)
