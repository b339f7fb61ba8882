"""CI lints and type-checks (`.ci/run`: ruff, then mypy with the pydantic plugin) with tools the dev extra
installs; mypy skips imports only of packages that ship no type information, each named."""

from __future__ import annotations

import importlib.util
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
#: the extras the dev venv leaves out (CI's scale step installs them in a venv of its own)
NOT_IN_DEV_VENV = {"comet", "ray", "vllm"}  # their extras install in CI steps of their own


def _ci_steps() -> list[str]:
    """`.ci/run`'s command lines, comments and blank lines left out."""
    lines = (ROOT / ".ci" / "run").read_text("utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def test_ci_runs_ruff_and_mypy_after_the_tests_and_before_deptry() -> None:
    steps = _ci_steps()
    order = [steps.index(step) for step in
             ('bash -c "$cmd"', ".venv/bin/ruff check src tests", ".venv/bin/mypy", ".venv/bin/deptry src")]
    assert order == sorted(order)
    assert not any("ruff format" in step for step in steps)  # the code is not ruff-formatted


def test_the_dev_extra_installs_ruff_and_mypy() -> None:
    names = {re.split(r"[<>=;\[ ]", req, maxsplit=1)[0].lower()
             for req in PYPROJECT["project"]["optional-dependencies"]["dev"]}
    assert {"ruff", "mypy"} <= names


def test_mypy_checks_src_with_the_pydantic_plugin_and_no_blanket_ignore() -> None:
    mypy = PYPROJECT["tool"]["mypy"]
    assert mypy["files"] == ["src"]
    assert "pydantic.mypy" in mypy["plugins"]
    assert "ignore_missing_imports" not in mypy
    assert "ignore_errors" not in mypy
    for override in mypy["overrides"]:
        assert "ignore_errors" not in override
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert all(not m.startswith(("*", "dialectbias")) for m in modules), modules


def _skipped_imports() -> list[str]:
    return sorted(m.removesuffix(".*") for o in PYPROJECT["tool"]["mypy"]["overrides"]
                  if o.get("ignore_missing_imports") for m in o["module"])


@pytest.mark.parametrize("module", _skipped_imports())
def test_a_skipped_import_ships_no_types(module: str) -> None:
    """An override goes stale when its package starts shipping a py.typed marker: then drop it."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        assert module in NOT_IN_DEV_VENV, f"{module} is not installed in the dev venv"
        pytest.skip(f"{module} is not installed here")
    folders = list(spec.submodule_search_locations or [])
    assert folders, f"{module} is a single-file module"
    assert not any((Path(folder) / "py.typed").exists() for folder in folders), f"{module} ships py.typed now"
