"""Gold labelling end to end on the local test server: a translate run → a stratified sample of the correction
queue → CSV export → corrections filled → import → `export --items` carries the corrected text as
human-validated (annotator, time) → a qa_bias run on those items reports them in human_validated.csv; the
same corrections made through the review app's API give the same exported items."""

from __future__ import annotations

import contextlib
import csv
import json
import re
import shutil
import socket
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")

ITEMS = [{"id": f"q{i}", "domain": "Health" if i % 2 else "Agriculture", "variants": {"standard": text}}
         for i, text in enumerate(["তোমার নাম কী?", "আমি বাজারে যাচ্ছি।", "আমরা ভাত খাব।", "তোমার বাড়ি কোথায়?"])]
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="dialectbias.testing:translate_responder") as srv:
        yield srv


def translate_project(directory: Path, base_url: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                           encoding="utf-8")
    path = directory / "tr.yaml"
    path.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl", "seed": 3,
        "roles": {"translator": {"provider": "openai", "base_url": base_url, "model": "translator-model"}},
        "options": {"targets": ["sylhet", "chittagong"]}}, allow_unicode=True), encoding="utf-8")
    return path


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as fh:
        return list(csv.DictReader(fh))


def write_csv(path: Path, rows: list[dict[str, str]]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def items_of(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


@contextlib.contextmanager
def serve(exp_path: Path) -> Iterator[str]:
    """The review app of the experiment in a thread on 127.0.0.1 (a free port)."""
    import uvicorn

    from dialectbias.api import open_experiment
    from dialectbias.cli._review import _review_config
    from dialectbias.review.app import create_app
    from dialectbias.store import Store

    exp, task = open_experiment(exp_path)
    with Store.open(exp.store_path, create=False) as store:
        config = _review_config(exp, task, store)
    app = create_app(exp.store_path, config)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the review app did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


def api(method: str, url: str, token: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", **({"Content-Type": "application/json"} if data else {})})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_corrections_become_human_validated_variants(server: Any, cli: Any, qa: Any, tmp_path: Path) -> None:
    exp = translate_project(tmp_path / "tr", server.base_url)
    assert cli("run", exp, "--no-progress").exit_code == 0
    result = cli("review", "sample", exp, "--queue", "translation_correction", "--per", "2")
    assert result.exit_code == 0, result.output
    assert "4 target(s) sampled, 2 per dialect (seed 3)" in result.stdout
    assert "dialect chittagong: 2/4" in result.stdout and "dialect sylhet: 2/4" in result.stdout
    again = cli("review", "sample", exp, "--queue", "translation_correction", "--per", "2")
    assert "replaces the previous sample (4 target(s))" in again.stdout
    assert again.stdout.splitlines()[1:] == result.stdout.splitlines()[1:]  # the same seed, the same sample
    app_copy = tmp_path / "app"
    shutil.copytree(tmp_path / "tr", app_copy)  # the same run and sample, annotated through the app below

    # the CSV round trip
    out = tmp_path / "corrections.csv"
    result = cli("review", "export", exp, "--queue", "translation_correction", "--out", out)
    assert result.exit_code == 0, result.output
    assert "4 sampled target(s) of queue translation_correction" in result.stdout
    assert (tmp_path / "corrections.README.txt").exists()
    rows = read_csv(out)
    assert len(rows) == 4 and {r["dialect"] for r in rows} == {"sylhet", "chittagong"}
    sampled = {r["target_id"] for r in rows}
    fixed = {rows[0]["target_id"]: rows[0]["translation"] + " গো", rows[1]["target_id"]: rows[1]["translation"]}
    for r in rows[:2]:
        r["human_text"] = fixed[r["target_id"]]
    write_csv(out, rows)
    result = cli("review", "import", exp, out, "--annotator", "rahim")
    assert result.exit_code == 0, result.output
    assert "2 imported, 2 skipped (empty), 0 unchanged" in result.stdout
    assert "0 imported, 2 skipped (empty), 2 unchanged" in cli("review", "import", exp, out, "--annotator",
                                                               "rahim").stdout
    labels = tmp_path / "labels.csv"
    assert cli("review", "export", exp, "--queue", "validation", "--out", labels).exit_code == 0
    label_rows = read_csv(labels)
    assert len(label_rows) == 8  # the validation queue has no sample
    by_target = {r["target_id"]: r for r in label_rows}
    by_target[rows[0]["target_id"]]["human_label"] = "1"
    by_target[rows[1]["target_id"]]["human_label"] = "2"
    write_csv(labels, label_rows)
    assert "2 imported" in cli("review", "import", exp, labels, "--annotator", "rahim").stdout

    # a broken file is refused as a whole, naming row and column
    rows[2]["human_text"], rows[3]["human_text"] = "   ", "x"
    rows[3]["target_id"] = "no-such-target"
    write_csv(out, rows)
    bad = cli("review", "import", exp, out, "--annotator", "rahim")
    assert bad.exit_code == 1 and "nothing was imported" in bad.stderr
    assert f"{out.name}:5: column target_id: unknown target 'no-such-target'" in bad.stderr.replace("\n", "")

    items = tmp_path / "items.gold.jsonl"
    result = cli("export", exp, "--items", items)
    assert result.exit_code == 0, result.output
    assert "2 variants human-validated (is_human_validated: true): 1 corrected, 1 kept as is" in result.stdout
    assert "0 of them with a conflict" in result.stdout and "6 machine variants still not validated" in result.stdout
    exported = items_of(items)
    validated = 0
    for r in rows[:2]:
        item = exported[r["item_id"]]
        assert item["variants"][r["dialect"]] == fixed[r["target_id"]]
        assert item["is_human_validated"][r["dialect"]] is True and item["validated_by"][r["dialect"]] == "rahim"
        record = item["validation"][r["dialect"]]
        assert record["annotator"] == "rahim" and ISO_UTC.match(record["at"])
        assert record["corrected"] is (r is rows[0]) and record["labels"] == ([1] if r is rows[0] else [2])
        validated += 1
    machine = sum(v is False for item in exported.values() for v in item["is_human_validated"].values())
    assert validated == 2 and machine == 6

    # the same through the review app's API gives the same items
    token = cli("review", "add-annotator", app_copy / "tr.yaml", "rahim", "--dialects", "sylhet,chittagong",
                "--queues", "translation_correction,validation").stdout.strip().splitlines()[-1]
    with serve(app_copy / "tr.yaml") as url:
        tasks = api("GET", f"{url}/api/tasks", token)
        corrections = {t["target_id"]: t for t in tasks if t["queue"] == "translation_correction"}
        assert set(corrections) == sampled  # only the sample is listed
        for target_id, text in fixed.items():
            api("POST", f"{url}/api/tasks/{corrections[target_id]['id']}/annotation", token, {"text": text})
        validations = {t["target_id"]: t for t in tasks if t["queue"] == "validation"}
        assert len(validations) == 8
        for target_id, label in ((rows[0]["target_id"], 1), (rows[1]["target_id"], 2)):
            api("POST", f"{url}/api/tasks/{validations[target_id]['id']}/annotation", token, {"label": label})
    app_items = tmp_path / "items.app.jsonl"
    assert cli("export", app_copy / "tr.yaml", "--items", app_items).exit_code == 0

    def without_time(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        out = json.loads(json.dumps(rows))
        for item in out.values():
            for record in item.get("validation", {}).values():
                record.pop("at", None)
        return out

    assert without_time(items_of(app_items)) == without_time(exported)

    # a qa_bias experiment on the gold items reports how many variants are human-validated
    project = qa.make_project(tmp_path / "qa", server.base_url, items=[])
    project.rewrite(data=str(items))
    assert cli("run", project.yaml_path, "--no-progress").exit_code == 0
    report = tmp_path / "report"
    assert cli("report", project.yaml_path, "--out", report).exit_code == 0
    table = {r["variant"]: r for r in read_csv(report / "human_validated.csv")}
    for dialect in ("sylhet", "chittagong"):
        n = sum(r["dialect"] == dialect for r in rows[:2])
        assert table[dialect]["items"] == "4"
        assert table[dialect]["human_validated"] == str(n) and table[dialect]["machine"] == str(4 - n)
    assert sum(int(table[d]["corrected_in_review"]) for d in ("sylhet", "chittagong")) == 1
    assert sum(int(table[d]["labels_n"]) for d in ("sylhet", "chittagong")) == 2
    assert table["standard"]["human_validated"] == "0" and table["standard"]["machine"] == "0"
    assert "Human-validated variants" in (report / "index.html").read_text(encoding="utf-8")
    status = cli("status", project.yaml_path).stdout
    for dialect in ("sylhet", "chittagong"):
        n = sum(r["dialect"] == dialect for r in rows[:2])
        assert f"variant {dialect}: {n} of 4 items human-validated, {4 - n} machine" in status


def test_a_vqa_translation_is_corrected_field_group_by_field_group(server: Any, cli: Any, tmp_path: Path) -> None:
    item = {"id": "food_1", "domain": "food",
            "variants": {"standard": {"question": "ছবির খাবারটির নাম কী?", "options": ["ইলিশ মাছ", "রুই মাছ"],
                                      "answer_index": 0, "answer": "ইলিশ মাছ"}}}
    directory = tmp_path / "vqa"
    directory.mkdir()
    (directory / "items.jsonl").write_text(json.dumps(item, ensure_ascii=False) + "\n", encoding="utf-8")
    exp = directory / "tr.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": server.base_url, "model": "translator-model"}},
        "options": {"targets": ["sylhet"]}}, allow_unicode=True), encoding="utf-8")
    assert cli("run", exp, "--no-progress").exit_code == 0
    out = tmp_path / "c.csv"
    assert cli("review", "export", exp, "--queue", "translation_correction", "--out", out).exit_code == 0
    rows = read_csv(out)
    assert len(rows) == 2  # one target per field group: question, options
    for r in rows:
        lines = r["translation"].split("\n")
        r["human_text"] = "\n".join(f"{line} (ঠিক)" for line in lines)
    write_csv(out, rows)
    assert "2 imported" in cli("review", "import", exp, out, "--annotator", "nila").stdout
    items = tmp_path / "items.jsonl"
    result = cli("export", exp, "--items", items)
    assert "1 variants human-validated (is_human_validated: true): 1 corrected" in result.stdout
    (row,) = items_of(items).values()
    sylhet = row["variants"]["sylhet"]
    assert sylhet["question"].endswith("(ঠিক)") and all(o.endswith("(ঠিক)") for o in sylhet["options"])
    assert len(sylhet["options"]) == 2 and sylhet["answer"] == sylhet["options"][0]  # the answer follows its option
    assert row["is_human_validated"] == {"sylhet": True} and row["validated_by"] == {"sylhet": "nila"}
    assert row["validation"]["sylhet"]["corrected"] is True
