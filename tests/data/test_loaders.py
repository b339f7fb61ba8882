"""Dataset loaders: JSONL, CSV and Parquet items; every error names the file and line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialectbias.data import InputLimits, Item, LoadReport, iter_items
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
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}}, {"idx": "b", "variants": {"standard": "y"}})
    assert data_error(path) == (f"{path}:2: missing 'id' (an item needs 'id' and 'variants'; optional: domain, "
                                "question_type, gold, validated_by; found: idx, variants)")


def test_empty_id_is_missing(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "  ", "variants": {"standard": "y"}})
    assert data_error(path) == f"{path}:1: 'id' is empty"


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


# -- wrong columns, empty files (issues 7.5, 6.10) ------------------------------------------------------


def test_csv_with_wrong_columns_lists_expected_and_found(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("item,text,variants.standard\nq1,x,নদী\n", encoding="utf-8")
    assert data_error(path) == (
        f"{path}:1: missing column(s) id; expected columns: id, variants.standard, variants.<dialect>, … (or one "
        "'variants' column holding a JSON object), optional domain, question_type, gold, validated_by; found: "
        "item, text, variants.standard")


def test_csv_without_variant_columns_names_them(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id,standard,sylhet\nq1,x,y\n", encoding="utf-8")
    assert data_error(path).startswith(f"{path}:1: missing column(s) variants.standard; expected columns:")


def test_csv_separated_by_semicolons_gets_a_hint(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id;variants.standard\nq1;x\n", encoding="utf-8")
    assert data_error(path).endswith("found: id;variants.standard (is the file separated by ';' or tabs? use commas)")


def test_csv_header_names_are_stripped(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("id , variants.standard\nq1,x\n", encoding="utf-8")
    assert [i.variants for i in iter_items(path)] == [{"standard": "x"}]


@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_empty_or_blank_jsonl_is_an_error_naming_the_file(tmp_path: Path, text: str) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text(text, encoding="utf-8")
    assert data_error(path) == (f"{path}: the data file is empty; expected one JSON object per line, e.g. "
                                '{"id": "q001", "variants": {"standard": "…", "chittagong": "…"}}')


def test_blank_csv_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "items.csv"
    path.write_text("  \n", encoding="utf-8")
    assert data_error(path).startswith(f"{path}: the data file is empty; expected a header row id,variants.standard")


def test_parquet_without_rows_has_no_items(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "items.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string()), "variants.standard": pa.array([], pa.string())}), path)
    assert data_error(path) == (f"{path}: no items (no data rows); expected columns id and variants (or "
                                "variants.standard, variants.<dialect>, …)")


# -- size limits and the load report (issue 7.8) ---------------------------------------------------------


def test_field_sizes_warn_and_refuse_per_item(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "ok", "variants": {"standard": "x" * 10}},
                 {"id": "big", "variants": {"standard": "x", "sylhet": "y" * 11}},
                 {"id": "long", "variants": {"standard": "x"}, "notes": "n" * 6})
    report = LoadReport(str(path), InputLimits(warn_field_chars=5, max_field_chars=10))
    items = list(iter_items(path, report=report))
    assert [i.id for i in items] == ["ok", "long"]
    assert report.refused == ["'big' (line 2) variants.sylhet (11 characters)"]
    assert report.large == ["'ok' (line 1) variants.standard (10 characters)", "'long' (line 3) notes (6 characters)"]


def test_size_is_measured_on_the_kept_variants(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x", "sylhet": "y" * 50}})
    report = LoadReport(str(path), InputLimits(warn_field_chars=5, max_field_chars=10))
    assert [i.variants for i in iter_items(path, variants=["standard"], report=report)] == [{"standard": "x"}]
    assert report.refused == [] and report.large == []


def test_every_item_refused_is_an_error(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x" * 3}})
    assert data_error(path, limits=InputLimits(warn_field_chars=1, max_field_chars=2)) == (
        f"{path}: no usable items: every item was refused for a field longer than limits.max_field_chars = 2 "
        "characters: 'a' (line 1) variants.standard (3 characters)")


def test_a_default_5_mb_field_is_refused(tmp_path: Path) -> None:
    path = jsonl(tmp_path, {"id": "a", "variants": {"standard": "x"}},
                 {"id": "huge", "variants": {"standard": "ক" * 5_000_000}})
    report = LoadReport(str(path))
    assert [i.id for i in iter_items(path, report=report)] == ["a"]
    assert report.refused == ["'huge' (line 2) variants.standard (5,000,000 characters)"]


def test_report_names_missing_variants_and_items_without_a_dialect(tmp_path: Path) -> None:
    rows = [{"id": f"q{i}", "variants": {"standard": "x", "sylhet": "y", "chittagong": "z"}} for i in range(7)]
    rows[1]["variants"] = {"standard": "x"}
    for i in range(2, 7):
        rows[i]["variants"]["chittagong"] = " "
    path = jsonl(tmp_path, *rows)
    report = LoadReport(str(path))
    list(iter_items(path, report=report))
    assert report.without_dialect == ["'q1' (line 2)"]
    assert report.warnings(compares_dialects=True)[1:] == [
        f"variant 'chittagong' missing (absent or empty) in 5 of 7 items in {path}: 'q2' (line 3); 'q3' (line 4); "
        "'q4' (line 5); 'q5' (line 6); 'q6' (line 7)"]
    assert report.warnings()[0].startswith("variant 'chittagong' missing")  # no dialect needed: no such warning
