"""Dataset loaders: JSONL, CSV and Parquet items; every error names the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.data import Item, iter_items
from dialectbias.errors import DataError

STD = ("standard",)


def jsonl(tmp_path: Path, *rows: dict | str, name: str = "items.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n"
                            for r in rows), encoding="utf-8")
    return path


def data_error(path: Path, **kwargs) -> str:
    with pytest.raises(DataError) as info:
        list(iter_items(path, **kwargs))
    return str(info.value)


def test_jsonl_items_with_variants_and_fields(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "q1", "domain": "geo", "question_type": "factual", "gold": "পদ্মা",
                            "variants": {"standard": "নদীর নাম কী?", "sylhet": "গাঙর নাম কিতা?"},
                            "validated_by": {"sylhet": "ann1"}},
                 {"id": 2, "variants": {"standard": "আকাশ কেন নীল?"}})
    items = list(iter_items(path, required_variants=STD))
    assert items[0] == Item(id="q1", domain="geo", question_type="factual", gold="পদ্মা",
                            variants={"standard": "নদীর নাম কী?", "sylhet": "গাঙর নাম কিতা?"},
                            validated_by={"sylhet": "ann1"})
    assert items[0].is_human_validated("sylhet") and not items[0].is_human_validated("standard")
    assert items[1].id == "2"  # ids are strings


def test_jsonl_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, "", "   ",
                 {"id": "b", "variants": {"standard": "y"}})
    assert [i.id for i in iter_items(path)] == ["a", "b"]


def test_unknown_fields_are_kept_in_metadata(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}, "source": "web", "difficulty": 3})
    (item,) = iter_items(path)
    assert item.metadata == {"source": "web", "difficulty": 3}


def test_csv_variant_columns_and_extra_fields(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,domain,variants.standard,variants.chittagong,source\n"
                    "q1,geo,নদীর নাম কী?,গাঙর নাম কী?,web\n"
                    'q2,geo,"কমা, আছে",,book\n', encoding="utf-8")
    q1, q2 = iter_items(path, required_variants=STD)
    assert q1.variants == {"standard": "নদীর নাম কী?", "chittagong": "গাঙর নাম কী?"}
    assert (q1.domain, q1.metadata) == ("geo", {"source": "web"})
    assert q2.variants == {"standard": "কমা, আছে"}  # empty cells are absent variants


def test_csv_with_utf8_bom(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_bytes("id,variants.standard\nq1,প্রশ্ন\n".encode("utf-8-sig"))
    assert [i.id for i in iter_items(path)] == ["q1"]


def test_parquet_flat_variant_columns(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"id": ["q1", "q2"], "variants.standard": ["ক", "খ"],
                             "variants.sylhet": ["গ", None], "source": ["web", "book"]}), path)
    q1, q2 = iter_items(path, required_variants=STD)
    assert q1.variants == {"standard": "ক", "sylhet": "গ"} and q1.metadata == {"source": "web"}
    assert q2.variants == {"standard": "খ"}


def test_parquet_struct_variants(tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "items.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "q1", "variants": {"standard": "ক", "sylhet": "গ"}}]), path)
    (item,) = iter_items(path)
    assert item.variants == {"standard": "ক", "sylhet": "গ"}


def test_relative_path_resolves_against_base_dir(tmp_path: Path) -> None:
    jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}})
    assert [i.id for i in iter_items("items.jsonl", base_dir=tmp_path)] == ["a"]


def test_missing_id_names_file_and_line(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, {"variants": {"standard": "y"}})
    assert data_error(path) == f"{path}:2: missing 'id'"


def test_empty_id_is_missing(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "  ", "variants": {"standard": "y"}})
    assert data_error(path) == f"{path}:1: missing 'id'"


def test_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, {"id": "b",
                                                                        "variants": {"standard": "y"}},
                 {"id": "a", "variants": {"standard": "z"}})
    message = data_error(path)
    assert message.startswith(f"{path}:3: duplicate id 'a'")
    assert "first seen at line 1" in message


def test_duplicate_id_in_csv_names_both_lines(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,variants.standard\nq1,ক\nq2,খ\nq1,গ\n", encoding="utf-8")
    message = data_error(path)
    assert message.startswith(f"{path}:4: duplicate id 'q1'") and "first seen at line 2" in message


def test_no_standard_variant_when_required(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, {"id": "b",
                                                                        "variants": {"sylhet": "y"}})
    assert data_error(path, required_variants=STD) == f"{path}:2: item 'b' has no 'standard' variant"


def test_blank_standard_variant_counts_as_missing(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "  ", "sylhet": "y"}})
    assert data_error(path, required_variants=STD) == f"{path}:1: item 'a' has no 'standard' variant"


def test_no_variants_at_all(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "text": "x"})
    assert data_error(path).startswith(f"{path}:1: item 'a' has no 'variants'")


def test_non_utf8_jsonl_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "items.jsonl"
    path.write_bytes(b'{"id": "a", "variants": {"standard": "x"}}\n'
                     b'{"id": "b", "variants": {"standard": "\xff"}}\n')
    assert data_error(path).startswith(f"{path}:2: not UTF-8")


def test_non_utf8_csv_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_bytes("id,variants.standard\nq1,ক\nq2,".encode() + b"\xe9t\xe9\n")
    assert data_error(path).startswith(f"{path}:3: not UTF-8")


def test_invalid_json_line_names_file_line_and_column(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, '{"id": "b", variants}')
    message = data_error(path)
    assert message.startswith(f"{path}:2: invalid JSON")
    assert "column 13" in message


def test_json_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = jsonl(tmp_path, "[1, 2]")
    assert data_error(path) == f"{path}:1: expected a JSON object, got list"


def test_csv_row_with_too_many_fields(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,variants.standard\nq1,ক,extra\n", encoding="utf-8")
    assert data_error(path) == f"{path}:2: more fields than the header has"


def test_unsupported_format_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "items.xlsx").write_bytes(b"PK")
    assert "unsupported data format '.xlsx'" in data_error(tmp_path / "items.xlsx")
    assert data_error(tmp_path / "none.jsonl") == f"{tmp_path / 'none.jsonl'}: data file not found"


def test_unreadable_parquet_names_the_file(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "items.parquet"
    path.write_bytes(b"not parquet at all")
    assert data_error(path).startswith(f"{path}: not a readable Parquet file")


def test_validated_by_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,variants.standard,validated_by\nq1,ক,ann1\n", encoding="utf-8")
    assert data_error(path).startswith(f"{path}:2:")
