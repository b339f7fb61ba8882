"""QA dialect bias (SPEC §4 P3; Bengali dialect-bias paper §3.2–3.4): answer in every variant, judge
each dialect answer against the standard answer with the RLAIF rubric, report model × dialect."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.config import Experiment
from dialectbias.data import Item, MediaError, image_part, load_image, resolve_item_image, text_part
from dialectbias.judges import ZEROED_PREFIX, RlaifJudgment, rlaif_json_schema, script_refusal_verdict
from dialectbias.providers import ModelConfig
from dialectbias.run._specs import RequestSpec
from dialectbias.run._stage import Outcome, Skipped, Stage, Write
from dialectbias.store import Store, dumps
from dialectbias.tasks._base import StageYield, Task
from dialectbias.tasks._templates import render, template_exists
from dialectbias.text import check_script, detect_refusal

STANDARD = "standard"
RUBRIC = "rlaif_v1"


class QABiasOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    templates_dir: str | None = Field(
        default=None, description="directory of your own prompt templates overriding the package's: "
        "qa_bias/answer.j2, qa_bias/answer_<variant>.j2 (one variant only), qa_bias/judge_system.j2, "
        "qa_bias/judge_user.j2 (Jinja2; relative to the experiment file)")
    script: str = Field(default="bengali", description="script the answers must be written in (checked by code "
                        "beside the judge; see script_threshold)")
    script_threshold: float = Field(
        default=0.6, ge=0.0, le=1.0,
        description="script check: minimum share of the answer's letters outside embedded English terms "
                    "that must be in `script`")
    script_max_term_words: int = Field(
        default=4, ge=0,
        description="script check: longest run of Latin words tolerated as one embedded term or proper noun "
                    "(0: no tolerance)")
    max_tokens: int = Field(default=512, ge=1, description="answer length limit (tokens) of the models")
    judge_max_tokens: int = Field(default=1024, ge=1, description="judgment length limit (tokens) of the judges")
    agreement_ccc_min: float = Field(default=0.80, ge=-1.0, le=1.0,
                                     description="judge agreement (the paper's Table 5) passes when Lin's CCC "
                                     "with the primary judge is ≥ this")
    agreement_cbs_min: float = Field(default=0.75, ge=0.0, le=1.0,
                                     description="… and the critical bias sensitivity (CBS) is ≥ this")
    cbs_threshold: float = Field(default=4.0, description="CBS critical set: the answers the primary judge "
                                 "scores below this")
    agreement_min_pairs: int = Field(default=3, ge=2,
                                     description="CCC, CBS, kappa and alpha over fewer pairs are undefined "
                                     "(empty cell, never PASS)")
    n_resamples: int = Field(default=10_000, ge=1, description="bootstrap resamples for the gap CIs")


class QABiasTask(Task):
    """QA dialect bias: every model answers every item in `standard` and each dialect; every judge rates each
    dialect answer against the standard answer (RLAIF score 0–10); report: model × dialect table, judge
    agreement, gaps with CIs, paired tests (Bengali dialect-bias paper §3.2–3.4)."""

    name = "qa_bias"
    item_format = (
        "`data:` items, one JSON object per line (.jsonl; or .csv with columns id, domain, question_type, "
        "variants.standard, variants.<dialect> …; or .parquet; or hf://org/name?split=test):\n"
        '{"id": "q001", "domain": "Technology", "question_type": "definitional", '
        '"variants": {"standard": "…", "chittagong": "…", "sylhet": "…"}}\n'
        "Required: id and variants.standard; every other variant (a registered dialect name, or one added "
        "under `dialects:`) is answered and judged against the standard answer. Optional: domain, "
        "question_type (report breakdowns), gold, "
        "validated_by ({variant: annotator}), image (a PNG, JPEG, GIF or WebP file, its path relative to the "
        "data file's folder, e.g. \"images/q001.png\", or an http(s) URL: the models get it before the "
        "question in every variant; the judges see the text only; a path leading out of the data folder "
        "is an error, an item whose image is missing or unreadable is skipped and counted); other fields "
        "are kept as item metadata. "
        "`dialectbias build questions` writes standard-only items: add the dialect variants by hand "
        "(a translation pipeline is planned)."
    )
    Options = QABiasOptions
    required_variants = (STANDARD,)
    image_fields = ("image",)

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.templates = experiment.resolve(self.options.templates_dir) if self.options.templates_dir else None
        self._answer_templates: dict[str, str] = {}

    def input_files(self) -> list[Path]:
        return [*super().input_files(), *([self.templates] if self.templates else [])]

    # -- generation -------------------------------------------------------------------------
    def _answer_template(self, variant: str) -> str:
        if variant not in self._answer_templates:
            name = f"qa_bias/answer_{variant}"
            self._answer_templates[variant] = name if template_exists(name, self.templates) else "qa_bias/answer"
        return self._answer_templates[variant]

    def _generation_requests(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = {"temperature": 0, "max_tokens": self.options.max_tokens, **model.params}
        for item in store.iter_items():
            image = None
            if item.metadata.get("image") is not None:
                try:
                    image = self._image(item)
                except MediaError as exc:
                    for variant in item.variants:
                        yield Skipped(f"{exc} (variant {variant!r})",
                                      kind="image missing or unreadable")
                    continue
            for variant, question in item.variants.items():
                if not isinstance(question, str) or not question.strip():
                    yield Skipped(f"item {item.id!r} variant {variant!r}: empty text")
                    continue
                template = self._answer_template(variant)
                text = render(template, self.templates, question=question, variant=variant)
                content: Any = text if image is None else [image_part(image), text_part(text)]
                yield RequestSpec(stage="generate", model=model, item_id=item.id, variant=variant,
                                  template=template, messages=[{"role": "user", "content": content}],
                                  params=params)

    def _image(self, item: Item) -> bytes:
        """The bytes of the item's image (`image`: under the data file's folder, or an http(s) URL)."""
        assert self.exp.data is not None
        data_dir = None if self.exp.data.startswith("hf://") else self.exp.resolve(self.exp.data).parent
        ref = item.metadata["image"]
        path = resolve_item_image(ref, data_dir, str(self.exp.data), item.id)
        return load_image(path, f"item {item.id!r}: image {ref!r}")[0]

    # -- judging ----------------------------------------------------------------------------
    def _judge_requests(self, store: Store, judge: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = {"temperature": 0, "max_tokens": self.options.judge_max_tokens, **judge.params}
        system_cache: dict[str, str] = {}
        for model in self.exp.models:
            answers = _generations(store, model.id)
            for item in store.iter_items():
                std = answers.get((item.id, STANDARD))
                for variant, question in item.variants.items():
                    if variant == STANDARD:
                        continue
                    dia = answers.get((item.id, variant))
                    if std is None or dia is None:
                        yield Skipped(f"{model.id}/{item.id}/{variant}",
                                      kind="no successful generation to judge")
                        continue
                    if variant not in system_cache:
                        system_cache[variant] = render("qa_bias/judge_system", self.templates, dialect=variant)
                    user = render("qa_bias/judge_user", self.templates, dialect=variant,
                                  standard_question=item.variants[STANDARD], dialect_question=question,
                                  standard_response=std[1], dialect_response=dia[1])
                    yield RequestSpec(
                        stage="judge", model=judge, item_id=item.id, variant=variant,
                        template="qa_bias/judge_user", params=params, json_schema=rlaif_json_schema(),
                        schema_name="rlaif_judgment", refs=[std[0], dia[0]], meta={"model_id": model.id},
                        messages=[{"role": "system", "content": system_cache[variant]},
                                  {"role": "user", "content": user}])

    def _finalize_judgment(self, store: Store, row: sqlite3.Row, outcome: Outcome) -> list[Write]:
        meta, refs = json.loads(row["meta"]), json.loads(row["refs"])
        dialect_answer = store.query("SELECT output FROM results WHERE request_id=?", (refs[1],))[0][0] or ""
        verdict = check_script(dialect_answer, self.options.script, threshold=self.options.script_threshold,
                               max_term_words=self.options.script_max_term_words)
        refusal_code = detect_refusal(dialect_answer)
        parsed = outcome.parsed
        record: dict[str, Any] = {
            "request_id": row["request_id"], "judge_id": row["model_id"], "model_id": meta["model_id"],
            "item_id": row["item_id"], "variant": row["variant"], "rubric": RUBRIC,
            "raw_output": outcome.output, "source_request_id": outcome.source_request_id,
            "script_ok_code": None if verdict.ok is None else int(verdict.ok), "script_share": verdict.share,
            "refusal": refusal_code, "parse_status": parsed.status if parsed else "failed",
            "parsed": None, "score": None, "confidence": None, "script_ok_judge": None,
            "needs_review": 1, "flagged": 0, "reason": parsed.error if parsed else "no rubric"}
        if parsed is not None and parsed.value is not None:
            judgment: RlaifJudgment = parsed.value
            decision = script_refusal_verdict(judgment.script_valid, judgment.refusal, verdict, refusal_code)
            record.update(
                parsed=dumps(judgment.model_dump()), score=decision.score(judgment.likert()),
                confidence=judgment.confidence, script_ok_judge=int(judgment.script_valid),
                flagged=int(decision.flagged),
                needs_review=int(decision.flagged or judgment.confidence <= self.exp.review.confidence_threshold),
                reason=decision.reason)
        return [("judgments", record)]

    def stages(self) -> list[Stage]:
        stages = [Stage("generate", self.exp.models, self._generation_requests)]
        if self.exp.judges:
            stages.append(Stage("judge", self.exp.judges, self._judge_requests, rubric=RlaifJudgment,
                                finalize=self._finalize_judgment))
        return stages

    def compares_dialects(self) -> bool:
        return True

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Generation: successful answers; judging: scored judgments (unscored ones are unusable)."""
        out = [y for y in super().stage_yields(store) if y.stage != "judge"]
        counts = {r[0]: (r[1], r[2], r[3]) for r in store.query(
            "SELECT r.model_id, count(*), coalesce(sum(j.score IS NOT NULL), 0), "
            "coalesce(sum(j.request_id IS NOT NULL AND j.score IS NULL), 0) FROM current_requests cr "
            "JOIN requests r ON r.request_id = cr.request_id LEFT JOIN judgments j ON j.request_id = r.request_id "
            "WHERE r.stage = 'judge' GROUP BY r.model_id")}
        for judge in self.exp.judges:
            n, scored, unscored = counts.get(judge.id, (0, 0, 0))
            detail = (f"{scored} of {n} judgments scored ({unscored} unscored: the judge's answer failed "
                      f"validation; {n - scored - unscored} with no answer)" if n
                      else "no judge requests (no successful generation pair to judge)")
            out.append(StageYield("judge", judge.id, scored, detail))
        return out

    def summary_lines(self, store: Store) -> list[str]:
        lines = []
        for judge in self.exp.judges:
            n, unscored, zeroed, flagged, review = store.query(
                "SELECT count(*), coalesce(sum(parse_status='failed'), 0), "
                "coalesce(sum(parse_status!='failed' AND substr(reason, 1, ?)=?), 0), coalesce(sum(flagged), 0), "
                "coalesce(sum(needs_review), 0) "
                "FROM judgments WHERE judge_id=? AND rowid IN (SELECT MAX(j.rowid) FROM judgments j "
                "JOIN current_requests c ON c.request_id = j.request_id "
                "GROUP BY j.judge_id, j.model_id, j.item_id, j.variant)",
                (len(ZEROED_PREFIX), ZEROED_PREFIX, judge.id))[0]
            lines.append(f"judge {judge.id}: {n} judgments · {unscored} unscored (parse failed) · {zeroed} zeroed "
                         f"(script/refusal) · {flagged} flagged (judge and code disagree, or script indeterminate) "
                         f"· {review} for human review")
        return lines

    def report(self, store: Store, out_dir: Path) -> dict[str, Any]:
        from dialectbias.tasks._qa_report import write_qa_report

        return write_qa_report(self, store, out_dir)


def _generations(store: Store, model_id: str) -> dict[tuple[str, str], tuple[str, str]]:
    """(item, variant) -> (request id, output) of the model's successful generations."""
    return {(r.item_id, r.variant): (r.request_id, r.output or "") for r in store.stage_results("generate", model_id)}
