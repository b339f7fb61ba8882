"""Commonsense short answers about an image across languages and dialects (`csu`; BanglaVerse §3.5, §4.2,
§4.3; the released CSU scripts, PROCEDURES.md §2).

Every model answers every item's culturally grounded question about its image, in a few words, in each
variant and prompting strategy (zero-shot, few-shot, CoT); a model that is unsure is told to answer the
paper's abstention phrase. Answers are scored by exact match after NFKC and whitespace collapsing and by
BERTScore F1 on a local encoder (`tasks/vlm/_csu_score.py` holds every rule); abstentions are counted apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, field_validator

from dialectbias.config import Departure
from dialectbias.data import Item
from dialectbias.run import Stage
from dialectbias.store import Store
from dialectbias.tasks.vlm._csu_score import ABSTENTION, AbstentionRule, Extraction, FailedRule
from dialectbias.tasks.vlm._items import csu_variant
from dialectbias.tasks.vlm._task import VLMOptions, VLMTask

if TYPE_CHECKING:
    from dialectbias.metrics import CometCheckpoint
    from dialectbias.report import ReportContent


class CSUOptions(VLMOptions):
    abstention_phrases: list[str] = Field(
        default_factory=lambda: [ABSTENTION], min_length=1,
        description="answers that abstain (the first is the one the prompt asks for; BanglaVerse's released "
        "prompt: অনুমান করা যাচ্ছে না)")
    abstentions: AbstentionRule = Field(
        default="wrong", description="an abstention: wrong (in n, never a match, in the BERTScore mean; as the "
        "released scripts) or excluded (out of n and of every metric); counted in `abstained` either way")
    answer_extraction: Extraction = Field(
        default="clean", description="the answer read from a reply: clean (the text after the last `Final "
        "Answer:`, first line, without markdown, an Answer: label or wrapping quotes) or raw (the reply "
        "stripped, as the released scripts compared it)")
    failed_requests: FailedRule = Field(
        default="excluded", description="a request that failed after its retries: excluded (out of n, counted "
        "in the report) or wrong (in n as the released scripts' placeholder `❌ Failed to answer`)")
    bertscore_model: str | None = Field(
        default=None, description="local encoder folder for BERTScore F1 of each answer against the reference "
        "(e.g. a bert-base-multilingual-cased snapshot; relative to the experiment file); none: the column is "
        "empty")
    bertscore_layers: int | None = Field(default=None, ge=1, description="the encoder layer BERTScore compares "
                                         "(default: the last; 9 for bert-base-multilingual-cased)")
    paired_min_conditions: int = Field(default=2, ge=2, description="paired t-test: at least this many "
                                       "(model × domain) conditions")
    few_shot_examples: Literal["held_out", "released"] = Field(
        default="held_out", description="few-shot examples: held_out (few_shot_k items per domain with their "
        "images, held out of the evaluation; BanglaVerse §4.2) or released (the released csu_few_shot prompt: "
        "three fixed Bengali examples from history, culture and sports, images never attached; nothing held out)")
    comet_checkpoint: str | None = Field(
        default=None, description="a local COMET model folder (hparams.yaml + checkpoints/model.ckpt) or its .ckpt "
        "(relative to the experiment file): adds a `comet` column with the released code's convention src = the "
        "reference, mt = the answer, ref = the reference (PROCEDURES.md §2); needs the `comet` extra; never "
        "downloaded")
    comet_encoder: str | None = Field(default=None, description="a local folder with the COMET encoder's config "
                                      "and tokenizer, when hparams.yaml names a Hub model (e.g. xlm-roberta-large)")
    comet_batch_size: int = Field(default=8, ge=1, description="COMET segments per forward pass")

    #: departures from BanglaVerse's released CSU scripts (docs/departures.md; `replicate: paper` sets them)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "answer_extraction": Departure("raw", "PROCEDURES.md §2 (CSU: the reply stripped is the answer)",
                                       "raw replies with a label, markdown or reasoning never match the reference"),
        "failed_requests": Departure("wrong", "PROCEDURES.md §2 (CSU: `❌ Failed to answer` scored as an answer)",
                                     "a failed request says nothing about the model's commonsense; counted apart"),
        "few_shot_examples": Departure("released", "BanglaVerse released csu_few_shot prompt (three fixed "
                                       "examples, no images)", "the paper's §4.2 text describes held-out examples "
                                       "with their images; the released prompt differs"),
    }

    @field_validator("abstention_phrases")
    @classmethod
    def _phrases(cls, value: list[str]) -> list[str]:
        if any(not p.strip() for p in value):
            raise ValueError("an abstention phrase is empty")
        return value


class CSUTask(VLMTask):
    """CSU: a short free-text answer to a commonsense question about an image, in every variant and
    prompting strategy; exact match, BERTScore F1 and abstentions per model × variant × strategy × domain."""

    name = "csu"
    entry_key = "question"
    layout_kind = "csu"
    Options = CSUOptions
    item_format = (
        "`data:` a JSONL file, one item per line:\n"
        '{"id": "culture_001", "domain": "culture", "image": "images/culture_001.jpg", "variants": '
        '{"standard": {"question": "…", "answer": "…"}, "sylhet": {…}}}\n'
        "(`answer`: the short reference answer; no `options` (that is a vqa item); `is_human_validated`: false "
        "for machine variants, e.g. made by `translate`; `image`: a path relative to the data file's folder or "
        "an http(s) URL, absent when only imported answers are scored; `split: few_shot` marks the few-shot "
        "pool). Or a folder in the BanglaVerse layout: <domain>/annotations/<domain>_commonsense_reasoning.json "
        "and <domain>/images/<image id>.*. Variants: standard (Bengali), a Bengali dialect, english, hindi, urdu."
    )

    def check(self) -> None:
        super().check()
        if self.options.comet_checkpoint:
            self.comet_checkpoint()  # a missing checkpoint or extra fails when the file is loaded, not at report

    def comet_checkpoint(self) -> CometCheckpoint:
        """options.comet_checkpoint, checked (files, local encoder, the `comet` extra), paths from the experiment."""
        from dialectbias.tasks._comet import experiment_checkpoint

        return experiment_checkpoint(self.exp, self.options.comet_checkpoint or "", self.options.comet_encoder)

    def check_entry(self, item: Item, variant: str) -> None:
        csu_variant(item, variant)

    def uses_example_pool(self) -> bool:
        return self.options.few_shot_examples == "held_out"

    def template_key(self, strategy: str) -> str:
        """`few_shot` with `options.few_shot_examples: released` → `csu/few_shot_released.j2`."""
        return "few_shot_released" if strategy == "few_shot" and not self.uses_example_pool() else strategy

    def item_context(self, item: Item, variant: str) -> dict[str, Any]:
        return {"question": csu_variant(item, variant).question, "abstention": self.options.abstention_phrases[0]}

    def example_fields(self, item: Item, variant: str) -> dict[str, Any]:
        entry = csu_variant(item, variant)
        return {"question": entry.question, "answer": entry.answer}

    def stages(self) -> list[Stage]:
        return [Stage("generate", self.generation_models(), self.generation_requests)]

    def answers(self, store: Store) -> list[dict[str, Any]]:
        """One row per answer (`_csu_score.csu_rows`), without metric columns."""
        from dialectbias.tasks.vlm._csu_score import csu_rows

        return csu_rows(self, store)

    def summary_lines(self, store: Store) -> list[str]:
        rows = self.answers(store)
        lines = []
        for model in sorted({r["model"] for r in rows}):
            mine = [r for r in rows if r["model"] == model]
            ok = [r for r in mine if r["status"] == "ok"]
            lines.append(f"{model}: {len(ok)} answers · {sum(r['exact_match'] for r in ok)} exact matches · "
                         f"{sum(r['abstained'] for r in ok)} abstained · {sum(not r['answer'] for r in ok)} empty "
                         f"· {len(mine) - len(ok)} failed requests")
        return [*lines, *self.held_out_lines(store)]

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.vlm._csu_report import write_csu_report

        return write_csu_report(self, store, out_dir)

    def export_tables(self, store: Store) -> dict[str, list[dict[str, Any]]]:
        """`csu_answers`: one row per answer with its exact match, abstention and BERTScore F1 (when an encoder
        is set), for `dialectbias export --out DIR`."""
        from dialectbias.tasks.vlm._csu_report import scored_answers

        return {"csu_answers": scored_answers(self, store)[0]}


__all__ = ["CSUOptions", "CSUTask"]
