"""Review knows no task and writes no SQL (issue 20 items 3 and 5): the review package imports nothing from
`dialectbias.tasks`, names no task in its code (what a task contributes comes in as data: `ReviewConfig`),
and asks the store named questions (`dialectbias.store`) instead of writing SQL or using its connection."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import dialectbias.review as review
from dialectbias.tasks import task_names

REVIEW = Path(review.__file__).parent
CLI_REVIEW = REVIEW.parent / "cli" / "_review.py"
#: literals that are not task names though they spell one: `caption` is a field of an object variant (a VQA or
#: caption entry), shown after question, options and answer (`_kind_translations._ORDER`)
NOT_TASKS = {(Path("_kind_translations.py"), "caption"),
             # the judge's "decision" in the Human Consistency Score rubric (BanglaVerse §4.3), not the task
             (Path("_kind_consistency.py"), "is the judge's analysis logically consistent with its decision? (0–40)"),
             (Path("_kind_consistency.py"), "rate the judge's judgment: decision accuracy (0–50), reasoning "
              "alignment (0–40), explanation clarity (0–10); the sum is its Human Consistency Score. Scores are "
              "not changed."),
             (Path("_hcs.py"), "mean points for analysis consistent with the decision (0–40)")}
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE FROM|CREATE TABLE|json_extract)\b")


def _modules() -> list[Path]:
    found = sorted(REVIEW.rglob("*.py"))
    assert len(found) > 10 and REVIEW / "app" / "_app.py" in found
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (module, class, function)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def _literals(path: Path) -> list[str]:
    """The module's string literals that are code (f-string parts included), not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = _docstrings(tree)
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_review_imports_nothing_from_the_tasks() -> None:
    for path in _modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            assert not any(n == "dialectbias.tasks" or n.startswith("dialectbias.tasks.") for n in names), path


def test_review_names_no_task_in_its_code() -> None:
    names = task_names()
    assert {"qa_bias", "translate", "translation_quality", "vqa"} <= set(names)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")
    found = [(path.relative_to(REVIEW), text) for path in _modules() for text in _literals(path)
             if pattern.search(text)]
    assert set(found) - NOT_TASKS == set()


def test_the_check_finds_a_task_name(tmp_path: Path) -> None:
    """The literal check above is not vacuous: a stage literal like the one review used to hold is caught,
    a docstring mentioning a task is not."""
    module = tmp_path / "m.py"
    module.write_text('"""Reads the `translate` task\'s answers."""\nSTAGE = "translate"\n', encoding="utf-8")
    assert _literals(module) == ["translate"]


def test_review_writes_no_sql_and_never_touches_the_connection() -> None:
    for path in [*_modules(), CLI_REVIEW]:
        text = path.read_text(encoding="utf-8")
        assert ".conn" not in text, path
        assert not [s for s in _literals(path) if SQL.search(s)], path
