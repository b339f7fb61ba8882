"""The store's SQLite connection, for tests that set up or inspect rows below the store's typed interface (a
migration, a row exactly as stored, a dump). The package itself never does this: only `dialectbias.store`
holds SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from dialectbias.store import Store


def connection(store: Store) -> sqlite3.Connection:
    """The store's connection (autocommit mode; rows are `sqlite3.Row`)."""
    return store._conn


def store_at_version(path: Path, version: int) -> sqlite3.Connection:
    """A new store file at `path` as dialectbias left it at schema `version` (migrations 1..version, no rows):
    the connection, for the test to add the old rows (it commits and closes)."""
    from dialectbias.store._schema import MIGRATIONS

    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for n in range(1, version + 1):
        conn.executescript(MIGRATIONS[n])
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    return conn


def insert_request(conn: sqlite3.Connection, request_id: str, stage: str, model_id: str, item_id: str, *,
                   variant: str = "sylhet", meta: str = "{}") -> None:
    """A request row as a test needs it: placeholder prompt fields (template `t`, hash `h`, no messages)."""
    conn.execute("INSERT INTO requests (request_id, stage, model_id, item_id, variant, template, prompt_hash, "
                 "messages, params, cache_key, created_at, meta) VALUES (?, ?, ?, ?, ?, 't', 'h', '[]', '{}', ?, 0, ?)",
                 (request_id, stage, model_id, item_id, variant, f"k{request_id}", meta))


def _keyed(conn: sqlite3.Connection, table: str) -> bool:
    """Whether `table` holds its rows by their request's integer key (`rid`, schema v15)."""
    return "rid" in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}


def insert_judgment(conn: sqlite3.Connection, request_id: str, judge_id: str, model_id: str, item_id: str, *,
                    variant: str = "sylhet", score: float | None = None, parse_status: str = "ok",
                    reason: str | None = None) -> None:
    """A judgment row of rubric `r` with an empty parsed answer (from schema v15 keyed by its request's `rid`:
    the request must be stored)."""
    keyed = _keyed(conn, "judgments")
    conn.execute(f"INSERT INTO judgments ({'rid, ' if keyed else ''}request_id, judge_id, model_id, item_id, variant, "
                 f"rubric, parsed, score, parse_status, reason) SELECT {'rid, ' if keyed else ''}?, ?, ?, ?, ?, 'r', "
                 f"'{{}}', ?, ?, ? {'FROM requests WHERE request_id = ?' if keyed else ''}",
                 (request_id, judge_id, model_id, item_id, variant, score, parse_status, reason,
                  *((request_id,) if keyed else ())))


def leave_current(conn: sqlite3.Connection, request_id: str) -> None:
    """Take a request out of the current set (by its key from schema v15, by its id before)."""
    keyed = _keyed(conn, "current_requests")
    conn.execute("DELETE FROM current_requests WHERE rid = (SELECT rid FROM requests WHERE request_id = ?)" if keyed
                 else "DELETE FROM current_requests WHERE request_id = ?", (request_id,))


def query_plan(store: Store, sql: str, params: tuple[object, ...] = ()) -> str:
    """SQLite's plan for `sql` on the store, its steps joined by ` | `."""
    return " | ".join(r[3] for r in connection(store).execute(f"EXPLAIN QUERY PLAN {sql}", params))


#: a v15 store made v14 again: the tables keyed by request id, the v14 indexes and triggers (no row changes)
DOWNGRADE_TO_V14 = """
CREATE TABLE requests_o (
    request_id TEXT PRIMARY KEY, stage TEXT NOT NULL, model_id TEXT NOT NULL,
    item_id TEXT NOT NULL, variant TEXT NOT NULL, refs TEXT NOT NULL DEFAULT '[]',
    template TEXT NOT NULL, prompt_hash TEXT NOT NULL, messages TEXT NOT NULL,
    params TEXT NOT NULL, json_schema TEXT, cache_key TEXT NOT NULL,
    meta TEXT NOT NULL DEFAULT '{}', created_at REAL NOT NULL);
INSERT INTO requests_o SELECT request_id, stage, model_id, item_id, variant, refs, template, prompt_hash, messages,
    params, json_schema, cache_key, meta, created_at FROM requests ORDER BY rid;
CREATE TABLE results_o (
    request_id TEXT PRIMARY KEY REFERENCES requests_o (request_id), status TEXT NOT NULL,
    output TEXT, finish_reason TEXT, tokens_in INTEGER NOT NULL DEFAULT 0,
    tokens_out INTEGER NOT NULL DEFAULT 0, latency_s REAL NOT NULL DEFAULT 0,
    cache_hit INTEGER NOT NULL DEFAULT 0, retries INTEGER NOT NULL DEFAULT 0,
    error TEXT, completed_at REAL NOT NULL);
INSERT INTO results_o SELECT request_id, status, output, finish_reason, tokens_in, tokens_out, latency_s, cache_hit,
    retries, error, completed_at FROM results ORDER BY completed_at;
CREATE TABLE judgments_o (
    request_id TEXT PRIMARY KEY REFERENCES requests_o (request_id), judge_id TEXT NOT NULL,
    model_id TEXT NOT NULL, item_id TEXT NOT NULL, variant TEXT NOT NULL, rubric TEXT NOT NULL,
    raw_output TEXT, parsed TEXT, score REAL, confidence INTEGER, parse_status TEXT NOT NULL,
    needs_review INTEGER NOT NULL DEFAULT 0, flagged INTEGER NOT NULL DEFAULT 0, reason TEXT,
    source_request_id TEXT, checks TEXT NOT NULL DEFAULT '{}', flags TEXT NOT NULL DEFAULT '[]',
    clipped TEXT NOT NULL DEFAULT '{}', scoring TEXT);
INSERT INTO judgments_o SELECT request_id, judge_id, model_id, item_id, variant, rubric, raw_output, parsed, score,
    confidence, parse_status, needs_review, flagged, reason, source_request_id, checks, flags, clipped, scoring
    FROM judgments ORDER BY rid;
CREATE TABLE current_o (request_id TEXT PRIMARY KEY, stage TEXT NOT NULL, model_id TEXT NOT NULL) WITHOUT ROWID;
INSERT INTO current_o SELECT r.request_id, c.stage, c.model_id FROM current_requests c JOIN requests r USING (rid);
CREATE TABLE compiled_o (fingerprint TEXT NOT NULL, request_id TEXT NOT NULL, PRIMARY KEY (fingerprint, request_id))
    WITHOUT ROWID;
INSERT INTO compiled_o SELECT c.fingerprint, r.request_id FROM compiled_requests c JOIN requests r USING (rid);
DROP TABLE compiled_requests; DROP TABLE current_requests; DROP TABLE judgments; DROP TABLE results;
DROP TABLE requests;
ALTER TABLE requests_o RENAME TO requests; ALTER TABLE results_o RENAME TO results;
ALTER TABLE judgments_o RENAME TO judgments; ALTER TABLE current_o RENAME TO current_requests;
ALTER TABLE compiled_o RENAME TO compiled_requests;
CREATE INDEX requests_stage_model ON requests (stage, model_id);
CREATE INDEX requests_item ON requests (item_id, variant);
CREATE INDEX requests_retries ON requests (stage, model_id) WHERE json_extract(meta, '$.retry_of') IS NOT NULL;
CREATE INDEX results_status ON results (status);
CREATE INDEX results_status_of ON results (request_id, status);
CREATE INDEX judgments_key ON judgments (judge_id, model_id, variant, item_id, request_id, parse_status, flagged,
    needs_review, reason, flags);
CREATE INDEX judgments_scoring ON judgments (judge_id, scoring);
CREATE INDEX current_requests_stage_model ON current_requests (stage, model_id);
CREATE TRIGGER requests_are_current AFTER INSERT ON requests BEGIN
    INSERT OR IGNORE INTO current_requests VALUES (new.request_id, new.stage, new.model_id);
END;
{current_set_triggers}
DELETE FROM meta WHERE key GLOB 'ok_results_written:*';
UPDATE meta SET value = '14' WHERE key = 'schema_version';
"""


def downgrade_to_v14(path: Path) -> None:
    """Make the v15 store at `path` a v14 store, as dialectbias up to v14 wrote it (the same rows)."""
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys=OFF")
    from dialectbias.store._schema import MIGRATIONS

    triggers = MIGRATIONS[13].split("ADD COLUMN applied TEXT;")[1]  # v13's, as v14 had them
    script = DOWNGRADE_TO_V14.replace("{current_set_triggers}", triggers)
    conn.executescript(f"BEGIN; {script} COMMIT;")
    conn.close()


def reorder_keys(conn: sqlite3.Connection, order: str) -> None:
    """Give the judged requests new keys (schema v15) in the order `order` (SQL over the judgments, alias `j`),
    with their results, judgments and current and compiled entries: the same rows, stored in that order (foreign
    keys are off meanwhile: the keys move one table at a time)."""
    enforced = conn.execute("PRAGMA foreign_keys").fetchone()[0]
    conn.execute("PRAGMA foreign_keys=OFF")
    conn.executescript(f"""
        CREATE TEMP TABLE perm AS SELECT j.rid AS old, (SELECT max(rid) FROM requests) + row_number()
            OVER (ORDER BY {order}) AS new FROM judgments j;
        UPDATE requests SET rid = (SELECT new FROM temp.perm WHERE old = rid) WHERE rid IN (SELECT old FROM temp.perm);
        UPDATE results SET rid = (SELECT new FROM temp.perm WHERE old = rid) WHERE rid IN (SELECT old FROM temp.perm);
        UPDATE judgments SET rid = (SELECT new FROM temp.perm WHERE old = rid) WHERE rid IN (SELECT old FROM temp.perm);
        UPDATE current_requests SET rid = (SELECT new FROM temp.perm WHERE old = rid)
            WHERE rid IN (SELECT old FROM temp.perm);
        UPDATE compiled_requests SET rid = (SELECT new FROM temp.perm WHERE old = rid)
            WHERE rid IN (SELECT old FROM temp.perm);
        DROP TABLE temp.perm;
    """)
    conn.execute(f"PRAGMA foreign_keys={'ON' if enforced else 'OFF'}")
