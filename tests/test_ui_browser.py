"""The page in a real browser: Debian's chromium driven by Playwright (never a downloaded one).

Asks a question, waits for the streamed answer, clicks a citation and checks that its source card
and highlighted passage show; uploads a paper whose title is HTML and checks that it renders as
text without running. Saves the README screenshot (docs/screenshot.png) when it is missing or
when UPDATE_SCREENSHOT=1.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REPO
from .test_ui_app import _serve

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = REPO / "docs" / "screenshot.png"
UPDATE_SCREENSHOT = os.environ.get("UPDATE_SCREENSHOT") == "1"
XSS_TITLE = "<img src=x onerror=alert(1)>"
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed"),
]


@pytest.fixture(scope="module")
def server(bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The UI on a copy of the bundled store (the upload test adds a paper to it)."""
    work = tmp_path_factory.mktemp("browser")
    home = work / "home"
    shutil.copytree(bundled_home, home)
    yield from _serve(home, onnx_cache, work)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        yield instance
        instance.close()


@pytest.fixture
def page(browser, server: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    page.dialogs = []  # every alert/confirm the page tries to open
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(server)
    page.locator("#pt-question textarea").wait_for(timeout=30_000)
    yield page
    context.close()


def ask(page, question: str) -> object:  # type: ignore[no-untyped-def]
    """Type a question, send it, and wait for the finished answer (its footer note)."""
    before = page.locator("[data-testid=bot]").count()
    page.locator("#pt-question textarea").fill(question)
    page.locator("#pt-question textarea").press("Enter")
    answer = page.locator("[data-testid=bot]").nth(before)
    answer.locator(".pt-note").wait_for(timeout=60_000)
    return answer


def test_cited_answer_and_citation_click(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(page, "How much does Cake reduce time to first token?")
    expect(answer).to_contain_text("2.6")
    page.locator("#pt-sources-box .pt-card").first.wait_for()

    answer.locator("a.pt-cite").first.click()
    card = page.locator("#pt-sources-box .pt-card.pt-active")
    expect(card).to_have_count(1)
    expect(card).to_be_visible()
    expect(card.locator(".pt-title")).to_have_text("Compute or Load KV Cache? Why Not Both?")
    expect(card.locator(".pt-title")).to_have_attribute(
        "href", "https://openreview.net/forum?id=WOyOtaO6lQ"
    )
    expect(card.locator(".pt-badge")).to_have_text("poster")
    expect(card.locator("mark.pt-support")).to_contain_text("2.6")
    expect(card.locator("mark.pt-support")).to_be_visible()
    assert page.url.rstrip("/") == page.url.rstrip("/").split("#")[0]  # no navigation

    # A second question: its own sources; the first turn's citation still shows its card.
    second = ask(page, "How can diffusion models be aligned with human preferences?")
    expect(second.locator("a.pt-cite")).not_to_have_count(0)
    answer.locator("a.pt-cite").first.click()
    expect(page.locator(".pt-card.pt-active .pt-title")).to_have_text(
        "Compute or Load KV Cache? Why Not Both?"
    )
    second.locator("a.pt-cite").last.click()
    active = page.locator(".pt-card.pt-active")
    expect(active).to_be_visible()
    expect(active.locator("mark.pt-support").first).to_be_visible()
    page.mouse.move(0, 0)
    shot = page.screenshot()
    if UPDATE_SCREENSHOT or not SCREENSHOT.exists():
        SCREENSHOT.parent.mkdir(exist_ok=True)
        SCREENSHOT.write_bytes(shot)
    assert page.dialogs == []


def test_html_in_a_paper_title_renders_as_text(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    paper = {
        "id": "xss00001",
        "title": XSS_TITLE,
        "abstract": "We introduce zebra quilting kernels <script>alert(2)</script>, which stitch "
        "striped features into graph networks. Zebra quilting kernels cut training time by "
        "40 percent on quilt benchmarks.",
        "authors": ["<b onmouseover=alert(3)>Mallory</b>"],
        "url": "javascript:alert(4)",
        "status": "oral",
    }
    upload = tmp_path / "papers.jsonl"
    upload.write_text(json.dumps(paper) + "\n", encoding="utf-8")

    page.get_by_text("Add papers", exact=True).first.click()
    page.locator("#pt-upload input[type=file]").set_input_files(str(upload))
    page.locator("#pt-add").click()
    expect(page.locator("#pt-report")).to_contain_text("1 added", timeout=60_000)
    expect(page.locator("#pt-header")).to_contain_text("20 papers")

    answer = ask(page, "What are zebra quilting kernels?")
    card = page.locator("#pt-sources-box .pt-card").first
    expect(card.locator(".pt-card-head")).to_contain_text(XSS_TITLE)  # shown as text
    expect(card.locator(".pt-authors")).to_contain_text("<b onmouseover=alert(3)>Mallory</b>")
    expect(card.locator("a")).to_have_count(0)  # the javascript: URL is not a link
    expect(answer).to_contain_text("zebra quilting kernels")
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("#pt-sources-box script, #pt-chat script").count() == 0
    card.hover()
    page.wait_for_timeout(300)
    assert page.dialogs == []
