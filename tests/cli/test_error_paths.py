"""Error paths found by the hostile-input sweep (issue 19.14), through the installed command where the user
met them: one clear line naming what is at fault, never a traceback or an object's repr."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest


def error_lines(result: Any) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("error:")]


def test_review_serve_on_a_busy_port_is_one_line_and_no_app_address(qa: Any, qa_server: Any,
                                                                    tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=1)
    assert qa.run_subprocess("run", project.yaml_path, "--no-progress").exit_code == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = qa.run_subprocess("review", "serve", project.yaml_path, "--port", port, timeout=30)
    assert result.exit_code == 1
    assert result.stdout == ""  # no "review app: http://…" before the failure
    assert result.stderr.strip().splitlines() == [
        f"error: port {port} on 127.0.0.1 is in use (another review app?): choose another with --port, "
        f"e.g. --port {port + 1}"]


@pytest.mark.parametrize(("value", "kind"), [(42, "a number (42)"), (["আমি", "তুমি"], 'a list (["আমি", "তুমি"])'),
                                             (True, "a boolean (true)")])
def test_a_variant_that_is_not_a_text_is_named_by_its_type(qa: Any, tmp_path: Path, value: Any, kind: str) -> None:
    items = [qa.qa_item(0), qa.qa_item(1)]
    items[1]["variants"] = {**items[1]["variants"], "sylhet": value}
    project = qa.make_project(tmp_path, "http://127.0.0.1:1/v1", items=items)
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 1
    assert error_lines(result) == [
        f"error: {project.dir / 'items.jsonl'}:2: item 'q02': variant 'sylhet' is {kind}, not a text; write it as "
        "a string (vqa and caption items: an object)"], result.stderr
    assert "empty" not in result.stderr


def test_a_jsonl_data_file_with_a_byte_order_mark_is_read_like_a_csv_one(qa: Any, qa_server: Any,
                                                                        tmp_path: Path) -> None:
    project = qa.make_project(tmp_path, qa_server.base_url, n_items=2)
    data = project.dir / "items.jsonl"
    data.write_bytes(b"\xef\xbb\xbf" + data.read_bytes())  # as Excel or Notepad save "UTF-8"
    result = qa.run_subprocess("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    assert qa_server.stats()["requests_total"] == 2 * 3 * 2 + 2 * 2 * 2  # both items: 12 generations, 8 judgments


def test_an_image_that_is_not_an_image_is_named_without_an_object_repr(qa: Any, qa_project: Any, qa_server: Any,
                                                                       cli: Any) -> None:
    items = [qa.qa_item(i) for i in range(2)]
    items[0]["image"] = "images/notes.png"
    project = qa_project(qa_server.base_url, items=items)
    (project.dir / "images").mkdir()
    (project.dir / "images/notes.png").write_text("a text file saved as .png", encoding="utf-8")
    result = cli("run", project.yaml_path, "--no-progress")
    warning = next(line for line in result.stderr.splitlines() if "images/notes.png" in line)
    assert "not a readable image (not an image in a format Pillow reads; supported: PNG, JPEG, GIF, WEBP)" in warning
    assert "BytesIO" not in result.output and " object at 0x" not in result.output


def test_image_error_reasons_never_carry_a_buffer_repr() -> None:
    from PIL import UnidentifiedImageError

    from dialectbias.data._media import image_error

    assert image_error(OSError("broken data stream when reading image file <_io.BytesIO object at 0x7f3a2b>")) == (
        "OSError: broken data stream when reading image file")
    assert "0x" not in image_error(UnidentifiedImageError("cannot identify image file <_io.BytesIO object at 0x1f>"))


@pytest.mark.parametrize(("row", "message"), [
    ({"question": "তুমি কিতা খাইছো?", "answer": "ভাত"},
     'missing key(s) assistant, user (a row is {"user": …, "assistant": …}, optional dialect, id); found: question, '
     "answer"),
    ({"user": ["তুমি", "কিতা"], "assistant": "ভাত"}, "'user' is a list, not a text")])
def test_train_translator_conversations_with_a_malformed_jsonl_row_is_an_error_like_the_csv_case(
        cli: Any, tmp_path: Path, row: dict[str, Any], message: str) -> None:
    pytest.importorskip("peft")
    from tiny_llm import write_corpus

    corpus = write_corpus(tmp_path / "corpus")
    base = tmp_path / "base"
    base.mkdir()
    (base / "config.json").write_text("{}", encoding="utf-8")
    conversations = tmp_path / "conv.jsonl"
    good = {"user": "তুমি কিতা খাইছো?", "assistant": "আমি ভাত খাইছি।", "dialect": "sylhet"}
    conversations.write_text(json.dumps(good, ensure_ascii=False) + "\n" + json.dumps(row, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    result = cli("train-translator", corpus, "--base-model", base, "--out", tmp_path / "out", "--conversations",
                 conversations)
    assert result.exit_code == 1, result.output
    assert result.stderr.strip() == f"error: {conversations}:2: {message}"
