"""The Map tab and the "Similar papers" action: the pure pieces (figure JSON, topic scope,
similar lists) as function calls, then the page in Debian chromium on the bundled store (19
papers: the kept map is one topic, which is enough to check every function)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from rag.explore.topics import Topic, TopicMap
from rag.settings import Settings
from ui import explore, handlers, render
from ui.engine import Engine
from ui.handlers import Choices
from ui.session import Conversation

from .conftest import CAKE_ID
from .test_ui_app import _serve
from .test_ui_browser import CHROMIUM, LAUNCH_ARGS

TWO_TOPICS = TopicMap(
    "f",
    [
        Topic(3, "kv cache, decoding", 2, {"oral": 0, "spotlight": 1, "poster": 1}, ["a", "b"]),
        Topic(5, "diffusion <b>", 1, {"oral": 1, "spotlight": 0, "poster": 0}, ["c"]),
    ],
    {"a": 3, "b": 3, "c": 5, "d": -1},
    {"a": (0.0, 1.0), "b": (1.0, 0.0), "c": (2.0, 2.0), "d": (3.0, 3.0)},
)
PAPERS = {
    "a": {"title": "Cake <script>x</script>"},
    "b": {"title": "$\\alpha$-Decoding"},
    "c": {"title": "D"},
    "d": {"title": "E"},
}


# Pure functions ------------------------------------------------------------------------------
def test_figure_is_one_webgl_trace_per_topic_with_every_paper() -> None:
    figure = json.loads(explore.figure_json(TWO_TOPICS, PAPERS))
    traces = figure["data"]
    assert {t["type"] for t in traces} == {"scattergl"}
    assert [t["meta"]["topic"] for t in traces] == [-1, 3, 5]  # no-topic grey under the topics
    assert sorted(p for t in traces for p in t["customdata"]) == ["a", "b", "c", "d"]
    assert sum(len(t["x"]) for t in traces) == len(TWO_TOPICS.coords)
    kv = traces[1]
    assert kv["x"] == [0.0, 1.0] and kv["y"] == [1.0, 0.0]
    assert kv["text"] == ["Cake &lt;script&gt;x&lt;/script&gt;", "α-Decoding"]  # text, not markup
    assert "kv cache, decoding (2)" in kv["hovertemplate"]
    assert "diffusion &lt;b&gt;" in traces[2]["hovertemplate"]
    assert len({t["marker"]["color"] for t in traces}) == 3


def test_topic_choices_and_colours() -> None:
    assert explore.topic_choices(TWO_TOPICS) == [
        ("kv cache, decoding (2)", "3"),
        ("diffusion <b> (1)", "5"),
    ]
    assert explore.topic_choices(None) == []
    assert len({explore.topic_colour(i) for i in range(40)}) == 40


def test_filters_name_the_topic_scope() -> None:
    from rag.retrieve.hybrid import SearchFilters

    scoped = SearchFilters(author="Jin", paper_ids=frozenset({"a", "b"}))
    assert render.filters_text(scoped, "kv cache") == "Filters: topic “kv cache”, author “Jin”"
    assert render.filters_text(SearchFilters(paper_ids=frozenset({"a"}))) == (
        "Filters: 1 chosen papers"
    )


def test_similar_html_marks_the_shared_topic() -> None:
    from rag.explore.similar import SimilarPaper

    near = [
        (SimilarPaper("b", "Beta <i>", "https://openreview.net/forum?id=b", 0.91), "kv"),
        (SimilarPaper("c", "Gamma", "https://openreview.net/forum?id=c", 0.5), "diffusion"),
    ]
    html = render.similar_html("Alpha", near, "kv", have_map=True)
    assert html.count("<li") == 2 and "Beta &lt;i&gt;" in html
    assert "same topic: kv" in html and "same topic: diffusion" not in html
    assert "similarity 0.91" in html
    bare = render.similar_html("Alpha", near, None, have_map=False)
    assert "pt-topic" not in bare and "once the topic map is built" in bare


@pytest.fixture
def engine(bundled_settings: Settings, tmp_path: Path) -> Engine:
    """The extractive engine on a private copy of the bundled store (its map is built here: a
    map another test kept in the shared store is not copied)."""
    home = tmp_path / "store"
    shutil.copytree(bundled_settings.home, home, ignore=shutil.ignore_patterns("topics"))
    return Engine(bundled_settings.with_overrides(home=home, llm="extractive"))


def test_map_is_built_in_the_background_then_kept(engine: Engine) -> None:
    assert engine.maps.state().status == "missing"
    assert handlers.similar(engine, CAKE_ID).count("<li") == 5  # without a map: no topics
    steps = list(handlers.map_steps(engine))
    # "Building" first, then the map; a map built before the first step shows at once.
    assert [s.ready for s in steps] in ([False, True], [True])
    if len(steps) == 2:
        assert steps[0].status == handlers.BUILDING and steps[0].figure is None
    ready = steps[-1]
    figure = json.loads(ready.figure or "{}")
    assert sum(len(t["x"]) for t in figure["data"]) == 19
    assert ready.topics == [("all papers (19)", "0")] and "19 papers in 1 topic." in ready.status
    # Kept: a new engine (a restarted server) shows it at once, without building.
    again = Engine(engine.settings)
    assert [s.ready for s in handlers.map_steps(again)] == [True]
    assert again.maps.figure() == ready.figure


def test_point_card_topic_scope_and_similar(engine: Engine) -> None:
    list(handlers.map_steps(engine))
    card, topic = handlers.map_point(engine, CAKE_ID)
    assert topic == "0" and "Compute or Load KV Cache?" in card
    assert f'data-paper="{CAKE_ID}"' in card and "pt-similar-btn" in card and "all papers" in card
    assert "19 papers" in handlers.topic_summary(engine, topic)
    assert handlers.topic_summary(engine, "99") == ""

    html = handlers.similar(engine, CAKE_ID)
    assert html.count("<li") == 5 and f'data-paper="{CAKE_ID}"' not in html
    assert html.count("same topic: all papers") == 5
    assert "pt-error" in handlers.similar(engine, "nope")

    conversation = Conversation()
    handlers.take_question("How much does Cake reduce time to first token?", "ask", conversation)
    steps = list(handlers.answer_steps(engine, conversation, Choices(topic="0")))
    turn = conversation.turns[0]
    assert turn.filters is not None and turn.filters.paper_ids is not None
    assert len(turn.filters.paper_ids) == 19 and turn.scope == "all papers"
    assert "Filters: topic “all papers”" in steps[-1].messages[0]["content"]
    assert "2.6" in steps[-1].messages[1]["content"]

    handlers.take_question("What is Cake?", "ask", conversation)
    list(handlers.answer_steps(engine, conversation, Choices(topic="42")))
    assert "not on the current topic map" in (conversation.turns[-1].error or "")


# In the browser ------------------------------------------------------------------------------
KV_TOPIC = [CAKE_ID, "WSUO2uRDPc"]  # a planted topic of two papers: Cake and MVA


@pytest.fixture(scope="module")
def server(
    bundled_home: Path, onnx_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The UI on a copy of the bundled store with a kept map of two planted topics: "kv cache,
    attention" (Cake and MVA) and "other papers" (the other 17). (A real map of 19 papers is one
    topic; building it is tested above.)"""
    from rag.explore.topics import topics_path
    from rag.retrieve.hybrid import open_searcher

    work = tmp_path_factory.mktemp("map")
    home = work / "home"
    shutil.copytree(bundled_home, home)
    searcher = open_searcher(Settings(home=home, cache_dir=onnx_cache))
    ids = sorted(searcher.lexical.table.papers)
    others = [p for p in ids if p not in KV_TOPIC]
    statuses = {"oral": 0, "spotlight": 0, "poster": 0}
    planted = TopicMap(
        "planted",
        [
            Topic(1, "other papers", 17, statuses, others[:5]),
            Topic(0, "kv cache, attention", 2, statuses, KV_TOPIC),
        ],
        {p: 0 if p in KV_TOPIC else 1 for p in ids},
        {p: (float(i % 5), float(i // 5)) for i, p in enumerate(ids)},
    )
    path = topics_path(home, searcher)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(planted.to_json()))
    yield from _serve(home, onnx_cache, work)


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=LAUNCH_ARGS
        )
        yield instance
        instance.close()


def point_position(page, paper_id: str) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Where the paper's point is drawn on the page (from plotly's axes)."""
    return page.evaluate(
        """(pid) => { const g = document.querySelector('#pt-map-plot .js-plotly-plot');
        const xa = g._fullLayout.xaxis, ya = g._fullLayout.yaxis, box = g.getBoundingClientRect();
        for (const t of g.data) { const i = t.customdata.indexOf(pid);
          if (i >= 0) return {x: box.left + xa._offset + xa.l2p(t.x[i]),
                              y: box.top + ya._offset + ya.l2p(t.y[i])}; }
        return null; }""",
        paper_id,
    )


def ask(page, question: str):  # type: ignore[no-untyped-def]
    before = page.locator("[data-testid=bot]").count()
    page.locator("#pt-question textarea").fill(question)
    page.locator("#pt-question textarea").press("Enter")
    answer = page.locator("[data-testid=bot]").nth(before)
    answer.locator(".pt-note").wait_for(timeout=60_000)
    return answer


def shown_papers(page) -> list[str]:  # type: ignore[no-untyped-def]
    """The papers of the latest turn's source cards (cited, or possibly related)."""
    cards = page.locator("#pt-sources-box .pt-turn:not(.pt-hidden) .pt-similar-btn")
    return [cards.nth(i).get_attribute("data-paper") or "" for i in range(cards.count())]


@pytest.mark.browser
@pytest.mark.server
def test_map_tab_hover_click_similar_and_ask_about_a_topic(browser, server: str) -> None:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        page.goto(server)
        page.locator("#pt-question textarea").wait_for(timeout=30_000)
        page.get_by_role("tab", name="Map").click()
        traces = page.wait_for_function(
            """() => { const g = document.querySelector('#pt-map-plot .js-plotly-plot');
            return g && g._fullLayout && g.data ? g.data.map(t => t.customdata) : false; }""",
            timeout=60_000,
        ).json_value()
        ids = [pid for trace in traces for pid in trace]
        assert len(ids) == len(set(ids)) == 19 and len(traces) == 2  # a point per paper
        assert sorted(traces[1]) == sorted(KV_TOPIC)  # one trace per topic, largest first
        expect(page.locator("#pt-map-status")).to_contain_text("19 papers in 2 topics")

        # Hover shows the title and topic; a click shows the card and selects its topic.
        where = point_position(page, CAKE_ID)
        page.mouse.move(where["x"], where["y"])
        hover = page.locator("#pt-map-plot .hoverlayer")
        expect(hover).to_contain_text("Compute or Load KV Cache?")
        expect(hover).to_contain_text("kv cache, attention (2)")
        page.mouse.click(where["x"], where["y"])
        card = page.locator("#pt-map-card .pt-card")
        expect(card.locator(".pt-title")).to_have_text("Compute or Load KV Cache? Why Not Both?")
        expect(card.locator(".pt-topic")).to_have_text("kv cache, attention")
        expect(page.locator("#pt-map-topic-info")).to_contain_text("2 papers")
        expect(page.locator("#pt-map-topic input")).to_have_value("kv cache, attention (2)")

        # Similar papers: five, the paper itself not among them, the shared topic marked.
        card.locator(".pt-similar-btn").click()
        items = page.locator("#pt-map-similar li")
        expect(items).to_have_count(5)
        listed = [items.nth(i).get_attribute("data-paper") for i in range(5)]
        assert CAKE_ID not in listed and len(set(listed)) == 5
        same = "WSUO2uRDPc" in listed
        expect(page.locator("#pt-map-similar .pt-same")).to_have_count(1 if same else 0)

        # Ask about this topic: the chat is scoped to it and shows the scope.
        page.locator("#pt-map-ask").click()
        expect(page.locator("#pt-topic input")).to_have_value("kv cache, attention (2)")
        answer = ask(page, "How much does Cake reduce time to first token?")
        expect(page.locator("[data-testid=user] .pt-filters").last).to_have_text(
            "Filters: topic “kv cache, attention”"
        )
        expect(answer).to_contain_text("2.6")
        assert shown_papers(page) and set(shown_papers(page)) <= set(KV_TOPIC)

        # The other topic: the next answer cites only its papers (Cake is outside it).
        page.get_by_role("tab", name="Map").click()
        page.locator("#pt-map-topic input").click()
        page.get_by_role("option", name="other papers (17)", exact=True).click()
        page.locator("#pt-map-ask").click()
        expect(page.locator("#pt-topic input")).to_have_value("other papers (17)")
        ask(page, "How can diffusion models be aligned with human preferences?")
        expect(page.locator("[data-testid=user] .pt-filters").last).to_have_text(
            "Filters: topic “other papers”"
        )
        cited = shown_papers(page)
        assert cited and not set(cited) & set(KV_TOPIC), cited

        # A source card's Similar action lists papers in the chat's panel.
        first = cited[0]
        page.locator("#pt-sources-box .pt-turn:not(.pt-hidden) .pt-similar-btn").first.click()
        chat_items = page.locator("#pt-similar-box li")
        expect(chat_items).to_have_count(5)
        assert first not in [chat_items.nth(i).get_attribute("data-paper") for i in range(5)]
    finally:
        context.close()
