"""translation_quality `options.ceiling_count` (docs/departures.md): the Bengali paper's ceilings follow the number
of inaccurate words the judge lists (§3.1.3, App. A; SPEC §4 P2); ours read the judge's own `inaccuracy_count`.
By hand on the packaged rubric, then through the CLI: a judge that lists two inaccurate words but counts one and
scores 9 is clipped to 7 by ours and to 6 by the paper's rule, and `replicate: paper` re-scores without a call."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from dialectbias.judges import count_items, load_rubric
from dialectbias.tasks.translation_quality._task import ceilings_on_list

ANSWER = {"chain_of_thought_reasoning": "compared word by word", "exempt_differences_found": "",
          "inaccurate_words": "রুটি (should be ভাত), খাইলাম (wrong tense, should be খাই)", "inaccuracy_count": 1,
          "meaning_preserved": "partial", "score_integer": 9, "score_rationale": "one inaccuracy"}


def test_the_list_counts_its_items() -> None:
    assert count_items(ANSWER["inaccurate_words"]) == 2  # a comma inside the parentheses is not a separator
    assert [count_items(t) for t in ("", "none", "নেই", "-", "a; b\nc", "a, , b.")] == [0, 0, 0, 0, 3, 2]


def test_the_ceilings_read_the_list_by_hand() -> None:
    ours = load_rubric("translation_fidelity")
    paper = ceilings_on_list(ours)
    assert ours.evaluate(ANSWER).fields["score_integer"] == 7  # 1 inaccuracy ⇒ ≤ 7
    assert paper.evaluate(ANSWER).fields["score_integer"] == 6  # 2 listed ⇒ ≤ 6
    assert ours.question() == paper.question()  # same prompt and schema: the judge is not asked again
    four = {**ANSWER, "inaccurate_words": "a, b, c, d", "inaccuracy_count": 0, "score_integer": 10}
    assert ours.evaluate(four).fields["score_integer"] == 10 and paper.evaluate(four).fields["score_integer"] == 2


@pytest.fixture(scope="module")
def fixed_server() -> Iterator[Any]:
    from dialectbias.testing import TestServer

    with TestServer(responder="fixed:" + json.dumps(ANSWER, ensure_ascii=False)) as server:
        yield server


def test_replicate_paper_rescores_the_stored_judgments(fixed_server: Any, cli: Any, tmp_path: Path) -> None:
    with (tmp_path / "data.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([["id", "dialect", "source", "reference", "sys"],
                                  ["1", "sylhet", "আমি ভাত খাই", "আমি ভাত খাই", "আমি রুটি খাইলাম"],
                                  ["2", "sylhet", "তুমি কোথায় যাও", "তুমি কই যাও", "তুমি কই গেলা"]])
    config: dict[str, Any] = {
        "name": "tq", "task": "translation_quality", "data": "data.csv", "systems": ["sys"], "metrics": ["judge"],
        "judges": [{"id": "fidelity", "provider": "openai", "base_url": fixed_server.base_url, "model": "j"}]}
    path = tmp_path / "tq.yaml"

    def scores(out: str) -> set[float]:
        assert cli("export", path, "--format", "jsonl", "--out", tmp_path / out).exit_code == 0
        rows = [json.loads(x) for x in (tmp_path / out / "judgments.jsonl").read_text("utf-8").splitlines()]
        return {r["score"] for r in rows if r["current"]}

    path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
    assert cli("run", path, "--no-progress").exit_code == 0
    assert scores("x0") == {7.0}
    path.write_text(yaml.safe_dump({**config, "replicate": "paper"}, allow_unicode=True), encoding="utf-8")
    fixed_server.reset_stats()
    assert scores("x1") == {6.0}
    assert fixed_server.stats()["chat_requests"] == 0
