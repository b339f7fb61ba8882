"""The store owns its SQL (issue 20 item 3): no module outside `dialectbias.store` holds SQL text, touches the
store's connection or runs a raw read (`Store.query`); tasks, reports, the runner and the CLI ask the store named
questions. So a schema change
(a migration) touches one package, and `CREATE TABLE` appears nowhere else.

A string counts as SQL when it reads as a statement (keywords in capitals, in SQL's order: `SELECT … FROM`,
`INSERT INTO`, `UPDATE x SET`, `DELETE FROM`, `CREATE TABLE`, `PRAGMA x`, …), not prose that names one."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import dialectbias

PACKAGE = Path(dialectbias.__file__).parent

SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+[A-Z]+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\b(?:CREATE|DROP|ALTER)\s+(?:TEMP\s+|TEMPORARY\s+|UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b"
    r"|\bPRAGMA\s+\w+|\bWITH\s+\w+\s+AS\s*\(")

#: attributes of a `Store` only its own modules (and tests) may use: its connection, and its raw reads
PRIVATE = {"_conn", "conn"}
RAW_READS = {"query", "iter_query"}


def _strings(tree: ast.AST) -> list[tuple[int, str]]:
    """Every string literal of a module (an f-string with its placeholders as `?`), with its line."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "?"
                           for v in node.values)
            out.append((node.lineno, text))
    return out


def sql_in(source: str) -> list[str]:
    """`line: text` of each SQL string and store-connection access in a module's source."""
    tree = ast.parse(source)
    found = [f"{line}: {text.strip()[:80]!r}" for line, text in _strings(tree) if SQL.search(text)]
    found += [f"{n.lineno}: .{n.attr}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr in PRIVATE]
    found += [f"{n.lineno}: {ast.unparse(n.func)}(…)" for n in ast.walk(tree) if isinstance(n, ast.Call)
              and isinstance(n.func, ast.Attribute) and n.func.attr in RAW_READS
              and "store" in ast.unparse(n.func.value).lower()]
    return found


def _outside_store() -> list[Path]:
    files = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("store/"):
            continue
        files.append(path)
    return files


def test_no_module_outside_the_store_holds_sql() -> None:
    problems = {path.relative_to(PACKAGE).as_posix(): found for path in _outside_store()
                if (found := sql_in(path.read_text(encoding="utf-8")))}
    assert not problems, "SQL outside dialectbias.store (ask the store a named question instead):\n" + "\n".join(
        f"  {file}:{hit}" for file, hits in problems.items() for hit in hits)


def test_the_connection_is_private_in_the_store_too() -> None:
    """`Store._conn`: no module, the store's own included, reads a public `conn` (a leftover of the rename)."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found += [f"{rel}:{n.lineno}" for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "conn"]
    assert not found, "use the store's named methods (inside dialectbias.store: `_conn`): " + ", ".join(found)


def test_the_store_holds_the_schema() -> None:
    """The check looks where the SQL is: the migrations and the store's reads are found by it."""
    found = [path.name for path in sorted((PACKAGE / "store").glob("*.py")) if sql_in(path.read_text("utf-8"))]
    assert {"_schema.py", "_store.py", "_judgments.py", "_status.py", "_reads.py", "_imports.py"} <= set(found)


@pytest.mark.parametrize("source", [
    'q = "SELECT output FROM results WHERE request_id=?"',
    'q = ("SELECT r.request_id FROM requests r "\n     "JOIN results s USING (request_id)")',
    'q = f"INSERT OR IGNORE INTO {table} (a) VALUES (?)"',
    'q = "UPDATE requests SET meta = ? WHERE request_id = ?"',
    'q = "DELETE FROM meta WHERE key = ?"',
    'q = "CREATE TABLE t (a TEXT)"',
    'q = "PRAGMA journal_mode"',
    "store.conn.execute(x)",
    "store._conn.execute(x)",
    "rows = self.store.query(LATEST_OVERRIDE_SQL)",
    "rows = store.iter_query(sql, params)",
])
def test_sql_and_connection_use_are_found(source: str) -> None:
    assert sql_in(source)


@pytest.mark.parametrize("source", [
    '"""Select the items from the store; update the report."""',
    'label = "selected from the list"',
    'note = "rows are inserted into the table and deleted from it"',
    "rows = store.stage_results('generate')",
    "vector = self._model.query(text)",
])
def test_prose_is_not_sql(source: str) -> None:
    assert not sql_in(source)
