"""Long text parts stored zstd-compressed (schema v9, issue 23 item 4): every read path gives what was given,
exports and reports are byte-identical whichever form the parts are in, and stores written before still open."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import zstandard

from dialectbias.judges import rlaif_json_schema
from dialectbias.providers._openai import OpenAIModelConfig
from dialectbias.run import RequestSpec
from dialectbias.store import SCHEMA_VERSION, Store
from dialectbias.store._content import PARTS, read_data, stored_data
from store_sql import connection, store_at_version

MODEL = OpenAIModelConfig(id="j", model="judge", base_url="http://127.0.0.1:1/v1")
BENGALI = "উপভাষার উত্তরটি প্রমিত উত্তরের সাথে তুলনা করে মূল তথ্যগুলো মিলিয়ে দেখুন। "


def judge_spec(system: str, user: str, i: int = 0) -> RequestSpec:
    return RequestSpec(stage="judge", model=MODEL, item_id=f"q{i}", variant="sylhet", template="t",
                       messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
                       json_schema=rlaif_json_schema())


def content_forms(store: Store) -> dict[str, str]:
    """kind -> the SQLite type(s) its `data` is stored as."""
    rows = connection(store).execute("SELECT kind, group_concat(DISTINCT typeof(data)) FROM content GROUP BY kind")
    return {r[0]: r[1] for r in rows}


def test_a_long_text_part_is_one_zstd_frame_and_reads_back_as_given(tmp_path: Path) -> None:
    system = f"{uuid.uuid4()} " + BENGALI * 40
    with Store.open(tmp_path / "s.sqlite") as store:
        store.add_requests(judge_spec(system, f"{uuid.uuid4()} " + BENGALI * 30, i).to_row() for i in range(3))
        assert content_forms(store) == {"text": "blob", "json": "text"}  # a schema is read by SQL: never packed
        raw = connection(store).execute("SELECT data, size FROM content WHERE kind='text' ORDER BY size DESC"
                                        ).fetchone()
        assert zstandard.ZstdDecompressor().decompress(raw[0]).decode() == system
        assert raw[1] == len(system.encode()) > 3 * len(raw[0])  # `size`: the text's bytes, as before v9
        PARTS._parts.clear()
        rows = store.pending_requests("judge", "j", limit=10)
        assert [store.resolve_messages(r["messages"])[0]["content"] for r in rows] == [system] * 3
        assert json.loads(rows[0]["json_schema"]) == rlaif_json_schema()


def test_what_does_not_shrink_stays_as_given() -> None:
    assert isinstance(stored_data("text", BENGALI * 30), bytes)
    short = uuid.uuid4().hex  # the frame's header costs more than zstd finds to save
    assert stored_data("text", short) == short
    assert stored_data("json", BENGALI * 30) == BENGALI * 30
    assert stored_data("image", b"\x89PNG" * 300) == b"\x89PNG" * 300
    assert stored_data("text", BENGALI * 30, compress=False) == BENGALI * 30
    assert read_data("text", BENGALI) == BENGALI
    assert read_data("image", b"\x89PNG") == b"\x89PNG"


def test_both_forms_in_one_store_read_the_same(tmp_path: Path) -> None:
    """Parts written uncompressed (`compress_parts` off, or by v8) and compressed ones side by side."""
    texts = [f"{uuid.uuid4()} " + BENGALI * (20 + i) for i in range(4)]
    with Store.open(tmp_path / "s.sqlite") as store:
        store.compress_parts = False
        store.add_requests([judge_spec(texts[0], texts[1], 0).to_row()])
        assert content_forms(store)["text"] == "text"
        store.compress_parts = True
        store.add_requests([judge_spec(texts[0], texts[2], 1).to_row(), judge_spec(texts[3], texts[1], 2).to_row()])
        assert content_forms(store)["text"] == "text,blob"
        PARTS._parts.clear()
        got = [[m["content"] for m in store.resolve_messages(r["messages"])]
               for r in store.pending_requests("judge", "j", limit=10)]
    assert sorted(got) == sorted([[texts[0], texts[1]], [texts[0], texts[2]], [texts[3], texts[1]]])


def v8_store(path: Path, system: str, user: str) -> dict[str, Any]:
    """A store as dialectbias wrote it at schema v8: the request's text parts as TEXT."""
    conn = store_at_version(path, 8)
    row = judge_spec(system, user).to_row()
    for part in row.pop("parts"):
        conn.execute("INSERT INTO content VALUES (?,?,?,?,?,?,?)", part.values())
    conn.execute(f"INSERT INTO requests ({','.join(row)}) VALUES ({','.join('?' * len(row))})", tuple(row.values()))
    conn.commit()
    conn.close()
    return row


def test_a_v8_store_opens_and_its_parts_read_as_before(tmp_path: Path) -> None:
    system, user = f"{uuid.uuid4()} " + BENGALI * 30, f"{uuid.uuid4()} " + BENGALI * 25
    v8_store(tmp_path / "s.sqlite", system, user)
    with Store.open(tmp_path / "s.sqlite") as store:
        assert store.schema_version == SCHEMA_VERSION >= 9
        assert content_forms(store)["text"] == "text"  # the migration rewrites nothing
        PARTS._parts.clear()
        (row,) = store.pending_requests("judge", "j")
        assert [m["content"] for m in store.resolve_messages(row["messages"])] == [system, user]


def _outputs(root: Path, tag: str) -> dict[str, bytes]:
    files = [*(root / f"export-{tag}").iterdir(), *(root / f"report-{tag}").glob("*.csv")]
    return {f.name: f.read_bytes() for f in files} | {"prompts": (root / f"prompts-{tag}.jsonl").read_bytes(),
                                                       "sent": (root / f"sent-{tag}.jsonl").read_bytes()}


def _report_and_export(cli: Any, project: Any, root: Path, tag: str) -> dict[str, bytes]:
    """The report's tables, the export and, as a provider gets them, every stored request's messages."""
    PARTS._parts.clear()
    with Store.open(project.store_path) as store:
        sent = [json.dumps([r[0], store.resolve_messages(r[1])], ensure_ascii=False)
                for r in store.query("SELECT request_id, messages FROM requests ORDER BY request_id")]
    (root / f"sent-{tag}.jsonl").write_text("\n".join(sent), encoding="utf-8")
    PARTS._parts.clear()
    for args in (("report", project.yaml_path, "--out", root / f"report-{tag}"),
                 ("export", project.yaml_path, "--format", "jsonl", "--out", root / f"export-{tag}",
                  "--inspect-dataset", root / f"prompts-{tag}.jsonl")):
        result = cli(*args)
        assert result.exit_code == 0, result.output
    return _outputs(root, tag)


def test_exports_and_reports_are_identical_with_and_without_compression(qa_server: Any, qa_project: Any, cli: Any,
                                                                       tmp_path: Path) -> None:
    """A real run (test server): its long parts are compressed; the same store with every part rewritten in
    the pre-v9 form exports (tables and every resolved prompt) and reports byte for byte the same."""
    project = qa_project(qa_server.base_url)
    result = cli("run", project.yaml_path, "--no-progress")
    assert result.exit_code == 0, result.output
    with Store.open(project.store_path) as store:
        conn = connection(store)
        assert content_forms(store)["text"] == "blob"
        n_parts = conn.execute("SELECT count(*) FROM content WHERE kind='text'").fetchone()[0]
        assert n_parts >= 2  # the judge system prompt of each dialect at least
    packed = _report_and_export(cli, project, tmp_path, "packed")
    with Store.open(project.store_path) as store:
        conn = connection(store)
        rows = conn.execute("SELECT sha256, data FROM content WHERE kind='text'").fetchall()
        conn.executemany("UPDATE content SET data=? WHERE sha256=?",
                         [(read_data("text", r[1]), r[0]) for r in rows])
        assert content_forms(store)["text"] == "text"
    plain = _report_and_export(cli, project, tmp_path, "plain")
    assert {"generations.jsonl", "judgments.jsonl", "prompts"} <= set(packed) and len(packed) >= 6
    assert packed == plain
    longest = max(len(line) for line in plain["sent"].decode().splitlines())
    assert longest > 2000  # a judge request, its system prompt read from a compressed part
