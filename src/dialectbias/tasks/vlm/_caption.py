"""Image captioning across languages and dialects (SPEC §4 P5; BanglaVerse §3.5, §4.3, App. E).

Every model captions every item's image in each variant's language (zero-shot, few-shot); captions are
scored by BERTScore F1 against the reference (an explicit local encoder, `options.bertscore_model`) and by
any number of LLM caption judges (the packaged `caption` rubric: relevance, clarity, conciseness,
creativity, overall in [0, 1] and an explanation; the score is the judge's own Overall, as in the paper),
optionally shown the image. Captions not written in the variant's script are counted per model × variant
(language-constraint violations, App. H.1).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from dialectbias.config import Departure, Experiment
from dialectbias.data import Item, MediaError, image_part, text_part
from dialectbias.errors import DataError
from dialectbias.judges import CheckSettings, Rubric
from dialectbias.metrics import BleuLevel, BleuTokenize, CharUnits
from dialectbias.providers import ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage, StageYield
from dialectbias.store import Store, result_output
from dialectbias.tasks._judgment_row import JudgedTask, judge_stage_yields, judge_summary_lines
from dialectbias.tasks._templates import render
from dialectbias.tasks.vlm._items import caption_reference
from dialectbias.tasks.vlm._parse import clean_caption
from dialectbias.tasks.vlm._prompts import language_context
from dialectbias.tasks.vlm._task import VLMOptions, VLMTask

if TYPE_CHECKING:
    from dialectbias.report import ReportContent
    from dialectbias.review import Panel
    from dialectbias.store import JudgmentRecord

DEFAULT_RUBRIC = "caption"


class CaptionOptions(VLMOptions):
    judge_sees_image: bool = Field(default=False, description="attach the image to the judge's prompt (the "
                                   "paper's judge saw only the reference caption)")
    judge_max_tokens: int = Field(default=1024, ge=1, description="judgment length limit (tokens)")
    bertscore_model: str | None = Field(
        default=None, description="local encoder folder for BERTScore F1 against the reference (e.g. a "
        "bert-base-multilingual-cased snapshot; relative to the experiment file); none: no BERTScore column")
    bertscore_layers: int | None = Field(default=None, ge=1, description="the encoder layer BERTScore compares "
                                         "(default: the last; 9 for bert-base-multilingual-cased)")
    bertscore_baseline: str | None = Field(
        default=None, description="a bert-score baseline file for the encoder and language (CSV LAYER,P,R,F, e.g. "
        "bert_score/rescale_baseline/bn/bert-base-multilingual-cased.tsv; relative to the experiment file)")
    bertscore_rescale: Literal["never", "if_available", "always"] = Field(
        default="never", description="rescale BERTScore F1 with the baseline, (F − b) / (1 − b): never (raw "
        "scores), if_available (rescaled when bertscore_baseline is given, else raw: the released script's "
        "try-then-fall-back) or always (bertscore_baseline required)")
    paired_min_conditions: int = Field(default=2, ge=2, description="paired t-test: at least this many "
                                       "(model × domain) conditions")
    vqa_accuracy: str | None = Field(
        default=None, description="a vqa report's vqa_accuracy.csv (relative to the experiment file): adds the "
        "VQA term to the domain difficulty f(d)")
    bleu_level: BleuLevel = Field(
        default="corpus", description="caption BLEU per group: corpus (sacrebleu corpus_bleu, as the released "
        "BanglaVerse scorer) or sentence (the mean of sentence BLEUs)")
    bleu_tokenize: BleuTokenize = Field(
        default="13a", description="sacrebleu tokenizer of caption BLEU: 13a (the released scorer's; splits ASCII "
        "punctuation only, so the danda stays on its word), intl (Unicode punctuation too), char, none")
    rouge_l_units: CharUnits = Field(
        default="code_points", description="what character-level ROUGE-L compares: code_points (the released "
        "scorer's Python strings) or graphemes (extended grapheme clusters: a letter with its vowel signs)")
    lexical_empty: Literal["skip", "zero"] = Field(
        default="skip", description="captions empty after cleaning in BLEU and ROUGE-L: skip (the released "
        "scorer; counted: n − bleu_n) or zero (scored against the reference as an empty caption)")
    lexical_nfc_reference: bool = Field(
        default=True, description="NFC-normalise the reference before BLEU and ROUGE-L, as captions are (the "
        "released scorer compares the reference as stored; false reproduces it)")


    #: departures from BanglaVerse's released code (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "bertscore_rescale": Departure("if_available", "PROCEDURES.md §2 (captions: rescale_with_baseline=True, "
                                       "raw scores when that fails)", "whether a paper number is rescaled cannot "
                                       "be told; raw scores compare with raw scores"),
        "lexical_nfc_reference": Departure(False, "PROCEDURES.md §2 (caption BLEU / ROUGE-L: the reference as "
                                           "stored)", "41 of the 1,152 references are not NFC (e.g. a precomposed "
                                           "য়) and would mismatch NFC captions letter for letter"),
    }

    @model_validator(mode="after")
    def _baseline_given(self) -> CaptionOptions:
        if self.bertscore_rescale == "always" and not self.bertscore_baseline:
            raise ValueError("bertscore_rescale: always needs options.bertscore_baseline (a bert-score baseline "
                             "file); or use if_available")
        return self


class CaptionTask(JudgedTask, VLMTask):
    """Captioning: one sentence about the image in each variant's language; BERTScore F1 and LLM caption
    judges, judge correlation per variant, language-constraint violations (BanglaVerse)."""

    name = "caption"
    entry_key = "caption"
    Options = CaptionOptions
    item_format = (
        "`data:` a JSONL file, one item per line:\n"
        '{"id": "culture_114", "domain": "culture", "image": "images/culture_114.jpg", "variants": '
        '{"standard": {"caption": "…"}, "english": {"caption": "…"}}}\n'
        "(a variant may also hold the caption as a plain string, or a whole vqa entry plus `caption`; "
        "`is_human_validated`: false for machine variants; `image`: a path relative to the data file's folder "
        "or an http(s) URL; `split: few_shot` marks the few-shot pool). Or a folder in the BanglaVerse layout: "
        "<domain>/annotations/<domain>_captions.json (image_id, food_id or any *_id key) and "
        "<domain>/images/<image id>.*. Judges use the `caption` rubric unless they name another."
    )

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.rubrics: dict[str, Rubric] = {j.id: experiment.judge_rubric(j, DEFAULT_RUBRIC) for j in experiment.judges}

    def allowed_strategies(self) -> tuple[str, ...]:
        return ("zero_shot", "few_shot")

    def images_needed(self) -> bool:
        """Also when a judge is shown the image (`options.judge_sees_image`)."""
        return super().images_needed() or (self.options.judge_sees_image and bool(self.exp.judges))

    def check_entry(self, item: Item, variant: str) -> None:
        caption_reference(item, variant)

    def example_fields(self, item: Item, variant: str) -> dict[str, Any]:
        return {"caption": caption_reference(item, variant)[0]}

    def input_files(self) -> list[Path]:
        extra = [self.exp.resolve(j.rubric) for j in self.exp.judges
                 if j.rubric and self.exp.resolve(j.rubric).is_file()]
        return [*super().input_files(), *extra]

    # -- judging ----------------------------------------------------------------------------------------
    def _judge_requests(self, store: Store, judge: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = {"temperature": 0, "max_tokens": self.options.judge_max_tokens, **judge.params}
        rubric = self.rubrics[judge.id]
        items = {i.id: i for i in store.iter_items()}
        systems: dict[str, str] = {}
        for model in self.generation_models():
            for row in store.stage_results("generate", model.id, ok_only=False):
                item = items.get(row.item_id)
                if row.status != "ok" or item is None:
                    yield Skipped(f"{model.id}/{row.item_id}/{row.variant}", kind="no successful caption to judge")
                    continue
                reference = caption_reference(item, row.variant)[0]
                generated = clean_caption(row.output or "")
                lang = language_context(self.language(row.variant))
                if row.variant not in systems:
                    systems[row.variant] = render("caption/judge_system", self.templates, scale=rubric.scale_text(),
                                                  rubric=rubric, **lang)
                with_image = self.options.judge_sees_image
                user = render("caption/judge_user", self.templates, with_image=with_image, **lang,
                              reference=json.dumps(reference, ensure_ascii=False),
                              generated=json.dumps(generated, ensure_ascii=False))
                content: Any = user
                if with_image:
                    try:
                        image = self.image(item)
                    except (MediaError, DataError) as exc:
                        yield Skipped(str(exc), kind="image missing or unreadable")
                        continue
                    content = [image_part(image), text_part(user)] if image is not None else user
                yield RequestSpec(
                    stage="judge", model=judge, item_id=row.item_id, variant=row.variant, template="caption/judge",
                    params=params, json_schema=rubric.json_schema(), schema_name=rubric.schema_name,
                    answer_rule=rubric.answer_rule(), refs=[row.request_id],
                    meta={"model_id": model.id, "strategy": row.meta.get("strategy")},
                    messages=[{"role": "system", "content": systems[row.variant]},
                              {"role": "user", "content": content}])

    def check_inputs(self, store: Store, item_id: str, variant: str, refs: Sequence[str],
                     meta: Mapping[str, Any]) -> tuple[str, CheckSettings]:
        """A rubric of your own may ask for the script/refusal checks on the caption (refs: [the caption])."""
        caption = clean_caption((result_output(store, refs[0]) if refs else None) or "")
        return caption, CheckSettings(script=self.language(variant).script)

    def judgment_panels(self, store: Store, record: JudgmentRecord) -> list[Panel]:
        """What a caption judgment is about, for the review queues: the reference and the generated caption
        (the caption as the judge saw it)."""
        from dialectbias.review import Panel

        item = store.item(record.item_id)
        try:
            reference = caption_reference(item, record.variant)[0] if item is not None else ""
        except DataError:
            reference = ""
        caption = clean_caption((record.ref_outputs[0] if record.ref_outputs else None) or "")
        return [Panel(label=f"reference caption ({record.variant})", text=reference, variant=record.variant,
                      role="reference", name="reference_caption"),
                Panel(label=f"caption by {record.model_id}", text=caption, variant=record.variant, role="candidate",
                      name="generated_caption")]

    def stages(self) -> list[Stage]:
        stages = [Stage("generate", self.generation_models(), self.generation_requests)]
        if self.exp.judges:
            stages.append(Stage("judge", self.exp.judges, self._judge_requests, finalize=self.finalize_judgment,
                                rubrics={j.id: self.rubrics[j.id].validator() for j in self.exp.judges}))
        return stages

    def stage_yields(self, store: Store) -> list[StageYield]:
        return [*(y for y in super().stage_yields(store) if y.stage != "judge"),
                *judge_stage_yields(store, self.exp.judges)]

    def captions(self, store: Store) -> list[dict[str, Any]]:
        from dialectbias.tasks.vlm._score import caption_rows

        return caption_rows(self, store)

    def summary_lines(self, store: Store) -> list[str]:
        from dialectbias.tasks.vlm._score import caption_summary

        return [*caption_summary(self.captions(store)), *self.held_out_lines(store),
                *judge_summary_lines(store, self.exp.judges)]

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.vlm._report import write_caption_report

        return write_caption_report(self, store, out_dir)


__all__ = ["CaptionOptions", "CaptionTask"]
