"""Machine-made dialect instructions for qa_bias (`instructions: per_variant`; Bengali paper §3.2 writes the answer
instruction in each dialect but prints only the Sylhet one).

The recipe: `instruction_items` writes the three standard-Bengali parts of the answer instruction as items; a
`translate` run adds their dialect variants (`dialectbias export EXP --items OUT.jsonl`); `write_instructions`
assembles, per dialect, `<variant>.j2` in the paper's layout (instruction, `<label>: {{ question }}`, the
"only the answer" line in brackets) with front matter `source: machine (translate, model M)` (or `user` for a
variant the items file already had, written by hand). A variant gold-labelled in review says so in its source.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from dialectbias.errors import DataError

STANDARD = "standard"
#: item id -> the standard-Bengali text (the parts of qa_bias/answer.j2's instruction)
PARTS: dict[str, str] = {
    "qa_instruction": "নিচের প্রশ্নটির উত্তর প্রমিত বাংলায় দিন।",
    "qa_question_label": "প্রশ্ন",
    "qa_only_answer": "শুধু উত্তরটি লিখুন, অন্য কিছু নয়।",
}
_GLOSS = {"qa_instruction": "Answer the following question in standard Bengali.",
          "qa_question_label": "Question", "qa_only_answer": "Write only the answer, nothing else."}


def instruction_items(out: Path) -> int:
    """Write the three standard parts as a `data:` file for a translate experiment; returns the count."""
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": k, "gloss": _GLOSS[k], "variants": {STANDARD: v}} for k, v in PARTS.items()]
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


@dataclass
class InstructionsResult:
    written: list[Path] = field(default_factory=list)
    sources: dict[str, str] = field(default_factory=dict)


def _read(items: Path) -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    try:
        lines = items.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{items}: cannot read: {exc}") from None
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"{items}:{n}: not JSON: {exc.msg}") from None
        if isinstance(row, dict) and row.get("id") in PARTS:
            if not isinstance(row.get("variants"), dict):
                raise DataError(f"{items}:{n}: item {row['id']!r} has no `variants` object")
            rows[row["id"]] = {**row, "_line": n}
    absent = [k for k in PARTS if k not in rows]
    if absent:
        raise DataError(f"{items}: item(s) {', '.join(absent)} missing: export the translate run of the file "
                        "`dialectbias build qa-instruction-items` wrote (`dialectbias export EXP --items OUT`)")
    for k, row in rows.items():
        if row["variants"].get(STANDARD) != PARTS[k]:
            raise DataError(f"{items}:{row['_line']}: item {k!r}: its standard text is not the one "
                            f"qa-instruction-items writes ({PARTS[k]!r}); the dialect text would not "
                            "translate qa_bias's instruction")
    return rows


def _provenance(rows: dict[str, dict[str, Any]], variant: str) -> tuple[str, str]:
    """(source, note) of a variant's three parts."""
    records = [(r.get("translation") or {}).get(variant) for r in rows.values()]
    if not any(records):
        return "user", "dialect text written into the items file (not machine translated)"
    models = sorted({str(r.get("model")) for r in records if isinstance(r, dict)})
    translators = sorted({str(r.get("translator")) for r in records if isinstance(r, dict)})
    checked = sorted({str((r.get("validated_by") or {}).get(variant)) for r in rows.values()
                      if (r.get("validated_by") or {}).get(variant)})
    source = f"machine (translate, model {', '.join(models)})"
    if checked:
        source += f" checked by {', '.join(checked)}"
    machine_parts = sum(1 for r in records if r)
    note = (f"{machine_parts} of {len(records)} parts machine translated by role {', '.join(translators)}; "
            + ("gold-labelled in review" if checked else "not checked by a speaker of the dialect"))
    return source, note


def _literal(text: str) -> str:
    """`text` as Jinja source that renders to itself."""
    return f"{{% raw %}}{text}{{% endraw %}}" if any(t in text for t in ("{{", "{%", "{#")) else text


def write_instructions(items: Path, out_dir: Path, *, overwrite: bool = False) -> InstructionsResult:
    """`<out_dir>/<variant>.j2` for every variant the three parts all have (a variant missing a part is an
    error naming the item and the variant); an existing file is an error unless `overwrite`."""
    rows = _read(items)
    variants = sorted({v for r in rows.values() for v in r["variants"]} - {STANDARD})
    if not variants:
        raise DataError(f"{items}: the instruction items have no dialect variant yet (run the translate "
                        "experiment and export its items)")
    result = InstructionsResult()
    out_dir.mkdir(parents=True, exist_ok=True)
    for variant in variants:
        texts = {}
        for k, row in rows.items():
            text = row["variants"].get(variant)
            if not isinstance(text, str) or not text.strip():
                raise DataError(f"{items}:{row['_line']}: item {k!r} has no {variant!r} text (a failed "
                                "translation is not exported): translate it again or write it by hand")
            texts[k] = " ".join(text.split())
        path = out_dir / f"{variant}.j2"
        if path.exists() and not overwrite:
            raise DataError(f"{path}: exists (use --overwrite to replace it)")
        source, note = _provenance(rows, variant)
        front = yaml.safe_dump({"source": source, "variant": variant, "note": f"{note}; from {items.name}"},
                               allow_unicode=True, sort_keys=False, width=100)
        label = texts["qa_question_label"].rstrip(":：").strip()
        body = (f"{_literal(texts['qa_instruction'])}\n{_literal(label)}: {{{{ question }}}}\n"
                f"({_literal(texts['qa_only_answer'])})\n")
        path.write_text(f"---\n{front}---\n{body}", encoding="utf-8")
        result.written.append(path)
        result.sources[variant] = source
    return result
