"""Judge requests are built from one stream of each model's generations, merged with the items in id order
(issue 23 item 3): only one item's answers are held, whatever the ids, missing or failed answers."""

from __future__ import annotations

import time
from pathlib import Path

from dialectbias.data import Item
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import Store
from dialectbias.tasks.qa_bias._task import _generations_by_item

MODEL = OpenAIModelConfig(id="m", model="m", base_url="http://127.0.0.1:1/v1")
OTHER = OpenAIModelConfig(id="m2", model="m2", base_url="http://127.0.0.1:1/v1")
# ids whose text order differs from their numeric order, non-ASCII ones after ASCII (UTF-8 byte order)
IDS = ["q1", "q10", "q2", "ক১", "ক২", "q100"]


def test_each_item_gets_exactly_its_own_answers(tmp_path: Path) -> None:
    now = time.time()
    expected: dict[str, dict[str, tuple[str, str]]] = {i: {} for i in IDS}
    with Store.open(tmp_path / "s.sqlite") as store:
        store.save_items(Item(id=i, variants={"standard": f"প্রশ্ন {i}", "sylhet": f"সিলেটি {i}"}) for i in IDS)
        for model in (MODEL, OTHER):
            specs = [RequestSpec(stage="generate", model=model, item_id=i, variant=v, template="t",
                                 messages=[{"role": "user", "content": f"{model.id} {i} {v}"}])
                     for i in IDS for v in ("standard", "sylhet") if (i, v) != ("q2", "sylhet")]  # never asked
            store.add_requests((s.to_row() for s in specs), current=("generate", model.id))
            writes = []
            for s in specs:
                failed = (s.item_id, s.variant) == ("ক১", "standard")
                writes.append(("results", {"request_id": s.request_id(), "status": "failed" if failed else "ok",
                                           "output": None if failed else f"উত্তর {model.id} {s.item_id} {s.variant}",
                                           "completed_at": now}))
                if model is MODEL and not failed:
                    expected[s.item_id][s.variant] = (s.request_id(), f"উত্তর m {s.item_id} {s.variant}")
            store.write(writes)
        answers = _generations_by_item(store, "m")
        got = {item.id: answers(item.id) for item in store.iter_items()}
        assert [item.id for item in store.iter_items()] == sorted(IDS, key=lambda i: i.encode())
    assert got == expected
    assert got["q2"] == {"standard": expected["q2"]["standard"]} and set(got["ক১"]) == {"sylhet"}


def test_an_item_without_any_answer_and_answers_of_unknown_items(tmp_path: Path) -> None:
    """Generations of items no longer in the item set are skipped over; an item with none gets {}."""
    now = time.time()
    with Store.open(tmp_path / "s.sqlite") as store:
        specs = [RequestSpec(stage="generate", model=MODEL, item_id=i, variant="standard", template="t",
                             messages=[{"role": "user", "content": i}]) for i in ("a", "b", "c", "d")]
        store.add_requests((s.to_row() for s in specs), current=("generate", "m"))
        store.write([("results", {"request_id": s.request_id(), "status": "ok", "output": s.item_id,
                                  "completed_at": now}) for s in specs if s.item_id != "c"])
        answers = _generations_by_item(store, "m")
        got = {i: answers(i) for i in ("b", "c", "d", "e")}  # "a" dropped from the items, "e" new
    assert {i: {v: out for v, (_, out) in a.items()} for i, a in got.items()} == \
        {"b": {"standard": "b"}, "c": {}, "d": {"standard": "d"}, "e": {}}
