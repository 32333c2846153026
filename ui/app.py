"""The PaperTalk page: Gradio Blocks wired to `ui.engine` (what to do) and `ui.render` (HTML).

    demo = build_app(load_settings(llm="extractive"))
    launch(demo, host="127.0.0.1", port=7860)

Named API endpoints (for `gradio_client`): `/ask` (question, mode) -> (answer text, citations)
and `/history` () -> the calling session's turns (read-only). Every other event is private to
the page.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import gradio as gr
from gradio import utils as gr_utils

from rag.answer.bibtex import bibtex as make_bibtex
from rag.answer.modes import MODES
from rag.errors import PaperTalkError
from rag.settings import Settings
from ui import render
from ui.assets import CSS, JS
from ui.engine import (
    DEFAULT_MAX_UPLOAD_MB,
    MAX_PASSAGES,
    UPLOAD_TYPES,
    AnswererFactory,
    Engine,
    make_filters,
)
from ui.session import Conversation

MODE_CHOICES = [("Ask", "ask"), ("Compare", "compare"), ("Summarize", "summarize")]
STATUS_CHOICES = [("Any", ""), ("Oral", "oral"), ("Spotlight", "spotlight"), ("Poster", "poster")]
EXAMPLES = {  # question -> mode (shown on an empty chat)
    "How much does Cake reduce time to first token?": "ask",
    "What does DreamDPO optimize, and how?": "ask",
    "Compare D-Fusion and DreamDPO": "compare",
    "Summarize the papers on preference optimization": "summarize",
}
STREAM_INTERVAL_S = 0.08  # at most ~12 chat updates per second while tokens stream
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
HISTORY_DESCRIPTION = (
    "This client's conversation so far, oldest turn first (read-only; other sessions' turns are "
    "never included). Returns a list of {question, mode, answer, paper_ids, error}: answer is "
    "null while a turn is unanswered, paper_ids are the papers its answer cites."
)


def build_app(
    settings: Settings,
    answerer_factory: AnswererFactory | None = None,
    *,
    max_upload_mb: int = DEFAULT_MAX_UPLOAD_MB,
) -> gr.Blocks:
    """The PaperTalk page for `settings` (nothing is loaded until the first request)."""
    engine = Engine(settings, answerer_factory, max_upload_mb=max_upload_mb)

    with gr.Blocks(title="PaperTalk", analytics_enabled=False, fill_width=True) as demo:
        conversation = gr.State(Conversation())
        header = gr.Markdown(
            render.header_markdown(None, settings.llm, loaded=False), elem_id="pt-header"
        )
        with gr.Row(equal_height=False):
            with gr.Column(scale=7, min_width=480):
                chatbot = gr.Chatbot(
                    value=[],
                    label="Conversation",
                    show_label=False,
                    elem_id="pt-chat",
                    height=560,
                    placeholder=CHAT_PLACEHOLDER,
                    examples=[{"text": q} for q in EXAMPLES],
                    latex_delimiters=[],
                    buttons=["copy"],
                    sanitize_html=True,
                )
                with gr.Row():
                    question = gr.Textbox(
                        show_label=False,
                        placeholder="Ask about the papers, e.g. How does Cake cut time to first "
                        "token?",
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
                with gr.Accordion("Filters", open=False), gr.Row():
                    status = gr.Dropdown(STATUS_CHOICES, value="", label="Status")
                    author = gr.Textbox(label="Author contains", max_length=200)
                    title = gr.Textbox(label="Title keyword", max_length=200)
                with gr.Accordion("Settings", open=False):
                    with gr.Row():
                        llm = gr.Dropdown(
                            engine.backends(), value=settings.llm, label="LLM backend"
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
                        f"{max_upload_mb} MB)",
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
        with gr.Row(visible=False):  # the /ask endpoint's own inputs and outputs
            api_question = gr.Textbox(label="question")
            api_mode = gr.Dropdown(list(MODES), value="ask", label="mode")
            api_answer = gr.Textbox(label="answer")
            api_citations = gr.JSON(label="citations")
            api_button = gr.Button("ask")
            api_history = gr.JSON(label="history")
            api_history_button = gr.Button("history")

        # Chat -----------------------------------------------------------------------------------
        def take_question(text: str, mode_value: str, conv: Conversation):  # type: ignore[no-untyped-def]
            text = (text or "").strip()
            if text:
                conv.start(text, mode_value if mode_value in MODES else "ask")
            return _shown(conv, busy=bool(text))

        def take_example(conv: Conversation, evt: gr.SelectData):  # type: ignore[no-untyped-def]
            value = evt.value if isinstance(evt.value, dict) else {}
            text = str(value.get("text", "")).strip()
            example_mode = EXAMPLES.get(text, "ask")
            if text:
                conv.start(text, example_mode)
            return (*_shown(conv, busy=bool(text)), example_mode)

        def _shown(conv: Conversation, *, busy: bool):  # type: ignore[no-untyped-def]
            return (
                render.chat_messages(conv),
                render.sources_html(conv),
                conv,
                gr.update(value="", interactive=not busy),
                gr.update(interactive=not busy),
            )

        def answer(
            conv: Conversation,
            status_v: str,
            author_v: str,
            title_v: str,
            llm_v: str,
            passages_v: float,
        ) -> Iterator[tuple[Any, ...]]:
            """Answer the session's pending question(s), streaming chat and sources updates."""
            keep = gr.skip()
            try:
                filters = make_filters(status_v, author_v, title_v)
            except PaperTalkError as exc:
                filters = None
                for turn in conv.turns:
                    if turn.pending:
                        turn.error = str(exc)
            last = 0.0
            for turn in [t for t in conv.turns if t.pending]:
                stage = None
                for _ in engine.run_turn(
                    conv, turn, filters=filters, llm=llm_v or None, passages=_int(passages_v)
                ):
                    changed = (bool(turn.hits), turn.answer is not None, turn.error)
                    now = time.monotonic()
                    if changed == stage and now - last < STREAM_INTERVAL_S:
                        continue  # a token: throttle; sources do not change with tokens
                    panel = render.sources_html(conv) if changed != stage else keep
                    stage, last = changed, now
                    yield render.chat_messages(conv), panel, conv, keep, keep, keep, keep
            yield (
                render.chat_messages(conv),
                render.sources_html(conv),
                conv,
                _export_update(conv),
                _bibtex_update(conv),
                gr.update(interactive=True),
                gr.update(interactive=True),
            )

        def _export_update(conv: Conversation):  # type: ignore[no-untyped-def]
            if not conv.turns:
                return gr.update(value=None, interactive=False)
            text = render.conversation_markdown(conv)
            path = engine.write_file("papertalk-conversation.md", text)
            return gr.update(value=path, interactive=True)

        def _bibtex_update(conv: Conversation):  # type: ignore[no-untyped-def]
            last = conv.last_answer
            if last is None or not last.citations or last.error or conv.turns[-1].failed:
                return gr.update(value=None, visible=False)
            text = last.bibtex or make_bibtex(last.citations)
            path = engine.write_file("papertalk-references.bib", text + "\n")
            return gr.update(value=path, visible=True, label=f"BibTeX ({len(last.citations)})")

        shown = [chatbot, sources, conversation, question, send]
        answer_io: dict[str, Any] = {
            "fn": answer,
            "inputs": [conversation, status, author, title, llm, passages],
            "outputs": [chatbot, sources, conversation, export, bibtex, question, send],
            "concurrency_id": "answer",
            "concurrency_limit": 1,
            "show_progress": "hidden",
            "api_visibility": "private",
        }
        taken: dict[str, Any] = {
            "queue": False,
            "api_visibility": "private",
            "show_progress": "hidden",
        }
        events = [
            question.submit(take_question, [question, mode, conversation], shown, **taken).then(
                **answer_io
            ),
            send.click(take_question, [question, mode, conversation], shown, **taken).then(
                **answer_io
            ),
            chatbot.example_select(take_example, [conversation], [*shown, mode], **taken).then(
                **answer_io
            ),
        ]

        def reset():  # type: ignore[no-untyped-def]
            fresh = Conversation()
            return (
                [],
                render.sources_html(fresh),
                fresh,
                gr.update(value="", interactive=True),
                gr.update(interactive=True),
                gr.update(value=None, interactive=False),
                gr.update(value=None, visible=False),
            )

        reset_outputs = [chatbot, sources, conversation, question, send, export, bibtex]
        for trigger in (new_chat.click, chatbot.clear):
            trigger(
                reset,
                None,
                reset_outputs,
                cancels=events,
                queue=False,
                api_visibility="private",
            )

        # Settings and header ----------------------------------------------------------------
        def describe_backends(_: str | None = None) -> str:
            statuses = [engine.backend_status(b) for b in engine.backends()]
            return render.backends_markdown(statuses, settings.llm)

        def on_load():  # type: ignore[no-untyped-def]
            return render.header_markdown(engine.paper_count(), settings.llm), describe_backends()

        demo.load(on_load, None, [header, backends], api_visibility="private")
        llm.change(describe_backends, llm, backends, api_visibility="private")

        # Add papers -------------------------------------------------------------------------
        def add_papers(path: str | None, progress: Any = gr.Progress()):  # type: ignore[no-untyped-def]  # noqa: B008
            if not path:
                return render.ingest_error_markdown("choose a file first"), gr.skip()
            name = Path(path).name
            progress(0, desc="Reading papers")

            def on_progress(done: int, total: int) -> None:
                progress((done, total), desc="Embedding", unit="chunks")

            try:
                result = engine.ingest(path, gr_utils.get_upload_folder(), on_progress)
            except PaperTalkError as exc:
                return render.ingest_error_markdown(str(exc)), gr.skip()
            count = engine.paper_count()
            return (
                render.ingest_report_markdown(result, name, count),
                render.header_markdown(count, settings.llm),
            )

        add.click(
            add_papers,
            upload,
            [report, header],
            concurrency_id="ingest",
            concurrency_limit=1,
            api_visibility="private",
        )

        # API ------------------------------------------------------------------------------------
        def ask(question: str, mode: str, conv: Conversation):  # type: ignore[no-untyped-def]
            turn = conv.start(question or "", mode or "ask")
            for _ in engine.run_turn(conv, turn):
                pass
            error = turn.error or (turn.answer.error if turn.answer else None)
            if error or turn.answer is None:
                related = turn.answer.related if turn.answer else []
                message = render.api_error_message(error or "no answer was produced", related)
                raise gr.Error(message, print_exception=False)
            return turn.answer.answer, render.citations_json(turn.answer), conv

        api_button.click(
            ask,
            [api_question, api_mode, conversation],
            [api_answer, api_citations, conversation],
            api_name="ask",
            api_description=ASK_DESCRIPTION,
            concurrency_id="answer",
            concurrency_limit=1,
        )

        def history(conv: Conversation) -> list[dict[str, Any]]:
            return conv.transcript()

        api_history_button.click(  # read-only and cheap: not queued behind the answers
            history,
            [conversation],
            [api_history],
            api_name="history",
            api_description=HISTORY_DESCRIPTION,
            concurrency_id="history",
            concurrency_limit=None,
            show_progress="hidden",
        )

    demo.papertalk_engine = engine  # type: ignore[attr-defined]
    return demo


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
) -> Any:
    """Serve the page (never through a share link). The queue keeps every request: answering
    runs one at a time (concurrency group "answer"), so the local LLM never runs twice at once."""
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
        js=JS,
    )


def _int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None
