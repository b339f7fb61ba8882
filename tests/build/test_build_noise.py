"""`dialectbias build noise` and `build vocabulary` (SPEC §4 P1 noisy control): items, parity, vocabularies."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from dialectbias.build import build_vocabulary, item_seed, noise_items
from dialectbias.data import iter_items
from dialectbias.errors import DataError
from dialectbias.text import NOISY, Vocabulary, add_noise
from shared_data import VASHANTOR, shared_path


def _items(tmp_path: Path) -> Path:
    rows = [{"id": "t1", "domain": "school", "variants": {"standard": "Ich gehe heute nach Hause.",
                                                           "bavarian": "I geh heit hoam."}},
            {"id": "t2", "variants": {"standard": "Das Wetter ist schön.", "alemannic": "S Wätter isch schön."},
             "source": "wiki"}]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_noise_items_adds_a_seeded_noisy_variant_and_keeps_fields(tmp_path: Path) -> None:
    vocab = Vocabulary.from_words(["und", "der", "die"])
    out = tmp_path / "noisy.jsonl"
    result = noise_items(_items(tmp_path), out, vocab, p=0.5, seed=3, vocabulary_name="v.txt")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert result.items == 2 and [r["id"] for r in rows] == ["t1", "t2"]
    first = rows[0]
    assert first["domain"] == "school" and first["language"] == "de"  # bavarian → de
    assert rows[1]["source"] == "wiki"
    assert first["variants"]["bavarian"] == "I geh heit hoam."
    assert first["variants"][NOISY] == add_noise("Ich gehe heute nach Hause.", p=0.5, vocabulary=vocab,
                                                 seed=item_seed(3, "t1"))
    assert first["noise"] == {"p": 0.5, "seed": 3, "mode": "mixed", "vocabulary": "v.txt"}
    # the written file is a valid items file with `noisy` a known variant
    items = list(iter_items(out, required_variants=("standard",)))
    assert {v for i in items for v in i.variants} == {"standard", "bavarian", "alemannic", NOISY}


def test_noise_items_refuses_an_already_noisy_file(tmp_path: Path) -> None:
    vocab = Vocabulary.from_words(["und"])
    out = tmp_path / "noisy.jsonl"
    noise_items(_items(tmp_path), out, vocab, p=0.5, seed=0)
    with pytest.raises(DataError, match=r"t1.*already has a 'noisy' variant"):
        noise_items(out, tmp_path / "again.jsonl", vocab, p=0.5, seed=0)


def test_build_noise_cli_prints_parity_and_writes_it(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vocab = tmp_path / "words.txt"
    vocab.write_text("und\nder\ndie\n", encoding="utf-8")
    out = tmp_path / "out" / "noisy.jsonl"
    res = cli("build", "noise", _items(tmp_path), "--vocabulary", vocab, "--p", "0.5", "--seed", "0", "--out", out)
    assert res.exit_code == 0, res.stderr
    assert "token-length parity" in res.stdout and "2 items with a 'noisy' variant" in res.stdout
    with (tmp_path / "out" / "noisy.token_lengths.csv").open(encoding="utf-8") as fh:
        parity = list(csv.DictReader(fh))
    assert {(r["tokenizer"], r["variant"]) for r in parity} >= {("whitespace", NOISY), ("words", "standard")}
    again = tmp_path / "again.jsonl"
    cli("build", "noise", _items(tmp_path), "--vocabulary", vocab, "--seed", "0", "--out", again)
    assert again.read_text(encoding="utf-8") == out.read_text(encoding="utf-8")  # reproducible


def test_build_noise_cli_errors_name_the_file(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    empty = tmp_path / "empty.txt"
    empty.write_text("\n", encoding="utf-8")
    res = cli("build", "noise", _items(tmp_path), "--vocabulary", empty, "--out", tmp_path / "o.jsonl")
    assert res.exit_code == 1 and "empty.txt" in res.stderr and "no word" in res.stderr
    vocab = tmp_path / "words.txt"
    vocab.write_text("und\n", encoding="utf-8")
    res = cli("build", "noise", tmp_path / "nope.jsonl", "--vocabulary", vocab, "--out", tmp_path / "o.jsonl")
    assert res.exit_code == 1 and "nope.jsonl" in res.stderr


def test_build_vocabulary_counts_bengali_words_whole(tmp_path: Path) -> None:
    corpus = tmp_path / "c.csv"
    corpus.write_text("standard_text,dialect_text,dialect\nআমি ভাত খাই।,আঁই ভাত খাই।,chittagong\n"
                      "আমি বাড়ি যাই।,আঁই বাড়িত যাই।,chittagong\nআমি ২ টা ভাত খাই,x,y\n", encoding="utf-8")
    words, n_tokens = build_vocabulary([corpus], top=3)
    # standard side only: আমি 3, ভাত 2, খাই 2, বাড়ি 1, যাই 1, টা 1 (the digit ২ is skipped) → 10 tokens
    assert n_tokens == 10
    assert words == [("আমি", 3), ("খাই", 2), ("ভাত", 2)]
    words, _ = build_vocabulary([corpus], columns=["dialect_text"], top=10, min_count=2)
    assert words == [("আঁই", 2)]
    with pytest.raises(DataError, match="no column 'nope'"):
        build_vocabulary([corpus], columns=["nope"])


def test_build_vocabulary_cli_on_vashantor(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    train = shared_path(*VASHANTOR, "Train")
    files = sorted(train.glob("*.csv"))
    out = tmp_path / "bn_words.txt"
    res = cli("build", "vocabulary", *files, "--column", "standard_text", "--top", "500", "--out", out)
    assert res.exit_code == 0, res.stderr
    words = [line.split("\t")[0] for line in out.read_text(encoding="utf-8").splitlines()[1:]]
    assert len(words) == 500
    # a `\w` tokenizer cuts the vowel signs off (re.findall(r"\w+", "আমি") == ["আম"]), so none of its tokens holds
    # one; whole words keep them: most frequent Bengali words carry a vowel sign (আমার, আমি, করে …)
    assert re.findall(r"\w+", "আমি") == ["আম"]
    assert "আমি" in words[:10] and "আমার" in words[:10]
    with_sign = [w for w in words if any("\u09be" <= ch <= "\u09cc" or ch == "\u0981" for ch in w)]
    assert len(with_sign) > len(words) / 2
    assert not any("\u09be" <= w[0] <= "\u09cc" for w in words)  # no word starts with a vowel sign
    noisy = add_noise("আমি আজ বাড়ি যাব।", p=1.0, vocabulary=out, seed=0, mode="replace")
    assert all(tok in words[:2000] for tok in noisy.rstrip("।").split())


def test_vocabulary_reads_a_jsonl_file_with_a_byte_order_mark_like_a_csv_one(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + '{"standard": "নদী পানি"}\n{"standard": "নদী"}\n'.encode())  # as Notepad saves
    words, n_tokens = build_vocabulary([path], ["standard"], top=10)
    assert n_tokens == 3 and [w for w, _ in words] == ["নদী", "পানি"]
