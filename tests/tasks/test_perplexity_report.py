"""The perplexity report's edges through the CLI and the test server: a one-token text gives no perplexity (its
only token is the unscored first) and is named, not dropped silently; `options.baseline` picks the ratios'
denominator; items without a noisy text leave the dialect-vs-noisy table empty with a sentence saying why."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import yaml


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_unusable_texts_baseline_and_no_noisy(tmp_path: Path, cli: Any, session_server: Any) -> None:
    items = [{"id": "a", "variants": {"standard": "Der Hund bellt laut.", "bavarian": "Servus"}},
             {"id": "b", "variants": {"standard": "Die Katze schläft.", "bavarian": "D Katz schlaft."}},
             {"id": "c", "variants": {"standard": "Es regnet heute.", "bavarian": "Es regnt heid."}}]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                          encoding="utf-8")
    exp = tmp_path / "ppl.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "ppl", "task": "perplexity", "data": "items.jsonl",
        "models": [{"id": "m", "provider": "openai", "base_url": session_server.base_url, "model": "m"}],
        "options": {"baseline": "bavarian", "n_resamples": 200}}), encoding="utf-8")
    res = cli("run", exp, "--no-progress")
    assert res.exit_code == 0, res.output
    assert "perplexity: 1 scored text(s) unusable, e.g. m/a/bavarian: no token after the first" in res.output
    res = cli("report", exp, "--out", tmp_path / "rep")
    assert res.exit_code == 0, res.output
    scores = {r["variant"]: r for r in rows(tmp_path / "rep" / "perplexity_scores.csv")}
    assert list(scores) == ["bavarian", "standard"]  # the baseline first, then standard (never a dialect)
    assert scores["bavarian"]["n_texts"] == "2" and scores["standard"]["n_texts"] == "3"
    assert scores["standard"]["n_pairs"] == "2"  # item a has no usable bavarian text
    ratio = float(scores["standard"]["ratio"])
    texts = {(r["item_id"], r["variant"]): float(r["perplexity"]) for r in rows(tmp_path / "rep" /
                                                                             "perplexity_texts.csv")}
    want = (texts[("b", "standard")] + texts[("c", "standard")]) / (texts[("b", "bavarian")] + texts[("c", "bavarian")])
    assert abs(ratio - want) < 1e-12
    assert rows(tmp_path / "rep" / "perplexity_dialect_vs_noisy.csv") == []
    html = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "no token after the first to score" in html and "build one with" in html
    from dialectbias.api import open_experiment
    from dialectbias.store import Store

    loaded, task = open_experiment(exp)
    with Store.open(loaded.store_path, create=False) as store:
        content = task.report(store, tmp_path / "again")
    assert [(s.heading, s.unexplained_columns()) for s in content.sections if s.unexplained_columns()] == []
    assert content.metadata["perplexity summary"] == "per_text (options.aggregate)"


def test_a_baseline_no_text_has_is_said(tmp_path: Path, cli: Any, session_server: Any) -> None:
    (tmp_path / "items.jsonl").write_text(json.dumps({"id": "a", "variants": {
        "standard": "Der Hund bellt.", "bavarian": "Da Hund bellt."}}) + "\n", encoding="utf-8")
    exp = tmp_path / "ppl.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "ppl", "task": "perplexity", "data": "items.jsonl",
        "models": [{"id": "m", "provider": "openai", "base_url": session_server.base_url, "model": "m"}],
        "options": {"baseline": "swabian"}}), encoding="utf-8")
    assert cli("run", exp, "--no-progress").exit_code == 0
    res = cli("report", exp, "--out", tmp_path / "rep")
    assert res.exit_code == 0, res.output
    html = (tmp_path / "rep" / "index.html").read_text(encoding="utf-8")
    assert "No text has the baseline variant" in html and "swabian" in html
    scores = rows(tmp_path / "rep" / "perplexity_scores.csv")
    assert [(r["variant"], r["n_texts"], r["ratio"]) for r in scores] == [
        ("swabian", "0", ""), ("standard", "1", ""), ("bavarian", "1", "")]
