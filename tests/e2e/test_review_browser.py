"""The review app in a real headless browser (Debian chromium driven by Playwright): two annotators of
different dialects log in with their tokens in two browser contexts at once, score judgments with the
keyboard, correct and score translations, code an image answer; the store holds every annotation; markup
in item text never runs; URL tampering shows nothing; Urdu renders right to left.

Screenshots of each page kind go to $DIALECTBIAS_SCREENSHOTS (default: the test's tmp dir); with
DIALECTBIAS_README_SCREENSHOT=path the judgment page is also saved there (docs/review.png).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from dialectbias.store import Store
from web_process import CHROMIUM, CHROMIUM_ARGS, NO_CHROMIUM, free_port, have_chromium, serving

SCRIPT = "<script>window.__xss = 1</script>"
IMG = '"><img src=x onerror="window.__xss = 2">'
URDU = "یہ ایک سوال ہے؟"

playwright_api = pytest.importorskip("playwright.sync_api", reason="the Python package `playwright` is not "
                                     "installed (pip install playwright; the browser is Debian's chromium)")
pytest.importorskip("fastapi", reason="the review app needs the `review` extra (fastapi, uvicorn, python-multipart)")
if not have_chromium():
    pytest.skip(NO_CHROMIUM, allow_module_level=True)


@pytest.fixture(scope="module")
def study(session_server: Any, qa: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A qa_bias run (an image item, an Urdu variant, machine-made sylhet/urdu variants, markup in an item),
    annotators rahim (chittagong, urdu) and nila (sylhet), and `dialectbias review serve` on 127.0.0.1."""
    session_server.set_faults(None)
    root = tmp_path_factory.mktemp("review-browser")
    items = [qa.qa_item(i) for i in range(4)]
    items[0]["image"] = "images/a.png"
    items[1]["variants"]["standard"] += f" {SCRIPT}"
    items[1]["variants"]["chittagong"] += f" {IMG}"
    for item in items[2:]:
        item["variants"]["urdu"] = URDU
        item["is_human_validated"] = {"sylhet": False, "urdu": False}
    project = qa.make_project(root / "exp", session_server.base_url, items=items)
    (project.dir / "images").mkdir()
    Image.new("RGB", (320, 200), (20, 110, 60)).save(project.dir / "images" / "a.png")
    project.rewrite(review={"confidence_threshold": 5})
    assert qa.run_subprocess("run", project.yaml_path, "--no-progress", timeout=120).exit_code == 0
    tokens = {}
    for name, dialects in (("rahim", "chittagong,urdu"), ("nila", "sylhet")):
        result = qa.run_subprocess("review", "add-annotator", project.yaml_path, name, "--dialects", dialects)
        assert result.exit_code == 0, result.output
        tokens[name] = result.stdout.strip().splitlines()[-1]
    port = free_port()
    log = root / "serve.log"
    command = [*qa.dialectbias_command(), "review", "serve", str(project.yaml_path), "--port", str(port)]
    with serving(command, log, qa.subprocess_env(), port=port):
        yield {"url": f"http://127.0.0.1:{port}", "tokens": tokens, "store": project.store_path, "log": log}


@pytest.fixture(scope="module")
def browser(study: Any) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = Path(os.environ.get("DIALECTBIAS_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    out.mkdir(parents=True, exist_ok=True)
    return out


def login(browser: Any, study: dict[str, Any], name: str) -> Any:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
    page = context.new_page()
    page.goto(study["url"] + "/")
    page.fill("#token", study["tokens"][name])
    page.keyboard.press("Enter")
    page.wait_for_selector("h1:has-text('Your queues')")
    return page


def annotations(study: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    with Store.open(study["store"], create=False) as store:
        rows = store.query("SELECT target_id, annotator, kind, value, comment, created_at FROM annotations"
                           + (" WHERE kind = ?" if kind else "") + " ORDER BY annotation_id", (kind,) if kind else ())
    return [{**dict(r), "value": json.loads(r["value"])} for r in rows]


def submit(page: Any, key: str = "Enter", target: Any = None) -> None:
    """Press the save key and wait for the next page (the app redirects to the queue's next item)."""
    with page.expect_navigation():
        (target or page.keyboard).press(key)


def no_script_ran(page: Any) -> bool:
    return page.evaluate("typeof window.__xss") == "undefined"


def test_two_annotators_score_with_the_keyboard_at_once(browser: Any, study: dict[str, Any], shots: Path) -> None:
    rahim, nila = login(browser, study, "rahim"), login(browser, study, "nila")
    rahim.screenshot(path=str(shots / "home.png"), full_page=True)
    assert "rahim · chittagong, urdu" in rahim.inner_text("header")
    for page in (rahim, nila):
        page.click("li[data-queue='judgments'] a.button")
        page.wait_for_selector("form#annotation")
    first = {}
    for page, name, keys in ((rahim, "rahim", "43521"), (nila, "nila", "12345")):
        first[name] = page.url.rsplit("/", 1)[-1]
        assert page.locator("fieldset.scale.active").count() == 1
        for key in keys:  # one digit per Likert statement: the highlight moves on by itself
            page.keyboard.press(key)
        page.keyboard.press("y")  # script valid
    rahim.screenshot(path=str(shots / "judgment.png"), full_page=True)
    if os.environ.get("DIALECTBIAS_README_SCREENSHOT"):
        rahim.screenshot(path=os.environ["DIALECTBIAS_README_SCREENSHOT"], full_page=False)
    for page in (rahim, nila):  # both submit: two sessions, one store
        page.keyboard.press("Enter")
    for page, name in ((rahim, "rahim"), (nila, "nila")):
        page.wait_for_url(lambda url, n=name: not url.endswith(first[n]))
        assert no_script_ran(page)
    stored = {a["annotator"]: a for a in annotations(study, "judgment_override")}
    assert stored["rahim"]["value"]["fields"] == {"dialect_comprehension": 4, "factual_correctness": 3,
                                                  "content_completeness": 5, "response_clarity": 2,
                                                  "appropriate_length": 1}
    assert stored["nila"]["value"]["fields"]["appropriate_length"] == 5
    assert stored["rahim"]["value"]["script_valid"] is True and stored["rahim"]["created_at"] > 0
    progress = rahim.inner_text("#progress")
    assert "1 done" in progress
    # ArrowUp goes back to a scale; Enter without every scale answered does not submit
    url = rahim.url
    rahim.keyboard.press("5")
    rahim.keyboard.press("Enter")
    time.sleep(0.3)
    assert rahim.url == url and len(annotations(study, "judgment_override")) == 2


def test_markup_in_items_is_shown_as_text(browser: Any, study: dict[str, Any], shots: Path) -> None:
    page = login(browser, study, "rahim")
    with Store.open(study["store"], create=False) as store:
        task = store.query("SELECT task_id FROM assignments WHERE annotator='rahim' AND item_id='q02' AND "
                           "queue='judgments'")[0][0]
    page.goto(f"{study['url']}/task/{task}")
    assert SCRIPT in page.inner_text(".panels") and IMG in page.inner_text(".panels")
    assert no_script_ran(page) and page.locator(".panels img").count() == 0
    page.screenshot(path=str(shots / "escaped.png"), full_page=True)


def test_a_translation_is_corrected_and_scored(browser: Any, study: dict[str, Any], shots: Path) -> None:
    nila = login(browser, study, "nila")
    nila.goto(study["url"] + "/queue/translation_correction")
    box = nila.locator("textarea[name=text]")
    original = box.input_value()
    assert original and box.get_attribute("lang") == "bn"
    box.fill(original + " (ঠিক করা)")
    nila.screenshot(path=str(shots / "translation_correction.png"), full_page=True)
    submit(nila, "Control+Enter", box)
    corrections = annotations(study, "translation_correction")
    assert corrections and corrections[-1]["annotator"] == "nila"
    assert corrections[-1]["value"] == {"text": original + " (ঠিক করা)", "original": original, "changed": True}
    assert corrections[-1]["target_id"].startswith("item:") and corrections[-1]["target_id"].endswith(":sylhet")

    nila.goto(study["url"] + "/queue/translation_score")
    nila.keyboard.press("t")  # 10
    nila.screenshot(path=str(shots / "translation_score.png"), full_page=True)
    submit(nila)
    nila.goto(study["url"] + "/queue/validation")
    nila.keyboard.press("2")
    nila.screenshot(path=str(shots / "validation.png"), full_page=True)
    submit(nila)
    assert [a["value"] for a in annotations(study, "translation_score")] == [{"score": 10}]
    assert [a["value"] for a in annotations(study, "validation_3pt")] == [{"label": 2}]


def test_an_image_answer_is_coded_with_the_error_categories(browser: Any, study: dict[str, Any], shots: Path) -> None:
    rahim = login(browser, study, "rahim")
    rahim.goto(study["url"] + "/queue/error_coding")
    img = rahim.locator("figure.image img")
    img.wait_for()
    assert rahim.evaluate("document.querySelector('figure.image img').naturalWidth") == 320
    rahim.keyboard.press("e")
    rahim.keyboard.press("l")
    rahim.screenshot(path=str(shots / "error_coding.png"), full_page=True)
    submit(rahim)
    coded = annotations(study, "error_coding")
    assert coded[-1]["value"] == {"categories": ["entity_misrecognition", "language_violation"]}


def test_urdu_renders_right_to_left(browser: Any, study: dict[str, Any], shots: Path) -> None:
    rahim = login(browser, study, "rahim")
    with Store.open(study["store"], create=False) as store:
        task = store.query("SELECT task_id FROM assignments WHERE annotator='rahim' AND dialect='urdu' AND "
                           "queue='judgments' ORDER BY item_id")[0][0]
    rahim.goto(f"{study['url']}/task/{task}")
    urdu = rahim.locator(".panel .text[lang='ur']").first
    assert urdu.inner_text() == URDU and urdu.get_attribute("dir") == "rtl"
    assert rahim.evaluate("getComputedStyle(document.querySelector(\".text[lang='ur']\")).direction") == "rtl"
    bengali = rahim.locator(".panel .text[lang='bn']").first
    assert bengali.get_attribute("dir") == "ltr"
    rahim.screenshot(path=str(shots / "urdu.png"), full_page=True)


def test_another_annotators_task_url_shows_nothing(browser: Any, study: dict[str, Any], shots: Path) -> None:
    rahim = login(browser, study, "rahim")
    with Store.open(study["store"], create=False) as store:
        theirs = store.query("SELECT task_id FROM assignments WHERE annotator='nila'")[0][0]
    reply = rahim.goto(f"{study['url']}/task/{theirs}")
    assert reply.status == 404 and "No such task" in rahim.inner_text("main")
    fresh = browser.new_context().new_page()
    assert fresh.goto(f"{study['url']}/task/{theirs}").status == 401
    fresh.screenshot(path=str(shots / "login.png"))
    log = study["log"].read_text(encoding="utf-8")
    assert all(token not in log for token in study["tokens"].values())
