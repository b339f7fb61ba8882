"""BanglaVerse prompts (issue 12.3): strategies, few-shot examples with their images, languages, no domain
leak through file names, temperature 0.1, templates per language."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from PIL import Image

from dialectbias.api import open_experiment
from dialectbias.errors import ConfigError, DataError
from dialectbias.run._specs import RequestSpec
from dialectbias.store import Store

DOMAINS = ("secretfood", "secretsport")
OPTIONS = {"standard": ["ভুনা খিচুড়ি", "পান্তা ভাত", "চাপ", "পোলাও"],
           "hindi": ["भुनी खिचड़ी", "पंता भात", "चाप", "पुलाव"]}


def _png(path: Path, shade: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    Image.new("RGB", (12, 10), (shade, 80, 160)).save(buf, format="PNG")
    path.write_bytes(buf.getvalue())


def project(tmp_path: Path, task: str = "vqa", n: int = 5, **options: Any) -> Path:
    rows = []
    for d_i, domain in enumerate(DOMAINS):
        for i in range(n):
            image = f"pics/{domain}_{i:03d}.png"
            _png(tmp_path / image, 10 * i + 100 * d_i)
            entry = {v: ({"question": f"প্রশ্ন {domain} {i}" if v == "standard" else f"प्रश्न {i}",
                          "options": OPTIONS[v], "answer_index": i % 4} if task == "vqa"
                         else {"caption": f"ক্যাপশন {i}" if v == "standard" else f"कैप्शन {i}"}) for v in OPTIONS}
            rows.append({"id": f"{domain}_{i:03d}", "domain": domain, "image": image, "variants": entry})
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n",
                                          encoding="utf-8")
    model = {"provider": "openai", "base_url": "http://127.0.0.1:9/v1"}
    config = {"name": "p", "task": task, "data": "items.jsonl", "options": options,
              "models": [{"id": "m1", "model": "m1", **model}, {"id": "m2", "model": "m2", **model}]}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    return path


def specs(path: Path, model: int = 0) -> list[RequestSpec]:
    exp, task = open_experiment(path)
    with Store.open(exp.store_path) as store:
        store.save_items(task.load_items())
        out = list(task.stages()[0].build(store, exp.models[model]))
    assert all(isinstance(s, RequestSpec) for s in out), out
    return out  # type: ignore[return-value]


def texts(spec: RequestSpec) -> str:
    content = spec.messages[0]["content"]
    return "\n".join(p["text"] for p in content if p["type"] == "text") if isinstance(content, list) else content


def kinds(spec: RequestSpec) -> list[str]:
    content = spec.messages[0]["content"]
    assert isinstance(content, list)
    return [p["type"] for p in content]


def test_zero_shot_sends_the_image_then_the_question_at_temperature_0_1(tmp_path: Path) -> None:
    out = specs(project(tmp_path))
    assert len(out) == 2 * 5 * 2  # domains × items × variants, one strategy
    spec = next(s for s in out if s.item_id == "secretfood_001" and s.variant == "standard")
    assert kinds(spec) == ["image", "text"]
    assert spec.params == {"temperature": 0.1, "max_tokens": 256}
    assert spec.meta["strategy"] == "zero_shot" and spec.template == "vqa/zero_shot"
    text = texts(spec)
    assert "প্রশ্ন secretfood 1" in text and json.dumps(OPTIONS["standard"], ensure_ascii=False) in text
    assert "Index: <option_index>" in text and "Bangla" in text


def test_no_prompt_names_the_image_file_or_its_domain_folder(tmp_path: Path) -> None:
    out = specs(project(tmp_path, strategies=["zero_shot", "few_shot", "cot"]))
    for spec in out:
        text = texts(spec).replace(spec.item_id, "")  # (the question text of this fixture names the domain)
        assert "pics/" not in text and ".png" not in text


def test_hindi_prompt_asks_for_hindi_in_devanagari(tmp_path: Path) -> None:
    spec = next(s for s in specs(project(tmp_path)) if s.variant == "hindi")
    assert "in Hindi" in texts(spec) and "Devanagari" in texts(spec)


def test_cot_asks_for_english_reasoning_then_the_final_answer(tmp_path: Path) -> None:
    out = specs(project(tmp_path, strategies=["cot"]))
    text = texts(next(s for s in out if s.variant == "standard"))
    assert "Reasoning_En" in text and 'Final Answer: Index: <option_index>, Answer: "<option_text_in_Bangla>"' in text
    assert out[0].params["max_tokens"] == 1024


def test_few_shot_attaches_three_example_images_of_the_domain_identical_across_models(tmp_path: Path) -> None:
    path = project(tmp_path, n=6, strategies=["zero_shot", "few_shot"])
    first, second = specs(path, 0), specs(path, 1)
    few = [s for s in first if s.meta["strategy"] == "few_shot"]
    # 3 examples per domain are held out of every strategy: 3 evaluated items × 2 domains × 2 variants
    assert len(few) == 3 * 2 * 2 and len(first) == 2 * len(few)
    examples = {s.item_id: s.meta["examples"] for s in few}
    assert all(len(v) == 3 and all(e.split("_")[0] == i.split("_")[0] for e in v) for i, v in examples.items())
    assert not {e for v in examples.values() for e in v} & {s.item_id for s in first}  # examples never evaluated
    assert examples == {s.item_id: s.meta["examples"] for s in second if s.meta["strategy"] == "few_shot"}
    spec = few[0]
    assert kinds(spec) == ["text", "image", "text", "image", "text", "image", "text", "image", "text"]
    content = spec.messages[0]["content"]
    images = [p["image"] for p in content if p["type"] == "image"]  # type: ignore[union-attr]
    assert len(set(images)) == 4  # three examples and the item, each its own image, the item's last
    assert 'Answer: Index: ' in texts(spec) and texts(spec).count("Example ") == 3


def test_caption_prompts_and_the_strategies_it_takes(tmp_path: Path) -> None:
    out = specs(project(tmp_path, task="caption", strategies=["zero_shot", "few_shot"]))
    zero = next(s for s in out if s.meta["strategy"] == "zero_shot" and s.variant == "standard")
    assert kinds(zero) == ["image", "text"] and "captions in Bangla only" in texts(zero)
    few = next(s for s in out if s.meta["strategy"] == "few_shot" and s.variant == "hindi")
    assert kinds(few).count("image") == 4 and "कैप्शन" in texts(few)
    with pytest.raises(ConfigError, match="has no strategy cot"):
        open_experiment(project(tmp_path / "c", task="caption", strategies=["cot"]))


def test_a_template_per_language_overrides_the_package_one(tmp_path: Path) -> None:
    (tmp_path / "tpl/vqa").mkdir(parents=True)
    (tmp_path / "tpl/vqa/zero_shot_hindi.j2").write_text("हिंदी में उत्तर दें: {{ question }} {{ options }}",
                                                         encoding="utf-8")
    out = specs(project(tmp_path, templates_dir="tpl"))
    hindi = next(s for s in out if s.variant == "hindi")
    assert hindi.template == "vqa/zero_shot_hindi" and texts(hindi).startswith("हिंदी में उत्तर दें")
    assert next(s for s in out if s.variant == "standard").template == "vqa/zero_shot"


def test_an_image_path_leaving_the_data_folder_is_refused(tmp_path: Path) -> None:
    path = project(tmp_path)
    lines = (tmp_path / "items.jsonl").read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[0])
    row["image"] = "../outside.png"
    (tmp_path / "items.jsonl").write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n", encoding="utf-8")
    _exp, task = open_experiment(path)
    with pytest.raises(DataError, match="outside the data folder"):
        list(task.load_items())


def test_a_missing_image_skips_the_item_and_counts_it(tmp_path: Path) -> None:
    path = project(tmp_path)
    (tmp_path / "pics/secretfood_002.png").unlink()
    _exp, task = open_experiment(path)
    items = list(task.load_items())
    assert "secretfood_002" not in {i.id for i in items} and len(items) == 9
    assert any("secretfood_002" in w and "image missing or unreadable" in w for w in task.input_warnings())


def test_vqa_may_list_no_models_perplexity_may_not(tmp_path: Path, cli: Any) -> None:
    path = project(tmp_path)
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    del config["models"]
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = cli("run", path, "--no-progress")  # nothing imported yet: nothing to score, said so
    assert result.exit_code == 4
    assert "lists no models and no generation was imported" in result.output
    config.update(task="perplexity", data="qa.jsonl")  # every generating task may list none (issue 22) but this
    (tmp_path / "qa.jsonl").write_text('{"id": "q1", "variants": {"standard": "ক?", "sylhet": "কিতা?"}}\n',
                                       encoding="utf-8")
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"task 'perplexity' needs at least one model \(perplexity needs each "
                       "model's own prompt token logprobs"):
        open_experiment(path)
