"""Third-party warnings during `dialectbias report` (issue 24 item 6): a matplotlib UserWarning raised while
plotting is one `warning:` line naming matplotlib, never Python's raw display; deprecation notices of
libraries are dropped; a warning of dialectbias's own is shown as before."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import matplotlib._api as mpl_api
import pytest

from dialectbias.report import _plots

GLYPH = "Glyph 2453 missing from font(s) DejaVu Sans."


@pytest.fixture
def ran(qa: Any, qa_server: Any, cli: Any, tmp_path: Path) -> Any:
    project = qa.make_project(tmp_path / "exp", qa_server.base_url, n_items=2)
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    return project


def test_a_matplotlib_warning_while_plotting_is_one_clear_line(ran: Any, cli: Any, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    save = _plots._save
    calls = []

    def warning_save(fig: Any, out_stem: Path | None) -> bytes:
        calls.append(out_stem)
        mpl_api.warn_external(GLYPH)  # as matplotlib does: attributed to its first caller outside matplotlib
        warnings.warn("pandas will change this", FutureWarning, stacklevel=1)
        return save(fig, out_stem)

    monkeypatch.setattr(_plots, "_save", warning_save)
    result = cli("report", ran.yaml_path, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    assert calls, "the report drew no plot: the test would prove nothing"
    assert "UserWarning: Glyph" not in result.output and "_plots.py" not in result.output  # not raw
    repeat = f" [{len(calls)}×]" if len(calls) > 1 else ""
    assert result.stderr.splitlines().count(f"warning: matplotlib (UserWarning): {GLYPH}{repeat}") == 1
    assert "FutureWarning" not in result.output and "pandas will change" not in result.output
    assert (tmp_path / "report" / "index.html").is_file()


def test_our_own_warnings_are_not_hidden(ran: Any, cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save = _plots._save
    ours: dict[str, Any] = {"__name__": "dialectbias.report._plots", "warnings": warnings}
    exec("def warn():\n    warnings.warn('dialectbias says: look at this', UserWarning)\n", ours)

    def warning_save(fig: Any, out_stem: Path | None) -> bytes:
        ours["warn"]()
        return save(fig, out_stem)

    monkeypatch.setattr(_plots, "_save", warning_save)
    with pytest.warns(UserWarning, match="dialectbias says: look at this"):  # shown as Python shows it
        result = cli("report", ran.yaml_path, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    assert "warning: dialectbias" not in result.stderr
