"""Current rows (issue 6.8): which requests belong to the experiment as it is now, kept in the store."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import PARTS_KEY, Store
from dialectbias.store._schema import MIGRATIONS
from store_sql import connection

MODEL = OpenAIModelConfig(id="m", model="test-model", base_url="http://127.0.0.1:1/v1")
JUDGE = OpenAIModelConfig(id="j", model="judge-model", base_url="http://127.0.0.1:1/v1")


def gen(text: str, item: str = "q1") -> dict[str, Any]:
    return RequestSpec(stage="generate", model=MODEL, item_id=item, variant="standard", template="t",
                       messages=[{"role": "user", "content": text}]).to_row()


def judge(*gens: dict[str, Any]) -> dict[str, Any]:
    return RequestSpec(stage="judge", model=JUDGE, item_id=gens[0]["item_id"], variant="sylhet",
                       template="t", messages=[{"role": "user", "content": "/".join(g["request_id"] for g in gens)}],
                       refs=[g["request_id"] for g in gens], meta={"model_id": "m"}).to_row()


def reask(first: dict[str, Any]) -> dict[str, Any]:
    """A re-ask as the executor stores it: stage "<stage>:reask", meta.reask_of and refs = the first."""
    return RequestSpec(stage="judge:reask", model=JUDGE, item_id=first["item_id"], variant=first["variant"],
                       template="t", messages=[{"role": "user", "content": "again " + first["request_id"]}],
                       refs=[first["request_id"]], meta={"reask_of": first["request_id"]}).to_row()


def current(store: Store) -> set[str]:
    return {r[0] for r in store.query("SELECT r.request_id FROM current_requests c JOIN requests r USING (rid)")}


@pytest.fixture
def store(tmp_path: Path):
    with Store.open(tmp_path / "run.sqlite") as s:
        yield s


def test_recompiling_supersedes_the_old_row_and_what_was_built_on_it(store: Store) -> None:
    old, kept = gen("পুরনো প্রশ্ন"), gen("প্রশ্ন ২", item="q2")
    j_old, j_kept = judge(old), judge(kept)
    store.add_requests([old, kept], current=("generate", "m"))
    store.add_requests([j_old, j_kept], current=("judge", "j"))
    new = gen("নতুন প্রশ্ন")
    store.add_requests([new, kept], current=("generate", "m"))  # item q1's text was edited
    assert current(store) == {new["request_id"], kept["request_id"], j_kept["request_id"]}
    assert store.query("SELECT count(*) FROM requests")[0][0] == 5  # superseded rows are kept


def test_a_reask_is_current_exactly_when_its_first_request_is(store: Store) -> None:
    g = gen("প্রশ্ন")
    first = judge(g)
    store.add_requests([g], current=("generate", "m"))
    store.add_requests([first], current=("judge", "j"))
    again = reask(first)
    store.write([("requests", again)])
    assert again["request_id"] in current(store)
    store.add_requests([], current=("judge", "j"))  # the judge no longer asks for it
    assert current(store) == {g["request_id"]}
    store.add_requests([first], current=("judge", "j"))  # asked again (e.g. a reverted edit)
    assert current(store) == {g["request_id"], first["request_id"], again["request_id"]}


def test_reusing_a_compiled_set_makes_it_current_again(store: Store) -> None:
    a, b = gen("ক"), gen("খ")
    store.add_requests([a], fingerprint="fa", current=("generate", "m"))
    store.save_compiled("fa", "generate", "m", 1, 0, {})
    store.add_requests([b], fingerprint="fb", current=("generate", "m"))
    assert current(store) == {b["request_id"]}
    assert store.use_compiled("fa") is not None
    assert current(store) == {a["request_id"]}


def test_retiring_a_model_supersedes_its_rows_and_the_judgments_of_them(store: Store) -> None:
    g = gen("প্রশ্ন")
    j = judge(g)
    store.add_requests([g], current=("generate", "m"))
    store.add_requests([j], current=("judge", "j"))
    assert store.retire_current([("generate", "other"), ("judge", "j")]) == 1
    assert current(store) == set()
    assert set(store.current_stages()) == {("judge", "j")}


def test_compile_time_is_recorded_per_stage_and_model(store: Store) -> None:
    assert store.current_stages() == {}
    store.add_requests([gen("প্রশ্ন")], current=("generate", "m"))
    assert set(store.current_stages()) == {("generate", "m")}


def old_store(path: Path, version: int = 2) -> sqlite3.Connection:
    """A store as dialectbias wrote it at schema `version`."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    for v in range(1, version + 1):
        conn.executescript(MIGRATIONS[v])
    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(version),))
    return conn


def insert(conn: sqlite3.Connection, row: dict[str, Any], created_at: float) -> None:
    row = {**{k: v for k, v in row.items() if k != PARTS_KEY}, "created_at": created_at}  # short texts: no parts
    conn.execute(f"INSERT INTO requests ({','.join(row)}) VALUES ({','.join('?' * len(row))})",
                 tuple(row.values()))


def test_migration_makes_each_stages_latest_compiled_set_current(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = old_store(path)
    old, new = gen("পুরনো"), gen("নতুন")
    j_old, j_new = judge(old), judge(new)
    for fp, rows, t in (("f1", [old], 1.0), ("f2", [new], 2.0), ("j1", [j_old], 1.5), ("j2", [j_new], 2.5)):
        for row in rows:
            insert(conn, row, t)
            conn.execute("INSERT INTO compiled_requests VALUES (?, ?)", (fp, row["request_id"]))
        conn.execute("INSERT INTO compiled VALUES (?, ?, ?, 1, 0, '{}', ?)", (fp, rows[0]["stage"],
                                                                            rows[0]["model_id"], t))
    conn.close()
    with Store.open(path) as store:
        assert current(store) == {new["request_id"], j_new["request_id"]}
        assert store.current_stages() == {("generate", "m"): 2.0, ("judge", "j"): 2.5}


def test_migration_without_compiled_sets_keeps_every_request_current(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"  # e.g. hf:// data: no compiled set was ever recorded
    conn = old_store(path)
    a, b = gen("ক"), gen("খ", item="q2")
    insert(conn, a, 1.0)
    insert(conn, b, 3.0)
    conn.close()
    with Store.open(path) as store:
        assert current(store) == {a["request_id"], b["request_id"]}
        assert store.current_stages() == {("generate", "m"): 3.0}


def test_migration_keeps_reasks_of_current_requests(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    conn = old_store(path, version=3)
    g = gen("প্রশ্ন")
    first = judge(g)
    for row in (g, first, reask(first)):
        insert(conn, row, 1.0)
    conn.close()
    with Store.open(path) as store:
        assert len(current(store)) == 3
        assert current(store) == {r["request_id"] for r in (g, first, reask(first))}


def test_pruning_follows_chains_and_any_ref_and_reads_requests_in_storage_order(store: Store) -> None:
    """What was built on a superseded request goes, pass after pass (a judgment of an old generation, then a
    request built on that judgment, and the judgment's re-ask), also when the superseded one is its second ref;
    each pass reads `requests` once in storage order, never a row lookup per current request (issue 23)."""
    a, b, c = gen("ক"), gen("খ", item="q2"), gen("গ", item="q3")
    store.add_requests([a, b, c], current=("generate", "m"))
    pair, alone = judge(a, b), judge(c)
    store.add_requests([pair, alone], current=("judge", "j"))
    again = reask(pair)
    store.write([("requests", again)])
    on_top = RequestSpec(stage="meta", model=JUDGE, item_id="q1", variant="sylhet", template="t",
                         messages=[{"role": "user", "content": "of " + pair["request_id"]}],
                         refs=[pair["request_id"]]).to_row()
    store.add_requests([on_top], current=("meta", "j"))
    trace: list[str] = []
    connection(store).set_trace_callback(trace.append)
    store.add_requests([a, c], current=("generate", "m"))  # b regenerated away: pair's second ref
    connection(store).set_trace_callback(None)
    assert current(store) == {a["request_id"], c["request_id"], alone["request_id"]}
    prune = next(sql for sql in trace if sql.startswith("INSERT INTO temp.orphans"))
    steps = [r[3] for r in connection(store).execute(f"EXPLAIN QUERY PLAN {prune}")]
    # requests read in rid order: scanned, or the current keys' rows looked up in key order; the superseded
    # ids come from their own keys, never a scan of the requests' id index
    assert steps[0] in ("SCAN r", "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)"), steps
    assert not any("USING INDEX" in s and " r " in f"{s} " for s in steps), steps
    assert not any("sqlite_autoindex_requests_1" in s for s in steps), steps
    assert sum(sql.startswith("INSERT INTO temp.orphans") for sql in trace) == 3  # pair+again, on_top, none


# -- schema 13: a set still applied as it was is not applied again (issue 23) --------------------------------

def _compiled(store: Store, fingerprint: str, rows: list[dict[str, Any]], stage: str, model: str) -> None:
    store.add_requests(rows, fingerprint=fingerprint, current=(stage, model))
    store.save_compiled(fingerprint, stage, model, len(rows), 0, {})


def _applies(store: Store, fingerprint: str) -> bool:
    """Whether `use_compiled` wrote the set into `current_requests` (as against only marking it compiled)."""
    trace: list[str] = []
    connection(store).set_trace_callback(trace.append)
    assert store.use_compiled(fingerprint) is not None
    connection(store).set_trace_callback(None)
    return any("INTO current_requests" in sql for sql in trace)


def _compiled_at(store: Store, stage: str) -> float:
    return store.current_stages()[(stage, MODEL.id)]


def test_an_applied_set_is_only_marked_compiled(store: Store) -> None:
    rows = [gen("প্রশ্ন ১"), gen("প্রশ্ন ২", item="q2")]
    _compiled(store, "fp", rows, "generate", MODEL.id)
    before = _compiled_at(store, "generate")
    assert not _applies(store, "fp")
    assert current(store) == {r["request_id"] for r in rows}
    assert _compiled_at(store, "generate") > before  # `status` and the explorer see the run's compile


def test_whatever_enters_or_leaves_the_set_makes_the_next_run_apply_it_exactly(store: Store, tmp_path: Path) -> None:
    rows = [gen("প্রশ্ন ১"), gen("প্রশ্ন ২", item="q2")]
    ids = {r["request_id"] for r in rows}
    _compiled(store, "fp", rows, "generate", MODEL.id)
    store.add_requests([gen("imported", item="q3")])  # enters (e.g. an imported generation): current by trigger
    assert _applies(store, "fp") and current(store) == ids
    assert not _applies(store, "fp")
    store.retire_current([])  # leaves: the stage is no longer in the experiment
    assert current(store) == set()
    assert _applies(store, "fp") and current(store) == ids
    with sqlite3.connect(tmp_path / "run.sqlite") as other:  # another connection: the trigger is in the file
        other.execute("DELETE FROM current_requests WHERE rid = (SELECT rid FROM requests WHERE request_id = ?)",
                      (rows[0]["request_id"],))
    assert _applies(store, "fp") and current(store) == ids
    assert not _applies(store, "fp")


def test_a_pruned_set_downstream_is_applied_again(store: Store) -> None:
    """Recompiling the generations supersedes the judge requests built on the old ones: the judge's set is no
    longer as applied, so reusing it puts them back, as before this schema."""
    old, kept = gen("পুরনো"), gen("রাখা", item="q2")
    j_old, j_kept = judge(old), judge(kept)
    _compiled(store, "gen-a", [old, kept], "generate", MODEL.id)
    _compiled(store, "judge-a", [j_old, j_kept], "judge", "j")
    _compiled(store, "gen-b", [gen("নতুন"), kept], "generate", MODEL.id)
    assert j_old["request_id"] not in current(store)
    assert _applies(store, "gen-a") and _applies(store, "judge-a")
    assert {j_old["request_id"], j_kept["request_id"], old["request_id"]} <= current(store)
