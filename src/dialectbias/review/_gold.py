"""Gold labelling (SPEC §4 P1; BanglaVerse §3.3, Table 9): corrected machine translations become
human-validated variants of the exported items.

A target's correction is the latest `translation_correction` annotation on it (when annotators' latest
answers differ, the latest wins and the conflict is counted). Applying it to an exported item row:
- the variant's text (or, for an object variant, each corrected field; a list field's lines) is replaced;
- `validated_by: {variant: annotator}`, `is_human_validated: {variant: true}` (and inside an object variant
  that carries its own flag), and `validation: {variant: {annotator, at (ISO 8601 UTC), corrected (the text
  changed), labels (the 3-point validation labels 0/1/2 given to the same targets)}}`.
A variant with validation labels but no correction stays machine; its labels are recorded
(`validation: {variant: {labels}}`).
Targets: a translation request (its field group of the variant; the variant is validated when every group
has a correction) or an item's own machine variant (`item:<id>:<variant>`, `_kind_translations`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from dialectbias.review._kind_translations import ITEM_TARGET_PREFIX, _machine_variants, text_fields
from dialectbias.store import Store, annotated_targets, dumps, latest_annotations, request_keys

CORRECTION_KIND = "translation_correction"
VALIDATION_KIND = "validation_3pt"


@dataclass(frozen=True)
class Correction:
    """The correction that wins on one target."""

    target_id: str
    text: str | dict[str, str]
    annotator: str
    at: float
    conflict: bool  # annotators' latest corrections of the target differ


def iso_utc(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def corrections(store: Store) -> dict[str, Correction]:
    """target id -> the latest correction of it (over every annotator's latest one)."""
    by_target: dict[str, list[tuple[float, str, Any]]] = {}
    for (target_id, annotator), (value, _, created) in latest_annotations(store, CORRECTION_KIND).items():
        by_target.setdefault(target_id, []).append((created, annotator, value.get("text")))
    out = {}
    for target_id, answers in by_target.items():
        created, annotator, text = max(answers, key=lambda a: (a[0], a[1]))
        out[target_id] = Correction(target_id, text, annotator, created, len({dumps(a[2]) for a in answers}) > 1)
    return out


def validation_labels(store: Store) -> dict[str, list[int]]:
    """target id -> the 3-point labels of its annotators (each one's latest), in annotator order."""
    out: dict[str, list[tuple[str, int]]] = {}
    for (target_id, annotator), (value, _, _) in latest_annotations(store, VALIDATION_KIND).items():
        if isinstance(value.get("label"), int):
            out.setdefault(target_id, []).append((annotator, value["label"]))
    return {k: [label for _, label in sorted(v)] for k, v in out.items()}


@dataclass
class GoldSummary:
    """What applying the corrections did, per variant (one item's variant counts once)."""

    corrected: int = 0  # validated, the text changed
    kept: int = 0  # validated, kept as the machine wrote it
    conflicts: int = 0  # validated variants whose annotators disagreed (the latest won)
    machine: int = 0  # machine variants still not validated (no or only partial correction)
    labelled_only: int = 0  # of those, with 3-point labels recorded
    not_applied: list[str] = field(default_factory=list)  # corrections that cannot be applied (why)

    @property
    def validated(self) -> int:
        return self.corrected + self.kept

    def lines(self) -> list[str]:
        out = [f"{self.validated:>8} variants human-validated (is_human_validated: true): {self.corrected} corrected, "
               f"{self.kept} kept as is",
               f"{self.conflicts:>8} of them with a conflict between annotators (the latest correction won)",
               f"{self.machine:>8} machine variants still not validated"
               + (f" ({self.labelled_only} with 3-point labels only)" if self.labelled_only else "")]
        out += [f"warning: correction not applied: {why}" for why in self.not_applied]
        return out


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.split("\n") if line.strip()]


class Gold:
    """The store's corrections and validation labels, applied to item rows (`export --items`)."""

    def __init__(self, store: Store) -> None:
        self.corrections = corrections(store)
        self.labels = validation_labels(store)
        self.summary = GoldSummary()

    def for_targets(self, target_ids: Iterable[str]) -> list[Correction]:
        return [self.corrections[t] for t in target_ids if t in self.corrections]

    def labels_of(self, target_ids: Iterable[str]) -> list[int]:
        return [label for t in target_ids for label in self.labels.get(t, [])]

    def corrected_field(self, target_id: str, is_list: bool, original: str | Sequence[str]) -> str | list[str] | None:
        """A translation field group's corrected text (a list group: one element per line), or None when the
        target has no correction or it cannot replace the group (a list with another number of lines)."""
        c = self.corrections.get(target_id)
        if c is None or not isinstance(c.text, str):
            return None
        if not is_list:
            return c.text
        lines = _lines(c.text)
        if len(lines) != len(original):
            self.summary.not_applied.append(f"target {target_id}: {len(lines)} lines for a list of {len(original)} "
                                            f"(by {c.annotator}); the machine's list is kept")
            return None
        return lines

    def apply_item_variants(self, row: dict[str, Any], skip: Iterable[str] = ()) -> None:
        """Apply the corrections of the row's own machine variants (targets `item:<id>:<variant>`)."""
        skipped = set(skip)
        variants = row.get("variants") or {}
        for variant in _machine_variants(row, row.get("validated_by") or {}, variants):
            if variant in skipped:
                continue
            target = f"{ITEM_TARGET_PREFIX}{row['id']}:{variant}"
            c = self.corrections.get(target)
            changed = False
            if c is not None:
                entry = variants[variant]
                new = _corrected_entry(entry, c.text)
                if new is None:
                    self.summary.not_applied.append(f"target {target}: the correction does not fit the variant's "
                                                    f"fields (by {c.annotator}); the machine's text is kept")
                    c = None
                else:
                    changed = new != entry
                    variants[variant] = new
            self.mark(row, variant, [c] if c else [], self.labels_of([target]), complete=c is not None,
                      changed=changed)

    def mark(self, row: dict[str, Any], variant: str, decisions: Sequence[Correction], labels: Sequence[int], *,
             complete: bool, changed: bool) -> None:
        """Record a variant's validation on the row and count it."""
        if not decisions or not complete:
            self.summary.machine += 1
            if labels:
                self.summary.labelled_only += 1
                row["validation"] = {**_dict(row.get("validation")), variant: {"labels": list(labels)}}
            return
        last = max(decisions, key=lambda d: (d.at, d.annotator))
        row["validated_by"] = {**_dict(row.get("validated_by")), variant: last.annotator}
        marks = row.get("is_human_validated")
        if not isinstance(marks, Mapping):
            marks = {v: False for v in row.get("variants", {}) if v != "standard"} if marks is False else {}
        row["is_human_validated"] = {**marks, variant: True}
        entry = row["variants"].get(variant)
        if isinstance(entry, dict) and "is_human_validated" in entry:
            entry["is_human_validated"] = True
        row["validation"] = {**_dict(row.get("validation")), variant: {
            "annotator": last.annotator, "at": iso_utc(last.at), "corrected": changed, "labels": list(labels)}}
        self.summary.corrected += changed
        self.summary.kept += not changed
        self.summary.conflicts += any(d.conflict for d in decisions)


def _dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


def _corrected_entry(entry: Any, text: Any) -> Any:
    """An item variant with a correction applied: a string variant's text; an object variant's corrected
    fields (a list field from its lines). None when the correction does not fit the variant."""
    if not isinstance(entry, Mapping):
        return text if isinstance(text, str) else None
    if not isinstance(text, Mapping):
        return None
    shown = text_fields(entry)
    out = dict(entry)
    for key, value in text.items():
        if key not in shown or not isinstance(value, str):
            return None
        if isinstance(entry.get(key), list):
            lines = _lines(value)
            if len(lines) != len(entry[key]):
                return None
            out[key] = lines
        else:
            out[key] = value
    return out


# -- how many variants of the item set are human-validated (every report: human_validated.csv) ---------------

HUMAN_VALIDATED_COLUMNS = ("variant", "items", "human_validated", "machine", "corrected_in_review", "labels_0",
                           "labels_1", "labels_2", "labels_n", "label_mean")
HUMAN_VALIDATED_LEGEND = {
    "variant": "a variant of the items (standard, a dialect, a language)",
    "items": "items that have this variant",
    "human_validated": "items whose variant a person validated (validated_by names them: a data file's own record, "
                       "or a correction applied by `export --items`)",
    "machine": "items whose variant is a machine translation not validated yet (is_human_validated false)",
    "corrected_in_review": "items whose variant a reviewer corrected (the text changed): recorded in the items "
                           "(validation.corrected) or a correction stored in this experiment's review",
    "labels_0, labels_1, labels_2": "3-point validation labels given to the variant (BanglaVerse Table 9: 0 "
                                    "inaccurate, 1 acceptable with minor revisions, 2 flawless), over annotators",
    "labels_n": "validation labels given in all",
    "label_mean": "mean validation label (— without labels)",
}


def _target_variants(store: Store) -> dict[str, tuple[str, str]]:
    """target id -> (item id, variant) of the translation targets annotated in this store."""
    ids = annotated_targets(store, [CORRECTION_KIND, VALIDATION_KIND])
    out: dict[str, tuple[str, str]] = {}
    for target_id in ids:
        if target_id.startswith(ITEM_TARGET_PREFIX):
            item_id, _, variant = target_id[len(ITEM_TARGET_PREFIX):].rpartition(":")
            if item_id:
                out[target_id] = (item_id, variant)
    out.update(request_keys(store, [t for t in ids if t not in out]))
    return out


def human_validated_rows(store: Store) -> list[dict[str, Any]]:
    """Per variant of the stored items: how many items have it, are human-validated, machine, corrected in
    review, and the 3-point validation labels given (`HUMAN_VALIDATED_LEGEND`). Labels and corrections are
    read from the items (`validation`, written by `export --items`) and, for a variant whose item records
    none, from this store's own review annotations."""
    targets = _target_variants(store)
    store_corrected: set[tuple[str, str]] = set()
    for (target_id, _), (value, _, _) in latest_annotations(store, CORRECTION_KIND).items():
        if target_id in targets and value.get("changed"):
            store_corrected.add(targets[target_id])
    store_labels: dict[tuple[str, str], list[int]] = {}
    for target_id, labels in validation_labels(store).items():
        if target_id in targets:
            store_labels.setdefault(targets[target_id], []).extend(labels)
    counts: dict[str, dict[str, Any]] = {}

    def row(variant: str) -> dict[str, Any]:
        return counts.setdefault(variant, {"variant": variant, "items": 0, "human_validated": 0, "machine": 0,
                                           "corrected_in_review": 0, "labels": []})

    seen: set[tuple[str, str]] = set()
    for item in store.iter_items():
        machine = set(_machine_variants(item.metadata, {}, item.variants))
        records = _dict(item.metadata.get("validation"))
        for variant in item.variants:
            r = row(variant)
            record = _dict(records.get(variant))
            key = (item.id, variant)
            seen.add(key)
            r["items"] += 1
            r["human_validated"] += variant in item.validated_by
            r["machine"] += variant in machine and variant not in item.validated_by
            r["corrected_in_review"] += bool(record.get("corrected")) or key in store_corrected
            given = record.get("labels")
            r["labels"] += [x for x in given if isinstance(x, int)] if isinstance(given, list) else \
                store_labels.get(key, [])
    for key in {*store_corrected, *store_labels} - seen:  # a translation run's variants, before `export --items`
        r = row(key[1])
        r["corrected_in_review"] += key in store_corrected
        r["labels"] += store_labels.get(key, [])
    out = []
    for variant in sorted(counts, key=lambda v: (v != "standard", v)):
        r = counts[variant]
        labels = r.pop("labels")
        out.append({**r, **{f"labels_{k}": labels.count(k) for k in (0, 1, 2)}, "labels_n": len(labels),
                    "label_mean": sum(labels) / len(labels) if labels else None})
    return out
