"""Caption BLEU, character-level ROUGE-L and the judges' Human Consistency Score end to end (issue 21.2), on
real BanglaVerse captions: two models' captions are imported (`echo`: the reference with its last word
changed, so BLEU is not trivially 0; `scramble`: the reference's words in reverse order), two judges on
the local test server (vlm responder) score both through `run`. The report's BLEU/ROUGE-L columns are
recomputed here from `caption_answers.csv` with sacrebleu and an LCS of our own; people then rate
judgments through the review queue API and the report's HCS table is checked against hand-computed
values."""

from __future__ import annotations

import csv
import json
import shutil
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.store import Store
from shared_data import BANGLAVERSE, find_shared, missing

DATA = find_shared(*BANGLAVERSE)
pytestmark = pytest.mark.skipif(DATA is None, reason=missing(
    *BANGLAVERSE, why="the caption metric tests need its captions and sample images"))
COMMON = {"provider": "openai", "max_concurrency": 4, "max_retries": 2, "timeout_s": 30}
DOMAINS = ("culture", "food")
ECHO = "echo"
SCRAMBLE = "scramble"


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


def _items(target: Path, per_domain: int = 3) -> list[dict[str, Any]]:
    """A flat JSONL of real captions whose image is in the sample, images copied next to it."""
    assert DATA is not None
    rows = []
    for domain in DOMAINS:
        captions = json.loads((DATA / domain / "annotations" / f"{domain}_captions.json").read_text(encoding="utf-8"))
        images = {p.stem: p for p in (DATA / domain / "images").iterdir()}
        for entry in captions:
            key = next(k for k in entry if k.endswith("_id"))
            if entry[key] not in images or len(rows) >= per_domain * (DOMAINS.index(domain) + 1):
                continue
            image = images[entry[key]]
            (target / "images").mkdir(parents=True, exist_ok=True)
            shutil.copy(image, target / "images" / image.name)
            rows.append({"id": entry[key], "domain": domain, "image": f"images/{image.name}",
                         "variants": {"standard": {"caption": entry["caption"]}}})
    (target / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                        encoding="utf-8")
    return rows


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _lcs(a: str, b: str) -> int:
    """A plain full-table LCS (independent of the package's two-row one)."""
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            table[i][j] = table[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else max(table[i - 1][j], table[i][j - 1])
    return table[-1][-1]


def _rouge(pred: str, ref: str) -> float:
    lcs = _lcs(pred, ref)
    if not pred or not ref or lcs == 0:
        return 0.0
    p, r = lcs / len(pred), lcs / len(ref)
    return 2 * p * r / (p + r)


@pytest.fixture(scope="module")
def study(vlm_server: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("caption-hcs")
    items = _items(directory)
    config = {"name": "cap", "task": "caption", "data": "items.jsonl",
              "judges": [{"id": f"judge-{c}", "model": f"judge-{c}", "base_url": vlm_server.base_url,
                          "role": "primary" if c == "a" else "secondary", **COMMON} for c in "ab"],
              "options": {"strategies": ["zero_shot"]}}
    path = directory / "cap.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    lines = []
    for item in items:
        words = item["variants"]["standard"]["caption"].split()
        lines.append({"item_id": item["id"], "variant": "standard", "model": ECHO, "strategy": "zero_shot",
                      "output": " ".join([*words[:-1], "পরীক্ষা।"])})
        lines.append({"item_id": item["id"], "variant": "standard", "model": SCRAMBLE, "strategy": "zero_shot",
                      "output": " ".join(reversed(words))})
    (directory / "echo.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n",
                                          encoding="utf-8")
    imported = cli("import-generations", path, directory / "echo.jsonl")
    assert imported.exit_code == 0, imported.output
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    report = cli("report", path, "--out", directory / "report")
    assert report.exit_code == 0, report.output
    return {"dir": directory, "path": path, "items": items}


def test_caption_scores_gain_bleu_and_character_rouge_l(study: dict[str, Any]) -> None:
    out = study["dir"] / "report"
    scores = _read(out / "caption_scores.csv")
    assert list(scores[0]) == ["model", "variant", "strategy", "domain", "n", "judge_judge-a", "judge_judge-a_n",
                               "judge_judge-b", "judge_judge-b_n", "violations", "bleu", "bleu_n", "rouge_l",
                               "rouge_l_n"]
    import sacrebleu

    answers = _read(out / "caption_answers.csv")
    assert {a["model"] for a in answers} == {SCRAMBLE, ECHO} and len(answers) == 2 * len(study["items"])
    for row in scores:  # every group recomputed: corpus BLEU (13a) and the mean code-point ROUGE-L F
        mine = [a for a in answers if a["model"] == row["model"] and row["domain"] in ("all", a["domain"])
                and a["status"] == "ok" and a["caption"]]
        refs = [unicodedata.normalize("NFC", a["reference"].strip()) for a in mine]
        assert int(row["bleu_n"]) == int(row["rouge_l_n"]) == len(mine) == int(row["n"])
        assert float(row["bleu"]) == pytest.approx(sacrebleu.corpus_bleu([a["caption"] for a in mine], [refs]).score)
        expected = sum(_rouge(a["caption"], r) for a, r in zip(mine, refs, strict=True)) / len(mine)
        assert float(row["rouge_l"]) == pytest.approx(expected)
        for a, r in zip(mine, refs, strict=True):
            assert float(a["rouge_l"]) == pytest.approx(_rouge(a["caption"], r))
    echo = next(r for r in scores if r["model"] == ECHO and r["domain"] == "all")
    assert 40 < float(echo["bleu"]) < 100 and 0.8 < float(echo["rouge_l"]) < 1  # one word of each caption wrong
    scramble = next(r for r in scores if r["model"] == SCRAMBLE and r["domain"] == "all")
    assert float(scramble["bleu"]) < float(echo["bleu"]) and float(scramble["rouge_l"]) < float(echo["rouge_l"])
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "corpus BLEU (sacrebleu, tokenize 13a); ROUGE-L F over code points" in html


def test_hcs_table_says_no_ratings_then_follows_the_ratings(study: dict[str, Any], cli: Any) -> None:
    from dialectbias.api import open_experiment
    from dialectbias.cli._review import _review_config
    from dialectbias.review import queue_kind, save_annotation

    out = study["dir"] / "report"
    assert _read(out / "caption_hcs.csv") == []
    assert (out / "caption_hcs.csv").read_text(encoding="utf-8").startswith(
        "judge,model,n,ratings,annotators,decision_accuracy,reasoning_alignment,explanation_clarity,hcs")
    assert "no human ratings yet" in (out / "index.html").read_text(encoding="utf-8")

    exp, task = open_experiment(study["path"])
    kind = queue_kind("judge_consistency")
    with Store.open(exp.store_path, create=False) as store:
        config = _review_config(exp, task, store)  # the primary judge's judgments (the app's default)
        config_b = _review_config(exp, task, store, judge="judge-b")
        targets = [*kind.targets(config, store), *kind.targets(config_b, store)]
        assert len(targets) == 2 * 2 * len(study["items"])  # judges × models × captions, imported models included
        by = {(t.details["judge"], t.details["model"], t.item_id): t for t in targets}
        first, second = (study["items"][0]["id"], study["items"][1]["id"])
        t1, t2 = by[("judge-a", ECHO, first)], by[("judge-a", ECHO, second)]
        t3 = by[("judge-b", SCRAMBLE, first)]
        assert kind.target(config, store, t3.target_id) is None  # another judge's judgment: not in this queue
        assert kind.target(config_b, store, t3.target_id) == t3
        assert [p.name for p in t1.panels][:2] == ["reference_caption", "generated_caption"]
        assert t1.panels[0].text == study["items"][0]["variants"]["standard"]["caption"]
        assert any(p.name == "explanation" for p in t1.panels)
        for target, annotator, (d, r, c) in ((t1, "sme1", (45, 35, 9)), (t1, "sme2", (40, 30, 10)),
                                             (t2, "sme1", (50, 40, 10)), (t3, "sme2", (20, 10, 5))):
            form = {"decision_accuracy": str(d), "reasoning_alignment": r, "explanation_clarity": c}
            value = kind.annotation(config if target is not t3 else config_b, store, target, form)
            assert save_annotation(store, target.target_id, annotator, kind.annotation_kind, value)
        with pytest.raises(ValueError, match="decision_accuracy: 51 is outside 0–50"):
            kind.annotation(config, store, t1, {"decision_accuracy": 51, "reasoning_alignment": 0,
                                                "explanation_clarity": 0})
        assert task.report(store, study["dir"]) is not None  # the API path writes the same tables
    again = cli("report", study["path"], "--out", study["dir"] / "rated")
    assert again.exit_code == 0, again.output
    rows = {(r["judge"], r["model"]): r for r in _read(study["dir"] / "rated/caption_hcs.csv")}
    assert set(rows) == {("judge-a", ECHO), ("judge-a", "all"), ("judge-b", SCRAMBLE), ("judge-b", "all")}
    a = rows[("judge-a", ECHO)]
    # t1: (45+35+9 + 40+30+10)/2 = 84.5; t2: 100; HCS = (84.5 + 100)/2 = 92.25
    assert (a["n"], a["ratings"], a["annotators"]) == ("2", "3", "2")
    assert float(a["hcs"]) == pytest.approx(92.25)
    assert [float(a[c]) for c in ("decision_accuracy", "reasoning_alignment", "explanation_clarity")] == \
        pytest.approx([46.25, 36.25, 9.75])
    assert rows[("judge-a", "all")] == {**a, "model": "all"}
    assert float(rows[("judge-b", SCRAMBLE)]["hcs"]) == pytest.approx(35.0)
    html = (study["dir"] / "rated/index.html").read_text(encoding="utf-8")
    assert "Human Consistency Score of the judges" in html and "no human ratings yet" not in html
