"""$DIALECTBIAS_STORE_CACHE_MIB: the store's page cache in MiB (docs/scale.md "The page cache"; issue 23). It
changes no stored value, and a value that is not a size is refused by name before anything is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.store._store import CACHE_ENV

#: export fields that differ between two runs of the same study (clocks)
_CLOCKS = {"latency_s", "completed_at", "created_at"}


def _exported(cli: Any, project: Any, out: Path) -> dict[str, list[dict[str, Any]]]:
    result = cli("export", project.yaml_path, "--format", "jsonl", "--out", out)
    assert result.exit_code == 0, result.output
    return {name: sorted(({k: v for k, v in json.loads(line).items() if k not in _CLOCKS}
                          for line in (out / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()),
                         key=lambda row: json.dumps(row, sort_keys=True))
            for name in ("generations", "judgments")}


def test_a_run_with_the_smallest_cache_stores_what_a_run_with_the_default_does(
        qa_server: Any, qa_project: Any, cli: Any, tmp_path: Path) -> None:
    small, default = qa_project(qa_server.base_url), qa_project(qa_server.base_url)
    ran = cli("run", small.yaml_path, "--no-progress", env={CACHE_ENV: "2"})
    assert ran.exit_code == 0, ran.output
    assert cli("run", default.yaml_path, "--no-progress", env={CACHE_ENV: None}).exit_code == 0
    rows = _exported(cli, small, tmp_path / "small")
    assert rows == _exported(cli, default, tmp_path / "default")
    assert len(rows["generations"]) == 36 and len(rows["judgments"]) == 24


@pytest.mark.parametrize("value", ["lots", "1", "0", "65537", "1.5", "-64"])
def test_a_value_that_is_not_a_size_is_refused_by_name_before_the_store_is_touched(
        qa_server: Any, qa_project: Any, qa: Any, value: str) -> None:
    project = qa_project(qa_server.base_url)
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress",
                               env=qa.subprocess_env(**{CACHE_ENV: value}))
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {CACHE_ENV}={value!r}: give the store's page cache as a whole "
                                    "number of MiB from 2 to 65,536 (unset: 64)"), result.stderr
    assert "Traceback" not in result.output
    assert not project.store_path.exists()
    assert not qa_server.stats()["chat_by_model"]
