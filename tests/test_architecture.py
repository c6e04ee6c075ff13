"""Layers run one way: a module imports only from its own layer or the layers below it, no two packages
import each other, a stage imports another stage only where `STAGE_IMPORTS` says why, and no modules of
one package import each other round a circle (docs/architecture.md, "Layers").

The imports are read with `ast` from every module of `bddgen/`, including those inside functions
(a lazy import is still a dependency) and under `if TYPE_CHECKING:`. `pytest -s` prints the counts.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import networkx as nx

PACKAGE = Path(__file__).resolve().parents[1] / "bddgen"

LAYERS: tuple[tuple[str, frozenset[str]], ...] = (
    ("vocabulary", frozenset({
        "bddgen", "answer_checks", "config", "console", "errors", "expectations", "faults", "files", "models",
        "normalise", "numbers", "outcomes", "plugins", "project", "project_lock", "results", "safe_names", "specs",
        "sqlite_wal", "state_diff", "table_keys", "text", "traces", "values",
    })),
    ("services", frozenset({"lm", "embed", "ner", "retrieval"})),
    ("formats", frozenset({"corpus", "features", "manifest"})),
    ("core", frozenset({"evaluation", "run"})),
    ("stages", frozenset({
        "generate", "select", "implement", "agents", "intents", "tasks", "probe", "review", "report", "judging",
        "interop", "reference", "templates",
    })),
    ("pipeline", frozenset({"pipeline"})),
    ("entry", frozenset({"cli", "commands", "demo", "schemas", "run.behave_environment"})),
)
"""Lowest first. A unit is a package of bddgen/ or a module at its top (`bddgen` is the package's __init__), or one
of `ENTRY_MODULES`."""

ENTRY_MODULES: dict[str, str] = {
    # a module inside a lower package that is an entry point of its own: why it lives there
    "bddgen.run.behave_environment": "plain behave loads it by this name from every project's environment.py; a run "
                                     "starts there, so it opens the run on the composition root as `bddgen run` does",
}
"""Modules that are units of their own, placed in the entry layer (their package stays where it is)."""

COMPOSITION_ROOT = "bddgen.pipeline.models"
"""The one module that calls the model and assistant factories (`Models`)."""

FACTORIES = frozenset({"build_language_model", "build_embedder", "build_recognizer", "build_assistant", "build_reference_assistant"})
"""The factories of the models and assistants bddgen runs on (lm/, embed/, ner/, run/assistants/, reference/)."""

STAGE_IMPORTS: dict[tuple[str, str], str] = {
    # (importing stage, imported stage): why the one uses the other. Every other import between two packages of
    # the stages layer fails the test, and so does an entry here that no import needs any more.
    # -- the reference assistants answer through run's Assistant protocol (run is the core, below the stages).
    ("reference", "tasks"): "the reference agents (airline, order desk) are the tasks stage's AgentWorlds (their tools and rules)",
    # -- implement owns the reading of a spec, its evidence and the provenance sidecars; later stages reuse them.
    ("generate", "implement"): "a draft spec is checked with implement's reading of a spec (spec facts, computed candidates)",
    ("select", "implement"): "selection retrieves by the spec's subject and drops a deselected file's provenance sidecar",
    ("review", "implement"): "the review page rechecks an edited turn with implement's evidence kinds and provenance",
    ("tasks", "implement"): "policy evidence is split into sentences as implement splits them; its scripted replies read "
                            "prompt sections as implement's do",
    ("judging", "implement"): "candidate answers are made from the verified turns' evidence and provenance",
    ("report", "implement"): "the report reads provenance sidecars, chains and entity links of the suite",
    # -- agent stages build on each other.
    ("agents", "intents"): "a structural scenario's witness arguments come from the intents' partitions of a tool",
    ("agents", "tasks"): "a realised objective is worded with the tasks stage's fact phrases",
    ("probe", "intents"): "the probe writes its YAML files with the intents' file helpers and quotes steps the same way",
    # -- report and judging come last: they read what the other stages wrote.
    ("report", "agents"): "structural coverage and trajectory metrics are report sections",
    ("report", "intents"): "the intents' results are a report section",
    ("report", "review"): "coverage counts reviewed and rejected conversations",
    ("judging", "review"): "rejected conversations are not graded",
    ("judging", "report"): "agreement rates get report's Wilson intervals",
}
"""The declared dependencies between stages (packages of the "stages" layer), each with its reason."""

PACKAGE_CIRCLES: dict[frozenset[str], str] = {
    # modules of one package that import each other round a circle: why the circle stays
    frozenset({"bddgen.tasks.candidates", "bddgen.tasks.world"}): (
        "world.py imports candidates.py for type checking only: AgentWorld.required_by takes an evaluated call"
    ),
}
"""Known circles of modules inside one package; a new one fails the test."""

PRIVATE_IMPORTS: dict[str, str] = {
    # another library's private module or name that bddgen imports: why there is no public one to use
    "re._constants": "intents' shortest-match sampler walks a parsed regular expression; the standard library has no "
                     "public parser (it was sre_constants before Python 3.11)",
    "re._parser": "the parser of that walk (sre_parse before Python 3.11)",
}
"""Known imports of private modules or names of other libraries; a new one fails the test."""

ARCHITECTURE_PAGE = PACKAGE.parent / "docs" / "architecture.md"


@dataclass(frozen=True)
class Import:
    """One import statement of one module: where it is and the bddgen module it names."""

    source: str
    path: str
    line: int
    target: str
    names: tuple[str, ...] = ()  # what `from target import ...` takes: submodules or attributes


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(source: str, module: str, is_package: bool, path: str = "") -> list[Import]:
    """Every import of a bddgen module in `source`, at any depth (functions, classes, `if` blocks)."""
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [Import(module, path, node.lineno, alias.name) for alias in node.names if in_bddgen(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([node.module] if node.module else []))
            taken = tuple(alias.name for alias in node.names)
            if base == "bddgen":
                found += [Import(module, path, node.lineno, f"bddgen.{name}") for name in taken]
            elif in_bddgen(base):
                found.append(Import(module, path, node.lineno, base, taken))
    return found


def in_bddgen(name: str) -> bool:
    """Whether a dotted name is bddgen or in it."""
    return name == "bddgen" or name.startswith("bddgen.")


def private_library_imports(source: str, path: str = "") -> list[str]:
    """Each import of another library's private module or name, as `path:line: name`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found += [f"{path}:{node.lineno}: {name}" for name in names if not in_bddgen(name) and is_private(name)]
    return found


def is_private(name: str) -> bool:
    """Whether a dotted name has a private part (`behave.formatter._registry`; `__future__` is not one)."""
    return any(part.startswith("_") and not part.endswith("__") for part in name.split("."))


def factory_calls(source: str, module: str, path: str = "") -> list[str]:
    """Each call of a model or assistant factory (`FACTORIES`, by name or as an attribute) in `source`, outside the
    module that defines it, as `path:line: name`."""
    tree = ast.parse(source)
    defined = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else node.func.attr if isinstance(node.func, ast.Attribute) else ""
            if name in FACTORIES and name not in defined:
                found.append(f"{path}:{node.lineno}: {name}")
    return found


def places_that_build_models() -> dict[str, list[str]]:
    """The modules of bddgen/ that call a model or assistant factory, with their calls."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        calls = factory_calls(path.read_text(encoding="utf-8"), module_name(path), path.relative_to(PACKAGE.parent).as_posix())
        if calls:
            found[module_name(path)] = calls
    return found


def all_imports() -> list[Import]:
    found: list[Import] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE.parent).as_posix()
        found += imports_of(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py", where)
    return found


def unit(module: str) -> str:
    """The package or top-level module of bddgen that `module` belongs to, or the module itself when it is one of
    `ENTRY_MODULES`."""
    if module in ENTRY_MODULES:
        return module.removeprefix("bddgen.")
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


def stage_imports(imports: list[Import]) -> dict[tuple[str, str], list[Import]]:
    """The imports of one stage's modules by another stage's, by (importing stage, imported stage)."""
    stages = dict(LAYERS)["stages"]
    found: dict[tuple[str, str], list[Import]] = {}
    for item in imports:
        edge = (unit(item.source), unit(item.target))
        if edge[0] != edge[1] and edge[0] in stages and edge[1] in stages:
            found.setdefault(edge, []).append(item)
    return found


def undeclared(found: dict[tuple[str, str], list[Import]], declared: dict[tuple[str, str], str]) -> list[str]:
    """Each stage-to-stage dependency `declared` lacks, with its first import."""
    return [
        f"{a} -> {b}: {items[0].path}:{items[0].line} imports {items[0].target}" for (a, b), items in sorted(found.items())
        if (a, b) not in declared
    ]


def bddgen_modules() -> set[str]:
    """The dotted name of every module of bddgen/ (a package by its name)."""
    return {module_name(path) for path in PACKAGE.rglob("*.py")}


def named_modules(item: Import, modules: set[str]) -> list[str]:
    """The modules an import names: `from bddgen.evaluation import judge` names bddgen.evaluation.judge, `from bddgen.evaluation.judge
    import Judge` names bddgen.evaluation.judge (a package's __init__ that runs on the way is not counted)."""
    submodules = [f"{item.target}.{name}" for name in item.names if f"{item.target}.{name}" in modules]
    whole = not item.names or len(submodules) < len(item.names)
    return [name for name in [*submodules, *([item.target] if whole else [])] if name in modules]


def package_circles(imports: list[Import], modules: set[str]) -> dict[frozenset[str], list[str]]:
    """Each set of modules of one package that import each other round a circle, with the imports between them."""
    graph = nx.DiGraph()
    for item in imports:
        for target in named_modules(item, modules):
            if target != item.source and unit(target) == unit(item.source) and not graph.has_edge(item.source, target):
                graph.add_edge(item.source, target, where=f"{item.path}:{item.line}")
    return {
        frozenset(circle): sorted(f"{a} -> {b} ({where})" for a, b, where in graph.subgraph(circle).edges(data="where"))
        for circle in nx.strongly_connected_components(graph) if len(circle) > 1
    }


def documented_layers(text: str) -> dict[str, set[str]]:
    """The units of each layer in the table under `## Layers`: its first column's layer, its second's names."""
    section = text[text.index("## Layers") :].split("\n## ", 1)[0]
    layers: dict[str, set[str]] = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and cells[0] not in ("layer", "---"):
            names = re.findall(r"`([^`]+)`", cells[1])
            layers.setdefault(cells[0], set()).update(name.removesuffix("/").removesuffix(".py").replace("/", ".") for name in names)
    return layers


def test_every_unit_has_a_layer() -> None:
    units = {unit(module_name(path)) for path in PACKAGE.rglob("*.py")}
    placed = set().union(*(names for _, names in LAYERS))
    assert sorted(units - placed) == [], "place each new package or top-level module in a layer of LAYERS"
    assert sorted(placed - units) == [], "LAYERS names a unit bddgen/ no longer has"


def test_the_layers_of_the_docs_are_the_layers_of_the_test() -> None:
    documented = documented_layers(ARCHITECTURE_PAGE.read_text(encoding="utf-8"))
    assert documented == {name: set(units) - {"bddgen"} for name, units in LAYERS}, (
        "the table under '## Layers' in docs/architecture.md and LAYERS differ"
    )


def test_no_import_climbs_a_layer() -> None:
    found = upward(all_imports())
    print(f"\nimports climbing a layer: {len(found)}")
    assert found == [], f"{len(found)} imports climb a layer:\n" + "\n".join(found)


def test_no_two_packages_import_each_other() -> None:
    found = mutual(all_imports())
    print(f"\npairs of packages importing each other: {len(found)}")
    assert found == [], f"{len(found)} pairs of packages import each other:\n" + "\n".join(found)


def test_a_stage_imports_another_only_where_declared() -> None:
    found = stage_imports(all_imports())
    missing = undeclared(found, STAGE_IMPORTS)
    print(f"\nstage-to-stage imports: {sum(map(len, found.values()))}, in {len(found)} dependencies ({len(missing)} undeclared)")
    assert missing == [], "declare these stage-to-stage dependencies, with a reason, in STAGE_IMPORTS:\n" + "\n".join(missing)
    stale = sorted(set(STAGE_IMPORTS) - set(found))
    assert stale == [], f"STAGE_IMPORTS declares dependencies no import needs any more: {stale}"


def test_no_new_circle_of_modules_inside_a_package() -> None:
    found = package_circles(all_imports(), bddgen_modules())
    new = {circle: edges for circle, edges in found.items() if circle not in PACKAGE_CIRCLES}
    print(f"\ncircles of modules inside a package: {len(found)} ({len(new)} new)")
    assert new == {}, "modules of one package import each other round a circle:\n" + "\n".join(
        "; ".join(edges) for edges in new.values()
    )
    gone = [sorted(circle) for circle in PACKAGE_CIRCLES if circle not in found]
    assert gone == [], f"PACKAGE_CIRCLES names circles that are gone: {gone}"


def test_no_module_imports_a_private_name_of_another_library() -> None:
    found = [
        entry for path in sorted(PACKAGE.rglob("*.py"))
        for entry in private_library_imports(path.read_text(encoding="utf-8"), path.relative_to(PACKAGE.parent).as_posix())
    ]
    names = {entry.rsplit(": ", 1)[1] for entry in found}
    new = [entry for entry in found if entry.rsplit(": ", 1)[1] not in PRIVATE_IMPORTS]
    assert new == [], "use the library's public API instead of:\n" + "\n".join(new)
    assert sorted(set(PRIVATE_IMPORTS) - names) == [], "PRIVATE_IMPORTS names imports bddgen no longer has"


EVALUATION_CORE = "bddgen.evaluation"
"""The one evaluation core: the only package that asks an assistant or runs a judge's prompt."""

ASSISTANT_CALLS = frozenset({"respond", "respond_with_faults"})
"""The methods of the `Assistant` protocol that ask an assistant."""

JUDGE_PROMPT = re.compile(r"judge", re.IGNORECASE)
"""A prompt task whose name says `judge` is a judge's prompt."""


def assistant_calls(source: str, path: str = "") -> list[str]:
    """Each call of `respond` or `respond_with_faults` in `source`, as `path:line: name`; an assistant's own call of
    its other method (`self.respond_with_faults` inside a class that defines `respond`) is no asking."""
    tree = ast.parse(source)
    own: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and any(isinstance(d, ast.FunctionDef) and d.name in ASSISTANT_CALLS for d in node.body):
            own |= {
                id(call) for call in ast.walk(node)
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                and isinstance(call.func.value, ast.Name) and call.func.value.id == "self"
            }
    return [
        f"{path}:{node.lineno}: {node.func.attr}" for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ASSISTANT_CALLS and id(node) not in own
    ]


def judge_prompts(source: str) -> dict[str, int]:
    """The names that hold a judge's prompt task in `source` (the module-level name assigned, or the function that
    returns it), with the line of the `PromptTask(...)` that makes it."""
    tree = ast.parse(source)
    found: dict[str, int] = {}
    for top in tree.body:
        names = (
            [top.name] if isinstance(top, (ast.FunctionDef, ast.ClassDef))
            else [t.id for t in top.targets if isinstance(t, ast.Name)] if isinstance(top, ast.Assign)
            else [top.target.id] if isinstance(top, ast.AnnAssign) and isinstance(top.target, ast.Name) else []
        )
        for node in ast.walk(top):
            if (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "PromptTask"
                and any(k.arg == "name" and isinstance(k.value, ast.Constant) and JUDGE_PROMPT.search(str(k.value.value)) for k in node.keywords)
            ):
                found.update({name: node.lineno for name in names})
    return found


def evaluation_outsiders() -> tuple[list[str], list[str]]:
    """Where a module outside the evaluation core asks an assistant, and where one makes or imports a judge's prompt."""
    asking, judging = [], []
    sources = {module_name(path): (path.relative_to(PACKAGE.parent).as_posix(), path.read_text(encoding="utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}
    prompts: dict[tuple[str, str], str] = {}
    for module, (where, source) in sources.items():
        inside = module == EVALUATION_CORE or module.startswith(EVALUATION_CORE + ".")
        if not inside:
            asking += assistant_calls(source, where)
        for name, line in judge_prompts(source).items():
            prompts[(module, name)] = f"{where}:{line}"
            if not inside:
                judging.append(f"{where}:{line}: {name} is a judge's prompt")
    for item in all_imports():
        if item.source == EVALUATION_CORE or item.source.startswith(EVALUATION_CORE + "."):
            continue
        judging += [f"{item.path}:{item.line}: imports the judge's prompt {name}" for name in item.names if (item.target, name) in prompts]
    return asking, judging


def verdict_types() -> list[str]:
    """The classes of bddgen/ that carry a verdict: named `...Judgement` or `...Verdict`, other than the verdict's value
    (an Enum) and a model's raw reply (a `StrictReply` schema, from which code makes the verdict)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and re.search(r"(Judgement|Verdict)$", node.name):
                bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in node.bases}
                if not bases & {"Enum", "StrictReply"}:
                    found.append(f"{module_name(path)}.{node.name}")
    return found


def html_writers() -> list[str]:
    """The modules of bddgen/ that write an HTML page: they hold an `<html` or `<!doctype` tag, or load a `.html.j2`
    template. (The review page is a static file the review server sends, written by no module.)"""
    pattern = re.compile(r"<html|<!doctype|\.html\.j2", re.IGNORECASE)
    return [module_name(path) for path in sorted(PACKAGE.rglob("*.py")) if pattern.search(path.read_text(encoding="utf-8"))]


def test_only_the_evaluation_core_asks_an_assistant_or_runs_a_judge() -> None:
    asking, judging = evaluation_outsiders()
    print(f"\nplaces outside the evaluation core that ask an assistant: {len(asking)}; that make or take a judge's prompt: {len(judging)}")
    assert asking == [], "ask an assistant with bddgen.evaluation.guard.answer, not its own way:\n" + "\n".join(asking)
    assert judging == [], "a judge's prompt is made and run only in bddgen/evaluation/ (a scorer there):\n" + "\n".join(judging)


def test_one_verdict_type() -> None:
    found = verdict_types()
    print(f"\nverdict types: {len(found)} ({', '.join(found)})")
    assert found == ["bddgen.results.Judgement"], "a scorer returns bddgen.results.Judgement; found: " + ", ".join(found)


def test_one_html_writer() -> None:
    found = html_writers()
    print(f"\nHTML writers: {len(found)} ({', '.join(found)})")
    assert found == ["bddgen.report.render.html_page"], "write HTML pages with the report's one writer; found: " + ", ".join(found)


def test_the_evaluation_counts_see_what_they_count() -> None:
    assistant = (
        "class Agent:\n"
        "    def respond(self, messages):\n"
        "        return self.respond_with_faults(messages, [])\n"
        "def search(agent):\n"
        "    return agent.respond([])\n"
    )
    assert assistant_calls(assistant, "a.py") == ["a.py:5: respond"]
    prompts = (
        "JUDGE = PromptTask(name='intents-judge-prose', instruction='')\n"
        "USER = PromptTask(name='probe-user-turn', instruction='')\n"
        "def judge_task(criteria):\n"
        "    return PromptTask(name='probe-judge', instruction='')\n"
    )
    assert judge_prompts(prompts) == {"JUDGE": 1, "judge_task": 4}


def test_only_the_composition_root_builds_models() -> None:
    found = places_that_build_models()
    print(f"\nplaces that build models: {len(found)}")
    others = [call for module, calls in found.items() if module != COMPOSITION_ROOT for call in calls]
    assert others == [], f"only {COMPOSITION_ROOT} (Models) calls a model or assistant factory; take a Models instead:\n" + "\n".join(others)
    assert list(found) == [COMPOSITION_ROOT], f"{COMPOSITION_ROOT} no longer builds the models"


def test_packages_import_in_one_order() -> None:
    found = circle(all_imports())
    assert found == [], "packages import each other round a circle: " + " -> ".join(found)


def test_the_walk_sees_lazy_relative_and_package_imports() -> None:
    source = (
        "import bddgen.specs\n"
        "from bddgen import text\n"
        "def f():\n"
        "    from bddgen.evaluation.judge import Judge\n"
        "class C:\n"
        "    from .checks import declines\n"
        "if True:\n"
        "    from ..pipeline import models\n"
    )
    found = imports_of(source, "bddgen.features.reader", is_package=False)
    assert [(i.line, i.target) for i in found] == [
        (1, "bddgen.specs"), (2, "bddgen.text"), (4, "bddgen.evaluation.judge"), (6, "bddgen.features.checks"), (8, "bddgen.pipeline"),
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


def test_a_stage_to_stage_import_needs_a_declaration() -> None:
    imports = [
        Import("bddgen.review.page", "r.py", 4, "bddgen.implement.evidence"), Import("bddgen.review.page", "r.py", 5, "bddgen.implement.context"),
        Import("bddgen.probe.stage", "p.py", 7, "bddgen.tasks.world"), Import("bddgen.probe.stage", "p.py", 8, "bddgen.lm.client"),
        Import("bddgen.probe.stage", "p.py", 9, "bddgen.evaluation.runner"),
    ]
    found = stage_imports(imports)
    assert sorted(found) == [("probe", "tasks"), ("review", "implement")] and len(found[("review", "implement")]) == 2
    assert undeclared(found, {("review", "implement"): "why"}) == ["probe -> tasks: p.py:7 imports bddgen.tasks.world"]


def test_a_circle_of_modules_is_found_through_from_package_import_module() -> None:
    modules = {"bddgen.tasks", "bddgen.tasks.world", "bddgen.tasks.candidates", "bddgen.tasks.model", "bddgen.run.suite"}
    source = "from bddgen.tasks import candidates, Model\n"
    imports = [
        *imports_of(source, "bddgen.tasks.world", is_package=False, path="w.py"),
        Import("bddgen.tasks.candidates", "c.py", 2, "bddgen.tasks.world", ("AgentWorld",)),
        Import("bddgen.tasks.model", "m.py", 3, "bddgen.run.suite"), Import("bddgen.run.suite", "s.py", 4, "bddgen.tasks.model"),
    ]
    assert named_modules(imports[0], modules) == ["bddgen.tasks.candidates", "bddgen.tasks"]
    assert package_circles(imports, modules) == {
        frozenset({"bddgen.tasks.world", "bddgen.tasks.candidates"}): [
            "bddgen.tasks.candidates -> bddgen.tasks.world (c.py:2)", "bddgen.tasks.world -> bddgen.tasks.candidates (w.py:1)",
        ],
    }


def test_a_factory_call_is_found_by_name_or_attribute_but_not_where_it_is_defined() -> None:
    source = (
        "from bddgen.lm.factory import build_language_model\n"
        "def lm(project):\n"
        "    return build_language_model(project)\n"
        "class C:\n"
        "    def assistant(self, factory):\n"
        "        return factory.build_assistant('fake', self.project, None)\n"
        "build_embedder_name = 'build_embedder'\n"
    )
    assert factory_calls(source, "bddgen.commands.run", "x.py") == ["x.py:3: build_language_model", "x.py:6: build_assistant"]
    defining = "def build_embedder(project):\n    return wrap(build_backend(project))\ndef other(p):\n    return build_embedder(p)\n"
    assert factory_calls(defining, "bddgen.embed.factory", "f.py") == []


def test_an_entry_module_is_a_unit_of_its_own() -> None:
    imports = [
        Import("bddgen.run.behave_environment", "e.py", 1, "bddgen.pipeline.stages"),
        Import("bddgen.run.suite", "s.py", 2, "bddgen.pipeline.models"),
    ]
    assert unit("bddgen.run.behave_environment") == "run.behave_environment" and unit("bddgen.run.suite") == "run"
    assert [entry.split(": ", 1)[0] for entry in upward(imports)] == ["s.py:2"]


def test_a_private_module_or_name_of_a_library_is_found() -> None:
    source = (
        "from __future__ import annotations\n"
        "import re\n"
        "from behave.formatter._registry import make_formatters\n"
        "from behave.formatter import _registry\n"
        "from behave.runner import Runner\n"
        "from bddgen.run import _private\n"
        "from . import _sibling\n"
    )
    assert private_library_imports(source, "x.py") == [
        "x.py:3: behave.formatter._registry.make_formatters", "x.py:4: behave.formatter._registry",
    ]


def test_the_layers_table_is_read_by_its_first_two_columns() -> None:
    text = (
        "## Layers\n\n| layer | package or module | what it is |\n| --- | --- | --- |\n"
        "| entry | `cli.py`, `commands/` | parse, then `run/` |\n| stages | `run/` | the run (`run/reference/`) |\n"
        "| stages | `tasks/` | tasks |\n\n## Stages\n\n| stage | package |\n| --- | --- |\n| x | `y/` |\n"
    )
    assert documented_layers(text) == {"entry": {"cli", "commands"}, "stages": {"run", "tasks"}}
