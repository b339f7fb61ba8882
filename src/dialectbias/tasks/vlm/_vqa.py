"""Visual question answering across languages and dialects (SPEC §4 P5; BanglaVerse §3.5, §4, §5).

Every model answers every item's multiple-choice question about its image in each variant (standard
Bengali, English, Hindi, Urdu, dialects) with each prompting strategy (zero-shot, few-shot, CoT). The
answer is parsed in code (`tasks/vlm/_parse.py`: the rule that decided is recorded per answer) and the
report gives accuracy per model × variant × domain × strategy with Wald CIs, Table 3 deltas vs standard
Bengali, the paired t-test of standard vs the dialect mean, domain difficulty and the strategy comparison.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from dialectbias.data import Item
from dialectbias.run import Stage
from dialectbias.store import Store
from dialectbias.tasks.vlm._items import vqa_variant
from dialectbias.tasks.vlm._parse import FUZZY_CUTOFF
from dialectbias.tasks.vlm._prompts import options_text
from dialectbias.tasks.vlm._task import VLMOptions, VLMTask

if TYPE_CHECKING:
    from dialectbias.report import ReportContent


class VQAOptions(VLMOptions):
    vqa_parse: Literal["text_wins", "index_first"] = Field(
        default="text_wins", description="when the index and the quoted answer text name different options: "
        "text_wins (the text decides, as the released Gemma/Qwen scripts) or index_first (the index decides, as "
        "the released Gemini/Llama scripts)")
    fuzzy_cutoff: float = Field(default=FUZZY_CUTOFF, ge=0.0, le=1.0,
                                description="answer text → option: fuzzy match (difflib ratio) at or above this")
    exclude_unanswerable: bool = Field(
        default=False, description="leave out items whose answer is not among their options (kept by default: "
        "they stay in n and are never correct, as in the released BanglaVerse scorer)")
    paired_min_conditions: int = Field(default=2, ge=2, description="paired t-test: at least this many "
                                       "(model × domain) conditions")
    caption_scores: str | None = Field(
        default=None, description="a caption report's caption_scores.csv (relative to the experiment file): "
        "adds the caption term to the domain difficulty f(d)")


class VQATask(VLMTask):
    """VQA: multiple-choice questions about an image, in every variant and prompting strategy; accuracy per
    model × variant × domain × strategy (BanglaVerse)."""

    name = "vqa"
    entry_key = "question"
    Options = VQAOptions
    item_format = (
        "`data:` a JSONL file, one item per line:\n"
        '{"id": "culture_114", "domain": "culture", "image": "images/culture_114.jpg", "variants": '
        '{"standard": {"question": "…", "options": ["…", "…", "…", "…"], "answer_index": 1}, "sylhet": {…}}}\n'
        "(`answer`: the option text, instead of `answer_index`; `is_human_validated`: false for machine "
        "variants; `image`: a path relative to the data file's folder or an http(s) URL, absent when only "
        "imported answers are scored; `split: few_shot` marks the few-shot pool). Or a folder in the "
        "BanglaVerse layout: <domain>/annotations/<domain>_qa_pairs.json and <domain>/images/<image id>.*. "
        "Variants: standard (Bengali), a Bengali dialect, english, hindi, urdu."
    )

    def check_entry(self, item: Item, variant: str) -> None:
        vqa_variant(item, variant)

    def item_context(self, item: Item, variant: str) -> dict[str, Any]:
        entry = vqa_variant(item, variant)
        return {"question": entry.question, "options": options_text(entry.options)}

    def example_fields(self, item: Item, variant: str) -> dict[str, Any] | None:
        """None when the example's answer is not among its options in this variant: it has nothing to show."""
        entry = vqa_variant(item, variant)
        if entry.gold is None:
            return None
        return {"question": entry.question, "options": options_text(entry.options), "index": entry.gold,
                "answer": entry.options[entry.gold]}

    def stages(self) -> list[Stage]:
        return [Stage("generate", self.generation_models(), self.generation_requests)]

    def answers(self, store: Store) -> list[dict[str, Any]]:
        from dialectbias.tasks.vlm._score import vqa_rows

        return vqa_rows(self, store)

    def summary_lines(self, store: Store) -> list[str]:
        from dialectbias.tasks.vlm._score import vqa_summary

        return [*vqa_summary(self.answers(store)), *self.held_out_lines(store)]

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.vlm._report import write_vqa_report

        return write_vqa_report(self, store, out_dir)


__all__ = ["VQAOptions", "VQATask"]
