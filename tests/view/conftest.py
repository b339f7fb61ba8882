"""The explorer's study, built once per session: two qa_bias experiments on the package test server (A and B:
B's item q02 is asked differently, so its answers and verdicts change; q01, q03, q04 are the same), markup in
an item, an Urdu variant, a 36,000-character variant, a human override in A, and A's report."""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dialectbias.store import OVERRIDE_KIND, NewAnnotation, Store, add_annotations

SCRIPT = "<script>window.__xss = 1</script>"
URDU = "یہ ایک سوال ہے؟"
LONG = "দীর্ঘ " * 6000  # 36,000 characters
RLAIF_FIELDS = ("dialect_comprehension", "factual_correctness", "content_completeness", "response_clarity",
                "appropriate_length")


@dataclass
class ViewStudy:
    a: Any  # QAProject
    b: Any
    report_a: Path
    override_target: str


@pytest.fixture
def copy_of_a(view_study: ViewStudy, qa: Any, tmp_path: Path) -> Any:
    """Experiment A with its store, copied into the test's folder (a QAProject there), to be changed freely."""
    folder = tmp_path / "exp"
    shutil.copytree(view_study.a.dir, folder)
    return qa.QAProject(folder, folder / "viewa.yaml", dict(view_study.a.config))


def _items(qa: Any, changed: bool) -> list[dict[str, Any]]:
    items = [qa.qa_item(i) for i in range(4)]
    items[0]["variants"]["chittagong"] += f" {SCRIPT}"
    items[2]["variants"]["urdu"] = URDU
    items[3]["variants"]["sylhet"] = LONG
    if changed:
        items[1]["variants"]["chittagong"] = "খুলনা জিলার গাঙর নাম কী কন চাই?"
    return items


@pytest.fixture(scope="session")
def view_study(session_server: Any, qa: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory) -> ViewStudy:
    session_server.set_faults(None)
    root = tmp_path_factory.mktemp("view-study")
    projects = []
    for name, changed in (("viewa", False), ("viewb", True)):
        project = qa.make_project(root / name, session_server.base_url, name=name, items=_items(qa, changed))
        project.config["options"] = {"n_resamples": 200}
        project.rewrite()
        result = cli("run", project.yaml_path, "--no-progress")
        assert result.exit_code == 0, result.output
        projects.append(project)
    with Store.open(projects[0].store_path, create=False) as store:  # a human override of one judgment
        target = store.query("SELECT request_id FROM judgments WHERE model_id = 'model-a' AND item_id = 'q03' "
                             "AND variant = 'chittagong'")[0][0]
        value = json.dumps({"fields": dict.fromkeys(RLAIF_FIELDS, 5), "script_valid": True})
        add_annotations(store, [NewAnnotation(target, "rahim", OVERRIDE_KIND, value, "checked by hand", time.time())])
    out = projects[0].dir / "report"  # `report` re-scores the override (no model call) and writes the CSVs
    result = cli("report", projects[0].yaml_path, "--out", out)
    assert result.exit_code == 0, result.output
    return ViewStudy(projects[0], projects[1], out, target)
