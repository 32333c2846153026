"""The PaperTalk page: the Gradio Blocks layout, each event wired to a handler in `ui.handlers`.

    demo = build_app(load_settings(llm="extractive"))
    launch(demo, host="127.0.0.1", port=7860)

Layout lives here, what events do lives in `ui.handlers` (plain functions, no gradio); the
small adapters below only turn their results into component updates. Named API endpoints (for
`gradio_client`): `/ask` (question, mode) -> (answer text, citations) and `/history` () -> the
calling session's turns (read-only). Every other event is private to the page.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import utils as gr_utils
from gradio.components.plot import PlotData

from rag.answer.modes import MODES
from rag.settings import Settings
from ui import explore, handlers, render
from ui.assets import CSS, head, script
from ui.engine import DEFAULT_MAX_UPLOAD_MB, MAX_PASSAGES, UPLOAD_TYPES, AnswererFactory, Engine
from ui.handlers import EXAMPLES, Choices, Download, Shown
from ui.session import Conversation

MODE_CHOICES = [("Ask", "ask"), ("Compare", "compare"), ("Summarize", "summarize")]
STATUS_CHOICES = [("Any", ""), ("Oral", "oral"), ("Spotlight", "spotlight"), ("Poster", "poster")]
CHAT_PLACEHOLDER = (
    "**Ask a question about ICML 2025 papers.**  \n"
    "Answers cite the abstracts they come from; click a citation to see its passage."
)
ASK_DESCRIPTION = (
    "Answer a question about the papers with citations. Parameters: question (str); mode "
    "('ask', 'compare' or 'summarize', default 'ask'). Returns (answer text with [n] markers, "
    "list of citations: n, paper_id, title, authors, url, passage, attributed, status, pmlr_url, "
    "supporting). A client's calls share one conversation, so follow-ups work."
)
QUESTION_PLACEHOLDER = "Ask about the papers, e.g. How does Cake cut time to first token?"
ANY_TOPIC = ("Any", "")
MAP_CARD_PLACEHOLDER = '<div class="pt-empty">Click a point to see its paper.</div>'
HISTORY_DESCRIPTION = (
    "This client's conversation so far, oldest turn first (read-only; other sessions' turns are "
    "never included). Returns a list of {question, mode, answer, paper_ids, error}: answer is "
    "null while a turn is unanswered, paper_ids are the papers its answer cites."
)


@dataclass
class Page:
    """The page's components that events read or update."""

    conversation: gr.State
    header: gr.Markdown
    chatbot: gr.Chatbot
    question: gr.Textbox
    send: gr.Button
    mode: gr.Radio
    new_chat: gr.Button
    export: gr.DownloadButton
    bibtex: gr.DownloadButton
    status: gr.Dropdown
    author: gr.Textbox
    title: gr.Textbox
    llm: gr.Dropdown
    passages: gr.Slider
    backends: gr.Markdown
    upload: gr.File
    add: gr.Button
    report: gr.Markdown
    sources: gr.HTML
    api_question: gr.Textbox
    api_mode: gr.Dropdown
    api_answer: gr.Textbox
    api_citations: gr.JSON
    api_button: gr.Button
    api_history: gr.JSON
    api_history_button: gr.Button
    tabs: gr.Tabs
    filters: gr.Accordion
    topic: gr.Dropdown
    similar: gr.HTML
    map_tab: gr.Tab
    map_shown: gr.State
    map_status: gr.Markdown
    map_plot: gr.Plot
    map_topic: gr.Dropdown
    map_ask: gr.Button
    map_topic_info: gr.HTML
    map_card: gr.HTML
    map_similar: gr.HTML
    point_id: gr.Textbox
    similar_id: gr.Textbox


def build_app(
    settings: Settings,
    answerer_factory: AnswererFactory | None = None,
    *,
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB,
) -> gr.Blocks:
    """The PaperTalk page for `settings` (nothing is loaded until the first request)."""
    engine = Engine(settings, answerer_factory, max_upload_mb=max_upload_mb)
    with gr.Blocks(title="PaperTalk", analytics_enabled=False, fill_width=True) as demo:
        page = _layout(engine)
        _wire_chat(page, engine)
        _wire_settings(demo, page, engine)
        _wire_upload(page, engine)
        _wire_api(page, engine)
        _wire_map(demo, page, engine)
    demo.papertalk_engine = engine  # type: ignore[attr-defined]
    return demo


# Layout ----------------------------------------------------------------------------------------
def _layout(engine: Engine) -> Page:
    settings = engine.settings
    conversation = gr.State(Conversation())
    header = gr.Markdown(
        render.header_markdown(None, settings.llm, loaded=False), elem_id="pt-header"
    )
    with gr.Tabs(elem_id="pt-tabs") as tabs:
        with gr.Tab("Chat", id="chat", elem_id="pt-tab-chat"), gr.Row(equal_height=False):
            with gr.Column(scale=7, min_width=480):
                chatbot = gr.Chatbot(
                    value=[],
                    label="Conversation",
                    show_label=False,
                    elem_id="pt-chat",
                    height=560,
                    placeholder=CHAT_PLACEHOLDER,
                    examples=[{"text": q} for q in EXAMPLES],
                    latex_delimiters=[],  # paper LaTeX is shown as Unicode by ui.text
                    buttons=["copy"],
                    sanitize_html=True,
                )
                with gr.Row():
                    question = gr.Textbox(
                        show_label=False,
                        placeholder=QUESTION_PLACEHOLDER,
                        max_length=2000,
                        lines=1,
                        scale=8,
                        elem_id="pt-question",
                        autofocus=True,
                    )
                    send = gr.Button("Ask", variant="primary", scale=1, elem_id="pt-send")
                with gr.Row(equal_height=True, elem_id="pt-controls"):
                    mode = gr.Radio(
                        MODE_CHOICES,
                        value="ask",
                        label="Mode",
                        show_label=False,
                        container=False,
                        scale=1,
                        min_width=300,
                        elem_id="pt-mode",
                    )
                    new_chat = gr.Button(
                        "New chat", size="md", scale=0, min_width=110, elem_id="pt-new"
                    )
                    export = gr.DownloadButton(
                        "Export (.md)",
                        size="md",
                        interactive=False,
                        scale=0,
                        min_width=130,
                        elem_id="pt-export",
                    )
                    bibtex = gr.DownloadButton(
                        "BibTeX",
                        size="md",
                        visible=False,
                        scale=0,
                        min_width=120,
                        elem_id="pt-bibtex",
                    )
                with gr.Accordion("Filters", open=False) as filters, gr.Row():
                    status = gr.Dropdown(
                        STATUS_CHOICES, value="", label="Status", elem_id="pt-status"
                    )
                    author = gr.Textbox(
                        label="Author contains", max_length=200, elem_id="pt-author"
                    )
                    title = gr.Textbox(label="Title keyword", max_length=200, elem_id="pt-title-kw")
                    topic = gr.Dropdown(
                        [ANY_TOPIC], value="", label="Topic (from the Map)", elem_id="pt-topic"
                    )
                with gr.Accordion("Settings", open=False):
                    with gr.Row():
                        llm = gr.Dropdown(
                            engine.backends(),
                            value=settings.llm,
                            label="LLM backend",
                            elem_id="pt-llm",
                        )
                        passages = gr.Slider(
                            1,
                            MAX_PASSAGES,
                            value=settings.passages,
                            step=1,
                            label="Papers retrieved per question",
                        )
                    backends = gr.Markdown("Checking backends…", elem_id="pt-backends")
                with gr.Accordion("Add papers", open=False):
                    upload = gr.File(
                        label=f"Paper list: JSONL, JSON, CSV or plain text (up to "
                        f"{engine.max_upload_mb} MB)",
                        file_types=list(UPLOAD_TYPES),
                        file_count="single",
                        type="filepath",
                        height=140,
                        elem_id="pt-upload",
                    )
                    add = gr.Button("Add papers", elem_id="pt-add")
                    report = gr.Markdown(elem_id="pt-report")
            with gr.Column(scale=5, min_width=360):
                sources = gr.HTML(
                    render.sources_html(Conversation()),
                    elem_id="pt-sources-box",
                    js_on_load=None,
                    apply_default_css=False,
                )
                similar = gr.HTML("", elem_id="pt-similar-box", apply_default_css=False)
        with gr.Tab("Map", id="map", elem_id="pt-tab-map") as map_tab:
            map_status = gr.Markdown("Opening the topic map…", elem_id="pt-map-status")
            with gr.Row(equal_height=False):
                with gr.Column(scale=7, min_width=480):
                    map_plot = gr.Plot(show_label=False, elem_id="pt-map-plot")
                with gr.Column(scale=5, min_width=360):
                    map_topic = gr.Dropdown(
                        [], value=None, label="Topic", elem_id="pt-map-topic", interactive=True
                    )
                    map_ask = gr.Button(
                        "Ask about this topic",
                        variant="primary",
                        interactive=False,
                        elem_id="pt-map-ask",
                    )
                    map_topic_info = gr.HTML("", elem_id="pt-map-topic-info")
                    map_card = gr.HTML(
                        MAP_CARD_PLACEHOLDER, elem_id="pt-map-card", apply_default_css=False
                    )
                    map_similar = gr.HTML("", elem_id="pt-map-similar", apply_default_css=False)
    # What the page's script sends (a clicked point, a card's "Similar papers"): rendered, hidden
    point_id = gr.Textbox(visible="hidden", elem_id="pt-point-id")
    similar_id = gr.Textbox(visible="hidden", elem_id="pt-similar-id")
    map_shown = gr.State(False)
    with gr.Row(visible=False):  # the /ask endpoint's own inputs and outputs
        api_question = gr.Textbox(label="question")
        api_mode = gr.Dropdown(list(MODES), value="ask", label="mode")
        api_answer = gr.Textbox(label="answer")
        api_citations = gr.JSON(label="citations")
        api_button = gr.Button("ask")
        api_history = gr.JSON(label="history")
        api_history_button = gr.Button("history")
    return Page(
        conversation, header, chatbot, question, send, mode, new_chat, export, bibtex, status,
        author, title, llm, passages, backends, upload, add, report, sources, api_question,
        api_mode, api_answer, api_citations, api_button, api_history, api_history_button, tabs,
        filters, topic, similar, map_tab, map_shown, map_status, map_plot, map_topic, map_ask,
        map_topic_info, map_card, map_similar, point_id, similar_id,
    )  # fmt: skip


# Events: each adapter calls a handler and turns its result into component updates ---------------
def _shown(result: Shown) -> tuple[Any, ...]:
    """Outputs [chatbot, sources, conversation, question, send]."""
    return (
        result.messages,
        result.sources,
        result.conversation,
        gr.update(value="", interactive=not result.busy),
        gr.update(interactive=not result.busy),
    )


def _download(file: Download | None, *, hide: bool = False) -> Any:
    if file is None:
        return (
            gr.update(value=None, visible=False)
            if hide
            else gr.update(value=None, interactive=False)
        )
    if hide:
        return gr.update(value=file.path, visible=True, label=file.label)
    return gr.update(value=file.path, interactive=True)


def _wire_chat(page: Page, engine: Engine) -> None:
    def take_question(text: str, mode: str, conv: Conversation) -> tuple[Any, ...]:
        return _shown(handlers.take_question(text, mode, conv))

    def take_example(conv: Conversation, evt: gr.SelectData) -> tuple[Any, ...]:
        result, mode = handlers.take_example(evt.value, conv)
        return (*_shown(result), mode)

    def answer(
        conv: Conversation,
        status: str,
        author: str,
        title: str,
        llm: str,
        passages: float,
        topic: str | None,
    ) -> Iterator[tuple[Any, ...]]:
        """Answer the session's pending question(s), streaming chat and sources updates."""
        choices = Choices(status, author, title, llm, passages, topic)
        keep = gr.skip()
        for step in handlers.answer_steps(engine, conv, choices):
            panel = keep if step.sources is None else step.sources
            if not step.done:
                yield step.messages, panel, conv, keep, keep, keep, keep
                continue
            yield (
                step.messages,
                panel,
                conv,
                _download(step.export),
                _download(step.bibtex, hide=True),
                gr.update(interactive=True),
                gr.update(interactive=True),
            )

    p = page
    shown = [p.chatbot, p.sources, p.conversation, p.question, p.send]
    answer_io: dict[str, Any] = {
        "fn": answer,
        "inputs": [p.conversation, p.status, p.author, p.title, p.llm, p.passages, p.topic],
        "outputs": [p.chatbot, p.sources, p.conversation, p.export, p.bibtex, p.question, p.send],
        "concurrency_id": "answer",
        "concurrency_limit": 1,
        "show_progress": "hidden",
        "api_visibility": "private",
    }
    taken: dict[str, Any] = {"queue": False, "api_visibility": "private", "show_progress": "hidden"}
    typed = [p.question, p.mode, p.conversation]
    events = [
        p.question.submit(take_question, typed, shown, **taken).then(**answer_io),
        p.send.click(take_question, typed, shown, **taken).then(**answer_io),
        p.chatbot.example_select(take_example, [p.conversation], [*shown, p.mode], **taken).then(
            **answer_io
        ),
    ]

    def reset() -> tuple[Any, ...]:
        return (*_shown(handlers.reset()), _download(None), _download(None, hide=True))

    for trigger in (p.new_chat.click, p.chatbot.clear):
        trigger(
            reset,
            None,
            [*shown, p.export, p.bibtex],
            cancels=events,
            queue=False,
            api_visibility="private",
        )


def _wire_settings(demo: gr.Blocks, page: Page, engine: Engine) -> None:
    def on_load() -> tuple[str, str]:
        return handlers.header(engine), handlers.backends(engine)

    def on_llm(llm: str | None) -> tuple[str, str]:
        return handlers.header(engine, llm), handlers.backends(engine)

    demo.load(on_load, None, [page.header, page.backends], api_visibility="private")
    page.llm.change(on_llm, page.llm, [page.header, page.backends], api_visibility="private")


def _wire_upload(page: Page, engine: Engine) -> None:
    def add_papers(path: str | None, progress: Any = gr.Progress()) -> str:  # noqa: B008
        if path:
            progress(0, desc="Reading papers")

        def on_progress(done: int, total: int) -> None:
            progress((done, total), desc="Embedding", unit="chunks")

        return handlers.add_papers(engine, path, gr_utils.get_upload_folder(), on_progress)

    def show_header(llm: str | None) -> str:
        return handlers.header(engine, llm)

    page.add.click(  # inputs stay [upload]: tests/test_ui_security.py finds the event by them
        add_papers,
        page.upload,
        page.report,
        concurrency_id="ingest",
        concurrency_limit=1,
        api_visibility="private",
    ).then(show_header, page.llm, page.header, api_visibility="private", queue=False)


def _wire_api(page: Page, engine: Engine) -> None:
    def ask(question: str, mode: str, conv: Conversation) -> tuple[Any, ...]:
        try:
            text, citations = handlers.ask(engine, question, mode, conv)
        except handlers.AskError as exc:
            raise gr.Error(str(exc), print_exception=False) from None
        return text, citations, conv

    page.api_button.click(
        ask,
        [page.api_question, page.api_mode, page.conversation],
        [page.api_answer, page.api_citations, page.conversation],
        api_name="ask",
        api_description=ASK_DESCRIPTION,
        concurrency_id="answer",
        concurrency_limit=1,
    )

    def history(conv: Conversation) -> list[dict[str, Any]]:
        return handlers.history(conv)

    page.api_history_button.click(  # read-only and cheap: not queued behind the answers
        history,
        [page.conversation],
        [page.api_history],
        api_name="history",
        api_description=HISTORY_DESCRIPTION,
        concurrency_id="history",
        concurrency_limit=None,
        show_progress="hidden",
    )


def _wire_map(demo: gr.Blocks, page: Page, engine: Engine) -> None:
    p = page

    def open_map(done: bool) -> Iterator[tuple[Any, ...]]:
        """The Map tab opened: the figure once per session (kept maps at once; a missing one
        is built in the background, with a message meanwhile), and the topics."""
        if done:
            yield gr.skip(), gr.skip(), gr.skip(), gr.skip(), done
            return
        for shown in handlers.map_steps(engine):
            figure = PlotData(type="plotly", plot=shown.figure) if shown.figure else gr.skip()
            yield (
                figure,
                shown.status,
                gr.update(choices=shown.topics),
                gr.update(choices=[ANY_TOPIC, *shown.topics]),
                shown.ready,
            )

    p.map_tab.select(
        open_map,
        [p.map_shown],
        [p.map_plot, p.map_status, p.map_topic, p.topic, p.map_shown],
        concurrency_id="map",
        concurrency_limit=None,
        show_progress="hidden",
        api_visibility="private",
    )

    def load_topics() -> Any:
        ready = engine.maps.state().status == "ready"
        topics = handlers.map_shown(engine).topics if ready else []
        return gr.update(choices=[ANY_TOPIC, *topics])

    demo.load(load_topics, None, [p.topic], api_visibility="private", queue=False)

    def choose_topic(topic_id: str | None) -> tuple[Any, ...]:
        summary = handlers.topic_summary(engine, topic_id)
        return summary, gr.update(interactive=bool(summary))

    quick: dict[str, Any] = {"queue": False, "api_visibility": "private", "show_progress": "hidden"}
    p.map_topic.change(choose_topic, [p.map_topic], [p.map_topic_info, p.map_ask], **quick)

    def show_point(sent: str) -> tuple[Any, ...]:
        card, topic_id = handlers.map_point(engine, _sent_id(sent))
        return card, gr.skip() if topic_id is None else topic_id

    p.point_id.change(show_point, [p.point_id], [p.map_card, p.map_topic], **quick)

    def ask_topic(topic_id: str | None) -> tuple[Any, ...]:
        """Scope the chat to the topic: the Filters' topic is set, the Chat tab shown."""
        choices = [ANY_TOPIC, *explore.topic_choices(engine.maps.kept())]
        return (
            gr.update(choices=choices, value=topic_id or ""),
            gr.Tabs(selected="chat"),
            gr.Accordion(open=True),
        )

    p.map_ask.click(ask_topic, [p.map_topic], [p.topic, p.tabs, p.filters], **quick)

    def show_similar(sent: str) -> tuple[Any, Any]:
        """The list goes to the panel of the tab whose card asked ("ID|map|time": the map)."""
        html = handlers.similar(engine, _sent_id(sent))
        on_map = (sent or "").split("|")[1:2] == ["map"]
        return (gr.skip(), html) if on_map else (html, gr.skip())

    p.similar_id.change(
        show_similar,
        [p.similar_id],
        [p.similar, p.map_similar],
        concurrency_id="similar",
        concurrency_limit=None,
        show_progress="hidden",
        api_visibility="private",
    )


def _sent_id(sent: str | None) -> str:
    """A paper id the page's script sent as "ID|...|time" (the time makes every send a
    change; paper ids have no "|")."""
    return (sent or "").split("|", 1)[0]


def plotly_module() -> str | None:
    """The file name of Gradio's plotly chunk (its frontend assets), or None when not found."""
    assets = Path(gr.__file__).parent / "templates" / "frontend" / "assets"
    found = sorted(assets.glob("PlotlyPlot-*.js"))
    return found[0].name if found else None


def theme() -> Any:
    """Gradio's Soft theme with system fonts (no web fonts fetched)."""
    return gr.themes.Soft(
        primary_hue="indigo",
        font=["ui-sans-serif", "system-ui", "-apple-system", "Segoe UI", "sans-serif"],
        font_mono=["ui-monospace", "SFMono-Regular", "Menlo", "monospace"],
    )


def launch(
    demo: gr.Blocks,
    *,
    host: str = "127.0.0.1",
    port: int = 7860,
    auth: tuple[str, str] | None = None,
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB,
    block: bool = True,
    quiet: bool = False,
    app_kwargs: dict[str, Any] | None = None,
) -> Any:
    """Serve the page (never through a share link). The queue keeps every request: answering
    runs one at a time (concurrency group "answer"), so the local LLM never runs twice at once.
    `app_kwargs` go to Gradio's FastAPI app (ui/integrations.py: the /v1 API and /mcp)."""
    demo.queue(default_concurrency_limit=4)
    return demo.launch(
        server_name=host,
        server_port=port,
        auth=auth,
        share=False,
        max_file_size=f"{max_upload_mb}mb",
        prevent_thread_lock=not block,
        quiet=quiet,
        show_error=True,
        ssr_mode=False,
        footer_links=["api"],
        theme=theme(),
        css=CSS,
        js=script(plotly_module()),
        head=head(plotly_module()),
        app_kwargs=app_kwargs,
    )
