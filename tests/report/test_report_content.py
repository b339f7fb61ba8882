"""Each task's HTML report read as a user reads it (issue 7.4): no `None` or `nan` shown as text, no
table without rows, every column explained by a legend; plus the report's own notes and layout."""

from __future__ import annotations

import html
import json
import re
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

import dialectbias.report._plots as plots
from dialectbias.api import build_report
from dialectbias.config import load_experiment
from dialectbias.run import import_generations
from dialectbias.tasks import get_task

TABLE = re.compile(r"<table(?P<attrs>[^>]*)>(?P<body>.*?)</table>(?:</div>)?\s*"
                   r"(?P<legend><dl class='legend'>.*?</dl>)?", re.S)


@dataclass
class Table:
    headers: list[str]
    rows: list[list[str]]
    legend: set[str]


def tables(page: str) -> list[Table]:
    """The data tables of a report (not the run metadata), with the column names their legend explains."""
    out = []
    for m in TABLE.finditer(page):
        if "meta" in m["attrs"]:
            continue
        headers = [html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", m["body"])]
        rows = [[html.unescape(c) for c in re.findall(r"<td>(.*?)</td>", r)]
                for r in re.findall(r"<tr>(.*?)</tr>", m["body"].split("<tbody>", 1)[1])]
        legend = {name.strip() for dt in re.findall(r"<dt>(.*?)</dt>", m["legend"] or "")
                  for name in html.unescape(dt).split(", ")}
        out.append(Table(headers, rows, legend))
    return out


def visible_text(page: str) -> str:
    page = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    page = re.sub(r"src='data:[^']*'", " ", page)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def check_report(index: Path) -> str:
    page = index.read_text(encoding="utf-8")
    text = visible_text(page)
    assert not re.search(r"\bNone\b", text), "a raw None in the report"
    assert not re.search(r"\bnan\b", text, re.I), "nan shown as text"
    found = tables(page)
    assert found
    for t in found:
        assert t.rows, f"a table with only a header: {t.headers}"
        missing = [h for h in t.headers if h not in t.legend]
        assert not missing, f"columns without a legend: {missing} (table {t.headers})"
    return page


# -- qa_bias: a real run against the test server, then the edge cases cut into the store ------------


@pytest.fixture(scope="module")
def qa_report(session_server: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory, qa: Any) -> Path:
    root = tmp_path_factory.mktemp("qa_report")
    session_server.set_faults(None)
    project = qa.make_project(root / "exp", session_server.base_url, n_items=6)
    judge = dict(project.config["judges"][0], id="judge-2", model="judge-model-2", role="secondary")
    project.rewrite(judges=[*project.config["judges"], judge], options={"n_resamples": 200})
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(project.store_path) as db:
        # model-b has no judgment in sylhet: an incomplete Table 4 row
        db.execute("DELETE FROM judgments WHERE model_id = 'model-b' AND variant = 'sylhet'")
        # the second judge rated two chittagong answers only: agreement there is undefined
        db.execute("DELETE FROM judgments WHERE judge_id = 'judge-2' AND variant = 'chittagong' AND "
                   "NOT (model_id = 'model-a' AND item_id IN ('q01', 'q02'))")
    out = root / "report"
    assert cli("report", project.yaml_path, "--out", out).exit_code == 0
    return out


def test_qa_report_has_no_none_nan_empty_table_or_unexplained_column(qa_report: Path) -> None:
    check_report(qa_report / "index.html")


def test_qa_report_cells(qa_report: Path) -> None:
    found = {tuple(t.headers): t for t in tables((qa_report / "index.html").read_text(encoding="utf-8"))}
    sizes = next(t for h, t in found.items() if "params_b" in h)
    assert all(r[1] == "—" and r[2] == "—" for r in sizes.rows)  # family, params_b not given
    matrix = next(t for h, t in found.items() if "dialects_scored" in h and "avg" in h)
    rows = {r[0]: dict(zip(matrix.headers, r, strict=True)) for r in matrix.rows}
    assert rows["model-b"]["avg"] == "—" and rows["model-b"]["dialects_scored"] == "1"
    assert rows["model-a"]["dialects_scored"] == "2" and list(rows)[-2:] == ["model-b", "dialect_avg"]
    by_type = next(t for h, t in found.items() if "all" in h and "factual" in h)
    # each cell: mean [95% CI] (n scored), n a whole count (not 18.000); the models' average last
    assert by_type.rows[-1][0] == "model_avg"
    assert all(re.fullmatch(r"\d+\.\d\d \[\d+\.\d\d, \d+\.\d\d\] \(\d+\)", c) for r in by_type.rows for c in r[1:])
    agreement = next(t for h, t in found.items() if "ccc" in h)
    chitta = next(dict(zip(agreement.headers, r, strict=True)) for r in agreement.rows if r[3] == "chittagong")
    assert chitta["n"] == "2" and chitta["ccc"] == chitta["cbs"] == "—" and chitta["pass"] == ""
    assert chitta["note"] == "n < 3: agreement undefined"
    models = next(t for h, t in found.items() if "model_a" in h)
    assert len(models.headers) <= 7  # folded to fit the page; the CSV has every column


def test_report_tables_scroll_inside_the_page(qa_report: Path) -> None:
    page = (qa_report / "index.html").read_text(encoding="utf-8")
    data_tables = [m for m in TABLE.finditer(page) if "meta" not in m["attrs"]]
    assert page.count("<div class='table-wrap'><table>") == len(data_tables)
    assert ".table-wrap{max-width:100%;overflow-x:auto}" in page


def test_agreement_scatter_colour_scale_is_linear() -> None:
    from matplotlib.colors import LogNorm, Normalize

    norm = plots.count_norm(40)
    assert type(norm) is Normalize and not isinstance(norm, LogNorm)
    assert (norm.vmin, norm.vmax) == (1.0, 40.0) and norm(20.5) == pytest.approx(0.5)


def test_heatmap_is_sized_by_its_table() -> None:
    small, wide, tall = plots.heatmap_size(2, 3), plots.heatmap_size(2, 12), plots.heatmap_size(20, 3)
    assert small[0] >= 6.0 and small[1] >= 3.5  # ≥ 660 × 385 px at 110 dpi
    assert wide[0] > small[0] and tall[1] > small[1]


# -- association: answers designed by hand, stored with import_generations --------------------------


def association_project(root: Path, setting: str, **extra: Any) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {
        "name": f"assoc-{setting}", "task": "association", "seed": 1,
        "models": [{"id": m, "provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": m}
                   for m in ("m1", "m2")],
        "options": {"setting": setting, "traits": ["uneducated", "friendly"], "n_resamples": 200}, **extra}
    if setting == "naming":
        config["options"] |= {"languages": {"de": ["bavarian"]}, "samples": 3}
    else:  # items in the README's format: id, variants (standard + dialects), no language field
        items = [{"id": "t1", "variants": {"standard": "Ich gehe heute nicht nach Hause.",
                                           "bavarian": "I geh heid ned hoam."}},
                 {"id": "t2", "domain": "home", "variants": {"standard": "Das ist ein kleines Haus.",
                                                             "bavarian": "Des is a kloans Haisl.",
                                                             "alemannic": "Das isch es chlis Hüsli."}}]
        (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                          encoding="utf-8")
        config["data"] = "items.jsonl"
    path = root / "exp.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def store_answers(exp_path: Path, reject_every: int | None) -> None:
    """Answers giving the dialect writer k of the trait and 5 − k of the opposite adjectives (k cycles),
    and a refusal as every `reject_every`-th answer (None: every answer parses)."""
    exp = load_experiment(exp_path)
    task = get_task(exp.task)(exp)
    lines = []
    for n, item in enumerate(task.load_items()):
        prompt = task._prompt(item)
        for m, model in enumerate(("m1", "m2")):
            k = (n + m) % 6
            d, s = prompt.dialect_writer, prompt.standard_writer
            writer = {a: d if i < k else s for i, a in enumerate(prompt.trait_adjectives)}
            writer |= {a: d if i >= k else s for i, a in enumerate(prompt.opposite_adjectives)}
            output = "\n".join(f"{a}: {writer[a]}" for a in prompt.adjectives)
            if reject_every and (n + m) % reject_every == 0:
                output = "Sorry, I cannot judge people by how they write."
            lines.append({"item_id": item.id, "variant": item.metadata["dialect"], "model": model,
                          "output": output})
    gen = exp_path.parent / "gen.jsonl"
    gen.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8")
    import_generations(exp, task, gen)


def test_association_naming_report(tmp_path: Path) -> None:
    note = "Demonstration subject, not a finding: a test store."
    exp = association_project(tmp_path / "exp", "naming", note=note)
    store_answers(exp, reject_every=4)
    page = check_report(build_report(exp, tmp_path / "report"))
    assert f"<p class='caveat'>{html.escape(note)}</p>" in page
    rejected = [t for t in tables(page) if "reject_reason" in t.headers]
    assert rejected and rejected[0].rows


def test_association_usage_report_without_rejections(tmp_path: Path) -> None:
    exp = association_project(tmp_path / "exp", "usage")
    store_answers(exp, reject_every=None)
    page = check_report(build_report(exp, tmp_path / "report"))
    assert "none: every answer passed strict parsing" in page
    assert not [t for t in tables(page) if "reject_reason" in t.headers]


def test_quickstart_experiment_carries_its_caveat_into_the_report(monkeypatch: pytest.MonkeyPatch) -> None:
    from dialectbias import quickstart
    from dialectbias.providers import _hf_models

    monkeypatch.setattr(_hf_models, "find_smollm2_gguf", lambda: (Path("/models/smollm2"), "model.gguf"))
    note = quickstart.quickstart_experiment()["note"]
    assert "not a finding" in note.lower()
