"""Write the selected specs as .feature files, one per spec, never clobbering a person's edits."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bddgen.features.document import FeatureDocument
from bddgen.features.writer import render_feature, write_feature
from bddgen.implement.provenance import provenance_path
from bddgen.safe_names import safe_file_name
from bddgen.select.suite import SKIPPED, SpecFile, Suite
from bddgen.specs import SelectedSpec, Selection, Spec, slugify

SLUG_LENGTH = 60  # not a setting: the form of a file name


@dataclass
class WriteReport:
    """What `write_selected` did to each file; `skipped`: the files it passed over, each with why."""

    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    kept: list[Path] = field(default_factory=list)
    removed: list[Path] = field(default_factory=list)
    left_edited: list[Path] = field(default_factory=list)
    skipped: dict[Path, str] = field(default_factory=dict)


def _ordinal(number: int) -> str:
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def rationale(chosen: SelectedSpec, selection: Selection) -> list[str]:
    """The feature description: why this spec was selected."""
    new = chosen.new_documents
    lines = [
        f"Selected {_ordinal(chosen.rank)} of {len(selection.selected)} from {selection.pool_size} candidates; "
        f"diversity gain {chosen.diversity_gain:.2f}; {new} new document{'' if new == 1 else 's'} covered."
    ]
    if chosen.documents:
        lines.append("Relevant documents: " + ", ".join(chosen.documents) + ".")
    return lines


def feature_tags(spec: Spec) -> list[str]:
    return [f"@focus:{slugify(spec.focus)}"] if spec.focus else []


def _path_for(spec: Spec, features_dir: Path, owned: dict[str, SpecFile], taken: set[Path]) -> Path:
    """The file the spec already has, else features/<slug>.feature, else features/<id>.feature."""
    if spec.id in owned:
        return owned[spec.id].path
    by_title = features_dir / f"{slugify(spec.title)[:SLUG_LENGTH]}.feature"
    return by_title if by_title not in taken and not by_title.exists() else features_dir / f"{safe_file_name(spec.id)}.feature"


def write_selected(selection: Selection, suite: Suite, *, force: bool = False) -> WriteReport:
    """Write every selected, not preselected spec; remove owned files whose spec was not selected.

    Conversations and tags that later stages already wrote into a spec's file are carried over.
    """
    report = WriteReport(kept=[f.path for f in suite.kept], skipped={f.path: SKIPPED for f in suite.skipped})
    owned = {f.document.spec.id: f for f in suite.owned}
    taken = {f.path for f in (*suite.kept, *suite.owned, *suite.skipped)}
    selected_ids: set[str] = set()
    for chosen in selection.selected:
        if chosen.preselected:
            continue
        spec = chosen.spec
        selected_ids.add(spec.id)
        path = _path_for(spec, suite.features_dir, owned, taken)
        taken.add(path)
        previous = owned.get(spec.id)
        tags = feature_tags(spec)
        document = FeatureDocument(
            spec=spec,
            rationale=rationale(chosen, selection),
            tags=tags + [t for t in (previous.document.tags if previous else []) if t not in tags],
            conversations=previous.document.conversations if previous else [],
        )
        if path.exists() and path.read_text(encoding="utf-8") == render_feature(document):
            report.unchanged.append(path)
            continue
        write_feature(path, document, force=force)
        report.written.append(path)
    for stale in suite.owned:
        if stale.document.spec.id in selected_ids:
            continue
        if stale.document.edited:
            report.left_edited.append(stale.path)
        else:
            stale.path.unlink()
            provenance_path(stale.path).unlink(missing_ok=True)  # what implement recorded of its conversations goes with it
            report.removed.append(stale.path)
    return report
