"""The optional parts of the task contract: protocols a task opts into by implementing their method (hook
specifications, as pluggy declares them; `Task` declares the hooks every task has, with defaults). The CLI and
the review app test for a protocol with `isinstance` and call its method; nothing looks a hook up by name."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from dialectbias.review import Panel, Translation
    from dialectbias.store import JudgmentRecord, Store


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


__all__ = ["ReviewsTranslations", "ShowsJudgments"]
