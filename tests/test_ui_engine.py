"""The UI's engine without a web server: the streaming turn generator, backends, uploads.

Real components throughout: the bundled corpus, the extractive backend, a closed port for an
unreachable LLM server, real ingestion into a copy of the store.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rag.errors import PaperTalkError
from rag.retrieve.hybrid import SearchFilters
from rag.settings import Settings
from ui.engine import Engine, make_filters, run_turn
from ui.session import Conversation

from .conftest import CAKE_ID, free_port


@pytest.fixture
def engine(bundled_settings: Settings) -> Engine:
    return Engine(bundled_settings.with_overrides(llm="extractive"))


def _ask(engine: Engine, conversation: Conversation, question: str, **kwargs):  # type: ignore[no-untyped-def]
    turn = conversation.start(question, kwargs.pop("mode", "ask"))
    states = [
        (bool(t.hits), t.partial, t.answer is not None)
        for t in engine.run_turn(conversation, turn, **kwargs)
    ]
    return turn, states


def test_turn_streams_retrieved_then_text_then_answer(engine: Engine) -> None:
    conversation = Conversation()
    turn, states = _ask(engine, conversation, "How much does Cake reduce time to first token?")
    assert states[0] == (True, "", False)  # papers first, before any text
    assert any(partial for _, partial, _ in states[1:-1])
    assert states[-1][2] and turn.error is None
    assert turn.answer is not None and turn.answer.citations[0].paper_id == CAKE_ID
    assert "2.6" in turn.answer.answer


def test_follow_up_uses_this_conversation_only(engine: Engine) -> None:
    first, second = Conversation(), Conversation()
    _ask(engine, first, "What is Cake?")
    _ask(engine, second, "What is DreamDPO?")
    cake, _ = _ask(engine, first, "How does it work?")
    dream, _ = _ask(engine, second, "How does it work?")
    assert cake.answer is not None and cake.answer.cited_paper_ids == [CAKE_ID]
    assert dream.answer is not None and CAKE_ID not in dream.answer.cited_paper_ids
    assert dream.answer.cited_paper_ids  # DreamDPO's paper
    assert len(first.history()) == 2 and first.history_papers() == [CAKE_ID]


def test_errors_become_the_turns_error(engine: Engine) -> None:
    conversation = Conversation()
    empty, _ = _ask(engine, conversation, "   ")
    assert empty.error is not None and "empty question" in empty.error
    mode, _ = _ask(engine, conversation, "What is Cake?", mode="poem")
    assert mode.error is not None and "unknown mode" in mode.error
    backend, _ = _ask(engine, conversation, "What is Cake?", llm="gguf:/etc/passwd")
    assert backend.error is not None and "unknown LLM backend" in backend.error
    assert conversation.history() == []


def test_unreachable_llm_server_keeps_the_retrieved_papers(bundled_settings: Settings) -> None:
    port = free_port()  # nothing listens there
    settings = bundled_settings.with_overrides(
        llm="openai:smollm2", openai_base_url=f"http://127.0.0.1:{port}/v1", llm_timeout_s=5
    )
    engine = Engine(settings)
    status = engine.backend_status("openai:smollm2")
    assert not status.ok and "unreachable" in status.detail
    turn, _ = _ask(engine, Conversation(), "How much does Cake reduce time to first token?")
    assert turn.answer is not None and turn.answer.error and "unreachable" in turn.answer.error
    assert CAKE_ID in [h.paper_id for h in turn.answer.related]


def test_store_missing_is_an_error_not_a_crash(tmp_path: Path, onnx_cache: Path) -> None:
    engine = Engine(Settings(home=tmp_path / "empty", cache_dir=onnx_cache, llm="extractive"))
    assert engine.paper_count() is None
    turn, _ = _ask(engine, Conversation(), "What is Cake?")
    assert turn.error is not None


def test_filters_from_the_page() -> None:
    assert make_filters("", " ", None) is None
    assert make_filters("oral", "", "") == SearchFilters(status="oral")
    assert make_filters("", "Jin", "cache") == SearchFilters(author="Jin", title="cache")
    with pytest.raises(PaperTalkError):
        make_filters("keynote", "", "")


def test_filters_apply(engine: Engine) -> None:
    turn, _ = _ask(
        engine,
        Conversation(),
        "How much does Cake reduce time to first token?",
        filters=SearchFilters(status="oral"),
    )
    assert turn.answer is not None and CAKE_ID not in turn.answer.cited_paper_ids


def test_backends_offered_and_checked(engine: Engine) -> None:
    assert engine.backends() == ["extractive", "local"]
    assert all(engine.backend_status(b).ok for b in engine.backends())
    assert not engine.backend_status("gguf:/nonexistent.gguf").ok


def test_passages_are_clamped(engine: Engine) -> None:
    assert engine.answerer("extractive", 500).settings.passages == 20
    assert engine.answerer("extractive", 0).settings.passages == 1


def test_uploads_are_checked_before_use(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "uploads"
    root.mkdir()
    outside = tmp_path / "papers.jsonl"
    outside.write_text("{}\n")
    with pytest.raises(PaperTalkError, match="uploaded through the page"):
        engine.check_upload(str(outside), str(root))
    with pytest.raises(PaperTalkError, match="uploaded through the page"):
        engine.check_upload(str(root / ".." / "papers.jsonl"), str(root))
    exe = root / "tool.exe"
    exe.write_bytes(b"MZ")
    with pytest.raises(PaperTalkError, match="unsupported file type"):
        engine.check_upload(str(exe), str(root))
    small = Engine(engine.settings, max_upload_mb=1)
    big = root / "big.txt"
    big.write_bytes(b"x" * (1024 * 1024 + 1))
    with pytest.raises(PaperTalkError, match="1 MB limit"):
        small.check_upload(str(big), str(root))


def test_upload_ingests_and_the_searcher_sees_new_papers(
    bundled_home: Path, onnx_cache: Path, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    shutil.copytree(bundled_home, home)
    engine = Engine(Settings(home=home, cache_dir=onnx_cache, llm="extractive"))
    assert engine.paper_count() == 19
    root = tmp_path / "uploads"
    root.mkdir()
    upload = root / "new.jsonl"
    upload.write_text(
        '{"id": "zebra1", "title": "Zebra Quilting Kernels", "abstract": "We introduce zebra '
        "quilting kernels, which stitch striped features into graph networks. They cut training "
        'time by 40 percent on quilt benchmarks.", "authors": ["Ann Example"], "status": "oral"}\n'
        '{"title": "no abstract"}\n',
        encoding="utf-8",
    )
    progress: list[tuple[int, int]] = []
    report = engine.ingest(str(upload), str(root), lambda d, t: progress.append((d, t)))
    assert (report.added, len(report.skipped)) == (1, 1)
    assert progress and progress[-1][0] == progress[-1][1]
    assert engine.paper_count() == 20
    turn, _ = _ask(engine, Conversation(), "What are zebra quilting kernels?")
    assert turn.answer is not None and turn.answer.cited_paper_ids == ["zebra1"]

    bad = root / "bad.json"
    bad.write_text("not json at all", encoding="utf-8")
    with pytest.raises(PaperTalkError) as failure:
        engine.ingest(str(bad), str(root))
    assert "bad.json" in str(failure.value) and str(root) not in str(failure.value)
    assert engine.paper_count() == 20


def test_an_unexpected_failure_is_reported_not_raised() -> None:
    def broken():  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("division by zero")

    conversation = Conversation()
    turn = conversation.start("What is Cake?", "ask")
    states = list(run_turn(broken, conversation, turn))
    assert len(states) == 1 and turn.error == "internal error: ZeroDivisionError: division by zero"
    assert not turn.pending
