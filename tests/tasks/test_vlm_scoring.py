"""VQA scoring from imported answers, with known outcomes: correctness, unanswerable items, rules, violations."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from dialectbias.api import import_generations, open_experiment
from dialectbias.store import Store
from dialectbias.tasks.vlm._stats import accuracy_table

OPTIONS = ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"]


def project(tmp_path: Path, **options: object) -> Path:
    rows = [{"id": f"food_{i}", "domain": "food", "variants": {"standard": {
        "question": "এই খাবারটির নাম কী?", "options": OPTIONS, **({"answer_index": i} if i < 4 else {"answer": "নেই"})}}}
        for i in range(5)]  # food_4's answer is not among its options
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    config = {"name": "s", "task": "vqa", "data": "items.jsonl", "options": {"strategies": ["zero_shot", "cot"],
                                                                             **options}}
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    answers = {"zero_shot": 'Index: 0, Answer: "ভুনা খিচুড়ি"', "cot": "Reasoning_En:\nStep 1: rice.\n\nFinal Answer: "
               'Index: 3, Answer: "Polao"'}
    lines = [{"item_id": f"food_{i}", "variant": "standard", "model": "ext", "strategy": s, "output": o}
             for i in range(5) for s, o in answers.items()]
    (tmp_path / "a.jsonl").write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), encoding="utf-8")
    import_generations(path, tmp_path / "a.jsonl")
    return path


def rows(path: Path) -> list[dict[str, object]]:
    exp, task = open_experiment(path)
    with Store.open(exp.store_path, create=False) as store:
        return task.answers(store)  # type: ignore[attr-defined,no-any-return]


def test_known_answers_score_as_expected(tmp_path: Path) -> None:
    scored = rows(project(tmp_path))
    assert len(scored) == 10
    table = accuracy_table(scored).set_index(["strategy", "domain"])
    # zero-shot always answers option 0: right on food_0 only, of 5 (food_4 can never be right)
    assert table.loc[("zero_shot", "all"), ["n", "accuracy"]].tolist() == [5, 20.0]
    # CoT answers index 3 with the English text "Polao": the index decides (the text matches no option)
    assert table.loc[("cot", "all"), ["n", "accuracy"]].tolist() == [5, 20.0]
    cot = [r for r in scored if r["strategy"] == "cot"]
    assert {(r["rule"], r["pred"], r["violation"]) for r in cot} == {("index", 3, True)}  # English answer text
    unanswerable = [r for r in scored if r["item_id"] == "food_4"]
    assert all(not r["answerable"] and not r["correct"] for r in unanswerable)


def test_unanswerable_items_can_be_left_out(tmp_path: Path) -> None:
    scored = rows(project(tmp_path, exclude_unanswerable=True))
    assert len(scored) == 8 and "food_4" not in {r["item_id"] for r in scored}
    table = accuracy_table(scored).set_index(["strategy", "domain"])
    assert table.loc[("zero_shot", "all"), ["n", "accuracy"]].tolist() == [4, 25.0]
