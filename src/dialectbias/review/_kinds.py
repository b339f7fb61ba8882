"""Queue kinds as plug-ins (SPEC §6): each kind lists its targets from the store, describes its form, and
turns a submitted form (or API body) into an annotation value. The app, the API, the assignment and the
agreement statistics only talk to this interface; a new queue is one module plus one entry point in the group
`dialectbias.review_kinds` (the built-ins are declared in pyproject.toml; code may `register_queue_kind`), never
an `if` in the app (docs/extending.md).

Every annotation is a row of the store's `annotations` table: (target_id, annotator, kind, value JSON,
comment, created_at). A person's latest row of a kind on a target is their current answer; two annotators
never touch each other's rows.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from dialectbias import plugins
from dialectbias.judges import Rubric
from dialectbias.review._targets import FormField, ReviewTarget
from dialectbias.store import NewAnnotation, Store, dumps, replace_annotation

AlphaLevel = Literal["nominal", "ordinal", "interval"]


class AnnotationError(ValueError):
    """A submitted annotation that does not fit its queue's form: `problems` maps a field to its message."""

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        super().__init__("; ".join(f"{k}: {v}" for k, v in self.problems.items()))


@dataclass
class ReviewConfig:
    """What the queue kinds need to know of the experiment (built by the CLI from the experiment file)."""

    judge_ids: list[str]
    model_ids: list[str]
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    overlap: int = 1
    #: (judge, dialect) pairs whose every judgment goes to review (review.on_miscalibrated: review)
    routed: set[tuple[str, str]] = field(default_factory=set)
    #: the experiment's `dialects:` additions (language tags of variants)
    dialects: dict[str, list[str]] = field(default_factory=dict)
    language: str = "bn"
    #: a task's own translations to review (post-processed), listed by the translation queues
    #: (`_kind_translations.translation_targets`): store -> Translation rows
    translations: Callable[[Store], Iterable[Any]] | None = None
    #: without `translations`: a stage whose current ok results are the machine translations to review, read
    #: as stored (`meta.source`, `meta.field`, `meta.reference`); None: only the items' machine variants
    translation_stage: str | None = None
    #: a task's own view of what a judgment judged (e.g. source, reference, translation), shown instead of the
    #: default panels (both questions and both answers) and exported as the review CSV's text columns:
    #: (store, JudgmentRecord) -> panels
    judgment_panels: Callable[[Store, Any], list[Any]] | None = None


@dataclass(frozen=True)
class Rating:
    """One value an annotation gives that annotators can agree on: its name, how it is compared
    (Krippendorff's level; ordinal/interval also get quadratic-weighted kappa) and its possible values."""

    name: str
    level: AlphaLevel
    labels: tuple[Any, ...] = ()


class QueueKind(ABC):
    """A kind of review queue. Subclasses set the class attributes and implement the four methods."""

    #: the queue's name (`--queues`, URLs, the API's `queue`)
    name: ClassVar[str]
    title: ClassVar[str]
    description: ClassVar[str] = ""
    #: the `annotations.kind` its rows are stored under
    annotation_kind: ClassVar[str]
    #: where the app lists the queue among the others (lower first, then by name)
    order: ClassVar[int] = 100
    #: True: an annotator sees the queue only when it is named in their queues (`add-annotator --queues`), not
    #: by default (a queue over every judgment, e.g. judge_consistency, is a study of its own)
    opt_in: ClassVar[bool] = False

    @abstractmethod
    def targets(self, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
        """Everything of this kind that needs a human, from the store, in a stable order."""

    def target(self, config: ReviewConfig, store: Store, target_id: str) -> ReviewTarget | None:
        """One target by id (None when it no longer needs review or does not exist)."""
        return next((t for t in self.targets(config, store) if t.target_id == target_id), None)

    @abstractmethod
    def fields(self, config: ReviewConfig, target: ReviewTarget) -> list[FormField]:
        """The form's inputs for this target."""

    @abstractmethod
    def annotation(self, config: ReviewConfig, store: Store, target: ReviewTarget,
                   data: Mapping[str, Any]) -> dict[str, Any]:
        """The annotation value for submitted form/API data (strings from a form, JSON values from the API);
        raises AnnotationError naming each bad field. `comment` is read by the caller."""

    @abstractmethod
    def ratings(self, config: ReviewConfig, value: Mapping[str, Any]) -> dict[Rating, Any]:
        """The values of a stored annotation that agreement between annotators is computed on."""

    def form_values(self, value: Mapping[str, Any]) -> dict[str, Any]:
        """A stored value as the form's field values (to show the caller's previous answer)."""
        return dict(value)


def register_queue_kind(kind: QueueKind) -> QueueKind:
    """Add a queue kind from code (its `name` must be new): `dialectbias.plugins.register("review_kinds", …)`."""
    if kind.name in plugins.names("review_kinds"):
        raise ValueError(f"queue kind {kind.name!r} is already registered")
    plugins.register("review_kinds", kind.name, kind)
    return kind


def queue_kinds() -> dict[str, QueueKind]:
    """Every queue kind by name (the `review_kinds` plug-ins, one instance each), in the app's order."""
    kinds = [_instance(plugins.resolve("review_kinds", name)) for name in plugins.names("review_kinds")]
    return {k.name: k for k in sorted(kinds, key=lambda k: (k.order, k.name))}


def queue_kind(name: str) -> QueueKind:
    try:
        return queue_kinds()[name]
    except KeyError:
        raise KeyError(f"unknown queue {name!r}; queues: {', '.join(queue_kinds())}") from None


_INSTANCES: dict[type[QueueKind], QueueKind] = {}


def _instance(target: object) -> QueueKind:
    """A registered queue kind: an instance as it is, a QueueKind class made once (no arguments)."""
    if isinstance(target, QueueKind):
        return target
    if isinstance(target, type) and issubclass(target, QueueKind):
        return _INSTANCES.setdefault(target, target())
    raise plugins.PluginLoadError(f"review queue kind {target!r} is neither a QueueKind subclass nor an instance")


# -- storing annotations (read them with `dialectbias.store.latest_annotations`) ---------------------------


def save_annotation(store: Store, target_id: str, annotator: str, kind: str, value: Mapping[str, Any],
                    comment: str = "", *, now: float | None = None) -> bool:
    """Store `annotator`'s annotation of a target (attributed and timestamped) in one transaction; True when
    it changed their current answer. Submitting their current answer again changes nothing; going back to
    an earlier answer makes it current again (its row moves to now)."""
    created = time.time() if now is None else now
    return replace_annotation(store, NewAnnotation(target_id, annotator, kind, dumps(dict(value)), comment.strip(),
                                                   created))
