"""What `vqa`, `caption` and `csu` share: items (flat JSONL or the BanglaVerse layout), the few-shot split, images,
the generation stage over the prompting strategies, and models known only by imported generations.

An experiment that lists no models scores imported generations only (`all_imported`): it holds out no
few-shot examples (the producer chose its own) and needs no image file unless a judge is shown the image.
A model known only by its imports gets requests without image or examples (`_spec`): they record which
item × variant × strategy an answer belongs to, are never sent, and keep their identity whatever the
image files or the few-shot split."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialectbias.config import Experiment
from dialectbias.data import (
    MAX_NAMED,
    BanglaVerseKind,
    BanglaVerseLoad,
    Item,
    LoadReport,
    MediaError,
    banglaverse_root,
    items_dir,
    iter_banglaverse,
    load_image,
    resolve_item_image,
)
from dialectbias.errors import ConfigError, DataError
from dialectbias.providers import ModelConfig
from dialectbias.run import (
    IMPORTED_PROVIDER,
    RequestSpec,
    Skipped,
    importing,
)
from dialectbias.store import Store, ok_request_ids
from dialectbias.tasks._base import Task
from dialectbias.tasks.vlm._items import FEW_SHOT_SPLIT, Language, few_shot_split, has_entry, variant_language
from dialectbias.tasks.vlm._prompts import STRATEGIES, Example, Strategy, build_parts, language_context, template_name

DEFAULT_STRATEGIES: tuple[Strategy, ...] = ("zero_shot",)


class VLMOptions(BaseModel):
    """Options of both BanglaVerse tasks."""

    model_config = ConfigDict(extra="forbid")

    strategies: list[Strategy] = Field(default_factory=lambda: list(DEFAULT_STRATEGIES),
                                       description="prompting strategies: zero_shot, few_shot, cot (vqa, csu)")
    temperature: float = Field(default=0.1, ge=0, description="decoding temperature (BanglaVerse §4.2: 0.1)")
    max_tokens: int = Field(default=256, ge=1, description="answer length limit (tokens), zero- and few-shot")
    cot_max_tokens: int = Field(default=1024, ge=1, description="answer length limit (tokens) of CoT answers")
    few_shot_k: int = Field(default=3, ge=1, description="few-shot examples per domain and language")
    templates_dir: str | None = Field(
        default=None, description="directory of your own templates overriding the package's: <task>/<strategy>.j2, "
        "<task>/<strategy>_<language>.j2 (bengali, english, hindi, urdu), <task>/<strategy>_<variant>.j2 "
        "(relative to the experiment file)")
    only_with_images: bool = Field(
        default=False, description="BanglaVerse layout: leave out (and count) items whose image file is absent, "
        "e.g. in a partial copy; otherwise each is reported as an item error")
    max_items_per_domain: int | None = Field(
        default=None, ge=1, description="evaluate at most this many items per domain (the first by id; few-shot "
        "examples are drawn before the cut): a pilot run")

    @field_validator("strategies")
    @classmethod
    def _distinct(cls, value: list[Strategy]) -> list[Strategy]:
        if not value:
            raise ValueError("at least one strategy")
        return list(dict.fromkeys(value))


class VLMTask(Task):
    """Base of `vqa` and `caption`: subclasses name the entry key (`question`, `caption`) and the template
    context of an item's variant and of a few-shot example."""

    entry_key: ClassVar[str]
    #: which annotation files of the BanglaVerse layout hold the task's items (`data.iter_banglaverse`)
    layout_kind: ClassVar[BanglaVerseKind | None] = None
    image_fields = ("image",)
    imports_only = True
    request_keys: ClassVar[Mapping[str, str]] = {
        "strategy": "the prompting strategy: zero_shot, few_shot, cot (vqa, csu); one of options.strategies"}

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        o = self.options
        self.templates = experiment.resolve(o.templates_dir) if o.templates_dir else None
        self._images: dict[str, bytes] = {}
        self.without_image: list[str] = []
        self.cut: int = 0

    # -- items --------------------------------------------------------------------------------------
    def check(self) -> None:
        super().check()
        allowed = self.allowed_strategies()
        bad = [s for s in self.options.strategies if s not in allowed]
        if bad:
            raise ConfigError(f"{self.exp.where('options', 'strategies')}: options.strategies: task {self.name!r} "
                              f"has no strategy {', '.join(bad)} (it has: {', '.join(allowed)})")

    def allowed_strategies(self) -> tuple[str, ...]:
        return STRATEGIES

    def data_path(self) -> Path | None:
        if self.exp.data is None or self.exp.data.startswith("hf://"):
            return None
        return self.exp.resolve(self.exp.data)

    def data_root(self) -> Path | None:
        """The folder image paths are relative to: the BanglaVerse root, or the data file's folder."""
        path = self.data_path()
        return None if path is None else items_dir(path)

    def all_imported(self) -> bool:
        """True when the experiment lists no models: every generation is imported, none is sent."""
        return not self.exp.models

    def images_needed(self) -> bool:
        """Image files are read only to prompt a listed model."""
        return not self.all_imported()

    def holds_out(self, item: Item) -> bool:
        """True for a few-shot example (shown, never evaluated); nothing is held out when all is imported."""
        return item.metadata.get("split") == FEW_SHOT_SPLIT and not self.all_imported()

    def input_files(self) -> list[Path]:
        return [*super().input_files(), *([self.templates] if self.templates else [])]

    def _image_identity(self) -> list[Any]:
        path = self.data_path()
        return [] if path is not None and path.is_dir() else super()._image_identity()  # rglob saw the images

    def load_items(self) -> Iterator[Item]:
        """Items with an entry for this task in at least one variant; few-shot examples marked `split:
        few_shot` (held out of every strategy's evaluation when few_shot is among the strategies)."""
        items = [i for i in self._raw_items() if any(has_entry(i, v, self.entry_key) for v in i.variants)]
        for item in items:
            for variant in item.variants:
                if has_entry(item, variant, self.entry_key):
                    try:
                        variant_language(variant, self.exp.dialects)
                        self.check_entry(item, variant)
                    except DataError as exc:
                        raise DataError(f"{self.exp.data}: {exc}") from None
        if not items:
            raise DataError(f"{self.exp.data}: no item has a {self.entry_key!r} entry in any variant "
                            f"(task {self.name!r}: {self.item_format.splitlines()[0]})")
        examples: set[str] = set()
        if "few_shot" in self.options.strategies and not self.all_imported() and self.uses_example_pool():
            split = few_shot_split(items, self.options.few_shot_k, self.exp.seed, self.exp.variants,
                                   usable=lambda i: all(self.example_fields(i, v) is not None for v in i.variants
                                                        if has_entry(i, v, self.entry_key)))
            examples = {i for ids in split.values() for i in ids}
        kept: dict[str, int] = {}
        for item in sorted(items, key=lambda i: i.id):
            if item.id in examples:
                yield item.model_copy(update={"metadata": {**item.metadata, "split": FEW_SHOT_SPLIT}})
                continue
            if self.holds_out(item):
                continue  # a marked example not drawn: neither shown nor evaluated
            domain = item.domain or ""
            kept[domain] = kept.get(domain, 0) + 1
            if self.options.max_items_per_domain is not None and kept[domain] > self.options.max_items_per_domain:
                self.cut += 1
                continue
            yield item

    def check_entry(self, item: Item, variant: str) -> None:
        """Raise DataError naming the item and variant when its entry is malformed."""

    def _raw_items(self) -> Iterator[Item]:
        path = self.data_path()
        root = banglaverse_root(path) if path is not None and path.is_dir() else None
        if root is None:
            yield from super().load_items()
            return
        report = self.load_report = LoadReport(str(path), self.exp.limits, unit="entry")
        load = BanglaVerseLoad(root)
        wanted = set(self.exp.variants or [])
        kind = self.layout_kind or ("vqa" if self.entry_key == "question" else "caption")
        for item in iter_banglaverse(root, kind, load):
            if not item.metadata["image_present"] and (self.options.only_with_images or self.images_needed()):
                if not self.options.only_with_images:
                    report.bad_images.append(f"{item.id}: image file {item.metadata['image']} not found")
                continue
            if wanted:
                item = item.model_copy(update={"variants": {k: v for k, v in item.variants.items() if k in wanted}})
            report.note(item.id, item)
            yield item
        if self.options.only_with_images:
            self.without_image = load.without_image

    def input_warnings(self) -> list[str]:
        lines = super().input_warnings()
        lines = [line for line in lines if not line.startswith("variant ")]  # entries are objects, not texts
        if self.without_image:
            more = len(self.without_image) - MAX_NAMED
            lines.append(f"{len(self.without_image)} items left out: no image file (options.only_with_images): "
                         + "; ".join(self.without_image[:MAX_NAMED]) + (f"; … and {more} more" if more > 0 else ""))
        if self.cut:
            lines.append(f"{self.cut} items left out: beyond options.max_items_per_domain = "
                         f"{self.options.max_items_per_domain}")
        return lines

    # -- images and prompts ---------------------------------------------------------------------------
    def image(self, item: Item) -> bytes | None:
        """The item's image bytes, or None when it names none (only imported answers can be scored then)."""
        ref = item.metadata.get("image")
        if ref is None:
            return None
        if item.id not in self._images:
            path = resolve_item_image(ref, self.data_root(), str(self.exp.data), item.id)
            self._images[item.id] = load_image(path, f"item {item.id!r}: image {ref!r}")[0]
        return self._images[item.id]

    def language(self, variant: str) -> Language:
        return variant_language(variant, self.exp.dialects)

    def item_context(self, item: Item, variant: str) -> dict[str, Any]:
        """Template variables of the item's entry in `variant` (its question and options, or nothing)."""
        return {}

    @abstractmethod
    def example_fields(self, item: Item, variant: str) -> dict[str, Any] | None:
        """What a few-shot example shows of an item in `variant` (question, options, index, answer; caption);
        None: it cannot serve as an example in this variant."""

    def few_shot_examples(self, items: list[Item]) -> dict[str, list[Item]]:
        return _by_domain([i for i in items if i.metadata.get("split") == FEW_SHOT_SPLIT])

    def held_out_lines(self, store: Store) -> list[str]:
        """How many items are few-shot examples (shown, never evaluated), for the run summary."""
        held = sum(self.holds_out(item) for item in store.iter_items())
        return [f"{held} items held out as few-shot examples ({self.options.few_shot_k} per domain; not "
                "evaluated in any strategy)"] if held else []

    def uses_example_pool(self) -> bool:
        """Whether few-shot prompts show held-out items of the data (False: the template holds its examples)."""
        return True

    def template_key(self, strategy: str) -> str:
        """The template name's strategy part (`<task>/<key>.j2`) of a strategy."""
        return strategy

    def max_tokens(self, strategy: str) -> int:
        return self.options.cot_max_tokens if strategy == "cot" else self.options.max_tokens

    def generation_requests(self, store: Store, model: ModelConfig) -> Iterator[RequestSpec | Skipped]:
        """One request per evaluated item × variant with an entry × strategy. A model known only by imported
        generations gets only the requests it has a result for (it is never called)."""
        items = list(store.iter_items())
        examples = self.few_shot_examples(items)
        known_by_imports = model.provider == IMPORTED_PROVIDER
        imported = known_by_imports and not importing.get()
        done = _ok_requests(store, model.id) if imported else set()
        for item in items:
            if self.holds_out(item):
                continue
            image = None
            if not known_by_imports:  # a model known by its imports is never sent an image
                try:
                    image = self.image(item)
                except (MediaError, DataError) as exc:
                    yield Skipped(str(exc), kind="image missing or unreadable")
                    continue
                if image is None:
                    yield Skipped(f"{model.id}/{item.id}", kind="item without image (only imported answers "
                                  "can be scored on it)")
                    continue
            for variant in item.variants:
                if not has_entry(item, variant, self.entry_key):
                    continue
                for strategy in self.options.strategies:
                    pool = [] if known_by_imports else examples.get(item.domain or "", [])
                    spec = self._spec(model, item, variant, strategy, image, pool)
                    if isinstance(spec, Skipped):
                        yield spec
                    elif imported and spec.request_id() not in done:
                        yield Skipped(f"{model.id}/{item.id}/{variant}/{strategy}",
                                      kind="no imported generation (the model is not listed under models:)")
                    else:
                        yield spec

    def _spec(self, model: ModelConfig, item: Item, variant: str, strategy: str, image: bytes | None,
              pool: list[Item]) -> RequestSpec | Skipped:
        """The request of one item × variant × strategy; without image (a model known by its imports), the
        prompt's text alone, with no example."""
        lang = self.language(variant)
        template = template_name(self.name, self.template_key(strategy), variant, lang, self.templates)
        context = {**language_context(lang), **self.item_context(item, variant)}
        shots: list[Example] = []
        used: list[str] = []
        if strategy == "few_shot" and image is not None and self.uses_example_pool():
            for ex in pool:
                if not has_entry(ex, variant, self.entry_key):
                    continue
                try:
                    ex_image = self.image(ex)
                except (MediaError, DataError) as exc:
                    return Skipped(f"few-shot example {ex.id!r}: {exc}", kind="few-shot example image unreadable")
                fields = self.example_fields(ex, variant)
                if ex_image is not None and fields is not None:
                    shots.append(Example(ex_image, fields))
                    used.append(ex.id)
            if not shots:
                return Skipped(f"{item.id}/{variant}: domain {item.domain!r}",
                               kind="no few-shot example for the domain and variant")
        if image is None:
            from dialectbias.tasks._templates import render

            content: Any = render(template, self.templates, examples=[], **context).replace("<<IMAGE>>", "")
        else:
            content = build_parts(template, self.templates, image, shots, **context)
        params = {"temperature": self.options.temperature, "max_tokens": self.max_tokens(strategy), **model.params}
        return RequestSpec(stage="generate", model=model, item_id=item.id, variant=variant, template=template,
                           messages=[{"role": "user", "content": content}], params=params,
                           meta={"strategy": strategy, "examples": used})


def _by_domain(items: list[Item]) -> dict[str, list[Item]]:
    out: dict[str, list[Item]] = {}
    for item in sorted(items, key=lambda i: i.id):
        out.setdefault(item.domain or "", []).append(item)
    return out


def _ok_requests(store: Store, model_id: str) -> set[str]:
    return ok_request_ids(store, "generate", model_id)
