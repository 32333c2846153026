"""The page in a real browser: Debian's chromium driven by Playwright (never a downloaded one).

On a store holding the bundled papers and papers whose abstracts carry LaTeX (`$3.31\\times$`,
`$\\sim 1.3\\times$`, `\\%`), Markdown (`**bold**`) and HTML (`<script>`): asks questions,
waits for the streamed answers, clicks citations and checks the source cards; checks how that
paper text reads (Unicode, bold, never live HTML) in answers, cards and the export, compare
tables, list answers, refusal reasons, filters, the header's backend, and that a new answer
scrolls into view. Uploads a paper whose title is HTML and checks it renders as text.

The README screenshot (docs/screenshot.png) comes from the default settings, as `make run`
serves them (LLM `local`): written when missing or with UPDATE_SCREENSHOT=1 (`make screenshot`).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.common import CHROMIUM_ARGS

from .conftest import REPO, free_port, running_server
from .test_ui_app import _serve

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = REPO / "docs" / "screenshot.png"
UPDATE_SCREENSHOT = os.environ.get("UPDATE_SCREENSHOT") == "1"
XSS_TITLE = "<img src=x onerror=alert(1)>"
FLASH_TITLE = "FlashTern: Ternary Kernels for $\\alpha$-Sparse Decoding"
RICH_PAPERS = [  # abstracts written the way OpenReview abstracts are: LaTeX, Markdown, HTML
    {
        "id": "rich00001",
        "title": FLASH_TITLE,
        "abstract": "Decoding with large language models is slow because every generated token "
        "reads all weights. We propose **FlashTern**, a ternary kernel for sparse decoding "
        "<script>alert(7)</script>. FlashTern speeds up decoding by $3.31\\times$ and stays "
        "within $\\sim 1.3\\times$ of the memory bound. It uses 40\\% less memory than dense "
        "kernels on long-context benchmarks.",
        "authors": ["Ada Example", "Bo Sample"],
        "url": "https://openreview.net/forum?id=rich00001",
        "status": "spotlight",
    },
    {
        "id": "rich00002",
        "title": "BeamLoom: Weaving Beam Search into Speculative Drafting for Faster Decoding",
        "abstract": "However, speculative decoding struggles when drafts diverge from the target "
        "model. To address this issue, in this paper, we introduce **BeamLoom**, a method "
        "that weaves beam search into speculative drafting so that more drafted tokens are "
        "accepted by the target model. On translation benchmarks BeamLoom decodes "
        "$2.1\\times$ faster and accepts 35\\% more draft tokens than speculative sampling.",
        "authors": ["Cy Example"],
        "url": "https://openreview.net/forum?id=rich00002",
        "status": "poster",
    },
]
LAUNCH_ARGS = CHROMIUM_ARGS

pytestmark = [
    pytest.mark.browser,
    pytest.mark.server,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed"),
]


@pytest.fixture(scope="module")
def server(bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The UI (extractive) on a copy of the bundled store plus RICH_PAPERS (the upload test
    adds one more paper)."""
    from rag.ingest.pipeline import run_ingest
    from rag.settings import Settings

    work = tmp_path_factory.mktemp("browser")
    home = work / "home"
    shutil.copytree(bundled_home, home)
    rich = work / "rich.jsonl"
    rich.write_text("".join(json.dumps(p) + "\n" for p in RICH_PAPERS), encoding="utf-8")
    report = run_ingest(Settings(home=home, cache_dir=onnx_cache), [rich], progress=False)
    assert report.added == len(RICH_PAPERS) and not report.skipped
    yield from _serve(home, onnx_cache, work)


@pytest.fixture(scope="module")
def default_server(
    bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """`papertalk serve` with nothing but the store set: the defaults `make run` serves
    (LLM `local`), on the bundled papers."""
    logs = tmp_path_factory.mktemp("browser-default")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAPERTALK_")}
    env.update(
        PAPERTALK_HOME=str(bundled_home),
        PAPERTALK_CACHE_DIR=str(onnx_cache),
        GRADIO_TEMP_DIR=str(logs / "gradio"),
        GRADIO_ANALYTICS_ENABLED="False",
        HF_HUB_OFFLINE="1",
    )
    port = free_port()
    command = [sys.executable, "-m", "rag.cli", "serve", "--port", str(port)]
    with running_server(command, port, logs / "serve.log", timeout=120, env=env, cwd=REPO):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        yield instance
        instance.close()


def open_page(browser, url: str):  # type: ignore[no-untyped-def]
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.dialogs = []  # every alert/confirm the page tries to open
    page.on("dialog", lambda dialog: (page.dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(url)
    page.locator("#pt-question textarea").wait_for(timeout=30_000)
    return context, page


@pytest.fixture
def page(browser, server: str):  # type: ignore[no-untyped-def]
    context, page = open_page(browser, server)
    yield page
    context.close()


def ask(page, question: str, *, mode: str = "", timeout_s: float = 60) -> object:  # type: ignore[no-untyped-def]
    """Type a question, send it, and wait for the finished answer (its footer note)."""
    if mode:
        page.locator("#pt-mode").get_by_text(mode, exact=True).click()
    before = page.locator("[data-testid=bot]").count()
    page.locator("#pt-question textarea").fill(question)
    page.locator("#pt-question textarea").press("Enter")
    answer = page.locator("[data-testid=bot]").nth(before)
    answer.locator(".pt-note").wait_for(timeout=timeout_s * 1000)
    return answer


def exported(page) -> str:  # type: ignore[no-untyped-def]
    """The conversation as the Export button downloads it."""
    from playwright.sync_api import expect

    button = page.locator("#pt-export")
    expect(button).to_be_enabled()
    with page.expect_download() as download:
        button.click()
    return Path(download.value.path()).read_text(encoding="utf-8")


def no_live_html(page) -> None:  # type: ignore[no-untyped-def]
    """Nothing from a paper ran or became markup: no script, no injected image, no dialog."""
    assert page.locator("#pt-sources-box script, #pt-chat script").count() == 0
    assert page.locator("img[src='x']").count() == 0
    page.wait_for_timeout(200)
    assert page.dialogs == []


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
    expect(page.locator("#pt-header")).to_contain_text(f"{19 + len(RICH_PAPERS) + 1} papers")

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


# What a researcher sees ------------------------------------------------------------------------
def test_latex_markdown_and_html_from_abstracts_read_as_text(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(page, "How much does FlashTern speed up decoding?")
    expect(answer).to_contain_text("3.31×")
    expect(answer).to_contain_text("~1.3×")
    shown = answer.inner_text()
    for raw in ("\\times", "\\sim", "$", "**"):
        assert raw not in shown, raw

    card = page.locator("#pt-sources-box .pt-card").filter(has_text="FlashTern").first
    expect(card.locator(".pt-title")).to_have_text(
        "FlashTern: Ternary Kernels for α-Sparse Decoding"
    )
    passage = card.locator(".pt-passage")
    expect(passage).to_contain_text("3.31×")
    cards = page.locator("#pt-sources-box").inner_text()
    for raw in ("\\times", "\\%", "$", "**"):
        assert raw not in cards, raw
    # Markdown emphasis is taken out at ingest (it splits words): the words read whole, never
    # with asterisks, and no abstract text turns bold; the abstract's <script> is text.
    bold = page.locator("#pt-chat strong, #pt-sources-box strong").filter(has_text="FlashTern")
    expect(bold).to_have_count(0)
    no_live_html(page)

    text = exported(page)
    assert "3.31×" in text and "\\times" not in text and "$\\" not in text
    assert "FlashTern: Ternary Kernels for α-Sparse Decoding." in text
    assert "<script>" not in text


def test_compare_table_names_papers_shortly_and_scrolls(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(page, "Compare FlashTern and BeamLoom", mode="Compare")
    table = answer.locator("table.pt-compare")
    expect(table).to_be_visible()
    names = table.locator("th[scope=row] .pt-paper")
    expect(names).to_have_text(["FlashTern", "BeamLoom"])
    expect(names.first).to_have_attribute(
        "title", "FlashTern: Ternary Kernels for α-Sparse Decoding"
    )
    for cell in table.locator("td span").all():
        words = cell.inner_text().replace("…", " ").split()
        assert len(words) <= 12, cell.inner_text()
    expect(table.locator("td span[title]").first).to_be_attached()  # full quote on hover
    wrap = answer.locator(".pt-table-wrap")
    assert wrap.evaluate("e => getComputedStyle(e).overflowX") == "auto"
    assert answer.evaluate(
        "e => e.scrollWidth <= e.clientWidth + 1"
    )  # the table scrolls, not the chat
    assert page.evaluate("() => document.documentElement.scrollWidth <= innerWidth")

    answer.locator("a.pt-cite").first.click()
    card = page.locator(".pt-card.pt-active")
    expect(card.locator(".pt-quotes dt").first).to_be_visible()
    quotes = card.locator(".pt-quotes dd").all_inner_texts()
    assert quotes and len(quotes) == len(set(quotes))  # each sentence once
    expect(card.locator("mark")).to_have_count(0)  # every line is a quote: none singled out
    no_live_html(page)


def test_list_answers_render_as_lists(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(page, "Which papers study causal discovery?")
    items = answer.locator("li")
    expect(items.first).to_be_visible()
    expect(items.first.locator("a.pt-cite")).to_have_count(1)
    expect(items.first.locator("strong")).to_have_count(1)
    assert not any(line.startswith("- ") for line in answer.inner_text().splitlines())


def test_a_refusal_shows_its_reason(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(page, "How many GPUs were used in Cake's experiments?")
    expect(answer).to_contain_text("The retrieved papers do not answer this question.")
    expect(answer.locator(".pt-reason")).to_contain_text("Why: ")
    assert "Why:" in exported(page)


def test_a_refusal_answers_the_parts_the_paper_states(page, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    answer = ask(
        page, "What does FIML integrate into one framework, and which datasets is it evaluated on?"
    )
    expect(answer).to_contain_text("The retrieved papers do not answer this question.")
    expect(answer.locator(".pt-reason")).to_contain_text("datasets")
    expect(answer).to_contain_text("What the papers do state of the rest of the question")
    expect(answer).to_contain_text("graph partition")
    answer.locator("a.pt-cite").first.click()
    card = page.locator("#pt-sources-box .pt-card.pt-active")
    expect(card).to_be_visible()
    expect(card.locator(".pt-title")).to_contain_text("Flexible Anchor Learning")
    page.screenshot(path=str(tmp_path / "partial.png"))
    assert "What the papers do state" in exported(page)


def test_filters_are_shown_and_exported(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    page.get_by_text("Filters", exact=True).first.click()
    page.locator("#pt-author textarea, #pt-author input").first.fill("Jin")
    ask(page, "How much does Cake reduce time to first token?")
    question = page.locator("[data-testid=user]").last
    expect(question.locator(".pt-filters")).to_have_text("Filters: author “Jin”")
    assert "*Filters: author “Jin”*" in exported(page)


def test_header_names_the_backend_the_session_uses(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    header = page.locator("#pt-header")
    expect(header).to_contain_text("LLM: extractive.")
    page.get_by_text("Settings", exact=True).first.click()
    for backend in ("local", "extractive"):
        page.locator("#pt-llm input").click()
        page.get_by_role("option", name=backend, exact=True).click()
        expect(header).to_contain_text(f"LLM: {backend}.")


def test_a_new_answer_scrolls_into_view_after_reading_an_older_one(page) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    first = ask(page, "How much does Cake reduce time to first token?")
    for question in ("What does DreamDPO optimize?", "Compare FlashTern and BeamLoom"):
        ask(page, question)
    page.wait_for_timeout(700)  # Gradio scrolls to the bottom 300 ms after an update
    # Back to the first turn, as a reader does: scroll the chat up, click its citation.
    page.locator("#pt-chat .bubble-wrap").hover()
    page.mouse.wheel(0, -3000)
    first.locator("a.pt-cite").first.click()
    expect(page.locator(".pt-card.pt-active")).to_contain_text("Compute or Load KV Cache?")
    expect(first).to_be_in_viewport()

    latest = ask(page, "How much memory does FlashTern save?")
    expect(latest.locator(".pt-note")).to_be_in_viewport()
    expect(page.locator("[data-testid=user]").last).to_be_in_viewport()


# The README screenshot -------------------------------------------------------------------------
@pytest.mark.slow
def test_readme_screenshot_with_the_default_settings(browser, default_server: str) -> None:  # type: ignore[no-untyped-def]
    """What `make run` shows (LLM `extractive`), asked a real question, its citation clicked."""
    from playwright.sync_api import expect

    context, page = open_page(browser, default_server)
    try:
        header = page.locator("#pt-header")
        expect(header).to_contain_text("19 papers in the store. LLM: extractive.")
        answer = ask(page, "How much does Cake reduce time to first token?", timeout_s=300)
        answer.locator("a.pt-cite").first.click()
        expect(page.locator(".pt-card.pt-active mark.pt-support").first).to_be_visible()
        page.mouse.move(0, 0)
        page.wait_for_timeout(500)  # the card's highlight transition
        shot = page.screenshot()
        if UPDATE_SCREENSHOT or not SCREENSHOT.exists():
            SCREENSHOT.parent.mkdir(exist_ok=True)
            SCREENSHOT.write_bytes(shot)
        assert page.dialogs == []
    finally:
        context.close()
