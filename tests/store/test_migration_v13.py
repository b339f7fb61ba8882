"""Migration 13 (issue 23): `current_stages.applied`. A run whose compiled set is already a (stage, model)'s
current set, with nothing changed since, does not apply it again (at 10× the paper every resume looked 2.8M
ids up and checked the stage's rows against its set); tests/store/test_current_sets.py has the rest. A v12
store starts with no set applied: its first run applies each set once, as before."""

from __future__ import annotations

from pathlib import Path

from dialectbias.store import Store
from store_sql import connection, insert_request, store_at_version


def test_a_v12_store_starts_with_no_set_applied(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    conn = store_at_version(path, 12)
    insert_request(conn, "g1", "generate", "m", "q1")
    conn.execute("INSERT INTO compiled VALUES ('fp', 'generate', 'm', 1, 0, '{}', 0)")
    conn.execute("INSERT INTO compiled_requests VALUES ('fp', 'g1')")
    conn.execute("INSERT INTO current_stages VALUES ('generate', 'm', 'fp', 0)")
    conn.commit()
    conn.close()
    with Store.open(path) as store:
        assert store.schema_version >= 13
        assert store.query("SELECT applied FROM current_stages")[0][0] is None
        for applies in (True, False):  # the first use applies the set, the second finds it applied
            trace: list[str] = []
            connection(store).set_trace_callback(trace.append)
            assert store.use_compiled("fp") is not None
            connection(store).set_trace_callback(None)
            assert any("INTO current_requests" in sql for sql in trace) == applies
            assert {r[0] for r in store.query(
                "SELECT r.request_id FROM current_requests c JOIN requests r USING (rid)")} == {"g1"}
