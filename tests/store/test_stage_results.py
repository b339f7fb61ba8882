"""Typed reads for tasks: a stage's results for a model (current rows only) and per stage × model counts."""

from __future__ import annotations

import time
from pathlib import Path

from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import ResultCounts, Store

A = OpenAIModelConfig(id="model-a", model="a", base_url="http://127.0.0.1:1/v1")
B = OpenAIModelConfig(id="model-b", model="b", base_url="http://127.0.0.1:1/v1")


def spec(model: OpenAIModelConfig, item: str, text: str = "প্রশ্ন", template: str = "qa/answer") -> RequestSpec:
    return RequestSpec(stage="generate", model=model, item_id=item, variant="standard", template=template,
                       messages=[{"role": "user", "content": f"{text} {item}"}], meta={"n": item})


def result(request_id: str, status: str, output: str | None) -> tuple[str, dict[str, object]]:
    return ("results", {"request_id": request_id, "status": status, "output": output, "finish_reason": None,
                        "tokens_in": 0, "tokens_out": 0, "latency_s": 0.0, "cache_hit": 0, "retries": 0,
                        "error": None if status == "ok" else "HTTP 500", "completed_at": time.time()})


def test_stage_results_are_the_current_successful_rows_of_one_model(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        old = spec(A, "q1", "পুরনো")
        store.add_requests([old.to_row()], current=("generate", "model-a"))
        specs = [spec(A, "q2"), spec(A, "q1"), spec(A, "q3"), spec(B, "q1")]
        store.add_requests([s.to_row() for s in specs[:3]], current=("generate", "model-a"))  # `old` superseded
        store.add_requests([specs[3].to_row()], current=("generate", "model-b"))
        store.write([result(old.request_id(), "ok", "পুরনো উত্তর"), result(specs[0].request_id(), "ok", "উত্তর ২"),
                     result(specs[1].request_id(), "ok", "উত্তর ১"), result(specs[2].request_id(), "failed", None),
                     result(specs[3].request_id(), "ok", "বি")])
        rows = sorted(store.stage_results("generate", "model-a"), key=lambda r: r.item_id)
        assert [(r.item_id, r.output) for r in rows] == [("q1", "উত্তর ১"), ("q2", "উত্তর ২")]
        assert rows[0].meta == {"n": "q1"} and rows[0].refs == [] and rows[0].request_id == specs[1].request_id()
        every = list(store.stage_results("generate", ok_only=False, ordered=True))
        assert [(r.model_id, r.item_id, r.status) for r in every] == [
            ("model-a", "q1", "ok"), ("model-a", "q2", "ok"), ("model-a", "q3", "failed"), ("model-b", "q1", "ok")]
        assert store.result_counts() == {("generate", "model-a"): ResultCounts(3, 2, 1),
                                         ("generate", "model-b"): ResultCounts(1, 1, 0)}


def test_stage_results_keep_only_the_templates_asked_for(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store:
        specs = [spec(A, "q1", template="association/naming"), spec(A, "q2", template="qa/answer")]
        store.add_requests([s.to_row() for s in specs], current=("generate", "model-a"))
        store.write([result(s.request_id(), "ok", "x") for s in specs])
        assert [r.item_id for r in store.stage_results("generate", template_prefix="association/")] == ["q1"]
