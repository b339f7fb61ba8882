"""What the review queue kinds read to list their targets: the items' variants and domains, a stage's
current outputs, model answers to images, the outputs a judge request judged, and the images themselves."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from dialectbias.store._judgments import REF_OUTPUTS_SQL
from dialectbias.store._store import REASK_SUFFIX, Store


@dataclass(frozen=True)
class ItemRecord:
    """An item's stored JSON columns, decoded (what review reads of it, without validating an `Item`)."""

    item_id: str
    variants: dict[str, Any]
    validated_by: dict[str, Any]
    metadata: dict[str, Any]


@dataclass(frozen=True)
class StageOutput:
    """A current request of a stage with an ok result: its output and decoded `meta`."""

    request_id: str
    item_id: str
    variant: str
    output: str | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class ImageAnswer:
    """A model's answer to a request whose messages carry an image part (`messages`: the stored JSON)."""

    request_id: str
    item_id: str
    variant: str
    model_id: str
    messages: str
    output: str | None


def item_variants(store: Store, item_id: str | None = None) -> dict[str, dict[str, Any]]:
    """item id -> its variants (of every item, or of `item_id` alone)."""
    if item_id is None:
        rows = store.query("SELECT item_id, variants FROM items")
    else:
        rows = store.query("SELECT item_id, variants FROM items WHERE item_id = ?", (item_id,))
    return {r[0]: json.loads(r[1]) for r in rows}


def first_item_variants(store: Store, limit: int = 50) -> Iterator[dict[str, Any]]:
    """The variants of the first `limit` items in storage order (enough to tell the items' language)."""
    for (variants,) in store.query("SELECT variants FROM items LIMIT ?", (limit,)):
        yield json.loads(variants)


def item_domains(store: Store) -> dict[str, str]:
    """item id -> domain ("" when none)."""
    return {r[0]: r[1] or "" for r in store.query("SELECT item_id, domain FROM items")}


def item_records(store: Store) -> list[ItemRecord]:
    """Every item's variants, `validated_by` and metadata, by item id."""
    rows = store.query("SELECT item_id, variants, validated_by, metadata FROM items ORDER BY item_id")
    return [ItemRecord(r[0], json.loads(r[1]), json.loads(r[2]), json.loads(r[3])) for r in rows]


def stage_outputs(store: Store, stage: str) -> Iterator[StageOutput]:
    """The current requests of `stage` with an ok, non-blank output, by (item, variant, request id)."""
    rows = store.query(
        "SELECT q.request_id, q.item_id, q.variant, s.output, q.meta FROM current_requests c "
        "JOIN requests q ON q.rid = c.rid JOIN results s ON s.rid = q.rid "
        "WHERE q.stage = ? AND s.status = 'ok' AND trim(coalesce(s.output, '')) != '' "
        "ORDER BY q.item_id, q.variant, q.request_id", (stage,))
    for r in rows:
        yield StageOutput(r[0], r[1], r[2], r[3], json.loads(r[4] or "{}"))


# current model requests (no judge's, no re-ask) with an ok result whose messages carry an image part
_IMAGE_ANSWERS = (
    "SELECT q.request_id, q.item_id, q.variant, q.model_id, q.messages, s.output FROM current_requests c "
    "JOIN requests q ON q.rid = c.rid JOIN results s ON s.rid = q.rid "
    "WHERE s.status = 'ok' AND q.stage != ? AND q.stage NOT GLOB ? AND q.messages LIKE '%\"type\":\"image\"%'")


def image_answers(store: Store, judge_stage: str, request_id: str | None = None) -> list[ImageAnswer]:
    """Every current answer to a request with an image (stage not `judge_stage`, not a re-ask), by (item,
    variant, model, request id); or the one of `request_id`."""
    params: tuple[Any, ...] = (judge_stage, f"*{REASK_SUFFIX}")
    if request_id is None:
        sql = f"{_IMAGE_ANSWERS} ORDER BY q.item_id, q.variant, q.model_id, q.request_id"
    else:
        sql, params = f"{_IMAGE_ANSWERS} AND q.request_id = ?", (*params, request_id)
    return [ImageAnswer(*r) for r in store.query(sql, params)]


def ref_outputs(store: Store, request_id: str) -> list[str | None]:
    """The outputs of the requests a request refers to (`refs`, in order; None where there is no result)."""
    rows = store.query(f"SELECT ({REF_OUTPUTS_SQL}) FROM requests q WHERE q.request_id = ?", (request_id,))
    return json.loads(rows[0][0]) if rows else []


def request_keys(store: Store, request_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    """request id -> (item id, variant) of the given requests that exist."""
    out: dict[str, tuple[str, str]] = {}
    for i in range(0, len(request_ids), 500):
        chunk = request_ids[i:i + 500]
        rows = store.query(f"SELECT request_id, item_id, variant FROM requests WHERE request_id IN "
                           f"({','.join('?' * len(chunk))})", chunk)
        out.update({r[0]: (r[1], r[2]) for r in rows})
    return out


def annotated_judgment_variants(store: Store) -> dict[str, str]:
    """judge request id -> the variant of every stored judgment a human annotation targets (the report's
    agreement reads these only: a store's every judgment would grow its memory with the study, issue 23)."""
    return {r[0]: r[1] for r in store.query(
        "SELECT q.request_id, j.variant FROM requests q CROSS JOIN judgments j ON j.rid = q.rid "
        "WHERE q.request_id IN (SELECT target_id FROM annotations)")}


def stored_image(store: Store, sha256: str) -> tuple[str, bytes] | None:
    """(mime, bytes) of a stored image part; None when the hash is not an image of the `content` table."""
    rows = store.query("SELECT mime, data FROM content WHERE sha256 = ? AND kind = 'image'", (sha256,))
    return (str(rows[0][0]), bytes(rows[0][1])) if rows else None
