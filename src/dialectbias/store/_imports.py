"""Generations made elsewhere, stored as if a run had made them (`dialectbias import-generations`,
`run/_import.py`): what is stored under a request already, and the write of the imported answers."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from dialectbias.store._store import PARTS_KEY, REQUEST_COLUMNS, Store, dumps

#: the key of a request's meta naming the file its imported answer came from
IMPORTED_FROM = "imported_from"


@dataclass(frozen=True)
class StoredGeneration:
    """What the store holds under a request id: its meta and its result (`status` None: none yet)."""

    status: str | None
    output: str | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class ImportedGeneration:
    """An answer to store: the request row it answers (`RequestSpec.to_row()`, content parts included), the
    provenance merged into the request's meta (`imported_from`, …), and the answer with its usage."""

    request: dict[str, Any]
    provenance: dict[str, Any]
    output: str
    finish_reason: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0


def models_with_imports(store: Store, stage: str) -> list[str]:
    """Ids of the models with imported requests in the stage (sorted)."""
    rows = store.query(f"SELECT DISTINCT model_id FROM requests WHERE stage = ? AND "
                        f"json_extract(meta, '$.{IMPORTED_FROM}') IS NOT NULL ORDER BY model_id", (stage,))
    return [r[0] for r in rows]


def stored_generation(store: Store, request_id: str) -> StoredGeneration | None:
    """The request stored under this id with its result, or None when there is no such request."""
    rows = store.query("SELECT s.status, s.output, q.meta FROM requests q LEFT JOIN results s ON s.rid = q.rid "
                        "WHERE q.request_id = ?", (request_id,))
    if not rows:
        return None
    return StoredGeneration(rows[0]["status"], rows[0]["output"], json.loads(rows[0]["meta"] or "{}"))


def save_imported(store: Store, generations: Sequence[ImportedGeneration], completed_at: float) -> None:
    """Store the answers in one transaction: each request (with the provenance in its meta; a request already
    stored, e.g. one an earlier run left without a good result, keeps its row and gains the provenance) and
    its successful result, replacing a failed one."""
    insert = (f"INSERT OR IGNORE INTO requests ({','.join(REQUEST_COLUMNS)}) "
              f"VALUES ({','.join('?' * len(REQUEST_COLUMNS))})")
    with store.transaction():
        for g in generations:
            row = {**g.request, "meta": dumps({**json.loads(g.request["meta"]), **g.provenance})}
            store.add_content(row.get(PARTS_KEY, ()))
            existing = store._conn.execute("SELECT meta FROM requests WHERE request_id = ?",
                                           (row["request_id"],)).fetchone()
            store._conn.execute(insert, tuple(row[c] for c in REQUEST_COLUMNS))
            if existing is not None:
                store._conn.execute("UPDATE requests SET meta = ? WHERE request_id = ?",
                                    (dumps({**json.loads(existing[0]), **g.provenance}), row["request_id"]))
            store._conn.execute(
                "INSERT OR REPLACE INTO results (rid, request_id, status, output, finish_reason, tokens_in, "
                "tokens_out, latency_s, cache_hit, retries, error, completed_at) "
                "SELECT rid, request_id, 'ok', ?, ?, ?, ?, ?, 0, 0, NULL, ? FROM requests WHERE request_id = ?",
                (g.output, g.finish_reason, g.tokens_in, g.tokens_out, g.latency_s, completed_at,
                 row["request_id"]))
