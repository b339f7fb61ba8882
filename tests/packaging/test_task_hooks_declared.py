"""The task contract stays written down (issue 20 item 1): nothing in the package discovers a task's hooks by
`getattr`/`hasattr` (they are declared on `dialectbias.tasks.Task` or on the protocols a task opts into), and task
modules import other sub-packages through their public `__init__`, never a private module of theirs."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dialectbias

PACKAGE = Path(dialectbias.__file__).parent
_DISCOVERY = {"getattr", "hasattr"}
_TASK_TYPE = re.compile(r"\b\w*Task\b")


def _mentions_task(node: ast.expr) -> str | None:
    """The name of `task`, `self.task`, `translate_task`…: an expression that names a task."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    return name if name is not None and "task" in name.lower() else None


def _task_typed(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters of `fn` annotated with a task type (`Task`, `QABiasTask`, `type[Task]`…)."""
    args = [*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs]
    return {a.arg for a in args if a.annotation is not None and _TASK_TYPE.search(ast.unparse(a.annotation))}


def hook_discovery(source: str) -> list[tuple[int, str]]:
    """(line, call) of each `getattr`/`hasattr` on a task in `source`: on a name that says task, on a parameter
    annotated with a task type, or on `self` in a class deriving from a task class."""
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, typed: frozenset[str], in_task_class: bool) -> None:
        if isinstance(node, ast.ClassDef):
            in_task_class = any(_TASK_TYPE.search(ast.unparse(b)) for b in node.bases) or node.name == "Task"
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            typed = typed | _task_typed(node)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _DISCOVERY
              and node.args):
            target = node.args[0]
            if (_mentions_task(target) or (isinstance(target, ast.Name) and target.id in typed)
                    or (in_task_class and isinstance(target, ast.Name) and target.id == "self")):
                found.append((node.lineno, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, typed, in_task_class)

    visit(ast.parse(source), frozenset(), False)
    return found


def private_imports(source: str, module: str) -> list[tuple[int, str]]:
    """(line, module) of each import of a private module (`dialectbias.run._stage`) of a sub-package other than
    the importing module's own, at any depth of the source (a function-level import counts too)."""
    own = module.split(".")[1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if (parts[0] == "dialectbias" and len(parts) > 2 and parts[1] != own
                    and any(p.startswith("_") for p in parts[2:])):
                found.append((node.lineno, name))
    return found


def _modules(under: Path) -> list[tuple[Path, str]]:
    out = []
    for path in sorted(under.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        out.append((path, ".".join(parts[:-1] if parts[-1] == "__init__" else parts)))
    return out


def test_hook_discovery_is_seen() -> None:
    source = ("def f(task, exp):\n    return getattr(task, 'rubrics', {})\n"
              "def g(self):\n    return hasattr(self.task, 'export_items')\n"
              "def h(t: Task, row):\n    getattr(row, 'ok', False)\n    return getattr(t, 'translations', None)\n"
              "class Mine(JudgedTask, Task):\n    def m(self):\n        return getattr(self, 'judgment_panels')\n"
              "class Rubric:\n    def m(self, key):\n        return getattr(self, key)\n")
    assert [line for line, _ in hook_discovery(source)] == [2, 4, 7, 10]


def test_private_imports_are_seen() -> None:
    source = ("from dialectbias.run._stage import Stage\nfrom dialectbias.run import Outcome\n"
              "from dialectbias.tasks.qa_bias._analysis import holm\n"
              "def f():\n    import dialectbias.store._export\n    from dialectbias.report.build import x\n")
    assert private_imports(source, "dialectbias.tasks.qa_bias._report") == [
        (1, "dialectbias.run._stage"), (5, "dialectbias.store._export")]


def test_no_task_hook_is_found_by_getattr() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}: {call}" for path, _ in _modules(PACKAGE)
             for line, call in hook_discovery(path.read_text(encoding="utf-8"))]
    assert not found, ("a task hook found by getattr/hasattr: declare it on `Task` or a protocol of "
                       "`dialectbias.tasks` and call it:\n" + "\n".join(found))


def test_task_modules_import_other_sub_packages_by_their_public_modules() -> None:
    found = [f"{path.relative_to(PACKAGE)}:{line}: {name}" for path, module in _modules(PACKAGE / "tasks")
             for line, name in private_imports(path.read_text(encoding="utf-8"), module)]
    assert not found, ("a task module imports a private module of another sub-package; import the name from the "
                       "package (add it to its `__all__`):\n" + "\n".join(found))
