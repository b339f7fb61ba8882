"""`dialectbias build pairs`: a parallel corpus grouped into items with a variant per dialect."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dialectbias.build import item_id, pair_items
from dialectbias.data import iter_items, load_corpus
from dialectbias.text import match_key
from shared_data import VASHANTOR, shared_path

ROWS = {
    "sylhet": [("আমি ভাত খাই।", "আমি ভাত খাইয়ার।"), ("সে বাড়ি যায়।", "হে বাড়িত যায়।"), ("ঠিক আছে।", "ঠিক আছে।")],
    "chittagong": [("আমি ভাত খাই।", "আঁই ভাত হাই।"), ("আমি  ভাত খাই।", "আঁই ভাত খাই।")],
}


def _corpus(tmp_path: Path) -> Path:
    for dialect, rows in ROWS.items():
        lines = ["standard_text,dialect_text"] + [f"{s},{d}" for s, d in rows]
        (tmp_path / f"{dialect} test.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    spec = ("name: tiny\nfiles:\n"
            + "".join(f"  - path: \"{d} test.csv\"\n    standard: standard_text\n    dialect_text: dialect_text\n"
                      f"    dialect_value: {d}\n" for d in ROWS))
    (tmp_path / "corpus.yaml").write_text(spec, encoding="utf-8")
    return tmp_path / "corpus.yaml"


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_pairs_are_grouped_by_their_standard_sentence(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    result = pair_items(load_corpus(_corpus(tmp_path)), out)
    items = _read(out)
    # "আমি ভাত খাই।" in both dialects is one item; "সে বাড়ি যায়।" has sylhet only; "ঠিক আছে।" is identical
    assert [i["variants"] for i in items] == [
        {"standard": "আমি ভাত খাই।", "sylhet": "আমি ভাত খাইয়ার।", "chittagong": "আঁই ভাত হাই।"},
        {"standard": "সে বাড়ি যায়।", "sylhet": "হে বাড়িত যায়।"}]
    assert items[0]["id"] == item_id(match_key("আমি ভাত খাই।"))
    assert items[0]["language"] == "bn"
    # file:line of each dialect text (line 1 is the header)
    assert items[0]["sources"] == {"sylhet": "sylhet test.csv:2", "chittagong": "chittagong test.csv:2"}
    # the chittagong row whose standard differs only by a double space is the same sentence with another text
    assert (result.items, result.identical, result.conflicts) == (2, 1, 1)
    assert dict(result.per_dialect) == {"sylhet": 2, "chittagong": 1}


def test_aligned_keeps_only_items_with_every_dialect_and_max_items_samples(tmp_path: Path) -> None:
    corpus = load_corpus(_corpus(tmp_path))
    result = pair_items(corpus, tmp_path / "a.jsonl", aligned=True)
    assert (result.items, result.not_aligned) == (1, 1)
    result = pair_items(corpus, tmp_path / "s.jsonl", max_items=1, seed=3)
    assert (result.items, result.sampled_out) == (1, 1)
    again = pair_items(corpus, tmp_path / "s2.jsonl", max_items=1, seed=3)
    assert again.items == 1 and _read(tmp_path / "s.jsonl") == _read(tmp_path / "s2.jsonl")


def test_the_output_is_an_items_file_the_tasks_read(tmp_path: Path) -> None:
    out = tmp_path / "items.jsonl"
    pair_items(load_corpus(_corpus(tmp_path)), out, dialects=["sylhet"])
    items = list(iter_items(str(out)))
    assert [sorted(i.variants) for i in items] == [["standard", "sylhet"], ["standard", "sylhet"]]


def test_the_command_prints_every_count_and_refuses_an_unknown_dialect(tmp_path: Path, cli: Any) -> None:
    corpus = _corpus(tmp_path)
    res = cli("build", "pairs", corpus, "--out", tmp_path / "items.jsonl", "--dialect", "Sylhet")
    assert res.exit_code == 0, res.output
    assert "2 items (sylhet 2); left out: 1 pairs with dialect = standard" in " ".join(res.output.split())
    res = cli("build", "pairs", corpus, "--out", tmp_path / "x.jsonl", "--dialect", "noakhali")
    assert res.exit_code == 1
    assert "--dialect noakhali: not in the corpus (it has: chittagong, sylhet)" in " ".join(res.output.split())


def test_an_unknown_split_is_named_not_counted_as_pairs_of_other_splits(tmp_path: Path, cli: Any) -> None:
    corpus = _corpus(tmp_path)  # its files are "<dialect> test.csv": split test
    res = cli("build", "pairs", corpus, "--out", tmp_path / "x.jsonl", "--split", "trian")
    assert res.exit_code == 1
    assert res.stderr.strip() == (f"error: {corpus}: --split trian: no such split in the corpus (it has: test)")
    assert "pairs of other splits" not in res.output and not (tmp_path / "x.jsonl").exists()


def test_vashantor_test_split_is_a_parallel_set_across_five_dialects(tmp_path: Path) -> None:
    root = shared_path(*VASHANTOR)
    spec = ("name: vashantor-test\nfiles:\n  - path: \"" + str(root / "Test" / "*.csv")
            + "\"\n    standard: standard_text\n    dialect_text: dialect_text\n    dialect: dialect\n")
    (tmp_path / "v.yaml").write_text(spec, encoding="utf-8")
    out = tmp_path / "v.jsonl"
    result = pair_items(load_corpus(tmp_path / "v.yaml"), out, aligned=True)
    items = _read(out)
    assert result.items == len(items) > 300  # 375 rows per dialect, aligned; a few sentences repeat or are identical
    assert all(len(i["variants"]) == 6 for i in items)
