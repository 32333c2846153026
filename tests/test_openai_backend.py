"""The `openai:` backend against a real OpenAI-compatible server (llama.cpp's, on 127.0.0.1)."""

from __future__ import annotations

import json
import time

import pytest

from rag.answer.chain import Answerer
from rag.answer.llm import LLMSpec, parse_llm_spec

from .conftest import CAKE_ID, free_port, llama_server_command, run_cli, running_server

CAKE_Q = "How much does Cake reduce time to first token?"


@pytest.fixture(scope="module")
def searcher(bundled_home, onnx_cache):  # type: ignore[no-untyped-def]
    from rag.retrieve.hybrid import open_searcher
    from rag.settings import Settings

    return open_searcher(Settings(home=bundled_home, cache_dir=onnx_cache))


def test_spec_parsing() -> None:
    assert parse_llm_spec("openai:gpt-4o-mini") == LLMSpec("openai", "gpt-4o-mini")
    assert parse_llm_spec("gguf:/m.gguf").label == "gguf:/m.gguf"
    assert parse_llm_spec("extractive").label == "extractive"
    from rag.errors import PaperTalkError

    with pytest.raises(PaperTalkError, match="unknown LLM backend"):
        parse_llm_spec("claude")


@pytest.mark.server
def test_openai_backend_streams_a_cited_answer(searcher, llama_server) -> None:  # type: ignore[no-untyped-def]
    settings = searcher.settings.with_overrides(openai_base_url=llama_server)
    answerer = Answerer(settings, searcher=searcher, llm_spec="openai:smollm2")
    started = time.perf_counter()
    events = list(answerer.stream(CAKE_Q))
    elapsed = time.perf_counter() - started
    tokens = [e.text for e in events if e.kind == "token"]
    final = events[-1].answer
    assert final.error is None, final.error
    assert len(tokens) > 1, "tokens are streamed one by one"
    assert final.llm == "openai:smollm2"
    # max_tokens reaches llama.cpp's server (it ignores max_completion_tokens): bounded output.
    assert elapsed < 60 and len("".join(tokens).split()) < 200
    retrieved = {h.paper_id for h in events[0].hits}
    assert {c.paper_id for c in final.citations} <= retrieved
    if not final.refused:
        assert CAKE_ID in {c.paper_id for c in final.citations}
    assert answerer.answer("How many GPUs were used in Cake's experiments?").refused


@pytest.mark.server
def test_cli_ask_json_with_the_openai_backend(bundled_home, onnx_cache, llama_server) -> None:  # type: ignore[no-untyped-def]
    env = {
        "PAPERTALK_HOME": str(bundled_home),
        "PAPERTALK_CACHE_DIR": str(onnx_cache),
        "OPENAI_BASE_URL": llama_server,
    }
    result = run_cli("ask", CAKE_Q, "--llm", "openai:smollm2", "--json", env=env)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["llm"] == "openai:smollm2" and isinstance(payload["refused"], bool)


def test_unreachable_openai_server_is_a_clear_error(searcher) -> None:  # type: ignore[no-untyped-def]
    settings = searcher.settings.with_overrides(
        openai_base_url=f"http://127.0.0.1:{free_port()}/v1", llm_timeout_s=5
    )
    answer = Answerer(settings, searcher=searcher, llm_spec="openai:x").answer(CAKE_Q)
    assert answer.error and "unreachable" in answer.error
    assert CAKE_ID in [h.paper_id for h in answer.related]


@pytest.mark.server
def test_server_killed_mid_stream_then_back(searcher, tmp_path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()

    settings = searcher.settings.with_overrides(
        openai_base_url=f"http://127.0.0.1:{port}/v1", llm_timeout_s=20
    )
    answerer = Answerer(settings, searcher=searcher, llm_spec="openai:smollm2")
    log = tmp_path / "llama.log"
    with running_server(llama_server_command(port), port, log) as proc:
        stream = answerer.stream(CAKE_Q)
        for event in stream:
            if event.kind == "token":
                proc.kill()
                proc.wait()
                break
        final = next(e for e in stream if e.kind == "final").answer
        assert final.error and "LLM backend" in final.error
    down = answerer.answer(CAKE_Q)
    assert down.error and "LLM backend" in down.error and down.related
    with running_server(llama_server_command(port), port, log):
        back = answerer.answer(CAKE_Q)
        assert back.error is None
