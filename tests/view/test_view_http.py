"""The explorer over FastAPI's TestClient (issue 22 item 1): the tables are the report's CSVs character for
character, a cell leads to exactly the answers behind it, the evidence API returns what the store holds, long
texts are capped, markup is escaped, Urdu is right to left, two experiments and two models are compared with
the flipped verdicts, the store is never written, and beyond loopback every request needs the token."""

from __future__ import annotations

import csv
import hashlib
import re
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the explorer needs the `review` extra (fastapi, uvicorn)")

from fastapi.testclient import TestClient

from dialectbias.store import RunLock, Store
from dialectbias.view import create_app, load_experiment_read_only
from dialectbias.view._text import PAGE_CHARS, PREVIEW_CHARS, shown_text


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def client(view_study: Any) -> TestClient:
    loaded = [load_experiment_read_only(view_study.a.yaml_path), load_experiment_read_only(view_study.b.yaml_path)]
    return TestClient(create_app(loaded), base_url="http://localhost")


def _csv(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(encoding="utf-8", newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def test_tables_are_the_report_csvs(client: TestClient, view_study: Any) -> None:
    for key, report in (("viewa", view_study.report_a),):
        data = client.get("/api/tables", params={"experiment": key}).json()
        names = {t["name"] for t in data["tables"]}
        assert names == {p.stem for p in report.glob("*.csv")}
        for t in data["tables"]:
            columns, rows = _csv(report / f"{t['name']}.csv")
            assert (t["columns"], t["rows"]) == (columns, rows), t["name"]
    page = client.get("/exp/viewa").text
    columns, rows = _csv(view_study.report_a / "qa_bias_model_by_dialect.csv")
    section = page.split('id="t-qa_bias_model_by_dialect"')[1].split("</section>")[0]
    shown = [re.findall(r'data-v="([^"]*)"', tr) for tr in section.split("<tbody>")[1].split("</tr>")[:-1]]
    assert shown == rows  # every figure on the page is the CSV's


def test_server_side_sort_and_filter(client: TestClient, view_study: Any) -> None:
    columns, rows = _csv(view_study.report_a / "qa_bias_gap.csv")
    page = client.get("/exp/viewa", params={"table": "qa_bias_gap", "sort": "gap", "desc": "1",
                                            "f.model": "model-a"}).text
    section = page.split('id="t-qa_bias_gap"')[1].split("</section>")[0]
    shown = [re.findall(r'data-v="([^"]*)"', tr) for tr in section.split("<tbody>")[1].split("</tr>")[:-1]]
    i, m = columns.index("gap"), columns.index("model")
    want = sorted((r for r in rows if r[m] == "model-a"), key=lambda r: float(r[i]), reverse=True)
    assert shown == want and len(want) >= 2


def test_a_cell_leads_to_its_answers(client: TestClient, view_study: Any) -> None:
    page = client.get("/exp/viewa").text
    section = page.split('id="t-qa_bias_model_by_dialect"')[1].split("</section>")[0]
    links = set(re.findall(r'href="(/exp/viewa/items\?[^"]*)"', section))
    assert "/exp/viewa/items?model=model-a&amp;variant=chittagong" in links
    items = client.get("/exp/viewa/items", params={"model": "model-a", "variant": "chittagong"}).text
    found = re.findall(r"item_id=(q\d\d)&amp;variant=(\w+)&amp;model=([\w-]+)", items)
    assert sorted(found) == [(f"q0{i}", "chittagong", "model-a") for i in range(1, 5)]
    with Store.open(view_study.a.store_path, create=False) as store:  # the cell's mean is these answers' scores
        scores = {r[0]: r[1] for r in store.query(
            "SELECT item_id, score FROM judgments WHERE model_id='model-a' AND variant='chittagong'")}
        human = store.query("SELECT json_extract(value, '$.score') FROM annotations")[0][0]
    scores["q03"] = human
    columns, rows = _csv(view_study.report_a / "qa_bias_model_by_dialect.csv")
    row = next(r for r in rows if r[0] == "model-a")
    assert float(row[columns.index("chittagong")]) == pytest.approx(sum(scores.values()) / 4)


def test_evidence_api_matches_the_store(client: TestClient, view_study: Any) -> None:
    params = {"experiment": "viewa", "item_id": "q03", "variant": "chittagong", "model": "model-a"}
    data = client.get("/api/evidence", params=params).json()
    with Store.open(view_study.a.store_path, create=False) as store:
        gen = store.query("SELECT r.request_id, s.output FROM requests r JOIN results s USING (request_id) WHERE "
                          "r.stage='generate' AND r.model_id='model-a' AND r.item_id='q03' "
                          "AND r.variant='chittagong'")[0]
        judged = store.query("SELECT request_id, judge_id, score, parsed FROM judgments WHERE model_id='model-a' "
                             "AND item_id='q03' AND variant='chittagong'")[0]
        human = store.query("SELECT json_extract(value, '$.score') FROM annotations")[0][0]
    assert data["request_id"] == gen[0] and data["output"] == gen[1]
    assert "খুলনা" not in data["prompt"] and "জিলার" in data["prompt"]  # the chittagong question as sent
    assert data["model"]["id"] == "model-a" and data["model"]["provider"] == "openai"
    (j,) = data["judgments"]
    assert (j["request_id"], j["judge_id"], j["score"]) == (judged[0], judged[1], judged[2])
    assert j["parsed"] == __import__("json").loads(judged[3])
    assert j["human_score"] == human and j["final_score"] == human and j["overrides"][0]["annotator"] == "rahim"
    assert "checks" in j and "flags" in j and "clipped" in j and j["raw_output"]
    one = client.get("/api/evidence", params={k: v for k, v in params.items() if k != "experiment"})
    assert one.status_code == 400 and "experiment=" in one.json()["detail"]  # two experiments loaded
    assert client.get("/api/evidence", params={**params, "item_id": "nope"}).status_code == 404
    assert client.get("/api/evidence", params={**params, "model": "nope"}).json()["detail"].startswith("no answer")
    missing = client.get("/api/evidence", params={"experiment": "viewa", "item_id": "q01"})
    assert missing.status_code == 400 and missing.json() == {"detail": "missing parameter(s): variant, model"}
    assert client.get("/api/evidence", params={**params, "experiment": "zz"}).status_code == 404


def test_item_page_escapes_caps_and_sets_direction(client: TestClient, view_study: Any) -> None:
    page = client.get("/exp/viewa/item", params={"item_id": "q01", "variant": "chittagong", "model": "model-a"})
    assert page.status_code == 200
    assert "<script>window" not in page.text and "&lt;script&gt;window.__xss" in page.text
    assert 'lang="bn"' in page.text and "Standard: standard" in page.text and "judge-1" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    urdu = client.get("/exp/viewa/item", params={"item_id": "q03", "variant": "urdu", "model": "model-a"}).text
    assert re.search(r'lang="ur" dir="rtl">یہ ایک سوال ہے؟', urdu)
    long = client.get("/exp/viewa/item", params={"item_id": "q04", "variant": "sylhet", "model": "model-a"})
    whole = ("দীর্ঘ " * 6000).strip()
    assert whole not in long.text and "দীর্ঘ " * 3000 in long.text  # 36,000 characters capped at PAGE_CHARS
    assert "Shown: the first 20000 characters" in long.text and "show all (36000 characters)" in long.text
    link = re.search(r'href="(/api/text\?experiment=viewa&amp;request_id=\w+&amp;part=prompt)"', long.text)
    assert link is not None
    full = client.get(link.group(1).replace("&amp;", "&"))
    assert full.headers["content-type"].startswith("text/plain") and whole in full.text
    t = shown_text("x" * (PAGE_CHARS + 5), "ur", "/u")
    assert (t.collapsed, t.cut, len(t.preview), len(t.shown), t.dir) == (True, True, PREVIEW_CHARS, PAGE_CHARS, "rtl")
    assert not shown_text("short").collapsed


def test_compare_experiments_lists_flipped_verdicts(client: TestClient, view_study: Any) -> None:
    page = client.get("/compare", params={"a": "viewa", "b": "viewb"}).text
    flips = set(re.findall(r"<tr><td>(q\d\d)</td><td>(\w+)</td><td>([\w-]+)</td>", page))
    verdicts = {}
    for key, project in (("a", view_study.a), ("b", view_study.b)):
        with Store.open(project.store_path, create=False) as store:
            rows = store.query("SELECT j.model_id, j.item_id, j.variant, j.score, o.score FROM judgments j "
                               "LEFT JOIN (SELECT target_id, json_extract(value, '$.score') AS score FROM "
                               "annotations) o ON o.target_id = j.request_id")
        verdicts[key] = {(r[1], r[2], r[0]): r[4] if r[4] is not None else r[3] for r in rows}
    want = {k for k in verdicts["a"] if k in verdicts["b"] and verdicts["a"][k] != verdicts["b"][k]}
    assert flips == want
    assert ("q02", "chittagong", "model-a") in flips  # the changed item
    assert ("q03", "chittagong", "model-a") in flips  # A's human override
    assert not any(f[0] in ("q01", "q04") for f in flips)
    assert "qa_bias_model_by_dialect.csv" in page and "Δ" in page


def test_compare_two_models(client: TestClient, view_study: Any) -> None:
    page = client.get("/compare", params={"a": "viewa", "model_a": "model-a", "model_b": "model-b"})
    assert page.status_code == 200
    columns, rows = _csv(view_study.report_a / "qa_bias_model_by_dialect.csv")
    a, b = (next(r for r in rows if r[0] == m) for m in ("model-a", "model-b"))
    i = columns.index("sylhet")
    delta = float(b[i]) - float(a[i])
    assert f'data-v="{a[i]}"' in page.text and f'data-v="{b[i]}"' in page.text and f"{delta:.3f}" in page.text
    bad = client.get("/compare", params={"a": "viewa", "model_a": "model-a", "model_b": "nope"})
    assert bad.status_code == 400


def test_never_writes_and_ignores_a_running_lock(client: TestClient, view_study: Any) -> None:
    store = view_study.a.store_path
    before = {p.name: _digest(p) for p in store.parent.glob(f"{store.name}*")}
    with RunLock(store, "run"):  # a run holds the store
        assert client.get("/exp/viewa").status_code == 200
        assert client.get("/api/evidence", params={"experiment": "viewa", "item_id": "q01", "variant": "sylhet",
                                                   "model": "model-b"}).status_code == 200
    after = {p.name: _digest(p) for p in store.parent.glob(f"{store.name}*")}
    assert before[store.name] == after[store.name]
    with Store.open(store, create=False) as writer:  # a run in the middle of a write transaction
        writer._conn.execute("BEGIN IMMEDIATE")
        writer._conn.execute("INSERT INTO meta VALUES ('view-test', 'uncommitted')")
        started = time.monotonic()
        assert client.get("/api/evidence", params={"experiment": "viewa", "item_id": "q02", "variant": "standard",
                                                   "model": "model-a"}).status_code == 200
        assert time.monotonic() - started < 10  # read beside the writer, not after it
        writer._conn.execute("ROLLBACK")


def test_access_token_beyond_loopback(view_study: Any) -> None:
    app = create_app([load_experiment_read_only(view_study.a.yaml_path)], token="s3cret")
    c = TestClient(app, base_url="http://localhost")
    assert c.get("/api/evidence?item_id=q01&variant=sylhet&model=model-a").status_code == 401
    assert c.get("/exp/viewa").status_code == 401
    assert c.get("/exp/viewa?token=wrong").status_code == 401
    ok = c.get("/exp/viewa?token=s3cret&x=1", follow_redirects=False)
    assert ok.status_code == 303 and ok.headers["location"] == "/exp/viewa?x=1"
    assert "httponly" in ok.headers["set-cookie"].lower()
    assert c.get("/exp/viewa").status_code == 200  # the cookie
    bearer = TestClient(app, base_url="http://localhost").get(
        "/api/evidence?item_id=q01&variant=sylhet&model=model-a", headers={"Authorization": "Bearer s3cret"})
    assert bearer.status_code == 200 and bearer.json()["judgments"]


def test_stale_scores_are_refused(view_study: Any, copy_of_a: Any) -> None:
    """Scores derived with other settings than the file's now are not shown as the experiment's."""
    project = copy_of_a
    project.rewrite(review={"confidence_threshold": 2})
    c = TestClient(create_app([load_experiment_read_only(project.yaml_path)]), base_url="http://localhost")
    data = c.get("/api/tables").json()
    assert data["tables"] == [] and "dialectbias report viewa.yaml" in data["alert"]
    # nor anywhere else a score, a review flag or a final score is shown: the answers list, an item, the API
    where = {"item_id": "q03", "variant": "chittagong", "model": "model-a"}
    for url, params in (("/exp/viewa/items", {"model": "model-a"}), ("/exp/viewa/item", where),
                        ("/api/evidence", {"experiment": "viewa", **where})):
        got = c.get(url, params=params)
        text = got.json()["detail"] if url.startswith("/api/") else got.text
        assert got.status_code == 409 and "dialectbias report viewa.yaml" in text, (url, got.status_code)
    raw = c.get("/api/text", params={"experiment": "viewa", "request_id": view_study.override_target})
    assert raw.status_code == 200  # a stored text derives from no setting


def test_a_store_re_scored_under_a_running_explorer_is_not_shown_with_its_old_tables(
        copy_of_a: Any, cli: Any, tmp_path: Path) -> None:
    """The explorer read the file when it started; the file is edited and `report` re-scores the store in
    place. The tables built before are not the store's any more: the explorer says to restart it."""
    project = copy_of_a
    c = TestClient(create_app([load_experiment_read_only(project.yaml_path)]), base_url="http://localhost")
    assert c.get("/api/tables").json()["tables"]
    project.rewrite(review={"confidence_threshold": 2})
    result = cli("report", project.yaml_path, "--out", tmp_path / "report")
    assert result.exit_code == 0, result.output
    data = c.get("/api/tables").json()
    assert data["tables"] == [] and "viewa.yaml changed since the explorer read it" in data["alert"]
    assert "restart `dialectbias view`" in data["alert"]


def test_answer_pages_do_not_wait_for_a_table_build(view_study: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Building the tables runs the report's code (~50 s on a 10×-paper store); an answer page meanwhile asks
    only whether the scores can be shown, and answers at once."""
    import threading

    from dialectbias.view import _tables

    building, release = threading.Event(), threading.Event()
    real = _tables.build_tables

    def held(loaded: Any, mark: tuple[int, ...]) -> Any:
        building.set()
        release.wait(60)
        return real(loaded, mark)

    monkeypatch.setattr(_tables, "build_tables", held)
    c = TestClient(create_app([load_experiment_read_only(view_study.a.yaml_path)]), base_url="http://localhost")
    tables = threading.Thread(target=c.get, args=("/api/tables",))
    tables.start()
    try:
        assert building.wait(30)
        started = time.monotonic()
        got = c.get("/api/evidence", params={"experiment": "viewa", "item_id": "q01", "variant": "sylhet",
                                             "model": "model-a"})
        assert got.status_code == 200 and time.monotonic() - started < 10
    finally:
        release.set()
        tables.join(60)
