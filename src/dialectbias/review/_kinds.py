"""Queue kinds as plug-ins (SPEC §6): each kind lists its targets from the store, describes its form, and
turns a submitted form (or API body) into an annotation value. The app, the API, the assignment and the
agreement statistics only talk to this interface; a new queue is one module plus one `register_queue_kind`
line (`review/__init__.py`), never an `if` in the app.

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


_KINDS: dict[str, QueueKind] = {}


def register_queue_kind(kind: QueueKind) -> QueueKind:
    """Add a queue kind (its `name` must be new)."""
    if kind.name in _KINDS:
        raise ValueError(f"queue kind {kind.name!r} is already registered")
    _KINDS[kind.name] = kind
    return kind


def queue_kinds() -> dict[str, QueueKind]:
    """Every registered queue kind by name, in registration order."""
    return dict(_KINDS)


def queue_kind(name: str) -> QueueKind:
    try:
        return _KINDS[name]
    except KeyError:
        raise KeyError(f"unknown queue {name!r}; queues: {', '.join(_KINDS)}") from None


# -- storing annotations (read them with `dialectbias.store.latest_annotations`) ---------------------------


def save_annotation(store: Store, target_id: str, annotator: str, kind: str, value: Mapping[str, Any],
                    comment: str = "", *, now: float | None = None) -> bool:
    """Store `annotator`'s annotation of a target (attributed and timestamped) in one transaction; True when
    it changed their current answer. Submitting their current answer again changes nothing; going back to
    an earlier answer makes it current again (its row moves to now)."""
    created = time.time() if now is None else now
    return replace_annotation(store, NewAnnotation(target_id, annotator, kind, dumps(dict(value)), comment.strip(),
                                                   created))
