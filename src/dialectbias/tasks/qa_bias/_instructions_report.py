"""The report's record of the answer instruction each variant was asked with, and its provenance
(`qa_bias_instructions.csv`, an HTML section and a metadata row; Bengali paper §3.2)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from dialectbias.data import STANDARD
from dialectbias.report import Section
from dialectbias.store import Store

if TYPE_CHECKING:
    from dialectbias.tasks.qa_bias._task import QABiasTask

COLUMNS = ["variant", "instructions", "template", "source", "sha256", "prompts", "note"]
LEGEND = {
    "variant": "the question's variant",
    "instructions": "options.instructions: standard (one standard-Bengali instruction) or per_variant "
                    "(each dialect's own, the paper's §3.2)",
    "template": "the template the variant's stored prompts were rendered from",
    "source": "its provenance: paper §X (printed in the paper), machine (translate, model M), user, package",
    "sha256": "sha256 of the template text (front matter excluded)",
    "prompts": "current generation prompts of the variant rendered from it (all models)",
    "note": "the template's front-matter note",
}


def instruction_table(task: QABiasTask, store: Store) -> pd.DataFrame:
    """One row per (variant, template) of the current generation requests, plus item variants not asked yet."""
    used: Counter[tuple[str, str]] = Counter(
        (r.variant, r.template) for r in store.stage_results("generate", ok_only=False))
    variants = {v for item in store.iter_items() for v in item.variants} | {v for v, _ in used}
    rows = []
    for variant in sorted(variants, key=lambda v: (v != STANDARD, v)):
        now = task.instructions.for_variant(variant)
        labels = sorted({t for v, t in used if v == variant}) or [now.label]
        for label in labels:
            current = label == now.label
            rows.append({"variant": variant, "instructions": task.options.instructions, "template": label,
                         "source": now.source if current else "— (not the current template: run again)",
                         "sha256": now.sha256 if current else "", "prompts": used.get((variant, label), 0),
                         "note": now.note if current else ""})
    return pd.DataFrame(rows, columns=COLUMNS)


def instruction_section(task: QABiasTask, store: Store, out_dir: Path) -> tuple[Section, str]:
    """The section, and the metadata line ("sylhet: paper §3.2 …; chittagong: user"), after writing the CSV."""
    table = instruction_table(task, store)
    table.to_csv(out_dir / "qa_bias_instructions.csv", index=False)
    paper = ("the paper's procedure (§3.2: the instruction written in each dialect)"
             if task.options.instructions == "per_variant" else
             "not the paper's procedure: the paper writes the instruction in each dialect (§3.2; "
             "instructions: per_variant)")
    section = Section(
        heading="Answer instructions", table=table.drop(columns=["sha256"]),
        text=f"The instruction each variant's question was asked with (instructions: "
             f"{task.options.instructions}; {paper}). Template hashes are in qa_bias_instructions.csv.",
        legend={k: v for k, v in LEGEND.items() if k != "sha256"})
    line = "; ".join(f"{r.variant}: {r.template} ({r.source})" for r in table.itertuples() if r.prompts)
    return section, f"{task.options.instructions} — {line or 'no prompts yet'}"
