"""What a task is: its stages (requests to send), how results become records, and its report.

The contract, written down: `Task` declares every hook a task may offer, with a docstring and a default (the
abstract `stages` and `report` have none); the hooks only some tasks have are protocols a task opts into by
implementing their method (`ReviewsTranslations`, `ShowsJudgments`), as pluggy declares hook specifications.
Callers (the CLI, the run, the report, the review app) call these, testing for a protocol with `isinstance`, and
never look a hook up by name."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from dialectbias.config import Experiment
from dialectbias.data import (
    DIALECT_HINT,
    Item,
    LoadReport,
    field_values,
    is_url,
    iter_items,
    known_variants,
    resolve_item_image,
    unknown_variant_message,
)
from dialectbias.errors import ConfigError, DataError, DialectBiasError
from dialectbias.providers import ModelConfig
from dialectbias.run import (
    IMPORTED_PROVIDER,
    RequestSpec,
    Skipped,
    Stage,
    StageYield,
    imported_model,
    imported_model_ids,
    importing,
)
from dialectbias.store import ResultCounts, Store, ok_request_ids
from dialectbias.tasks._identity import file_identity

if TYPE_CHECKING:
    from dialectbias.judges import Rubric
    from dialectbias.report import ReportContent
    from dialectbias.review import Panel, Translation
    from dialectbias.store import JudgmentRecord
    from dialectbias.tasks._items_file import ItemsExport


class NoOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Task(ABC):
    """A task is a value built from an experiment. Adding one: a module (or a sub-package for a family) and one
    entry point in the group `dialectbias.tasks` (docs/extending.md)."""

    name: ClassVar[str]
    Options: ClassVar[type[BaseModel]] = NoOptions
    #: variants every item must have (a task may set them per instance, from its options)
    required_variants: tuple[str, ...] = ()
    #: what `data:` must hold, shown by `dialectbias tasks` (set it on every task)
    item_format: ClassVar[str] = ""
    #: item fields holding an image (a path under the data file's folder, or an http(s) URL): checked when
    #: the items are loaded (`dialectbias.data.iter_items`), loaded when requests are built
    image_fields: ClassVar[tuple[str, ...]] = ()
    #: model roles the task sends requests to (`roles:` of the experiment must name a model for each)
    required_roles: ClassVar[tuple[str, ...]] = ()
    #: False for a task that sends requests to role models only (translate): `models:` may then be empty
    uses_models: ClassVar[bool] = True
    #: True: an experiment may list no `models:` when all its generations are imported (import-generations);
    #: every task with a generate stage (`generation_stage`) can; a task with `no_imports` never can
    imports_only: ClassVar[bool] = True
    #: key -> what it is: the keys of a generation request's `meta` that tell apart the requests the task builds
    #: for one model × item × variant; an `import-generations` line gives those it needs (listed by
    #: `dialectbias tasks NAME`)
    request_keys: ClassVar[Mapping[str, str]] = {}
    #: why `import-generations` does not apply to the task ('' when it does)
    no_imports: ClassVar[str] = ""

    def __init__(self, experiment: Experiment) -> None:
        self.exp = experiment
        self.options: Any = experiment.validate_options(self.Options)
        self.load_report: LoadReport | None = None
        self._identity: list[Any] | None = None
        #: each judge's rubric (judge id -> rubric), as the task reads it: the judge's `rubric:`, else the task's
        #: default; empty for a task without a judge stage. The review commands and the app score with these.
        self.rubrics: dict[str, Rubric] = {}
        self._imported: list[ModelConfig] | None = None

    def check_roles(self) -> None:
        """ConfigError naming the task and the role when the experiment has no model for a required role (or
        no model under test at all, unless the task scores imported generations alone, `imports_only`, or
        sends requests to role models only, `uses_models` false)."""
        if not self.exp.models and self.uses_models and (self.no_imports or not self.imports_only):
            why = f" ({self.no_imports})" if self.no_imports else ""
            raise ConfigError(f"{self.exp.where('models')}: models: task {self.name!r} needs at least one model"
                              f"{why}")
        for role in self.required_roles:
            if role not in self.exp.roles:
                raise ConfigError(f"{self.exp.where('roles')}: task {self.name!r} needs a model for role {role!r}: "
                                  f"add `roles: {{{role}: {{id: …, provider: …, model: …}}}}` to the experiment")

    def check(self) -> None:
        """Raise ConfigError when the experiment cannot run this task (called when the file is loaded)."""
        if self.exp.data is None:
            raise ConfigError(f"{self.exp.path}: task {self.name!r} needs `data:` (a file or hf://name)")
        known = known_variants(self.exp.dialects)
        for i, name in enumerate(self.exp.variants or []):
            if name.lower() not in known:
                raise ConfigError(f"{self.exp.where('variants', i)}: variants: {unknown_variant_message(name, known)}")

    def compares_dialects(self) -> bool:
        """True when every item needs a dialect variant beside `standard` to be of any use: then data with
        no dialect variant at all is an error, and items without one are a warning."""
        return False

    def load_items(self) -> Iterator[Item]:
        """Items from `data`, restricted to the experiment's `variants` when given; items with a field above
        `limits.max_field_chars` are refused. What loading found is in `self.load_report` afterwards."""
        assert self.exp.data is not None
        report = self.load_report = LoadReport(str(self.exp.data), self.exp.limits)
        yield from iter_items(self.exp.data, base_dir=self.exp.base_dir, required_variants=self.required_variants,
                              known=known_variants(self.exp.dialects), variants=self.exp.variants or None,
                              limits=self.exp.limits, report=report,
                              image_fields=self.image_fields if self.images_needed() else ())
        if self.compares_dialects() and len(report.without_dialect) == report.items:
            kept = f" among variants: {self.exp.variants} of {self.exp.path}" if self.exp.variants else ""
            raise DataError(f"{report.source}: no item has a dialect variant{kept}, only 'standard', so task "
                            f"{self.name!r} has nothing to compare. {DIALECT_HINT}")

    def images_needed(self) -> bool:
        """False when no image file is read (only imported answers are scored): `image_fields` go unchecked."""
        return True

    def input_warnings(self) -> list[str]:
        """Warnings about the items just loaded (refused or oversized fields, missing variants), each with
        its count; empty before `load_items` ran."""
        if self.load_report is None:
            return []
        return self.load_report.warnings(compares_dialects=self.compares_dialects())

    def stage_yields(self, store: Store) -> list[StageYield]:
        """Usable results per stage × model among the current requests; by default successful results.
        Tasks override this for stages whose results can be unusable (unscored judgments, rejected answers)."""
        if none := self.no_model_yield():
            return none
        counts = store.result_counts()
        out = []
        for stage in self.stages():
            for model in stage.models:
                c = counts.get((stage.name, model.id), ResultCounts(0, 0, 0))
                n, ok, failed = c.requests, c.ok, c.failed
                detail = (f"{ok} of {n} requests succeeded ({failed} failed, {n - ok - failed} not done)" if n
                          else "no requests (nothing to send)")
                out.append(StageYield(stage.name, model.id, ok, detail))
        return out

    def input_files(self) -> list[Path]:
        """Files the requests are built from (data, templates, word lists): each one's name and content
        hash go into the compile fingerprint (`tasks._identity`), so editing one rebuilds the requests."""
        return [self.exp.resolve(self.exp.data)] if self.exp.data else []

    def input_identity(self) -> list[Any] | None:
        """What identifies the task's external inputs; None when it cannot be told (e.g. hf:// data),
        in which case requests are always rebuilt."""
        if self.exp.data and self.exp.data.startswith("hf://"):
            return None
        if self._identity is None:  # once per run: the items and every stage's compile use it
            self._identity = self._file_identity()
        return self._identity

    def _file_identity(self) -> list[Any] | None:
        identity: list[Any] = []
        for path in self.input_files():
            files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
            for f in files:
                try:
                    identity.append(file_identity(f, self.exp.base_dir))
                except OSError:
                    return None
        images = self.image_fields and self.exp.data and self.images_needed()
        return identity + self._image_identity() if images else identity

    def _image_identity(self) -> list[Any]:
        """Each image the items name (its file's name and content hash, or its URL), so replacing an image
        file rebuilds the requests (an image's sha256 is in its requests' ids). A URL's image is downloaded
        when the requests are built, so a changed image behind an unchanged URL is seen when the data
        file or the experiment changes."""
        assert self.exp.data is not None
        path = self.exp.resolve(self.exp.data)
        out: list[Any] = []
        try:
            for item_id, ref in field_values(path, self.image_fields):
                resolved = resolve_item_image(ref, path.parent, str(path), item_id)
                if is_url(resolved):
                    out.append(resolved)
                else:
                    out.append(file_identity(Path(resolved), self.exp.base_dir))
        except (DialectBiasError, OSError, KeyError):
            return [None, time.time()]  # a problem load_items reports: never reuse this compile
        return out

    @abstractmethod
    def stages(self) -> list[Stage]:
        """The passes of a run, in order (e.g. generate, then judge)."""

    @abstractmethod
    def report(self, store: Store, out_dir: Path) -> ReportContent:
        """Write the task's tables (CSV) into `out_dir` and return what the HTML report shows of it."""

    def summary_lines(self, store: Store) -> list[str]:
        """What the task made of the results (rejected answers, unscored judgments…), for the run summary."""
        return []

    def rescore(self, store: Store) -> int:
        """Bring the values the store derived from the experiment's settings up to date with the experiment as
        it is now, with no model call (tasks with a judge stage: `_judgment_row.JudgedTask`); returns how many
        rows changed. Called whenever the experiment is opened (`dialectbias.api.open_experiment`)."""
        return 0

    def review_model_ids(self) -> list[str]:
        """What the judges judged besides the experiment's `models:`, for the `judgments` review queue (e.g.
        translation_quality's systems); by default the models known only by imported generations."""
        return [m.id for m in self.imported_models()]

    # -- models known by their imported generations ---------------------------------------------------
    def imported_models(self) -> list[ModelConfig]:
        """Models known only by generations imported into the store (`import-generations` into an experiment
        that lists no `models:`); empty when the experiment lists models."""
        if self._imported is None:
            self._imported = [] if self.exp.models else [imported_model(m) for m in imported_model_ids(self.exp)]
        return self._imported

    def generation_models(self) -> list[ModelConfig]:
        """The models whose answers the task scores: the experiment's `models:`, else those known by imports."""
        return [*self.exp.models, *self.imported_models()]

    def generation_stage(self, build: Callable[[Store, ModelConfig], Iterator[RequestSpec | Skipped]],
                         name: str = "generate") -> Stage:
        """The generate stage over `generation_models`: a model known only by its imports gets, at run time,
        only the requests it has an imported result for (it is never called); while importing, all of them."""
        def built(store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
            if model.provider != IMPORTED_PROVIDER or importing.get():
                yield from build(store, model)
                return
            done = ok_request_ids(store, name, model.id)
            for spec in build(store, model):
                if isinstance(spec, Skipped) or spec.request_id() in done:
                    yield spec
                else:
                    yield Skipped(f"{model.id}/{spec.item_id}/{spec.variant}",
                                  kind="no imported generation (the model is not listed under models:)")
        return Stage(name, self.generation_models(), built)

    def no_model_yield(self) -> list[StageYield]:
        """The run's verdict when there is no model at all (none listed, none imported), else empty."""
        if self.generation_models():
            return []
        return [StageYield("generate", "(no model)", 0, "the experiment lists no models and no generation was "
                           "imported: add `models:` or run `dialectbias import-generations` first")]

    def export_tables(self, store: Store) -> dict[str, list[dict[str, Any]]]:
        """The task's own per-row tables for `dialectbias export --out DIR` (table name -> rows), written beside
        the store's tables; none by default."""
        return {}

    def export_items(self, store: Store | None, out: Path) -> ItemsExport:
        """Write the experiment's items as a data file (`dialectbias export EXP --items OUT.jsonl`) and say what
        was written. `store`: the experiment's store when it holds the items (a run or an import stored them):
        the review's corrections of machine variants are applied; None before: the items as the experiment reads
        them (`input_warnings` then says what loading found). A task that adds variants overrides it (translate)."""
        from dialectbias.tasks._items_file import export_store_items

        return export_store_items(self.exp, store, out, self.load_items() if store is None else ())


@runtime_checkable
class ReviewsTranslations(Protocol):
    """A task whose own translations are what the translation review queues show (translation_score, validation,
    translation_correction, error_coding), instead of the raw answers of a `translate` stage: the translate task's
    post-processed answers, translation_quality's systems' translations."""

    def review_translations(self, store: Store) -> Iterable[Translation]:
        """The translations to review, failed ones left out (they are not variants)."""
        ...


@runtime_checkable
class ShowsJudgments(Protocol):
    """A task whose judges judge something else than the qa_bias pair of answers: what the `judgments` review
    queue shows of a judgment before the judge's reasoning."""

    def judgment_panels(self, store: Store, record: JudgmentRecord) -> list[Panel]:
        """The texts the judgment `record` is about (e.g. source, reference and the system's translation)."""
        ...
