"""What the stereotype probes share (SPEC §4 P4; German paper §3.1–3.2, App. A "Prompt Variations", App. B.1):
the naming and usage settings, the items they make, the traits and writer labels, the writer prefixes and the
per-item seed. `AssociationTask` and `DecisionTask` are both a `ProbeTask`."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from dialectbias.config import Departure, Experiment
from dialectbias.data import STANDARD, Item
from dialectbias.dialects import language_of
from dialectbias.errors import ConfigError
from dialectbias.providers import ModelConfig
from dialectbias.run import draw_seed
from dialectbias.tasks._base import Task
from dialectbias.tasks.probes._prompt import WRITER_PREFIXES
from dialectbias.tasks.probes._topics import DEFAULT_TOPICS, LABELER_ROLE
from dialectbias.tasks.probes._traits import Trait, WriterLabels, load_traits, load_writer_labels

DEFAULT_PREFIX = "default"
USAGE = ("usage", "both")  # settings that read `data`


class ProbeOptions(BaseModel):
    """Options every stereotype probe takes (`dialectbias tasks association|decision` lists them)."""

    model_config = ConfigDict(extra="forbid")

    setting: Literal["naming", "usage", "both"] = Field(
        default="naming", description="naming: the writers are described by labels (no data needed); "
        "usage: the writers are shown a standard text and its dialect version from `data`; both: the two "
        "settings in one run, so the report tests naming against usage (German paper Figure 2)")
    languages: dict[str, list[str]] = Field(
        default_factory=lambda: {"de": ["bavarian"]},
        description="naming setting: language code -> dialect keys of the writer-label file")
    traits: list[str] | None = Field(default=None, description="default: every trait in the traits file")
    samples: int = Field(default=10, ge=1, description="naming setting: prompts per dialect × trait (the usage "
                         "setting makes one prompt per item × dialect × trait; the decision task makes each of "
                         "them once per scenario). Each is its own draw with its own seed and cache entry, "
                         "also when two samples' prompts are the same")
    allow_neutral: bool = Field(default=False, description="equal-option variant (App. B.3)")
    equal_option: Literal["combined", "separate"] = Field(
        default="combined", description="with allow_neutral: combined (the 'None' and 'Both' sentences in one "
        "prompt) or separate (the paper's two variants: each prompt once with the rejection sentence, once with "
        "the double-assignment sentence; the request key `equal_option` none/both, and a report table per variant)")
    prefix: str | list[str] = Field(
        default=DEFAULT_PREFIX,
        description="writer prefix(es) (App. B.1): default ('Given the two writers: …'), consider ('Consider the "
        "following two writers: …') or imagine ('Imagine two writers: …'); a list runs every prompt under "
        "each (same adjectives/options and writer order, only the prefix differs) and the report compares them")
    temperature: float = Field(default=0.7, ge=0, description="sampling temperature of the models")
    max_tokens: int = Field(default=350, ge=1, description="answer length limit (tokens) of the models")
    traits_file: str | None = Field(
        default=None, description="YAML file of your own traits, adjective and concept lists (default: the "
        "package's dialectbias/resources/traits.yaml, and traits_bn.yaml for Bengali; relative to the "
        "experiment file)")
    labels_file: str | None = Field(
        default=None, description="YAML file of your own writer labels for the naming setting (default: the "
        "package's dialectbias/resources/writer_labels.yaml; relative to the experiment file)")
    n_resamples: int = Field(default=10_000, ge=100, description="bootstrap resamples for CIs")
    topics: list[str] | None = Field(
        default=None, min_length=1,
        description="usage setting with a `labeler` role: the closed topic list the labeler chooses from (German "
        f"paper App. A.5); default (ours: the paper's cluster list is not in its text): {', '.join(DEFAULT_TOPICS)}. "
        "Texts with a `domain` keep it")
    topic_prompt: Literal["closed", "open"] = Field(
        default="closed", description="closed: the labeler picks one of `topics` under a JSON schema; open: the "
        "paper's question (App. A.5) and its free answer is the label (the paper then clustered the labels)")
    labeler_temperature: float = Field(default=0.0, ge=0, description="sampling temperature of the labeler")
    labeler_max_tokens: int = Field(default=30, ge=1, description="answer length limit (tokens) of the labeler")

    @field_validator("topics")
    @classmethod
    def _distinct_topics(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        cleaned = [" ".join(t.split()) for t in value]
        if any(not t for t in cleaned):
            raise ValueError("a topic is empty")
        lowered = [t.lower() for t in cleaned]
        if len(set(lowered)) != len(lowered):
            raise ValueError(f"a topic is listed twice (case ignored): {cleaned}")
        return cleaned
    t_test: Literal["welch", "student"] = Field(
        default="welch", description="two-sample t-test of the report's comparisons (naming vs usage, dialect vs "
        "noise, prefixes, model sizes): welch (unequal variances) or student (pooled variance, the paper's)")

    #: departures from the German paper (docs/departures.md; `replicate: paper` sets these values)
    PAPER: ClassVar[Mapping[str, Departure]] = {
        "equal_option": Departure("separate", "German paper App. B.3 (two variants appended to the prompts)",
                                  "one run instead of two; the scoring of neutral answers is the paper's"),
        "topic_prompt": Departure("open", "German paper App. A.5 (a free question, the labels then clustered)",
                                  "a closed list under a JSON schema is repeatable and comparable across runs; "
                                  "the clustering step is not built"),
        "t_test": Departure("student", "German paper §5.1 (\"independent samples t-test\")",
                            "the groups differ in size and spread; Welch does not assume equal variances"),
    }

    @field_validator("prefix")
    @classmethod
    def _known_prefixes(cls, value: str | list[str]) -> str | list[str]:
        names = [value] if isinstance(value, str) else value
        if not names:
            raise ValueError("give at least one prefix name")
        unknown = [n for n in names if n not in WRITER_PREFIXES]
        if unknown:
            raise ValueError(f"unknown prefix(es) {unknown}; known: {list(WRITER_PREFIXES)}")
        if len(set(names)) != len(names):
            raise ValueError(f"a prefix is listed twice: {names}")
        return value

    @property
    def topic_list(self) -> list[str]:
        """`topics`, else the default list."""
        return list(self.topics) if self.topics is not None else list(DEFAULT_TOPICS)

    @property
    def prefixes(self) -> list[str]:
        return [self.prefix] if isinstance(self.prefix, str) else list(self.prefix)


class ProbeTask(Task):
    """A stereotype probe: items from writer labels (naming) or parallel texts (usage), × trait."""

    Options = ProbeOptions
    #: what `load_items` names the setting in item metadata and the template label prefix, e.g. "association"
    template_root: str = "probe"
    request_keys: ClassVar[Mapping[str, str]] = {
        "setting": "naming or usage (options.setting: both runs the two)",
        "prefix": "the writer prefix: default, consider or imagine (a list in options.prefix)",
        "equal_option": "allow_neutral with equal_option: separate: none (the rejection sentence) or both (the "
                        "double-assignment sentence)"}
    # no `sample` key: a naming item's id holds its sample index (`…/0003`), so `item_id` picks the sample

    def __init__(self, experiment: Experiment) -> None:
        super().__init__(experiment)
        o = self.options
        self._traits: dict[str | None, dict[str, Trait]] = {}
        self.labels: dict[str, WriterLabels] = load_writer_labels(
            experiment.resolve(o.labels_file) if o.labels_file else None)
        languages: list[str | None] = [*(o.languages if o.setting != "usage" else []),
                                       *([None] if o.setting in USAGE else [])]
        for lang in languages:
            known = self.traits_for(lang)
            unknown = [t for t in (o.traits or []) if t not in known]
            if unknown:
                raise ConfigError(f"{experiment.path}: options.traits: unknown trait(s) {unknown}; "
                                  f"known: {sorted(known)}")
        self.traits: dict[str, Trait] = self.traits_for(languages[0])
        self.trait_names: list[str] = o.traits or list(self.traits)
        if o.setting in USAGE:  # a data item without a standard text is an error naming its line
            self.required_variants = (STANDARD,)

    def traits_for(self, language: str | None) -> dict[str, Trait]:
        """The traits of a language: `options.traits_file` for all, else the packaged file for it."""
        key = None if self.options.traits_file else language
        if key not in self._traits:
            path = self.exp.resolve(self.options.traits_file) if self.options.traits_file else None
            self._traits[key] = load_traits(path, language=key)
        return self._traits[key]

    def item_language(self, item: Item) -> str | None:
        """The item's `language` field, else the registry's language of its dialect."""
        lang = item.metadata.get("language")
        return str(lang) if lang else language_of(str(item.metadata.get("dialect", "")), self.exp.dialects)

    def item_trait(self, item: Item) -> Trait | None:
        return self.traits_for(self.item_language(item)).get(str(item.metadata.get("trait")))

    def input_files(self) -> list[Path]:
        files = super().input_files() if self.options.setting in USAGE else []
        return files + [self.exp.resolve(f) for f in (self.options.traits_file, self.options.labels_file) if f]

    def check(self) -> None:
        if LABELER_ROLE in self.exp.roles and self.options.setting not in USAGE:
            raise ConfigError(f"{self.exp.where('roles')}: roles.{LABELER_ROLE}: topic labels are for the usage "
                              f"setting's texts, but options.setting is {self.options.setting!r}")
        if self.options.setting in USAGE:
            super().check()
            if self.options.setting == "usage":
                return
        for lang, dialects in self.options.languages.items():
            if lang not in self.labels:
                raise ConfigError(f"{self.exp.path}: options.languages: no writer labels for {lang!r} "
                                  f"(known: {sorted(self.labels)})")
            for d in dialects:
                try:
                    self.labels[lang].dialect_label(d)
                except (KeyError, ValueError):
                    raise ConfigError(f"{self.exp.path}: options.languages.{lang}: unknown dialect {d!r} "
                                      f"(known: {sorted(self.labels[lang].dialects)})") from None

    def load_items(self) -> Iterator[Item]:
        """Naming: one item per language × dialect × trait × sample; usage: data items × dialect × trait; both:
        the two (each item's `setting` in its metadata)."""
        if self.options.setting in USAGE:
            for item in super().load_items():
                for variant in item.variants:
                    if variant == STANDARD:
                        continue
                    for trait in self.trait_names:
                        yield Item(id=f"{item.id}/{variant}/{trait}", domain=item.domain,
                                   variants={STANDARD: item.variants[STANDARD], variant: item.variants[variant]},
                                   metadata={**item.metadata, "trait": trait, "dialect": variant,
                                             "source_item": item.id, "setting": "usage"})
            if self.options.setting == "usage":
                return
        for lang, dialects in self.options.languages.items():
            labels = self.labels[lang]
            for dialect in dialects:
                for trait in self.trait_names:
                    for i in range(self.options.samples):
                        yield Item(id=f"{lang}/{dialect}/{trait}/{i:04d}",
                                   variants={STANDARD: labels.standard, dialect: labels.dialect_label(dialect)},
                                   metadata={"language": lang, "trait": trait, "dialect": dialect,
                                             "setting": "naming"})

    def rng(self, item: Item) -> random.Random:
        """Seeded per item (not per run order), so a resumed run rebuilds the very same prompt, and every
        prefix of `options.prefix` gets the same draws."""
        return random.Random(int(hashlib.sha256(f"{self.exp.seed}:{item.id}".encode()).hexdigest()[:16], 16))

    def generation_params(self, params: dict[str, Any]) -> dict[str, Any]:
        """The models' decoding parameters; no seed: each draw gets its own (`draw`)."""
        return {"temperature": self.options.temperature, "max_tokens": self.options.max_tokens, **params}

    def draw(self, model: ModelConfig, item: Item, *condition: str) -> int:
        """The seed of one prompt's draw (`RequestSpec.draw`): from the experiment's seed (the model's own
        `params.seed` when it sets one), the item (whose id holds the sample index in the naming setting), its
        dialect and the condition (prefix, scenario). Repeated samples of one prompt (frequent in the naming
        setting) are separate requests with their own seeds: independent draws, none answered from another's
        cache entry (issue 19)."""
        base = model.params.get("seed", self.exp.seed)
        return draw_seed(base, item.id, str(item.metadata.get("dialect")), *condition)

    def equal_options(self) -> list[str | None]:
        """The equal-option variants each prompt is asked under: None (forced choice), combined, or the
        paper's two (App. B.3): none (rejection) and both (double assignment)."""
        if not self.options.allow_neutral:
            return [None]
        return ["none", "both"] if self.options.equal_option == "separate" else ["combined"]

    def compares_dialects(self) -> bool:
        return self.options.setting in USAGE


__all__ = ["DEFAULT_PREFIX", "USAGE", "ProbeOptions", "ProbeTask"]
