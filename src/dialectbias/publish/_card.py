"""The dataset card (`README.md`) of `export --hf-dataset`: a YAML header the Hugging Face Hub reads
(https://huggingface.co/docs/hub/datasets-cards; `configs:` as in
https://huggingface.co/docs/hub/datasets-manual-configuration) and a body saying where each text came from.

Header: pretty_name, language (ISO codes of the variants' languages: `dialects.yaml` knows each dialect's),
license (--license), task_categories (from the task), size_categories (from the item count), tags, configs.
Body: the configs; per variant its language, human-written and machine-made counts, the models that
translated and the `is_human_validated` counts (BanglaVerse §3.3's field); the corpus and index a translate run
retrieved its examples from (name, fingerprint, embedder: never a path); the translating role, the models and
judges evaluated; the dialectbias version; the departures from the papers (docs/departures.md); citations."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

import dialectbias
from dialectbias.errors import DialectBiasError
from dialectbias.publish._variants import provenance_counts
from dialectbias.report import departure_table

if TYPE_CHECKING:
    import pyarrow as pa

    from dialectbias.config import Experiment
    from dialectbias.providers import ModelConfig
    from dialectbias.publish._hf_dataset import HFDatasetResult
    from dialectbias.tasks import Task

#: the Hub's task categories for each task (another task: text-generation)
TASK_CATEGORIES: dict[str, list[str]] = {
    "qa_bias": ["question-answering", "text-generation"],
    "translate": ["translation"],
    "translation_quality": ["translation"],
    "association": ["text-classification", "text-generation"],
    "decision": ["text-classification", "text-generation"],
    "perplexity": ["text-generation"],
    "vqa": ["visual-question-answering"],
    "caption": ["image-to-text"],
    "csu": ["visual-question-answering", "image-to-text"],
}

BENGALI = ("sami2026bengali", """@misc{sami2026bengali,
  title         = {Benchmarking Bengali Dialectal Bias: A Multi-Stage Framework Integrating RAG-Based
                   Translation and Human-Augmented RLAIF},
  author        = {Sami, K. M. Jubair and Sumit, Dipto and Hossain, Ariyan and Sadeque, Farig},
  year          = {2026},
  eprint        = {2603.21359},
  archivePrefix = {arXiv}
}""")
GERMAN = ("bui2025german", """@misc{bui2025german,
  title         = {Large Language Models Discriminate Against Speakers of German Dialects},
  author        = {Bui, Minh Duc and Holtermann, Carolin and Hofmann, Valentin and Lauscher, Anne and
                   von der Wense, Katharina},
  year          = {2025},
  eprint        = {2509.13835},
  archivePrefix = {arXiv}
}""")
BANGLAVERSE = ("banglaverse", """@misc{banglaverse,
  title = {Many Dialects, Many Languages, One Cultural Lens: Evaluating Multilingual VLMs for Bengali
           Culture Understanding Across Historically Linked Languages and Regional Dialects},
  note  = {BanglaVerse; add the authors and venue of the published version}
}""")
#: the papers whose procedure each task follows (SPEC.md; /work/shared/papers/README.md)
TASK_PAPERS = {"qa_bias": [BENGALI], "translate": [BENGALI, BANGLAVERSE], "translation_quality": [BENGALI],
               "association": [GERMAN], "decision": [GERMAN], "perplexity": [GERMAN],
               "vqa": [BANGLAVERSE], "caption": [BANGLAVERSE], "csu": [BANGLAVERSE]}

DESCRIPTIONS = {
    "items": "the experiment's items as `dialectbias export --items` writes them (one row per item; object and "
             "list fields as JSON text)",
    "variants": "one row per item and variant: its text, language, provenance (human / machine and the model that "
                "translated it) and is_human_validated",
    "generations": "every answer of the models under test, with its rendered prompt and request; `current` is "
                   "false for superseded rows",
    "judgments": "every judgment: judge_id, rubric, parsed fields (JSON), score, checks, flags, clipped",
    "reasks": "re-asks after a structured answer failed validation",
    "annotations": "the human review's annotations",
    "departures": "which value each departure from a paper took (docs/departures.md of dialectbias)",
}


def size_category(n: int) -> str:
    """The Hub's size bucket for `n` examples."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"),
                        (1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M")):
        if n < limit:
            return name
    return "10M<n<100M"


def model_name(m: ModelConfig) -> str:
    """The model's name; a local model's folder by its name only (no local path leaves the machine)."""
    return Path(m.model).name if Path(m.model).is_absolute() else m.model


@dataclass
class CardFacts:
    name: str
    task: str
    version: str
    license: str
    languages: list[str]
    categories: list[str]
    items: int
    configs: dict[str, int]
    empty: list[str]
    images: int
    relativized: int
    provenance: dict[str, dict[str, Any]]
    translator: str | None
    retrieval: list[str]
    models: list[str]
    judges: list[str]
    answered_by: dict[str, int]
    departures: list[dict[str, Any]]
    note: str | None
    papers: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def gather(cls, exp: Experiment, task: Task, tables: Mapping[str, pa.Table], result: HFDatasetResult,
               license: str) -> CardFacts:
        variants = tables["variants"].to_pylist() if "variants" in tables else []
        prov = provenance_counts(variants)
        langs = sorted({c["language"] for c in prov.values() if c["language"]})
        if unknown := [v for v, c in prov.items() if not c["language"]]:
            result.warnings.append(f"variant(s) {', '.join(unknown)}: language not known (the card's `language:` "
                                   "leaves them out): add their ISO 639 codes to README.md before uploading")
        answered: dict[str, int] = {}
        if "generations" in tables:
            for m in tables["generations"].column("model").to_pylist():
                answered[m] = answered.get(m, 0) + 1
        translator = None
        if "translator" in exp.roles:
            t = exp.roles["translator"]
            translator = f"`{t.id}`: {model_name(t)} ({t.provider})"
        return cls(name=exp.name, task=exp.task, version=dialectbias.__version__, license=license,
                   languages=langs, categories=list(TASK_CATEGORIES.get(exp.task, ["text-generation"])),
                   items=result.rows.get("items", 0), configs=dict(result.rows),
                   empty=list(result.empty), images=result.images, relativized=result.relativized, provenance=prov,
                   translator=translator,
                   retrieval=_retrieval_lines(task),
                   models=[f"`{m.id}`: {model_name(m)} ({m.provider})" for m in exp.models],
                   judges=[f"`{j.id}`: {model_name(j)} ({j.provider}), rubric {j.rubric or 'the task default'}"
                           + (f", {j.role} judge" if j.role else "") for j in exp.judges],
                   answered_by=answered, departures=departure_table(exp), note=exp.note,
                   papers=TASK_PAPERS.get(exp.task, []))


def _retrieval_lines(task: Task) -> list[str]:
    """The corpus and index a translate run retrieved its few-shot pairs from (RAG translation, Bengali paper
    §3.1), from the index's manifest: names, fingerprint and counts, never a path."""
    from dialectbias.tasks.translate import TranslateTask

    retriever = task.retriever if isinstance(task, TranslateTask) else None
    if retriever is None:
        return []
    try:
        m = retriever.manifest
    except DialectBiasError as exc:
        return [f"the index could not be read now ({str(exc).splitlines()[0][:120]})"]
    fp = m.corpus_fingerprint
    held = f", split(s) {', '.join(m.exclude_splits)} held out ({m.excluded:,} pairs)" if m.exclude_splits else ""
    lines = [f"corpus: `{m.corpus}` (fingerprint {fp.digest if fp else 'not recorded'}; "
             f"{len(fp.files) if fp else 0} data file(s))",
             f"index: {m.pairs:,} pairs, embedder `{Path(m.embedder).name}`{held}",
             "pairs per dialect: " + ", ".join(f"{d} {n:,}" for d, n in sorted(m.dialects.items()))]
    if m.transcripts:
        lines.append(f"dialect-only transcripts: {m.transcripts:,}")
    return lines


def header(f: CardFacts) -> dict[str, Any]:
    """The card's YAML header."""
    from dialectbias.publish._hf_dataset import SPLIT, data_file

    configs = [{"config_name": name, **({"default": True} if name == "items" else {}),
                "data_files": [{"split": SPLIT, "path": data_file(name)}]} for name in f.configs]
    head: dict[str, Any] = {"pretty_name": f"{f.name} ({f.task}, dialectbias)"}
    if f.languages:
        head["language"] = f.languages
    if len(f.languages) > 1:
        head["multilinguality"] = "multilingual"
    head["license"] = f.license
    if f.license == "other":
        head["license_name"] = "other"
        head["license_link"] = "LICENSE"
    head.update({"task_categories": f.categories, "size_categories": [size_category(f.items)],
                 "tags": ["dialects", "bias", "dialectbias", f.task], "configs": configs})
    return head


def _table(columns: list[str], rows: list[list[Any]]) -> list[str]:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")
    return ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns),
            *("| " + " | ".join(cell(v) for v in r) + " |" for r in rows), ""]


def render_card(f: CardFacts, marker: str) -> str:
    """The whole README.md: `---` YAML `---` and the Markdown body."""
    from dialectbias.publish._hf_dataset import SPLIT, data_file

    out = ["---", yaml.safe_dump(header(f), sort_keys=False, allow_unicode=True, width=1000).rstrip(), "---",
           marker, "", f"# {f.name}", "",
           f"The `{f.task}` experiment `{f.name}`, exported with dialectbias {f.version} "
           f"(`dialectbias export {f.name}.yaml --hf-dataset DIR`).", ""]
    if f.note:
        out += [f"> {f.note}", ""]
    out += ["## Configs", "",
            f"Each config has one `{SPLIT}` split. Load one with "
            f"`datasets.load_dataset(\"<this repo or folder>\", \"variants\", split=\"{SPLIT}\")`.", ""]
    out += _table(["config", "rows", "file", "what"],
                  [[f"`{n}`", f"{rows:,}", f"`{data_file(n)}`", DESCRIPTIONS.get(n, "the task's own table "
                    "(`dialectbias export --format parquet` writes it too)")] for n, rows in f.configs.items()])
    if f.empty:
        out += [f"Left out, having no row: {', '.join(f'`{n}`' for n in f.empty)}.", ""]
    if f.relativized:
        out += [f"{f.relativized:,} text cell(s) named a file in the experiment's or its data's folder: written "
                "relative to that folder (no local path is published).", ""]
    if f.images:
        out += [f"The items' {f.images} image file(s) are embedded in the `items` config as the `Image` feature "
                "(the file's bytes and its name): `load_dataset` returns them as PIL images.", ""]
    out += ["## Variants and their provenance", "",
            "`human`: the text as the items gave it; `machine`: made by a translate run (the model named) or "
            "marked machine-made by the data (`is_human_validated` present). `is_human_validated`: true when a "
            "person checked (or corrected) the text, false when nobody did, no record for human-written text "
            "without a validation on record.", ""]
    out += _table(["variant", "language", "items", "human", "machine", "translated by",
                   "validated", "not validated", "no record"],
                  [[v, c["language"] or "?", c["items"], c["human"], c["machine"],
                    ", ".join(f"{m} ({n})" for m, n in sorted(c["models"].items())) or "—",
                    c["validated"], c["not_validated"], c["no_record"]] for v, c in f.provenance.items()])
    if f.translator or f.retrieval:
        out += ["## Translation", ""]
        if f.translator:
            out += [f"- translator role: {f.translator}"]
        out += [f"- {line}" for line in f.retrieval] + [""]
    extra = [m for m in f.answered_by if all(f"`{m}`" not in line for line in f.models)]
    if f.models or f.judges or extra:
        out += ["## Models and judges", ""]
        out += [f"- model: {m}" for m in f.models]
        out += [f"- answers from `{m}` ({f.answered_by[m]:,} rows in `generations`; imported or no longer listed)"
                for m in extra]
        out += [f"- judge: {j}" for j in f.judges] + [""]
    if f.departures:
        out += ["## Departures from the papers", "",
                "Where the toolkit's default departs from the paper's procedure, the value this experiment used "
                "(`replicate: paper` reproduces the paper's):", ""]
        out += _table(["option", "value", "paper value", "used", "section"],
                      [[d["option"], d["value"], d["paper_value"], d["used"], d["section"]] for d in f.departures])
    out += ["## Licence", "",
            f"`{f.license}`" + (" — not set: pass `--license` to `dialectbias export` (e.g. `cc-by-4.0`) with the "
                                "licence of the items and of the models' answers before publishing."
                                if f.license == "unknown" else "."), ""]
    if f.papers:
        out += ["## Citation", "", "The procedure follows:", "", "```bibtex",
                "\n\n".join(b for _, b in f.papers), "```", ""]
    return "\n".join(out)
