"""Layers run one way: a module imports only from its own layer or the layers below it, and no two
packages import each other (docs/architecture.md, "Layers").

The imports are read with `ast` from every module of `bddgen/`, including those inside functions
(a lazy import is still a dependency) and under `if TYPE_CHECKING:`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "bddgen"

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("vocabulary", frozenset({
        "bddgen", "answer_checks", "config", "console", "errors", "expectations", "faults", "files", "models",
        "normalise", "numbers", "outcomes", "plugins", "project", "project_lock", "results", "safe_names", "specs",
        "sqlite_wal", "state_diff", "table_keys", "text", "traces", "values",
    })),
    ("services", frozenset({"lm", "embed", "ner", "retrieval"})),
    ("formats", frozenset({"corpus", "features", "manifest"})),
    ("stages", frozenset({
        "generate", "select", "implement", "agents", "intents", "tasks", "probe", "review", "report", "judging",
        "interop", "run", "templates",
    })),
    ("pipeline", frozenset({"pipeline"})),
    ("entry", frozenset({"cli", "commands", "demo", "schemas"})),
)
"""Lowest first. A unit is a package of bddgen/ or a module at its top; `bddgen` is the package's __init__."""


@dataclass(frozen=True)
class Import:
    """One import statement of one module: where it is and the bddgen module it names."""

    source: str
    path: str
    line: int
    target: str


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool, path: str = "") -> list[Import]:
    """Every import of a bddgen module in `source`, at any depth (functions, classes, `if` blocks)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            names = [f"{base}.{alias.name}" for alias in node.names] if base == "bddgen" else [base]
        else:
            continue
        found += [Import(module, path, node.lineno, name) for name in names if name == "bddgen" or name.startswith("bddgen.")]
    return found


def all_imports() -> list[Import]:
    found: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE.parent).as_posix()
        found += imports_of(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py", where)
    return found


def unit(module: str) -> str:
    """The package or top-level module of bddgen that `module` belongs to."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == "__version__":
        return "bddgen"
    return parts[1]


def layer(name: str) -> int:
    for index, (_, units) in enumerate(LAYERS):
        if name in units:
            return index
    raise KeyError(name)


def upward(imports: list[Import]) -> list[str]:
    """Each import from a lower layer to a higher one, as `path:line: source (layer) imports target (layer)`."""
    found = []
    for item in imports:
        low, high = layer(unit(item.source)), layer(unit(item.target))
        if high > low:
            found.append(f"{item.path}:{item.line}: {item.source} ({LAYERS[low][0]}) imports {item.target} ({LAYERS[high][0]})")
    return found


def mutual(imports: list[Import]) -> list[str]:
    """Each pair of units that import each other, with the first import of each direction."""
    first: dict[tuple[str, str], Import] = {}
    for item in imports:
        edge = (unit(item.source), unit(item.target))
        if edge[0] != edge[1]:
            first.setdefault(edge, item)
    pairs = []
    for (a, b), there in sorted(first.items()):
        back = first.get((b, a))
        if a < b and back is not None:
            pairs.append(f"{a} <-> {b}: {there.path}:{there.line} imports {there.target}; {back.path}:{back.line} imports {back.target}")
    return pairs


def circle(imports: list[Import]) -> list[str]:
    """One cycle of units that import each other round a circle ([] when there is none)."""
    graph: dict[str, set[str]] = {}
    for item in imports:
        source, target = unit(item.source), unit(item.target)
        if source != target:
            graph.setdefault(source, set()).add(target)
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as error:
        return list(error.args[1])
    return []


def test_every_unit_has_a_layer() -> None:
    units = {unit(module_name(path)) for path in PACKAGE.rglob("*.py")}
    placed = set().union(*(names for _, names in LAYERS))
    assert sorted(units - placed) == [], "place each new package or top-level module in a layer of LAYERS"
    assert sorted(placed - units) == [], "LAYERS names a unit bddgen/ no longer has"


def test_no_import_climbs_a_layer() -> None:
    found = upward(all_imports())
    assert found == [], f"{len(found)} imports climb a layer:\n" + "\n".join(found)


def test_no_two_packages_import_each_other() -> None:
    found = mutual(all_imports())
    assert found == [], f"{len(found)} pairs of packages import each other:\n" + "\n".join(found)


def test_packages_import_in_one_order() -> None:
    found = circle(all_imports())
    assert found == [], "packages import each other round a circle: " + " -> ".join(found)


def test_the_walk_sees_lazy_relative_and_package_imports() -> None:
    source = (
        "import bddgen.specs\n"
        "from bddgen import text\n"
        "def f():\n"
        "    from bddgen.run.judge import Judge\n"
        "class C:\n"
        "    from .checks import declines\n"
        "if True:\n"
        "    from ..pipeline import models\n"
    )
    found = imports_of(source, "bddgen.features.reader", is_package=False)
    assert [(i.line, i.target) for i in found] == [
        (1, "bddgen.specs"), (2, "bddgen.text"), (4, "bddgen.run.judge"), (6, "bddgen.features.checks"), (8, "bddgen.pipeline"),
    ]
    layers = upward(found)
    assert [entry.split(": ", 1)[0] for entry in layers] == [":4", ":8"]


def test_a_pair_is_found_whichever_module_imports_first() -> None:
    imports = [Import("bddgen.tasks.generate", "t.py", 3, "bddgen.agents.manifest"), Import("bddgen.agents.realize", "a.py", 9, "bddgen.tasks.instruction")]
    assert mutual(imports) == ["agents <-> tasks: a.py:9 imports bddgen.tasks.instruction; t.py:3 imports bddgen.agents.manifest"]


def test_a_circle_of_three_packages_is_found() -> None:
    imports = [
        Import("bddgen.run.suite", "r.py", 1, "bddgen.tasks.model"), Import("bddgen.tasks.generate", "t.py", 2, "bddgen.probe.stage"),
        Import("bddgen.probe.thread", "p.py", 3, "bddgen.run.assistants.base"),
    ]
    assert mutual(imports) == []
    assert sorted(set(circle(imports))) == ["probe", "run", "tasks"]
