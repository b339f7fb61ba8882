"""vqa on a local vision-language model (`provider: hf`): a tiny random LLaVA built in the test (the builder
of tests/providers/test_hf_vision.py) answers zero-shot and few-shot prompts, the few-shot ones carrying the
example's image besides the item's, through the store's image parts. Its answers are noise: the test checks
that every request is answered, that the example images reach the model (token counts) and that the
answers are scored."""

from __future__ import annotations

import importlib.util
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("torch")
pytest.importorskip("transformers")

from PIL import Image

from dialectbias.store import Store


def _builder() -> Any:
    path = Path(__file__).resolve().parents[1] / "providers" / "test_hf_vision.py"
    spec = importlib.util.spec_from_file_location("_tiny_llava_builder", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_vqa_strategies_on_a_tiny_local_vlm(tmp_path: Path, cli: Any) -> None:
    tiny = _builder()
    model_dir = tiny.build_tiny_llava(tmp_path / "tiny-llava")
    rows = []
    for d, domain in enumerate(("food", "river")):
        for i in range(4):
            buf = io.BytesIO()
            Image.new("RGB", (40, 30), (60 * i, 100 * d, 90)).save(buf, format="PNG")
            (tmp_path / "images").mkdir(exist_ok=True)
            (tmp_path / f"images/{domain}_{i}.png").write_bytes(buf.getvalue())
            rows.append({"id": f"{domain}_{i}", "domain": domain, "image": f"images/{domain}_{i}.png",
                         "variants": {"standard": {"question": "ছবিতে কী আছে?", "options": ["নদী", "নৌকা", "বাজার",
                                                                                          "খাবার"], "answer_index": i}}})
    (tmp_path / "items.jsonl").write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    config = {"name": "local", "task": "vqa", "data": "items.jsonl",
              "models": [{"id": "tiny-vlm", "provider": "hf", "model": str(model_dir), "batch_size": 4,
                          "params": {"max_tokens": 6}}],
              "options": {"strategies": ["zero_shot", "few_shot"], "few_shot_k": 1}}
    path = tmp_path / "local.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    result = cli("run", path, "--no-progress")
    assert result.exit_code == 0, result.output
    with Store.open(tmp_path / "local.sqlite", create=False) as store:
        done = store.query("SELECT json_extract(q.meta, '$.strategy'), r.status, r.tokens_in FROM requests q "
                           "JOIN results r USING (request_id) WHERE q.stage = 'generate'")
    assert len(done) == 2 * 3 * 2 and all(r[1] == "ok" for r in done)  # 3 evaluated items per domain
    zero = min(r[2] for r in done if r[0] == "zero_shot")
    few = min(r[2] for r in done if r[0] == "few_shot")
    assert few >= zero + tiny.IMAGE_TOKENS  # the example's image reached the model too
    assert cli("report", path, "--out", tmp_path / "report").exit_code == 0
    overall = [r for r in (tmp_path / "report/vqa_accuracy.csv").read_text().splitlines() if ",all," in r]
    assert len(overall) == 2
