"""A static scan of an assistant's Python package with `ast` (nothing is imported or run).

It finds agents (classes that answer, `Agent(...)` objects), tools (functions decorated as tools or
registered in a module-level `*TOOL*` table; their parameters, expanded through annotated argument
classes), prompts (long strings named or passed as prompts and instructions), state access
(attributes written outside `__init__`, memory/history/session/database names), and per function
its branches, exception handlers and the tools and agents it calls.
"""

from __future__ import annotations

import ast
from pathlib import Path

from bddgen.config import ProbeSettings, default_of
from bddgen.probe.model import CodeGraph, CodeNode, FunctionShape

AGENT_METHODS = {"respond", "run", "invoke", "__call__", "chat", "answer"}
AGENT_WORDS = ("agent", "assistant", "bot")
PROMPT_WORDS = ("prompt", "instruction", "system")
STATE_WORDS = ("memory", "history", "session", "state", "database", "db", "cache", "store")
PROMPT_PREVIEW_CHARS = 120  # a display width: how much of a found prompt the code summary shows
SUMMARY_ITEMS = 12  # not a setting: things of each kind (agents, tools, handlers, prompts, state) the code summary lists
SKIPPED_PARAMETERS = {"self", "cls"}


def _decorator_name(node: ast.expr) -> str:
    target = node.func if isinstance(node, ast.Call) else node
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""


def _call_name(node: ast.Call) -> str:
    if isinstance(node.func, ast.Attribute):
        return node.func.attr
    return node.func.id if isinstance(node.func, ast.Name) else ""


def _annotation_name(node: ast.expr | None) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


class _ModuleScan:
    """The nodes and function shapes of one module."""

    def __init__(self, tree: ast.Module, module: str) -> None:
        self.tree = tree
        self.module = module
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}

    def class_fields(self, name: str, seen: frozenset[str] = frozenset()) -> list[str]:
        """Annotated fields of a class of this module, its bases' first."""
        klass = self.classes.get(name)
        if klass is None or name in seen:
            return []
        inherited = [f for base in klass.bases for f in self.class_fields(_annotation_name(base), seen | {name})]
        own = [s.target.id for s in klass.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
        return inherited + [f for f in own if f not in inherited]

    def parameters(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
        """Parameter names; one annotated with an argument class of this module stands for its fields."""
        names: list[str] = []
        arguments = function.args
        for argument in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            if argument.arg in SKIPPED_PARAMETERS:
                continue
            fields = self.class_fields(_annotation_name(argument.annotation))
            names += fields or [argument.arg]
        return names

    def tools(self) -> list[CodeNode]:
        found: dict[str, CodeNode] = {}
        for function in ast.walk(self.tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                "tool" in _decorator_name(d).lower() for d in function.decorator_list
            ):
                found[function.name] = self._tool(function)
        for statement in self.tree.body:
            targets = _assigned_names(statement)
            if any("tool" in t.lower() for t in targets) and statement.value is not None:  # type: ignore[attr-defined]
                for name in ast.walk(statement.value):  # type: ignore[attr-defined]
                    if isinstance(name, ast.Name) and name.id in self.functions and name.id not in found:
                        found[name.id] = self._tool(self.functions[name.id])
        return list(found.values())

    def _tool(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> CodeNode:
        return CodeNode(kind="tool", name=function.name, module=self.module, line=function.lineno, parameters=self.parameters(function))

    def agents(self) -> list[CodeNode]:
        found: list[CodeNode] = []
        for klass in self.classes.values():
            methods = {n.name for n in klass.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
            if methods & AGENT_METHODS and any(w in klass.name.lower() for w in AGENT_WORDS):
                found.append(CodeNode(kind="agent", name=klass.name, module=self.module, line=klass.lineno, detail=", ".join(sorted(methods & AGENT_METHODS))))
        for call in ast.walk(self.tree):
            if isinstance(call, ast.Call) and _call_name(call) == "Agent":
                name = next((k.value.value for k in call.keywords if k.arg == "name" and isinstance(k.value, ast.Constant)), "Agent")
                found.append(CodeNode(kind="agent", name=str(name), module=self.module, line=call.lineno))
        return found

    def prompts(self, min_chars: int) -> list[CodeNode]:
        """Strings of at least `min_chars` characters assigned to a prompt-like name."""
        found: list[CodeNode] = []
        for node in ast.walk(self.tree):
            pairs: list[tuple[str, ast.expr]] = []
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                pairs = [(t, node.value) for t in _assigned_names(node)]
            elif isinstance(node, ast.Call):
                pairs = [(k.arg, k.value) for k in node.keywords if k.arg]
            for name, value in pairs:
                text = _string_value(value)
                if any(w in name.lower() for w in PROMPT_WORDS) and len(text) >= min_chars:
                    preview = " ".join(text.split())[:PROMPT_PREVIEW_CHARS]
                    found.append(CodeNode(kind="prompt", name=name, module=self.module, line=value.lineno, detail=preview))
        return found

    def state(self) -> list[CodeNode]:
        found: dict[tuple[str, str], CodeNode] = {}
        for function in ast.walk(self.tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                name, what = "", ""
                if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and function.name != "__init__":
                    name, what = _dotted(node), f"written in {function.name}"
                elif isinstance(node, (ast.Name, ast.Attribute)) and any(w in _last(node).lower() for w in STATE_WORDS):
                    name, what = _dotted(node), f"used in {function.name}"
                if name in self.functions or name in self.classes:
                    continue
                if name and (name, function.name) not in found:
                    found[(name, function.name)] = CodeNode(kind="state", name=name, module=self.module, line=node.lineno, detail=what)
        return list(found.values())

    def shapes(self, callable_names: set[str]) -> list[FunctionShape]:
        shapes: list[FunctionShape] = []
        for function in ast.walk(self.tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            branches = handlers = 0
            caught: list[str] = []
            calls: list[str] = []
            for node in ast.walk(function):
                if isinstance(node, (ast.If, ast.IfExp)):
                    branches += 1
                elif isinstance(node, ast.match_case):
                    branches += 1
                elif isinstance(node, ast.ExceptHandler):
                    handlers += 1
                    caught.append(ast.unparse(node.type) if node.type is not None else "")
                elif isinstance(node, ast.Call) and _call_name(node) in callable_names and _call_name(node) not in calls:
                    calls.append(_call_name(node))
            shapes.append(FunctionShape(name=function.name, module=self.module, line=function.lineno, branches=branches, handlers=caught, calls=calls))
        return shapes


def _assigned_names(statement: ast.stmt) -> list[str]:
    if isinstance(statement, ast.Assign):
        return [t.id for t in statement.targets if isinstance(t, ast.Name)]
    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        return [statement.target.id]
    return []


def _string_value(node: ast.expr) -> str:
    """The text of a string constant or of a concatenation / f-string of constants ('' otherwise)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _string_value(node.left) + _string_value(node.right)
    if isinstance(node, ast.JoinedStr):
        return "".join(_string_value(v) for v in node.values if isinstance(v, ast.Constant))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("format", "strip"):
        return _string_value(node.func.value)
    return ""


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return node.id if isinstance(node, ast.Name) else "?"


def _last(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def scan_package(folder: Path, min_prompt_chars: int = default_of(ProbeSettings, "min_prompt_chars")) -> CodeGraph:
    """The code graph of every .py file under `folder` (or of one file); a prompt has at least `min_prompt_chars` characters."""
    files = sorted(folder.rglob("*.py")) if folder.is_dir() else [folder]
    base = folder if folder.is_dir() else folder.parent
    graph = CodeGraph(package=folder.name)
    scans: list[_ModuleScan] = []
    for path in files:
        module = path.relative_to(base).with_suffix("").as_posix().replace("/", ".")
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (SyntaxError, UnicodeDecodeError, OSError) as exc:
            graph.problems.append(f"{path}: not scanned ({exc})")
            continue
        scans.append(_ModuleScan(tree, module))
    graph.modules = len(scans)
    for scan in scans:
        graph.nodes += scan.agents() + scan.tools() + scan.prompts(min_prompt_chars) + scan.state()
    callable_names = {n.name for n in graph.nodes if n.kind in ("tool", "agent")}
    for scan in scans:
        graph.functions += scan.shapes(callable_names)
    return graph


def summarise(graph: CodeGraph, limit: int = SUMMARY_ITEMS) -> str:
    """The graph as a few lines the planner and the persona prompts read."""
    lines = [f"package {graph.package}: {graph.modules} modules"]
    for kind in ("agent", "tool"):
        nodes = graph.of_kind(kind)[:limit]
        if nodes:
            shown = [f"{n.name}({', '.join(n.parameters)})" if kind == "tool" else n.name for n in nodes]
            lines.append(f"{kind}s: " + "; ".join(shown))
    handlers = [f"{f.name} catches {', '.join(h or 'everything' for h in f.handlers)}" for f in graph.functions if f.handlers][:limit]
    if handlers:
        lines.append("exception handlers: " + "; ".join(handlers))
    branchy = sorted((f for f in graph.functions if f.branches), key=lambda f: -f.branches)[:limit]
    if branchy:
        lines.append("most branches: " + "; ".join(f"{f.name} {f.branches}" for f in branchy))
    prompts = graph.of_kind("prompt")[:limit]
    if prompts:
        lines.append("prompts: " + " | ".join(f"{p.name}: {p.detail}" for p in prompts))
    state = sorted({n.name for n in graph.of_kind("state")})[:limit]
    if state:
        lines.append("state: " + ", ".join(state))
    return "\n".join(lines)
