"""The RAG dialect translator (SPEC §4 P1; Bengali dialect-bias paper §3.1): every item's source variant ×
every target → the k most similar standard/dialect pairs of the hybrid index as few-shot examples → the
`translator` role's model → post-processing → a new variant, exported as an items file any task reads.

Targets can also be other languages (English, Hindi, Urdu: SPEC P1 Multilingual expansion, BanglaVerse):
they, and dialect targets without an index, get a plain translation prompt that preserves named entities.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from dialectbias.config import Departure, Experiment
from dialectbias.data import STANDARD, Item, known_variants, unknown_variant_message
from dialectbias.errors import ConfigError, DataError
from dialectbias.providers import ModelConfig
from dialectbias.run import RequestSpec, Skipped, Stage
from dialectbias.store import Store
from dialectbias.tasks._base import StageYield, Task
from dialectbias.tasks.translate._fields import VariantPlan, plan_variant
from dialectbias.tasks.translate._post import CleanContext, numbered
from dialectbias.tasks.translate._prompt import (
    INSTRUCTION_TEMPLATE,
    Retriever,
    Target,
    index_dir_for,
    instruction_check,
    instruction_request,
    render_prompt,
    resolve_target,
    shows_transcripts,
    source_language,
    template_name,
)
from dialectbias.tasks.translate._results import (
    STAGE,
    Translation,
    TranslationCounts,
    check_dialects,
    count_translations,
    dialect_id_lines,
    failure_text,
    load_identifier,
    read_translations,
)
from dialectbias.text import LANGUAGE_SCRIPTS, SCRIPT_RANGES

if TYPE_CHECKING:
    from dialectbias.report import ReportContent
    from dialectbias.review import Translation as ReviewTranslation
    from dialectbias.tasks._items_file import ItemsExport

ROLE = "translator"
#: items whose retrieval queries are embedded in one batch
QUERY_BATCH = 256
#: dialect-only transcripts per prompt when options.transcript_k is not set and the index holds some
DEFAULT_TRANSCRIPT_K = 3


def _query(texts: tuple[str, ...]) -> str:
    """The retrieval query of a field group (a list's elements, one per line)."""
    return "\n".join(texts)


class TranslateOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    targets: list[str] = Field(min_length=1, description="variants to write: registered dialects (sylhet, "
                               "chittagong, bavarian …, or ones added under `dialects:`) and/or languages "
                               "(english, hindi, urdu)")
    source: str = Field(default=STANDARD, description="the variant translated from")
    fields: list[str] | None = Field(
        default=None, description="for object variants (VQA items): the keys to translate; default every string "
        "and every list of strings (other values are copied; a string equal to an element of a translated list, "
        "e.g. a VQA `answer`, takes that element's translation)")
    corpus: str | None = Field(default=None, description="corpus YAML whose index `dialectbias index build "
                               "CORPUS` built (stored next to it): few-shot examples for dialect targets; "
                               "without corpus or index the prompt is zero-shot")
    index: str | None = Field(default=None, description="index folder built with `dialectbias index build "
                              "--out DIR` (instead of corpus; checked against the corpus it was built from, while "
                              "that file is still there)")
    rebuild_index: bool = Field(default=False, description="when the corpus changed since the index was built "
                                "(its YAML, or a data file's content), rebuild the index with the options it was "
                                "built with instead of stopping with an error; the run summary says so")
    k: int = Field(default=5, ge=1, le=50, description="retrieved examples per prompt")
    transcript_k: int | None = Field(
        default=None, ge=0, le=20, description="dialect-only transcripts (the corpus's `transcripts:`) shown per "
        f"prompt as style context, apart from the k pairs; default {DEFAULT_TRANSCRIPT_K} when the index holds "
        "transcripts, else 0; 0 turns them off (the Bengali paper's Pipeline 2 alone)")
    dialect_id: str | None = Field(default=None, description="folder of a model from `dialectbias train-dialect-id` "
                                   "(relative to the experiment file): flags translations into a dialect that read "
                                   "as another dialect or as standard (a flag: flagged variants are still exported)")
    dialect_id_min_probability: float = Field(default=0.5, ge=0.0, le=1.0, description="dialect_id: a wrong label "
                                           "below this probability is `uncertain`, not `other_dialect`/`standard`")
    source_language: str | None = Field(
        default=None, description="language code of the source text (bn, de); default: that of the first "
        "dialect target, else bn")
    scripts: dict[str, str] = Field(
        default_factory=dict, description="target -> script its text must be in (bengali, latin, devanagari, "
        "arabic …); default from the target's language (a dialect's from the registry or `dialects:`): "
        + ", ".join(f"{k} {v}" for k, v in LANGUAGE_SCRIPTS.items()) + "; none known: not checked")
    script_threshold: float = Field(default=0.6, ge=0.0, le=1.0,
                                    description="minimum share of a translation's letters in the target's script")
    accept_unchanged: bool = Field(default=False, description="accept a translation identical to the source "
                                   "text (default: counted as failed, `echo`)")
    retranslate_existing: bool = Field(
        default=False, description="also translate items that already have the target variant (e.g. to "
        "compare with a human reference); the export keeps the item's own variant either way")
    templates_dir: str | None = Field(
        default=None, description="directory of your own templates overriding the package's: "
        "translate/<target>.j2 (one target), translate/dialect_<language code>.j2 (e.g. dialect_bn.j2), "
        "translate/dialect.j2, translate/language.j2 (Jinja2; relative to the experiment file)")
    max_tokens: int = Field(default=512, ge=1, description="translation length limit (tokens)")
    prompt: Literal["rag", "instruction"] = Field(
        default="rag", description="rag: the few-shot chat prompt above; instruction: exactly the training "
        "instruction of `dialectbias train-translator` (a LoRA adapter: docs/lora.md), cut at a new line")
    cross_dialect_candidates: bool = Field(
        default=False, description="retrieval: pool candidates from every dialect and let the target-dialect "
        "bonus rank them (the paper's blended scoring, §3.1.2); default: the target dialect's pairs only, others "
        "filling in when it has fewer than k")
    short_tag_in_bm25: bool = Field(
        default=False, description="retrieval: append the [[SHORT]] tag to a short query's BM25 tokens, as the "
        "paper's tagged query (§3.1.2); default: the tag only switches the weights and widens the pool")

    #: departures from the Bengali paper (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "transcript_k": Departure(0, "Bengali paper §3.1 (the benchmark used Pipeline 2, parallel pairs only)",
                                  "a corpus given `transcripts:` wants them shown; a pairs-only corpus is "
                                  "unchanged"),
        "cross_dialect_candidates": Departure(True, "Bengali paper §3.1.2 (blended score with a target-district "
                                              "bonus)", "another dialect's example can outrank the target's on "
                                              "similarity alone and teach the wrong dialect"),
        "short_tag_in_bm25": Departure(True, "Bengali paper §3.1.2 (queries \"appended with a [[SHORT]] tag\")",
                                       "the tag is a token no pair holds: appended, it changes no BM25 score on "
                                       "Bengali data, so we keep queries clean"),
    }


class TranslateTask(Task):
    """RAG translation of items into dialects (and languages): the `translator` role's model translates each
    item's source variant (every string field and list of strings; lists stay aligned) into every target,
    shown the k most similar standard/dialect pairs of the hybrid index; answers are post-processed
    (quotes, labels, explanations and echoes stripped; empty, wrong-script, echoed or misaligned answers
    are failures, never variants); `dialectbias export EXP --items OUT.jsonl` writes the items with the new
    variants (`is_human_validated: false`), ready for qa_bias, association or vqa."""

    name = "translate"
    item_format = (
        "`data:` items of any task (.jsonl, .csv, .parquet or hf://): `id` and the source variant "
        "(`options.source`, default standard): a string (qa_bias: {\"id\": \"q1\", \"variants\": {\"standard\": "
        "\"…\"}}) or an object (vqa: {\"id\": \"food_1\", \"image\": \"images/food_1.jpg\", \"variants\": "
        "{\"standard\": {\"question\": \"…\", \"options\": [\"…\", \"…\", \"…\", \"…\"], \"answer_index\": 1, "
        "\"caption\": \"…\"}}}); every other field is kept and exported as is. Items that already have a target "
        "variant keep it (not translated unless options.retranslate_existing)."
    )
    Options = TranslateOptions
    required_roles = (ROLE,)
    uses_models = False
    no_imports = ("translations made elsewhere are item variants: add them to the items file (marked "
                  "\"is_human_validated\": {variant: false}), or score them as a translation_quality system")

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        o = self.options
        self.templates = experiment.resolve(o.templates_dir) if o.templates_dir else None
        self.source = o.source.lower()
        self._language = source_language(o.targets, experiment.dialects, o.source_language)
        self.index_dir = index_dir_for(experiment.resolve(o.corpus) if o.corpus else None,
                                       experiment.resolve(o.index) if o.index else None)
        self.retriever = Retriever(self.index_dir, experiment.resolve(o.corpus) if o.corpus else None,
                                   {"dialect_filter": not o.cross_dialect_candidates,
                                    "short_tag_in_query": o.short_tag_in_bm25}) \
            if self.index_dir is not None else None
        self._targets: dict[str, Target] | None = None
        self._identifier: Any = None
        self._transcript_k: int | None = None

    # -- configuration ----------------------------------------------------------------------
    @property
    def targets(self) -> dict[str, Target]:
        if self._targets is None:
            self._targets = {t.lower(): resolve_target(t, extra=self.exp.dialects, source_language=self._language,
                                                       scripts={k.lower(): v for k, v in self.options.scripts.items()})
                             for t in self.options.targets}
        return self._targets

    def check(self) -> None:
        super().check()
        if self.exp.models:
            raise ConfigError(f"{self.exp.where('models')}: task 'translate' sends its requests to the "
                              f"`{ROLE}` role only: move the model under `roles: {{{ROLE}: …}}` and remove `models:`")
        known = known_variants(self.exp.dialects)
        for i, name in enumerate(self.options.targets):
            where = self.exp.where("options", "targets", i)
            if name.lower() not in known:
                raise ConfigError(f"{where}: options.targets: {unknown_variant_message(name, known)}")
            if name.lower() in (STANDARD, self.source):
                raise ConfigError(f"{where}: options.targets: {name!r} is the source variant")
            if self.options.targets.count(name) > 1:
                raise ConfigError(f"{where}: options.targets: {name!r} is listed twice")
        if self.source != STANDARD and self.source not in known:
            raise ConfigError(f"{self.exp.where('options', 'source')}: options.source: "
                              f"{unknown_variant_message(self.source, known)}")
        for name, script in self.options.scripts.items():
            if script.lower() not in SCRIPT_RANGES:
                raise ConfigError(f"{self.exp.where('options', 'scripts', name)}: options.scripts: unknown script "
                                  f"{script!r}; known: {', '.join(sorted(SCRIPT_RANGES))}")
        try:
            self.targets  # noqa: B018 - resolves every target (dialect or language) once, with its error
        except ConfigError as exc:
            raise ConfigError(f"{self.exp.where('options', 'targets')}: options.targets: {exc}") from None
        if self.options.dialect_id:
            self.identifier()
        if self.options.corpus and self.options.index:
            raise ConfigError(f"{self.exp.where('options', 'index')}: give options.corpus or options.index, not both")
        if self.options.corpus and not self.exp.resolve(self.options.corpus).is_file():
            raise ConfigError(f"{self.exp.where('options', 'corpus')}: options.corpus: "
                              f"{self.exp.resolve(self.options.corpus)}: file not found")
        if self.index_dir is not None and not self.index_dir.is_dir():
            build = (f"dialectbias index build {self.options.corpus}" if self.options.corpus
                     else "dialectbias index build CORPUS.yaml --out DIR")
            key = "corpus" if self.options.corpus else "index"
            raise ConfigError(f"{self.exp.where('options', key)}: no retrieval index at {self.index_dir}: "
                              f"build it first (`{build}`)")
        if self.retriever is not None:
            self._check_index(self.retriever)
        self._check_transcripts(self.retriever)
        if self.options.prompt == "instruction":
            instruction_check(self.targets, self.exp.role(ROLE), self.exp.where("options", "prompt"))

    @property
    def transcript_k(self) -> int:
        """Dialect-only transcripts per prompt: options.transcript_k, else DEFAULT_TRANSCRIPT_K when the index
        holds transcripts and the prompt is the RAG one, else 0."""
        if self._transcript_k is None:
            given = self.options.transcript_k
            held = self.retriever.transcript_dialects() if self.retriever is not None else {}
            self._transcript_k = given if given is not None else (
                DEFAULT_TRANSCRIPT_K if held and self.options.prompt == "rag" else 0)
        return self._transcript_k

    def _check_transcripts(self, retriever: Retriever | None) -> None:
        """An explicit transcript_k > 0 needs an index holding transcripts and the RAG prompt, and every template
        that gets transcripts must show them."""
        given = self.options.transcript_k
        where = self.exp.where("options", "transcript_k")
        held = retriever.transcript_dialects() if retriever is not None else {}
        if given:
            if self.options.prompt != "rag":
                raise ConfigError(f"{where}: options.transcript_k: the instruction prompt shows no context; set it "
                                  "to 0 or use prompt: rag")
            if not held:
                what = f"the index {retriever.index_dir} holds no dialect-only transcripts" if retriever is not None \
                    else "the experiment has no retrieval index (options.corpus)"
                raise ConfigError(f"{where}: options.transcript_k: {given}, but {what}; add `transcripts:` to the "
                                  "corpus file and rebuild the index (docs/dialect-data.md), or set it to 0")
        if self.transcript_k == 0:
            return
        for target in self.targets.values():
            if target.kind != "dialect" or target.variant not in held:
                continue
            name = template_name(target, self.templates)
            if not shows_transcripts(name, self.templates, target):
                raise ConfigError(f"{where}: options.transcript_k: {self.transcript_k}, but the template {name}.j2 "
                                  f"(target {target.variant}) does not show `transcripts`: add a "
                                  "`{% for t in transcripts %}{{ t.text }}{% endfor %}` block to it (see the "
                                  "package's translate/dialect_bn.j2), or set options.transcript_k: 0")

    def transcript_lines(self) -> list[str]:
        """What the prompts show of the index's transcripts, per dialect target (never silently none)."""
        held = self.retriever.transcript_dialects() if self.retriever is not None else {}
        if not held:
            return []
        total = sum(held.values())
        if self.transcript_k == 0:
            return [f"transcripts: the index holds {total:,}, none shown (options.transcript_k: 0)"]
        dialects = [t.variant for t in self.targets.values() if t.kind == "dialect"]
        shown = [f"{d} ({held[d]:,} indexed)" for d in dialects if d in held]
        lacking = [d for d in dialects if d not in held]
        line = f"transcripts: up to {self.transcript_k} per prompt as style context for " + (", ".join(shown) or
                                                                                             "no target")
        if lacking:
            line += f"; none for {', '.join(lacking)} (the index has no transcripts of it)"
        return [line]

    def _check_index(self, retriever: Retriever) -> None:
        """Before any request: the index matches its corpus (or is rebuilt, with `rebuild_index`) and holds
        pairs of every dialect target the few-shot prompt needs examples for."""
        key = "corpus" if self.options.corpus else "index"
        try:
            retriever.open(rebuild=self.options.rebuild_index)
        except DataError as exc:
            raise ConfigError(f"{self.exp.where('options', key)}: options.{key}: {exc}") from None
        if self.options.prompt != "rag":
            return
        held = retriever.dialects()
        for i, name in enumerate(self.options.targets):
            target = self.targets[name.lower()]
            if target.kind == "dialect" and target.variant not in held:
                its = ", ".join(f"{d} {n:,}" for d, n in held.items()) or "none"
                raise ConfigError(f"{self.exp.where('options', 'targets', i)}: options.targets: the index "
                                  f"{retriever.index_dir} has no pair of dialect {target.variant!r} (its dialects: "
                                  f"{its}); index a corpus with {target.variant} pairs, or translate into it in an "
                                  f"experiment without options.{key} (zero-shot prompts)")

    def input_files(self) -> list[Path]:
        extra = [p for p in (self.templates, self.index_dir) if p is not None and p.exists()]
        return [*super().input_files(), *extra]

    def clean_context(self, target: str) -> CleanContext:
        """How the answers for `target` are post-processed (script, labels, options)."""
        t = self.targets.get(target)
        labels = (t.source_label, t.target_label) if t else ()
        return CleanContext(script=t.script if t else None, labels=labels,
                            script_threshold=self.options.script_threshold,
                            accept_unchanged=self.options.accept_unchanged)

    # -- requests -----------------------------------------------------------------------------
    def _requests(self, store: Store, model: ModelConfig) -> Any:
        """One request per item × target × field group, items taken in chunks whose retrieval queries are
        embedded in one batch (a query is embedded once, whatever the number of targets)."""
        params = {"temperature": 0, "max_tokens": self.options.max_tokens, **model.params}
        items = store.iter_items()
        while chunk := list(islice(items, QUERY_BATCH)):
            plans: list[tuple[Item, VariantPlan | None]] = []
            for item in chunk:
                source = item.variants.get(self.source)
                if source is None or (isinstance(source, str) and not source.strip()):
                    yield Skipped(f"item {item.id!r}", kind=f"no {self.source!r} variant to translate")
                    plans.append((item, None))
                    continue
                plan = plan_variant(source, self.options.fields)
                if plan.missing:
                    yield Skipped(f"item {item.id!r}: variant {self.source!r} lacks {', '.join(plan.missing)}",
                                  kind="requested field missing")
                if not plan.groups:
                    yield Skipped(f"item {item.id!r}", kind="no text to translate in the source variant")
                plans.append((item, plan if plan.groups else None))
            if self.retriever is not None and self.options.prompt == "rag" and any(
                    t.kind == "dialect" for t in self.targets.values()):
                self.retriever.prepare([_query(g.texts) for _, plan in plans if plan for g in plan.groups])
            for item, planned in plans:
                if planned is not None:
                    yield from self._item_requests(item, planned, model, params)

    def _item_requests(self, item: Item, plan: VariantPlan, model: ModelConfig, params: dict[str, Any]) -> Any:
        leaked = None
        if self.retriever is not None:
            leaked = self.retriever.leaked([t for g in plan.groups for t in g.texts])
        for target in self.targets.values():
            existing = item.variants.get(target.variant)
            if existing not in (None, "") and not self.options.retranslate_existing:
                yield Skipped(f"item {item.id!r}/{target.variant}",
                              kind="the item already has this variant (kept; set retranslate_existing to "
                                   "translate it too)")
                continue
            rag = self.options.prompt == "rag"
            template = template_name(target, self.templates) if rag else INSTRUCTION_TEMPLATE
            for group in plan.groups:
                text = numbered(group.texts) if group.is_list else group.texts[0]
                examples, transcripts = [], []
                if self.retriever is not None and target.kind == "dialect" and rag:
                    examples = self.retriever.examples(_query(group.texts), target.variant, self.options.k)
                    transcripts = self.retriever.transcripts(_query(group.texts), target.variant, self.transcript_k)
                prompt, sent = (render_prompt(template, self.templates, target, text, numbered=group.is_list,
                                              n_lines=len(group.texts), examples=examples, transcripts=transcripts),
                                params) if rag else instruction_request(target, text, params, group.is_list)
                meta = {"field": group.name, "is_list": group.is_list, "source": list(group.texts),
                        "source_variant": self.source, "leaked": leaked,
                        "retrieval": self._retrieval_mode(target, examples),
                        "examples": [e.pair_id for e in examples],
                        "example_scores": [round(e.score, 6) for e in examples]}
                if transcripts:
                    meta |= {"transcripts": [t.transcript_id for t in transcripts],
                             "transcript_scores": [round(t.score, 6) for t in transcripts]}
                yield RequestSpec(stage=STAGE, model=model, item_id=item.id, variant=target.variant,
                                  template=template, messages=[{"role": "user", "content": prompt}],
                                  params=sent, meta=meta)

    def _retrieval_mode(self, target: Target, examples: list[Any]) -> str:
        """rag (examples shown), or why the prompt has none: language target, no index (a dialect target the
        index lacks is an error at load)."""
        if self.options.prompt == "instruction":
            return "plain: instruction prompt"
        if examples:
            return "rag"
        if target.kind == "language":
            return "plain: language target"
        return "plain: no index" if self.retriever is None else "plain"

    def stages(self) -> list[Stage]:
        return [Stage(STAGE, [self.exp.role(ROLE)], self._requests)]

    # -- results ------------------------------------------------------------------------------
    def identifier(self) -> Any:
        """The options.dialect_id model (loaded once), or None."""
        if self._identifier is None and self.options.dialect_id:
            self._identifier = load_identifier(self.exp, self.options.dialect_id)
        return self._identifier

    def translations(self, store: Store) -> list[Translation]:
        rows = list(read_translations(store, self.exp.role(ROLE).id, self.clean_context))
        if self.identifier() is None:
            return rows
        dialects = {name for name, t in self.targets.items() if t.kind == "dialect"}
        return check_dialects(rows, self.identifier(), dialects, self.options.dialect_id_min_probability)

    def counts(self, store: Store) -> TranslationCounts:
        return count_translations(self.translations(store))

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Usable = translations that passed post-processing."""
        c = self.counts(store)
        failed = f" ({failure_text(c.failed)})" if c.failed else ""
        detail = (f"{c.translated} of {c.requests} translations usable; {c.n_failed} failed{failed}, "
                  f"{c.pending} not done" if c.requests else "no requests (nothing to translate)")
        return [StageYield(STAGE, self.exp.role(ROLE).id, c.translated, detail)]

    def summary_lines(self, store: Store) -> list[str]:
        rows = self.translations(store)
        c = count_translations(rows)
        lines = [f"index rebuilt: corpus changed ({self.retriever.rebuilt})"] \
            if self.retriever is not None and self.retriever.rebuilt else []
        lines += [f"translate: {c.translated} translated · {c.n_failed} failed"
                 + (f" ({failure_text(c.failed)})" if c.failed else "")
                 + (f" · {c.pending} not done" if c.pending else ""),
                 f"variants: {c.variants} complete · {c.variants_incomplete} incomplete (not exported)"]
        if c.leak_checked and self.retriever is not None:
            lines.append(f"leaked: {c.leaked_items} of {c.items} items (source text among the index's pairs; "
                         f"index: {self.retriever.describe()})")
        else:
            lines.append("leaked: not checked (no retrieval index)")
        lines.extend(self.transcript_lines())
        lines.extend(dialect_id_lines(rows, list(self.targets)))
        plain = Counter(t.retrieval for t in rows if t.retrieval != "rag")
        if plain:
            lines.append("zero-shot prompts: " + ", ".join(f"{n} {why.removeprefix('plain: ')}"
                                                            for why, n in sorted(plain.items())))
        return lines

    def report(self, store: Store, out_dir: Path) -> ReportContent:
        from dialectbias.tasks.translate._report import write_translate_report

        return write_translate_report(self, store, out_dir)

    def review_translations(self, store: Store) -> Iterable[ReviewTranslation]:
        """The post-processed translations (`translations`) the translation review queues show."""
        from dialectbias.review import task_translations

        return task_translations(self.translations)(store)

    def export_items(self, store: Store | None, out: Path) -> ItemsExport:
        """Write the items with their new variants (`dialectbias export EXP --items OUT.jsonl`); before a run
        has stored the items, the run's store is still what is read (none yet: an error)."""
        from dialectbias.tasks.translate._export import export_items

        if store is None:
            with Store.open(self.exp.store_path, create=False) as opened:
                return export_items(self, opened, out)
        return export_items(self, store, out)
