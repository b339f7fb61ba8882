"""Content-addressed message parts (issue 8.3): long texts and images stored once, rows hold references."""

from __future__ import annotations

import io
import json
import uuid
from pathlib import Path

import pytest
from PIL import Image

from dialectbias.errors import StoreError
from dialectbias.judges import rlaif_json_schema
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import Store
from dialectbias.store._content import PARTS

MODEL = OpenAIModelConfig(id="j", model="judge", base_url="http://127.0.0.1:1/v1")


def png(color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), color).save(out, format="PNG")
    return out.getvalue()


def judge_spec(system: str, i: int = 0, **changes) -> RequestSpec:
    fields = {"stage": "judge", "model": MODEL, "item_id": f"q{i}", "variant": "sylhet", "template": "t",
              "messages": [{"role": "system", "content": system}, {"role": "user", "content": f"উত্তর {i}"}],
              "json_schema": rlaif_json_schema()}
    return RequestSpec(**{**fields, **changes})


def test_text_requests_keep_the_ids_and_keys_they_had_with_inline_text() -> None:
    """Stores written before parts were stored apart keep their cached outputs: hashes cover the full text."""
    spec = judge_spec("S" * 5000)
    by_ref, inline = spec.to_row(), spec.to_row(min_ref_chars=float("inf"))
    assert [by_ref[k] for k in ("request_id", "cache_key", "prompt_hash")] == \
        [inline[k] for k in ("request_id", "cache_key", "prompt_hash")]
    assert len(by_ref["messages"]) < 200 < 5000 < len(inline["messages"])


def test_a_shared_system_prompt_is_stored_once_and_read_once(tmp_path: Path) -> None:
    system = f"judge rules {uuid.uuid4()} " + "x" * 3000
    with Store.open(tmp_path / "s.sqlite") as store:
        store.add_requests(judge_spec(system, i).to_row() for i in range(50))
        kinds = store.query("SELECT kind, count(*) FROM content GROUP BY kind ORDER BY kind")
        assert [tuple(r) for r in kinds] == [("json", 1), ("text", 1)]
        reads = PARTS.reads
        rows = store.pending_requests("judge", "j", limit=100)
        resolved = [store.resolve_messages(r["messages"]) for r in rows]
    assert PARTS.reads - reads == 1
    assert all(m[0]["content"] == system for m in resolved)
    assert json.loads(rows[0]["json_schema"]) == rlaif_json_schema()


def test_resolved_messages_are_the_given_messages_with_image_bytes(tmp_path: Path) -> None:
    image = png((1, 2, 3))
    long_text = "দীর্ঘ " * 400
    messages = [{"role": "user", "content": [{"type": "image", "image": image},
                                             {"type": "text", "text": long_text}, {"type": "text", "text": "ok"}]}]
    spec = judge_spec("short", messages=messages)
    with Store.open(tmp_path / "s.sqlite") as store:
        store.write([("requests", spec.to_row())])  # the executor's path (a re-ask's request row)
        stored = store.query("SELECT messages FROM requests")[0][0]
        sent = store.resolve_messages(stored)
        shown = store.resolve_messages(stored, images="ref")
    assert sent == [{"role": "user", "content": [{"type": "image", "image": image, "mime": "image/png"},
                                                 {"type": "text", "text": long_text},
                                                 {"type": "text", "text": "ok"}]}]
    assert shown[0]["content"][0]["type"] == "image" and set(shown[0]["content"][0]) == {"type", "sha256", "mime"}
    assert shown[0]["content"][1]["text"] == long_text


def test_the_cache_key_follows_the_image_bytes() -> None:
    def key(color: tuple[int, int, int]) -> str:
        return judge_spec("s", messages=[{"role": "user", "content": [{"type": "image", "image": png(color)}]}]
                          ).cache_key()

    assert key((1, 1, 1)) == key((1, 1, 1)) != key((1, 1, 2))


def test_an_image_given_by_path_is_stored_by_content(tmp_path: Path) -> None:
    (tmp_path / "a.png").write_bytes(png((7, 7, 7)))
    def spec(image: bytes | str) -> RequestSpec:
        return judge_spec("s", messages=[{"role": "user", "content": [{"type": "image", "image": image}]}])

    by_path, by_bytes = spec(str(tmp_path / "a.png")), spec(png((7, 7, 7)))
    assert by_path.cache_key() == by_bytes.cache_key()


def test_a_missing_part_is_a_clear_store_error(tmp_path: Path) -> None:
    with Store.open(tmp_path / "s.sqlite") as store, pytest.raises(StoreError, match="damaged"):
        store.resolve_messages('[{"role": "system", "content": {"type": "text", "sha256": "00ff"}}]')
