"""BanglaVerse items: gold index, flagged answers, variant languages, the few-shot split, the folder loader."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from PIL import Image

from dialectbias.data import Item
from dialectbias.data._banglaverse import BanglaVerseLoad, banglaverse_root, iter_banglaverse
from dialectbias.errors import DataError
from dialectbias.tasks.vlm._items import (
    FEW_SHOT_SPLIT,
    caption_reference,
    few_shot_split,
    gold_index,
    variant_language,
    vqa_variant,
)

OPTIONS = ["ধান মাড়াই", "জমি চাষ", "শস্য মজুদ", "গো-খাদ্য প্রস্তুত"]


def test_gold_index_from_index_or_answer_text() -> None:
    assert gold_index(OPTIONS, 1, None) == 1
    assert gold_index(OPTIONS, None, "জমি চাষ") == 1
    assert gold_index(OPTIONS, None, " জমি  চাষ ") == 1  # normalised
    assert gold_index(OPTIONS, None, "নৌকা বাইচ") is None  # not among the options: flagged, never correct
    assert gold_index(OPTIONS, 4, None) is None


def test_vqa_variant_reads_entries_and_names_the_bad_one() -> None:
    item = Item(id="culture_114", domain="culture", variants={
        "standard": {"question": "ছবিতে গরু ব্যবহার করে কী কাজ করা হচ্ছে?", "options": OPTIONS, "answer": "জমি চাষ"},
        "english": {"question": "What task?", "options": ["a", "b", "c", "d"], "answer_index": 9},
        "sylhet": {"question": "কিতা?", "options": OPTIONS, "answer": "x", "is_human_validated": False}})
    std = vqa_variant(item, "standard")
    assert (std.gold, std.human_validated, std.answerable) == (1, True, True)
    syl = vqa_variant(item, "sylhet")
    assert (syl.gold, syl.human_validated, syl.answerable) == (None, False, False)
    with pytest.raises(DataError, match=r"culture_114.*english.*answer_index 9"):
        vqa_variant(item, "english")


def test_validated_by_marks_machine_variants_when_the_item_has_it() -> None:
    item = Item(id="x", variants={"standard": {"caption": "a"}, "hindi": {"caption": "b"}},
                validated_by={"standard": "annotator"})
    assert caption_reference(item, "standard") == ("a", True)
    assert caption_reference(item, "hindi") == ("b", False)


@pytest.mark.parametrize(("variant", "name", "script", "dialect"), [
    ("standard", "Bangla", "bengali", None), ("sylhet", "Bangla", "bengali", "Sylhet"),
    ("english", "English", "latin", None), ("hindi", "Hindi", "devanagari", None), ("urdu", "Urdu", "arabic", None)])
def test_variant_language(variant: str, name: str, script: str, dialect: str | None) -> None:
    lang = variant_language(variant)
    assert (lang.name, lang.script, lang.dialect) == (name, script, dialect)


def test_variant_language_unknown_is_a_data_error() -> None:
    with pytest.raises(DataError, match="bavarian"):
        variant_language("bavarian")


def _items(n_per_domain: int) -> list[Item]:
    return [Item(id=f"{d}_{i:03d}", domain=d, variants={"standard": {"caption": "c"}})
            for d in ("food", "sports") for i in range(n_per_domain)]


def test_few_shot_split_is_seeded_fixed_and_per_domain() -> None:
    items = _items(10)
    first = few_shot_split(items, 3, seed=0)
    assert first == few_shot_split(list(reversed(items)), 3, seed=0)  # order does not matter
    assert sorted(first) == ["food", "sports"] and all(len(v) == 3 for v in first.values())
    assert all(i.startswith(d) for d, ids in first.items() for i in ids)
    assert any(few_shot_split(items, 3, seed=s) != first for s in range(1, 5))


def test_few_shot_split_prefers_items_with_every_variant_and_marked_pool() -> None:
    items = _items(5)
    items[0] = items[0].model_copy(update={"variants": {"standard": {"caption": "c"}, "hindi": {"caption": "h"}}})
    assert few_shot_split(items, 1, seed=3, variants=["standard", "hindi"])["food"] == ["food_000"]
    marked = [i.model_copy(update={"metadata": {"split": FEW_SHOT_SPLIT}}) if i.id in ("food_004", "sports_002")
              else i for i in items]
    assert few_shot_split(marked, 3, seed=0) == {"food": ["food_004"], "sports": ["sports_002"]}


def _png(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.BytesIO()
    Image.new("RGB", (8, 8), (200, 10, 10)).save(buf, format="PNG")
    path.write_bytes(buf.getvalue())


def test_banglaverse_layout_any_id_key_duplicates_and_missing_images(tmp_path: Path) -> None:
    root = tmp_path / "dataset"
    (root / "food/annotations").mkdir(parents=True)
    (root / "history/annotations").mkdir(parents=True)
    (root / "food/annotations/food_captions.json").write_text(json.dumps(
        [{"image_id": "food_001", "caption": "ভুনা খিচুড়ি।"}, {"food_id": "food_002", "caption": "তেলের পিঠা।"}]),
        encoding="utf-8")
    (root / "history/annotations/history_qa_pairs.json").write_text(json.dumps(
        [{"image_id": "history_001", "question": "q1", "options": OPTIONS, "answer": "জমি চাষ"},
         {"image_id": "history_001", "question": "q2", "options": OPTIONS, "answer": "নেই"}]), encoding="utf-8")
    _png(root / "food/images/food_001.png")
    _png(root / "history/images/history_001.jpeg")
    assert banglaverse_root(tmp_path) == root

    load = BanglaVerseLoad(root)
    captions = list(iter_banglaverse(root, "caption", load))
    assert [(i.id, i.domain, i.metadata["image"], i.metadata["image_present"]) for i in captions] == [
        ("food_001", "food", "food/images/food_001.png", True), ("food_002", "food", "food/images/food_002", False)]
    assert load.without_image == ["food_002: food/images/food_002.*"]

    vqa = list(iter_banglaverse(root, "vqa", BanglaVerseLoad(root)))
    assert [i.id for i in vqa] == ["history_001", "history_001#2"]
    assert [vqa_variant(i, "standard").gold for i in vqa] == [1, None]


def test_banglaverse_entry_without_id_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "food/annotations").mkdir(parents=True)
    (tmp_path / "food/annotations/food_captions.json").write_text('[{"caption": "x"}]', encoding="utf-8")
    with pytest.raises(DataError, match=r"food_captions.json: entry 0: no image id"):
        list(iter_banglaverse(tmp_path, "caption", BanglaVerseLoad(tmp_path)))


def test_few_shot_split_skips_items_that_cannot_be_shown() -> None:
    items = _items(4)
    chosen = few_shot_split(items, 3, seed=0, usable=lambda i: i.id not in ("food_000", "food_001"))
    assert chosen["food"] == ["food_002", "food_003"]  # fewer examples rather than an unusable one
