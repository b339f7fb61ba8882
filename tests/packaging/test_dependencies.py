"""The default install must work with only the declared dependencies (issue: `import click` broke it)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEPTRY = shutil.which("deptry") or str(Path(sys.executable).with_name("deptry"))


def test_cli_starts_without_click() -> None:
    """typer ≥ 0.29 no longer brings click: the CLI must not import it."""
    code = textwrap.dedent("""
        import sys
        sys.modules["click"] = None  # any `import click` now raises ImportError
        sys.argv = ["dialectbias", "--help"]
        from dialectbias.cli import main
        try:
            main()
        except SystemExit as exc:
            sys.exit(exc.code)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage" in done.stdout


@pytest.mark.skipif(not Path(DEPTRY).exists(), reason="deptry (dev extra) not installed")
def test_src_imports_only_declared_packages() -> None:
    done = subprocess.run([DEPTRY, "src"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.skipif(not Path(DEPTRY).exists(), reason="deptry (dev extra) not installed")
def test_deptry_catches_a_transitive_import(tmp_path: Path) -> None:
    """The check CI runs fails on exactly the class of bug that broke the default install."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    pkg = tmp_path / "src" / "dialectbias"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("import click  # transitive only\nimport typer\n")
    done = subprocess.run([DEPTRY, "src"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "click" in done.stdout + done.stderr
