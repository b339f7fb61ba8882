"""Images in qa_bias items (issue 8.3): sent as data URLs the test server checks, stored once by sha256,
request rows small, paths confined to the data folder, a missing image counted, not a crash."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dialectbias.store import Store

# the size of a whole request row, every column in bytes
ROW_BYTES = ("length(CAST(request_id AS BLOB)) + length(CAST(stage AS BLOB)) + length(CAST(model_id AS BLOB)) + "
             "length(CAST(item_id AS BLOB)) + length(CAST(variant AS BLOB)) + length(CAST(refs AS BLOB)) + "
             "length(CAST(template AS BLOB)) + length(CAST(prompt_hash AS BLOB)) + length(CAST(messages AS BLOB)) + "
             "length(CAST(params AS BLOB)) + coalesce(length(CAST(json_schema AS BLOB)), 0) + "
             "length(CAST(cache_key AS BLOB)) + length(CAST(meta AS BLOB)) + 8")


def write_png(path: Path, color: tuple[int, int, int], size: tuple[int, int] = (64, 48)) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format="PNG")
    path.write_bytes(out.getvalue())
    return out.getvalue()


def image_project(qa: Any, qa_project: Any, base_url: str, images: dict[int, str], **options: Any) -> Any:
    """Three items; item i carries `images[i]` (a path relative to the data file, or a URL)."""
    items = [qa.qa_item(i) for i in range(3)]
    for i, ref in images.items():
        items[i]["image"] = ref
    return qa_project(base_url, items=items, **options)


def sent_images(server: Any) -> list[bytes]:
    """The image bytes of every image_url part the server received."""
    out = []
    for record in server.requests():
        for message in record["body"]["messages"]:
            for part in message["content"] if isinstance(message["content"], list) else ():
                if part["type"] == "image_url":
                    header, _, payload = part["image_url"]["url"].partition(",")
                    assert header == "data:image/png;base64"
                    out.append(base64.b64decode(payload))
    return out


def test_image_items_reach_the_server_as_checked_data_urls_before_the_question(qa: Any, qa_project: Any,
                                                                               qa_server: Any, cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {0: "images/red.png", 1: "images/blue.png"})
    red = write_png(project.dir / "images/red.png", (255, 0, 0))
    blue = write_png(project.dir / "images/blue.png", (0, 0, 255))
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert qa_server.stats()["status_counts"].get("400") is None  # every image part passed the server's check
    generation = [r["body"] for r in qa_server.requests() if "response_format" not in r["body"]]
    with_image = [b for b in generation if isinstance(b["messages"][0]["content"], list)]
    assert len(with_image) == 2 * 2 * 3  # 2 items with an image × 2 models × 3 variants
    assert all([p["type"] for p in b["messages"][0]["content"]] == ["image_url", "text"] for b in with_image)
    assert sorted(set(sent_images(qa_server))) == sorted({red, blue})


def test_two_items_sharing_an_image_store_it_once(qa: Any, qa_project: Any, qa_server: Any, cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {0: "img/same.png", 1: "./img/same.png"})
    data = write_png(project.dir / "img/same.png", (10, 200, 30))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    with Store.open(project.store_path) as store:
        images = store.query("SELECT sha256, mime, size, width, height FROM content WHERE kind = 'image'")
        refs = store.query("SELECT count(*) FROM requests WHERE messages LIKE ?", (f"%{images[0][0]}%",))[0][0]
    assert [tuple(r) for r in images] == [(hashlib.sha256(data).hexdigest(), "image/png", len(data), 64, 48)]
    assert refs == 2 * 2 * 3  # both items' generation requests, both models, every variant


def test_every_request_row_stays_under_2_kb(qa: Any, qa_project: Any, qa_server: Any, cli: Any) -> None:
    """A 300 KB image and the 2.3 KB judge system prompt are references: no row reaches 2 KB."""
    project = image_project(qa, qa_project, qa_server.base_url, {0: "big.png"})
    noise = Image.frombytes("RGB", (320, 320), hashlib.shake_256(b"noise").digest(320 * 320 * 3))
    noise.save(project.dir / "big.png", format="PNG")
    assert (project.dir / "big.png").stat().st_size > 300_000
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    with Store.open(project.store_path) as store:
        sizes = store.query(f"SELECT stage, max({ROW_BYTES}), count(*) FROM requests GROUP BY stage")
    assert {r[0] for r in sizes} == {"generate", "judge"}
    assert all(r[1] < 2048 for r in sizes), [tuple(r) for r in sizes]


@pytest.mark.parametrize("ref", ["../outside.png", "images/../../outside.png"])
def test_a_dotdot_image_path_is_refused_naming_the_item(qa: Any, qa_project: Any, qa_server: Any, cli: Any,
                                                         ref: str) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {1: ref})
    write_png(project.dir.parent / "outside.png", (1, 2, 3))
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert "item 'q02'" in result.output and f"image '{ref}' is outside the data folder" in result.output
    assert qa_server.stats()["chat_requests"] == 0


def test_an_absolute_image_path_outside_the_data_folder_is_refused(qa: Any, qa_project: Any, qa_server: Any,
                                                                   cli: Any, tmp_path: Path) -> None:
    secret = tmp_path / "elsewhere" / "photo.png"
    write_png(secret, (1, 2, 3))
    project = image_project(qa, qa_project, qa_server.base_url, {2: str(secret)})
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert "item 'q03'" in result.output and "outside the data folder" in result.output
    assert qa_server.stats()["chat_requests"] == 0


def test_an_absolute_path_inside_the_data_folder_is_accepted(qa: Any, qa_project: Any, qa_server: Any,
                                                             cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {})
    data = write_png(project.dir / "in.png", (5, 5, 5))
    items = [{**qa.qa_item(0), "image": str(project.dir / "in.png")}]
    qa.write_jsonl(project.dir / "items.jsonl", items)
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert set(sent_images(qa_server)) == {data}


def test_a_missing_image_skips_its_item_counted_and_the_run_completes(qa: Any, qa_project: Any, qa_server: Any,
                                                                      cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {0: "present.png", 1: "gone.png"})
    write_png(project.dir / "present.png", (9, 9, 9))
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "1 item in" in result.output and "image missing or unreadable: 'q02' (line 2)" in result.output
    assert "gone.png" in result.output
    with Store.open(project.store_path) as store:
        done = store.query("SELECT item_id, count(*) FROM requests r JOIN results s USING (request_id) "
                           "WHERE s.status = 'ok' AND r.stage = 'generate' GROUP BY item_id")
    assert {r[0]: r[1] for r in done} == {"q01": 6, "q03": 6}


def test_an_unreadable_image_is_counted_like_a_missing_one(qa: Any, qa_project: Any, qa_server: Any,
                                                           cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {2: "broken.png"})
    (project.dir / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"not really")
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert "image missing or unreadable: 'q03' (line 3)" in result.output and "not a readable image" in result.output


def test_replacing_an_image_file_changes_its_requests_and_sends_them_again(qa: Any, qa_project: Any,
                                                                           qa_server: Any, cli: Any) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {0: "pic.png"})
    write_png(project.dir / "pic.png", (100, 0, 0))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    with Store.open(project.store_path) as store:
        before = {r[0] for r in store.query("SELECT cache_key FROM requests WHERE item_id = 'q01'")}
    qa_server.reset_stats()
    new = write_png(project.dir / "pic.png", (0, 100, 0))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert sent_images(qa_server) == [new] * 6  # only q01's 6 generations (and their judgments) are new
    with Store.open(project.store_path) as store:
        current = {r[0] for r in store.query(
            "SELECT cache_key FROM requests r JOIN current_requests c USING (rid) WHERE r.item_id = 'q01'")}
    assert not current & before


def test_export_shows_the_full_prompt_with_image_references(qa: Any, qa_project: Any, qa_server: Any, cli: Any,
                                                            tmp_path: Path) -> None:
    project = image_project(qa, qa_project, qa_server.base_url, {0: "pic.png"})
    data = write_png(project.dir / "pic.png", (1, 100, 0))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    assert cli("export", project.yaml_path, "--format", "jsonl", "--out", tmp_path / "x").exit_code == 0
    gens = qa.read_jsonl(tmp_path / "x" / "generations.jsonl")
    prompt = json.loads(next(g for g in gens if g["item_id"] == "q01")["rendered_prompt"])
    assert prompt[0]["content"][0] == {"type": "image", "sha256": hashlib.sha256(data).hexdigest(),
                                       "mime": "image/png"}
    assert "প্রশ্ন:" in prompt[0]["content"][1]["text"]
    with sqlite3.connect(project.store_path) as conn:  # the judge system prompt is stored by reference
        judge_row = conn.execute("SELECT messages FROM requests WHERE stage = 'judge' LIMIT 1").fetchone()[0]
    assert '"sha256"' in judge_row and "You are" not in judge_row
