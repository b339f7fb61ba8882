"""vqa and caption end to end on the BanglaVerse sample images (issue 12.6), against the local test server
with the VLM responder, which checks every image it gets: all three strategies, the CSVs and the HTML
report; imported answers score as a direct run; several variants give Table 3 and the paired test.

Needs ../shared/data/banglaverse (skips with a message without it). The default suite uses two items per
domain; the whole 88-image sample runs under `-m slow`.
"""

from __future__ import annotations

import csv
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import open_experiment
from dialectbias.store import Store
from dialectbias.testing._vlm_responder import IMAGE_CHECK_FAILED


def _banglaverse() -> Path | None:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / "banglaverse" / "data"
        if candidate.is_dir():
            return candidate
    return None


DATA = _banglaverse()
pytestmark = pytest.mark.skipif(DATA is None, reason="shared data not available (../shared/data/banglaverse): "
                                "the BanglaVerse end-to-end tests need its sample images")
COMMON = {"provider": "openai", "max_concurrency": 8, "max_retries": 2, "timeout_s": 30}


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


def write_experiment(directory: Path, name: str, task: str, base_url: str | None, data: str,
                     judges: int = 0, models: int = 2, **options: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"name": name, "task": task, "data": data, "options": options}
    if models:
        config["models"] = [{"id": f"vlm-{c}", "model": f"vlm-{c}", "base_url": base_url, **COMMON}
                            for c in "ab"[:models]]
    if judges:
        config["judges"] = [{"id": f"judge-{c}", "model": f"judge-{c}", "base_url": base_url,
                             "role": "primary" if c == "a" else "secondary", **COMMON} for c in "ab"[:judges]]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def image_counts(server: Any) -> list[tuple[int, int]]:
    """(images, 1 + few-shot examples) of every generation request the server received."""
    out = []
    for record in server.requests():
        body = record["body"]
        if "response_format" in body:
            continue
        content = body["messages"][0]["content"]
        if not isinstance(content, list):
            continue
        text = "\n".join(p.get("text", "") for p in content if p["type"] == "text")
        out.append((sum(p["type"] == "image_url" for p in content), 1 + text.count("\nExample ")
                    + text.startswith("Example ")))
    return out


def check_outputs(store_path: Path) -> int:
    with Store.open(store_path, create=False) as store:
        bad = store.query("SELECT count(*) FROM results WHERE output LIKE ?", (f"{IMAGE_CHECK_FAILED}%",))[0][0]
        ok = store.query("SELECT count(*) FROM results WHERE status = 'ok'")[0][0]
    assert bad == 0, f"{bad} requests failed the responder's image check"
    return int(ok)


@pytest.fixture(scope="module")
def vqa_run(vlm_server: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    vlm_server.reset_stats()
    directory = tmp_path_factory.mktemp("vqa")
    path = write_experiment(directory, "bv-vqa", "vqa", vlm_server.base_url, str(DATA),
                            strategies=["zero_shot", "few_shot", "cot"], only_with_images=True,
                            max_items_per_domain=2)
    result = cli("run", path, "--no-progress")
    counts = image_counts(vlm_server)
    stats = vlm_server.stats()
    report = cli("report", path, "--out", directory / "report")
    return {"dir": directory, "path": path, "run": result, "report": report, "counts": counts, "stats": stats}


def test_vqa_runs_all_strategies_with_checked_images(vqa_run: dict[str, Any]) -> None:
    assert vqa_run["run"].exit_code == 0, vqa_run["run"].output
    assert "1062 items left out: no image file" in vqa_run["run"].output  # the sample's missing images, counted
    assert vqa_run["stats"]["status_counts"].get("400") is None
    counts = vqa_run["counts"]
    assert len(counts) == 2 * 9 * 2 * 3  # models × domains × items × strategies
    assert all(images == expected for images, expected in counts)
    assert sorted({e for _, e in counts}) == [1, 4]  # one image, or three examples and the item
    assert check_outputs(vqa_run["dir"] / "bv-vqa.sqlite") == len(counts)


def test_vqa_report_tables(vqa_run: dict[str, Any]) -> None:
    assert vqa_run["report"].exit_code == 0, vqa_run["report"].output
    out = vqa_run["dir"] / "report"
    rows = read_csv(out / "vqa_accuracy.csv")
    assert list(rows[0]) == ["model", "variant", "strategy", "domain", "n", "accuracy"]
    overall = [r for r in rows if r["domain"] == "all"]
    assert {(r["model"], r["strategy"]) for r in overall} == {(m, s) for m in ("vlm-a", "vlm-b")
                                                                for s in ("zero_shot", "few_shot", "cot")}
    assert all(r["n"] == "18" for r in overall)
    answers = read_csv(out / "vqa_answers.csv")
    for r in overall:  # accuracy = correct / n in percent, unrounded, from the per-answer table
        mine = [a for a in answers if a["model"] == r["model"] and a["strategy"] == r["strategy"]]
        assert float(r["accuracy"]) == pytest.approx(100 * sum(a["correct"] == "True" for a in mine) / len(mine))
    assert {a["rule"] for a in answers} >= {"index+text", "none"}  # the responder's formats, recorded per answer
    for name in ("vqa_accuracy_ci.csv", "vqa_table3.csv", "vqa_paired_test.csv", "vqa_domain_difficulty.csv",
                 "vqa_strategies_by_model.csv", "vqa_parse_rules.csv", "vqa_language_violations.csv",
                 "vqa_accuracy_heatmap.png", "index.html"):
        assert (out / name).is_file(), name
    difficulty = read_csv(out / "vqa_domain_difficulty.csv")
    assert len(difficulty) == 9 and [d["rank"] for d in difficulty] == [str(i) for i in range(1, 10)]
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "Domain difficulty f(d)" in html and "data:image/png;base64," in html
    exp, task = open_experiment(vqa_run["path"])
    (vqa_run["dir"] / "again").mkdir()
    with Store.open(exp.store_path, create=False) as store:
        sections = task.report(store, vqa_run["dir"] / "again")["sections"]
    assert [(s.heading, s.unexplained_columns()) for s in sections if s.unexplained_columns()] == []


def test_imported_answers_give_the_same_accuracy_as_the_direct_run(vqa_run: dict[str, Any], cli: Any) -> None:
    with Store.open(vqa_run["dir"] / "bv-vqa.sqlite", create=False) as store:
        lines = [{"item_id": r.item_id, "variant": r.variant, "model": r.model_id, "strategy": r.meta["strategy"],
                  "output": r.output} for r in store.stage_results("generate")]
    imports = vqa_run["dir"] / "imported"
    imports.mkdir()
    (imports / "answers.jsonl").write_text("\n".join(json.dumps(line, ensure_ascii=False) for line in lines),
                                           encoding="utf-8")
    # all imported: no image file is needed and no few-shot example held out, so the whole release (1,150
    # items, most without their image in the sample) is the data, and only the imported answers are scored
    path = write_experiment(imports, "bv-imported", "vqa", None, str(DATA), models=0,
                            strategies=["zero_shot", "few_shot", "cot"])
    result = cli("import-generations", path, imports / "answers.jsonl")
    assert result.exit_code == 0, result.output
    assert f"{len(lines)} imported" in result.output
    run = cli("run", path, "--no-progress")  # nothing to send: every answer is imported
    assert run.exit_code == 0, run.output
    assert "calls 0" in run.output
    assert cli("report", path, "--out", imports / "report").exit_code == 0
    assert (imports / "report/vqa_accuracy.csv").read_text() == (vqa_run["dir"] / "report/vqa_accuracy.csv").read_text()


def test_import_line_without_strategy_is_refused(vqa_run: dict[str, Any], cli: Any) -> None:
    directory = vqa_run["dir"] / "nostrategy"
    directory.mkdir()
    path = write_experiment(directory, "bv-ns", "vqa", None, str(DATA), models=0, strategies=["zero_shot", "cot"],
                            only_with_images=True, max_items_per_domain=1)
    (directory / "a.jsonl").write_text(json.dumps({"item_id": "food_001", "variant": "standard", "model": "x",
                                                   "output": "Index: 0"}), encoding="utf-8")
    result = cli("import-generations", path, directory / "a.jsonl")
    assert result.exit_code != 0
    assert "x/food_001/standard: matches 2 requests of the task: give 'strategy' (one of cot, zero_shot)" in \
        result.output


def test_caption_runs_with_two_judges_that_see_the_image(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    vlm_server.reset_stats()
    path = write_experiment(tmp_path, "bv-cap", "caption", vlm_server.base_url, str(DATA), judges=2,
                            strategies=["zero_shot", "few_shot"], only_with_images=True, max_items_per_domain=1,
                            judge_sees_image=True)
    result = cli("run", path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert vlm_server.stats()["status_counts"].get("400") is None
    assert all(images == expected for images, expected in image_counts(vlm_server))
    judged = [r["body"] for r in vlm_server.requests() if "response_format" in r["body"]]
    assert len(judged) == 2 * 2 * 9 * 2  # judges × models × domains × strategies
    assert all(sum(p["type"] == "image_url" for p in b["messages"][1]["content"]) == 1 for b in judged)
    check_outputs(tmp_path / "bv-cap.sqlite")
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    scores = read_csv(tmp_path / "report/caption_scores.csv")
    assert list(scores[0])[:5] == ["model", "variant", "strategy", "domain", "n"]
    assert {"judge_judge-a", "judge_judge-b", "violations"} <= set(scores[0])
    assert all(0 <= float(r["judge_judge-a"]) <= 1 for r in scores)
    corr = read_csv(tmp_path / "report/caption_judge_correlation.csv")
    assert [(r["variant"], r["n"]) for r in corr] == [("standard", "36"), ("all", "36")]


def _copy_subset(target: Path, per_domain: int, domains: tuple[str, ...]) -> list[dict[str, Any]]:
    """A flat JSONL of sample items with images copied next to it, plus machine `sylhet`, `rangpur` and
    `hindi` variants (here: the same text, marked not human-validated; a translation task writes real ones)."""
    assert DATA is not None
    rows = []
    for domain in domains:
        qa = json.loads((DATA / domain / "annotations" / f"{domain}_qa_pairs.json").read_text(encoding="utf-8"))
        captions = {next(v for k, v in c.items() if k.endswith("_id")): c["caption"] for c in json.loads(
            (DATA / domain / "annotations" / f"{domain}_captions.json").read_text(encoding="utf-8"))}
        images = {p.stem: p for p in (DATA / domain / "images").iterdir()}
        for entry in [q for q in qa if q["image_id"] in images][:per_domain]:
            image = images[entry["image_id"]]
            (target / "images").mkdir(parents=True, exist_ok=True)
            shutil.copy(image, target / "images" / image.name)
            base = {"question": entry["question"], "options": entry["options"], "answer": entry["answer"],
                    "caption": captions[entry["image_id"]]}
            rows.append({"id": entry["image_id"], "domain": domain, "image": f"images/{image.name}",
                         "variants": {"standard": base, **{v: {**base, "is_human_validated": False}
                                                           for v in ("sylhet", "rangpur", "hindi")}}})
    (target / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                        encoding="utf-8")
    return rows


def test_variants_give_table3_and_the_paired_test(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    _copy_subset(tmp_path, 2, ("food", "sports", "culture"))
    path = write_experiment(tmp_path, "bv-var", "vqa", vlm_server.base_url, "items.jsonl",
                            strategies=["zero_shot", "cot"])
    assert cli("run", path, "--no-progress").exit_code == 0
    check_outputs(tmp_path / "bv-var.sqlite")
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    table3 = read_csv(tmp_path / "report/vqa_table3.csv")
    variants = {r["variant"] for r in table3}
    assert variants == {"standard", "sylhet", "rangpur", "hindi", "dialect_mean"}
    for model in ("vlm-a", "vlm-b"):
        mine = {r["variant"]: r for r in table3 if r["model"] == model and r["strategy"] == "cot"}
        assert float(mine["dialect_mean"]["accuracy"]) == pytest.approx(
            (float(mine["sylhet"]["accuracy"]) + float(mine["rangpur"]["accuracy"])) / 2)
        assert float(mine["hindi"]["delta"]) == pytest.approx(
            float(mine["hindi"]["accuracy"]) - float(mine["standard"]["accuracy"]))
    paired = read_csv(tmp_path / "report/vqa_paired_test.csv")
    assert [(r["strategy"], r["conditions"]) for r in paired] == [("cot", "6"), ("zero_shot", "6")]
    violations = read_csv(tmp_path / "report/vqa_language_violations.csv")
    hindi = [r for r in violations if r["variant"] == "hindi"]
    # the "hindi" variant here holds Bengali text, so every answer read is a Bengali-script violation
    assert hindi and all(r["violations"] == r["checked"] for r in hindi)
    html = (tmp_path / "report/index.html").read_text(encoding="utf-8")
    assert "Machine (not human-validated) variants" in html


@pytest.mark.slow
def test_the_whole_sample_vqa_and_caption(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    vlm_server.reset_stats()
    vqa = write_experiment(tmp_path / "v", "bv-all-vqa", "vqa", vlm_server.base_url, str(DATA), models=1,
                           strategies=["zero_shot", "few_shot", "cot"], only_with_images=True)
    cap = write_experiment(tmp_path / "c", "bv-all-cap", "caption", vlm_server.base_url, str(DATA), models=1,
                           judges=2, strategies=["zero_shot", "few_shot"], only_with_images=True,
                           vqa_accuracy=str(tmp_path / "v/report/vqa_accuracy.csv"))
    for path, store in ((vqa, tmp_path / "v/bv-all-vqa.sqlite"), (cap, tmp_path / "c/bv-all-cap.sqlite")):
        result = cli("run", path, "--no-progress")
        assert result.exit_code == 0, result.output
        check_outputs(store)
        assert cli("report", path, "--out", path.parent / "report").exit_code == 0
    assert all(images == expected for images, expected in image_counts(vlm_server))
    overall = [r for r in read_csv(tmp_path / "v/report/vqa_accuracy.csv") if r["domain"] == "all"]
    # every strategy answers the same items: the sample's questions minus 3 few-shot examples per domain
    assert len({r["strategy"] for r in overall}) == 3 and len({r["n"] for r in overall}) == 1
    difficulty = read_csv(tmp_path / "c/report/caption_domain_difficulty.csv")
    assert len(difficulty) == 9 and all(r["partial"] == "False" for r in difficulty)


def test_imported_captions_are_judged_without_models(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    direct = write_experiment(tmp_path / "d", "cap-direct", "caption", vlm_server.base_url, str(DATA), models=1,
                              only_with_images=True, max_items_per_domain=1)
    assert cli("run", direct, "--no-progress").exit_code == 0
    with Store.open(tmp_path / "d/cap-direct.sqlite", create=False) as store:
        lines = [{"item_id": r.item_id, "variant": r.variant, "model": "elsewhere-vlm", "strategy": "zero_shot",
                  "output": r.output} for r in store.stage_results("generate")]
    assert len(lines) == 9
    (tmp_path / "captions.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines),
                                             encoding="utf-8")
    path = write_experiment(tmp_path / "i", "cap-imported", "caption", vlm_server.base_url, str(DATA), models=0,
                            judges=1, only_with_images=True, max_items_per_domain=1)
    assert cli("import-generations", path, tmp_path / "captions.jsonl").exit_code == 0
    result = cli("run", path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "judge · judge-a" in result.output and "calls 9" in result.output
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    overall = [r for r in read_csv(tmp_path / "report/caption_scores.csv") if r["domain"] == "all"]
    assert [(r["model"], r["n"], r["judge_judge-a_n"]) for r in overall] == [("elsewhere-vlm", "9", "9")]
