"""A perplexity control on the German parallel texts, end to end through the CLI against the local test server
(German paper App. C.2): `build noise`, a `perplexity` run with provider openai (prompt logprobs through
`/v1/completions` with `echo`), the report's tables checked number by number against the server's known logprobs
(needs ../shared/data/german_dialect_bias)."""

from __future__ import annotations

import csv
import json
import math
import statistics
from pathlib import Path
from typing import Any

import pytest
import yaml

from shared_data import GERMAN, shared_path

PER_DIALECT = 2
DIALECTS = ("bar", "als", "nds")
MODELS = ("m1", "m2")


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def expected_text(text: str, model: str) -> tuple[int, float]:
    """(scored tokens, their logprob sum) by the test server's stand-in for `model` (first token not scored)."""
    from dialectbias.testing._logprobs import prompt_tokens, token_logprob

    toks = prompt_tokens(text)
    return len(toks) - 1, math.fsum(token_logprob(t, model) for t in toks[1:])


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory, cli: Any) -> tuple[Path, list[dict[str, Any]], Path]:
    pairs = shared_path(*GERMAN, "parallel_pairs.csv", why="the study reads its texts")
    from dialectbias.testing import TestServer

    root = tmp_path_factory.mktemp("ppl")
    picked: dict[str, int] = {}
    items = []
    for r in rows(pairs):  # the paper's corpus: kept rows, a few per dialect
        if r["used_in_tasks"] != "True" or r["language"] not in DIALECTS or picked.get(r["language"], 0) >= PER_DIALECT:
            continue
        picked[r["language"]] = picked.get(r["language"], 0) + 1
        items.append({"id": f"{r['language']}-{r['id']}", "language": "de",
                      "variants": {"standard": r["standard_text"], r["language"]: r["dialect_text"]}})
    (root / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in items),
                                      encoding="utf-8")
    res = cli("build", "noise", root / "items.jsonl", "--vocabulary",
              pairs.parent / "deu_news_2024_10K-words_cleaned_5000.txt", "--p", "0.5", "--seed", "0",
              "--out", root / "items_noisy.jsonl")
    assert res.exit_code == 0, res.output
    noisy_items = [json.loads(line) for line in (root / "items_noisy.jsonl").read_text(encoding="utf-8").splitlines()]
    with TestServer() as server:
        config = {"name": "de-ppl", "task": "perplexity", "data": "items_noisy.jsonl", "seed": 3,
                  "models": [{"id": m, "provider": "openai", "base_url": server.base_url, "model": m}
                             for m in MODELS],
                  "options": {"n_resamples": 500}}
        exp = root / "de-ppl.yaml"
        exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        res = cli("run", exp, "--no-progress")
        assert res.exit_code == 0, res.output
        sent = server.requests()
    res = cli("report", exp, "--out", root / "report")
    assert res.exit_code == 0, res.output
    assert sent and all(r["path"] == "/v1/completions" for r in sent)
    body = sent[0]["body"]
    assert body["echo"] is True and body["logprobs"] == 0 and body["max_tokens"] == 0
    return root / "report", noisy_items, exp


def test_per_text_rows_match_the_servers_logprobs(study: tuple[Path, list[dict[str, Any]], Path]) -> None:
    report, items, _ = study
    texts = {(r["model"], r["item_id"], r["variant"]): r for r in rows(report / "perplexity_texts.csv")}
    assert len(texts) == 2 * 3 * len(items) == 2 * 3 * PER_DIALECT * len(DIALECTS)
    for model in MODELS:
        for item in items:
            for variant, text in item["variants"].items():
                n, total = expected_text(text, model)
                r = texts[(model, item["id"], variant)]
                assert int(r["n_tokens"]) == n
                assert float(r["logprob_sum"]) == pytest.approx(total, abs=1e-9)
                assert float(r["perplexity"]) == pytest.approx(math.exp(-total / n), rel=1e-12)
    assert texts[("m1", items[0]["id"], "standard")]["logprob_sum"] != texts[("m2", items[0]["id"], "standard")][
        "logprob_sum"]


def test_scores_table_by_hand(study: tuple[Path, list[dict[str, Any]], Path]) -> None:
    report, items, _ = study
    table = rows(report / "perplexity_scores.csv")
    assert [(r["model"], r["variant"]) for r in table] == [
        (m, v) for m in MODELS for v in ("standard", "als", "bar", "nds", "all dialects", "noisy")]
    scores = {r["variant"]: r for r in table if r["model"] == "m2"}
    per_variant: dict[str, list[tuple[int, float]]] = {}
    for item in items:
        for variant, text in item["variants"].items():
            key = variant if variant in ("standard", "noisy") else "dialect"
            per_variant.setdefault(key, []).append(expected_text(text, "m2"))
            if key == "dialect":
                per_variant.setdefault(variant, []).append(expected_text(text, "m2"))
    for name, key in (("standard", "standard"), ("noisy", "noisy"), ("all dialects", "dialect"), ("bar", "bar")):
        got, texts = scores[name], per_variant[key]
        ppl = [math.exp(-s / n) for n, s in texts]
        assert int(got["n_texts"]) == len(texts)
        assert int(got["n_tokens"]) == sum(n for n, _ in texts)
        assert float(got["mean_tokens"]) == pytest.approx(sum(n for n, _ in texts) / len(texts), rel=1e-12)
        assert float(got["mean_ppl"]) == pytest.approx(statistics.mean(ppl), rel=1e-12)
        assert float(got["perplexity"]) == float(got["mean_ppl"])  # per_text is the default (the paper's mean)
        assert float(got["median_ppl"]) == pytest.approx(statistics.median(ppl), rel=1e-12)
        pooled = math.exp(-sum(s for _, s in texts) / sum(n for n, _ in texts))
        assert float(got["pooled_ppl"]) == pytest.approx(pooled, rel=1e-12)
    std = statistics.mean(math.exp(-s / n) for n, s in per_variant["standard"])
    noisy = statistics.mean(math.exp(-s / n) for n, s in per_variant["noisy"])
    r = scores["noisy"]
    assert float(r["ratio"]) == pytest.approx(noisy / std, rel=1e-12)
    assert float(r["ci_low"]) <= float(r["ratio"]) <= float(r["ci_high"])
    assert int(r["n_pairs"]) == len(items) and 0 <= float(r["wilcoxon_p"]) <= 1
    assert scores["standard"]["ratio"] == ""


def test_dialect_vs_noisy_and_html(study: tuple[Path, list[dict[str, Any]], Path]) -> None:
    report, _, _ = study
    vs = {r["dialect"]: r for r in rows(report / "perplexity_dialect_vs_noisy.csv") if r["model"] == "m1"}
    assert set(vs) == {*DIALECTS, "all dialects"}
    assert int(vs["all dialects"]["n_pairs"]) == PER_DIALECT * len(DIALECTS)
    for r in vs.values():
        assert float(r["ratio"]) == pytest.approx(float(r["dialect_ppl"]) / float(r["noisy_ppl"]), rel=1e-12)
    html = (report / "index.html").read_text(encoding="utf-8")
    assert "Perplexity per model × variant" in html and "Dialect vs noisy text" in html


def test_pooled_switch_changes_the_summary_not_the_requests(study: tuple[Path, list[dict[str, Any]], Path],
                                                            cli: Any) -> None:
    report, _, exp = study
    config = yaml.safe_load(exp.read_text(encoding="utf-8"))
    config["options"]["aggregate"] = "pooled"
    exp.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    res = cli("report", exp, "--out", report.parent / "pooled")
    assert res.exit_code == 0, res.output
    pooled = {r["variant"]: r for r in rows(report.parent / "pooled" / "perplexity_scores.csv") if r["model"] == "m1"}
    for r in pooled.values():
        assert r["perplexity"] == r["pooled_ppl"]
    n = pooled["noisy"]
    assert float(n["ratio"]) == pytest.approx(float(n["pooled_ppl"]) / float(pooled["standard"]["pooled_ppl"]))
