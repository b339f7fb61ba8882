"""Stratified samples of a review queue (SPEC §4 P1 Gold labelling, P2; Bengali paper §4.1: 25 translations
per dialect scored 0–10 by native speakers; BanglaVerse §3.3: the 3-point validation on 10 items per domain
per variant).

A sample is drawn stratum by stratum (a stratum = the targets sharing the `by` keys: dialect, domain), each
stratum with its own seeded generator, so a stratum's sample does not change when another stratum gains
targets; a stratum with fewer targets than asked gives all of them. The sample is stored in the store's
`meta` table (key `review_sample:<queue>`); while a queue has one, it lists only the sampled targets
everywhere (`queue_targets`: the app, the API, assignments, the CSV export). Targets that appear later
(a new run) are not in it: sample again to include them.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from dialectbias.errors import ConfigError, DataError
from dialectbias.review._kinds import QueueKind, ReviewConfig
from dialectbias.review._targets import ReviewTarget
from dialectbias.store import Store, item_domains

META_PREFIX = "review_sample:"
STRATA_KEYS = ("dialect", "domain")
#: queue -> (targets per stratum, stratum keys); other queues need `per`
DEFAULTS: dict[str, tuple[int, tuple[str, ...]]] = {
    "translation_score": (25, ("dialect",)),  # Bengali paper §4.1, SPEC §4 P2
    "validation": (10, ("domain", "dialect")),  # BanglaVerse §3.3, SPEC §4 P1
    "judge_consistency": (100, ("dialect",)),  # BanglaVerse §4.3: 100 judgments rated on the HCS rubric
}


@dataclass
class Stratum:
    """One stratum of a sample: its key values, how many targets it has and which were drawn."""

    key: dict[str, str]
    available: int
    ids: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return ", ".join(f"{k} {v or '(none)'}" for k, v in self.key.items())


@dataclass
class Sample:
    queue: str
    per: int
    by: tuple[str, ...]
    seed: int
    strata: list[Stratum]
    created_at: float = 0.0

    @property
    def ids(self) -> frozenset[str]:
        return frozenset(i for s in self.strata for i in s.ids)

    @property
    def short(self) -> list[Stratum]:
        """Strata with fewer targets than asked (all of them were taken)."""
        return [s for s in self.strata if s.available < self.per]

    def to_json(self) -> str:
        return json.dumps({"queue": self.queue, "per": self.per, "by": list(self.by), "seed": self.seed,
                           "created_at": self.created_at,
                           "strata": [{"key": s.key, "available": s.available, "ids": s.ids} for s in self.strata]},
                          ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Sample:
        d = json.loads(text)
        return cls(d["queue"], int(d["per"]), tuple(d["by"]), int(d["seed"]),
                   [Stratum(dict(s["key"]), int(s["available"]), list(s["ids"])) for s in d["strata"]],
                   float(d.get("created_at", 0.0)))


def defaults_for(queue: str, per: int | None, by: Sequence[str] | None) -> tuple[int, tuple[str, ...]]:
    """The sample size per stratum and the stratum keys of a queue (the queue's defaults fill what is None)."""
    default_per, default_by = DEFAULTS.get(queue, (None, ("dialect",)))
    keys = tuple(dict.fromkeys(k.strip() for k in (by or default_by) if k.strip()))
    unknown = [k for k in keys if k not in STRATA_KEYS]
    if unknown or not keys:
        raise ConfigError(f"--by: {unknown[0] if unknown else '(empty)'!r} is not a stratum key; keys: "
                          f"{', '.join(STRATA_KEYS)} (e.g. --by domain,dialect)")
    n = per if per is not None else default_per
    if n is None:
        raise ConfigError(f"--per: queue {queue!r} has no default sample size; give --per N (targets per stratum)")
    if n < 1:
        raise ConfigError(f"--per: {n} is not a positive number of targets per stratum")
    return n, keys


def stratum_key(target: ReviewTarget, by: Sequence[str], domains: dict[str, str]) -> dict[str, str]:
    values = {"dialect": target.dialect, "domain": domains.get(target.item_id, "")}
    return {k: values[k] for k in by}


def draw_sample(targets: Iterable[ReviewTarget], queue: str, per: int, by: Sequence[str], seed: int,
                domains: dict[str, str]) -> Sample:
    """`per` targets of each stratum, drawn with a generator seeded by (seed, queue, stratum) from the
    stratum's target ids in sorted order: the same targets give the same sample whatever their order."""
    groups: dict[tuple[str, ...], list[str]] = {}
    keys: dict[tuple[str, ...], dict[str, str]] = {}
    for t in targets:
        key = stratum_key(t, by, domains)
        k = tuple(key.values())
        keys.setdefault(k, key)
        groups.setdefault(k, []).append(t.target_id)
    strata = []
    for k in sorted(groups):
        ids = sorted(set(groups[k]))
        rng = random.Random(json.dumps([seed, queue, list(k)], ensure_ascii=False))
        strata.append(Stratum(keys[k], len(ids), sorted(rng.sample(ids, min(per, len(ids))))))
    return Sample(queue, per, tuple(by), seed, strata)


def _meta_key(queue: str) -> str:
    return f"{META_PREFIX}{queue}"


def stored_sample(store: Store, queue: str) -> Sample | None:
    text = store.get_meta(_meta_key(queue))
    return Sample.from_json(text) if text else None


def sampled_ids(store: Store, queue: str) -> frozenset[str] | None:
    """The target ids of a queue's sample, or None when the queue has none (every target is listed)."""
    sample = stored_sample(store, queue)
    return None if sample is None else sample.ids


def save_sample(store: Store, sample: Sample, *, now: float | None = None) -> Sample | None:
    """Store a queue's sample (replacing its previous one, which is returned)."""
    previous = stored_sample(store, sample.queue)
    sample.created_at = time.time() if now is None else now
    with store.transaction():
        store.set_meta(_meta_key(sample.queue), sample.to_json())
    return previous


def clear_sample(store: Store, queue: str) -> Sample | None:
    """Remove a queue's sample (its targets are all listed again); returns the removed one."""
    previous = stored_sample(store, queue)
    if previous is not None:
        store.delete_meta(_meta_key(queue))
    return previous


def sample_queue(store: Store, config: ReviewConfig, kind: QueueKind, *, per: int | None = None,
                 by: Sequence[str] | None = None, seed: int = 0, now: float | None = None
                 ) -> tuple[Sample, Sample | None]:
    """Draw and store a stratified sample of every target of `kind` (the new sample and the one it replaced)."""
    n, keys = defaults_for(kind.name, per, by)
    sample = draw_sample(kind.targets(config, store), kind.name, n, keys, seed, item_domains(store))
    if not sample.strata:  # an empty sample would hide every target added later
        raise DataError(f"queue {kind.name!r} has no targets yet: nothing to sample (no sample stored; run the "
                        "experiment first)")
    return sample, save_sample(store, sample, now=now)


def queue_targets(kind: QueueKind, config: ReviewConfig, store: Store) -> Iterator[ReviewTarget]:
    """The targets a queue lists: all of them, or only its sample when it has one."""
    ids = sampled_ids(store, kind.name)
    for t in kind.targets(config, store):
        if ids is None or t.target_id in ids:
            yield t


def describe(sample: Sample) -> list[str]:
    """One line per stratum: sampled/available, and a note where the stratum had fewer than asked."""
    out = []
    for s in sample.strata:
        note = f"  (fewer than {sample.per}: all taken)" if s.available < sample.per else ""
        out.append(f"{s.label}: {len(s.ids)}/{s.available}{note}")
    return out
