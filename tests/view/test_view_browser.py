"""The explorer in a real headless browser (Debian chromium driven by Playwright, as the review app's test):
sort a table, filter it, click a figure through to its answers and to an answer's evidence, expand a
collapsed text; Bengali is `lang="bn"`, Urdu renders right to left; at 390 px the page does not overflow
sideways (tables scroll in their box); markup in an item never runs.

With DIALECTBIAS_EXPLORER_SCREENSHOT=path the tables page is saved there (docs/explorer.png)."""

from __future__ import annotations

import csv
import os
from collections.abc import Iterator
from typing import Any

import pytest

from web_process import CHROMIUM, CHROMIUM_ARGS, NO_CHROMIUM, free_port, have_chromium, serving

playwright_api = pytest.importorskip("playwright.sync_api", reason="the Python package `playwright` is not "
                                     "installed (pip install playwright; the browser is Debian's chromium)")
pytest.importorskip("fastapi", reason="the explorer needs the `review` extra (fastapi, uvicorn)")
if not have_chromium():
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture(scope="module")
def url(view_study: Any, qa: Any) -> Iterator[str]:
    """`dialectbias view A.yaml` on 127.0.0.1."""
    port = free_port()
    command = [*qa.dialectbias_command(), "view", str(view_study.a.yaml_path), "--port", str(port)]
    with serving(command, view_study.a.dir / "view-browser.log", qa.subprocess_env(), port=port):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser(url: str) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


def _page(browser: Any, width: int = 1280) -> Any:
    return browser.new_context(viewport={"width": width, "height": 900}, locale="en-US").new_page()


def _column(page: Any, table: str, col: int) -> list[str]:
    return page.eval_on_selector_all(f"table[data-table='{table}'] tbody tr:not([hidden])",
                                     f"rows => rows.map(r => r.cells[{col}].getAttribute('data-v'))")


def test_sort_filter_and_click_through(browser: Any, url: str, view_study: Any) -> None:
    page = _page(browser)
    page.goto(url + "/")
    page.wait_for_selector("h1:has-text('QA dialect bias')")
    with (view_study.report_a / "qa_bias_model_by_dialect.csv").open(encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("sylhet")
    table = "qa_bias_model_by_dialect"
    page.click(f"table[data-table='{table}'] th a.sort[data-col='{col}']")
    assert _column(page, table, col) == sorted((r[col] for r in rows[1:]), key=float)
    page.click(f"table[data-table='{table}'] th a.sort[data-col='{col}']")
    assert _column(page, table, col) == sorted((r[col] for r in rows[1:]), key=float, reverse=True)
    gap = "qa_bias_gap"
    page.select_option(f"form[data-table='{gap}'] select[name='f.model']", "model-a")
    models = _column(page, gap, 0)
    assert models and set(models) == {"model-a"}
    assert page.is_visible(f"form[data-table='{gap}'] .count")
    if os.environ.get("DIALECTBIAS_EXPLORER_SCREENSHOT"):
        shot = _page(browser, 1000)
        shot.goto(url + "/exp/viewa")
        shot.screenshot(path=os.environ["DIALECTBIAS_EXPLORER_SCREENSHOT"], full_page=False)
    page.click(f"table[data-table='{table}'] tbody tr:has(td[data-v='model-a']) td:nth-child({col + 1}) a")
    page.wait_for_selector("h1:has-text('Answers')")
    assert "model=model-a" in page.url and "variant=sylhet" in page.url
    assert page.locator("a.item-link").count() == 4
    page.click("a.item-link:has-text('q02')")
    page.wait_for_selector("h1:has-text('Item q02')")
    assert page.is_visible("section.judgment.primary")
    assert page.locator(".side h2").all_inner_texts() == ["Standard: standard", "Variant: sylhet"]


def test_long_text_bengali_urdu_and_no_script(browser: Any, url: str) -> None:
    page = _page(browser)
    page.goto(url + "/exp/viewa/item?item_id=q04&variant=sylhet&model=model-a")
    details = page.locator(".side:nth-child(2) details.long").first
    assert details.get_attribute("open") is None
    details.locator("summary").click()
    assert details.get_attribute("open") is not None
    full = details.locator("div.text")
    assert full.is_visible() and full.get_attribute("lang") == "bn" and len(full.inner_text()) == 20_000
    page.goto(url + "/exp/viewa/item?item_id=q03&variant=urdu&model=model-a")
    urdu = page.locator(".side:nth-child(2) .text[lang='ur']").first
    assert urdu.evaluate("e => getComputedStyle(e).direction") == "rtl"
    page.goto(url + "/exp/viewa/item?item_id=q01&variant=chittagong&model=model-a")
    assert "<script>window.__xss = 1</script>" in page.locator(".side:nth-child(2) .text").first.inner_text()
    assert page.evaluate("() => window.__xss") is None


def test_narrow_screen_has_no_sideways_overflow(browser: Any, url: str) -> None:
    page = _page(browser, 390)
    for path in ("/exp/viewa", "/exp/viewa/items?model=model-a", "/exp/viewa/item?item_id=q04&variant=sylhet"
                 "&model=model-a", "/compare?a=viewa&model_a=model-a&model_b=model-b"):
        page.goto(url + path)
        width = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
        assert width[0] <= width[1], (path, width)
