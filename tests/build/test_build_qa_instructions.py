"""build qa-instructions' provenance rules and the templates it writes (docs/qa-instructions.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dialectbias.build import instruction_items, write_instructions
from dialectbias.build._qa_instructions import PARTS
from dialectbias.errors import DataError
from dialectbias.tasks.qa_bias._instructions import read_instruction


def exported(tmp_path: Path, variants: dict[str, dict[str, str]], *, translated: set[str],
             checked: dict[str, str] | None = None) -> Path:
    """An export --items file: PARTS with the given {variant: {part id: text}}; `translated` variants carry a
    translation record (model m-1), `checked` ones validated_by."""
    rows: list[dict[str, Any]] = []
    for k, std in PARTS.items():
        row: dict[str, Any] = {"id": k, "variants": {"standard": std, **{v: t[k] for v, t in variants.items()
                                                                        if k in t}}}
        row["translation"] = {v: {"translator": "translator", "model": "m-1"} for v in translated}
        if checked:
            row["validated_by"] = checked
        rows.append(row)
    path = tmp_path / "done.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def texts(tag: str) -> dict[str, str]:
    return {k: f"{tag}{i}" for i, k in enumerate(PARTS)}


def test_items_file_holds_the_three_standard_parts(tmp_path: Path) -> None:
    assert instruction_items(tmp_path / "p.jsonl") == 3
    rows = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text(encoding="utf-8").splitlines()]
    assert {r["id"]: r["variants"] for r in rows} == {k: {"standard": v} for k, v in PARTS.items()}


def test_sources_machine_checked_and_user(tmp_path: Path) -> None:
    path = exported(tmp_path, {"noakhali": texts("n"), "barishal": texts("b"), "sylhet": texts("s")},
                    translated={"noakhali", "barishal"}, checked={"barishal": "ann1"})
    result = write_instructions(path, tmp_path / "out")
    assert result.sources == {"barishal": "machine (translate, model m-1) checked by ann1",
                              "noakhali": "machine (translate, model m-1)", "sylhet": "user"}
    noakhali = read_instruction(tmp_path / "out" / "noakhali.j2", "noakhali", "x", "missing")
    assert noakhali.source == "machine (translate, model m-1)"
    assert noakhali.body == "n0\nn1: {{ question }}\n(n2)\n"
    assert noakhali.render("Q?", "noakhali") == "n0\nn1: Q?\n(n2)"


def test_jinja_like_text_is_written_literally(tmp_path: Path) -> None:
    path = exported(tmp_path, {"noakhali": {**texts("n"), "qa_instruction": "a {{ b }} {% c %}"}},
                    translated={"noakhali"})
    write_instructions(path, tmp_path / "out")
    noakhali = read_instruction(tmp_path / "out" / "noakhali.j2", "noakhali", "x", "missing")
    assert noakhali.render("Q", "noakhali") == "a {{ b }} {% c %}\nn1: Q\n(n2)"


def test_a_missing_part_names_the_item_and_variant(tmp_path: Path) -> None:
    part = dict(texts("n"))
    del part["qa_only_answer"]
    path = exported(tmp_path, {"noakhali": part}, translated={"noakhali"})
    with pytest.raises(DataError, match=r"done.jsonl:3: item 'qa_only_answer' has no 'noakhali' text"):
        write_instructions(path, tmp_path / "out")


def test_a_changed_standard_text_is_refused(tmp_path: Path) -> None:
    path = exported(tmp_path, {"noakhali": texts("n")}, translated={"noakhali"})
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    rows[1]["variants"]["standard"] = "অন্য"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    with pytest.raises(DataError, match=r"done.jsonl:2: item 'qa_question_label': its standard text"):
        write_instructions(path, tmp_path / "out")
