"""A huge item text does not make a huge page (issue 22 item 4): a 1 MB question and 1 MB answers render
as a bounded preview with a clear note and a link to the whole text (behind the same session), over HTTP
and in headless Chromium (Debian's chromium driven by Playwright, as tests/e2e/test_review_browser.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from dialectbias.data import Item
from web_process import CHROMIUM, CHROMIUM_ARGS, NO_CHROMIUM, have_chromium

pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")
pytest.importorskip("uvicorn", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")

HUGE = 1_000_000  # characters (Bengali: about 3 MB of UTF-8 each)


@pytest.fixture
def huge(review_store: Any, rv: Any) -> Any:
    """Item q9 with a 1 M-character chittagong question and 1 M-character answers; rahim's task for it."""
    from dialectbias.review import add_annotator

    text = ("আমি ভাত খাই। " * (HUGE // 12 + 1))[:HUGE]
    with review_store.open() as store:
        store.save_items([Item(id="q9", variants={"standard": "প্রশ্ন ৯?", "chittagong": text})])
        rv.add_judgment(store, "model-a", "q9", "chittagong", answer=text)
        token = add_annotator(store, "rahim", ["chittagong"])
        task = store.query("SELECT task_id FROM assignments WHERE annotator='rahim' AND item_id='q9'")
    with rv.serve_app(review_store.path, rv.review_config()) as url:
        if not task:
            task = [(t["id"],) for t in rv.http("GET", f"{url}/api/tasks", token=token).json()
                    if t["item_id"] == "q9"]
        yield {"url": url, "token": token, "task": task[0][0], "text": text}


def test_a_1mb_item_makes_a_bounded_page_with_the_whole_text_on_demand(huge: Any, rv: Any) -> None:
    opener = rv.login(huge["url"], huge["token"])
    page = rv.http("GET", f"{huge['url']}/task/{huge['task']}", opener=opener)
    assert page.status == 200
    print(f"task page of a 1 M-character item: {len(page.body):,} bytes")
    assert len(page.body) < 300_000, f"the page is {len(page.body) / 1e6:.1f} MB"
    assert "1,000,000 characters" in page.text and "shortened" in page.text
    links = sorted(set(re.findall(rf'href="(/task/{huge["task"]}/text/\d+)"', page.text)))
    assert links, "no link to the whole text"
    whole = rv.http("GET", huge["url"] + links[0], opener=opener)
    assert whole.status == 200 and whole.headers["content-type"].startswith("text/plain")
    assert huge["text"] in whole.text
    assert rv.http("GET", huge["url"] + links[0]).status == 401  # behind the session
    assert rv.http("GET", huge["url"] + links[0] + "9", opener=opener).status == 404


def test_a_1mb_item_renders_quickly_in_chromium(huge: Any, tmp_path: Path) -> None:
    playwright_api = pytest.importorskip("playwright.sync_api", reason="the Python package `playwright` is not "
                                         "installed (pip install playwright; the browser is Debian's chromium)")
    if not have_chromium():
        pytest.skip(NO_CHROMIUM)
    with playwright_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            page.goto(huge["url"] + "/")
            page.fill("#token", huge["token"])
            page.keyboard.press("Enter")
            page.wait_for_selector("h1:has-text('Your queues')")
            start = time.monotonic()
            page.goto(f"{huge['url']}/task/{huge['task']}", timeout=60_000)
            page.wait_for_selector("form#annotation", timeout=60_000)
            page.screenshot(path=str(tmp_path / "huge.png"))
            elapsed = time.monotonic() - start
            print(f"rendered in {elapsed:.2f} s")
            assert elapsed < 5.0, f"the page took {elapsed:.1f} s"
            note = page.locator(".shortened").first
            assert note.is_visible() and "1,000,000" in note.inner_text()
        finally:
            browser.close()
