"""QA dialect bias (SPEC §4 P3; Bengali dialect-bias paper §3.2–3.4): answer in every variant, judge
each dialect answer against the standard answer with each judge's rubric (RLAIF by default), report
model × dialect."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.config import Departure, Experiment
from dialectbias.data import STANDARD, Item, MediaError, image_part, load_image, resolve_item_image, text_part
from dialectbias.errors import ConfigError
from dialectbias.judges import (
    CheckSettings,
    Rubric,
    load_rubric,
    out_of_range_text,
    unscored_kinds,
    unscored_text,
)
from dialectbias.providers import ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage
from dialectbias.store import JudgeCounts, JudgeYield, Store, judge_counts, judge_yields, result_output
from dialectbias.tasks._base import StageYield, Task
from dialectbias.tasks._judgment_row import JudgedTask
from dialectbias.tasks._templates import render, render_file
from dialectbias.tasks.qa_bias._instructions import PAPER_MODE, InstructionMode, Instructions

if TYPE_CHECKING:
    from dialectbias.report import ReportContent

DEFAULT_RUBRIC = "rlaif"
RUBRIC_CHECKS = ("script", "refusal")  # the code checks qa_bias runs on the dialect answer


class QABiasOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    templates_dir: str | None = Field(
        default=None, description="directory of your own prompt templates overriding the package's: "
        "qa_bias/answer.j2, qa_bias/answer_<variant>.j2 (one variant only), qa_bias/judge_system.j2, "
        "qa_bias/judge_user.j2 (Jinja2; relative to the experiment file)")
    instructions: InstructionMode = Field(
        default="standard",
        description="the answer instruction: `standard` asks every variant in standard Bengali (qa_bias/answer.j2); "
        "`per_variant` (the paper's procedure, Bengali paper §3.2) asks each dialect variant with an "
        "instruction written in that dialect: <instructions_dir>/<variant>.j2, else the packaged one "
        "(Sylhet only, from the paper); a variant without one is an error")
    instructions_dir: str | None = Field(
        default=None, description="per_variant: folder of your instruction templates, <variant>.j2 each "
        "(Jinja2 with {{ question }}; optional front matter `source:` paper §X | machine (translate, "
        "model M) | user; relative to the experiment file)")
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
    zero_rule: Literal["agreement", "judge"] = Field(
        default="agreement", description="who sets a judgment's scores to 0 for a non-Bengali-script answer or a "
        "refusal: agreement (the judge with the code checks' agreement, or the code alone when the script is "
        "clearly wrong; disagreements go to review) or judge (the judge's verdict alone, the paper's rule; the "
        "code only flags)")

    #: departures from the Bengali paper (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "instructions": Departure(PAPER_MODE, "Bengali paper §3.2 (the answer instruction written in each dialect; "
                                  "its Example Prompt shows Sylhet's)", "only Sylhet's instruction is published and "
                                  "we invent none; one standard instruction also keeps the question the only "
                                  "dialect signal"),
        "zero_rule": Departure("judge", "Bengali paper §3.3 (Script Validity), App. B.2",
                               "the code checks are a second opinion: one opinion alone (a judge's slip) should "
                               "not set a score to 0; disagreements go to review (SPEC §4 P3)"),
    }


class QABiasTask(JudgedTask, Task):
    """QA dialect bias: every model answers every item in `standard` and each dialect; every judge rates each
    dialect answer against the standard answer on its rubric (default `rlaif`: five weighted Likert
    statements, score 0–10); report: model × dialect table, judge agreement, gaps with CIs, paired tests
    (Bengali dialect-bias paper §3.2–3.4). A judge entry may name `rubric:` (a packaged rubric: rlaif,
    caption, translation_fidelity; or a rubric YAML file relative to the experiment) and `template:` (a
    Jinja2 file for the judge's user prompt, given dialect, standard_question, dialect_question,
    standard_response, dialect_response, scale = the rubric's answer description, rubric). Without a
    template, a rubric other than rlaif gets a generic prompt: the rubric's scale in the system message,
    both questions and both answers in the user message. Judges on different rubrics are compared on the
    score rescaled to the primary's range, and field by field where the names match."""

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
        "`dialectbias build questions` writes standard-only items: add the dialect variants with a `translate` "
        "experiment (`dialectbias export EXP --items OUT.jsonl`) or by hand."
    )
    Options = QABiasOptions
    required_variants = (STANDARD,)
    image_fields = ("image",)

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        self.templates = experiment.resolve(self.options.templates_dir) if self.options.templates_dir else None
        instructions_dir = experiment.resolve(self.options.instructions_dir) if self.options.instructions_dir else None
        self.instructions = Instructions(self.options.instructions, instructions_dir, self.templates,
                                         self.options.instructions_dir)
        #: each judge's rubric: its `rubric:` (a packaged name or a YAML file), else RLAIF
        self.rubrics: dict[str, Rubric] = {j.id: experiment.judge_rubric(j, DEFAULT_RUBRIC) for j in experiment.judges}
        self.check_settings = CheckSettings(self.options.script, self.options.script_threshold,
                                            self.options.script_max_term_words, zero_rule=self.options.zero_rule)

    def check(self) -> None:
        super().check()
        if self.options.instructions_dir and self.options.instructions == "standard":
            raise ConfigError(f"{self.exp.where('options', 'instructions_dir')}: set, but instructions: standard "
                              "asks every variant in standard Bengali and would ignore it; set instructions: "
                              "per_variant (or drop instructions_dir)")
        if self.instructions.dir is not None and not self.instructions.dir.is_dir():
            raise ConfigError(f"{self.exp.where('options', 'instructions_dir')}: {self.instructions.dir} is not a "
                              "folder")
        for i, judge in enumerate(self.exp.judges):
            rubric = self.rubrics[judge.id]
            unsupported = [c for c in rubric.checks if c not in RUBRIC_CHECKS]
            if unsupported:
                raise ConfigError(f"{self.exp.where('judges', i, 'rubric')}: judge {judge.id!r}: rubric "
                                  f"{rubric.name!r} declares check(s) {', '.join(unsupported)}, which qa_bias does "
                                  f"not run (it runs: {', '.join(RUBRIC_CHECKS)})")

    def input_files(self) -> list[Path]:
        judge_files = [self.exp.resolve(p) for j in self.exp.judges for p in (j.rubric, j.template)
                       if p and self.exp.resolve(p).is_file()]
        return [*super().input_files(), *([self.templates] if self.templates else []), *judge_files]

    def input_identity(self) -> list[Any] | None:
        """The files' identity, plus the content hash of every instruction template (a variant's instruction
        edited: its prompts are rebuilt and re-asked)."""
        identity = super().input_identity()
        return None if identity is None else [*identity, self.instructions.identity(self.exp.base_dir)]

    def load_items(self) -> Iterator[Item]:
        """The items, each variant's instruction resolved as it is first seen (a missing one: an error naming
        the variant and the file expected, before any request is built)."""
        for item in super().load_items():
            for variant in item.variants:
                self.instructions.for_variant(variant)
            yield item

    # -- generation -------------------------------------------------------------------------

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
                instruction = self.instructions.for_variant(variant)
                template = instruction.label
                text = instruction.render(question, variant)
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
    def _judge_prompts(self, judge: ModelConfig) -> tuple[str, Callable[..., str]]:
        """(template label, render(**context) -> user prompt) of the judge: its `template:` file, else the
        RLAIF prompt for the RLAIF rubric, else the generic rubric prompt."""
        rubric = self.rubrics[judge.id]
        if judge.template:
            path = self.exp.resolve(judge.template)
            return judge.template, lambda **ctx: render_file(path, **ctx)
        name = "qa_bias/judge_user" if self._is_rlaif(rubric) else "qa_bias/judge_rubric_user"
        return name, lambda **ctx: render(name, self.templates, **ctx)

    @staticmethod
    def _is_rlaif(rubric: Rubric) -> bool:
        """The rubric asks what RLAIF asks (its weights, score rule, ceilings or checks may differ): the paper's
        prompt, so editing how a copy of RLAIF scores re-scores the stored judgments instead of re-asking."""
        return rubric.question() == load_rubric(DEFAULT_RUBRIC).question()

    def _judge_system(self, rubric: Rubric, variant: str) -> str:
        if self._is_rlaif(rubric):
            return render("qa_bias/judge_system", self.templates, dialect=variant)
        return render("qa_bias/judge_rubric_system", self.templates, dialect=variant, scale=rubric.scale_text(),
                      rubric=rubric)

    def _judge_requests(self, store: Store, judge: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        params = {"temperature": 0, "max_tokens": self.options.judge_max_tokens, **judge.params}
        rubric = self.rubrics[judge.id]
        template, render_user = self._judge_prompts(judge)
        schema, scale = rubric.json_schema(), rubric.scale_text()
        system_cache: dict[str, str] = {}
        for model in self.generation_models():
            item_answers = _generations_by_item(store, model.id)
            for item in store.iter_items():
                answers = item_answers(item.id)
                std = answers.get(STANDARD)
                for variant, question in item.variants.items():
                    if variant == STANDARD:
                        continue
                    dia = answers.get(variant)
                    if std is None or dia is None:
                        yield Skipped(f"{model.id}/{item.id}/{variant}",
                                      kind="no successful generation to judge")
                        continue
                    if variant not in system_cache:
                        system_cache[variant] = self._judge_system(rubric, variant)
                    user = render_user(dialect=variant, standard_question=item.variants[STANDARD],
                                       dialect_question=question, standard_response=std[1],
                                       dialect_response=dia[1], scale=scale, rubric=rubric)
                    yield RequestSpec(
                        stage="judge", model=judge, item_id=item.id, variant=variant,
                        template=template, params=params, json_schema=schema,
                        schema_name=rubric.schema_name, answer_rule=rubric.answer_rule(), refs=[std[0], dia[0]],
                        meta={"model_id": model.id},
                        messages=[{"role": "system", "content": system_cache[variant]},
                                  {"role": "user", "content": user}])

    def check_inputs(self, store: Store, item_id: str, variant: str, refs: Sequence[str],
                     meta: Mapping[str, Any]) -> tuple[str, CheckSettings]:
        """The code checks read the dialect answer (refs: [standard answer, dialect answer])."""
        return (result_output(store, refs[1]) if len(refs) > 1 else None) or "", self.check_settings

    def checks_key(self) -> Any:
        return asdict(self.check_settings)

    def stages(self) -> list[Stage]:
        stages = [self.generation_stage(self._generation_requests)]
        if self.exp.judges:
            stages.append(Stage("judge", self.exp.judges, self._judge_requests, finalize=self.finalize_judgment,
                                rubrics={j.id: self.rubrics[j.id].validator() for j in self.exp.judges}))
        return stages

    def compares_dialects(self) -> bool:
        return True

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Generation: successful answers; judging: scored judgments (unscored ones are unusable)."""
        out = [y for y in super().stage_yields(store) if y.stage != "judge"]
        yields = judge_yields(store)
        for judge in self.exp.judges:
            y = yields.get(judge.id, JudgeYield())
            n, scored, unscored = y.requests, y.scored, y.unscored
            kinds = f" ({unscored_kinds(unscored, y.invalid)})" if y.invalid else ""
            detail = (f"{scored} of {n} judgments scored ({unscored} unscored{kinds}: the judge's answer failed "
                      f"validation; {n - scored - unscored} with no answer)" if n
                      else "no judge requests (no successful generation pair to judge)")
            out.append(StageYield("judge", judge.id, scored, detail))
        return out

    def summary_lines(self, store: Store) -> list[str]:
        lines = []
        counts = judge_counts(store, [j.id for j in self.exp.judges])
        for judge in self.exp.judges:
            c = counts.get(judge.id, JudgeCounts())
            rubric = self.rubrics[judge.id]
            zeroed = f" · {c.zeroed} zeroed (script/refusal)" if rubric.checks else ""
            flagged = ("judge and code disagree, or script indeterminate" if rubric.checks else "")
            if rubric.ceilings:
                flagged = f"{flagged + ', or ' if flagged else ''}clipped by a ceiling"
            if rubric.answer_rule():
                flagged = f"{flagged + ', or ' if flagged else ''}clipped out of range"
            lines.append(f"judge {judge.id}: {c.judgments} judgments · {unscored_text(c.unscored, c.invalid)}"
                         f"{out_of_range_text(c.out_of_range)}{zeroed} · {c.flagged} flagged"
                         f"{f' ({flagged})' if flagged else ''} · {c.needs_review} for human review")
        return lines

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.qa_bias._report import write_qa_report

        return write_qa_report(self, store, out_dir)


def _generations_by_item(store: Store, model_id: str) -> Callable[[str], dict[str, tuple[str, str]]]:
    """A reader of the model's successful generations one item at a time: called with item ids in ascending
    order (`Store.iter_items`' order), it returns each item's variant -> (request id, output). One stream
    over the results sorted the same way, so only one item's answers are held (memory stays flat as the
    study grows, issue 23 item 3)."""
    rows = store.stage_results("generate", model_id, ordered=True)
    ahead: list[Any] = []

    def answers(item_id: str) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        while True:
            row = ahead.pop() if ahead else next(rows, None)
            if row is None:
                return found
            if row.item_id > item_id:
                ahead.append(row)  # a later item's: kept for its call
                return found
            if row.item_id == item_id:
                found[row.variant] = (row.request_id, row.output or "")

    return answers
