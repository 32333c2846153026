"""The page's event handlers (ui/handlers.py) called as plain functions: no server, no gradio.

Real components: the bundled corpus and the extractive backend."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.answer.refusal import CANNOT_ANSWER
from rag.settings import Settings
from ui import handlers
from ui.engine import Engine
from ui.handlers import Choices
from ui.session import Conversation

from .conftest import CAKE_ID

CAKE_Q = "How much does Cake reduce time to first token?"


@pytest.fixture
def engine(bundled_settings: Settings) -> Engine:
    return Engine(bundled_settings.with_overrides(llm="extractive"))


def test_a_question_shows_at_once_then_streams_its_answer(engine: Engine) -> None:
    conversation = Conversation()
    shown = handlers.take_question(f"  {CAKE_Q} ", "ask", conversation)
    assert shown.busy and [m["role"] for m in shown.messages] == ["user", "assistant"]
    assert "Searching" in shown.messages[1]["content"]

    ticks = iter(range(1000))
    steps = list(
        handlers.answer_steps(engine, conversation, Choices(), clock=lambda: next(ticks) * 1.0)
    )
    assert steps[0].sources is not None and not steps[0].done  # papers retrieved: panel
    assert [s.done for s in steps].count(True) == 1 and steps[-1].done
    final = steps[-1]
    assert "2.6" in final.messages[1]["content"] and f"pt-src-{1}-1" in final.sources
    assert final.export is not None and Path(final.export.path).name == handlers.EXPORT_NAME
    assert final.bibtex is not None and final.bibtex.label == "BibTeX (1)"
    assert "@inproceedings" in Path(final.bibtex.path).read_text()


def test_tokens_are_throttled(engine: Engine) -> None:
    conversation = Conversation()
    handlers.take_question("Compare D-Fusion and DreamDPO", "compare", conversation)
    frozen = list(handlers.answer_steps(engine, conversation, Choices(), clock=lambda: 0.0))
    # With the clock standing still only stage changes show: retrieved, final answer, done.
    assert len(frozen) == 3 and frozen[1].sources is not None


def test_blank_questions_start_nothing_and_examples_set_the_mode(engine: Engine) -> None:
    conversation = Conversation()
    assert not handlers.take_question("   ", "ask", conversation).busy
    assert conversation.turns == []
    shown, mode = handlers.take_example({"text": "Compare D-Fusion and DreamDPO"}, conversation)
    assert mode == "compare" and shown.busy and conversation.turns[0].mode == "compare"
    _, mode = handlers.take_example(None, conversation)
    assert mode == "ask" and len(conversation.turns) == 1
    handlers.take_question("What is Cake?", "poem", conversation)
    assert conversation.turns[-1].mode == "ask"


def test_filters_are_recorded_on_the_turn_and_shown(engine: Engine) -> None:
    conversation = Conversation()
    handlers.take_question(CAKE_Q, "ask", conversation)
    choices = Choices(status="poster", author=" Jin ", title="")
    final = list(handlers.answer_steps(engine, conversation, choices))[-1]
    turn = conversation.turns[0]
    assert turn.filters is not None and (turn.filters.status, turn.filters.author) == (
        "poster",
        "Jin",
    )
    assert "Filters: status poster, author “Jin”" in final.messages[0]["content"]
    assert final.export is not None
    exported = Path(final.export.path).read_text(encoding="utf-8")
    assert "*Filters: status poster, author “Jin”*" in exported


def test_a_bad_filter_is_the_turns_error(engine: Engine) -> None:
    conversation = Conversation()
    handlers.take_question(CAKE_Q, "ask", conversation)
    final = list(handlers.answer_steps(engine, conversation, Choices(status="keynote")))[-1]
    assert "unknown status" in final.messages[1]["content"]
    assert final.bibtex is None and final.export is not None


def test_a_refusal_gives_its_reason_and_no_bibtex(engine: Engine) -> None:
    conversation = Conversation()
    handlers.take_question("How many GPUs were used in Cake's experiments?", "ask", conversation)
    final = list(handlers.answer_steps(engine, conversation, Choices()))[-1]
    message = final.messages[1]["content"]
    assert message.startswith(CANNOT_ANSWER) and "Why: " in message
    assert final.bibtex is None


def test_header_follows_the_sessions_backend(engine: Engine) -> None:
    assert handlers.header(engine).endswith("19 papers in the store. LLM: extractive.")
    assert handlers.header(engine, "local").endswith("LLM: local.")
    assert "**extractive** (configured): ✓ ready" in handlers.backends(engine)


def test_reset_and_history(engine: Engine) -> None:
    conversation = Conversation()
    text, citations = handlers.ask(engine, CAKE_Q, "ask", conversation)
    assert "2.6" in text and citations[0]["paper_id"] == CAKE_ID
    assert [t["question"] for t in handlers.history(conversation)] == [CAKE_Q]
    fresh = handlers.reset()
    assert fresh.messages == [] and fresh.conversation.turns == [] and not fresh.busy
    assert handlers.export_download(engine, fresh.conversation) is None


def test_ask_errors_name_the_problem(engine: Engine) -> None:
    with pytest.raises(handlers.AskError, match="empty question"):
        handlers.ask(engine, "   ", "ask", Conversation())


def test_add_papers_without_a_file(engine: Engine) -> None:
    assert "choose a file first" in handlers.add_papers(engine, None, "/nonexistent")
    report = handlers.add_papers(engine, "/etc/hostname", "/nonexistent-upload-root")
    assert "Upload failed" in report and "uploaded through the page" in report
