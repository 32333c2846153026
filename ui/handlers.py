"""What the page's events do, as plain functions: `ui/app.py` lays the page out and wires each
event to one of these. No gradio here: a handler takes the session's `Conversation` and the
values of the page's fields, and returns what to show (chat messages, the sources panel's HTML,
files to download) as plain data, so every event is tested without a server
(tests/test_ui_handlers.py).

    conv = Conversation()
    shown = take_question("What is Cake?", "ask", conv)        # the question appears at once
    for step in answer_steps(engine, conv, Choices()):         # then the answer streams in
        ...                                                    # step.messages, step.sources
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.answer.bibtex import bibtex as make_bibtex
from rag.answer.modes import MODES
from rag.errors import PaperTalkError
from ui import explore, render
from ui.engine import Engine, make_filters
from ui.session import Conversation

EXAMPLES = {  # question -> mode (shown on an empty chat)
    "How much does Cake reduce time to first token?": "ask",
    "What does DreamDPO optimize, and how?": "ask",
    "Compare D-Fusion and DreamDPO": "compare",
    "Summarize the papers on preference optimization": "summarize",
}
STREAM_INTERVAL_S = 0.08  # at most ~12 chat updates per second while tokens stream
EXPORT_NAME = "papertalk-conversation.md"
BIBTEX_NAME = "papertalk-references.bib"


@dataclass
class Shown:
    """The chat area after an event: messages, sources panel, and whether input waits."""

    messages: list[dict[str, str]]
    sources: str
    conversation: Conversation
    busy: bool = False  # an answer is pending: the question box and Ask button are disabled


@dataclass(frozen=True)
class Download:
    """A file offered for download, and the button's label."""

    path: str
    label: str


@dataclass
class Step:
    """One update while answering: `sources` None means the panel is unchanged (tokens don't
    change it). The last step has `done` set, with the downloads of the finished conversation."""

    messages: list[dict[str, str]]
    sources: str | None
    conversation: Conversation
    done: bool = False
    export: Download | None = None
    bibtex: Download | None = None


@dataclass(frozen=True)
class Choices:
    """The session's settings on the page: filters, LLM backend, papers retrieved."""

    status: str | None = None
    author: str | None = None
    title: str | None = None
    llm: str | None = None
    passages: float | int | None = None
    topic: str | None = None  # a topic id of the map: answers cite only its papers


class AskError(Exception):
    """An `/ask` call that produced no answer; its message is for the API client."""


# Chat ------------------------------------------------------------------------------------------
def shown(conversation: Conversation, *, busy: bool = False) -> Shown:
    return Shown(
        render.chat_messages(conversation), render.sources_html(conversation), conversation, busy
    )


def take_question(text: str | None, mode: str | None, conversation: Conversation) -> Shown:
    """Start a turn for a typed question (blank text starts nothing)."""
    text = (text or "").strip()
    if text:
        conversation.start(text, mode if mode in MODES else "ask")
    return shown(conversation, busy=bool(text))


def take_example(value: Any, conversation: Conversation) -> tuple[Shown, str]:
    """Start a turn for a clicked example (`value`: the example's {"text": ...}); returns what
    to show and the example's mode, which the page's mode selector takes."""
    text = str(value.get("text", "") if isinstance(value, Mapping) else "").strip()
    mode = EXAMPLES.get(text, "ask")
    if text:
        conversation.start(text, mode)
    return shown(conversation, busy=bool(text)), mode


def answer_steps(
    engine: Engine,
    conversation: Conversation,
    choices: Choices,
    *,
    interval_s: float = STREAM_INTERVAL_S,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[Step]:
    """Answer the session's pending turns, yielding chat updates as they stream: every change
    of stage (papers retrieved, answer final, error), and text at most every `interval_s`."""
    scope = ""
    try:
        paper_ids = None
        if choices.topic not in (None, ""):
            topic = engine.maps.topic(choices.topic)
            if topic is None:
                raise PaperTalkError("that topic is not on the current topic map: choose another")
            scope, paper_ids = topic.label, frozenset(engine.maps.papers_in(topic.id))
        filters = make_filters(choices.status, choices.author, choices.title, paper_ids)
    except PaperTalkError as exc:
        filters = None
        for turn in conversation.turns:
            if turn.pending:
                turn.error = str(exc)
    last = 0.0
    for turn in [t for t in conversation.turns if t.pending]:
        turn.filters, turn.scope = filters, scope if filters is not None else ""
        stage = None
        for _ in engine.run_turn(
            conversation, turn, filters=filters, llm=choices.llm or None, passages=_int(choices)
        ):
            changed = (bool(turn.hits), turn.answer is not None, turn.error)
            now = clock()
            if changed == stage and now - last < interval_s:
                continue  # a token: throttled; sources do not change with tokens
            panel = render.sources_html(conversation) if changed != stage else None
            stage, last = changed, now
            yield Step(render.chat_messages(conversation), panel, conversation)
    yield Step(
        render.chat_messages(conversation),
        render.sources_html(conversation),
        conversation,
        done=True,
        export=export_download(engine, conversation),
        bibtex=bibtex_download(engine, conversation),
    )


def export_download(engine: Engine, conversation: Conversation) -> Download | None:
    """The conversation as Markdown (None before the first question)."""
    if not conversation.turns:
        return None
    path = engine.write_file(EXPORT_NAME, render.conversation_markdown(conversation))
    return Download(path, "Export (.md)")


def bibtex_download(engine: Engine, conversation: Conversation) -> Download | None:
    """BibTeX of the last answer's references (None when it has none or failed)."""
    last = conversation.last_answer
    if last is None or not last.citations or last.error or conversation.turns[-1].failed:
        return None
    text = last.bibtex or make_bibtex(last.citations)
    path = engine.write_file(BIBTEX_NAME, text + "\n")
    return Download(path, f"BibTeX ({len(last.citations)})")


def reset() -> Shown:
    """New chat: an empty conversation."""
    return shown(Conversation())


# Header and settings -------------------------------------------------------------------------
def header(engine: Engine, llm: str | None = None) -> str:
    """The page's title line: papers in the store and the backend this session answers with."""
    return render.header_markdown(engine.paper_count(), llm or engine.settings.llm)


def backends(engine: Engine) -> str:
    """Each backend the page offers, and whether it can answer now."""
    statuses = [engine.backend_status(b) for b in engine.backends()]
    return render.backends_markdown(statuses, engine.settings.llm)


# Add papers ------------------------------------------------------------------------------------
def add_papers(
    engine: Engine,
    path: str | None,
    upload_root: str,
    on_progress: Callable[[int, int], None] | None = None,
) -> str:
    """Ingest an uploaded paper list; returns the report (or the error) as Markdown."""
    if not path:
        return render.ingest_error_markdown("choose a file first")
    name = Path(path).name
    try:
        result = engine.ingest(path, upload_root, on_progress)
    except PaperTalkError as exc:
        return render.ingest_error_markdown(str(exc))
    return render.ingest_report_markdown(result, name, engine.paper_count())


# Map and similar papers -------------------------------------------------------------------------
@dataclass
class MapShown:
    """The Map tab: the figure (plotly JSON; None while there is none), a status line, and the
    topic dropdown's choices."""

    figure: str | None
    status: str
    topics: list[tuple[str, str]]
    ready: bool = False


BUILDING = (
    "Building the topic map… (about 45 s for 2,738 papers on 2 cores; the chat works meanwhile)"
)


def map_shown(engine: Engine) -> MapShown:
    """The Map tab as it stands now: the kept map, or why there is none."""
    state = engine.maps.state()
    if state.status == "ready" and state.map is not None:
        kept = state.map
        figure = engine.maps.figure()
        unassigned = sum(1 for t in kept.assignment.values() if t < 0)
        status = (
            f"{len(kept.coords):,} papers in {len(kept.topics)} "
            f"topic{'s' if len(kept.topics) != 1 else ''}"
            + (f" ({unassigned:,} in none)" if unassigned else "")
            + ". Hover a point for its title, click it for its card; scroll to zoom."
        )
        return MapShown(figure, status, explore.topic_choices(kept), ready=True)
    if state.status == "building":
        return MapShown(None, BUILDING, [])
    if state.status == "failed":
        return MapShown(None, f"The topic map could not be built: {state.error}", [])
    return MapShown(None, "No topic map yet.", [])


def map_steps(engine: Engine, *, wait_s: float = 600.0) -> Iterator[MapShown]:
    """Opening the Map tab: the kept map at once; else start building it in the background,
    say so, and show the map when it is done (the chat is never blocked meanwhile)."""
    if engine.maps.state().status == "ready":
        yield map_shown(engine)
        return
    engine.maps.start_build()
    shown = map_shown(engine)
    yield shown
    if shown.ready:  # a small collection's map may be done already
        return
    engine.maps.wait(wait_s)
    yield map_shown(engine)


def map_point(engine: Engine, paper_id: str | None) -> tuple[str, str | None]:
    """A clicked point: the paper's card, and its topic id for the topic dropdown (None when
    it has none)."""
    paper_id = (paper_id or "").strip()
    papers = engine.searcher().lexical.table.papers
    paper = papers.get(paper_id)
    if paper is None:
        return render.ingest_error_markdown(f"no paper with id {paper_id!r}"), None
    kept = engine.maps.kept()
    topic = kept.topic_of(paper_id) if kept else None
    abstract = " ".join(t for _, t in engine.searcher().lexical.paper_chunks(paper_id))
    card = render.paper_card(
        paper_id,
        str(paper.get("title", paper_id)),
        str(paper.get("url", "")),
        str(paper.get("status", "")),
        list(paper.get("authors", [])),
        abstract,
        topic=topic.label if topic else None,
    )
    return card, str(topic.id) if topic else None


def topic_summary(engine: Engine, topic_id: str | None) -> str:
    """The chosen topic on the map: label, size, statuses, most central papers ("" if none)."""
    topic = engine.maps.topic(topic_id)
    if topic is None:
        return ""
    papers = engine.searcher().lexical.table.papers
    top = [str(papers[p]["title"]) for p in topic.top_papers if p in papers]
    return render.topic_html(topic.label, topic.size, topic.statuses, top)


def similar(engine: Engine, paper_id: str | None) -> str:
    """A card's "Similar papers": the 5 nearest papers, with the shared topic when a map is
    kept (an error line when the paper is unknown)."""
    paper_id = (paper_id or "").strip()
    try:
        found = engine.maps.similar(paper_id, explore.SIMILAR_K)
    except PaperTalkError as exc:
        return f'<div class="pt-error">{render.escape(str(exc))}</div>'
    kept = engine.maps.kept()
    own = kept.topic_of(paper_id) if kept else None
    title = str(engine.searcher().lexical.table.papers[paper_id]["title"])
    pairs = [(s, t.label if t else None) for s, t in found]
    return render.similar_html(title, pairs, own.label if own else None, have_map=kept is not None)


# API -------------------------------------------------------------------------------------------
def ask(
    engine: Engine, question: str | None, mode: str | None, conversation: Conversation
) -> tuple[str, list[dict[str, Any]]]:
    """The `/ask` endpoint: answer text and citations (as JSON), or AskError with the error
    and the papers retrieved before generation failed."""
    turn = conversation.start(question or "", mode or "ask")
    for _ in engine.run_turn(conversation, turn):
        pass
    error = turn.error or (turn.answer.error if turn.answer else None)
    if error or turn.answer is None:
        related = turn.answer.related if turn.answer else []
        raise AskError(render.api_error_message(error or "no answer was produced", related))
    answer = turn.answer
    text = answer.answer
    if answer.refused and answer.partial:  # the parts of the question the papers do state
        text = f"{text}\n\n{render.PARTIAL_HEAD}:\n\n{answer.partial}"
    return text, render.citations_json(answer)


def history(conversation: Conversation) -> list[dict[str, Any]]:
    """The `/history` endpoint: this session's turns, oldest first."""
    return conversation.transcript()


def _int(choices: Choices) -> int | None:
    try:
        return int(choices.passages)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
