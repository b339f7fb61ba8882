"""The package's sub-packages import each other in one direction only: no cycle between them.

Every `import` under src/dialectbias counts, at module level and inside functions (a lazy import is still
a dependency). A node is a sub-package (`dialectbias.run`) or a top-level module (`dialectbias.api`);
imports inside one node are ignored."""

from __future__ import annotations

import ast
from pathlib import Path

import dialectbias

PACKAGE = Path(dialectbias.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _node(module: str) -> str | None:
    """`dialectbias.run._executor` -> `run`; `dialectbias.api` -> `api`; the root package -> None."""
    parts = module.split(".")
    if parts[0] != "dialectbias" or len(parts) == 1:
        return None
    return parts[1]


def _is_module(name: str) -> bool:
    """True for a sub-package or top-level module of dialectbias (not e.g. `__version__`)."""
    return (PACKAGE / name).is_dir() or (PACKAGE / f"{name}.py").is_file()


def _imported(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Absolute names of the dialectbias modules a module's source imports, anywhere in it."""
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names.add(origin)
            if origin == "dialectbias":  # `from dialectbias import run` imports the sub-package run
                names.update(f"{origin}.{alias.name}" for alias in node.names if _is_module(alias.name))
    return {n for n in names if n == "dialectbias" or n.startswith("dialectbias.")}


def import_graph() -> dict[str, set[str]]:
    """Node -> the other nodes it imports."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _node(_module_name(path))
        if source is None:
            continue
        targets = graph.setdefault(source, set())
        text = path.read_text(encoding="utf-8")
        for name in _imported(text, _module_name(path), is_package=path.name == "__init__.py"):
            target = _node(name)
            if target is not None and target != source:
                targets.add(target)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, …, a], or None when the graph is acyclic (depth-first search)."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt):], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_find_cycle_reports_a_cycle_and_accepts_a_dag() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_relative_and_function_level_imports_are_seen() -> None:
    source = ("from dialectbias.store import Store\nfrom . import _specs\nfrom .._base import X\n"
              "def f():\n    from dialectbias import tasks\n    import dialectbias.report.build\n")
    assert _imported(source, "dialectbias.run._executor") == {
        "dialectbias.store", "dialectbias.run", "dialectbias._base", "dialectbias",
        "dialectbias.tasks", "dialectbias.report.build"}
    assert _node("dialectbias.run._executor") == "run" and _node("dialectbias") is None


def test_the_sub_packages_import_each_other_without_a_cycle() -> None:
    graph = import_graph()
    cycle = find_cycle(graph)
    edges = "\n".join(f"  {node} -> {', '.join(sorted(targets)) or '-'}" for node, targets in sorted(graph.items()))
    assert cycle is None, f"import cycle between sub-packages: {' -> '.join(cycle or [])}\ngraph:\n{edges}"


#: node -> the nodes it must never reach, directly or through others, and why
FORBIDDEN = {"testing": ({"tasks"}, "the test server's responders get data, never task modules")}


def reachable(graph: dict[str, set[str]], node: str) -> set[str]:
    """Every node `node` imports, directly or through other nodes."""
    seen: set[str] = set()
    todo = [node]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def forbidden_imports(graph: dict[str, set[str]]) -> list[str]:
    """`source -> target (why)` for every forbidden target a node reaches."""
    return [f"{source} -> {target} ({why})" for source, (targets, why) in sorted(FORBIDDEN.items())
            for target in sorted(reachable(graph, source) & targets)]


def test_forbidden_imports_are_seen_through_other_nodes() -> None:
    assert reachable({"a": {"b"}, "b": {"c"}, "c": set()}, "a") == {"b", "c"}
    assert forbidden_imports({"testing": {"data"}, "data": {"tasks"}, "tasks": set()}) == [
        "testing -> tasks (the test server's responders get data, never task modules)"]


def test_no_forbidden_imports() -> None:
    found = forbidden_imports(import_graph())
    assert not found, "forbidden imports:\n" + "\n".join(found)


def test_the_test_server_loads_no_task_module() -> None:
    """Importing dialectbias.testing and running every responder once imports nothing under dialectbias.tasks
    (an `importlib` call the static graph cannot see would show here)."""
    import subprocess
    import sys

    code = ("import sys, dialectbias.testing as t\n"
            "body = {'model': 'm', 'messages': [{'role': 'user', 'content': 'The adjectives are calm, loud.'}]}\n"
            "for name in ('qa_responder', 'association_responder', 'probe_responder', 'translate_responder',"
            " 'fidelity_responder', 'vlm_responder'):\n"
            "    getattr(t, name)(body)\n"
            "print(sorted(m for m in sys.modules if m.startswith('dialectbias.tasks')))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
