"""The `variants` config's provenance rules and the card's counts, by hand on tiny items (publish/_variants.py),
the licence check and the size buckets of the dataset card."""

from __future__ import annotations

import json

import pytest

from dialectbias.errors import ConfigError
from dialectbias.publish._card import size_category
from dialectbias.publish._licenses import check_license
from dialectbias.publish._variants import provenance_counts, variant_rows

MACHINE = {"translator": "translator", "model": "qwen-7b", "request_ids": ["r1"]}


def by_key(rows: list[dict]) -> dict[tuple[str, str], dict]:
    return {(r["item_id"], r["variant"]): r for r in rows}


def test_each_provenance_rule() -> None:
    items = [
        # a translate run's variant, not yet reviewed
        {"id": "a", "variants": {"standard": "তুমি কী খেয়েছো?", "sylhet": "তুমি কিতা খাইছো?"},
         "translation": {"sylhet": MACHINE}, "is_human_validated": {"sylhet": False}},
        # the same after a review corrected it (review/_gold.py marks it)
        {"id": "b", "variants": {"standard": "আমি যাই।", "sylhet": "আমি যাইরাম।"}, "translation": {"sylhet": MACHINE},
         "is_human_validated": {"sylhet": True}, "validated_by": {"sylhet": "ann1"}},
        # data marked machine-made as a whole (is_human_validated: false), no model on record
        {"id": "c", "variants": {"standard": "ভাত খাব।", "rangpur": "ভাত খামু।"}, "is_human_validated": False},
        # a variant object carrying its own mark (BanglaVerse §3.3)
        {"id": "d", "variants": {"standard": "প্রশ্ন?", "noakhali": {"question": "হোশ্ন?", "is_human_validated": True}}},
        # human-written, checked by a named person
        {"id": "e", "variants": {"standard": "নাম কী?", "chittagong": "নাম কী?"}, "validated_by": {"chittagong": "x"}},
    ]
    rows = by_key(variant_rows(items))
    assert rows[("a", "sylhet")] | {"text": None} == {
        "item_id": "a", "variant": "sylhet", "language": "bn", "text": None, "provenance": "machine",
        "translator": "translator", "translation_model": "qwen-7b", "is_human_validated": False, "validated_by": None}
    assert (rows[("b", "sylhet")]["is_human_validated"], rows[("b", "sylhet")]["validated_by"]) == (True, "ann1")
    assert rows[("c", "rangpur")]["provenance"] == "machine" and rows[("c", "rangpur")]["translation_model"] is None
    assert rows[("c", "rangpur")]["is_human_validated"] is False
    assert rows[("c", "standard")]["provenance"] == "human" and rows[("c", "standard")]["is_human_validated"] is None
    assert rows[("d", "noakhali")]["provenance"] == "machine" and rows[("d", "noakhali")]["is_human_validated"] is True
    assert json.loads(rows[("d", "noakhali")]["text"]) == items[3]["variants"]["noakhali"]
    assert rows[("e", "chittagong")]["provenance"] == "human" and rows[("e", "chittagong")]["is_human_validated"]
    assert {r["language"] for r in rows.values()} == {"bn"}

    counts = provenance_counts(variant_rows(items))
    assert list(counts) == ["standard", "chittagong", "noakhali", "rangpur", "sylhet"]
    assert counts["standard"] == {"language": "bn", "items": 5, "human": 5, "machine": 0, "models": {},
                                  "validated": 0, "not_validated": 0, "no_record": 5}
    assert counts["sylhet"] == {"language": "bn", "items": 2, "human": 0, "machine": 2, "models": {"qwen-7b": 2},
                                "validated": 1, "not_validated": 1, "no_record": 0}


def test_languages_of_variants() -> None:
    rows = by_key(variant_rows([{"id": "a", "variants": {"standard": "Wie geht's?", "bavarian": "Wia geht's?",
                                                          "english": "How are you?", "foo": "x"}}],
                               extra={"xx": ["foo"]}))
    # its dialects belong to two languages (bavarian: de, foo: xx, the file's own; english is a language): unknown
    assert {v: r["language"] for (_, v), r in rows.items()} == {"standard": None, "bavarian": "de",
                                                                 "english": "en", "foo": "xx"}
    rows = by_key(variant_rows([{"id": "a", "variants": {"standard": "Wie geht's?", "bavarian": "Wia geht's?"}}]))
    assert rows[("a", "standard")]["language"] == "de"
    # no dialect: the script tells Bengali, Latin script does not tell a language
    assert variant_rows([{"id": "a", "variants": {"standard": {"question": "এটি কী?"}}}])[0]["language"] == "bn"
    assert variant_rows([{"id": "a", "variants": {"standard": "What is it?"}}])[0]["language"] is None


def test_licence_and_size_bucket() -> None:
    assert check_license("Apache-2.0") == "apache-2.0" and check_license("unknown") == "unknown"
    with pytest.raises(ConfigError, match=r"did you mean 'cc-by-4.0'"):
        check_license("cc-by-4")
    assert [size_category(n) for n in (0, 999, 1000, 9999, 10_000, 2_000_000)] == \
        ["n<1K", "n<1K", "1K<n<10K", "1K<n<10K", "10K<n<100K", "1M<n<10M"]


def test_item_columns_keep_their_type_or_become_json() -> None:
    from dialectbias.publish._hf_dataset import _items_table

    table = _items_table([{"id": "a", "n": 1, "gold": "x", "tags": ["p"], "mixed": 1, "big": 2**70},
                          {"id": "b", "n": 2, "gold": None, "extra": None, "mixed": "one", "big": 1}], {})
    assert [str(f.type) for f in table.schema] == ["string", "int64", "string", "string", "string", "string",
                                                   "string"]
    assert table.column_names == ["id", "n", "gold", "tags", "mixed", "big", "extra"]
    assert table.column("big").to_pylist() == [str(2**70), "1"]
    assert table.column("tags").to_pylist() == ['["p"]', None]
    assert table.column("mixed").to_pylist() == ["1", '"one"']  # mixed types: JSON text, each value decodes back
    features = json.loads(table.schema.metadata[b"huggingface"])["info"]["features"]
    assert features["n"] == {"dtype": "int64", "_type": "Value"}
